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
mod attention_scalar;
mod attention_tile;
pub mod attention_wmma;
pub mod cast;
pub mod conv;
pub mod conv1d;
pub mod conv2d;
pub mod conv_gemm;
mod decode;
mod decode_fast;
pub mod dequant;
pub mod dequant_half;
pub mod dtype;
pub mod elementwise;
pub mod elementwise_float;
pub mod flat;
pub mod gather;
pub mod gemm;
mod gemm_decode;
pub mod gemm_mx;
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
mod gemm_scaled;
mod gemm_stage;
mod gemm_tile;
pub mod norm;
pub mod qgemv;
pub mod reduce;
pub mod rope;
mod row;
mod row_exchange;
pub mod row_reduce;
pub mod scan;
pub mod softmax;
pub mod transpose;
mod wave_read;
mod wave_scales;
