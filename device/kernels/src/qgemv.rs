//! Quantized matrix-vector products for decoding and small batches: `y = W x` with `W` `[M, K]`
//! quantized, `x` `[batch, K]` and `y` `[batch, M]` row-major, `1 <= batch <= 8`:
//! `y[b][m] = sum_k W[m][k] x[b][k]`, accumulated in f32.
//!
//! Kernels `qgemv_<format>_<x type>_<y type>`:
//! - MX formats (`mxfp4`, `mxfp6_e2m3`, `mxfp6_e3m2`, `mxfp8_e4m3`, `mxfp8_e5m2`, `mxint8`):
//!   `(w, scales, x, y, m, k, batch)`; `w` and `scales` as `iron_quant::host::QuantizedTensor`
//!   lays out an `[M, K]` tensor (blocks of 32 along K, one E8M0 scale code per block).
//! - `nvfp4`: `(w, scales, tensor_scale, x, y, m, k, batch)` (blocks of 16, E4M3 scale codes,
//!   the f32 tensor scale).
//! - plain FP8 (`fp8_e4m3fn`, `fp8_e5m2`, `fp8_e4m3fnuz`, `fp8_e5m2fnuz`):
//!   `(w, row_scales, x, y, m, k, batch)`: `w` is `[M, K]` codes, `row_scales` `[M]` f32, and
//!   `W[m][k] = decode(w[m][k]) * row_scales[m]`.
//!
//! Instantiated: every format with x in f32, f16 and bf16 and y in f32; and MXFP4, FP8 E4M3FN
//! and FP8 E5M2 with x and y both f16 or both bf16.
//!
//! Shapes: `k` a multiple of the block length (32 for MX, 16 for NVFP4) or, for plain FP8, of 16;
//! the host checks. `batch` above 8 is treated as 8. Any `m` (with `m = 0` nothing is written).
//!
//! Arithmetic: each weight's element value is decoded exactly (`crate::decode_fast`); the 16
//! products of a unit are summed in f32 with fused multiply-adds, and the sum times the unit's
//! block scale (E8M0 or E4M3; 1 for plain FP8) is added to the work-item's running sum with one
//! more (its units in increasing `k`); the wave adds the work-items' sums (`wave::reduce_sum`),
//! and the total is multiplied by the tensor scale (NVFP4) or row scale (plain FP8) and rounded
//! once to the type of `y`.
//!
//! Mapping: one wave per output row; a workgroup of `waves` waves takes rows
//! `g * waves .. g * waves + waves` and strides by the grid. The row is cut into units of 16
//! weights (one 8-, 12- or 16-byte read of codes, `crate::decode`); lane `l` takes units
//! `l, l + WAVE, ...` of each K chunk, so a wave reads `W` once, coalesced, for all `batch`
//! vectors. `x` is staged through LDS in chunks of 1024 columns: the workgroup converts
//! `x[:, k0..k0 + 1024]` to f32 into LDS, and every wave reads it from there, the four 16-byte
//! quarters of a unit stored 1024 bytes apart so that neighbouring lanes read neighbouring LDS
//! words (no bank conflicts).
//!
//! Launch: 1-D workgroups of a multiple of the wave size, up to 256 work-items (4 waves of 64 or
//! 8 of 32 is a good choice); any grid (`ceil(m / waves)` workgroups covers the rows once).
//! Dynamic LDS: `4096 * min(batch, 8)` bytes. Buffers must be 16-byte aligned (device
//! allocations are).

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::decode::{MxBlocks, Nvfp4Blocks, PlainCodes, Quantized, UNIT, gemv_unit, unit_bytes},
    crate::dtype::{Float, load},
    iron_intrinsics::{
        id::{lane_id, num_workgroups_x, wave_id, workgroup_id_x, workgroup_size_x, workitem_id_x},
        lds,
        math::mul_add,
        sync::workgroup_barrier,
        target::WAVE,
        wave,
    },
    iron_quant::{
        E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8,
    },
};

/// The largest batch.
const MAX_BATCH: usize = 8;
/// Columns of `x` staged in LDS at a time.
const K_CHUNK: u32 = 1024;
/// Units of 16 columns in a chunk.
const CHUNK_UNITS: u32 = K_CHUNK / UNIT as u32;

/// Four f32 read or written as one 16-byte LDS access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quarter([f32; 4]);

/// Where quarter `q` (columns `4q..4q + 4` of the chunk) of batch row `b` sits in LDS, in
/// quarters: the quarters of one unit are `CHUNK_UNITS` apart.
#[inline(always)]
fn lds_quarter(b: u32, q: u32) -> usize {
    let (unit, part) = (q / 4, q % 4);
    ((b * 4 + part) * CHUNK_UNITS + unit) as usize
}

/// A quantized GEMV launch: the weights' format `Q`, `x` of type `X`, `y` of type `Y`.
struct Gemv<X, Y> {
    w: *const u8,
    scales: *const u8,
    x: *const X,
    y: *mut Y,
    m: u32,
    k: u32,
    batch: u32,
}

impl<X: Float, Y: Float> Gemv<X, Y> {
    /// Converts `x[:, k0..k0 + len]` to f32 into LDS (`len` a multiple of 16), `PACK` columns
    /// per access: slot `s` of a batch row is unit `s % 64`, access `s / 64` within the unit,
    /// so neighbouring work-items take neighbouring units and their LDS writes are neighbours
    /// too. Workgroup-wide (each work-item does a share).
    #[inline(always)]
    fn stage_x<const PACK: usize>(&self, staged: *mut Quarter, k0: u32, len: u32) {
        let units = len / UNIT as u32;
        let slots = CHUNK_UNITS * (UNIT / PACK) as u32;
        let mut b = 0;
        while b < self.batch {
            // SAFETY: b < batch: x holds batch rows of k elements.
            let row = unsafe { self.x.add(b as usize * self.k as usize + k0 as usize) };
            let mut slot = workitem_id_x();
            while slot < slots {
                let (part, unit) = (slot / CHUNK_UNITS, slot % CHUNK_UNITS);
                if unit < units {
                    let column = unit * UNIT as u32 + part * PACK as u32;
                    // SAFETY: column + PACK <= len: inside the row's chunk; rows of k (a
                    // multiple of 16) elements start 16-byte aligned, and so does the access.
                    let values = crate::dtype::widen(unsafe {
                        load::<X, PACK>(row.add(column as usize), 0)
                    });
                    for h in 0..PACK / 4 {
                        let q = unit * 4 + part * (PACK / 4) as u32 + h as u32;
                        // SAFETY: b < 8 and q < 256: inside the LDS of 4096 * batch bytes.
                        unsafe {
                            *staged.add(lds_quarter(b, q)) =
                                Quarter(core::array::from_fn(|i| values[4 * h + i]))
                        };
                    }
                }
                slot += workgroup_size_x();
            }
            b += 1;
        }
    }

    /// `acc[b] += sum` over the units of this lane in the staged chunk of row `row`: lane `l`
    /// takes units `l, l + WAVE, ...`, in rounds that every lane of the wave runs (a lane
    /// without a unit in the last round reads unit 0 and adds nothing), so that the loop over
    /// the batch stays wave-uniform. Each unit's 16 products (of the unscaled weights) are
    /// summed with fused multiply-adds, then multiplied by the unit's scale and added to the
    /// running sum in one more.
    #[inline(always)]
    fn accumulate<Q: Quantized>(
        &self,
        staged: *const Quarter,
        row: u32,
        k0: u32,
        len: u32,
        acc: &mut [f32; MAX_BATCH],
    ) {
        let row_units = (self.k / UNIT as u32) as usize;
        let scales_per_row = row_units.checked_div(Q::UNITS_PER_SCALE).unwrap_or(0);
        // SAFETY: row < m; w holds m rows of row_units units, scales m rows of their codes.
        let (codes, scales) = unsafe {
            (
                self.w
                    .add(row as usize * row_units * unit_bytes::<Q::Element>()),
                self.scales.add(row as usize * scales_per_row),
            )
        };
        let units = len / UNIT as u32;
        let mut first = 0;
        while first < units {
            let unit = first + lane_id();
            let valid = unit < units;
            let unit = if valid { unit } else { 0 };
            let column_unit = (k0 / UNIT as u32 + unit) as usize;
            // SAFETY: column_unit < row_units, inside the row; w is 16-byte aligned and row
            // lengths keep every unit aligned to its width.
            let (weights, scale) = unsafe { gemv_unit::<Q>(codes, scales, column_unit) };
            for (b, sum) in acc.iter_mut().enumerate() {
                if (b as u32) < self.batch {
                    let mut x = [0.0f32; UNIT];
                    for part in 0..4 {
                        // SAFETY: inside the staged chunk (see stage_x).
                        let quarter =
                            unsafe { *staged.add(lds_quarter(b as u32, unit * 4 + part)) };
                        x[4 * part as usize..4 * part as usize + 4].copy_from_slice(&quarter.0);
                    }
                    let mut partial = 0.0;
                    for i in 0..UNIT {
                        partial = mul_add(weights[i], x[i], partial);
                    }
                    if valid {
                        *sum = mul_add(partial, scale, *sum);
                    }
                }
            }
            first += WAVE;
        }
    }

    /// Computes every row this workgroup owns; `final_scale(row)` multiplies row `row`'s sums
    /// (the NVFP4 tensor scale, the FP8 row scale, or 1). Workgroup-wide.
    #[inline(always)]
    fn run<Q: Quantized, const PACK: usize>(mut self, final_scale: impl Fn(u32) -> f32) {
        const { assert!(PACK == X::PACK) };
        self.batch = self.batch.min(MAX_BATCH as u32);
        if self.batch == 0 {
            return;
        }
        let staged = lds::dynamic::<Quarter>();
        let waves = workgroup_size_x() / WAVE;
        let mut first_row = workgroup_id_x() * waves;
        while first_row < self.m {
            let row = first_row + wave_id();
            let mut acc = [0.0f32; MAX_BATCH];
            let mut k0 = 0;
            while k0 < self.k {
                let len = (self.k - k0).min(K_CHUNK);
                self.stage_x::<PACK>(staged, k0, len);
                workgroup_barrier();
                if row < self.m {
                    self.accumulate::<Q>(staged, row, k0, len, &mut acc);
                }
                workgroup_barrier();
                k0 += len;
            }
            if row < self.m {
                let scale = final_scale(row);
                for (b, &sum) in acc.iter().enumerate() {
                    if (b as u32) < self.batch {
                        let total = wave::reduce_sum(sum) * scale;
                        if lane_id() == 0 {
                            // SAFETY: b < batch and row < m: inside y.
                            unsafe {
                                *self.y.add(b * self.m as usize + row as usize) =
                                    Y::round_from_f32(total)
                            };
                        }
                    }
                }
            }
            first_row += num_workgroups_x() * waves;
        }
    }
}

/// Declares a kernel over an MX block format.
macro_rules! mx_kernel {
    ($name:ident, $format:ident, $x:ident, $pack:literal, $y:ident, $what:literal) => {
        #[doc = concat!("`y = W x`, W in ", $what, ", x ", stringify!($x), ", y ", stringify!($y), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $name(
            w: *const u8,
            scales: *const u8,
            x: *const $x,
            y: *mut $y,
            m: u32,
            k: u32,
            batch: u32,
        ) {
            Gemv { w, scales, x, y, m, k, batch }.run::<MxBlocks<$format>, $pack>(|_| 1.0);
        }
    };
}

/// Declares an NVFP4 kernel.
macro_rules! nvfp4_kernel {
    ($name:ident, $x:ident, $pack:literal, $y:ident) => {
        #[doc = concat!("`y = W x`, W in NVFP4, x ", stringify!($x), ", y ", stringify!($y), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $name(
            w: *const u8,
            scales: *const u8,
            tensor_scale: f32,
            x: *const $x,
            y: *mut $y,
            m: u32,
            k: u32,
            batch: u32,
        ) {
            Gemv { w, scales, x, y, m, k, batch }.run::<Nvfp4Blocks, $pack>(|_| tensor_scale);
        }
    };
}

/// Declares a plain FP8 kernel with per-row scales.
macro_rules! fp8_kernel {
    ($name:ident, $element:ident, $x:ident, $pack:literal, $y:ident, $what:literal) => {
        #[doc = concat!("`y = W x`, W in ", $what, " with a scale per row, x ", stringify!($x), ", y ", stringify!($y), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $name(
            w: *const u8,
            row_scales: *const f32,
            x: *const $x,
            y: *mut $y,
            m: u32,
            k: u32,
            batch: u32,
        ) {
            Gemv { w, scales: w, x, y, m, k, batch }
                // SAFETY: row < m, the length of row_scales.
                .run::<PlainCodes<$element>, $pack>(|row| unsafe { *row_scales.add(row as usize) });
        }
    };
}

mx_kernel!(qgemv_mxfp4_f32_f32, MxFp4, f32, 4, f32, "MXFP4");
mx_kernel!(qgemv_mxfp4_f16_f32, MxFp4, f16, 8, f32, "MXFP4");
mx_kernel!(qgemv_mxfp4_bf16_f32, MxFp4, bf16, 8, f32, "MXFP4");
mx_kernel!(qgemv_mxfp4_f16_f16, MxFp4, f16, 8, f16, "MXFP4");
mx_kernel!(qgemv_mxfp4_bf16_bf16, MxFp4, bf16, 8, bf16, "MXFP4");
mx_kernel!(
    qgemv_mxfp6_e2m3_f32_f32,
    MxFp6E2M3,
    f32,
    4,
    f32,
    "MXFP6 E2M3"
);
mx_kernel!(
    qgemv_mxfp6_e2m3_f16_f32,
    MxFp6E2M3,
    f16,
    8,
    f32,
    "MXFP6 E2M3"
);
mx_kernel!(
    qgemv_mxfp6_e2m3_bf16_f32,
    MxFp6E2M3,
    bf16,
    8,
    f32,
    "MXFP6 E2M3"
);
mx_kernel!(
    qgemv_mxfp6_e3m2_f32_f32,
    MxFp6E3M2,
    f32,
    4,
    f32,
    "MXFP6 E3M2"
);
mx_kernel!(
    qgemv_mxfp6_e3m2_f16_f32,
    MxFp6E3M2,
    f16,
    8,
    f32,
    "MXFP6 E3M2"
);
mx_kernel!(
    qgemv_mxfp6_e3m2_bf16_f32,
    MxFp6E3M2,
    bf16,
    8,
    f32,
    "MXFP6 E3M2"
);
mx_kernel!(
    qgemv_mxfp8_e4m3_f32_f32,
    MxFp8E4M3,
    f32,
    4,
    f32,
    "MXFP8 E4M3"
);
mx_kernel!(
    qgemv_mxfp8_e4m3_f16_f32,
    MxFp8E4M3,
    f16,
    8,
    f32,
    "MXFP8 E4M3"
);
mx_kernel!(
    qgemv_mxfp8_e4m3_bf16_f32,
    MxFp8E4M3,
    bf16,
    8,
    f32,
    "MXFP8 E4M3"
);
mx_kernel!(
    qgemv_mxfp8_e5m2_f32_f32,
    MxFp8E5M2,
    f32,
    4,
    f32,
    "MXFP8 E5M2"
);
mx_kernel!(
    qgemv_mxfp8_e5m2_f16_f32,
    MxFp8E5M2,
    f16,
    8,
    f32,
    "MXFP8 E5M2"
);
mx_kernel!(
    qgemv_mxfp8_e5m2_bf16_f32,
    MxFp8E5M2,
    bf16,
    8,
    f32,
    "MXFP8 E5M2"
);
mx_kernel!(qgemv_mxint8_f32_f32, MxInt8, f32, 4, f32, "MXINT8");
mx_kernel!(qgemv_mxint8_f16_f32, MxInt8, f16, 8, f32, "MXINT8");
mx_kernel!(qgemv_mxint8_bf16_f32, MxInt8, bf16, 8, f32, "MXINT8");

nvfp4_kernel!(qgemv_nvfp4_f32_f32, f32, 4, f32);
nvfp4_kernel!(qgemv_nvfp4_f16_f32, f16, 8, f32);
nvfp4_kernel!(qgemv_nvfp4_bf16_f32, bf16, 8, f32);

fp8_kernel!(qgemv_fp8_e4m3fn_f32_f32, E4M3Fn, f32, 4, f32, "FP8 E4M3FN");
fp8_kernel!(qgemv_fp8_e4m3fn_f16_f32, E4M3Fn, f16, 8, f32, "FP8 E4M3FN");
fp8_kernel!(
    qgemv_fp8_e4m3fn_bf16_f32,
    E4M3Fn,
    bf16,
    8,
    f32,
    "FP8 E4M3FN"
);
fp8_kernel!(qgemv_fp8_e4m3fn_f16_f16, E4M3Fn, f16, 8, f16, "FP8 E4M3FN");
fp8_kernel!(
    qgemv_fp8_e4m3fn_bf16_bf16,
    E4M3Fn,
    bf16,
    8,
    bf16,
    "FP8 E4M3FN"
);
fp8_kernel!(qgemv_fp8_e5m2_f32_f32, E5M2, f32, 4, f32, "FP8 E5M2");
fp8_kernel!(qgemv_fp8_e5m2_f16_f32, E5M2, f16, 8, f32, "FP8 E5M2");
fp8_kernel!(qgemv_fp8_e5m2_bf16_f32, E5M2, bf16, 8, f32, "FP8 E5M2");
fp8_kernel!(qgemv_fp8_e5m2_f16_f16, E5M2, f16, 8, f16, "FP8 E5M2");
fp8_kernel!(qgemv_fp8_e5m2_bf16_bf16, E5M2, bf16, 8, bf16, "FP8 E5M2");
fp8_kernel!(
    qgemv_fp8_e4m3fnuz_f32_f32,
    E4M3Fnuz,
    f32,
    4,
    f32,
    "FP8 E4M3FNUZ"
);
fp8_kernel!(
    qgemv_fp8_e4m3fnuz_f16_f32,
    E4M3Fnuz,
    f16,
    8,
    f32,
    "FP8 E4M3FNUZ"
);
fp8_kernel!(
    qgemv_fp8_e4m3fnuz_bf16_f32,
    E4M3Fnuz,
    bf16,
    8,
    f32,
    "FP8 E4M3FNUZ"
);
fp8_kernel!(
    qgemv_fp8_e5m2fnuz_f32_f32,
    E5M2Fnuz,
    f32,
    4,
    f32,
    "FP8 E5M2FNUZ"
);
fp8_kernel!(
    qgemv_fp8_e5m2fnuz_f16_f32,
    E5M2Fnuz,
    f16,
    8,
    f32,
    "FP8 E5M2FNUZ"
);
fp8_kernel!(
    qgemv_fp8_e5m2fnuz_bf16_f32,
    E5M2Fnuz,
    bf16,
    8,
    f32,
    "FP8 E5M2FNUZ"
);
