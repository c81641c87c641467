//! Streams (in-order queues of device work) and events (timestamps in them), and launching
//! kernels on a stream.

use std::fmt;
use std::time::Duration;

use bytemuck::Pod;

use super::Device;
use super::backend::{EventHandle, KernelLaunch, StreamHandle};
use super::buffer::DeviceBuffer;
use super::error::DeviceError;
use super::module::{Kernel, TypedKernel};
use crate::code_object::ArgValueKind;
use crate::launch::{
    KernelSignature, LaunchArg, LaunchConfig, LaunchError, check_contract, check_launch,
    pack_kernarg,
};

/// An in-order queue of device work: launches, copies, fills, events.
///
/// [`Device::default_stream`] is the device's default stream; [`Device::create_stream`] makes
/// one that is destroyed on drop (after its work).
pub struct Stream {
    device: Device,
    handle: StreamHandle,
}

impl Stream {
    pub(super) fn new(device: Device, handle: StreamHandle) -> Stream {
        Stream { device, handle }
    }

    /// The device the stream queues work on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The backend's handle.
    pub fn handle(&self) -> StreamHandle {
        self.handle
    }

    /// Waits until all work queued on the stream is done.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(self.device.backend().synchronize_stream(self.handle)?)
    }

    /// Records an event: it completes when the work queued before it does.
    pub fn record_event(&self) -> Result<Event, DeviceError> {
        let handle = self.device.backend().record_event(self.handle)?;
        Ok(Event {
            device: self.device.clone(),
            handle,
        })
    }

    /// Copies `src` into `dst` after the work queued before on this stream; returns when the
    /// copy is done. `src` must have exactly `dst.len()` elements.
    pub fn write<T: Pod>(&self, dst: &mut DeviceBuffer<T>, src: &[T]) -> Result<(), DeviceError> {
        self.check_buffer(dst.device(), "the destination buffer")?;
        dst.check_len("Stream::write", src.len())?;
        if dst.size_bytes() > 0 {
            // SAFETY: `src` is borrowed until this function returns, and it returns only after
            // synchronizing the stream, which waits for (or abandons) the copy.
            unsafe {
                self.device.backend().write_async(
                    self.handle,
                    dst.address(),
                    bytemuck::cast_slice(src),
                )?;
            }
            self.synchronize()?;
        }
        Ok(())
    }

    /// Copies `src` into `dst` after the work queued before on this stream; returns when the
    /// copy is done. `dst` must have exactly `src.len()` elements.
    pub fn read<T: Pod>(&self, src: &DeviceBuffer<T>, dst: &mut [T]) -> Result<(), DeviceError> {
        self.check_buffer(src.device(), "the source buffer")?;
        src.check_len("Stream::read", dst.len())?;
        if src.size_bytes() > 0 {
            // SAFETY: `dst` is borrowed mutably until this function returns, and it returns
            // only after synchronizing the stream, which waits for (or abandons) the copy.
            unsafe {
                self.device.backend().read_async(
                    self.handle,
                    src.address(),
                    bytemuck::cast_slice_mut(dst),
                )?;
            }
            self.synchronize()?;
        }
        Ok(())
    }

    /// Queues setting every byte of `dst` to zero; returns without waiting.
    pub fn zero<T: Pod>(&self, dst: &mut DeviceBuffer<T>) -> Result<(), DeviceError> {
        self.check_buffer(dst.device(), "the buffer")?;
        if dst.size_bytes() > 0 {
            self.device.backend().fill_async(
                self.handle,
                dst.address(),
                0,
                dst.size_bytes() as u64,
            )?;
        }
        Ok(())
    }

    /// Queues a launch of a typed kernel with arguments matching its signature (see
    /// [`crate::launch::signature`]), after checking the geometry against the kernel and the
    /// device. Returns once the launch is queued.
    ///
    /// # Safety
    /// The kernel reads and writes wherever its pointers and scalar arguments lead it, which the
    /// host cannot check. The caller guarantees that, for these arguments and this geometry,
    /// the kernel accesses only the buffers it is passed, within their lengths (for the library
    /// kernels: `n` is at most the length of every buffer, plus what each kernel's docs state).
    /// Everything else is checked, and buffers outlive the kernel's use of them: freeing and
    /// host reads wait for queued work.
    ///
    /// # Example
    /// ```no_run
    /// use iron::emulator::Emulator;
    /// use iron::{DeviceBuffer, LaunchConfig};
    /// use iron_kernels::elementwise::add_f32;
    ///
    /// // After `cargo xtask build --gfx gfx950`:
    /// let device = Emulator::new("gfx950")?.device();
    /// let module = device.load_module(&std::fs::read("target/iron/kernels.bundle").unwrap())?;
    /// let add = module.kernel(add_f32)?;
    /// let n = 1000;
    /// let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n])?;
    /// let b = DeviceBuffer::from_slice(&device, &vec![2.0f32; n])?;
    /// let mut c = DeviceBuffer::<f32>::zeros(&device, n)?;
    /// let stream = device.default_stream();
    /// // The tuple's types follow from add_f32's signature: `*const f32` takes a
    /// // `&DeviceBuffer<f32>`, `*mut f32` a `&mut DeviceBuffer<f32>`, `u32` a `u32`.
    /// // SAFETY: add_f32 touches elements 0..n of each buffer, and each holds n.
    /// unsafe { stream.launch(&add, LaunchConfig::for_elements(n, 256), (&a, &b, &mut c, n as u32))? };
    /// assert_eq!(c.to_vec()?, vec![3.0f32; n]);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub unsafe fn launch<F: KernelSignature>(
        &self,
        kernel: &TypedKernel<F>,
        config: LaunchConfig,
        args: F::Args<'_>,
    ) -> Result<(), DeviceError> {
        let metadata = kernel.kernel().metadata();
        check_launch(metadata, &config, self.device.properties())?;
        check_contract(metadata, &kernel.declaration().contract, &config)?;
        let args = F::launch_args(&args);
        // SAFETY: the caller gives the guarantees of `launch_untyped`, which are those above.
        unsafe { self.launch_untyped(kernel.kernel(), config, &args) }
    }

    /// Queues a launch of a kernel without a typed declaration: `args` are checked one by one
    /// against the metadata (count, buffer or value, size) at every launch.
    ///
    /// # Safety
    /// As for [`launch`](Self::launch): the kernel must stay inside the buffers it is passed.
    pub unsafe fn launch_untyped(
        &self,
        kernel: &Kernel,
        config: LaunchConfig,
        args: &[LaunchArg<'_>],
    ) -> Result<(), DeviceError> {
        let metadata = kernel.metadata();
        if !kernel.module().device().is_same(&self.device) {
            return Err(DeviceError::DeviceMismatch {
                what: format!("kernel {}", metadata.name),
                other: "the stream",
            });
        }
        check_launch(metadata, &config, self.device.properties())?;
        let explicit: Vec<_> = metadata.explicit_args().collect();
        if explicit.len() != args.len() {
            return Err(LaunchError::ArgumentCount {
                kernel: metadata.name.clone(),
                expected: explicit.len(),
                got: args.len(),
            }
            .into());
        }
        for (position, (meta, arg)) in (1..).zip(explicit.iter().zip(args)) {
            let (passed, kind, rust_type) = match arg {
                LaunchArg::Buffer { device, .. } => {
                    self.check_buffer(
                        device,
                        &format!("argument {position} of {}", metadata.name),
                    )?;
                    (
                        "global_buffer",
                        ArgValueKind::GlobalBuffer,
                        "a device buffer",
                    )
                }
                LaunchArg::Address { device, .. } => {
                    self.check_buffer(
                        device,
                        &format!("argument {position} of {}", metadata.name),
                    )?;
                    ("by_value", ArgValueKind::ByValue, "a buffer's address")
                }
                LaunchArg::Value { .. } | LaunchArg::Bytes(_) => {
                    ("by_value", ArgValueKind::ByValue, "a value")
                }
            };
            if meta.value_kind != kind {
                return Err(LaunchError::ArgumentKind {
                    kernel: metadata.name.clone(),
                    position,
                    count: explicit.len() as u32,
                    name: meta.name.clone(),
                    expected: meta.value_kind.as_str().to_owned(),
                    got: passed,
                    rust_type,
                }
                .into());
            }
        }
        let values: Vec<_> = args.iter().map(LaunchArg::bytes).collect();
        let slices: Vec<&[u8]> = values.iter().map(|bytes| &bytes[..]).collect();
        let segment = pack_kernarg(metadata, &slices, &config)?;
        // SAFETY: the caller guarantees that the kernel stays inside the buffers it is passed;
        // the arguments were checked against the metadata and packed at its offsets.
        unsafe {
            self.device.backend().launch(&KernelLaunch {
                module: kernel.module().handle(),
                kernel: &metadata.name,
                grid: config.grid,
                block: config.block,
                dynamic_lds: config.dynamic_lds,
                kernarg: &segment.bytes,
                kernarg_align: segment.align,
                explicit_size: segment.explicit_size,
                stream: self.handle,
            })?;
        }
        Ok(())
    }

    fn check_buffer(&self, device: &Device, what: &str) -> Result<(), DeviceError> {
        if device.is_same(&self.device) {
            Ok(())
        } else {
            Err(DeviceError::DeviceMismatch {
                what: what.to_owned(),
                other: "the stream",
            })
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.handle != StreamHandle::DEFAULT {
            // A failure cannot be reported from drop; the backend keeps the stream until the
            // device goes away.
            let _ = self.device.backend().destroy_stream(self.handle);
        }
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.device)
            .field("handle", &self.handle)
            .finish()
    }
}

/// A recorded point in a stream's work; two of them time the work between them.
pub struct Event {
    device: Device,
    handle: EventHandle,
}

impl Event {
    /// Time from `start` to this event, waiting for this event to complete.
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration, DeviceError> {
        if !start.device.is_same(&self.device) {
            return Err(DeviceError::DeviceMismatch {
                what: "the start event".to_owned(),
                other: "the end event",
            });
        }
        Ok(self
            .device
            .backend()
            .event_elapsed(start.handle, self.handle)?)
    }

    /// The backend's handle.
    pub fn handle(&self) -> EventHandle {
        self.handle
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // A failure cannot be reported from drop.
        let _ = self.device.backend().destroy_event(self.handle);
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("handle", &self.handle)
            .finish()
    }
}
