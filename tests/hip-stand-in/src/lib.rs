//! A test fixture, not a HIP implementation: a shared library that exports the HIP runtime
//! functions Iron's host crate loads, backed by Iron's AMDGPU emulator.
//!
//! Pointing `IRON_HIP_LIBRARY` at this library lets the host's real HIP code path (library
//! loading, `hipInit`, device queries, argument packing through `extra`, launches, copies and
//! error statuses) run end to end on a machine without an AMD GPU. Nothing here talks to a GPU
//! or to ROCm; it implements only what Iron calls, as far as Iron's tests need it.
//!
//! What it models:
//! - one device (ordinal 0) emulating the gfx that `IRON_EMU_GFX` names (default `gfx950`; one
//!   of `gfx90a`, `gfx942`, `gfx950`). An unknown gfx makes the runtime report no device
//!   (`hipErrorNoDevice`) and say why on stderr;
//! - device memory in the emulator's address space: device pointers are emulator addresses,
//!   never host memory. A copy's host side is refused when it lies in the device address window,
//!   and its device side when it is not inside one live allocation (`hipErrorInvalidValue`);
//! - modules from a bare code object or a clang offload bundle (uncompressed, or compressed with
//!   a size in its header), the entry for the emulated gfx picked as HIP picks it;
//! - launches through `hipModuleLaunchKernel` with `extra` or `kernelParams`, checked as the HIP
//!   runtime checks them, the kernarg segment completed with the code object v5 hidden arguments
//!   by [`iron::launch::pack_kernarg`], run to completion before the call returns;
//! - streams and events as opaque handles; all work is synchronous, events record host time.
//!
//! Where it differs from a real runtime, by design: a kernel fault is returned by the launch
//! itself (`hipErrorIllegalAddress` for a memory fault, `hipErrorLaunchFailure` otherwise, the
//! emulator's message on stderr) and does not poison later calls; an `extra` buffer shorter
//! than the explicit arguments is refused instead of partly copied; `hipGetLastError` keeps
//! only failures (as ROCm 7 and CUDA do).
//!
//! Every exported function is `extern "C"`, checks its pointers and handles, and runs its body
//! under `catch_unwind` (a panic becomes `hipErrorUnknown`, never an unwind across the FFI).

mod device;
mod errors;
mod ffi;
mod image;
mod launch;
mod memory;
mod module;
mod runtime;
mod stream;

#[cfg(test)]
mod test_support;
