//! The kernels of the walkthrough (`docs/walkthrough.md`): a first kernel and a row
//! normalization with wave reductions and static LDS, and a kernel that prints.
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

pub mod normalize_rows;
pub mod report;
pub mod scale;
