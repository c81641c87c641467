//! Writing `print!` frames into the HIP runtime's printf buffer.
//!
//! The buffer is the kernel's `hidden_printf_buffer` argument: two words (the bytes used so
//! far, which the host sets to 0, and the bytes available after the header), then frames. A
//! frame is a control word (its size in bytes times 4; bit 1 clear: the format string follows
//! inline), the C format string with its NUL padded to 8 bytes, then the arguments.
//!
//! Each call reserves room for all the wave's active lanes at once, with one compare-and-swap,
//! so that one call's frames are contiguous and in lane order. When the buffer cannot take
//! them, the wave's frames are dropped and a note saying so takes their place, if it fits in
//! the room kept for it.

use super::args::Args;
use super::format::{Format, translate};
use crate::atomic::{self, Ordering, Scope};
use crate::{id, llvm, wave};

/// The frame that replaces output the buffer had no room for.
const DROPPED: Format = translate("iron: the print buffer is full: output was dropped\n", &[]);

/// The bytes of the dropped-output frame, kept free at the end of the buffer for it.
const DROPPED_BYTES: u32 = 4 + DROPPED.stored_len() as u32;

/// Writes one frame with `format` and `args` for each active lane.
#[inline(always)]
pub fn emit<A: Args>(format: &'static Format, args: A) {
    let text = format.stored_len() as u32;
    let bytes = 4 + text + args.stored_bytes();
    let Some(frame) = reserve(bytes, A::VARYING) else {
        return;
    };
    // SAFETY: `reserve` gave this lane `bytes` bytes of the buffer, aligned to 4.
    unsafe {
        write_head(frame, bytes, format);
        args.store(frame.add(4 + text as usize), format.zero_extend);
    }
}

/// Writes a frame's control word and format string.
///
/// # Safety
/// `frame` must be valid for `4 + format.stored_len()` bytes and aligned to 4.
#[inline(always)]
unsafe fn write_head(frame: *mut u8, bytes: u32, format: &Format) {
    let words = frame.cast::<u32>();
    // SAFETY: the caller's contract.
    unsafe { words.write(bytes << 2) };
    for i in 0..format.stored_len() / 4 {
        let b = &format.bytes;
        let word = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        // SAFETY: the caller's contract: `i` is below the format's stored words.
        unsafe { words.add(1 + i).write(word) };
    }
}

/// This lane's `bytes` bytes of the print buffer: `None` when the kernel has no buffer or the
/// buffer is full. `varying`: `bytes` may differ from lane to lane.
#[inline(always)]
fn reserve(bytes: u32, varying: bool) -> Option<*mut u8> {
    // SAFETY: the marker stands for the kernel's hidden printf-buffer argument.
    let buffer = unsafe { llvm::print_buffer() };
    if buffer.is_null() {
        return None;
    }
    let active = wave::ballot(true);
    let lane = id::lane_id();
    let below = active & ((1u64 << lane) - 1);
    let (offset, total) = if varying {
        let mut rest = active;
        let (mut offset, mut total) = (0, 0);
        while rest != 0 {
            let other = rest.trailing_zeros();
            let size = wave::read_lane(bytes, other);
            if other < lane {
                offset += size;
            }
            total += size;
            rest &= rest - 1;
        }
        (offset, total)
    } else {
        (below.count_ones() * bytes, active.count_ones() * bytes)
    };
    let mut base = u32::MAX;
    if lane == active.trailing_zeros() {
        // SAFETY: a printf buffer starts with its two header words.
        base = unsafe { claim(buffer, total) };
    }
    let base = wave::broadcast_first(base);
    if base == u32::MAX {
        return None;
    }
    // SAFETY: the frames lie inside the buffer, which `claim` checked.
    Some(unsafe { buffer.cast::<u8>().add(8 + (base + offset) as usize) })
}

/// Reserves `bytes` after the header for the wave, or writes the dropped-output frame (when
/// it fits) and returns `u32::MAX`.
///
/// # Safety
/// `buffer` must point to a printf buffer's header.
#[inline(always)]
unsafe fn claim(buffer: *mut u32, bytes: u32) -> u32 {
    // SAFETY: the header's second word, which the host wrote before the launch.
    let capacity = unsafe { buffer.add(1).read() };
    // SAFETY: the caller's contract.
    if let Some(offset) = unsafe { take(buffer, bytes, capacity.saturating_sub(DROPPED_BYTES)) } {
        return offset;
    }
    // SAFETY: as above; the dropped-output frame's room is the buffer's last bytes.
    if let Some(offset) = unsafe { take(buffer, DROPPED_BYTES, capacity) } {
        // SAFETY: `take` reserved the frame's bytes.
        unsafe {
            write_head(
                buffer.cast::<u8>().add(8 + offset as usize),
                DROPPED_BYTES,
                &DROPPED,
            )
        };
    }
    u32::MAX
}

/// Advances the header's used-bytes word by `bytes` if the result stays within `limit`;
/// returns the frames' offset.
///
/// # Safety
/// `buffer` must point to a printf buffer's header.
#[inline(always)]
unsafe fn take(buffer: *mut u32, bytes: u32, limit: u32) -> Option<u32> {
    // SAFETY: the header's first word, updated only atomically.
    let mut used = unsafe { atomic::load(buffer, Ordering::Relaxed, Scope::Agent) };
    loop {
        if used > limit || bytes > limit - used {
            return None;
        }
        // SAFETY: as above.
        match unsafe {
            atomic::compare_exchange(
                buffer,
                used,
                used + bytes,
                Ordering::Relaxed,
                Ordering::Relaxed,
                Scope::Agent,
            )
        } {
            Ok(_) => return Some(used),
            Err(found) => used = found,
        }
    }
}
