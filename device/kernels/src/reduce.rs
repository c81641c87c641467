//! Sum reduction of a flat f32 array, deterministic (no atomics).
//!
//! `sum_f32` reduces `x[0..n]` to one partial sum per workgroup, written to
//! `partials[workgroup_id]`: each work-item accumulates a grid-stride slice, the wave reduces with
//! DPP, the workgroup combines its waves through LDS. Running it again over the partials with a
//! single workgroup gives the total, which is what the host helper does.
//!
//! Launch: a workgroup size that is a multiple of the wave size, at most 256; dynamic LDS of
//! `4 * workgroup_size / WAVE` bytes (32 bytes covers every target).

use iron_intrinsics::kernel;
use iron_intrinsics::{
    id::{global_id_x, grid_size_x, workgroup_id_x, workgroup_size_x, workitem_id_x},
    lds, workgroup,
};

/// `partials[g] = sum of the elements of x that workgroup g visits`; see the module docs.
#[kernel(max_threads = 256, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn sum_f32(x: *const f32, partials: *mut f32, n: u32) {
    let stride = grid_size_x();
    let mut i = global_id_x();
    let mut acc = 0.0f32;
    while i < n {
        // SAFETY: i < n, the length of x.
        acc += unsafe { *x.add(i as usize) };
        i += stride;
    }
    // SAFETY: the kernel's dynamic LDS holds one f32 per wave (its declared `dynamic_lds`).
    let total = unsafe { workgroup::reduce_sum(acc, lds::dynamic::<f32>(), workgroup_size_x()) };
    if workitem_id_x() == 0 {
        // SAFETY: partials holds one element per launched workgroup.
        unsafe { *partials.add(workgroup_id_x() as usize) = total };
    }
}
