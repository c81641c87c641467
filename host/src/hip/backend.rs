//! [`HipBackend`]: the device interface over the HIP runtime, for one device.

use std::ffi::{CString, c_void};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use hip_runtime_sys::{
    HipError, HipRuntime, HipRuntimeApi, hipDeviceAttribute_t, hipEvent_t, hipFunction_t,
    hipMemcpyKind, hipModule_t, hipStream_t,
};

use super::live::{Live, LoadedModule};
use super::result;
use crate::code_object::TargetId;
use crate::device::{
    Backend, BackendError, DeviceAddress, DeviceProperties, EventHandle, KernelLaunch,
    ModuleHandle, StreamHandle,
};
use crate::device_panic::{DevicePanic, RECORD_BYTES, RECORD_SYMBOL};

/// One HIP device: every call first makes it current on the calling thread (HIP's current
/// device is per thread), and every address and handle is checked against what this backend
/// handed out before the runtime sees it.
pub struct HipBackend {
    runtime: &'static HipRuntime,
    device: i32,
    live: RwLock<Live>,
}

/// A runtime failure of `operation`, described by the runtime.
/// The launch-time status codes that mean the kernel itself faulted (as opposed to a refused
/// launch): illegal address, launch failure, device-side assert.
const KERNEL_FAULTS: [HipError; 3] = [
    HipError::ILLEGAL_ADDRESS,
    HipError::LAUNCH_FAILURE,
    HipError::ASSERT,
];

/// Maps a launch's failure: kernel faults become [`BackendError::KernelFault`].
fn launch_failed(kernel: &str) -> impl FnOnce(HipError) -> BackendError + '_ {
    move |error| {
        if KERNEL_FAULTS.contains(&error) {
            BackendError::KernelFault {
                kernel: kernel.to_string(),
                panic: None,
                detail: error.to_string(),
            }
        } else {
            failed("hipModuleLaunchKernel")(error)
        }
    }
}

fn failed(operation: &'static str) -> impl FnOnce(HipError) -> BackendError {
    move |error| BackendError::Failed {
        operation,
        detail: error.to_string(),
    }
}

/// Runtime handles and device pointers cross the trait as numbers; these convert back.
fn pointer(address: u64) -> *mut c_void {
    std::ptr::with_exposed_provenance_mut(address as usize)
}

fn number<T>(pointer: *mut T) -> u64 {
    pointer.expose_provenance() as u64
}

fn stream(handle: StreamHandle) -> hipStream_t {
    pointer(handle.0).cast()
}

fn event(handle: EventHandle) -> hipEvent_t {
    pointer(handle.0).cast()
}

fn module(handle: ModuleHandle) -> hipModule_t {
    pointer(handle.0).cast()
}

impl HipBackend {
    /// Opens HIP device `index`: loads the runtime (once per process), checks that the device
    /// exists.
    pub fn open(index: usize) -> Result<HipBackend, BackendError> {
        let runtime = super::runtime()?;
        let count = super::count_devices(runtime)?;
        if index >= count {
            return Err(BackendError::NoDevice(format!(
                "HIP device {index} does not exist: the runtime reports {count} device(s)"
            )));
        }
        let backend = HipBackend {
            runtime,
            device: i32::try_from(index).map_err(|_| {
                BackendError::NoDevice(format!("HIP device index {index} is out of range"))
            })?,
            live: RwLock::new(Live::default()),
        };
        backend.make_current()?;
        Ok(backend)
    }

    fn api(&self) -> &'static HipRuntimeApi {
        self.runtime.api()
    }

    fn make_current(&self) -> Result<(), BackendError> {
        self.runtime
            .set_device(self.device)
            .map_err(failed("hipSetDevice"))
    }

    /// The live record for reading, with this device current.
    fn read_live(&self) -> Result<RwLockReadGuard<'_, Live>, BackendError> {
        self.make_current()?;
        Ok(self.live.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The live record for changing, with this device current.
    fn write_live(&self) -> Result<RwLockWriteGuard<'_, Live>, BackendError> {
        self.make_current()?;
        Ok(self.live.write().unwrap_or_else(PoisonError::into_inner))
    }

    fn attribute(&self, attribute: hipDeviceAttribute_t) -> Result<u32, BackendError> {
        let value = self
            .runtime
            .device_attribute(attribute, self.device)
            .map_err(failed("hipDeviceGetAttribute"))?;
        u32::try_from(value).map_err(|_| BackendError::Failed {
            operation: "hipDeviceGetAttribute",
            detail: format!("attribute {} is negative ({value})", attribute.0),
        })
    }

    /// The `hipFunction_t` of `name` in a live module, looked up once.
    /// The panic record of `module` when a lane of a dispatch panicked (read with
    /// `hipModuleGetGlobal` and copies, then cleared); `None` when the module has none, nothing
    /// panicked or the runtime can no longer copy (a device that stopped after the trap).
    fn take_panic(&self, module: ModuleHandle) -> Option<DevicePanic> {
        let name = CString::new(RECORD_SYMBOL).ok()?;
        // SAFETY: the module handle came from this backend's live record.
        let (address, bytes) =
            unsafe { result::module_get_global(self.api(), self::module(module), &name) }.ok()?;
        if bytes != RECORD_BYTES {
            return None;
        }
        let read = |at: u64, len: usize| {
            let mut bytes = vec![0u8; len];
            // SAFETY: `at` is an address the module's code recorded (its own global or its
            // constant data); a wrong one is an error of the runtime's copy, not a host access.
            unsafe {
                result::memcpy(
                    self.api(),
                    bytes.as_mut_ptr().cast(),
                    pointer(at),
                    len,
                    hipMemcpyKind::hipMemcpyDeviceToHost,
                )
            }
            .ok()
            .map(|()| bytes)
        };
        let record: [u8; RECORD_BYTES] = read(address, RECORD_BYTES)?.try_into().ok()?;
        let panic = DevicePanic::from_record(&record, read)?;
        let zeros = [0u8; RECORD_BYTES];
        // SAFETY: the record is the module's global of RECORD_BYTES bytes.
        unsafe {
            result::memcpy(
                self.api(),
                pointer(address),
                zeros.as_ptr().cast(),
                RECORD_BYTES,
                hipMemcpyKind::hipMemcpyHostToDevice,
            )
        }
        .ok()?;
        Some(panic)
    }

    fn function(
        &self,
        live: &Live,
        handle: ModuleHandle,
        name: &str,
    ) -> Result<hipFunction_t, BackendError> {
        let loaded = live.module("launch", handle)?;
        let mut functions = loaded
            .functions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(&function) = functions.get(name) {
            return Ok(std::ptr::with_exposed_provenance_mut(function));
        }
        let c_name = CString::new(name).map_err(|_| BackendError::Failed {
            operation: "hipModuleGetFunction",
            detail: format!("kernel name {name:?} contains a NUL byte"),
        })?;
        // SAFETY: the module is live (checked above, and cannot be unloaded while `live` is
        // borrowed from the read guard).
        let function = unsafe { result::module_get_function(self.api(), module(handle), &c_name) }
            .map_err(failed("hipModuleGetFunction"))?;
        functions.insert(name.to_owned(), function.expose_provenance());
        Ok(function)
    }
}

impl Backend for HipBackend {
    fn properties(&self) -> Result<DeviceProperties, BackendError> {
        self.make_current()?;
        let props = self
            .runtime
            .device_properties(self.device)
            .map_err(failed("hipGetDeviceProperties"))?;
        let arch = props.gcn_arch_name();
        let target = TargetId::parse(&arch).map_err(|error| BackendError::Failed {
            operation: "hipGetDeviceProperties",
            detail: format!("gcnArchName {arch:?} is not a target id: {error}"),
        })?;
        Ok(DeviceProperties {
            name: props.name(),
            target,
            wave_size: self.attribute(hipDeviceAttribute_t::hipDeviceAttributeWarpSize)?,
            compute_units: self
                .attribute(hipDeviceAttribute_t::hipDeviceAttributeMultiprocessorCount)?,
            lds_per_workgroup: self
                .attribute(hipDeviceAttribute_t::hipDeviceAttributeMaxSharedMemoryPerBlock)?,
            max_threads_per_block: self
                .attribute(hipDeviceAttribute_t::hipDeviceAttributeMaxThreadsPerBlock)?,
            global_memory: props.total_global_mem() as u64,
        })
    }

    fn alloc(&self, bytes: u64) -> Result<DeviceAddress, BackendError> {
        let mut live = self.write_live()?;
        let size = usize::try_from(bytes).map_err(|_| BackendError::OutOfMemory { bytes })?;
        let address = result::malloc(self.api(), size).map_err(|error| {
            if error == HipError::OUT_OF_MEMORY {
                BackendError::OutOfMemory { bytes }
            } else {
                failed("hipMalloc")(error)
            }
        })?;
        let address = number(address);
        live.add_allocation(address, bytes);
        Ok(address)
    }

    fn free(&self, address: DeviceAddress) -> Result<(), BackendError> {
        self.write_live()?.remove_allocation(address)?;
        // SAFETY: the allocation came from hipMalloc and is no longer in the live record, so no
        // other call of this backend can use it.
        unsafe { result::free(self.api(), pointer(address)) }.map_err(failed("hipFree"))
    }

    fn write(&self, dst: DeviceAddress, src: &[u8]) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_range("write", dst, src.len() as u64)?;
        // SAFETY: `dst` lies inside a live allocation for `src.len()` bytes (checked, and it
        // cannot be freed while the read guard is held); `src` is a valid host slice.
        unsafe {
            result::memcpy(
                self.api(),
                pointer(dst),
                src.as_ptr().cast(),
                src.len(),
                hipMemcpyKind::hipMemcpyHostToDevice,
            )
        }
        .map_err(failed("hipMemcpy"))
    }

    fn read(&self, src: DeviceAddress, dst: &mut [u8]) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_range("read", src, dst.len() as u64)?;
        // SAFETY: as in `write`, with the roles swapped.
        unsafe {
            result::memcpy(
                self.api(),
                dst.as_mut_ptr().cast(),
                pointer(src),
                dst.len(),
                hipMemcpyKind::hipMemcpyDeviceToHost,
            )
        }
        .map_err(failed("hipMemcpy"))
    }

    fn fill(&self, dst: DeviceAddress, value: u8, len: u64) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_range("fill", dst, len)?;
        // SAFETY: `dst` lies inside a live allocation for `len` bytes.
        unsafe { result::memset(self.api(), pointer(dst), value, len as usize) }
            .map_err(failed("hipMemset"))
    }

    unsafe fn write_async(
        &self,
        on: StreamHandle,
        dst: DeviceAddress,
        src: &[u8],
    ) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_stream("write_async", on)?;
        live.check_range("write_async", dst, src.len() as u64)?;
        // SAFETY: the stream is live and `dst` inside a live allocation (checked); `src` stays
        // valid until the stream is synchronized, as the caller guarantees.
        unsafe {
            result::memcpy_async(
                self.api(),
                pointer(dst),
                src.as_ptr().cast(),
                src.len(),
                hipMemcpyKind::hipMemcpyHostToDevice,
                stream(on),
            )
        }
        .map_err(failed("hipMemcpyAsync"))
    }

    unsafe fn read_async(
        &self,
        on: StreamHandle,
        src: DeviceAddress,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_stream("read_async", on)?;
        live.check_range("read_async", src, dst.len() as u64)?;
        // SAFETY: as in `write_async`, with the roles swapped.
        unsafe {
            result::memcpy_async(
                self.api(),
                dst.as_mut_ptr().cast(),
                pointer(src),
                dst.len(),
                hipMemcpyKind::hipMemcpyDeviceToHost,
                stream(on),
            )
        }
        .map_err(failed("hipMemcpyAsync"))
    }

    fn fill_async(
        &self,
        on: StreamHandle,
        dst: DeviceAddress,
        value: u8,
        len: u64,
    ) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_stream("fill_async", on)?;
        live.check_range("fill_async", dst, len)?;
        // SAFETY: the stream is live and `dst` inside a live allocation for `len` bytes.
        unsafe { result::memset_async(self.api(), pointer(dst), value, len as usize, stream(on)) }
            .map_err(failed("hipMemsetAsync"))
    }

    fn load_module(&self, code_object: &[u8]) -> Result<ModuleHandle, BackendError> {
        let loaded = LoadedModule::new(code_object);
        let mut live = self.write_live()?;
        // SAFETY: the image is a complete code object kept alive in the live record until the
        // module is unloaded.
        let handle = unsafe { result::module_load_data(self.api(), loaded.image.as_ptr().cast()) }
            .map_err(failed("hipModuleLoadData"))?;
        let handle = ModuleHandle(number(handle));
        live.add_module(handle, loaded);
        Ok(handle)
    }

    fn unload_module(&self, handle: ModuleHandle) -> Result<(), BackendError> {
        let loaded = self.write_live()?.remove_module(handle)?;
        // SAFETY: the module was loaded by this backend and is no longer in the live record.
        let unloaded = unsafe { result::module_unload(self.api(), module(handle)) };
        drop(loaded);
        unloaded.map_err(failed("hipModuleUnload"))
    }

    unsafe fn launch(&self, launch: &KernelLaunch<'_>) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_stream("launch", launch.stream)?;
        let function = self.function(&live, launch.module, launch.kernel)?;
        let explicit = &launch.kernarg[..launch.explicit_size.min(launch.kernarg.len())];
        // SAFETY: the function belongs to a live module and the stream is live (checked, and
        // neither can go while the read guard is held); the caller guarantees the arguments.
        unsafe {
            result::module_launch_kernel(
                self.api(),
                function,
                launch.grid,
                launch.block,
                launch.dynamic_lds,
                stream(launch.stream),
                explicit,
            )
        }
        .map_err(launch_failed(launch.kernel))
        .map_err(|error| match error {
            BackendError::KernelFault { kernel, detail, .. } => BackendError::KernelFault {
                panic: self.take_panic(launch.module).map(Box::new),
                kernel,
                detail,
            },
            other => other,
        })
    }

    fn create_stream(&self) -> Result<StreamHandle, BackendError> {
        let mut live = self.write_live()?;
        let created = result::stream_create(self.api()).map_err(failed("hipStreamCreate"))?;
        let handle = StreamHandle(number(created));
        live.add_stream(handle);
        Ok(handle)
    }

    fn synchronize_stream(&self, on: StreamHandle) -> Result<(), BackendError> {
        let live = self.read_live()?;
        live.check_stream("synchronize_stream", on)?;
        // SAFETY: the stream is the null stream or live.
        unsafe { result::stream_synchronize(self.api(), stream(on)) }
            .map_err(failed("hipStreamSynchronize"))
    }

    fn destroy_stream(&self, handle: StreamHandle) -> Result<(), BackendError> {
        self.write_live()?.remove_stream(handle)?;
        // SAFETY: the stream was created here and is no longer in the live record.
        unsafe { result::stream_destroy(self.api(), stream(handle)) }
            .map_err(failed("hipStreamDestroy"))
    }

    fn record_event(&self, on: StreamHandle) -> Result<EventHandle, BackendError> {
        let mut live = self.write_live()?;
        live.check_stream("record_event", on)?;
        let created = result::event_create(self.api()).map_err(failed("hipEventCreate"))?;
        // SAFETY: the event was just created; the stream is live.
        if let Err(error) = unsafe { result::event_record(self.api(), created, stream(on)) } {
            // SAFETY: the event was created above and is not recorded anywhere.
            let _ = unsafe { result::event_destroy(self.api(), created) };
            return Err(failed("hipEventRecord")(error));
        }
        let handle = EventHandle(number(created));
        live.add_event(handle);
        Ok(handle)
    }

    fn event_elapsed(
        &self,
        start: EventHandle,
        end: EventHandle,
    ) -> Result<Duration, BackendError> {
        let live = self.read_live()?;
        live.check_event("event_elapsed", start)?;
        live.check_event("event_elapsed", end)?;
        // SAFETY: both events are live and were recorded when created.
        let milliseconds = unsafe {
            result::event_synchronize(self.api(), event(end))
                .map_err(failed("hipEventSynchronize"))?;
            result::event_elapsed_time(self.api(), event(start), event(end))
                .map_err(failed("hipEventElapsedTime"))?
        };
        Ok(Duration::from_secs_f64(
            f64::from(milliseconds).max(0.0) / 1000.0,
        ))
    }

    fn destroy_event(&self, handle: EventHandle) -> Result<(), BackendError> {
        self.write_live()?.remove_event(handle)?;
        // SAFETY: the event was created here and is no longer in the live record.
        unsafe { result::event_destroy(self.api(), event(handle)) }
            .map_err(failed("hipEventDestroy"))
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.make_current()?;
        result::device_synchronize(self.api()).map_err(failed("hipDeviceSynchronize"))
    }
}
