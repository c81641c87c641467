//! The device interface: one small, byte-oriented trait that every device implements.
//!
//! A backend knows nothing about element types, kernels' signatures or code object metadata:
//! it moves bytes between host and device addresses, loads code objects, and runs kernels whose
//! arguments the layer above has already checked and packed. The HIP runtime
//! ([`crate::hip::HipBackend`]) and the emulator implement it; the owning types
//! ([`Device`](super::Device), [`DeviceBuffer`](super::DeviceBuffer), ...) are built on it alone.

use std::time::Duration;

use super::error::BackendError;
use super::properties::DeviceProperties;

/// A device memory address, as kernels see it.
pub type DeviceAddress = u64;

/// A module (loaded code object) a backend handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModuleHandle(pub u64);

/// A stream (an in-order queue of device work) a backend handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamHandle(pub u64);

impl StreamHandle {
    /// The device's default stream, which always exists and is never created or destroyed.
    pub const DEFAULT: StreamHandle = StreamHandle(0);
}

/// An event (a point in a stream's work, with a timestamp) a backend handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventHandle(pub u64);

/// One kernel launch as a backend receives it: checked against the kernel's metadata and the
/// device's limits, arguments packed.
#[derive(Debug, Clone, Copy)]
pub struct KernelLaunch<'a> {
    /// The module holding the kernel.
    pub module: ModuleHandle,
    /// The kernel's name (its symbol without `.kd`).
    pub kernel: &'a str,
    /// Workgroups in x, y, z (each at least 1).
    pub grid: [u32; 3],
    /// Work-items per workgroup in x, y, z (each at least 1, product within the kernel's
    /// maximum).
    pub block: [u32; 3],
    /// Dynamic LDS bytes per workgroup, on top of the kernel's static LDS.
    pub dynamic_lds: u32,
    /// The whole kernarg segment (`.kernarg_segment_size` bytes): explicit arguments at their
    /// metadata offsets, then the hidden arguments filled as
    /// [`pack_kernarg`](crate::launch::pack_kernarg) does. A backend that dispatches
    /// the kernel itself (the emulator) copies it to memory aligned to `kernarg_align`.
    pub kernarg: &'a [u8],
    /// Alignment the kernarg segment needs in device memory (`.kernarg_segment_align`).
    pub kernarg_align: u32,
    /// Bytes at the start of `kernarg` that hold the explicit arguments. A runtime that fills
    /// hidden arguments itself (HIP) is given only this prefix.
    pub explicit_size: usize,
    /// The stream to queue the launch on.
    pub stream: StreamHandle,
}

/// A device backend: memory, code objects, kernel launches, streams and events, in bytes.
///
/// Implemented by the HIP runtime backend and by the emulator. The owning types rely on these
/// guarantees, which every implementation must give:
/// - allocations are aligned to at least 256 bytes, never start at address 0, and never
///   overlap while alive;
/// - the synchronous operations ([`write`](Backend::write), [`read`](Backend::read),
///   [`fill`](Backend::fill), [`free`](Backend::free)) are ordered after all work queued
///   before them on every stream of the device and before all work queued after them (HIP's
///   null stream semantics; `hipFree` waits for the device); `write` and `read` are done with
///   the host memory when they return;
/// - work on one stream runs in the order it was queued;
/// - [`synchronize_stream`](Backend::synchronize_stream) and
///   [`synchronize`](Backend::synchronize) return only when the work they wait for has finished
///   or been abandoned, also when they report an error.
///
/// Addresses and handles are plain numbers: a backend must answer an address range outside its
/// live allocations with [`BackendError::BadAddress`] and a handle it does not know with
/// [`BackendError::BadHandle`], never with undefined behaviour.
pub trait Backend: Send + Sync {
    /// What the device is and what it can do; asked once, when a [`Device`](super::Device) is
    /// made.
    fn properties(&self) -> Result<DeviceProperties, BackendError>;

    /// Allocates `bytes` (> 0) of device memory; contents are unspecified.
    fn alloc(&self, bytes: u64) -> Result<DeviceAddress, BackendError>;

    /// Frees an allocation made by [`alloc`](Backend::alloc), after the work that uses it.
    fn free(&self, address: DeviceAddress) -> Result<(), BackendError>;

    /// Copies `src` to device memory at `dst`.
    fn write(&self, dst: DeviceAddress, src: &[u8]) -> Result<(), BackendError>;

    /// Copies device memory at `src` into `dst`.
    fn read(&self, src: DeviceAddress, dst: &mut [u8]) -> Result<(), BackendError>;

    /// Sets `len` bytes of device memory at `dst` to `value`.
    fn fill(&self, dst: DeviceAddress, value: u8, len: u64) -> Result<(), BackendError>;

    /// Queues a copy of `src` to device memory at `dst` on `stream`.
    ///
    /// # Safety
    /// `src` must stay valid and unchanged until `stream` has been synchronized: the backend may
    /// read it at any time before then.
    unsafe fn write_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        src: &[u8],
    ) -> Result<(), BackendError>;

    /// Queues a copy of device memory at `src` into `dst` on `stream`.
    ///
    /// # Safety
    /// `dst` must stay valid, and must be neither read nor written by the host, until `stream`
    /// has been synchronized: the backend may write it at any time before then.
    unsafe fn read_async(
        &self,
        stream: StreamHandle,
        src: DeviceAddress,
        dst: &mut [u8],
    ) -> Result<(), BackendError>;

    /// Queues setting `len` bytes at `dst` to `value` on `stream`.
    fn fill_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        value: u8,
        len: u64,
    ) -> Result<(), BackendError>;

    /// Loads a code object (a bare ELF image already chosen for this device, not a bundle).
    fn load_module(&self, code_object: &[u8]) -> Result<ModuleHandle, BackendError>;

    /// Unloads a module, after the work that uses it.
    fn unload_module(&self, module: ModuleHandle) -> Result<(), BackendError>;

    /// Queues a kernel launch.
    ///
    /// # Safety
    /// The kernel runs with the packed arguments as they are: the caller guarantees that, given
    /// them and the geometry, it accesses only live allocations it is meant to access.
    unsafe fn launch(&self, launch: &KernelLaunch<'_>) -> Result<(), BackendError>;

    /// Creates a stream.
    fn create_stream(&self) -> Result<StreamHandle, BackendError>;

    /// Waits for all work queued on `stream`.
    fn synchronize_stream(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Destroys a stream (never [`StreamHandle::DEFAULT`]), after its work.
    fn destroy_stream(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Creates an event and records it on `stream`: it completes when the work queued before it
    /// does.
    fn record_event(&self, stream: StreamHandle) -> Result<EventHandle, BackendError>;

    /// Time between two recorded events, waiting for `end` to complete.
    fn event_elapsed(&self, start: EventHandle, end: EventHandle)
    -> Result<Duration, BackendError>;

    /// Destroys an event.
    fn destroy_event(&self, event: EventHandle) -> Result<(), BackendError>;

    /// Waits for all work on every stream of the device.
    fn synchronize(&self) -> Result<(), BackendError>;
}
