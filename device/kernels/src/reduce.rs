//! Sum reduction of a flat f32 array, deterministic (no atomics).
//!
//! `sum_f32` reduces `x[0..n]` to one partial sum per [`ELEMENTS_PER_WORKGROUP`] consecutive
//! elements, written to `partials[workgroup_id]`. A workgroup whose elements all lie in `x` loads
//! them 16 bytes at a time, [`CHUNKS`] loads per work-item laid out as [`crate::flat`] describes,
//! with no bounds checks; the one holding the end of `x` adds its elements one at a time. Each
//! work-item adds its elements in four independent sums, the wave reduces with DPP, and the
//! workgroup combines its waves through LDS. Running it again over the partials, until one
//! workgroup is left, gives the total, which is what the host helper does. The grouping of the
//! additions depends only on `n`, not on the device.
//!
//! Launch: workgroups of 256 work-items (the kernel is compiled for that block),
//! `n.div_ceil(ELEMENTS_PER_WORKGROUP)` of them (at least one; each writes its own partial, +0
//! past the end); dynamic LDS of `4 * 256 / WAVE` bytes (32 bytes covers every target). `x`
//! 16-byte aligned (device allocations are).

use crate::flat::{BLOCK, Chunk, partial_span, span_is_whole};
use crate::row::lanes_fold;
use crate::row_exchange::sum_once_in;
use iron_intrinsics::id::{workgroup_id_x, workitem_id_x};
use iron_intrinsics::kernel;

/// 16-byte chunks (4 elements) each work-item of `sum_f32` loads.
pub const CHUNKS: u32 = 4;

/// Elements each workgroup of `sum_f32` sums into one partial.
pub const ELEMENTS_PER_WORKGROUP: u32 = BLOCK * CHUNKS * 4;

/// `partials[g] = the sum of x[g * ELEMENTS_PER_WORKGROUP..][..ELEMENTS_PER_WORKGROUP]` (those
/// below `n`); see the module docs.
#[kernel(block = 256, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn sum_f32(x: *const f32, partials: *mut f32, n: u32) {
    let partial = if span_is_whole::<4>(n, CHUNKS) {
        // SAFETY: the workgroup's span lies wholly in x, which is 16-byte aligned.
        let chunk = |index| unsafe { Chunk::<4>::of_work_item(CHUNKS, index).load(x) };
        const { assert!(CHUNKS == 4) };
        let (a, b, c, d) = (chunk(0), chunk(1), chunk(2), chunk(3));
        lanes_fold(
            core::array::from_fn::<f32, 4, _>(|l| (a[l] + b[l]) + (c[l] + d[l])),
            |p, q| p + q,
        )
    } else {
        // -0 is the exact identity of addition; the final `+ 0` below keeps an empty or
        // all-zero sum at +0.
        let mut sum = -0.0f32;
        // SAFETY: i < n, the length of x.
        partial_span::<4>(n, CHUNKS, |i| sum += unsafe { *x.add(i) });
        sum
    };
    let total = sum_once_in::<BLOCK, _>(partial, 0) + 0.0;
    if workitem_id_x() == 0 {
        // SAFETY: partials holds one element per launched workgroup.
        unsafe { *partials.add(workgroup_id_x() as usize) = total };
    }
}
