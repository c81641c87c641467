//! LDS (local data share): fast memory shared by a workgroup.
//!
//! Iron kernels use dynamic LDS: its size is given at launch (the host's launch configuration),
//! not recorded in the code object. A kernel documents how much it needs as a function of its
//! workgroup size.

/// The start of this workgroup's dynamic LDS, typed as `T` (aligned for `T`).
///
/// Every call in a kernel returns the same address; the launch must reserve at least as many bytes
/// as the kernel reads or writes through it.
#[inline(always)]
pub fn dynamic<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}
