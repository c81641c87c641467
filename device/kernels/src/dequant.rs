//! Dequantization of block-scaled tensors to f32, decoded by `iron-quant`'s device functions (the
//! same code the host packer is tested against).
//!
//! Layout (what `iron_quant::host::QuantizedTensor` produces): a row-major `[rows, cols]` tensor
//! with blocks along rows, `cols` a multiple of the block length; the packed codes of all blocks
//! back to back (`BLOCK_BYTES` per block) and one scale code per block. A tensor of `blocks`
//! blocks dequantizes to `blocks * BLOCK_LEN` f32 values in the same row-major order.
//!
//! Launch: one work-item per block, any grid (grid-stride), workgroups of up to 256, no dynamic
//! LDS.

#[cfg(target_arch = "amdgpu")]
use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;
#[cfg(target_arch = "amdgpu")]
use iron_quant::{BlockFormat, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};

/// Decodes blocks `0..blocks` of format `B` into `out`.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn dequant_blocks<B: BlockFormat>(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut f32,
    blocks: u32,
) {
    let stride = grid_size_x();
    let mut block = global_id_x();
    while block < blocks {
        let b = block as usize;
        // SAFETY: block < blocks; the caller provides `blocks` packed blocks, scales and
        // `blocks * BLOCK_LEN` outputs.
        let (codes, scale, values) = unsafe {
            (
                core::slice::from_raw_parts(packed.add(b * B::BLOCK_BYTES), B::BLOCK_BYTES),
                *scales.add(b),
                core::slice::from_raw_parts_mut(out.add(b * B::BLOCK_LEN), B::BLOCK_LEN),
            )
        };
        B::decode_block(codes, scale, tensor_scale, values);
        block += stride;
    }
}

/// MXFP4 (E2M1 elements, 2 per byte, element `2i` in the low nibble) to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp4_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxFp4>(packed, scales, 1.0, out, blocks);
}

/// MXFP6 E2M3 (4 elements in 3 bytes, little-endian bit stream) to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp6_e2m3_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxFp6E2M3>(packed, scales, 1.0, out, blocks);
}

/// MXFP6 E3M2 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp6_e3m2_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxFp6E3M2>(packed, scales, 1.0, out, blocks);
}

/// MXFP8 E4M3 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp8_e4m3_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxFp8E4M3>(packed, scales, 1.0, out, blocks);
}

/// MXFP8 E5M2 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxfp8_e5m2_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxFp8E5M2>(packed, scales, 1.0, out, blocks);
}

/// MXINT8 to f32.
#[kernel(max_threads = 256)]
pub fn dequant_mxint8_f32(packed: *const u8, scales: *const u8, out: *mut f32, blocks: u32) {
    dequant_blocks::<MxInt8>(packed, scales, 1.0, out, blocks);
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
    dequant_blocks::<Nvfp4>(packed, scales, tensor_scale, out, blocks);
}
