//! The hardware operations the vocabulary is built on, under one set of names for the GPU and
//! the host.
//!
//! On the GPU these are `core::arch::amdgpu`, the GPU intrinsics of `core::intrinsics`,
//! `core::f32::math`, and the LLVM intrinsics and iron-build markers that [`gpu_extern!`]
//! declares. On the host, where kernel bodies are type-checked (so that `cargo check` and the
//! IDE see them) but never run, each is a function with the same signature that panics: the
//! vocabulary compiles on a stable host toolchain, and a kernel body called on the host by
//! mistake stops at its first hardware operation instead of computing something wrong.

#[cfg(target_arch = "amdgpu")]
pub(crate) use core::arch::amdgpu::*;
#[cfg(target_arch = "amdgpu")]
pub(crate) use core::intrinsics::gpu::{amdgpu_dispatch_ptr, gpu_launch_sized_workgroup_mem};

/// f32 operations core offers to `no_std` code only on nightly (`core::f32::math`).
#[cfg(target_arch = "amdgpu")]
pub(crate) mod float {
    pub(crate) use core::f32::math::{floor, mul_add, round_ties_even, sqrt};
}

/// Stops a kernel body that runs on the host: `operation` exists on AMD GPUs only.
#[cfg(not(target_arch = "amdgpu"))]
#[cold]
#[track_caller]
pub(crate) fn device_only(operation: &str) -> ! {
    panic!(
        "`{operation}` runs on AMD GPUs only: on the host a kernel body is type-checked, never run \
         (launch the kernel on a device)"
    )
}

/// Declares functions by the signatures `$sig` that panic on the host (see [`device_only`]),
/// named after the operations they stand for.
#[cfg(not(target_arch = "amdgpu"))]
macro_rules! host_stand_ins {
    ($(
        $(#[$attr:meta])*
        fn $name:ident $(<$(const $c:ident: $ct:ty),*>)? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
    )*) => {$(
        $(#[$attr])*
        #[allow(unused_variables)]
        pub(crate) fn $name $(<$(const $c: $ct),*>)? ($($arg: $ty),*) $(-> $ret)? {
            device_only(concat!("core::arch::amdgpu::", stringify!($name)))
        }
    )*};
}

#[cfg(not(target_arch = "amdgpu"))]
host_stand_ins! {
    fn workitem_id_x() -> u32;
    fn workitem_id_y() -> u32;
    fn workitem_id_z() -> u32;
    fn workgroup_id_x() -> u32;
    fn workgroup_id_y() -> u32;
    fn workgroup_id_z() -> u32;
    fn mbcnt_lo(value: u32, init: u32) -> u32;
    fn mbcnt_hi(value: u32, init: u32) -> u32;
    fn s_barrier();
    fn wave_barrier();
    fn ballot(b: bool) -> u64;
    fn readfirstlane_u32(value: u32) -> u32;
    fn amdgpu_dispatch_ptr() -> *const ();
}

/// The stand-in of `core::intrinsics::gpu::gpu_launch_sized_workgroup_mem`.
#[cfg(not(target_arch = "amdgpu"))]
pub(crate) fn gpu_launch_sized_workgroup_mem<T>() -> *mut T {
    device_only("core::intrinsics::gpu::gpu_launch_sized_workgroup_mem")
}

/// The stand-ins of `core::arch::amdgpu`'s unsafe operations.
#[cfg(not(target_arch = "amdgpu"))]
macro_rules! unsafe_host_stand_ins {
    ($(
        fn $name:ident $(<$(const $c:ident: $ct:ty),*>)? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
    )*) => {$(
        /// # Safety
        /// As the GPU operation's.
        #[allow(unused_variables)]
        pub(crate) unsafe fn $name $(<$(const $c: $ct),*>)? ($($arg: $ty),*) $(-> $ret)? {
            device_only(concat!("core::arch::amdgpu::", stringify!($name)))
        }
    )*};
}

#[cfg(not(target_arch = "amdgpu"))]
unsafe_host_stand_ins! {
    fn sched_barrier<const MASK: u32>();
    fn readlane_u32(value: u32, lane: u32) -> u32;
    fn ds_bpermute(lane: u32, value: u32) -> u32;
    fn update_dpp<
        const DPP_CTRL: u32,
        const ROW_MASK: u32,
        const BANK_MASK: u32,
        const BOUND_CONTROL: bool
    >(old: u32, src: u32) -> u32;
}

/// f32 operations core offers to `no_std` code only on nightly (`core::f32::math`).
#[cfg(not(target_arch = "amdgpu"))]
pub(crate) mod float {
    use super::device_only;

    host_stand_ins! {
        fn floor(x: f32) -> f32;
        fn mul_add(a: f32, b: f32, c: f32) -> f32;
        fn round_ties_even(x: f32) -> f32;
        fn sqrt(x: f32) -> f32;
    }
}

/// Declares functions the GPU build links to LLVM intrinsics or to markers that iron-build's
/// post-LTO step replaces: an `unsafe extern $abi` block on the GPU; on the host, unsafe
/// functions with the same signatures that panic (see [`device_only`]).
macro_rules! gpu_extern {
    ($abi:literal {$(
        $(#[doc = $doc:expr])*
        $(#[cfg($cfg:meta)])*
        $(#[gpu($gpu_attr:meta)])*
        #[link_name = $link:expr]
        $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;
    )*}) => {
        #[cfg(target_arch = "amdgpu")]
        // The lint cannot see that LLVM intrinsics take vectors by value: `repr(simd)` types are
        // what they are declared with.
        #[allow(improper_ctypes)]
        unsafe extern $abi {$(
            $(#[doc = $doc])*
            $(#[cfg($cfg)])*
            $(#[$gpu_attr])*
            #[link_name = $link]
            $vis fn $name($($arg: $ty),*) $(-> $ret)?;
        )*}
        $(
            $(#[doc = $doc])*
            ///
            /// # Safety
            /// As the GPU operation's.
            $(#[cfg($cfg)])*
            #[cfg(not(target_arch = "amdgpu"))]
            #[allow(unused_variables, clippy::too_many_arguments)]
            $vis unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                $crate::arch::device_only($link)
            }
        )*
    };
}
pub(crate) use gpu_extern;
