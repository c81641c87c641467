//! Reductions of each row of a row-major `[rows, cols]` tensor to one value
//! (`device/kernels/src/row_reduce.rs`): sum and maximum (f32 out), index of the first maximum
//! (u32 out). One workgroup per row; a row of `k * PACK * block` elements (`k` in 32 (sum), 16
//! (sum and max), 8, 4, 2, 1, the most that gives a block of whole waves) runs on the instance
//! holding exactly `k` chunks per work-item in registers (the sum's one-wave instance when the
//! block is one wave), any other row on the general kernel.

use bytemuck::Pod;

use super::Library;
use super::dtype::{ARGMAX_HELD_SHAPES, Float, MAX_HELD_SHAPES, Rows, SUM_HELD_SHAPES};
use super::error::LibraryError;
use super::geometry::{self, HeldShape, check_holds, elements_of, row_shape};
use crate::device::{DeviceBuffer, Stream, TypedKernel};

impl Library {
    /// Checks and launches one row reduction writing `out[0..rows]`: the held-row instance of
    /// `held` (of shape `shapes[k]`) that covers the row exactly, else
    /// `general`.
    #[allow(
        clippy::too_many_arguments,
        reason = "the operation's kernels, its operands and its shape"
    )]
    fn row_reduce<T: Float, O: Pod, const N: usize>(
        &self,
        operation: &'static str,
        general: &TypedKernel<Rows<T, O>>,
        held: &[TypedKernel<Rows<T, O>>; N],
        shapes: [HeldShape; N],
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<O>,
        (rows, cols): (usize, usize),
    ) -> Result<(), LibraryError> {
        let elements = elements_of(operation, rows, cols)?;
        check_holds(operation, "x", x, "rows * cols", elements)?;
        check_holds(operation, "out", out, "rows", rows)?;
        let shape = row_shape::<T>(operation, rows, cols)?;
        if rows == 0 {
            return Ok(());
        }
        let (kernel, config) = geometry::held_or_general(
            general,
            held,
            shapes,
            self.device().properties(),
            shape.rows,
            cols,
            T::PACK,
        );
        // SAFETY: the kernel (a held-row instance only for rows of exactly k * PACK * block
        // elements) reads x[0..rows * cols] (rows shorter than 4 GiB, as checked) and
        // writes out[0..rows], one workgroup per row of the grid's `rows`; x and out hold that
        // many elements, start 16-byte aligned (device allocations do) and are distinct. The
        // block is a multiple of the code object's wave size and the dynamic LDS is what the
        // kernel declares for it, as its workgroup reductions need.
        unsafe { stream.launch(kernel, config, (x, out, shape.rows, shape.cols))? };
        Ok(())
    }

    /// `out[r] = x[r][0] + ... + x[r][cols - 1]` in f32 for each of the `rows` rows (0 for an
    /// empty row; a NaN or opposite infinities give NaN).
    pub fn row_sum<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<f32>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        let kernels = T::kernels(self);
        let (general, held) = (&kernels.row_sum, &kernels.row_sum_held);
        self.row_reduce(
            "row_sum",
            general,
            held,
            SUM_HELD_SHAPES,
            stream,
            x,
            out,
            (rows, cols),
        )
    }

    /// `out[r] = max of row r` as f32 (exact; a row holding a NaN gives NaN, an empty row
    /// `-inf`).
    pub fn row_max<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<f32>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        let kernels = T::kernels(self);
        let (general, held) = (&kernels.row_max, &kernels.row_max_held);
        self.row_reduce(
            "row_max",
            general,
            held,
            MAX_HELD_SHAPES,
            stream,
            x,
            out,
            (rows, cols),
        )
    }

    /// `out[r] =` the index of the first maximal element of row r, in the order of
    /// [`row_max`](Self::row_max) (the first NaN wins; -0 equals +0; an empty row gives
    /// `u32::MAX`).
    pub fn row_argmax<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<u32>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        let kernels = T::kernels(self);
        let (general, held) = (&kernels.row_argmax, &kernels.row_argmax_held);
        self.row_reduce(
            "row_argmax",
            general,
            held,
            ARGMAX_HELD_SHAPES,
            stream,
            x,
            out,
            (rows, cols),
        )
    }
}
