//! The Rust code blocks of README.md and docs/*.md, compiled so that the documentation cannot
//! rot: the build script writes each block into a module. A block holding a `#[kernel]` is
//! compiled for the host (by `cargo test`) and for the GPU (`cargo xtask test` builds this crate
//! for gfx950 and gfx1100); the others, host code, for the host. Blocks that copy a file
//! (`file=<path>`) are checked against it instead (`tests/copies.rs`).
#![cfg_attr(target_arch = "amdgpu", no_std)]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

include!(concat!(env!("OUT_DIR"), "/blocks.rs"));
