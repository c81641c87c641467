//! Dequantization of block-scaled tensors to f32, decoded by `iron-quant`'s device functions (the
//! same code the host packer is tested against).
//!
//! Layout (what `iron_quant::host::QuantizedTensor` produces): a row-major `[rows, cols]` tensor
//! with blocks along rows, `cols` a multiple of the block length; the packed codes of all blocks
//! back to back (`BLOCK_BYTES` per block) and one scale code per block. A tensor of `blocks`
//! blocks dequantizes to `blocks * BLOCK_LEN` f32 values in the same row-major order.
//!
//! Launch: any grid (grid-stride), workgroups of up to 256, no dynamic LDS. Each work-item
//! decodes 16 consecutive elements at a time (half an MX block, one NVFP4 block: see
//! `crate::decode`), reading their codes with one 8-, 12- or 16-byte access and writing them
//! with four 16-byte stores; a grid of `blocks * BLOCK_LEN / 16` work-items covers the tensor in
//! one pass. Buffers must be 16-byte aligned (device allocations are), and
//! `blocks * BLOCK_LEN / 16` must be below 2^32.
//!
//! The same decoding writes f16 and bf16: [`crate::dequant_half`].

#[cfg(target_arch = "amdgpu")]
use crate::decode::{MxBlocks, Nvfp4Blocks, Quantized, dequantize_units};
#[cfg(target_arch = "amdgpu")]
use crate::dtype::Float;
use iron_intrinsics::kernel;
#[cfg(target_arch = "amdgpu")]
use iron_quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8};

/// Decodes blocks `0..blocks` of the block format `Q` into `out` as `T`.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
pub(crate) fn dequant_blocks<Q: Quantized, T: Float>(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut T,
    blocks: u32,
) {
    let units = blocks * Q::UNITS_PER_SCALE as u32;
    // SAFETY: the kernel's caller provides `blocks` packed blocks, their scales and
    // `blocks * BLOCK_LEN` outputs, 16-byte aligned.
    unsafe { dequantize_units::<Q, T>(packed, scales, tensor_scale, out, units) };
}

/// MXFP4 (E2M1 elements, 2 per byte, element `2i` in the low nibble) to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp4_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxFp4>, f32>(packed, scales, 1.0, out, blocks);
}

/// MXFP6 E2M3 (4 elements in 3 bytes, little-endian bit stream) to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp6_e2m3_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxFp6E2M3>, f32>(packed, scales, 1.0, out, blocks);
}

/// MXFP6 E3M2 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp6_e3m2_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxFp6E3M2>, f32>(packed, scales, 1.0, out, blocks);
}

/// MXFP8 E4M3 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp8_e4m3_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxFp8E4M3>, f32>(packed, scales, 1.0, out, blocks);
}

/// MXFP8 E5M2 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp8_e5m2_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxFp8E5M2>, f32>(packed, scales, 1.0, out, blocks);
}

/// MXINT8 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxint8_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxBlocks<MxInt8>, f32>(packed, scales, 1.0, out, blocks);
}

/// NVFP4 (blocks of 16 E2M1 elements, an E4M3 scale per block, an f32 scale per tensor) to f32.
#[kernel(max_threads = 256)]
pub fn dequant_nvfp4_f32(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut f32,
    blocks: u32,
) {
    dequant_blocks::<Nvfp4Blocks, f32>(packed, scales, tensor_scale, out, blocks);
}
