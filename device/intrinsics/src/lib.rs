//! The device-side vocabulary of Iron kernels.
//!
//! Kernels speak of work-items, lanes, waves and workgroups; this crate is the only place that names
//! LLVM intrinsics or `core::arch::amdgpu`. Everything that depends on the target (its gfx, its
//! family, its wave size) comes from the cfgs `cargo xtask build` sets per build (`iron_gfx`,
//! `iron_family`, `iron_wave`, `iron_matrix`): see [`target`].
//!
//! On the host the crate builds to the launch declarations ([`launch`]) and the 16-bit float
//! types ([`half`], there the `half` crate's), so that host code can name kernels by value and
//! pass them the same element types; the GPU-only modules are compiled for
//! `target_arch = "amdgpu"` alone.
//!
//! Convergence: functions documented "wave-wide" must be reached by every lane of the wave
//! (uniform control flow, all lanes active); "workgroup-wide" ones by every work-item of the
//! workgroup.
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(
    target_arch = "amdgpu",
    feature(
        stdarch_amdgpu,
        core_intrinsics,
        link_llvm_intrinsics,
        gpu_launch_sized_workgroup_mem,
        gpu_intrinsics,
        core_float_math,
        const_heap
    )
)]
#![cfg_attr(
    target_arch = "amdgpu",
    feature(repr_simd, simd_ffi, abi_unadjusted, f16, ffi_const)
)]
#![cfg_attr(target_arch = "amdgpu", allow(internal_features))]

#[cfg(test)]
extern crate std;

pub mod half;
pub mod launch;
pub mod panic;
pub mod print;
pub mod target;

#[cfg(target_arch = "amdgpu")]
pub mod atomic;
#[cfg(all(target_arch = "amdgpu", iron_gfx = "gfx950"))]
pub mod convert;
#[cfg(target_arch = "amdgpu")]
pub mod fmath;
#[cfg(target_arch = "amdgpu")]
pub mod id;
#[cfg(target_arch = "amdgpu")]
pub mod lds;
#[cfg(target_arch = "amdgpu")]
mod llvm;
#[cfg(target_arch = "amdgpu")]
pub mod math;
#[cfg(target_arch = "amdgpu")]
pub mod matrix;
#[cfg(target_arch = "amdgpu")]
pub mod sync;
#[cfg(target_arch = "amdgpu")]
pub mod wave;
#[cfg(target_arch = "amdgpu")]
pub mod workgroup;

pub use iron_macros::kernel;
