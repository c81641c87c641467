//! Operations across a whole workgroup, built from wave operations and a little LDS.

use crate::id::{lane_id, wave_id};
use crate::sync::workgroup_barrier;
use crate::target::WAVE;
use crate::wave::{self, WaveNum};

/// Combines `x` over the workgroup with `wave_op` (a wave reduction) and returns the result in
/// every work-item.
///
/// Workgroup-wide; the workgroup size must be a multiple of [`WAVE`].
///
/// # Safety
/// `scratch` is LDS the caller lends: at least `workgroup_size / WAVE` elements of `T`, not used
/// by anything else until this returns.
#[inline(always)]
unsafe fn reduce<T: WaveNum>(
    x: T,
    scratch: *mut T,
    workgroup_size: u32,
    identity: T,
    wave_op: fn(T) -> T,
) -> T {
    let partial = wave_op(x);
    let waves = workgroup_size / WAVE;
    if lane_id() == 0 {
        // SAFETY: the caller lends `workgroup_size / WAVE` elements and wave_id() is below that.
        unsafe { *scratch.add(wave_id() as usize) = partial };
    }
    workgroup_barrier();
    let lane = lane_id();
    let mine = if lane < waves {
        // SAFETY: lane < waves, inside the lent scratch.
        unsafe { *scratch.add(lane as usize) }
    } else {
        identity
    };
    let total = wave_op(mine);
    workgroup_barrier();
    total
}

/// The sum of `x` over the workgroup, in every work-item; see [`reduce_max`] for the contract.
///
/// # Safety
/// As for [`reduce_max`].
#[inline(always)]
pub unsafe fn reduce_sum<T: WaveNum>(x: T, scratch: *mut T, workgroup_size: u32) -> T {
    // SAFETY: the caller's contract.
    unsafe { reduce(x, scratch, workgroup_size, T::ZERO, wave::reduce_sum) }
}

/// The maximum of `x` over the workgroup, in every work-item.
///
/// Workgroup-wide; `workgroup_size` (the launched size) must be a multiple of [`WAVE`] and at
/// most `WAVE * WAVE`.
///
/// # Safety
/// `scratch` is LDS the caller lends: at least `workgroup_size / WAVE` elements, untouched by
/// others until this returns.
#[inline(always)]
pub unsafe fn reduce_max<T: WaveNum>(x: T, scratch: *mut T, workgroup_size: u32) -> T {
    // SAFETY: the caller's contract.
    unsafe { reduce(x, scratch, workgroup_size, T::LOWEST, wave::reduce_max) }
}

/// The minimum of `x` over the workgroup, in every work-item; see [`reduce_max`] for the contract.
///
/// # Safety
/// As for [`reduce_max`].
#[inline(always)]
pub unsafe fn reduce_min<T: WaveNum>(x: T, scratch: *mut T, workgroup_size: u32) -> T {
    // SAFETY: the caller's contract.
    unsafe { reduce(x, scratch, workgroup_size, T::HIGHEST, wave::reduce_min) }
}

/// The exclusive prefix sum of `x` over the workgroup's work-items in linear order, and the
/// workgroup's total: work-item `i` gets `(x_0 + ... + x_{i-1}, x_0 + ... + x_{n-1})`.
///
/// For floats the sums are grouped by wave (each wave's prefix, plus the sum of earlier waves'
/// totals), so they can differ from a sequential sum by rounding. Workgroup-wide;
/// `workgroup_size` must be a multiple of [`WAVE`] and at most `WAVE * WAVE`.
///
/// # Safety
/// `scratch` is LDS the caller lends, as for [`reduce_max`]: at least `workgroup_size / WAVE`
/// elements.
#[inline(always)]
pub unsafe fn exclusive_sum<T: WaveNum>(x: T, scratch: *mut T, workgroup_size: u32) -> (T, T) {
    let inclusive = wave::scan_sum(x);
    let lane = lane_id();
    let wave = wave_id();
    let previous = wave::shuffle(inclusive, lane.wrapping_sub(1));
    let within = if lane == 0 { T::ZERO } else { previous };
    if lane == WAVE - 1 {
        // SAFETY: the caller lends `workgroup_size / WAVE` elements and wave_id() is below that.
        unsafe { *scratch.add(wave as usize) = inclusive };
    }
    workgroup_barrier();
    let waves = workgroup_size / WAVE;
    let mine = if lane < waves {
        // SAFETY: lane < waves, inside the lent scratch.
        unsafe { *scratch.add(lane as usize) }
    } else {
        T::ZERO
    };
    let wave_totals = wave::scan_sum(mine);
    let total = wave::read_lane(wave_totals, waves - 1);
    let before = wave::shuffle(wave_totals, wave.wrapping_sub(1));
    let earlier = if wave == 0 { T::ZERO } else { before };
    workgroup_barrier();
    (earlier.add(within), total)
}
