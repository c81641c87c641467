//! Embedding lookup (`device/kernels/src/gather.rs`): rows of a `[vocab, dim]` table gathered
//! by u32 index, copied bit for bit; an index at or beyond `vocab` gives a row of zero bits.
//!
//! The kernels move bits, one per element size (`gather_b32`, `gather_b16`), so [`Bits`] lists
//! the types each serves: f32, u32, i32 and f16, bf16, u16, i16.

use bytemuck::Pod;
use iron_kernels::gather::{gather_b16, gather_b32};

use super::Library;
use super::dtype::{bf16, f16};
use super::error::LibraryError;
use super::geometry::{STREAMING_BLOCK, check_holds, elements_of, to_u32};
use crate::device::{Device, DeviceBuffer, DeviceError, Module, Stream, TypedKernel};
use crate::launch::{LaunchArg, LaunchConfig};

/// An element type the bit-moving kernels (gather, transpose) take: 4 or 2 bytes, moved as its
/// bits.
pub trait Bits: Pod + sealed::Width {}

impl Bits for f32 {}
impl Bits for u32 {}
impl Bits for i32 {}
impl Bits for f16 {}
impl Bits for bf16 {}
impl Bits for u16 {}
impl Bits for i16 {}

pub(crate) mod sealed {
    /// The element's width, which picks the kernel.
    pub trait Width: Sized + 'static {
        /// True for 4-byte elements, false for 2-byte ones.
        const WIDE: bool = size_of::<Self>() == 4;
    }

    impl Width for f32 {}
    impl Width for u32 {}
    impl Width for i32 {}
    impl Width for super::f16 {}
    impl Width for super::bf16 {}
    impl Width for u16 {}
    impl Width for i16 {}
}

/// The signature of a gather kernel over elements `T`.
type Gather<T> = fn(*const T, *const u32, *mut T, u32, u32, u32);

/// The gather kernels.
pub(crate) struct GatherKernels {
    b32: TypedKernel<Gather<u32>>,
    b16: TypedKernel<Gather<u16>>,
}

impl GatherKernels {
    /// Resolves the gather kernels of `module`.
    pub(crate) fn resolve(module: &Module) -> Result<GatherKernels, DeviceError> {
        Ok(GatherKernels {
            b32: module.kernel(gather_b32)?,
            b16: module.kernel(gather_b16)?,
        })
    }
}

/// The launch argument of a device buffer of any element type.
pub(crate) fn buffer_arg<T>(buffer: &DeviceBuffer<T>) -> LaunchArg<'_> {
    LaunchArg::Buffer {
        address: buffer.address(),
        device: buffer.device(),
    }
}

/// Workgroups per compute unit a gather uses at most (rows beyond are covered by the kernel's
/// loop over rows).
const GATHER_WORKGROUPS_PER_CU: u32 = 32;

/// The geometry of a gather of `n` rows of `dim` elements of `size` bytes: the row's 16-byte
/// chunks (or elements, when `dim` does not fill whole chunks) across `x`, rounded up to a power
/// of two of at most 256, and as many rows across `y` as fill a workgroup of 256.
fn gather_geometry(device: &Device, n: usize, dim: usize, size: usize) -> LaunchConfig {
    let per_chunk = 16 / size;
    let chunks = if dim.is_multiple_of(per_chunk) {
        dim / per_chunk
    } else {
        dim
    };
    let x = chunks
        .next_power_of_two()
        .clamp(1, STREAMING_BLOCK as usize) as u32;
    let y = STREAMING_BLOCK / x;
    let cap = device
        .properties()
        .compute_units
        .max(1)
        .saturating_mul(GATHER_WORKGROUPS_PER_CU);
    let groups = u32::try_from(n.div_ceil(y as usize).max(1))
        .unwrap_or(u32::MAX)
        .min(cap);
    LaunchConfig::new([groups, 1, 1], [x, y, 1])
}

impl Library {
    /// `out[i] = table[indices[i]]` for `i < n`: `table` is `[vocab, dim]` row-major, `out`
    /// `[n, dim]`; a row whose index is `vocab` or more is written as zero bits (+0.0).
    #[allow(
        clippy::too_many_arguments,
        reason = "the table, its shape, the indices and the output"
    )]
    pub fn gather<T: Bits>(
        &self,
        stream: &Stream,
        table: &DeviceBuffer<T>,
        (vocab, dim): (usize, usize),
        indices: &DeviceBuffer<u32>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "gather";
        check_holds(
            OP,
            "table",
            table,
            "vocab * dim",
            elements_of(OP, vocab, dim)?,
        )?;
        check_holds(OP, "indices", indices, "n", n)?;
        check_holds(OP, "out", out, "n * dim", elements_of(OP, n, dim)?)?;
        let config = gather_geometry(self.device(), n, dim, size_of::<T>());
        let rows_in_flight = config.grid[0].saturating_mul(config.block[1]);
        let count = to_u32(OP, "n", n, u32::MAX.saturating_sub(rows_in_flight))?;
        let vocab = to_u32(OP, "vocab", vocab, u32::MAX)?;
        let dim = to_u32(OP, "dim", dim, u32::MAX)?;
        if count == 0 || dim == 0 {
            return Ok(());
        }
        let kernel = if T::WIDE {
            self.kernels.gather.b32.kernel()
        } else {
            self.kernels.gather.b16.kernel()
        };
        let args = [
            buffer_arg(table),
            buffer_arg(indices),
            buffer_arg(out),
            LaunchArg::value(&count.to_le_bytes()),
            LaunchArg::value(&vocab.to_le_bytes()),
            LaunchArg::value(&dim.to_le_bytes()),
        ];
        // SAFETY: the kernel (gather_b32 for 4-byte T, gather_b16 for 2-byte T) reads
        // indices[0..n] and the table rows below vocab (vocab * dim elements, held by table),
        // and writes out[0..n * dim], which out holds; every buffer starts 16-byte aligned
        // (device allocations do) and out is distinct from the inputs. Its row index plus the
        // rows in flight stays below 2^32, as checked.
        unsafe { stream.launch_untyped(kernel, config, &args)? };
        Ok(())
    }
}
