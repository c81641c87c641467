//! Reading a word many work-items of a wave need: each distinct word is read once, by one lane,
//! and broadcast to the others (a gather's row index, a RoPE token's position).

use iron_intrinsics::{id::lane_id, wave::broadcast_first};

/// `words[index]`, read once for all active work-items of the wave with the same `index`: each
/// round, the first active work-item reads the word at its index and broadcasts it, and the
/// work-items with that index take it and leave (one round per distinct index in the wave).
/// Every active work-item of the wave must call it.
///
/// # Safety
/// `words[index]` must be readable for every active work-item's `index`.
#[inline(always)]
pub unsafe fn read_once_per_wave(words: *const u32, index: u32) -> u32 {
    loop {
        let (leader, leader_index) = (broadcast_first(lane_id()), broadcast_first(index));
        let loaded = if lane_id() == leader {
            // SAFETY: leader_index is the index of an active work-item, readable as the caller
            // guarantees.
            unsafe { *words.add(leader_index as usize) }
        } else {
            0
        };
        let word = broadcast_first(loaded);
        if index == leader_index {
            return word;
        }
    }
}
