//! `HipRuntime`: a loaded HIP runtime library, its function table and the few queries that need
//! no owned resources.

use crate::device_props::{DeviceProperties, hipDeviceProp_tR0600};
use crate::error::HipError;
use crate::generated::{HipRuntimeApi, hipDeviceAttribute_t, hipDeviceProp_t};
use std::ffi::c_int;
use std::path::{Path, PathBuf};

/// Signature of `hipGetDevicePropertiesR0600` (HIP 6.0 and later).
pub type GetDevicePropertiesR0600 =
    unsafe extern "C" fn(prop: *mut hipDeviceProp_tR0600, device: c_int) -> HipError;

/// Signature of the unversioned `hipGetDeviceProperties`, which fills the pre-6.0 layout.
pub type GetDevicePropertiesLegacy =
    unsafe extern "C" fn(prop: *mut hipDeviceProp_t, device: c_int) -> HipError;

/// A HIP runtime library, loaded once and never unloaded, with `hipInit(0)` already called.
pub struct HipRuntime {
    api: HipRuntimeApi,
    get_device_properties_r0600: Option<GetDevicePropertiesR0600>,
    get_device_properties_legacy: Option<GetDevicePropertiesLegacy>,
    path: PathBuf,
    init_status: HipError,
}

impl HipRuntime {
    /// Assembles a runtime from a complete table and its optional symbols.
    pub(crate) fn new(
        api: HipRuntimeApi,
        get_device_properties_r0600: Option<GetDevicePropertiesR0600>,
        get_device_properties_legacy: Option<GetDevicePropertiesLegacy>,
        path: PathBuf,
        init_status: HipError,
    ) -> HipRuntime {
        HipRuntime {
            api,
            get_device_properties_r0600,
            get_device_properties_legacy,
            path,
            init_status,
        }
    }

    /// The raw function table: every required HIP function, called as `api().hipMalloc(..)`.
    pub fn api(&self) -> &HipRuntimeApi {
        &self.api
    }

    /// The library file or name the runtime was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What `hipInit(0)` returned when the library was loaded. On a machine without an AMD GPU
    /// it is a code for which [`HipError::is_no_device`] holds.
    pub fn init_status(&self) -> HipError {
        self.init_status
    }

    /// `hipGetDevicePropertiesR0600`, present in HIP 6.0 and later.
    pub fn get_device_properties_r0600(&self) -> Option<GetDevicePropertiesR0600> {
        self.get_device_properties_r0600
    }

    /// The unversioned `hipGetDeviceProperties` (pre-6.0 layout), when the library exports it.
    pub fn get_device_properties_legacy(&self) -> Option<GetDevicePropertiesLegacy> {
        self.get_device_properties_legacy
    }

    /// The runtime's own version (`hipRuntimeGetVersion`), e.g. 50221153 for HIP 5.2.21153.
    pub fn runtime_version(&self) -> Result<i32, HipError> {
        let mut version: c_int = 0;
        // SAFETY: the function writes one int through the pointer, which is valid.
        unsafe { self.api.hipRuntimeGetVersion(&mut version) }.ok()?;
        Ok(version)
    }

    /// The driver's version (`hipDriverGetVersion`).
    pub fn driver_version(&self) -> Result<i32, HipError> {
        let mut version: c_int = 0;
        // SAFETY: the function writes one int through the pointer, which is valid.
        unsafe { self.api.hipDriverGetVersion(&mut version) }.ok()?;
        Ok(version)
    }

    /// The number of devices (`hipGetDeviceCount`); 0 when the runtime reports that there is
    /// none (see [`HipError::is_no_device`]).
    pub fn device_count(&self) -> Result<usize, HipError> {
        let mut count: c_int = 0;
        // SAFETY: the function writes one int through the pointer, which is valid.
        let status = unsafe { self.api.hipGetDeviceCount(&mut count) };
        if status.is_no_device() {
            return Ok(0);
        }
        status.ok()?;
        usize::try_from(count).map_err(|_| HipError::INVALID_VALUE)
    }

    /// One integer attribute of a device (`hipDeviceGetAttribute`).
    pub fn device_attribute(
        &self,
        attribute: hipDeviceAttribute_t,
        device: i32,
    ) -> Result<i32, HipError> {
        let mut value: c_int = 0;
        // SAFETY: the function writes one int through the pointer, which is valid; it checks
        // the attribute and device itself.
        unsafe {
            self.api
                .hipDeviceGetAttribute(&mut value, attribute, device)
        }
        .ok()?;
        Ok(value)
    }

    /// A device's properties, through `hipGetDevicePropertiesR0600` when the library has it,
    /// else the unversioned `hipGetDeviceProperties`. [`HipError::NOT_SUPPORTED`] when it has
    /// neither.
    pub fn device_properties(&self, device: i32) -> Result<DeviceProperties, HipError> {
        if let Some(get) = self.get_device_properties_r0600 {
            let mut props = Box::<hipDeviceProp_tR0600>::default();
            // SAFETY: `props` is a writable struct of exactly the layout this symbol fills.
            unsafe { get(&mut *props, device) }.ok()?;
            return Ok(DeviceProperties::R0600(props));
        }
        if let Some(get) = self.get_device_properties_legacy {
            let mut props = Box::<hipDeviceProp_t>::default();
            // SAFETY: without the R0600 symbol the runtime predates HIP 6.0, whose unversioned
            // function fills this layout; `props` is writable and of that layout.
            unsafe { get(&mut *props, device) }.ok()?;
            return Ok(DeviceProperties::Legacy(props));
        }
        Err(HipError::NOT_SUPPORTED)
    }

    /// Makes `device` current for the calling thread (`hipSetDevice`).
    pub fn set_device(&self, device: i32) -> Result<(), HipError> {
        // SAFETY: takes an int; the runtime checks it.
        unsafe { self.api.hipSetDevice(device) }.ok()
    }
}

impl std::fmt::Debug for HipRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HipRuntime")
            .field("path", &self.path)
            .field("init_status", &self.init_status)
            .field("r0600", &self.get_device_properties_r0600.is_some())
            .finish_non_exhaustive()
    }
}
