//! Kernels with errors only their bodies and instances show: a type error in a plain kernel's
//! body, and a generic kernel's instance whose argument lacks the bound.
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use iron_intrinsics::id::global_id_x;
use iron_intrinsics::kernel;
use iron_intrinsics::wave;

/// Writes a string where a number belongs.
#[kernel(max_threads = 64)]
pub fn mistyped(out: *mut u64) {
    let value: u64 = "not a number";
    // SAFETY: the launch passes one u64 per work-item.
    unsafe { *out.add(global_id_x() as usize) = value };
}

/// Sums `x` over each wave: `T` must be a number waves can sum, which `u8` is not.
#[kernel(max_threads = 64, instances = [wave_sum_u32<u32>, wave_sum_u8<u8>])]
pub fn wave_sum<T: wave::WaveNum>(x: *const T, out: *mut T) {
    let i = global_id_x() as usize;
    // SAFETY: the launch passes one T per work-item.
    unsafe { *out.add(i) = wave::reduce_sum(*x.add(i)) };
}
