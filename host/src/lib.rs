//! Iron's host runtime: AMD GPU code objects, devices, buffers and typed, checked kernel
//! launches.
//!
//! - [`code_object`]: the validated view of compiled kernels (ELF, metadata, descriptors,
//!   offload bundles) that everything else builds on.
//! - [`device`]: the device interface ([`Backend`]) and the owning types over it: [`Device`],
//!   [`DeviceBuffer`], [`Module`], [`Kernel`], [`TypedKernel`], [`Stream`], [`Event`].
//! - [`launch`]: launch geometry ([`LaunchConfig`]), typed arguments, the checks a launch
//!   passes before it runs, and kernarg packing.
//! - [`hip`]: the backend over the HIP runtime. The emulator (`host/emu`) is the other.
//! - [`library`]: the kernel library (`device/kernels`) as safe, shape-checked calls.
//! - [`include_kernels!`]: your own kernels, built by your build script with `iron-build`,
//!   embedded in your binary.
//!
//! ```no_run
//! use iron::{Device, DeviceBuffer, LaunchConfig};
//! use iron_kernels::elementwise::add_f32;
//!
//! let device = Device::hip(0)?;
//! let module = device.load_module(&std::fs::read("target/iron/kernels.bundle").unwrap())?;
//! let add = module.kernel(add_f32)?;
//! let n = 1000;
//! let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n])?;
//! let b = DeviceBuffer::from_slice(&device, &vec![2.0f32; n])?;
//! let mut c = DeviceBuffer::zeros(&device, n)?;
//! // SAFETY: add_f32 touches elements 0..n of each buffer, and each holds n.
//! unsafe {
//!     device.default_stream().launch(&add, LaunchConfig::for_elements(n, 256), (&a, &b, &mut c, n as u32))?
//! };
//! assert_eq!(c.to_vec()?, vec![3.0f32; n]);
//! # Ok::<(), iron::DeviceError>(())
//! ```
#![deny(missing_docs)]

/// The code-object reader ([`iron_code_object`]): what every module here builds on.
pub use iron_code_object as code_object;
pub mod device;
pub mod device_panic;
mod embed;
pub mod emulator;
pub mod hip;
pub mod launch;
pub mod library;
pub mod print;

pub use device::{
    Backend, BackendError, Device, DeviceBuffer, DeviceError, DeviceProperties, Event, Kernel,
    Module, Stream, TypedKernel,
};
pub use launch::{LaunchConfig, LaunchError};
