//! Dequantization to f16 and bf16, and of plain FP8 tensors with a per-tensor f32 scale
//! (`device/kernels/src/dequant_half.rs`): block formats decode and scale exactly as
//! [`Library::dequant`] does (with the same launch geometry: one work-item per 16-byte load of
//! codes) and round once to the 16-bit type; plain FP8 codes of any of the four [`Fp8Format`]s
//! become `decode(code) * scale` in f32, f16 or bf16, 16 per work-item and step.

use iron_kernels::dequant_half as k;
use iron_quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};

use super::Library;
use super::dequant::{DequantFormat, DeviceQuantizedTensor, dequant_launch};
use super::dtype::{Fp8Format, bf16, f16};
use super::error::LibraryError;
use super::geometry::{STREAMING_BLOCK, check_holds, streaming, to_u32};
use crate::device::{DeviceBuffer, DeviceError, Module, Stream, TypedKernel};
use crate::launch::LaunchConfig;

/// The signature of an MX-layout dequantization kernel writing `T`.
type MxFn<T> = fn(*const u8, *const u8, *mut T, u32);
/// The signature of an NVFP4 dequantization kernel writing `T`.
type Nvfp4Fn<T> = fn(*const u8, *const u8, f32, *mut T, u32);
/// The signature of a plain FP8 dequantization kernel writing `T`.
type PlainFn<T> = fn(*const u8, f32, *mut T, u32);

/// Declares the table of kernels and its resolution.
macro_rules! dequant_table {
    ($($field:ident: $sig:ty = $decl:ident),* $(,)?) => {
        /// The dequantization kernels to f16 and bf16, and the plain FP8 ones.
        pub(crate) struct DequantHalfKernels {
            $($field: TypedKernel<$sig>,)*
        }

        impl DequantHalfKernels {
            /// Resolves the kernels of `module`.
            pub(crate) fn resolve(module: &Module) -> Result<DequantHalfKernels, DeviceError> {
                Ok(DequantHalfKernels { $($field: module.kernel(k::$decl)?,)* })
            }
        }
    };
}

dequant_table!(
    mxfp4_f16: MxFn<f16> = dequant_mxfp4_f16,
    mxfp4_bf16: MxFn<bf16> = dequant_mxfp4_bf16,
    mxfp6_e2m3_f16: MxFn<f16> = dequant_mxfp6_e2m3_f16,
    mxfp6_e2m3_bf16: MxFn<bf16> = dequant_mxfp6_e2m3_bf16,
    mxfp6_e3m2_f16: MxFn<f16> = dequant_mxfp6_e3m2_f16,
    mxfp6_e3m2_bf16: MxFn<bf16> = dequant_mxfp6_e3m2_bf16,
    mxfp8_e4m3_f16: MxFn<f16> = dequant_mxfp8_e4m3_f16,
    mxfp8_e4m3_bf16: MxFn<bf16> = dequant_mxfp8_e4m3_bf16,
    mxfp8_e5m2_f16: MxFn<f16> = dequant_mxfp8_e5m2_f16,
    mxfp8_e5m2_bf16: MxFn<bf16> = dequant_mxfp8_e5m2_bf16,
    mxint8_f16: MxFn<f16> = dequant_mxint8_f16,
    mxint8_bf16: MxFn<bf16> = dequant_mxint8_bf16,
    nvfp4_f16: Nvfp4Fn<f16> = dequant_nvfp4_f16,
    nvfp4_bf16: Nvfp4Fn<bf16> = dequant_nvfp4_bf16,
    fp8_e4m3fn_f32: PlainFn<f32> = dequant_fp8_e4m3fn_f32,
    fp8_e4m3fn_f16: PlainFn<f16> = dequant_fp8_e4m3fn_f16,
    fp8_e4m3fn_bf16: PlainFn<bf16> = dequant_fp8_e4m3fn_bf16,
    fp8_e5m2_f32: PlainFn<f32> = dequant_fp8_e5m2_f32,
    fp8_e5m2_f16: PlainFn<f16> = dequant_fp8_e5m2_f16,
    fp8_e5m2_bf16: PlainFn<bf16> = dequant_fp8_e5m2_bf16,
    fp8_e4m3fnuz_f32: PlainFn<f32> = dequant_fp8_e4m3fnuz_f32,
    fp8_e4m3fnuz_f16: PlainFn<f16> = dequant_fp8_e4m3fnuz_f16,
    fp8_e4m3fnuz_bf16: PlainFn<bf16> = dequant_fp8_e4m3fnuz_bf16,
    fp8_e5m2fnuz_f32: PlainFn<f32> = dequant_fp8_e5m2fnuz_f32,
    fp8_e5m2fnuz_f16: PlainFn<f16> = dequant_fp8_e5m2fnuz_f16,
    fp8_e5m2fnuz_bf16: PlainFn<bf16> = dequant_fp8_e5m2fnuz_bf16,
);

/// A block format [`Library::dequant_half`] decodes to `T` (f16 or bf16): every format of
/// [`DequantFormat`].
pub trait DequantHalf<T>: DequantFormat + sealed::HalfKernel<T> {}

/// An output type of [`Library::dequant_fp8`]: f32, f16, bf16.
pub trait Fp8Dequant: bytemuck::Pod + sealed::PlainKernels {}

impl Fp8Dequant for f32 {}
impl Fp8Dequant for f16 {}
impl Fp8Dequant for bf16 {}

pub(crate) mod sealed {
    use super::*;

    /// How a block format's kernel to `T` is launched.
    pub trait HalfKernel<T>: Sized {
        /// Launches the kernel over `blocks` blocks of `tensor` into `out`.
        ///
        /// # Safety
        /// As for `DequantKernel::launch`: `tensor` holds `blocks` blocks, `out` at least
        /// `blocks * BLOCK_LEN` elements, and the units plus the grid stay below 2^32.
        unsafe fn launch(
            library: &Library,
            stream: &Stream,
            config: LaunchConfig,
            tensor: &DeviceQuantizedTensor<Self>,
            out: &mut DeviceBuffer<T>,
            blocks: u32,
        ) -> Result<(), DeviceError>;
    }

    /// The plain FP8 kernels writing `Self`.
    pub trait PlainKernels: Sized {
        /// The kernel for codes of `format`.
        fn plain_kernel(library: &Library, format: Fp8Format) -> &TypedKernel<PlainFn<Self>>;
    }

    macro_rules! mx_half {
        ($($format:ty, $t:ty => $field:ident;)*) => {$(
            impl HalfKernel<$t> for $format {
                unsafe fn launch(
                    library: &Library,
                    stream: &Stream,
                    config: LaunchConfig,
                    tensor: &DeviceQuantizedTensor<Self>,
                    out: &mut DeviceBuffer<$t>,
                    blocks: u32,
                ) -> Result<(), DeviceError> {
                    let kernel = &library.kernels.dequant_half.$field;
                    let args = (tensor.elements(), tensor.scales(), out, blocks);
                    // SAFETY: as the caller guarantees.
                    unsafe { stream.launch(kernel, config, args) }
                }
            }
            impl DequantHalf<$t> for $format {}
        )*};
    }

    mx_half!(
        MxFp4, f16 => mxfp4_f16;
        MxFp4, bf16 => mxfp4_bf16;
        MxFp6E2M3, f16 => mxfp6_e2m3_f16;
        MxFp6E2M3, bf16 => mxfp6_e2m3_bf16;
        MxFp6E3M2, f16 => mxfp6_e3m2_f16;
        MxFp6E3M2, bf16 => mxfp6_e3m2_bf16;
        MxFp8E4M3, f16 => mxfp8_e4m3_f16;
        MxFp8E4M3, bf16 => mxfp8_e4m3_bf16;
        MxFp8E5M2, f16 => mxfp8_e5m2_f16;
        MxFp8E5M2, bf16 => mxfp8_e5m2_bf16;
        MxInt8, f16 => mxint8_f16;
        MxInt8, bf16 => mxint8_bf16;
    );

    macro_rules! nvfp4_half {
        ($($t:ty => $field:ident;)*) => {$(
            impl HalfKernel<$t> for Nvfp4 {
                unsafe fn launch(
                    library: &Library,
                    stream: &Stream,
                    config: LaunchConfig,
                    tensor: &DeviceQuantizedTensor<Self>,
                    out: &mut DeviceBuffer<$t>,
                    blocks: u32,
                ) -> Result<(), DeviceError> {
                    let kernel = &library.kernels.dequant_half.$field;
                    let scale = tensor.tensor_scale();
                    let args = (tensor.elements(), tensor.scales(), scale, out, blocks);
                    // SAFETY: as the caller guarantees.
                    unsafe { stream.launch(kernel, config, args) }
                }
            }
            impl DequantHalf<$t> for Nvfp4 {}
        )*};
    }

    nvfp4_half!(
        f16 => nvfp4_f16;
        bf16 => nvfp4_bf16;
    );

    macro_rules! plain {
        ($($t:ty => [$e4m3:ident, $e5m2:ident, $e4m3z:ident, $e5m2z:ident];)*) => {$(
            impl PlainKernels for $t {
                fn plain_kernel(
                    library: &Library,
                    format: Fp8Format,
                ) -> &TypedKernel<PlainFn<$t>> {
                    let kernels = &library.kernels.dequant_half;
                    match format {
                        Fp8Format::E4M3Fn => &kernels.$e4m3,
                        Fp8Format::E5M2 => &kernels.$e5m2,
                        Fp8Format::E4M3Fnuz => &kernels.$e4m3z,
                        Fp8Format::E5M2Fnuz => &kernels.$e5m2z,
                    }
                }
            }
        )*};
    }

    plain!(
        f32 => [fp8_e4m3fn_f32, fp8_e5m2_f32, fp8_e4m3fnuz_f32, fp8_e5m2fnuz_f32];
        f16 => [fp8_e4m3fn_f16, fp8_e5m2_f16, fp8_e4m3fnuz_f16, fp8_e5m2fnuz_f16];
        bf16 => [fp8_e4m3fn_bf16, fp8_e5m2_bf16, fp8_e4m3fnuz_bf16, fp8_e5m2fnuz_bf16];
    );
}

/// Elements a work-item of the plain FP8 kernels decodes per step.
const ELEMENTS_PER_WORKITEM: usize = 16;

impl Library {
    /// Decodes `tensor` into `out` as row-major `[rows, cols]` f16 or bf16 (`out` holds at
    /// least `rows * cols` elements): `element * scale` (times the tensor scale for NVFP4) in
    /// f32, rounded once to `T`.
    pub fn dequant_half<B: DequantHalf<T>, T>(
        &self,
        stream: &Stream,
        tensor: &DeviceQuantizedTensor<B>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<(), LibraryError> {
        const OP: &str = "dequant_half";
        let elements = tensor.rows() * tensor.cols();
        check_holds(OP, "out", out, "rows * cols", elements)?;
        let blocks = tensor.blocks();
        if blocks == 0 {
            return Ok(());
        }
        let config = dequant_launch::<B>(self, OP, elements)?;
        let count = to_u32(OP, "blocks", blocks, u32::MAX)?;
        // SAFETY: the tensor's constructor checked that its buffers hold all its blocks and
        // their scale codes and start 16-byte aligned; out holds rows * cols elements and is
        // distinct from them; the units plus the grid's work-items stay below 2^32, as checked.
        unsafe { <B as sealed::HalfKernel<T>>::launch(self, stream, config, tensor, out, count)? };
        Ok(())
    }

    /// `out[i] = decode(codes[i]) * scale` for `i < n` FP8 codes of `format`: the product
    /// rounded to f32, then (for f16 and bf16) to `T`.
    pub fn dequant_fp8<T: Fp8Dequant>(
        &self,
        stream: &Stream,
        format: Fp8Format,
        codes: &DeviceBuffer<u8>,
        scale: f32,
        out: &mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "dequant_fp8";
        check_holds(OP, "codes", codes, "n", n)?;
        check_holds(OP, "out", out, "n", n)?;
        let config = streaming(
            self.device().properties(),
            n / ELEMENTS_PER_WORKITEM + ELEMENTS_PER_WORKITEM,
        );
        let threads = config.grid[0].saturating_mul(STREAMING_BLOCK);
        let count = to_u32(OP, "n", n, u32::MAX)?;
        to_u32(
            OP,
            "n / 16",
            n / ELEMENTS_PER_WORKITEM,
            u32::MAX.saturating_sub(threads),
        )?;
        if n == 0 {
            return Ok(());
        }
        let kernel = T::plain_kernel(self, format);
        // SAFETY: the kernel reads codes[0..n] and writes out[0..n]; both hold n elements,
        // start 16-byte aligned (device allocations do) and are distinct; its unit index plus
        // the grid's work-items stays below 2^32, as checked, and the grid has at least the 16
        // work-items the tail needs.
        unsafe { stream.launch(kernel, config, (codes, scale, out, count))? };
        Ok(())
    }
}
