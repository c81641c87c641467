//! Generic kernels and a required workgroup shape (`tests/tests/emu_generic_kernels.rs`):
//! - `scale` is one generic function exported as several instances (`#[kernel(instances)]`),
//!   each computing `y[i] = x[i] * S` in its type `T` for every `i < n` (integers wrap);
//! - `block_ids` declares `block = (8, 4, 2)`: every work-item writes, at its flat global
//!   index, `x | y << 8 | z << 16` of its local id plus `size_x << 24`, the workgroup size in x
//!   that the kernel reads (and the compiler folds to the declared 8).
use iron_intrinsics::half::f16;
use iron_intrinsics::id::{
    global_id_x, grid_size_x, local_linear_id, workgroup_id_x, workgroup_size_x, workitem_id_x,
    workitem_id_y, workitem_id_z,
};
use iron_intrinsics::kernel;

/// A type `scale` multiplies by a small constant.
pub trait Scale: Copy {
    /// `self * s`, wrapping for integers, rounded once for floats.
    fn times(self, s: u32) -> Self;
}

impl Scale for f32 {
    #[inline(always)]
    fn times(self, s: u32) -> f32 {
        self * s as f32
    }
}

impl Scale for u32 {
    #[inline(always)]
    fn times(self, s: u32) -> u32 {
        self.wrapping_mul(s)
    }
}

impl Scale for f16 {
    #[inline(always)]
    fn times(self, s: u32) -> f16 {
        self * f16::from_f32(s as f32)
    }
}

/// `y[i] = x[i] * S` for every `i < n`, in `T`.
#[kernel(
    max_threads = 256,
    instances = [scale2_f32<f32, 2>, scale3_f32<f32, 3>, scale3_u32<u32, 3>, scale5_f16<f16, 5>]
)]
pub fn scale<T: Scale, const S: u32>(x: *const T, y: *mut T, n: u32) {
    let mut i = global_id_x();
    while i < n {
        // SAFETY: i < n, the length of x and y.
        unsafe { *y.add(i as usize) = (*x.add(i as usize)).times(S) };
        i += grid_size_x();
    }
}

/// Every work-item's local id and the workgroup's size in x, at its flat global index.
#[kernel(block = (8, 4, 2))]
pub fn block_ids(out: *mut u32) {
    let packed = workitem_id_x() | workitem_id_y() << 8 | workitem_id_z() << 16;
    let flat = workgroup_id_x() * 64 + local_linear_id();
    // SAFETY: the launch gives `out` 64 elements per workgroup.
    unsafe { *out.add(flat as usize) = packed | workgroup_size_x() << 24 };
}
