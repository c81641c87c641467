//! Prefix sums of flat u32 and f32 arrays in one pass over the data: a decoupled look-back scan.
//!
//! `scan_<t>(x, y, n, inclusive, state)` writes `y[i] = x[0] + ... + x[i]` (inclusive, when
//! `inclusive != 0`) or `x[0] + ... + x[i - 1]` (exclusive, `y[0] = 0`); u32 sums wrap. Each
//! workgroup scans one tile of [`ITEMS`] elements per work-item, then learns the sum of every
//! earlier tile from their published state instead of a second launch:
//! - the workgroup takes the next tile from the counter `state[0]`, so every tile it waits for
//!   belongs to a workgroup that started before it (and is resident, or done);
//! - it publishes its tile's own sum in `state[1 + tile]` (flag [`AGGREGATE`]), then walks back
//!   over earlier tiles, adding their sums, until it meets one that published its inclusive
//!   prefix (flag [`PREFIX`]); then it publishes its own inclusive prefix.
//!
//! Each state word packs the flag (high half) with the value's bits (low half), so one atomic
//! access carries both and relaxed agent-scope atomics suffice. f32 sums are grouped by tile, by
//! work-item and by wave, and how far a workgroup walks back depends on timing, so f32 results
//! can differ between runs by rounding; u32 results cannot.
//!
//! Launch: one workgroup per tile (`n.div_ceil(workgroup_size * ITEMS)` of them), a workgroup
//! size that is a multiple of the wave size, at most 256; dynamic LDS of
//! `4 * (2 + workgroup_size / WAVE)` bytes; `state` holds `1 + tiles` zeroed u64 words; and
//! `n + workgroup_size * ITEMS` stays below 2^32.

use iron_intrinsics::kernel;
use iron_intrinsics::{
    atomic::{self, Ordering, Scope},
    id::{workgroup_size_x, workitem_id_x},
    lds, sync,
    wave::WaveNum,
    workgroup,
};

/// Elements each work-item scans.
pub const ITEMS: u32 = 8;

/// A tile's state flag: its own sum is published.
pub const AGGREGATE: u64 = 1 << 32;

/// A tile's state flag: the sum of it and every earlier tile is published.
pub const PREFIX: u64 = 2 << 32;

/// Scans the tile the workgroup takes; see the module docs.
#[inline(always)]
fn scan<T: WaveNum>(x: *const T, y: *mut T, n: u32, inclusive: bool, state: *mut u64) {
    let shared = lds::dynamic::<u32>();
    let tid = workitem_id_x();
    let block = workgroup_size_x();
    if tid == 0 {
        // SAFETY: state[0] is the launch's tile counter; LDS word 0 holds the tile taken.
        unsafe {
            let tile = atomic::fetch_add(state, 1, Ordering::Relaxed, Scope::Agent);
            *shared = tile as u32;
        }
    }
    sync::workgroup_barrier();
    // SAFETY: word 0 was written before the barrier.
    let tile = unsafe { *shared };
    let base = tile * block * ITEMS + tid * ITEMS;

    let full = base + ITEMS <= n;
    // An exclusive scan is the inclusive scan of the input shifted one place to the right.
    let shift = u32::from(!inclusive);
    let mut running: [T; ITEMS as usize] = core::array::from_fn(|k| {
        let i = base + k as u32;
        // Past either end the work-item reads an element inside x and drops it, which keeps
        // the loads unconditional (and the array in registers).
        let j = core::cmp::min(i, n - 1).saturating_sub(shift);
        // SAFETY: n > 0 and j < n, inside x.
        let v = unsafe { *x.add(j as usize) };
        if i < n && i >= shift { v } else { T::ZERO }
    });
    let mut sum = T::ZERO;
    for slot in running.iter_mut() {
        sum = sum.add(*slot);
        *slot = sum;
    }

    // SAFETY: LDS words 2.. hold one T per wave, as the launch reserves.
    let wave_totals = unsafe { shared.add(2).cast::<T>() };
    // SAFETY: wave_totals holds one T per wave of the block.
    let (before, total) = unsafe { workgroup::exclusive_sum(sum, wave_totals, block) };

    if tid == 0 {
        // SAFETY: state holds 1 + tiles words and tile < tiles; LDS word 1 holds the prefix.
        unsafe {
            let prefix = look_back(state.add(1), tile, total);
            *shared.add(1) = prefix.to_bits();
        }
    }
    sync::workgroup_barrier();
    // SAFETY: word 1 was written before the barrier.
    let start = T::from_bits(unsafe { *shared.add(1) }).add(before);

    for (k, &through) in running.iter().enumerate() {
        let i = base + k as u32;
        if full || i < n {
            // SAFETY: i < n, the length of y.
            unsafe { *y.add(i as usize) = start.add(through) };
        }
    }
}

/// Publishes `total` as tile `tile`'s sum, finds the sum of every earlier tile, publishes the
/// inclusive prefix and returns the exclusive one. One work-item of the workgroup calls it.
///
/// # Safety
/// `tiles` holds at least `tile + 1` state words, zeroed before the launch.
#[inline(always)]
unsafe fn look_back<T: WaveNum>(tiles: *mut u64, tile: u32, total: T) -> T {
    let own = tiles.wrapping_add(tile as usize);
    let publish = |flag: u64, value: T| {
        // SAFETY: own is this tile's word (the caller's contract).
        unsafe {
            atomic::store(
                own,
                flag | u64::from(value.to_bits()),
                Ordering::Relaxed,
                Scope::Agent,
            )
        }
    };
    if tile == 0 {
        publish(PREFIX, total);
        return T::ZERO;
    }
    publish(AGGREGATE, total);
    let mut exclusive = T::ZERO;
    let mut earlier = tile;
    loop {
        earlier -= 1;
        let word = loop {
            // SAFETY: earlier < tile, inside the caller's words.
            let word = unsafe {
                atomic::load(
                    tiles.wrapping_add(earlier as usize),
                    Ordering::Relaxed,
                    Scope::Agent,
                )
            };
            if word >> 32 != 0 {
                break word;
            }
        };
        exclusive = T::from_bits(word as u32).add(exclusive);
        if word & PREFIX != 0 {
            break;
        }
    }
    publish(PREFIX, exclusive.add(total));
    exclusive
}

/// Prefix sums of `x[0..n]` into `y` (wrapping); see the module docs.
#[kernel(
    max_threads = 256,
    whole_waves,
    dynamic_lds = |threads, wave| 8 + 4 * threads / wave
)]
pub fn scan_u32(x: *const u32, y: *mut u32, n: u32, inclusive: u32, state: *mut u64) {
    scan(x, y, n, inclusive != 0, state);
}

/// Prefix sums of `x[0..n]` into `y`; see the module docs.
#[kernel(
    max_threads = 256,
    whole_waves,
    dynamic_lds = |threads, wave| 8 + 4 * threads / wave
)]
pub fn scan_f32(x: *const f32, y: *mut f32, n: u32, inclusive: u32, state: *mut u64) {
    scan(x, y, n, inclusive != 0, state);
}
