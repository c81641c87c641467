//! Matrix transpose (`device/kernels/src/transpose.rs`): a row-major `[rows, cols]` matrix to
//! `[cols, rows]`, bit for bit, through LDS tiles of 32 x 32 (4-byte elements) or 64 x 64
//! (2-byte elements). A matrix whose sides are multiples of 64 runs on the whole-block kernels
//! (one 64 x 64 block per workgroup, no bounds checks), any other on the general ones.

use iron_kernels::transpose::{
    BLOCK_SIDE, BLOCK_THREADS, BLOCKS_B16_LDS, BLOCKS_B32_LDS, transpose_b16, transpose_b32,
    transpose_blocks_b16, transpose_blocks_b32,
};

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
    blocks_b32: TypedKernel<Transpose<u32>>,
    blocks_b16: TypedKernel<Transpose<u16>>,
}

impl TransposeKernels {
    /// Resolves the transpose kernels of `module`.
    pub(crate) fn resolve(module: &Module) -> Result<TransposeKernels, DeviceError> {
        Ok(TransposeKernels {
            b32: module.kernel(transpose_b32)?,
            b16: module.kernel(transpose_b16)?,
            blocks_b32: module.kernel(transpose_blocks_b32)?,
            blocks_b16: module.kernel(transpose_blocks_b16)?,
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
        let side = BLOCK_SIDE as usize;
        let blocks = [cols / side, rows / side];
        let whole_blocks = rows.is_multiple_of(side)
            && cols.is_multiple_of(side)
            && blocks.iter().all(|&b| b <= MAX_GRID as usize);
        let (kernel, config) = if whole_blocks {
            let lds = if T::WIDE {
                BLOCKS_B32_LDS
            } else {
                BLOCKS_B16_LDS
            };
            let grid = [blocks[0] as u32, blocks[1] as u32, 1];
            let kernel = if T::WIDE {
                self.kernels.transpose.blocks_b32.kernel()
            } else {
                self.kernels.transpose.blocks_b16.kernel()
            };
            let config = LaunchConfig::new(grid, [BLOCK_THREADS, 1, 1]).with_dynamic_lds(lds);
            (kernel, config)
        } else {
            let grid = [
                u32::try_from(cols.div_ceil(tile)).map_or(MAX_GRID, |g| g.min(MAX_GRID)),
                u32::try_from(rows.div_ceil(tile)).map_or(MAX_GRID, |g| g.min(MAX_GRID)),
                1,
            ];
            let kernel = if T::WIDE {
                self.kernels.transpose.b32.kernel()
            } else {
                self.kernels.transpose.b16.kernel()
            };
            let config = LaunchConfig::new(grid, [TRANSPOSE_BLOCK, 1, 1]).with_dynamic_lds(lds);
            (kernel, config)
        };
        let args = [
            buffer_arg(src),
            buffer_arg(dst),
            LaunchArg::value(&rows32.to_le_bytes()),
            LaunchArg::value(&cols32.to_le_bytes()),
        ];
        // SAFETY: the kernel (transpose_b32 or transpose_blocks_b32 for 4-byte T, transpose_b16
        // or transpose_blocks_b16 for 2-byte T) reads src[0..rows * cols] and writes
        // dst[0..rows * cols]; both hold that many elements, start 16-byte aligned (device
        // allocations do) and are distinct. The workgroup size is a multiple of 8 (exactly 256
        // for the whole-block kernels, launched only when both sides are multiples of 64 and
        // the grid is one workgroup per block) and the dynamic LDS is what the kernel's tiles
        // need.
        unsafe { stream.launch_untyped(kernel, config, &args)? };
        Ok(())
    }
}
