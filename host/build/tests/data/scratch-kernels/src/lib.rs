//! One kernel that reads a local array at a run-time index, which keeps the array in scratch.
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use iron_intrinsics::id::global_id_x;
use iron_intrinsics::kernel;

/// `y[i] = x[16 i + (i + k) % 16]`, through a local array indexed at run time.
#[kernel(max_threads = 256)]
pub fn indexed(x: *const u32, y: *mut u32, k: u32) {
    let i = global_id_x() as usize;
    let mut a = [0u32; 16];
    for (j, slot) in a.iter_mut().enumerate() {
        // SAFETY: the test launches nothing; x would hold 16 elements per work-item.
        *slot = unsafe { *x.add(i * 16 + j) };
    }
    // SAFETY: as above; y would hold one element per work-item.
    unsafe { *y.add(i) = a[(k as usize + i) % 16] };
}
