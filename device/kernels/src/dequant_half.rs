//! Dequantization to f16 and bf16, and of plain FP8 tensors with one f32 scale.
//!
//! Block formats, `dequant_<format>_<f16|bf16>(packed, scales, out, blocks)` (NVFP4 with its
//! `tensor_scale: f32` after `scales`), for every format of [`crate::dequant`] (MXFP4, MXFP6
//! E2M3/E3M2, MXFP8 E4M3/E5M2, MXINT8, NVFP4) with its layout and launch: each value is decoded
//! and scaled exactly as the f32 kernels do (`element * scale` in f32, exact for the MX formats;
//! NVFP4 `(element * block scale) * tensor scale`), then rounded once to f16 or bf16 (to nearest
//! even; beyond the range: infinity; NaN stays NaN). Each work-item decodes the units of
//! [`crate::dequant::units_per_workitem`] per step (codes in 16-byte loads, scale codes fetched
//! per wave in 16-byte chunks, as the f32 kernels do), writing each unit of 16 elements with two
//! 16-byte stores.
//!
//! Plain FP8, `dequant_fp8_<e4m3fn|e5m2|e4m3fnuz|e5m2fnuz>_<f32|f16|bf16>(codes, scale, out, n)`:
//! `out[i] = decode(codes[i]) * scale` for `i < n` (any `n`, including 0), the product rounded to
//! f32 and then, for f16 and bf16, to the output type (two roundings). 16 codes per work-item and
//! step (one 16-byte load), the last `n % 16` elements one by one.
//!
//! Launch: any grid (grid-stride), workgroups of up to 256, no dynamic LDS; a grid of
//! `ceil(blocks * BLOCK_LEN / (16 * units_per_workitem))` (block formats) or `n / 16 + 16`
//! work-items (plain FP8) covers the tensor in one pass. Buffers must be 16-byte aligned (device
//! allocations are).

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::decode::{MxBlocks, Nvfp4Blocks, PlainCodes, UNIT, UnitElement},
    crate::dequant::{dequant_blocks, dequantize_units},
    crate::dtype::Float,
    iron_intrinsics::id::global_id_x,
    iron_quant::{
        E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8,
    },
};

/// `out[i] = E::decode(codes[i]) * scale` for `i < n`, as `T`.
#[inline(always)]
fn dequant_plain<E: UnitElement, T: Float>(codes: *const u8, scale: f32, out: *mut T, n: u32) {
    let units = n / UNIT as u32;
    // SAFETY: codes and out hold n elements, 16-byte aligned; units cover the first
    // 16 * units of them.
    unsafe { dequantize_units::<PlainCodes<E>, T>(codes, codes, scale, out, units) };
    let tail = global_id_x();
    if tail < n % UNIT as u32 {
        let i = (units * UNIT as u32 + tail) as usize;
        // SAFETY: i < n.
        unsafe { *out.add(i) = T::round_from_f32(E::decode_to_f32(*codes.add(i)) * scale) };
    }
}

/// Declares the f16 and bf16 kernels of one MX block format.
macro_rules! mx_to_half {
    ($format:ident, $f16_name:ident, $bf16_name:ident, $what:literal) => {
        #[doc = concat!($what, " to f16.")]
        #[kernel(max_threads = 256)]
        pub fn $f16_name(packed: *const u8, scales: *const u8, out: *mut f16, blocks: u32) {
            dequant_blocks::<MxBlocks<$format>, f16>(packed, scales, 1.0, out, blocks);
        }

        #[doc = concat!($what, " to bf16.")]
        #[kernel(max_threads = 256)]
        pub fn $bf16_name(packed: *const u8, scales: *const u8, out: *mut bf16, blocks: u32) {
            dequant_blocks::<MxBlocks<$format>, bf16>(packed, scales, 1.0, out, blocks);
        }
    };
}

mx_to_half!(
    MxFp4,
    dequant_mxfp4_f16,
    dequant_mxfp4_bf16,
    "MXFP4 (E2M1 elements, 2 per byte, element `2i` in the low nibble)"
);
mx_to_half!(
    MxFp6E2M3,
    dequant_mxfp6_e2m3_f16,
    dequant_mxfp6_e2m3_bf16,
    "MXFP6 E2M3 (4 elements in 3 bytes, little-endian bit stream)"
);
mx_to_half!(
    MxFp6E3M2,
    dequant_mxfp6_e3m2_f16,
    dequant_mxfp6_e3m2_bf16,
    "MXFP6 E3M2"
);
mx_to_half!(
    MxFp8E4M3,
    dequant_mxfp8_e4m3_f16,
    dequant_mxfp8_e4m3_bf16,
    "MXFP8 E4M3"
);
mx_to_half!(
    MxFp8E5M2,
    dequant_mxfp8_e5m2_f16,
    dequant_mxfp8_e5m2_bf16,
    "MXFP8 E5M2"
);
mx_to_half!(MxInt8, dequant_mxint8_f16, dequant_mxint8_bf16, "MXINT8");

/// NVFP4 (blocks of 16 E2M1 elements, an E4M3 scale per block, an f32 scale per tensor) to f16.
#[kernel(max_threads = 256)]
pub fn dequant_nvfp4_f16(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut f16,
    blocks: u32,
) {
    dequant_blocks::<Nvfp4Blocks, f16>(packed, scales, tensor_scale, out, blocks);
}

/// NVFP4 to bf16.
#[kernel(max_threads = 256)]
pub fn dequant_nvfp4_bf16(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut bf16,
    blocks: u32,
) {
    dequant_blocks::<Nvfp4Blocks, bf16>(packed, scales, tensor_scale, out, blocks);
}

/// Declares the f32, f16 and bf16 kernels of one plain FP8 format.
macro_rules! plain_fp8 {
    ($element:ident, $f32_name:ident, $f16_name:ident, $bf16_name:ident, $what:literal) => {
        #[doc = concat!($what, " codes times `scale`, to f32.")]
        #[kernel(max_threads = 256)]
        pub fn $f32_name(codes: *const u8, scale: f32, out: *mut f32, n: u32) {
            dequant_plain::<$element, f32>(codes, scale, out, n);
        }

        #[doc = concat!($what, " codes times `scale`, to f16.")]
        #[kernel(max_threads = 256)]
        pub fn $f16_name(codes: *const u8, scale: f32, out: *mut f16, n: u32) {
            dequant_plain::<$element, f16>(codes, scale, out, n);
        }

        #[doc = concat!($what, " codes times `scale`, to bf16.")]
        #[kernel(max_threads = 256)]
        pub fn $bf16_name(codes: *const u8, scale: f32, out: *mut bf16, n: u32) {
            dequant_plain::<$element, bf16>(codes, scale, out, n);
        }
    };
}

plain_fp8!(
    E4M3Fn,
    dequant_fp8_e4m3fn_f32,
    dequant_fp8_e4m3fn_f16,
    dequant_fp8_e4m3fn_bf16,
    "FP8 E4M3FN (OCP)"
);
plain_fp8!(
    E5M2,
    dequant_fp8_e5m2_f32,
    dequant_fp8_e5m2_f16,
    dequant_fp8_e5m2_bf16,
    "FP8 E5M2 (OCP)"
);
plain_fp8!(
    E4M3Fnuz,
    dequant_fp8_e4m3fnuz_f32,
    dequant_fp8_e4m3fnuz_f16,
    dequant_fp8_e4m3fnuz_bf16,
    "FP8 E4M3FNUZ"
);
plain_fp8!(
    E5M2Fnuz,
    dequant_fp8_e5m2fnuz_f32,
    dequant_fp8_e5m2fnuz_f16,
    dequant_fp8_e5m2fnuz_bf16,
    "FP8 E5M2FNUZ"
);
