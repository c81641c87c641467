//! Elementwise arithmetic and activations over f32, f16 and bf16
//! (`device/kernels/src/elementwise_float.rs`, and `add_f32` of `elementwise.rs`): computed in
//! f32, rounded once to the element type.

use super::Library;
use super::dtype::{Binary, Float, Unary};
use super::error::LibraryError;
use super::geometry::{check_holds, flat, to_u32};
use crate::device::{DeviceBuffer, Stream, TypedKernel};
use crate::launch::LaunchConfig;

impl Library {
    /// The checked element count and geometry of an elementwise launch over `n` elements, or
    /// `None` when there is nothing to do; `inputs` are named for messages.
    fn elementwise_launch<T: Float>(
        &self,
        operation: &'static str,
        inputs: &[(&'static str, &DeviceBuffer<T>)],
        output: &DeviceBuffer<T>,
        n: usize,
    ) -> Result<Option<(u32, LaunchConfig)>, LibraryError> {
        for (name, buffer) in inputs {
            check_holds(operation, name, buffer, "n", n)?;
        }
        check_holds(operation, "out", output, "n", n)?;
        let count = to_u32(operation, "n", n, u32::MAX)?;
        if n == 0 {
            return Ok(None);
        }
        let config = flat(n, T::PACK);
        Ok(Some((count, config)))
    }

    /// Launches a one-input elementwise kernel.
    fn unary<T: Float>(
        &self,
        operation: &'static str,
        kernel: &TypedKernel<Unary<T>>,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        if let Some((count, config)) = self.elementwise_launch(operation, &[("x", x)], out, n)? {
            // SAFETY: the kernel reads x[0..n] and writes out[0..n]; both hold at least n
            // elements, start 16-byte aligned (device allocations do) and are distinct.
            unsafe { stream.launch(kernel, config, (x, out, count))? };
        }
        Ok(())
    }

    /// Launches a two-input elementwise kernel.
    fn binary<T: Float>(
        &self,
        operation: &'static str,
        kernel: &TypedKernel<Binary<T>>,
        stream: &Stream,
        (a, b): (&DeviceBuffer<T>, &DeviceBuffer<T>),
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        let inputs = [("a", a), ("b", b)];
        if let Some((count, config)) = self.elementwise_launch(operation, &inputs, out, n)? {
            // SAFETY: the kernel reads a[0..n] and b[0..n] and writes out[0..n]; all hold at
            // least n elements and start 16-byte aligned; out is distinct from the inputs.
            unsafe { stream.launch(kernel, config, (a, b, out, count))? };
        }
        Ok(())
    }

    /// `out[i] = a[i] + b[i]` for `i < n`.
    pub fn add<T: Float>(
        &self,
        stream: &Stream,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        self.binary("add", &T::kernels(self).add, stream, (a, b), out, n)
    }

    /// `out[i] = a[i] * b[i]` for `i < n`.
    pub fn mul<T: Float>(
        &self,
        stream: &Stream,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        self.binary("mul", &T::kernels(self).mul, stream, (a, b), out, n)
    }

    /// `out[i] = a[i] * b[i] + c[i]` for `i < n`, fused (one f32 rounding, then one to `T`).
    pub fn fma<T: Float>(
        &self,
        stream: &Stream,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        let inputs = [("a", a), ("b", b), ("c", c)];
        if let Some((count, config)) = self.elementwise_launch("fma", &inputs, out, n)? {
            // SAFETY: fma_<t> reads a, b, c [0..n] and writes out[0..n]; all hold at least n
            // elements and start 16-byte aligned; out is distinct from the inputs.
            unsafe { stream.launch(&T::kernels(self).fma, config, (a, b, c, out, count))? };
        }
        Ok(())
    }

    /// `out[i] = alpha * x[i]` for `i < n` (alpha in f32).
    pub fn scale<T: Float>(
        &self,
        stream: &Stream,
        alpha: f32,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        if let Some((count, config)) = self.elementwise_launch("scale", &[("x", x)], out, n)? {
            // SAFETY: scale_<t> reads x[0..n] and writes out[0..n]; both hold at least n
            // elements, start 16-byte aligned and are distinct.
            unsafe { stream.launch(&T::kernels(self).scale, config, (alpha, x, out, count))? };
        }
        Ok(())
    }

    /// `out[i] = relu(x[i]) = x < 0 ? 0 : x` for `i < n` (NaN stays NaN).
    pub fn relu<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        self.unary("relu", &T::kernels(self).relu, stream, x, out, n)
    }

    /// `out[i] = silu(x[i]) = x / (1 + e^-x)` for `i < n` (`silu(-inf)` is NaN).
    pub fn silu<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        self.unary("silu", &T::kernels(self).silu, stream, x, out, n)
    }

    /// `out[i] = gelu(x[i])`, tanh form `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, for
    /// `i < n` (`gelu(-inf)` is NaN).
    pub fn gelu<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        self.unary("gelu", &T::kernels(self).gelu, stream, x, out, n)
    }
}
