//! Softmax over the rows of a row-major `[rows, cols]` tensor
//! (`device/kernels/src/softmax.rs`): numerically stable, f32 arithmetic. One workgroup per row.
//! A row of `k * PACK * block` elements (`k` in 4, 2, 1, the most that gives a block of whole
//! waves within the kernel's maximum) runs on the instance that holds exactly `k` chunks per
//! work-item; any other row on the general kernel, which reads a row of up to 32 elements per
//! work-item once and a longer one twice (online maximum and sum, then the outputs).

use super::Library;
use super::dtype::{Float, SOFTMAX_HELD_SHAPES};
use super::error::LibraryError;
use super::geometry::{self, check_holds, elements_of, row_shape};
use crate::device::{DeviceBuffer, Stream};

impl Library {
    /// `y[r][j] = e^(x[r][j] - m_r) / sum_k e^(x[r][k] - m_r)`, `m_r` the maximum of row r, for
    /// `x` and `y` of `[rows, cols]`. A row holding a NaN or `+inf`, or only `-inf`, gives NaN
    /// everywhere; `-inf` elements of other rows give 0.
    pub fn softmax<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        y: &mut DeviceBuffer<T>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "softmax";
        let elements = elements_of(OP, rows, cols)?;
        check_holds(OP, "x", x, "rows * cols", elements)?;
        check_holds(OP, "y", y, "rows * cols", elements)?;
        let shape = row_shape::<T>(OP, rows, cols)?;
        if elements == 0 {
            return Ok(());
        }
        let kernels = T::kernels(self);
        let (kernel, config) = geometry::held_or_general(
            &kernels.softmax,
            &kernels.softmax_held,
            SOFTMAX_HELD_SHAPES,
            self.device().properties(),
            shape.rows,
            cols,
            T::PACK,
        );
        // SAFETY: softmax_<t> (and softmax_<t>_c<k>, launched only for rows of exactly
        // k * PACK * block elements) reads x[0..rows * cols] and writes y[0..rows * cols], one
        // workgroup per row (rows shorter than 4 GiB, as checked); both buffers hold that many
        // elements, start 16-byte aligned and are distinct. The block is a multiple of the code
        // object's wave size and the dynamic LDS is what the kernel declares for it, as its
        // workgroup reductions need.
        unsafe { stream.launch(kernel, config, (x, y, shape.rows, shape.cols))? };
        Ok(())
    }
}
