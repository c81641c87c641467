//! Quantized matrix-vector products (`device/kernels/src/qgemv.rs`): `y = W x` for a quantized
//! `W` `[m, k]` and `1 <= batch <= 8` input vectors `x` `[batch, k]`, giving `y` `[batch, m]`,
//! with f32 accumulation. One wave per row of `W`, reading it once for the whole batch; `x`
//! staged in LDS.
//!
//! Weights are a [`DeviceQuantizedTensor`] of any block format ([`Library::qgemv`]), or plain
//! FP8 codes with one f32 scale per row ([`Library::qgemv_fp8`]). The input and output types
//! with a kernel: x in f32, f16 or bf16 with y in f32 for every format; and x and y both f16 or
//! both bf16 for MXFP4, FP8 E4M3FN and FP8 E5M2 ([`Qgemv`], [`Fp8Gemv`]).

use iron_kernels::qgemv as k;
use iron_quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};

use super::Library;
use super::dequant::{DequantFormat, DeviceQuantizedTensor};
use super::dtype::{Fp8Format, bf16, f16};
use super::error::LibraryError;
use super::geometry::{check_holds, elements_of, to_u32};
use crate::device::{DeviceBuffer, DeviceError, Module, Stream, TypedKernel};
use crate::launch::LaunchConfig;

/// The signature of an MX-format GEMV kernel.
type MxFn<X, Y> = fn(*const u8, *const u8, *const X, *mut Y, u32, u32, u32);
/// The signature of an NVFP4 GEMV kernel.
type Nvfp4Fn<X, Y> = fn(*const u8, *const u8, f32, *const X, *mut Y, u32, u32, u32);
/// The signature of a plain FP8 GEMV kernel.
type Fp8Fn<X, Y> = fn(*const u8, *const f32, *const X, *mut Y, u32, u32, u32);

/// Declares the table of GEMV kernels and its resolution.
macro_rules! gemv_table {
    ($($field:ident: $sig:ty = $decl:ident),* $(,)?) => {
        /// Every quantized GEMV kernel.
        pub(crate) struct QgemvKernels {
            $($field: TypedKernel<$sig>,)*
        }

        impl QgemvKernels {
            /// Resolves every GEMV kernel of `module`.
            pub(crate) fn resolve(module: &Module) -> Result<QgemvKernels, DeviceError> {
                Ok(QgemvKernels { $($field: module.kernel(k::$decl)?,)* })
            }
        }
    };
}

gemv_table!(
    mxfp4_f32_f32: MxFn<f32, f32> = qgemv_mxfp4_f32_f32,
    mxfp4_f16_f32: MxFn<f16, f32> = qgemv_mxfp4_f16_f32,
    mxfp4_bf16_f32: MxFn<bf16, f32> = qgemv_mxfp4_bf16_f32,
    mxfp4_f16_f16: MxFn<f16, f16> = qgemv_mxfp4_f16_f16,
    mxfp4_bf16_bf16: MxFn<bf16, bf16> = qgemv_mxfp4_bf16_bf16,
    mxfp6_e2m3_f32_f32: MxFn<f32, f32> = qgemv_mxfp6_e2m3_f32_f32,
    mxfp6_e2m3_f16_f32: MxFn<f16, f32> = qgemv_mxfp6_e2m3_f16_f32,
    mxfp6_e2m3_bf16_f32: MxFn<bf16, f32> = qgemv_mxfp6_e2m3_bf16_f32,
    mxfp6_e3m2_f32_f32: MxFn<f32, f32> = qgemv_mxfp6_e3m2_f32_f32,
    mxfp6_e3m2_f16_f32: MxFn<f16, f32> = qgemv_mxfp6_e3m2_f16_f32,
    mxfp6_e3m2_bf16_f32: MxFn<bf16, f32> = qgemv_mxfp6_e3m2_bf16_f32,
    mxfp8_e4m3_f32_f32: MxFn<f32, f32> = qgemv_mxfp8_e4m3_f32_f32,
    mxfp8_e4m3_f16_f32: MxFn<f16, f32> = qgemv_mxfp8_e4m3_f16_f32,
    mxfp8_e4m3_bf16_f32: MxFn<bf16, f32> = qgemv_mxfp8_e4m3_bf16_f32,
    mxfp8_e5m2_f32_f32: MxFn<f32, f32> = qgemv_mxfp8_e5m2_f32_f32,
    mxfp8_e5m2_f16_f32: MxFn<f16, f32> = qgemv_mxfp8_e5m2_f16_f32,
    mxfp8_e5m2_bf16_f32: MxFn<bf16, f32> = qgemv_mxfp8_e5m2_bf16_f32,
    mxint8_f32_f32: MxFn<f32, f32> = qgemv_mxint8_f32_f32,
    mxint8_f16_f32: MxFn<f16, f32> = qgemv_mxint8_f16_f32,
    mxint8_bf16_f32: MxFn<bf16, f32> = qgemv_mxint8_bf16_f32,
    nvfp4_f32_f32: Nvfp4Fn<f32, f32> = qgemv_nvfp4_f32_f32,
    nvfp4_f16_f32: Nvfp4Fn<f16, f32> = qgemv_nvfp4_f16_f32,
    nvfp4_bf16_f32: Nvfp4Fn<bf16, f32> = qgemv_nvfp4_bf16_f32,
    fp8_e4m3fn_f32_f32: Fp8Fn<f32, f32> = qgemv_fp8_e4m3fn_f32_f32,
    fp8_e4m3fn_f16_f32: Fp8Fn<f16, f32> = qgemv_fp8_e4m3fn_f16_f32,
    fp8_e4m3fn_bf16_f32: Fp8Fn<bf16, f32> = qgemv_fp8_e4m3fn_bf16_f32,
    fp8_e4m3fn_f16_f16: Fp8Fn<f16, f16> = qgemv_fp8_e4m3fn_f16_f16,
    fp8_e4m3fn_bf16_bf16: Fp8Fn<bf16, bf16> = qgemv_fp8_e4m3fn_bf16_bf16,
    fp8_e5m2_f32_f32: Fp8Fn<f32, f32> = qgemv_fp8_e5m2_f32_f32,
    fp8_e5m2_f16_f32: Fp8Fn<f16, f32> = qgemv_fp8_e5m2_f16_f32,
    fp8_e5m2_bf16_f32: Fp8Fn<bf16, f32> = qgemv_fp8_e5m2_bf16_f32,
    fp8_e5m2_f16_f16: Fp8Fn<f16, f16> = qgemv_fp8_e5m2_f16_f16,
    fp8_e5m2_bf16_bf16: Fp8Fn<bf16, bf16> = qgemv_fp8_e5m2_bf16_bf16,
    fp8_e4m3fnuz_f32_f32: Fp8Fn<f32, f32> = qgemv_fp8_e4m3fnuz_f32_f32,
    fp8_e4m3fnuz_f16_f32: Fp8Fn<f16, f32> = qgemv_fp8_e4m3fnuz_f16_f32,
    fp8_e4m3fnuz_bf16_f32: Fp8Fn<bf16, f32> = qgemv_fp8_e4m3fnuz_bf16_f32,
    fp8_e5m2fnuz_f32_f32: Fp8Fn<f32, f32> = qgemv_fp8_e5m2fnuz_f32_f32,
    fp8_e5m2fnuz_f16_f32: Fp8Fn<f16, f32> = qgemv_fp8_e5m2fnuz_f16_f32,
    fp8_e5m2fnuz_bf16_f32: Fp8Fn<bf16, f32> = qgemv_fp8_e5m2fnuz_bf16_f32,
);

/// A block format with a GEMV kernel taking `x` of type `X` and writing `y` of type `Y`.
pub trait Qgemv<X, Y>: DequantFormat + sealed::GemvKernel<X, Y> {}

/// The input types with plain FP8 GEMV kernels writing `Y`: f32, f16, bf16 to f32 for every
/// FP8 format, and f16 to f16, bf16 to bf16 for E4M3FN and E5M2.
pub trait Fp8Gemv<Y>: bytemuck::Pod + sealed::Fp8Kernels<Y> {}

impl Fp8Gemv<f32> for f32 {}
impl Fp8Gemv<f32> for f16 {}
impl Fp8Gemv<f32> for bf16 {}
impl Fp8Gemv<f16> for f16 {}
impl Fp8Gemv<bf16> for bf16 {}

/// What a GEMV launch is given besides its weights (an implementation detail of the sealed
/// launch traits).
pub struct GemvOperands<'a, X, Y> {
    x: &'a DeviceBuffer<X>,
    y: &'a mut DeviceBuffer<Y>,
    m: u32,
    k: u32,
    batch: u32,
}

pub(crate) mod sealed {
    use super::*;

    /// How a block format's GEMV kernel for `X` and `Y` is launched.
    pub trait GemvKernel<X, Y>: Sized {
        /// Launches the kernel with weights `w`.
        ///
        /// # Safety
        /// `w` must be `[m, k]`, `x` hold `batch * k` and `y` `batch * m` elements, and
        /// `config` must follow the kernel's launch rules.
        unsafe fn launch(
            library: &Library,
            stream: &Stream,
            config: LaunchConfig,
            w: &DeviceQuantizedTensor<Self>,
            operands: GemvOperands<'_, X, Y>,
        ) -> Result<(), DeviceError>;
    }

    /// The plain FP8 GEMV kernels for inputs `Self` and outputs `Y`.
    pub trait Fp8Kernels<Y>: Sized {
        /// The kernel for weights in `format`, if there is one.
        fn fp8_kernel(library: &Library, format: Fp8Format)
        -> Option<&TypedKernel<Fp8Fn<Self, Y>>>;
    }

    macro_rules! mx_gemv {
        ($($format:ty, $x:ty, $y:ty => $field:ident;)*) => {$(
            impl GemvKernel<$x, $y> for $format {
                unsafe fn launch(
                    library: &Library,
                    stream: &Stream,
                    config: LaunchConfig,
                    w: &DeviceQuantizedTensor<Self>,
                    o: GemvOperands<'_, $x, $y>,
                ) -> Result<(), DeviceError> {
                    let kernel = &library.kernels.qgemv.$field;
                    let args = (w.elements(), w.scales(), o.x, o.y, o.m, o.k, o.batch);
                    // SAFETY: as the caller guarantees.
                    unsafe { stream.launch(kernel, config, args) }
                }
            }
            impl Qgemv<$x, $y> for $format {}
        )*};
    }

    mx_gemv!(
        MxFp4, f32, f32 => mxfp4_f32_f32;
        MxFp4, f16, f32 => mxfp4_f16_f32;
        MxFp4, bf16, f32 => mxfp4_bf16_f32;
        MxFp4, f16, f16 => mxfp4_f16_f16;
        MxFp4, bf16, bf16 => mxfp4_bf16_bf16;
        MxFp6E2M3, f32, f32 => mxfp6_e2m3_f32_f32;
        MxFp6E2M3, f16, f32 => mxfp6_e2m3_f16_f32;
        MxFp6E2M3, bf16, f32 => mxfp6_e2m3_bf16_f32;
        MxFp6E3M2, f32, f32 => mxfp6_e3m2_f32_f32;
        MxFp6E3M2, f16, f32 => mxfp6_e3m2_f16_f32;
        MxFp6E3M2, bf16, f32 => mxfp6_e3m2_bf16_f32;
        MxFp8E4M3, f32, f32 => mxfp8_e4m3_f32_f32;
        MxFp8E4M3, f16, f32 => mxfp8_e4m3_f16_f32;
        MxFp8E4M3, bf16, f32 => mxfp8_e4m3_bf16_f32;
        MxFp8E5M2, f32, f32 => mxfp8_e5m2_f32_f32;
        MxFp8E5M2, f16, f32 => mxfp8_e5m2_f16_f32;
        MxFp8E5M2, bf16, f32 => mxfp8_e5m2_bf16_f32;
        MxInt8, f32, f32 => mxint8_f32_f32;
        MxInt8, f16, f32 => mxint8_f16_f32;
        MxInt8, bf16, f32 => mxint8_bf16_f32;
    );

    macro_rules! nvfp4_gemv {
        ($($x:ty => $field:ident;)*) => {$(
            impl GemvKernel<$x, f32> for Nvfp4 {
                unsafe fn launch(
                    library: &Library,
                    stream: &Stream,
                    config: LaunchConfig,
                    w: &DeviceQuantizedTensor<Self>,
                    o: GemvOperands<'_, $x, f32>,
                ) -> Result<(), DeviceError> {
                    let kernel = &library.kernels.qgemv.$field;
                    let scale = w.tensor_scale();
                    let args = (w.elements(), w.scales(), scale, o.x, o.y, o.m, o.k, o.batch);
                    // SAFETY: as the caller guarantees.
                    unsafe { stream.launch(kernel, config, args) }
                }
            }
            impl Qgemv<$x, f32> for Nvfp4 {}
        )*};
    }

    nvfp4_gemv!(
        f32 => nvfp4_f32_f32;
        f16 => nvfp4_f16_f32;
        bf16 => nvfp4_bf16_f32;
    );

    macro_rules! fp8_gemv {
        ($($x:ty, $y:ty => [$($format:ident => $field:ident),*];)*) => {$(
            impl Fp8Kernels<$y> for $x {
                fn fp8_kernel(
                    library: &Library,
                    format: Fp8Format,
                ) -> Option<&TypedKernel<Fp8Fn<$x, $y>>> {
                    let kernels = &library.kernels.qgemv;
                    match format {
                        $(Fp8Format::$format => Some(&kernels.$field),)*
                        #[allow(unreachable_patterns, reason = "some tables list every format")]
                        _ => None,
                    }
                }
            }
        )*};
    }

    fp8_gemv!(
        f32, f32 => [
            E4M3Fn => fp8_e4m3fn_f32_f32,
            E5M2 => fp8_e5m2_f32_f32,
            E4M3Fnuz => fp8_e4m3fnuz_f32_f32,
            E5M2Fnuz => fp8_e5m2fnuz_f32_f32
        ];
        f16, f32 => [
            E4M3Fn => fp8_e4m3fn_f16_f32,
            E5M2 => fp8_e5m2_f16_f32,
            E4M3Fnuz => fp8_e4m3fnuz_f16_f32,
            E5M2Fnuz => fp8_e5m2fnuz_f16_f32
        ];
        bf16, f32 => [
            E4M3Fn => fp8_e4m3fn_bf16_f32,
            E5M2 => fp8_e5m2_bf16_f32,
            E4M3Fnuz => fp8_e4m3fnuz_bf16_f32,
            E5M2Fnuz => fp8_e5m2fnuz_bf16_f32
        ];
        f16, f16 => [E4M3Fn => fp8_e4m3fn_f16_f16, E5M2 => fp8_e5m2_f16_f16];
        bf16, bf16 => [E4M3Fn => fp8_e4m3fn_bf16_bf16, E5M2 => fp8_e5m2_bf16_bf16];
    );
}

/// A checked GEMV launch: its geometry and operands.
type GemvLaunch<'a, X, Y> = (LaunchConfig, GemvOperands<'a, X, Y>);

/// The largest batch the kernels take.
pub const QGEMV_MAX_BATCH: usize = 8;
/// Waves per workgroup (one row each).
const WAVES_PER_WORKGROUP: u32 = 4;
/// Workgroups per compute unit a GEMV uses at most (rows beyond are covered by the kernel's
/// loop over rows).
const GEMV_WORKGROUPS_PER_CU: u32 = 32;
/// Dynamic LDS per batch vector: a staged chunk of 1024 f32.
const LDS_PER_BATCH: u32 = 4096;

impl Library {
    /// The wave size of the loaded GEMV kernels (one code object: all share it).
    fn gemv_wave(&self) -> u32 {
        let metadata = self.kernels.qgemv.mxfp4_f32_f32.kernel().metadata();
        metadata.wavefront_size.max(1)
    }

    /// Checks a GEMV's shape and buffers; the geometry and the `u32` operands, or `None` when
    /// there is nothing to compute.
    fn gemv_launch<'a, X, Y>(
        &self,
        operation: &'static str,
        (m, k, batch): (usize, usize, usize),
        x: &'a DeviceBuffer<X>,
        y: &'a mut DeviceBuffer<Y>,
        wave: u32,
    ) -> Result<Option<GemvLaunch<'a, X, Y>>, LibraryError> {
        if batch > QGEMV_MAX_BATCH {
            return Err(LibraryError::BadShape {
                operation,
                detail: format!("batch = {batch} exceeds the kernels' {QGEMV_MAX_BATCH}"),
            });
        }
        check_holds(
            operation,
            "x",
            x,
            "batch * k",
            elements_of(operation, batch, k)?,
        )?;
        check_holds(
            operation,
            "y",
            y,
            "batch * m",
            elements_of(operation, batch, m)?,
        )?;
        let cap = self
            .device()
            .properties()
            .compute_units
            .max(1)
            .saturating_mul(GEMV_WORKGROUPS_PER_CU);
        let groups = u32::try_from(m.div_ceil(WAVES_PER_WORKGROUP as usize).max(1))
            .unwrap_or(u32::MAX)
            .min(cap);
        let rows_in_flight = groups.saturating_mul(WAVES_PER_WORKGROUP);
        let m = to_u32(operation, "m", m, u32::MAX.saturating_sub(rows_in_flight))?;
        let k = to_u32(operation, "k", k, u32::MAX)?;
        if m == 0 || batch == 0 {
            return Ok(None);
        }
        let config = LaunchConfig::new([groups, 1, 1], [WAVES_PER_WORKGROUP * wave, 1, 1])
            .with_dynamic_lds(LDS_PER_BATCH * batch as u32);
        let batch = batch as u32;
        Ok(Some((config, GemvOperands { x, y, m, k, batch })))
    }

    /// `y = W x` for block-quantized weights `w` (`[m, k]`: `w.rows()` by `w.cols()`), `x`
    /// `[batch, k]` and `y` `[batch, m]`, `batch` at most 8: `y[b][r] = sum_c W[r][c] x[b][c]`,
    /// accumulated in f32 and rounded once to `Y` (times the tensor scale for NVFP4).
    pub fn qgemv<B: Qgemv<X, Y>, X, Y>(
        &self,
        stream: &Stream,
        w: &DeviceQuantizedTensor<B>,
        x: &DeviceBuffer<X>,
        y: &mut DeviceBuffer<Y>,
        batch: usize,
    ) -> Result<(), LibraryError> {
        let wave = self.gemv_wave();
        let shape = (w.rows(), w.cols(), batch);
        let Some((config, operands)) = self.gemv_launch("qgemv", shape, x, y, wave)? else {
            return Ok(());
        };
        // SAFETY: the tensor's constructor checked that its buffers hold its [rows, cols]
        // blocks (cols a multiple of the block length) and start 16-byte aligned; x and y hold
        // batch * k and batch * m elements, as checked, and y is distinct from the inputs. The
        // workgroup is whole waves, its LDS one staged chunk per batch vector, and the row
        // index plus the rows in flight stays below 2^32.
        unsafe { <B as sealed::GemvKernel<X, Y>>::launch(self, stream, config, w, operands)? };
        Ok(())
    }

    /// `y = W x` for plain FP8 weights: `w` holds `[m, k]` codes of `format`, `row_scales` one
    /// f32 per row, `W[r][c] = decode(w[r][c]) * row_scales[r]`; `x` `[batch, k]`, `y`
    /// `[batch, m]`, `batch` at most 8, `k` a multiple of 16.
    #[allow(
        clippy::too_many_arguments,
        reason = "the weights, their scales, their shape and the vectors"
    )]
    pub fn qgemv_fp8<X: Fp8Gemv<Y>, Y: bytemuck::Pod>(
        &self,
        stream: &Stream,
        format: Fp8Format,
        w: &DeviceBuffer<u8>,
        row_scales: &DeviceBuffer<f32>,
        (m, k): (usize, usize),
        x: &DeviceBuffer<X>,
        y: &mut DeviceBuffer<Y>,
        batch: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "qgemv_fp8";
        let kernel = X::fp8_kernel(self, format).ok_or_else(|| LibraryError::BadShape {
            operation: OP,
            detail: format!(
                "no kernel for {format:?} weights with {} inputs and {} outputs: f16 and bf16 \
                 outputs take E4M3Fn or E5M2 weights only; use f32 outputs",
                std::any::type_name::<X>(),
                std::any::type_name::<Y>()
            ),
        })?;
        if !k.is_multiple_of(16) {
            return Err(LibraryError::BadShape {
                operation: OP,
                detail: format!("k = {k} is not a multiple of 16"),
            });
        }
        check_holds(OP, "w", w, "m * k", elements_of(OP, m, k)?)?;
        check_holds(OP, "row_scales", row_scales, "m", m)?;
        let wave = self.gemv_wave();
        let Some((config, o)) = self.gemv_launch(OP, (m, k, batch), x, y, wave)? else {
            return Ok(());
        };
        // SAFETY: w holds m * k codes, row_scales m scales, x batch * k and y batch * m
        // elements, as checked; k is a multiple of 16 and every buffer starts 16-byte aligned;
        // y is distinct from the inputs. The geometry is as for `qgemv`.
        unsafe { stream.launch(kernel, config, (w, row_scales, o.x, o.y, o.m, o.k, o.batch))? };
        Ok(())
    }
}
