//! The HIP backend: the device interface over AMD's HIP runtime, loaded at run time.
//!
//! Three layers, as in `hip-runtime-sys` and above it: the raw function table (the sys crate),
//! `result` (each call once, its status as a `Result`), and [`HipBackend`] (one device:
//! addresses and handles checked against what it handed out, statuses mapped to
//! [`BackendError`]s). Code objects go to `hipModuleLoadData` already chosen for the device;
//! launches go through `hipModuleLaunchKernel` with the explicit arguments in the `extra`
//! buffer (the runtime fills the hidden arguments itself).
//!
//! Without an AMD GPU the runtime still loads (Debian's takes ~35 ms) and reports no device:
//! [`Device::hip`](crate::Device::hip) then fails with "no AMD GPU found: hipGetDeviceCount
//! returned ...". A memory fault inside a kernel is reported by the runtime, which by default
//! ends the process; the emulator reports it as an error instead.

mod backend;
mod live;
mod result;

pub use backend::HipBackend;

use hip_runtime_sys::{HipRuntime, LoadError};

use crate::device::BackendError;

/// The process-wide HIP runtime, or why there is none.
fn runtime() -> Result<&'static HipRuntime, BackendError> {
    hip_runtime_sys::runtime().map_err(|error| {
        let fix = match error {
            LoadError::NotFound { .. } => "",
            LoadError::MissingSymbols { .. } => {
                "; the runtime is too old or not HIP: install ROCm 5.2 or later, or set \
                 IRON_HIP_LIBRARY to its libamdhip64.so"
            }
        };
        BackendError::NoDevice(format!("no AMD GPU found: {error}{fix}"))
    })
}

/// The number of devices the runtime reports; an error naming the runtime's status when it
/// reports none.
fn count_devices(runtime: &HipRuntime) -> Result<usize, BackendError> {
    let (status, count) = result::get_device_count(runtime.api());
    if status.is_no_device() || (status.ok().is_ok() && count == 0) {
        return Err(BackendError::NoDevice(format!(
            "no AMD GPU found: hipGetDeviceCount returned {status} (hipInit returned {}; runtime {})",
            runtime.init_status(),
            runtime.path().display()
        )));
    }
    status.ok().map_err(|error| BackendError::Failed {
        operation: "hipGetDeviceCount",
        detail: error.to_string(),
    })?;
    Ok(count)
}

/// How many HIP devices there are: 0 when the runtime loads but finds no AMD GPU; an error when
/// no HIP runtime library can be loaded.
pub fn device_count() -> Result<usize, BackendError> {
    let runtime = runtime()?;
    match count_devices(runtime) {
        Err(BackendError::NoDevice(_)) => Ok(0),
        other => other,
    }
}
