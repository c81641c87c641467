//! Dequantization of block-scaled tensors to f32, decoded by `iron-quant`'s device functions (the
//! same code the host packer is tested against).
//!
//! Layout (what `iron_quant::host::QuantizedTensor` produces): a row-major `[rows, cols]` tensor
//! with blocks along rows, `cols` a multiple of the block length; the packed codes of all blocks
//! back to back (`BLOCK_BYTES` per block) and one scale code per block. A tensor of `blocks`
//! blocks dequantizes to `blocks * BLOCK_LEN` f32 values in the same row-major order.
//!
//! Launch: any grid (grid-stride), workgroups of up to 256 (any size, also not a multiple of the
//! wave), no dynamic LDS. Each work-item decodes [`units_per_workitem`] units of 16 consecutive
//! elements at a time (see `crate::decode`): two FP4 units (one MX block, two NVFP4 blocks, 16
//! bytes of codes), four FP6 units (two blocks, 48 bytes) or one FP8/INT8 unit (half a block, 16
//! bytes), reading their codes with 16-byte loads and writing them with 16-byte stores (four per
//! unit for f32). The wave's scale codes are read as 16-byte chunks by its first lanes and handed
//! to every lane by cross-lane moves, except in waves that are partial (workgroup sizes that are
//! not a multiple of the wave, the end of the grid), hold a last, partial work-item, or need the
//! scale codes past the buffer's last whole 16-byte chunk: their lanes read their own codes byte
//! by byte (`crate::wave_scales`). A grid of
//! `ceil(blocks * BLOCK_LEN / (16 * units_per_workitem))` work-items covers the tensor in one
//! pass. Buffers must be 16-byte aligned (device allocations are), and `blocks * BLOCK_LEN / 16`
//! plus the grid's work-items must be below 2^32.
//!
//! The same decoding writes f16 and bf16: [`crate::dequant_half`].

use crate::decode::{MxBlocks, Nvfp4Blocks, Quantized, UNIT, UnitCodes, load_item, load_unit};
use crate::dtype::{Float, narrow, store};
use crate::wave_scales::{ScaleLayout, consecutive_lanes, item_scales};
use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;
use iron_quant::ElementFormat;
use iron_quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8};

/// Units of 16 elements a work-item of the dequantization kernels decodes per step for element
/// codes of `bits` bits: the fewest whose codes fill whole 16-byte loads (2 for FP4, 4 for FP6,
/// 1 for FP8 and INT8). Hosts size the grid with it.
pub const fn units_per_workitem(bits: u32) -> usize {
    let unit_bytes = 2 * bits as usize;
    let (mut a, mut b) = (unit_bytes, 16);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    16 / a
}

/// Writes the values of unit `unit` (codes `codes`, scale code `scale`) to `out` as `T`.
///
/// # Safety
/// `out` holds the unit's 16 elements and is 16-byte aligned.
#[inline(always)]
unsafe fn write_unit<Q: Quantized, T: Float>(
    codes: UnitCodes,
    scale: u8,
    tensor_scale: f32,
    out: *mut T,
    unit: u32,
) {
    let values = Q::scaled(codes, scale, tensor_scale);
    // SAFETY: as the caller guarantees.
    unsafe { store::<T, UNIT>(out, unit as usize, narrow(values)) };
}

/// Writes the values of units `0..units` of a quantized tensor to `out` as `T` (rounded to
/// nearest even) over a grid-stride loop of work-items of [`units_per_workitem`] units each:
/// codes in 16-byte loads (a last, partial work-item reads its units one by one), scale codes
/// as `crate::wave_scales` fetches them, values in 16-byte stores.
///
/// # Safety
/// `codes` holds `units` units and is 16-byte aligned; `scales` holds their scale codes
/// (`units / Q::UNITS_PER_SCALE`) and is 16-byte aligned; `out` holds `16 * units` elements and
/// is 16-byte aligned; `units` plus the grid's work-items is below 2^32.
#[inline(always)]
pub(crate) unsafe fn dequantize_units<Q: Quantized, T: Float>(
    codes: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut T,
    units: u32,
) {
    let per_item = const { units_per_workitem(<Q::Element as ElementFormat>::BITS) as u32 };
    let ups = Q::UNITS_PER_SCALE as u32;
    let layout = ScaleLayout {
        units_per_item: per_item,
        units_per_scale: ups.max(1),
        codes: units.checked_div(ups).unwrap_or(0),
        whole_items: units / per_item,
    };
    let items = units.div_ceil(per_item);
    let consecutive = ups != 0 && consecutive_lanes();
    let stride = grid_size_x();
    let mut item = global_id_x();
    while item < items {
        let item_codes = if ups == 0 {
            0
        } else {
            // SAFETY: the item's first scale code is inside the buffer (item < items), which
            // holds layout.codes codes, 16-byte aligned, as the caller guarantees.
            unsafe { item_scales(scales, layout, item, consecutive) }
        };
        let scale_of = |u: u32| (item_codes >> (8 * (u / layout.units_per_scale))) as u8;
        let first_unit = item * per_item;
        if item < layout.whole_items {
            // SAFETY: the item's units are inside the stream, which is 16-byte aligned.
            let mut left = unsafe { load_item::<Q::Element>(codes, item as usize) };
            let mut next = |u: u32| {
                let unit_codes = left.first_unit::<Q::Element>();
                left = left.rest::<Q::Element>();
                // SAFETY: unit first_unit + u < units, inside out.
                unsafe {
                    write_unit::<Q, T>(unit_codes, scale_of(u), tensor_scale, out, first_unit + u)
                };
            };
            // Units in pairs (per_item is 1 or even): the two units of an FP4 item in one
            // straight run, with no loop.
            let mut u = 0;
            while u < per_item {
                next(u);
                if per_item > 1 {
                    next(u + 1);
                }
                u += per_item.min(2);
            }
        } else {
            let mut unit = first_unit;
            while unit < units {
                // SAFETY: unit < units, inside every buffer.
                let unit_codes = unsafe { load_unit::<Q::Element>(codes, unit as usize) };
                let scale = scale_of(unit - first_unit);
                // SAFETY: as above.
                unsafe { write_unit::<Q, T>(unit_codes, scale, tensor_scale, out, unit) };
                unit += 1;
            }
        }
        item += stride;
    }
}

/// Decodes blocks `0..blocks` of the block format `Q` into `out` as `T`.
#[inline(always)]
pub(crate) fn dequant_blocks<Q: Quantized, T: Float>(
    packed: *const u8,
    scales: *const u8,
    tensor_scale: f32,
    out: *mut T,
    blocks: u32,
) {
    let units = blocks * Q::UNITS_PER_SCALE as u32;
    // SAFETY: the kernel's caller provides `blocks` packed blocks, their `blocks` scale codes
    // and `blocks * BLOCK_LEN` outputs, 16-byte aligned, with units plus the grid below 2^32.
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
