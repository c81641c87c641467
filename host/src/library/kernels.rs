//! Every library kernel, resolved once from the loaded module: each declaration's signature and
//! launch bounds checked against the code object's metadata when the library loads, so a stale
//! or partial build fails there, naming the kernel, rather than at the first use.

use iron_kernels::{cast, dequant, elementwise, reduce};

use super::dequant_half::DequantHalfKernels;
use super::dtype::{
    Binary, Convert, Float, Layernorm, Rmsnorm, Rows, Scale, Ternary, Unary, bf16, f16,
};
use super::gather::GatherKernels;
use super::qgemv::QgemvKernels;
use super::rope::RopeKernels;
use super::scan::ScanKernels;
use super::transpose::TransposeKernels;
use crate::device::{DeviceError, Module, TypedKernel};
use crate::launch::KernelSignature;
use iron_intrinsics::launch::KernelDecl;

/// The signature of an MX dequantization kernel.
pub(crate) type DequantMx = fn(*const u8, *const u8, *mut f32, u32);
/// The signature of `dequant_nvfp4_f32` (with its per-tensor scale).
pub(crate) type DequantNvfp4 = fn(*const u8, *const u8, f32, *mut f32, u32);

/// The kernels of one float type.
pub struct FloatKernels<T> {
    pub(crate) add: TypedKernel<Binary<T>>,
    pub(crate) mul: TypedKernel<Binary<T>>,
    pub(crate) fma: TypedKernel<Ternary<T>>,
    pub(crate) scale: TypedKernel<Scale<T>>,
    pub(crate) relu: TypedKernel<Unary<T>>,
    pub(crate) silu: TypedKernel<Unary<T>>,
    pub(crate) gelu: TypedKernel<Unary<T>>,
    pub(crate) row_sum: TypedKernel<Rows<T, f32>>,
    pub(crate) row_max: TypedKernel<Rows<T, f32>>,
    pub(crate) row_argmax: TypedKernel<Rows<T, u32>>,
    /// `row_sum_<t>_c<k>`, in the order of [`SUM_HELD_SHAPES`](super::dtype::SUM_HELD_SHAPES).
    pub(crate) row_sum_held: [TypedKernel<Rows<T, f32>>; 8],
    /// `row_max_<t>_c<k>`, in the order of [`MAX_HELD_SHAPES`](super::dtype::MAX_HELD_SHAPES).
    pub(crate) row_max_held: [TypedKernel<Rows<T, f32>>; 5],
    /// `row_argmax_<t>_c<k>`, in the order of
    /// [`ARGMAX_HELD_SHAPES`](super::dtype::ARGMAX_HELD_SHAPES).
    pub(crate) row_argmax_held: [TypedKernel<Rows<T, u32>>; 4],
    pub(crate) rmsnorm: TypedKernel<Rmsnorm<T>>,
    pub(crate) layernorm: TypedKernel<Layernorm<T>>,
    /// `rmsnorm_<t>_c<k>`, in the order of
    /// [`NORM_HELD_SHAPES`](super::dtype::NORM_HELD_SHAPES).
    pub(crate) rmsnorm_held: [TypedKernel<Rmsnorm<T>>; 8],
    /// `layernorm_<t>_c<k>`, in the order of
    /// [`NORM_HELD_SHAPES`](super::dtype::NORM_HELD_SHAPES).
    pub(crate) layernorm_held: [TypedKernel<Layernorm<T>>; 8],
    pub(crate) softmax: TypedKernel<Rows<T, T>>,
    /// `softmax_<t>_c<k>`, in the order of
    /// [`SOFTMAX_HELD_SHAPES`](super::dtype::SOFTMAX_HELD_SHAPES).
    pub(crate) softmax_held: [TypedKernel<Rows<T, T>>; 3],
    pub(crate) to_fp8: [TypedKernel<Convert<T, u8>>; 4],
}

impl<T: Float> FloatKernels<T> {
    fn resolve(module: &Module) -> Result<Self, DeviceError> {
        let [e4m3fn, e5m2, e4m3fnuz, e5m2fnuz] = T::TO_FP8;
        Ok(FloatKernels {
            add: module.kernel(T::ADD)?,
            mul: module.kernel(T::MUL)?,
            fma: module.kernel(T::FMA)?,
            scale: module.kernel(T::SCALE)?,
            relu: module.kernel(T::RELU)?,
            silu: module.kernel(T::SILU)?,
            gelu: module.kernel(T::GELU)?,
            row_sum: module.kernel(T::ROW_SUM)?,
            row_max: module.kernel(T::ROW_MAX)?,
            row_argmax: module.kernel(T::ROW_ARGMAX)?,
            row_sum_held: resolve_all(module, T::ROW_SUM_HELD)?,
            row_max_held: resolve_all(module, T::ROW_MAX_HELD)?,
            row_argmax_held: resolve_all(module, T::ROW_ARGMAX_HELD)?,
            rmsnorm: module.kernel(T::RMSNORM)?,
            layernorm: module.kernel(T::LAYERNORM)?,
            rmsnorm_held: resolve_all(module, T::RMSNORM_HELD)?,
            layernorm_held: resolve_all(module, T::LAYERNORM_HELD)?,
            softmax: module.kernel(T::SOFTMAX)?,
            softmax_held: resolve_all(module, T::SOFTMAX_HELD)?,
            to_fp8: [
                module.kernel(e4m3fn)?,
                module.kernel(e5m2)?,
                module.kernel(e4m3fnuz)?,
                module.kernel(e5m2fnuz)?,
            ],
        })
    }
}

/// Each of `decls`, resolved from `module`.
fn resolve_all<F: KernelSignature, const N: usize>(
    module: &Module,
    decls: [KernelDecl<F>; N],
) -> Result<[TypedKernel<F>; N], DeviceError> {
    let mut kernels = Vec::with_capacity(N);
    for decl in decls {
        kernels.push(module.kernel(decl)?);
    }
    Ok(kernels
        .try_into()
        .unwrap_or_else(|_| unreachable!("one kernel per declaration")))
}

/// The kernels over raw 4-byte words and plain f32 arrays.
pub(crate) struct StreamingKernels {
    pub(crate) fill: TypedKernel<fn(*mut u32, u32, u32)>,
    pub(crate) copy: TypedKernel<fn(*const u32, *mut u32, u32)>,
    pub(crate) saxpy: TypedKernel<fn(f32, *const f32, *mut f32, u32)>,
    pub(crate) sum: TypedKernel<fn(*const f32, *mut f32, u32)>,
}

/// The casts between f32 and the 16-bit floats.
pub(crate) struct CastKernels {
    pub(crate) f32_to_f16: TypedKernel<Convert<f32, f16>>,
    pub(crate) f16_to_f32: TypedKernel<Convert<f16, f32>>,
    pub(crate) f32_to_bf16: TypedKernel<Convert<f32, bf16>>,
    pub(crate) bf16_to_f32: TypedKernel<Convert<bf16, f32>>,
}

/// The dequantization kernels, one per block format.
pub(crate) struct DequantKernels {
    pub(crate) mxfp4: TypedKernel<DequantMx>,
    pub(crate) mxfp6_e2m3: TypedKernel<DequantMx>,
    pub(crate) mxfp6_e3m2: TypedKernel<DequantMx>,
    pub(crate) mxfp8_e4m3: TypedKernel<DequantMx>,
    pub(crate) mxfp8_e5m2: TypedKernel<DequantMx>,
    pub(crate) mxint8: TypedKernel<DequantMx>,
    pub(crate) nvfp4: TypedKernel<DequantNvfp4>,
}

/// Every kernel of the library.
pub(crate) struct Kernels {
    pub(crate) f32: FloatKernels<f32>,
    pub(crate) f16: FloatKernels<f16>,
    pub(crate) bf16: FloatKernels<bf16>,
    pub(crate) streaming: StreamingKernels,
    pub(crate) casts: CastKernels,
    pub(crate) dequant: DequantKernels,
    pub(crate) dequant_half: DequantHalfKernels,
    pub(crate) gather: GatherKernels,
    pub(crate) transpose: TransposeKernels,
    pub(crate) rope_f32: RopeKernels<f32>,
    pub(crate) rope_f16: RopeKernels<f16>,
    pub(crate) rope_bf16: RopeKernels<bf16>,
    pub(crate) qgemv: QgemvKernels,
    pub(crate) scan: ScanKernels,
}

impl Kernels {
    /// Resolves every kernel of the library from `module`.
    pub(crate) fn resolve(module: &Module) -> Result<Kernels, DeviceError> {
        Ok(Kernels {
            f32: FloatKernels::resolve(module)?,
            f16: FloatKernels::resolve(module)?,
            bf16: FloatKernels::resolve(module)?,
            streaming: StreamingKernels {
                fill: module.kernel(elementwise::fill_u32)?,
                copy: module.kernel(elementwise::copy_u32)?,
                saxpy: module.kernel(elementwise::saxpy_f32)?,
                sum: module.kernel(reduce::sum_f32)?,
            },
            casts: CastKernels {
                f32_to_f16: module.kernel(cast::cast_f32_to_f16)?,
                f16_to_f32: module.kernel(cast::cast_f16_to_f32)?,
                f32_to_bf16: module.kernel(cast::cast_f32_to_bf16)?,
                bf16_to_f32: module.kernel(cast::cast_bf16_to_f32)?,
            },
            dequant: DequantKernels {
                mxfp4: module.kernel(dequant::dequant_mxfp4_f32)?,
                mxfp6_e2m3: module.kernel(dequant::dequant_mxfp6_e2m3_f32)?,
                mxfp6_e3m2: module.kernel(dequant::dequant_mxfp6_e3m2_f32)?,
                mxfp8_e4m3: module.kernel(dequant::dequant_mxfp8_e4m3_f32)?,
                mxfp8_e5m2: module.kernel(dequant::dequant_mxfp8_e5m2_f32)?,
                mxint8: module.kernel(dequant::dequant_mxint8_f32)?,
                nvfp4: module.kernel(dequant::dequant_nvfp4_f32)?,
            },
            dequant_half: DequantHalfKernels::resolve(module)?,
            gather: GatherKernels::resolve(module)?,
            transpose: TransposeKernels::resolve(module)?,
            rope_f32: RopeKernels::resolve(module)?,
            rope_f16: RopeKernels::resolve(module)?,
            rope_bf16: RopeKernels::resolve(module)?,
            qgemv: QgemvKernels::resolve(module)?,
            scan: ScanKernels::resolve(module)?,
        })
    }
}
