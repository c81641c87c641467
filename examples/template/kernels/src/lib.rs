//! The kernels of this project.
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use iron_intrinsics::kernel;
use iron_intrinsics::{
    id::{global_id_x, grid_size_x},
    math::mul_add,
};

/// `z[i] = alpha * x[i] + y[i]` for `i < n`, with one rounding (a fused multiply-add).
///
/// Launch: any grid, workgroups of up to 256 work-items; each work-item starts at its global id
/// and steps by the size of the grid, so every element is written once.
#[kernel(max_threads = 256)]
pub fn saxpy_f32(alpha: f32, x: *const f32, y: *const f32, z: *mut f32, n: u32) {
    let mut i = global_id_x();
    while i < n {
        let i_ = i as usize;
        // SAFETY: i < n, and the host passes x, y and z of at least n elements.
        unsafe { *z.add(i_) = mul_add(alpha, *x.add(i_), *y.add(i_)) };
        i += grid_size_x();
    }
}
