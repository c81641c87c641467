//! What can go wrong using the kernel library: finding and loading it, shapes that do not fit
//! the buffers, sizes beyond the kernels' limits, operations the gfx cannot run, and the
//! device's own errors.

use thiserror::Error;

use crate::device::DeviceError;

/// An error of [`Library`](super::Library): each is one line naming the operation and what is
/// wrong. Bad shapes and buffers are reported before anything runs on the device.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LibraryError {
    /// The device refused or failed an operation (loading, resolving a kernel, a launch).
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A buffer holds fewer elements than the shape needs.
    #[error("{operation}: {buffer} holds {holds} elements, {}", needs_text(.shape, *.needs))]
    BufferTooShort {
        /// The library operation, e.g. `rmsnorm`.
        operation: &'static str,
        /// The argument's name, e.g. `x`.
        buffer: &'static str,
        /// Elements the buffer holds.
        holds: usize,
        /// How the need follows from the shape, e.g. `rows * cols` (empty when it is a constant).
        shape: &'static str,
        /// Elements the shape needs.
        needs: usize,
    },
    /// A shape whose element count overflows `usize`.
    #[error("{operation}: {shape} = {value} overflows")]
    ShapeOverflow {
        /// The library operation.
        operation: &'static str,
        /// The product, e.g. `rows * cols`.
        shape: &'static str,
        /// Its factors, e.g. `4294967296 * 4294967296`.
        value: String,
    },
    /// A size beyond what the kernels address (they count in 32 bits).
    #[error("{operation}: {what} = {value} exceeds the kernel's limit of {limit}")]
    TooLarge {
        /// The library operation.
        operation: &'static str,
        /// The size, e.g. `n` or `cols * 4 bytes`.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The largest value the kernel takes.
        limit: u64,
    },
    /// A shape the operation does not take.
    #[error("{operation}: {detail}")]
    BadShape {
        /// The library operation.
        operation: &'static str,
        /// What is wrong, e.g. `cols = 20 is not a multiple of the block length 32`.
        detail: String,
    },
    /// An operation this library's gfx cannot run (its code object lacks the kernels, or the
    /// hardware the operation needs).
    #[error("{operation}: not available on {gfx}: {reason}")]
    Unsupported {
        /// The library operation, e.g. `gemm`.
        operation: &'static str,
        /// The gfx the library is built for, e.g. `gfx1030`.
        gfx: String,
        /// Why, and what to use instead, e.g. `the GEMM kernels need matrix cores (...)`.
        reason: String,
    },
    /// No bundle was found where the build writes it.
    #[error(
        "no kernel library bundle at {tried}: build it with `cargo xtask build --gfx <gfx>` (e.g. gfx950), or set IRON_ARTIFACTS to the build's output directory (`$CARGO_TARGET_DIR/iron` when CARGO_TARGET_DIR is set, or its --out-dir)"
    )]
    BundleNotFound {
        /// The paths looked at, comma-separated.
        tried: String,
    },
    /// A bundle file that exists but cannot be read.
    #[error("cannot read the kernel library bundle {path}: {detail}")]
    ReadBundle {
        /// The file.
        path: String,
        /// The operating system's message.
        detail: String,
    },
}

/// `rows * cols = 128`, or `needs 1` when the need is a constant.
fn needs_text(shape: &str, needs: usize) -> String {
    if shape.is_empty() {
        format!("needs {needs}")
    } else {
        format!("{shape} = {needs}")
    }
}
