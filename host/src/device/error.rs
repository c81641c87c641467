//! The errors of the device layer: what a backend reports, and what the owning types add.

use thiserror::Error;

use crate::code_object::CodeObjectError;
use crate::launch::LaunchError;

/// What a [`Backend`](super::Backend) reports when an operation fails.
///
/// Backends map their runtime's status codes onto these variants so that callers can tell a
/// missing device from a full one or from a faulting kernel without knowing which backend ran.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BackendError {
    /// No device can be used: no runtime library, no GPU, or an index past the last device.
    #[error("{0}")]
    NoDevice(String),
    /// The device has no room for an allocation.
    #[error("out of device memory: cannot allocate {bytes} bytes")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u64,
    },
    /// An address range that is not inside one live allocation.
    #[error("{operation}: 0x{address:x} (+{len} bytes) is not inside a live device allocation")]
    BadAddress {
        /// The operation that was given the range.
        operation: &'static str,
        /// First byte of the range.
        address: u64,
        /// Length of the range in bytes.
        len: u64,
    },
    /// A module, stream or event handle the backend did not hand out, or already released.
    #[error("{operation}: unknown {what} handle 0x{handle:x}")]
    BadHandle {
        /// The operation that was given the handle.
        operation: &'static str,
        /// What kind of handle: "module", "stream", "event".
        what: &'static str,
        /// The handle's value.
        handle: u64,
    },
    /// A kernel stopped with a fault: a memory violation, a trap, an illegal instruction.
    #[error(
        "kernel {kernel} faulted: {}{detail}",
        .panic.as_ref().map(|p| format!("{p}; ")).unwrap_or_default()
    )]
    KernelFault {
        /// The kernel's name.
        kernel: String,
        /// The failed check (bounds check, assertion, `panic!`) that trapped, when the kernel
        /// panicked and the backend could read its panic record.
        panic: Option<Box<crate::device_panic::DevicePanic>>,
        /// What happened, where (wave, program counter, instruction) when the backend knows.
        detail: String,
    },
    /// A runtime call failed for another reason.
    #[error("{operation} failed: {detail}")]
    Failed {
        /// The runtime call or backend operation, e.g. `hipModuleLoadData`.
        operation: &'static str,
        /// The runtime's description of the failure.
        detail: String,
    },
}

/// Everything that can go wrong using a device through the owning types ([`Device`](super::Device),
/// [`DeviceBuffer`](super::DeviceBuffer), [`Module`](super::Module), [`Stream`](super::Stream)).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeviceError {
    /// The backend refused or failed an operation.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A code object or bundle could not be read.
    #[error(transparent)]
    CodeObject(#[from] CodeObjectError),
    /// A launch was refused before it ran: arguments or geometry do not fit the kernel.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The image holds no code object this device can run.
    #[error(
        "no code object for this {device} device: {held}; build one with `cargo xtask build --gfx {processor}`"
    )]
    NoCodeObjectForDevice {
        /// The device's target id, e.g. `gfx1100` or `gfx942:sramecc+:xnack-`.
        device: String,
        /// The device's processor name, e.g. `gfx1100`.
        processor: String,
        /// What the image holds, e.g. "the bundle holds gfx950, gfx942".
        held: String,
    },
    /// A copy between a device buffer and a host slice of another length.
    #[error("{operation}: the device buffer holds {buffer} elements, the host slice {host}")]
    LengthMismatch {
        /// The copy, e.g. `copy_from_slice`.
        operation: &'static str,
        /// Elements in the device buffer.
        buffer: usize,
        /// Elements in the host slice.
        host: usize,
    },
    /// A buffer whose size in bytes overflows.
    #[error("a buffer of {len} elements of {element_size} bytes is larger than memory can be")]
    TooLarge {
        /// Elements asked for.
        len: usize,
        /// Bytes per element.
        element_size: usize,
    },
    /// Objects of two devices used together.
    #[error("{what} belongs to another device than {other}")]
    DeviceMismatch {
        /// What was used, e.g. "argument 2 of add_f32".
        what: String,
        /// What it was used with, e.g. "the stream".
        other: &'static str,
    },
}
