//! Row normalizations of a row-major `[rows, cols]` tensor (`device/kernels/src/norm.rs`):
//! RMSNorm and LayerNorm, f32 accumulation, `weight` (and `bias`) of `cols` elements applied to
//! every row. One workgroup per row. A row of `k * PACK * block` elements runs on an instance
//! that holds exactly `k` chunks per work-item: the one-wave instance when the block is one wave
//! (`k` in 16, 8, 4), else the one with the most chunks (`k` in 16, 8, 4, 2, 1) that gives a block
//! of whole waves within the kernel's maximum of 512; any other row on the general kernel, which
//! reads a row of up to 32 elements per work-item once.

use super::Library;
use super::dtype::{Float, NORM_HELD_SHAPES};
use super::error::LibraryError;
use super::geometry::{self, RowShape, check_holds, elements_of, row_shape};
use crate::device::{DeviceBuffer, Stream};

impl Library {
    /// Checks a norm's buffers against `[rows, cols]`: the shape to launch, or `None` when
    /// there is nothing to write.
    fn norm_shape<T: Float>(
        &self,
        operation: &'static str,
        x: &DeviceBuffer<T>,
        row_operands: &[(&'static str, &DeviceBuffer<T>)],
        y: &DeviceBuffer<T>,
        (rows, cols): (usize, usize),
    ) -> Result<Option<RowShape>, LibraryError> {
        let elements = elements_of(operation, rows, cols)?;
        check_holds(operation, "x", x, "rows * cols", elements)?;
        for (name, buffer) in row_operands {
            check_holds(operation, name, buffer, "cols", cols)?;
        }
        check_holds(operation, "y", y, "rows * cols", elements)?;
        let shape = row_shape::<T>(operation, rows, cols)?;
        Ok((elements > 0).then_some(shape))
    }

    /// RMSNorm of each row: `y = x / sqrt(mean(x^2) + eps) * weight`, with `x` and `y`
    /// `[rows, cols]` and `weight` of `cols` elements.
    #[allow(
        clippy::too_many_arguments,
        reason = "the norm's operands and its shape"
    )]
    pub fn rmsnorm<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        weight: &DeviceBuffer<T>,
        eps: f32,
        y: &mut DeviceBuffer<T>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        let operands = [("weight", weight)];
        let Some(RowShape { rows, cols }) =
            self.norm_shape("rmsnorm", x, &operands, y, (rows, cols))?
        else {
            return Ok(());
        };
        let kernels = T::kernels(self);
        let device = self.device().properties();
        let (kernel, config) = geometry::held_or_general(
            &kernels.rmsnorm,
            &kernels.rmsnorm_held,
            NORM_HELD_SHAPES,
            device,
            rows,
            cols as usize,
            T::PACK,
        );
        // SAFETY: rmsnorm_<t> (and rmsnorm_<t>_c<k>, launched only for rows of exactly
        // k * PACK * block elements) reads x[0..rows * cols] and weight[0..cols] and writes
        // y[0..rows * cols], one workgroup per row; every buffer holds what the shape needs,
        // starts 16-byte aligned and y is distinct from the inputs; rows are shorter than 4 GiB.
        // The block is a multiple of the code object's wave size and the dynamic LDS is what the
        // kernel declares for it, as its workgroup reductions need.
        unsafe { stream.launch(kernel, config, (x, weight, y, rows, cols, eps))? };
        Ok(())
    }

    /// LayerNorm of each row: `y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias` with the
    /// biased variance, `x` and `y` `[rows, cols]`, `weight` and `bias` of `cols` elements.
    #[allow(
        clippy::too_many_arguments,
        reason = "the norm's operands and its shape"
    )]
    pub fn layernorm<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        weight: &DeviceBuffer<T>,
        bias: &DeviceBuffer<T>,
        eps: f32,
        y: &mut DeviceBuffer<T>,
        rows: usize,
        cols: usize,
    ) -> Result<(), LibraryError> {
        let operands = [("weight", weight), ("bias", bias)];
        let Some(RowShape { rows, cols }) =
            self.norm_shape("layernorm", x, &operands, y, (rows, cols))?
        else {
            return Ok(());
        };
        let kernels = T::kernels(self);
        let device = self.device().properties();
        let (kernel, config) = geometry::held_or_general(
            &kernels.layernorm,
            &kernels.layernorm_held,
            NORM_HELD_SHAPES,
            device,
            rows,
            cols as usize,
            T::PACK,
        );
        // SAFETY: layernorm_<t> reads x[0..rows * cols], weight[0..cols] and bias[0..cols]
        // and writes y[0..rows * cols], one workgroup per row; as for rmsnorm above.
        unsafe { stream.launch(kernel, config, (x, weight, bias, y, rows, cols, eps))? };
        Ok(())
    }
}
