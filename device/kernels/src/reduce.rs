//! Sum reduction of a flat f32 array, deterministic (no atomics).
//!
//! `sum_f32` reduces `x[0..n]` to one partial sum per workgroup, written to
//! `partials[workgroup_id]`: each work-item accumulates a grid-stride slice of 16-byte chunks in
//! four independent sums (the first `n % 4` work-items of the grid also take one of the last
//! `n % 4` elements), the wave reduces with DPP, the workgroup combines its waves through LDS.
//! Running it again over the partials with a single workgroup gives the total, which is what the
//! host helper does. The grouping of the additions depends only on `n` and the launch geometry.
//!
//! Launch: a workgroup size that is a multiple of the wave size, at most 256; dynamic LDS of
//! `4 * workgroup_size / WAVE` bytes (32 bytes covers every target). `x` 16-byte aligned (device
//! allocations are).

use crate::dtype::load;
use crate::row::lanes_fold;
use crate::row_exchange::sum_once;
use iron_intrinsics::id::{global_id_x, grid_size_x, workgroup_id_x, workitem_id_x};
use iron_intrinsics::kernel;

/// `partials[g] = sum of the elements of x that workgroup g visits`; see the module docs.
#[kernel(max_threads = 256, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn sum_f32(x: *const f32, partials: *mut f32, n: u32) {
    let stride = grid_size_x();
    let chunks = n / 4;
    // -0 is the exact identity of addition: the first chunk's additions fold away; the final
    // `+ 0` keeps an empty or all-zero sum at +0.
    let mut lanes = [-0.0f32; 4];
    let mut c = global_id_x();
    while c < chunks {
        // SAFETY: chunk c < n / 4 lies in x, which is 16-byte aligned.
        let v = unsafe { load::<f32, 4>(x, c as usize) };
        for l in 0..4 {
            lanes[l] += v[l];
        }
        c += stride;
    }
    let tail = chunks * 4 + global_id_x();
    if tail < n {
        // SAFETY: tail < n, the length of x.
        lanes[0] += unsafe { *x.add(tail as usize) };
    }
    let total = sum_once(lanes_fold(lanes, |a, b| a + b), 0) + 0.0;
    if workitem_id_x() == 0 {
        // SAFETY: partials holds one element per launched workgroup.
        unsafe { *partials.add(workgroup_id_x() as usize) = total };
    }
}
