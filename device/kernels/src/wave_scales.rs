//! How the dequantization kernels fetch scale codes: one byte per block, a work-item needing the
//! codes of the blocks its units belong to (one code, two consecutive ones, or one shared with
//! its neighbour), so that the codes a wave of consecutive work-items needs form one contiguous
//! range.
//!
//! Fast path: in a wave whose lanes hold consecutive work-items (every lane launched, as in each
//! wave of a 1-D launch whose workgroup size is a multiple of the wave: [`consecutive_lanes`]),
//! when all of the wave's work-items are whole and the range's 16-byte chunks (aligned down to
//! 16 bytes) fit inside the buffer, the first lanes load the chunks with one 16-byte access each
//! (lane `j` chunk `j`) and every lane takes its word with four cross-lane moves ([`shuffle`],
//! one per word of a chunk). The decision is wave-uniform and costs a few scalar instructions.
//!
//! Fallback, taken by the whole wave: each lane reads its own codes with 1-byte loads, never
//! past the buffer. Partial waves (the grid's last, or every workgroup's last when the workgroup
//! size is not a multiple of the wave), the wave holding a last, partial work-item, and waves
//! that need the codes past the buffer's last whole chunk take it.

use iron_intrinsics::id::{global_id_x, lane_id};
use iron_intrinsics::target::WAVE;
use iron_intrinsics::wave::{ballot, broadcast_first, shuffle};

/// Bytes in one chunk of scale codes: one 16-byte load.
const CHUNK: u32 = 16;

/// The ballot of a wave whose lanes are all active.
const FULL_WAVE: u64 = u64::MAX >> (64 - WAVE);

/// Sixteen scale codes read as one access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u32; 4]);

/// Whether every lane of this wave was launched and lane `l` holds global id `g + l`, `g` lane
/// 0's (wave-uniform). A grid-stride loop keeps this for its work-items. Every launched lane
/// must call it together, before any lane leaves.
#[inline(always)]
pub fn consecutive_lanes() -> bool {
    let id = global_id_x();
    let first = broadcast_first(id);
    ballot(true) == FULL_WAVE && ballot(id != first.wrapping_add(lane_id())) == 0
}

/// Where the scale codes of a work-item are.
#[derive(Clone, Copy)]
pub struct ScaleLayout {
    /// Units of 16 elements per work-item.
    pub units_per_item: u32,
    /// Units sharing one scale code (1 or 2).
    pub units_per_scale: u32,
    /// Scale codes in the buffer.
    pub codes: u32,
    /// Work-items whose units all exist (a last, partial one follows when the units are not a
    /// whole number of work-items).
    pub whole_items: u32,
}

impl ScaleLayout {
    /// The index of work-item `item`'s first scale code.
    #[inline(always)]
    fn first(self, item: u32) -> u32 {
        item.wrapping_mul(self.units_per_item) / self.units_per_scale
    }

    /// Scale codes per work-item: 1 or 2 (codes per item start at an even index then).
    #[inline(always)]
    fn per_item(self) -> u32 {
        (self.units_per_item / self.units_per_scale).max(1)
    }
}

/// The scale codes of work-item `item` (whose first code is inside the buffer): byte `k` is the
/// code of the `k`-th block its units belong to (unit `u` of the item: block `u /
/// units_per_scale`); bytes past the item's codes are unspecified. `consecutive` is
/// [`consecutive_lanes`] of this wave; every active lane of the wave must call it together.
///
/// # Safety
/// `scales` holds `layout.codes` codes and starts 16-byte aligned.
#[inline(always)]
pub unsafe fn item_scales(
    scales: *const u8,
    layout: ScaleLayout,
    item: u32,
    consecutive: bool,
) -> u32 {
    let first = layout.first(item);
    if consecutive {
        // Lane 0 is active whenever any lane is (its work-item is the wave's smallest), and
        // when the last is whole, all are.
        let first_item = broadcast_first(item);
        let last_item = first_item.wrapping_add(WAVE - 1);
        let base = layout.first(first_item) & !(CHUNK - 1);
        let end = layout
            .first(last_item)
            .wrapping_add(layout.per_item())
            .next_multiple_of(CHUNK);
        if last_item < layout.whole_items && end <= layout.codes {
            // SAFETY: chunks `base..end` lie inside the buffer; the wave is full and every
            // lane's codes lie in them.
            return unsafe { gather(scales, base, (end - base) / CHUNK, first - base) };
        }
    }
    let mut codes = 0;
    for k in 0..layout.per_item() {
        let index = first + k;
        if index < layout.codes {
            // SAFETY: index < layout.codes.
            codes |= u32::from(unsafe { *scales.add(index as usize) }) << (8 * k);
        }
    }
    codes
}

/// The four bytes at `offset` of the range of `chunks` 16-byte chunks from `base`: lanes
/// `0..chunks` load one chunk each, then every lane reads its word from the lane holding it.
/// Wave-wide; `offset / 16 < chunks` in every lane.
///
/// # Safety
/// The chunks lie inside the buffer, which starts 16-byte aligned.
#[inline(always)]
unsafe fn gather(scales: *const u8, base: u32, chunks: u32, offset: u32) -> u32 {
    let lane = lane_id();
    let chunk = if lane < chunks {
        // SAFETY: chunk `lane` lies inside the buffer and is 16-byte aligned.
        unsafe { (*(scales.add((base + CHUNK * lane) as usize) as *const Chunk)).0 }
    } else {
        [0; 4]
    };
    let holder = offset / CHUNK;
    let words = chunk.map(|word| shuffle(word, holder));
    let odd = (offset / 4) % 2 == 1;
    let (low, high) = if odd {
        (words[1], words[3])
    } else {
        (words[0], words[2])
    };
    let word = if (offset / 8) % 2 == 1 { high } else { low };
    word >> (8 * (offset % 4))
}
