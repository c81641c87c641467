//! Workgroup reductions for row kernels, which reduce each value of a row once: each reduction
//! has a slot of its own in the kernel's dynamic LDS (one 4-byte element per wave), so it needs
//! one barrier, and none after it to free the LDS for the next reduction.
//!
//! A kernel using slots `0..s` declares dynamic LDS of `4 * s * workgroup_size / WAVE` bytes.

use iron_intrinsics::{
    id::{lane_id, wave_id, workgroup_size_x},
    lds,
    sync::workgroup_barrier,
    target::WAVE,
    wave::{self, WaveNum},
};

/// Waves in the workgroup as launched (its size a multiple of [`WAVE`]), read from the dispatch
/// packet: the `waves` argument of the reductions for a kernel whose workgroup size is not a
/// constant.
#[inline(always)]
pub fn launched_waves() -> u32 {
    workgroup_size_x() / WAVE
}

/// Waves up to which every work-item adds the waves' partials one by one; above, each lane reads
/// one partial and the wave reduces them again.
const SERIAL_WAVES: u32 = 4;

/// Combines `x` over the workgroup of `waves` waves (`wave_op` a wave reduction of `op`) through
/// slot `slot`, in every work-item. Workgroup-wide.
///
/// The calling kernel's dynamic LDS holds `slot + 1` slots, and no other reduction of the launch
/// uses slot `slot`.
#[inline(always)]
fn reduce_once<T: WaveNum>(
    x: T,
    slot: u32,
    waves: u32,
    identity: T,
    wave_op: fn(T) -> T,
    op: fn(T, T) -> T,
) -> T {
    let partial = wave_op(x);
    if waves == 1 {
        return partial;
    }
    // SAFETY: the kernel's dynamic LDS holds `slot + 1` slots of one element per wave.
    let scratch = unsafe { lds::dynamic::<T>().add((slot * waves) as usize) };
    if lane_id() == 0 {
        // SAFETY: wave_id() < waves, inside this slot; no other wave writes this element.
        unsafe { *scratch.add(wave_id() as usize) = partial };
    }
    workgroup_barrier();
    if waves <= SERIAL_WAVES {
        // SAFETY: slot elements 0 and 1 exist (waves >= 2) and were written before the barrier.
        let mut total = unsafe { op(*scratch, *scratch.add(1)) };
        for w in 2..waves {
            // SAFETY: w < waves, inside this slot, written before the barrier.
            total = op(total, unsafe { *scratch.add(w as usize) });
        }
        total
    } else {
        let lane = lane_id();
        // SAFETY: lane < waves, inside this slot, written before the barrier.
        let mine = if lane < waves {
            unsafe { *scratch.add(lane as usize) }
        } else {
            identity
        };
        wave_op(mine)
    }
}

/// The sum of `x` over the workgroup of `waves` waves through slot `slot`, in every work-item;
/// see the module. A constant `waves` (1 in a one-wave instance) folds the exchange away.
#[inline(always)]
pub fn sum_once<T: WaveNum>(x: T, slot: u32, waves: u32) -> T {
    reduce_once(x, slot, waves, T::ZERO, wave::reduce_sum, T::add)
}

/// The maximum of `x` over the workgroup of `waves` waves through slot `slot` (for floats a NaN
/// is ignored, as `f32::max` does), in every work-item; see the module.
#[inline(always)]
pub fn max_once<T: WaveNum>(x: T, slot: u32, waves: u32) -> T {
    reduce_once(x, slot, waves, T::LOWEST, wave::reduce_max, T::max)
}

/// The minimum of `x` over the workgroup of `waves` waves through slot `slot`, in every
/// work-item; see the module.
#[inline(always)]
pub fn min_once<T: WaveNum>(x: T, slot: u32, waves: u32) -> T {
    reduce_once(x, slot, waves, T::HIGHEST, wave::reduce_min, T::min)
}
