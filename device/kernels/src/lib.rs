//! The Iron kernel library: kernels written once in Rust for every supported gfx and both wave
//! sizes.
//!
//! On the GPU each `#[kernel]` function is an exported kernel of the code object; on the host the
//! same items are typed launch declarations (`KernelDecl`) that the host crate launches.
//! Every kernel documents its arguments, its launch geometry and the dynamic LDS it needs.
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

pub mod attention;
pub mod attention_mfma;
#[cfg(target_arch = "amdgpu")]
mod attention_scalar;
#[cfg(target_arch = "amdgpu")]
mod attention_tile;
pub mod attention_wmma;
pub mod cast;
pub mod conv;
pub mod conv1d;
pub mod conv2d;
pub mod conv_gemm;
#[cfg(target_arch = "amdgpu")]
mod decode;
#[cfg(target_arch = "amdgpu")]
mod decode_fast;
pub mod dequant;
pub mod dequant_half;
pub mod dtype;
pub mod elementwise;
pub mod elementwise_float;
pub mod gather;
pub mod gemm;
#[cfg(target_arch = "amdgpu")]
mod gemm_decode;
pub mod gemm_mx;
#[cfg(all(target_arch = "amdgpu", iron_gfx = "gfx950"))]
mod gemm_scaled;
#[cfg(target_arch = "amdgpu")]
mod gemm_stage;
#[cfg(target_arch = "amdgpu")]
mod gemm_tile;
pub mod norm;
pub mod qgemv;
pub mod reduce;
pub mod rope;
#[cfg(target_arch = "amdgpu")]
mod row;
pub mod row_reduce;
pub mod scan;
pub mod softmax;
pub mod transpose;
#[cfg(target_arch = "amdgpu")]
mod wave_scales;
