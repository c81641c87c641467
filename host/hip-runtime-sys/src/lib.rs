//! FFI to the AMD HIP runtime (`libamdhip64`), loaded at run time.
//!
//! The thin layer the host crate builds on: the raw function table ([`HipRuntimeApi`], generated
//! by bindgen from HIP 5.2's C headers and committed, so building needs no ROCm), the C types it
//! uses, a loader that finds and opens the library ([`runtime`], [`load`]), the status type
//! [`HipError`], and the two `hipDeviceProp_t` layouts. Owning wrappers (devices, buffers,
//! modules, streams) belong to the host crate.
//!
//! ```no_run
//! use hip_runtime_sys::{HipError, runtime};
//!
//! let hip = runtime()?;
//! if hip.init_status().is_no_device() || hip.device_count()? == 0 {
//!     println!("no AMD GPU");
//! } else {
//!     let mut free = 0;
//!     let mut total = 0;
//!     // SAFETY: both pointers are valid for one write.
//!     unsafe { hip.api().hipMemGetInfo(&mut free, &mut total) }.ok()?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The runtime's ABI differs across ROCm 5, 6 and 7 in one place this crate must handle:
//! `hipDeviceProp_t` (see [`DeviceProperties`]). Everything else in the table is unchanged.
//! Regenerate `src/generated.rs` with `cargo xtask bindgen-hip`.
#![deny(missing_docs)]

mod device_props;
mod error;
#[allow(
    clippy::all,
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals
)]
mod generated;
mod loader;
mod runtime;

pub use device_props::{DeviceProperties, hipDeviceProp_tR0600, hipUUID};
pub use error::HipError;
pub use generated::*;
pub use loader::{
    LIBRARY_ENV, LoadAttempt, LoadError, SONAMES, library_candidates, library_candidates_from_env,
    load, runtime,
};
pub use runtime::{GetDevicePropertiesLegacy, GetDevicePropertiesR0600, HipRuntime};

/// `extra` key of `hipModuleLaunchKernel`: the next entry points to the packed argument buffer.
pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: *mut std::ffi::c_void =
    std::ptr::without_provenance_mut(1);
/// `extra` key of `hipModuleLaunchKernel`: the next entry points to the buffer's size (`usize`).
pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: *mut std::ffi::c_void = std::ptr::without_provenance_mut(2);
/// `extra` terminator of `hipModuleLaunchKernel` (3 in HIP, unlike CUDA's 0).
pub const HIP_LAUNCH_PARAM_END: *mut std::ffi::c_void = std::ptr::without_provenance_mut(3);
