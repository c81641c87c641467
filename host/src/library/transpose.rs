//! Matrix transpose (`device/kernels/src/transpose.rs`): a row-major `[rows, cols]` matrix to
//! `[cols, rows]`, bit for bit, through LDS tiles of 32 x 32 (4-byte elements) or 64 x 64
//! (2-byte elements).

use iron_kernels::transpose::{transpose_b16, transpose_b32};

use super::Library;
use super::error::LibraryError;
use super::gather::{Bits, buffer_arg};
use super::geometry::{check_holds, elements_of, to_u32};
use crate::device::{DeviceBuffer, DeviceError, Module, Stream, TypedKernel};
use crate::launch::{LaunchArg, LaunchConfig};

/// The signature of a transpose kernel over elements `T`.
type Transpose<T> = fn(*const T, *mut T, u32, u32);

/// The transpose kernels.
pub(crate) struct TransposeKernels {
    b32: TypedKernel<Transpose<u32>>,
    b16: TypedKernel<Transpose<u16>>,
}

impl TransposeKernels {
    /// Resolves the transpose kernels of `module`.
    pub(crate) fn resolve(module: &Module) -> Result<TransposeKernels, DeviceError> {
        Ok(TransposeKernels {
            b32: module.kernel(transpose_b32)?,
            b16: module.kernel(transpose_b16)?,
        })
    }
}

/// Work-items per workgroup (one pass of each phase over a 4-byte tile).
const TRANSPOSE_BLOCK: u32 = 256;
/// Largest grid in each dimension (the kernel strides over tiles beyond it).
const MAX_GRID: u32 = 65_535;
/// Tile side and dynamic LDS bytes for 4-byte elements.
const TILE_B32: (usize, u32) = (32, 4096);
/// Tile side and dynamic LDS bytes for 2-byte elements.
const TILE_B16: (usize, u32) = (64, 8192);

impl Library {
    /// `dst[c][r] = src[r][c]`: `src` is `[rows, cols]` row-major, `dst` `[cols, rows]`.
    pub fn transpose<T: Bits>(
        &self,
        stream: &Stream,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "transpose";
        let elements = elements_of(OP, rows, cols)?;
        check_holds(OP, "src", src, "rows * cols", elements)?;
        check_holds(OP, "dst", dst, "rows * cols", elements)?;
        let (tile, lds) = if T::WIDE { TILE_B32 } else { TILE_B16 };
        // The kernel counts tiles and elements of a tile's edge in 32 bits.
        let limit = u32::MAX - tile as u32;
        let rows32 = to_u32(OP, "rows", rows, limit)?;
        let cols32 = to_u32(OP, "cols", cols, limit)?;
        if elements == 0 {
            return Ok(());
        }
        let grid = [
            u32::try_from(cols.div_ceil(tile)).map_or(MAX_GRID, |g| g.min(MAX_GRID)),
            u32::try_from(rows.div_ceil(tile)).map_or(MAX_GRID, |g| g.min(MAX_GRID)),
            1,
        ];
        let config = LaunchConfig::new(grid, [TRANSPOSE_BLOCK, 1, 1]).with_dynamic_lds(lds);
        let kernel = if T::WIDE {
            self.kernels.transpose.b32.kernel()
        } else {
            self.kernels.transpose.b16.kernel()
        };
        let args = [
            buffer_arg(src),
            buffer_arg(dst),
            LaunchArg::value(&rows32.to_le_bytes()),
            LaunchArg::value(&cols32.to_le_bytes()),
        ];
        // SAFETY: the kernel (transpose_b32 for 4-byte T, transpose_b16 for 2-byte T) reads
        // src[0..rows * cols] and writes dst[0..rows * cols]; both hold that many elements,
        // start 16-byte aligned (device allocations do) and are distinct. The workgroup size
        // is a multiple of 8 and the dynamic LDS is what the kernel's tile needs.
        unsafe { stream.launch_untyped(kernel, config, &args)? };
        Ok(())
    }
}
