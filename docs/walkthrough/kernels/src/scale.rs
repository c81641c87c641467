//! The first kernel: every work-item scales some elements of a vector.

#[cfg(target_arch = "amdgpu")]
use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;

/// `y[i] = a * x[i]` for `i < n`.
///
/// Launch: any grid and any workgroup size up to 256; each work-item starts at its global id
/// and steps by the size of the whole grid, so every element is visited once.
#[kernel(max_threads = 256)]
pub fn scale_f32(a: f32, x: *const f32, y: *mut f32, n: u32) {
    let mut i = global_id_x();
    while i < n {
        // SAFETY: i < n, and the host passes x and y of at least n elements.
        unsafe { *y.add(i as usize) = a * *x.add(i as usize) };
        i += grid_size_x();
    }
}
