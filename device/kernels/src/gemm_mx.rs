//! GEMM over microscaled and byte-coded inputs on the matrix cores (CDNA and RDNA):
//! `C = alpha * A B + beta * C (+ bias)` with A `[M, K]` and B `[K, N]` given as codes of the
//! OCP microscaling formats (MXFP8, MXFP6, MXFP4: blocks of 32 elements along K sharing an E8M0
//! scale) or of plain FP8/FP6/FP4 formats without block scales.
//!
//! Layout (what `iron_quant::host::QuantizedTensor` produces): A quantized as `[M, K]` and B as
//! its transpose `[N, K]` (B column-major), so both are K-contiguous: row `r`'s codes are bytes
//! `r * K * bits / 8 ..` of the packed stream (`iron_quant::pack`), and its scale codes
//! `scales[r * K / 32 ..]`. `C` is row-major `[M, N]`.
//!
//! Kernels (arguments `(a, a_scales, b, b_scales, c, bias, alpha, beta, m, n, k, flags)`):
//! - gfx950, hardware microscaling: `gemm_{mxfp8_e4m3,mxfp8_e5m2,mxfp6_e2m3,mxfp6_e3m2,mxfp4}_
//!   {f32,bf16,f16}`: A and B in the named MX format, through
//!   `v_mfma_scale_f32_16x16x128_f8f6f4` (each lane feeds one 32-element block and its scale;
//!   products of scaled elements summed in f32). `k` must be a multiple of 32.
//! - every gfx, software decoding: `gemm_decoded_{f32,bf16,f16}`: A and B each in any
//!   element format of [`FORMAT_E4M3FN`] .. [`FORMAT_E2M1`] (named in `flags`), each with or
//!   without E8M0 block scales. Each element is decoded exactly (one decoder for every format,
//!   its layout chosen at run time, `gemm_decode`), multiplied by its block scale in
//!   f32 (exact, as `iron_quant` dequantizes) and rounded to bf16 into LDS, then the gfx's bf16 instruction accumulates in f32: `v_mfma_f32_32x32x16_bf16`
//!   (gfx950), `v_mfma_f32_32x32x8_bf16` (gfx90a, gfx942), `v_wmma_f32_16x16x16_bf16`
//!   (gfx1100, gfx1201). Every FP8/FP6/FP4 element times a power of two has at most 4
//!   significant bits, so the bf16 value is exact unless it falls below bf16's normal range
//!   (`2^-126`) or overflows; `k` must be a multiple of 32 for block-scaled or FP6/FP4 operands
//!   (any `k` for unscaled FP8). This is how every gfx but gfx950 runs the MX formats, and how
//!   any gfx runs FP8 formats its instructions do not read, or mixed pairs.
//!
//! `flags`: [`crate::gemm::FLAG_BIAS`] (bit 2) adds `bias` (`n` f32) to every row; the decoding
//! kernels also read A's format in bits 8..12 and B's in bits 12..16 ([`format_flags`]), and
//! [`FLAG_A_SCALED`], [`FLAG_B_SCALED`] (block scales present; without, the scale pointer is
//! not read). Plain FP8 per-tensor scales are folded into `alpha` by the caller.
//!
//! Arithmetic and the epilogue are those of [`crate::gemm`]: `alpha * acc`, then `+ beta * C`
//! (fused; `C` unread when `beta == 0`), then `+ bias`, rounded once.
//!
//! Launch: workgroups of exactly 256 work-items, a grid of `(ceil(n / 128), ceil(m / 128))`;
//! dynamic LDS [`mx_lds_bytes`] (hardware kernels) or [`DECODED_LDS_BYTES`]. Buffers 16-byte
//! aligned.

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::dtype::Float,
    crate::gemm::{BLOCK, GemmBf16Core},
    crate::gemm_decode::DecodedOperand,
    crate::gemm_stage::HALF_TILE_K,
    crate::gemm_tile::{Output, PlainStep, block_origin, gemm},
};

/// Element format code (in `flags`) of the decoding kernels: OCP FP8 E4M3 (E4M3FN).
pub const FORMAT_E4M3FN: u32 = 0;
/// Element format code: OCP FP8 E5M2.
pub const FORMAT_E5M2: u32 = 1;
/// Element format code: FP8 E4M3FNUZ.
pub const FORMAT_E4M3FNUZ: u32 = 2;
/// Element format code: FP8 E5M2FNUZ.
pub const FORMAT_E5M2FNUZ: u32 = 3;
/// Element format code: FP6 E2M3.
pub const FORMAT_E2M3: u32 = 4;
/// Element format code: FP6 E3M2.
pub const FORMAT_E3M2: u32 = 5;
/// Element format code: FP4 E2M1.
pub const FORMAT_E2M1: u32 = 6;
/// Flag of the decoding kernels: A has E8M0 block scales (blocks of 32 along K).
pub const FLAG_A_SCALED: u32 = 1 << 16;
/// Flag of the decoding kernels: B has E8M0 block scales.
pub const FLAG_B_SCALED: u32 = 1 << 17;

/// The `flags` bits naming A's and B's element formats for the decoding kernels.
pub const fn format_flags(a_format: u32, b_format: u32) -> u32 {
    (a_format << 8) | (b_format << 12)
}

/// Bits per code of a format code.
pub const fn format_bits(format: u32) -> u32 {
    match format {
        FORMAT_E2M3 | FORMAT_E3M2 => 6,
        FORMAT_E2M1 => 4,
        _ => 8,
    }
}

/// Dynamic LDS of the decoding kernels: two buffers of A's and B's 128 x 32 bf16 tiles (rows of
/// 64 bytes, swizzled).
pub const DECODED_LDS_BYTES: u32 = 2 * 2 * 128 * 64;

/// Bytes per LDS row of a gfx950 MX kernel's 128-element K tile of `bits`-bit codes: FP4's
/// and FP6's rows unpadded (their chunks or blocks permuted), FP8's padded by 16 bytes.
pub const fn mx_row_bytes(bits: u32) -> u32 {
    if bits == 8 { 16 * bits + 16 } else { 16 * bits }
}

/// Dynamic LDS of a gfx950 MX kernel whose A and B codes have `bits` bits: two buffers of A's
/// and B's 128 x 128-element tiles (rows of [`mx_row_bytes`]) and their 128 x 4 scale codes.
pub const fn mx_lds_bytes(bits: u32) -> u32 {
    2 * 2 * (128 * mx_row_bytes(bits) + 128 * 4)
}

/// The software-decoding GEMM, output type `O`.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "a GEMM kernel's arguments")]
unsafe fn gemm_decoded<O: Float>(
    (a, a_scales): (*const u8, *const u8),
    (b, b_scales): (*const u8, *const u8),
    c: *mut O,
    bias: *const f32,
    alpha: f32,
    beta: f32,
    (m, n, k): (u32, u32, u32),
    flags: u32,
) {
    let (row0, col0) = block_origin::<BLOCK>();
    let a = DecodedOperand {
        codes: a,
        scales: a_scales,
        rows: m,
        k,
        format: (flags >> 8) & 0xF,
        scaled: flags & FLAG_A_SCALED != 0,
        row0,
    };
    let b = DecodedOperand {
        codes: b,
        scales: b_scales,
        rows: n,
        k,
        format: (flags >> 12) & 0xF,
        scaled: flags & FLAG_B_SCALED != 0,
        row0: col0,
    };
    let out = Output::new(c, bias, alpha, beta, m, n, flags);
    let tiles = k.div_ceil(HALF_TILE_K);
    type Step = PlainStep<GemmBf16Core, HALF_TILE_K>;
    // SAFETY: as the caller guarantees.
    unsafe { gemm::<_, _, Step, O, BLOCK>(&a, &b, tiles, &out) };
}

/// Declares a software-decoding GEMM kernel.
macro_rules! decoded_kernel {
    ($name:ident, $out:ident) => {
        #[doc = concat!("`C = alpha * A B + beta * C (+ bias)`, A and B decoded from the formats `flags` names, C ", stringify!($out), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $name(
            a: *const u8,
            a_scales: *const u8,
            b: *const u8,
            b_scales: *const u8,
            c: *mut $out,
            bias: *const f32,
            alpha: f32,
            beta: f32,
            m: u32,
            n: u32,
            k: u32,
            flags: u32,
        ) {
            // SAFETY: the launch follows the module's contract.
            unsafe {
                gemm_decoded::<$out>(
                    (a, a_scales),
                    (b, b_scales),
                    c,
                    bias,
                    alpha,
                    beta,
                    (m, n, k),
                    flags,
                )
            };
        }
    };
}

decoded_kernel!(gemm_decoded_f32, f32);
decoded_kernel!(gemm_decoded_bf16, bf16);
decoded_kernel!(gemm_decoded_f16, f16);

/// The hardware-microscaling GEMM (gfx950): A and B codes of format `F` (`CHUNKS` 16-byte
/// chunks per work-item and K tile: 4 for FP8, 3 for FP6, 2 for FP4), output type `O`.
///
/// # Safety
/// The kernel's contract (module docs).
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "a GEMM kernel's arguments")]
unsafe fn gemm_scaled<F: iron_intrinsics::matrix::ScaledFormat, const CHUNKS: usize, O: Float>(
    (a, a_scales): (*const u8, *const u8),
    (b, b_scales): (*const u8, *const u8),
    c: *mut O,
    bias: *const f32,
    alpha: f32,
    beta: f32,
    (m, n, k): (u32, u32, u32),
    flags: u32,
) {
    use crate::gemm_scaled::ScaledStep;
    use crate::gemm_stage::{CodeOperand, MxOperand, ScaleOperand};
    use iron_intrinsics::matrix::MfmaScaleF32_16x16x128F8F6F4;
    const {
        assert!(CodeOperand::<CHUNKS>::TILE_BYTES == 16 * F::BITS);
        assert!(CodeOperand::<CHUNKS>::PITCH == mx_row_bytes(F::BITS));
    };
    let (row0, col0) = block_origin::<BLOCK>();
    let operand = |codes: *const u8, scales: *const u8, rows: u32, row0: u32| MxOperand {
        codes: CodeOperand::<CHUNKS> {
            base: codes,
            rows,
            row_bytes: k / 8 * F::BITS,
            row0,
        },
        scales: ScaleOperand {
            base: scales,
            rows,
            blocks_per_row: k / 32,
            row0,
        },
    };
    let (a, b) = (operand(a, a_scales, m, row0), operand(b, b_scales, n, col0));
    let out = Output::new(c, bias, alpha, beta, m, n, flags);
    let tiles = k.div_ceil(128);
    type Step<F, const CHUNKS: usize> =
        ScaledStep<MfmaScaleF32_16x16x128F8F6F4<F, F>, CHUNKS, CHUNKS>;
    // SAFETY: as the caller guarantees.
    unsafe { gemm::<_, _, Step<F, CHUNKS>, O, BLOCK>(&a, &b, tiles, &out) };
}

/// Declares a gfx950 hardware-microscaling GEMM kernel.
macro_rules! scaled_kernel {
    ($name:ident, $format:ident, $chunks:literal, $what:literal, $out:ident) => {
        #[doc = concat!("`C = alpha * A B + beta * C (+ bias)`, A and B ", $what, " (A `[M, K]`, B `[N, K]`), C ", stringify!($out), "; gfx950 only; see the module docs.")]
        #[cfg(any(not(target_arch = "amdgpu"), iron_gfx = "gfx950"))]
        #[kernel(max_threads = 256)]
        pub fn $name(
            a: *const u8,
            a_scales: *const u8,
            b: *const u8,
            b_scales: *const u8,
            c: *mut $out,
            bias: *const f32,
            alpha: f32,
            beta: f32,
            m: u32,
            n: u32,
            k: u32,
            flags: u32,
        ) {
            use iron_intrinsics::matrix::$format;
            // SAFETY: the launch follows the module's contract.
            unsafe {
                gemm_scaled::<$format, $chunks, $out>(
                    (a, a_scales),
                    (b, b_scales),
                    c,
                    bias,
                    alpha,
                    beta,
                    (m, n, k),
                    flags,
                )
            };
        }
    };
}

scaled_kernel!(gemm_mxfp8_e4m3_f32, Fp8E4M3, 4, "MXFP8 E4M3", f32);
scaled_kernel!(gemm_mxfp8_e4m3_bf16, Fp8E4M3, 4, "MXFP8 E4M3", bf16);
scaled_kernel!(gemm_mxfp8_e4m3_f16, Fp8E4M3, 4, "MXFP8 E4M3", f16);
scaled_kernel!(gemm_mxfp8_e5m2_f32, Fp8E5M2, 4, "MXFP8 E5M2", f32);
scaled_kernel!(gemm_mxfp8_e5m2_bf16, Fp8E5M2, 4, "MXFP8 E5M2", bf16);
scaled_kernel!(gemm_mxfp8_e5m2_f16, Fp8E5M2, 4, "MXFP8 E5M2", f16);
scaled_kernel!(gemm_mxfp6_e2m3_f32, Fp6E2M3, 3, "MXFP6 E2M3", f32);
scaled_kernel!(gemm_mxfp6_e2m3_bf16, Fp6E2M3, 3, "MXFP6 E2M3", bf16);
scaled_kernel!(gemm_mxfp6_e2m3_f16, Fp6E2M3, 3, "MXFP6 E2M3", f16);
scaled_kernel!(gemm_mxfp6_e3m2_f32, Fp6E3M2, 3, "MXFP6 E3M2", f32);
scaled_kernel!(gemm_mxfp6_e3m2_bf16, Fp6E3M2, 3, "MXFP6 E3M2", bf16);
scaled_kernel!(gemm_mxfp6_e3m2_f16, Fp6E3M2, 3, "MXFP6 E3M2", f16);
scaled_kernel!(gemm_mxfp4_f32, Fp4E2M1, 2, "MXFP4", f32);
scaled_kernel!(gemm_mxfp4_bf16, Fp4E2M1, 2, "MXFP4", bf16);
scaled_kernel!(gemm_mxfp4_f16, Fp4E2M1, 2, "MXFP4", f16);
