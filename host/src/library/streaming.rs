//! Fill, copy and saxpy: flat kernels over arrays of 4-byte elements
//! (`device/kernels/src/elementwise.rs`), moving 4 elements per 16-byte access.

use super::Library;
use super::dtype::Word;
use super::error::LibraryError;
use super::geometry::{check_holds, flat, to_u32};
use crate::device::{DeviceBuffer, Stream};
use crate::launch::LaunchArg;

/// Elements per 16-byte access of the streaming kernels.
const WORDS_PER_ACCESS: usize = 4;

/// The launch argument of a device buffer of any element type.
fn buffer_arg<T>(buffer: &DeviceBuffer<T>) -> LaunchArg<'_> {
    LaunchArg::Buffer {
        address: buffer.address(),
        device: buffer.device(),
    }
}

impl Library {
    /// `out[i] = value` for `i < n`, for any 4-byte element type.
    pub fn fill<T: Word>(
        &self,
        stream: &Stream,
        out: &mut DeviceBuffer<T>,
        value: T,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "fill";
        check_holds(OP, "out", out, "n", n)?;
        let count = to_u32(OP, "n", n, u32::MAX)?;
        if n == 0 {
            return Ok(());
        }
        let kernel = self.kernels.streaming.fill.kernel();
        let config = flat(n, WORDS_PER_ACCESS);
        let args = [
            buffer_arg(out),
            LaunchArg::value(&value.bits().to_le_bytes()),
            LaunchArg::value(&count.to_le_bytes()),
        ];
        // SAFETY: fill_u32 writes 4-byte elements 0..n of its buffer and nothing else; `out`
        // holds at least n elements of 4 bytes (every `Word` is 4 bytes) and starts 16-byte
        // aligned, as every device allocation does, which its 16-byte stores need.
        unsafe { stream.launch_untyped(kernel, config, &args)? };
        Ok(())
    }

    /// `dst[i] = src[i]` for `i < n`, for any 4-byte element type.
    pub fn copy<T: Word>(
        &self,
        stream: &Stream,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "copy";
        check_holds(OP, "src", src, "n", n)?;
        check_holds(OP, "dst", dst, "n", n)?;
        let count = to_u32(OP, "n", n, u32::MAX)?;
        if n == 0 {
            return Ok(());
        }
        let kernel = self.kernels.streaming.copy.kernel();
        let config = flat(n, WORDS_PER_ACCESS);
        let args = [
            buffer_arg(src),
            buffer_arg(dst),
            LaunchArg::value(&count.to_le_bytes()),
        ];
        // SAFETY: copy_u32 reads elements 0..n of `src` and writes elements 0..n of `dst`, 4
        // bytes each; both hold at least n 4-byte elements, start 16-byte aligned (device
        // allocations do) and are distinct (one is borrowed mutably).
        unsafe { stream.launch_untyped(kernel, config, &args)? };
        Ok(())
    }

    /// `y[i] = alpha * x[i] + y[i]` for `i < n`, with one rounding (fused multiply-add).
    pub fn saxpy(
        &self,
        stream: &Stream,
        alpha: f32,
        x: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "saxpy";
        check_holds(OP, "x", x, "n", n)?;
        check_holds(OP, "y", y, "n", n)?;
        let count = to_u32(OP, "n", n, u32::MAX)?;
        if n == 0 {
            return Ok(());
        }
        let config = flat(n, WORDS_PER_ACCESS);
        // SAFETY: saxpy_f32 reads x[0..n] and updates y[0..n]; both hold at least n elements,
        // start 16-byte aligned (device allocations do) and are distinct.
        unsafe { stream.launch(&self.kernels.streaming.saxpy, config, (alpha, x, y, count))? };
        Ok(())
    }
}
