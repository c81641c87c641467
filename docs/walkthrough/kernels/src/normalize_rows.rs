//! A row reduction: each workgroup scales one row to unit length, summing the squares of the
//! row with wave reductions and a small static LDS array.

use iron_intrinsics::kernel;
use iron_intrinsics::{
    fmath::sqrt,
    id::{lane_id, wave_id, workgroup_id_x, workgroup_size_x, workitem_id_x},
    lds,
    math::mul_add,
    sync::workgroup_barrier,
    target::WAVE,
    wave,
};

/// `y[r][c] = x[r][c] / sqrt(eps + sum_j x[r][j]^2)` for `x` and `y` row-major
/// `[rows, cols]`.
///
/// Launch: one workgroup per row (`grid = rows`) of whole waves (`whole_waves`: the launch
/// refuses any other), at most 1024 work-items. No dynamic LDS: the waves' partial sums are a
/// static array, sized for the largest workgroup.
#[kernel(max_threads = 1024, whole_waves)]
pub fn normalize_rows_f32(x: *const f32, y: *mut f32, cols: u32, eps: f32) {
    let row = workgroup_id_x() as usize * cols as usize;
    let threads = workgroup_size_x();

    // 1. Each work-item sums the squares of every `threads`-th element of the row.
    let mut sum = 0.0f32;
    let mut c = workitem_id_x();
    while c < cols {
        // SAFETY: c < cols: inside this workgroup's row of x.
        let v = unsafe { *x.add(row + c as usize) };
        sum = mul_add(v, v, sum);
        c += threads;
    }

    // 2. The wave adds up its lanes' sums: every lane gets the total of its 32 or 64 lanes.
    let wave_sum = wave::reduce_sum(sum);

    // 3. The waves meet in LDS: lane 0 of each wave stores its total, and after the barrier
    //    every work-item adds the totals up, in the same order, to the same result.
    let partials = lds::array!([f32; 1024 / WAVE as usize]);
    if lane_id() == 0 {
        // SAFETY: only this wave's lane 0 writes slot wave_id() (< 1024 / WAVE).
        unsafe { partials.write(wave_id() as usize, wave_sum) };
    }
    workgroup_barrier();
    let mut total = 0.0f32;
    for w in 0..threads / WAVE {
        // SAFETY: w < threads / WAVE, a slot written before the barrier.
        total += unsafe { partials.read(w as usize) };
    }

    // 4. Every work-item scales the elements it read.
    let scale = 1.0 / sqrt(eps + total);
    let mut c = workitem_id_x();
    while c < cols {
        // SAFETY: c < cols: inside this workgroup's row of x and y.
        unsafe { *y.add(row + c as usize) = *x.add(row + c as usize) * scale };
        c += threads;
    }
}
