//! Device-vocabulary probes: small kernels that run one feature of `iron_intrinsics` on every
//! element of their inputs, one module per feature. A test fixture, not a library:
//! `cargo xtask test` builds it for the emulated targets and the `tests/tests/emu_*.rs` file
//! named in each module runs its kernels on the emulator against a host oracle.
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

pub mod generic;
pub mod half;
pub mod lds;
pub mod panic;
pub mod print;
