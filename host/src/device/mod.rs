//! Devices and what lives on them: buffers, modules, streams, events.
//!
//! Two layers. [`Backend`] is the device interface, small and byte-oriented: addresses, byte
//! copies, code object bytes, packed kernarg segments. The HIP runtime and the emulator
//! implement it. On top, owning types carry the invariants: a [`Device`] (a cheap clone of a
//! shared backend and its [`DeviceProperties`]), a [`DeviceBuffer<T>`] freed on drop and
//! copied with length checks, a [`Module`] that picks its code object for the device and keeps
//! the parsed metadata, [`Kernel`]s and [`TypedKernel`]s resolved from it, [`Stream`]s that
//! launch them ([`crate::launch`] says what is checked) and [`Event`]s that time them.
//!
//! # Threads
//! Every owning type is `Send + Sync`: [`Device`] is a shared handle to a `Backend: Send + Sync`,
//! [`DeviceBuffer`] a device and an address (writing it needs `&mut`), [`Module`], [`Kernel`]
//! and [`TypedKernel`] are immutable once loaded, and [`Stream`] and [`Event`] are handles whose
//! work the backend orders. Share one device, its modules and the
//! [`Library`](crate::library::Library) between threads; give each thread its own streams
//! when their work should not wait on each other's. The emulator runs one dispatch at a time.

mod backend;
mod buffer;
mod error;
mod module;
mod properties;
mod stream;

use std::fmt;
use std::sync::Arc;

pub use backend::{Backend, DeviceAddress, EventHandle, KernelLaunch, ModuleHandle, StreamHandle};
pub use buffer::DeviceBuffer;
pub use error::{BackendError, DeviceError};
pub use module::{Kernel, Module, TypedKernel};
pub use properties::{DeviceProperties, PEAK_RATES, PeakRates, peak_rates};
pub use stream::{Event, Stream};

/// A device: a shared backend and its properties. Clones are cheap and refer to the same device.
///
/// A HIP GPU ([`Device::hip`]) and the emulator ([`crate::emulator::Emulator::device`]) are
/// both a `Device`: everything above works the same on either.
///
/// # Example
/// ```
/// use iron::emulator::Emulator;
/// use iron::{Device, DeviceBuffer};
///
/// // The first AMD GPU, or the emulator playing a gfx950 when there is none.
/// let device = match Device::hip(0) {
///     Ok(gpu) => gpu,
///     Err(_) => Emulator::new("gfx950")?.device(),
/// };
/// let properties = device.properties();
/// println!("{} ({}), wave{}", properties.name, properties.target, properties.wave_size);
///
/// let buffer = DeviceBuffer::from_slice(&device, &[1u32, 2, 3])?;
/// assert_eq!(buffer.to_vec()?, [1, 2, 3]);
/// # Ok::<(), iron::DeviceError>(())
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    backend: Arc<dyn Backend>,
    properties: DeviceProperties,
}

impl Device {
    /// A device over any backend (the emulator, a test double); asks it for its properties once.
    pub fn from_backend(backend: Arc<dyn Backend>) -> Result<Device, DeviceError> {
        let properties = backend.properties()?;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                backend,
                properties,
            }),
        })
    }

    /// HIP device `index` (0-based, in the runtime's order).
    pub fn hip(index: usize) -> Result<Device, DeviceError> {
        Device::from_backend(Arc::new(crate::hip::HipBackend::open(index)?))
    }

    /// Every HIP device; empty when the runtime loads but finds no AMD GPU, an error when no
    /// runtime library can be loaded.
    pub fn hip_devices() -> Result<Vec<Device>, DeviceError> {
        (0..crate::hip::device_count()?).map(Device::hip).collect()
    }

    /// What the device is and can do.
    pub fn properties(&self) -> &DeviceProperties {
        &self.inner.properties
    }

    /// The backend, for operations the owning types do not cover.
    pub fn backend(&self) -> &dyn Backend {
        &*self.inner.backend
    }

    /// Whether `other` is a clone of this device (the same backend instance).
    pub fn is_same(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Waits for all work on every stream of the device.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(self.backend().synchronize()?)
    }

    /// The device's default stream.
    pub fn default_stream(&self) -> Stream {
        Stream::new(self.clone(), StreamHandle::DEFAULT)
    }

    /// A new stream, destroyed on drop after its work.
    pub fn create_stream(&self) -> Result<Stream, DeviceError> {
        let handle = self.backend().create_stream()?;
        Ok(Stream::new(self.clone(), handle))
    }

    /// Loads a bare code object or an offload bundle; see [`Module::load`].
    pub fn load_module(&self, image: &[u8]) -> Result<Module, DeviceError> {
        Module::load(self, image)
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.properties().name)
            .field("target", &self.properties().target.to_string())
            .finish()
    }
}
