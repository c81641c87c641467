//! Sum reduction of a flat f32 array, deterministic (no atomics).
//!
//! `sum_f32` reduces `x[0..n]` to one partial sum per [`elements_per_workgroup`] consecutive
//! elements (4096 in wave64, 8192 in wave32: 1024 per wave), written to
//! `partials[workgroup_id]`. A workgroup whose elements all lie in `x` loads them 16 bytes at a
//! time, [`chunks`] loads per work-item laid out as [`crate::flat`] describes, with no bounds
//! checks; the one holding the end of `x` adds its elements one at a time. Each work-item adds
//! its elements in four independent sums, the wave reduces with DPP, and the workgroup combines
//! its waves through LDS. Running it again over the partials, until one workgroup is left, gives
//! the total, which is what the host helper does. The grouping of the additions depends only on
//! `n` and the wave size, not on the device.
//!
//! Launch: workgroups of 256 work-items (the kernel is compiled for that block),
//! `n.div_ceil(elements_per_workgroup(wave))` of them (at least one; each writes its own
//! partial, +0 past the end); dynamic LDS of `4 * 256 / WAVE` bytes (32 bytes covers every
//! target). `x` 16-byte aligned (device allocations are).

use crate::flat::{BLOCK, Chunk, partial_span, span_is_whole};
use crate::row::lanes_fold;
use crate::row_exchange::sum_once;
use iron_intrinsics::id::{workgroup_id_x, workitem_id_x};
use iron_intrinsics::kernel;
use iron_intrinsics::target::WAVE;

/// 16-byte chunks (4 elements) each work-item of `sum_f32` loads in waves of `wave` lanes: 4 in
/// wave64, 8 in wave32, so that every wave sums 1024 elements.
pub const fn chunks(wave: u32) -> u32 {
    if wave == 32 { 8 } else { 4 }
}

/// Elements each workgroup of `sum_f32` sums into one partial in waves of `wave` lanes: 4096 in
/// wave64, 8192 in wave32.
pub const fn elements_per_workgroup(wave: u32) -> u32 {
    BLOCK * chunks(wave) * 4
}

/// Chunks each work-item of this build loads.
const CHUNKS: u32 = chunks(WAVE);

/// `partials[g]` = the sum of the `g`-th run of [`elements_per_workgroup`] elements of `x`
/// (those below `n`); see the module docs.
#[kernel(block = 256, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn sum_f32(x: *const f32, partials: *mut f32, n: u32) {
    let partial = if span_is_whole::<4>(n, CHUNKS) {
        // SAFETY: the workgroup's span lies wholly in x, which is 16-byte aligned.
        let chunk = |index| unsafe { Chunk::<4>::of_work_item(CHUNKS, index).load(x) };
        let loaded: [[f32; 4]; CHUNKS as usize] = core::array::from_fn(|k| chunk(k as u32));
        lanes_fold(pairwise_sum(loaded), |p, q| p + q)
    } else {
        // -0 is the exact identity of addition; the final `+ 0` below keeps an empty or
        // all-zero sum at +0.
        let mut sum = -0.0f32;
        // SAFETY: i < n, the length of x.
        partial_span::<4>(n, CHUNKS, |i| sum += unsafe { *x.add(i) });
        sum
    };
    let total = sum_once(partial, 0, BLOCK / WAVE) + 0.0;
    if workitem_id_x() == 0 {
        // SAFETY: partials holds one element per launched workgroup.
        unsafe { *partials.add(workgroup_id_x() as usize) = total };
    }
}

/// The element-wise sum of `N` chunks (`N` a power of two), added as a balanced tree: chunk `k`
/// and chunk `k + N / 2` first.
#[inline(always)]
fn pairwise_sum<const N: usize>(mut chunks: [[f32; 4]; N]) -> [f32; 4] {
    let mut width = N;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            chunks[k] = core::array::from_fn(|l| chunks[k][l] + chunks[k + width][l]);
        }
    }
    chunks[0]
}
