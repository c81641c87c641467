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

mod arch;
pub mod atomic;
pub mod buffer;
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub mod convert;
pub mod fmath;
pub mod half;
pub mod id;
pub mod launch;
pub mod lds;
mod llvm;
pub mod math;
pub mod matrix;
pub mod panic;
pub mod print;
pub mod sync;
pub mod target;
pub mod wave;
pub mod workgroup;

pub use iron_macros::kernel;
