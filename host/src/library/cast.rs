//! Type conversions of flat arrays (`device/kernels/src/cast.rs`): f32 to and from f16 and bf16
//! ([`Library::cast`]), and f32, f16 or bf16 to the four FP8 formats
//! ([`Library::cast_to_fp8`]). Every conversion rounds to nearest, ties to even.

use bytemuck::Pod;

use super::Library;
use super::dtype::{Convert, Float, Fp8Format, bf16, f16};
use super::error::LibraryError;
use super::geometry::{check_holds, flat, to_u32};
use crate::device::{DeviceBuffer, Stream, TypedKernel};

/// Elements per work-item chunk of the casts between f32 and 16-bit floats.
const WIDE_CHUNK: usize = 8;
/// Elements per work-item chunk of the casts to FP8.
const FP8_CHUNK: usize = 16;

/// A conversion [`Library::cast`] performs: from `Self` to `O` (f32 to f16 or bf16, and back).
pub trait CastTo<O: Pod>: Pod + sealed::CastKernel<O> {}

impl CastTo<f16> for f32 {}
impl CastTo<f32> for f16 {}
impl CastTo<bf16> for f32 {}
impl CastTo<f32> for bf16 {}

pub(crate) mod sealed {
    use super::*;

    /// Where the kernel of a conversion is.
    pub trait CastKernel<O>: Sized + 'static {
        /// The conversion's name, e.g. `f32 to f16`, for messages.
        const NAME: &'static str;
        /// The resolved kernel in `library`.
        fn kernel(library: &Library) -> &TypedKernel<Convert<Self, O>>;
    }

    impl CastKernel<f16> for f32 {
        const NAME: &'static str = "cast f32 to f16";
        fn kernel(library: &Library) -> &TypedKernel<Convert<f32, f16>> {
            &library.kernels.casts.f32_to_f16
        }
    }

    impl CastKernel<f32> for f16 {
        const NAME: &'static str = "cast f16 to f32";
        fn kernel(library: &Library) -> &TypedKernel<Convert<f16, f32>> {
            &library.kernels.casts.f16_to_f32
        }
    }

    impl CastKernel<bf16> for f32 {
        const NAME: &'static str = "cast f32 to bf16";
        fn kernel(library: &Library) -> &TypedKernel<Convert<f32, bf16>> {
            &library.kernels.casts.f32_to_bf16
        }
    }

    impl CastKernel<f32> for bf16 {
        const NAME: &'static str = "cast bf16 to f32";
        fn kernel(library: &Library) -> &TypedKernel<Convert<bf16, f32>> {
            &library.kernels.casts.bf16_to_f32
        }
    }
}

impl Library {
    /// Launches a cast kernel over `n` elements, `chunk` elements per work-item.
    fn launch_cast<I: Pod, O: Pod>(
        &self,
        operation: &'static str,
        kernel: &TypedKernel<Convert<I, O>>,
        stream: &Stream,
        (x, y): (&DeviceBuffer<I>, &mut DeviceBuffer<O>),
        n: usize,
        chunk: usize,
    ) -> Result<(), LibraryError> {
        check_holds(operation, "x", x, "n", n)?;
        check_holds(operation, "y", y, "n", n)?;
        let count = to_u32(operation, "n", n, u32::MAX)?;
        if n == 0 {
            return Ok(());
        }
        let config = flat(n, chunk);
        // SAFETY: the cast reads x[0..n] and writes y[0..n] (16-byte accesses over whole
        // chunks, single elements for the rest); both hold at least n elements, start 16-byte
        // aligned (device allocations do) and are distinct.
        unsafe { stream.launch(kernel, config, (x, y, count))? };
        Ok(())
    }

    /// `y[i] = x[i]` converted, for `i < n`: f32 to f16 or bf16 (nearest even; overflow gives
    /// infinity; NaN stays NaN), or f16/bf16 to f32 (exact).
    pub fn cast<I: CastTo<O>, O: Pod>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<I>,
        y: &mut DeviceBuffer<O>,
        n: usize,
    ) -> Result<(), LibraryError> {
        let kernel = I::kernel(self);
        self.launch_cast(I::NAME, kernel, stream, (x, y), n, WIDE_CHUNK)
    }

    /// `y[i] =` the FP8 code of `x[i]` in `format`, for `i < n`: nearest even, saturating
    /// (finite overflow and infinities become `±max`), NaN the format's NaN, and no -0 in the
    /// FNUZ formats.
    pub fn cast_to_fp8<T: Float>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        y: &mut DeviceBuffer<u8>,
        format: Fp8Format,
        n: usize,
    ) -> Result<(), LibraryError> {
        let kernel = &T::kernels(self).to_fp8[format.index()];
        self.launch_cast("cast_to_fp8", kernel, stream, (x, y), n, FP8_CHUNK)
    }
}
