//! Typed, checked kernel launches: geometry, argument types, the checks, and kernarg packing.
//!
//! A launch names its kernel by value, never by a string: `#[kernel]` turns every kernel of a
//! device crate into a `KernelDecl<fn(..)>` on the host, [`Module::kernel`](crate::Module::kernel)
//! resolves it to a [`TypedKernel`](crate::TypedKernel) after checking the declared signature
//! against the code object's metadata, and [`Stream::launch`](crate::Stream::launch) takes the
//! arguments as a tuple whose types follow from the signature ([`signature`] has the table):
//!
//! ```no_run
//! use iron::{Device, DeviceBuffer, LaunchConfig};
//! use iron_kernels::elementwise::add_f32;
//!
//! let device = Device::hip(0)?;
//! let module = device.load_module(&std::fs::read("target/iron/kernels.bundle").unwrap())?;
//! let add = module.kernel(add_f32)?; // checked: 4 arguments, kinds and sizes
//! let n = 1 << 20;
//! let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n])?;
//! let b = DeviceBuffer::from_slice(&device, &vec![2.0f32; n])?;
//! let mut c = DeviceBuffer::<f32>::zeros(&device, n)?;
//! let stream = device.default_stream();
//! // SAFETY: add_f32 touches elements 0..n of each buffer, and each holds n.
//! unsafe { stream.launch(&add, LaunchConfig::for_elements(n, 256), (&a, &b, &mut c, n as u32))? };
//! assert_eq!(c.to_vec()?, vec![3.0f32; n]);
//! # Ok::<(), iron::DeviceError>(())
//! ```
//!
//! What is checked, and when:
//! - resolving (`module.kernel(decl)`): the kernel exists; the number of explicit arguments; each
//!   argument's kind (`global_buffer` for pointers, `by_value` for scalars, structs and
//!   addresses passed as integers) and size; the
//!   declaration's `max_threads` equals the code object's `.max_flat_workgroup_size` (else the
//!   code object is stale), and its required block (`block = ..`) equals the code object's
//!   `.reqd_workgroup_size`;
//! - every launch ([`check_launch`]): a non-zero grid and block in every dimension; the block
//!   within the kernel's `.max_flat_workgroup_size`, the device's maximum and any
//!   `.reqd_workgroup_size`; at most 2^32 - 1 work-items per dimension; static plus dynamic LDS
//!   within the device's limit; every buffer on the stream's device;
//! - every typed launch ([`check_contract`]): the contract the kernel declares in `#[kernel]`:
//!   a whole number of waves (`whole_waves`), a multiple of a block size (`block_multiple`), at
//!   least the dynamic LDS it needs for the block (`dynamic_lds`).
//!
//! Why launching stays `unsafe`: a kernel reads and writes wherever its pointers and its
//! scalar arguments lead it, and the host cannot see that. A wrong length argument makes a
//! kernel write past its buffers into other allocations, the runtime's own device memory, or on
//! unified-memory systems the host's. The caller guarantees that, for the arguments and
//! geometry given, the kernel stays inside the buffers it is passed (for the library kernels:
//! `n` is at most the length of every buffer argument, plus any length each kernel's docs
//! state). Everything else is the library's job: types and sizes are checked, buffers cannot
//! be freed or read back by the host before the kernel is done (drop and host reads wait for
//! queued work), and a `&mut` buffer argument cannot alias another argument.
//!
//! [`pack_kernarg`] is a pure function of the metadata and the geometry, so that every backend
//! packs the same bytes: HIP receives the explicit prefix, the emulator the whole segment.

mod check;
mod config;
mod kernarg;
pub mod signature;

pub use check::{
    LaunchError, check_bounds, check_contract, check_launch, check_signature, contract_dynamic_lds,
};
pub use config::LaunchConfig;
pub use kernarg::{HIP_GRID_DIMS, KernargSegment, explicit_size, hidden_arg_value, pack_kernarg};
pub use signature::{
    AddressOf, ByValue, KernelParam, KernelSignature, LaunchArg, ParamKind, ParamSpec,
};
