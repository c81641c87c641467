//! The element types the library's methods are generic over.
//!
//! - [`Float`]: f32, [`f16`](struct@f16) and [`bf16`], the types of the float kernels (elementwise,
//!   row reductions, norms, softmax, casts). f16 and bf16 are the `half` crate's types (the
//!   ones the kernels are declared with), so device buffers are `DeviceBuffer<f16>` and
//!   `DeviceBuffer<bf16>` and host data is `Vec<f16>`: typed on both sides, with `half`'s
//!   conversions (`f16::from_f32`, `to_f32`) and bit access (`from_bits`, `to_bits`).
//! - [`Word`]: the 4-byte types `fill` and `copy` move (u32, i32, f32).
//! - [`Fp8Format`]: the FP8 encodings `cast_to_fp8` writes.

use bytemuck::Pod;
use iron_intrinsics::launch::KernelDecl;
use iron_kernels::{cast, elementwise, elementwise_float, norm, row_reduce, softmax};

pub use iron_kernels::dtype::{bf16, f16};

use super::Library;
use super::geometry::HeldShape;
use super::kernels::FloatKernels;

/// A float type of the library's kernels: f32, [`f16`](struct@f16) or [`bf16`]. Kernels compute in f32 and
/// round once to the output type (to nearest even).
pub trait Float: Pod + sealed::FloatDecls {}

impl Float for f32 {}
impl Float for f16 {}
impl Float for bf16 {}

/// A 4-byte element type `fill` and `copy` move as raw words: u32, i32 or f32.
pub trait Word: Pod + sealed::Word32 {}

impl Word for u32 {}
impl Word for i32 {}
impl Word for f32 {}

/// The FP8 encodings `cast_to_fp8` writes (one byte per element, in a `DeviceBuffer<u8>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// OCP E4M3 ("FN"): no infinities, max 448, NaN S.1111.111.
    E4M3Fn,
    /// OCP E5M2: IEEE-style infinities and NaNs, max 57344.
    E5M2,
    /// E4M3 FNUZ (gfx942's FP8): no infinities, no -0, one NaN (0x80), max 240.
    E4M3Fnuz,
    /// E5M2 FNUZ (gfx942's BF8): no infinities, no -0, one NaN (0x80), max 57344.
    E5M2Fnuz,
}

impl Fp8Format {
    /// Every format, in the order of the kernel tables.
    pub const ALL: [Fp8Format; 4] = [
        Fp8Format::E4M3Fn,
        Fp8Format::E5M2,
        Fp8Format::E4M3Fnuz,
        Fp8Format::E5M2Fnuz,
    ];

    /// Position in [`Fp8Format::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// The signature of an elementwise kernel with one input.
pub(crate) type Unary<T> = fn(*const T, *mut T, u32);
/// The signature of an elementwise kernel with two inputs.
pub(crate) type Binary<T> = fn(*const T, *const T, *mut T, u32);
/// The signature of an elementwise kernel with three inputs.
pub(crate) type Ternary<T> = fn(*const T, *const T, *const T, *mut T, u32);
/// The signature of `scale_<t>`.
pub(crate) type Scale<T> = fn(f32, *const T, *mut T, u32);
/// The signature of a row kernel from `I` to `O` without parameters (row reductions, softmax).
pub(crate) type Rows<I, O> = fn(*const I, *mut O, u32, u32);
/// The signature of `rmsnorm_<t>`.
pub(crate) type Rmsnorm<T> = fn(*const T, *const T, *mut T, u32, u32, f32);
/// The signature of `layernorm_<t>`.
pub(crate) type Layernorm<T> = fn(*const T, *const T, *const T, *mut T, u32, u32, f32);
/// The held-row instances of the norms (`rmsnorm_<t>_c<k>[w1]`, `layernorm_<t>_c<k>[w1]`), in the
/// order of their tables: chunks of [`sealed::FloatDecls::PACK`] elements per work-item, in
/// workgroups of any size and of one wave.
pub(crate) const NORM_HELD_SHAPES: [HeldShape; 8] = [
    HeldShape::any(1),
    HeldShape::any(2),
    HeldShape::any(4),
    HeldShape::any(8),
    HeldShape::any(16),
    HeldShape::one_wave(4),
    HeldShape::one_wave(8),
    HeldShape::one_wave(16),
];
/// The held-row instances of softmax (`softmax_<t>_c<k>`), in the order of their tables.
pub(crate) const SOFTMAX_HELD_SHAPES: [HeldShape; 3] = HeldShape::any_of([1, 2, 4]);
/// The held-row instances of the row sum (`row_sum_<t>_c<k>[w1]`), in the order of their tables:
/// none of 32 chunks in one wave, whose 16-bit instances spill on wave32.
pub(crate) const SUM_HELD_SHAPES: [HeldShape; 8] = [
    HeldShape::any(1),
    HeldShape::any(2),
    HeldShape::any(4),
    HeldShape::any(8),
    HeldShape::any(16),
    HeldShape::any(32),
    HeldShape::one_wave(8),
    HeldShape::one_wave(16),
];
/// The held-row instances of the row maximum (`row_max_<t>_c<k>`), in the order of their
/// tables: none of 32 chunks, whose 16-bit instances spill on wave32.
pub(crate) const MAX_HELD_SHAPES: [HeldShape; 5] = HeldShape::any_of([1, 2, 4, 8, 16]);
/// The held-row instances of the row argmax (`row_argmax_<t>_c<k>`), in the order of their
/// tables.
pub(crate) const ARGMAX_HELD_SHAPES: [HeldShape; 4] = HeldShape::any_of([1, 2, 4, 8]);

/// The signature of a cast from `I` to `O`.
pub(crate) type Convert<I, O> = fn(*const I, *mut O, u32);

pub(crate) mod sealed {
    use super::*;

    /// The kernels of one float type, by declaration, and where its resolved kernels live.
    pub trait FloatDecls: Sized + 'static {
        /// The type's name in kernel names and messages: `f32`, `f16`, `bf16`.
        const NAME: &'static str;
        /// Elements in one 16-byte access (the kernels' chunk).
        const PACK: usize;
        /// `add_<t>`.
        const ADD: KernelDecl<Binary<Self>>;
        /// `mul_<t>`.
        const MUL: KernelDecl<Binary<Self>>;
        /// `fma_<t>`.
        const FMA: KernelDecl<Ternary<Self>>;
        /// `scale_<t>`.
        const SCALE: KernelDecl<Scale<Self>>;
        /// `relu_<t>`.
        const RELU: KernelDecl<Unary<Self>>;
        /// `silu_<t>`.
        const SILU: KernelDecl<Unary<Self>>;
        /// `gelu_<t>`.
        const GELU: KernelDecl<Unary<Self>>;
        /// `row_sum_<t>`.
        const ROW_SUM: KernelDecl<Rows<Self, f32>>;
        /// `row_max_<t>`.
        const ROW_MAX: KernelDecl<Rows<Self, f32>>;
        /// `row_argmax_<t>`.
        const ROW_ARGMAX: KernelDecl<Rows<Self, u32>>;
        /// `rmsnorm_<t>`.
        const RMSNORM: KernelDecl<Rmsnorm<Self>>;
        /// `layernorm_<t>`.
        const LAYERNORM: KernelDecl<Layernorm<Self>>;
        /// `row_sum_<t>_c<k>` for the shapes in [`SUM_HELD_SHAPES`].
        const ROW_SUM_HELD: [KernelDecl<Rows<Self, f32>>; 8];
        /// `row_max_<t>_c<k>` for the shapes in [`MAX_HELD_SHAPES`].
        const ROW_MAX_HELD: [KernelDecl<Rows<Self, f32>>; 5];
        /// `row_argmax_<t>_c<k>` for the shapes in [`ARGMAX_HELD_SHAPES`].
        const ROW_ARGMAX_HELD: [KernelDecl<Rows<Self, u32>>; 4];
        /// `rmsnorm_<t>_c<k>` for the shapes in [`NORM_HELD_SHAPES`].
        const RMSNORM_HELD: [KernelDecl<Rmsnorm<Self>>; 8];
        /// `layernorm_<t>_c<k>` for the shapes in [`NORM_HELD_SHAPES`].
        const LAYERNORM_HELD: [KernelDecl<Layernorm<Self>>; 8];
        /// `softmax_<t>`.
        const SOFTMAX: KernelDecl<Rows<Self, Self>>;
        /// `softmax_<t>_c<k>` for the shapes in [`SOFTMAX_HELD_SHAPES`].
        const SOFTMAX_HELD: [KernelDecl<Rows<Self, Self>>; 3];
        /// `cast_<t>_to_fp8_<format>`, in the order of [`Fp8Format::ALL`].
        const TO_FP8: [KernelDecl<Convert<Self, u8>>; 4];

        /// This type's resolved kernels in `library`.
        fn kernels(library: &Library) -> &FloatKernels<Self>;
    }

    /// A 4-byte plain type, passed to `fill_u32` as its bits.
    pub trait Word32: Copy {
        /// The value's bits.
        fn bits(self) -> u32;
    }

    impl Word32 for u32 {
        fn bits(self) -> u32 {
            self
        }
    }

    impl Word32 for i32 {
        fn bits(self) -> u32 {
            self.cast_unsigned()
        }
    }

    impl Word32 for f32 {
        fn bits(self) -> u32 {
            self.to_bits()
        }
    }

    impl FloatDecls for f32 {
        const NAME: &'static str = "f32";
        const PACK: usize = 4;
        const ADD: KernelDecl<Binary<f32>> = elementwise::add_f32;
        const MUL: KernelDecl<Binary<f32>> = elementwise_float::mul_f32;
        const FMA: KernelDecl<Ternary<f32>> = elementwise_float::fma_f32;
        const SCALE: KernelDecl<Scale<f32>> = elementwise_float::scale_f32;
        const RELU: KernelDecl<Unary<f32>> = elementwise_float::relu_f32;
        const SILU: KernelDecl<Unary<f32>> = elementwise_float::silu_f32;
        const GELU: KernelDecl<Unary<f32>> = elementwise_float::gelu_f32;
        const ROW_SUM: KernelDecl<Rows<f32, f32>> = row_reduce::row_sum_f32;
        const ROW_MAX: KernelDecl<Rows<f32, f32>> = row_reduce::row_max_f32;
        const ROW_ARGMAX: KernelDecl<Rows<f32, u32>> = row_reduce::row_argmax_f32;
        const ROW_SUM_HELD: [KernelDecl<Rows<f32, f32>>; 8] = [
            row_reduce::row_sum_f32_c1,
            row_reduce::row_sum_f32_c2,
            row_reduce::row_sum_f32_c4,
            row_reduce::row_sum_f32_c8,
            row_reduce::row_sum_f32_c16,
            row_reduce::row_sum_f32_c32,
            row_reduce::row_sum_f32_c8w1,
            row_reduce::row_sum_f32_c16w1,
        ];
        const ROW_MAX_HELD: [KernelDecl<Rows<f32, f32>>; 5] = [
            row_reduce::row_max_f32_c1,
            row_reduce::row_max_f32_c2,
            row_reduce::row_max_f32_c4,
            row_reduce::row_max_f32_c8,
            row_reduce::row_max_f32_c16,
        ];
        const ROW_ARGMAX_HELD: [KernelDecl<Rows<f32, u32>>; 4] = [
            row_reduce::row_argmax_f32_c1,
            row_reduce::row_argmax_f32_c2,
            row_reduce::row_argmax_f32_c4,
            row_reduce::row_argmax_f32_c8,
        ];
        const RMSNORM: KernelDecl<Rmsnorm<f32>> = norm::rmsnorm_f32;
        const LAYERNORM: KernelDecl<Layernorm<f32>> = norm::layernorm_f32;
        const RMSNORM_HELD: [KernelDecl<Rmsnorm<f32>>; 8] = [
            norm::rmsnorm_f32_c1,
            norm::rmsnorm_f32_c2,
            norm::rmsnorm_f32_c4,
            norm::rmsnorm_f32_c8,
            norm::rmsnorm_f32_c16,
            norm::rmsnorm_f32_c4w1,
            norm::rmsnorm_f32_c8w1,
            norm::rmsnorm_f32_c16w1,
        ];
        const LAYERNORM_HELD: [KernelDecl<Layernorm<f32>>; 8] = [
            norm::layernorm_f32_c1,
            norm::layernorm_f32_c2,
            norm::layernorm_f32_c4,
            norm::layernorm_f32_c8,
            norm::layernorm_f32_c16,
            norm::layernorm_f32_c4w1,
            norm::layernorm_f32_c8w1,
            norm::layernorm_f32_c16w1,
        ];
        const SOFTMAX: KernelDecl<Rows<f32, f32>> = softmax::softmax_f32;
        const SOFTMAX_HELD: [KernelDecl<Rows<f32, f32>>; 3] = [
            softmax::softmax_f32_c1,
            softmax::softmax_f32_c2,
            softmax::softmax_f32_c4,
        ];
        const TO_FP8: [KernelDecl<Convert<f32, u8>>; 4] = [
            cast::cast_f32_to_fp8_e4m3fn,
            cast::cast_f32_to_fp8_e5m2,
            cast::cast_f32_to_fp8_e4m3fnuz,
            cast::cast_f32_to_fp8_e5m2fnuz,
        ];

        fn kernels(library: &Library) -> &FloatKernels<f32> {
            &library.kernels.f32
        }
    }

    impl FloatDecls for f16 {
        const NAME: &'static str = "f16";
        const PACK: usize = 8;
        const ADD: KernelDecl<Binary<f16>> = elementwise_float::add_f16;
        const MUL: KernelDecl<Binary<f16>> = elementwise_float::mul_f16;
        const FMA: KernelDecl<Ternary<f16>> = elementwise_float::fma_f16;
        const SCALE: KernelDecl<Scale<f16>> = elementwise_float::scale_f16;
        const RELU: KernelDecl<Unary<f16>> = elementwise_float::relu_f16;
        const SILU: KernelDecl<Unary<f16>> = elementwise_float::silu_f16;
        const GELU: KernelDecl<Unary<f16>> = elementwise_float::gelu_f16;
        const ROW_SUM: KernelDecl<Rows<f16, f32>> = row_reduce::row_sum_f16;
        const ROW_MAX: KernelDecl<Rows<f16, f32>> = row_reduce::row_max_f16;
        const ROW_ARGMAX: KernelDecl<Rows<f16, u32>> = row_reduce::row_argmax_f16;
        const ROW_SUM_HELD: [KernelDecl<Rows<f16, f32>>; 8] = [
            row_reduce::row_sum_f16_c1,
            row_reduce::row_sum_f16_c2,
            row_reduce::row_sum_f16_c4,
            row_reduce::row_sum_f16_c8,
            row_reduce::row_sum_f16_c16,
            row_reduce::row_sum_f16_c32,
            row_reduce::row_sum_f16_c8w1,
            row_reduce::row_sum_f16_c16w1,
        ];
        const ROW_MAX_HELD: [KernelDecl<Rows<f16, f32>>; 5] = [
            row_reduce::row_max_f16_c1,
            row_reduce::row_max_f16_c2,
            row_reduce::row_max_f16_c4,
            row_reduce::row_max_f16_c8,
            row_reduce::row_max_f16_c16,
        ];
        const ROW_ARGMAX_HELD: [KernelDecl<Rows<f16, u32>>; 4] = [
            row_reduce::row_argmax_f16_c1,
            row_reduce::row_argmax_f16_c2,
            row_reduce::row_argmax_f16_c4,
            row_reduce::row_argmax_f16_c8,
        ];
        const RMSNORM: KernelDecl<Rmsnorm<f16>> = norm::rmsnorm_f16;
        const LAYERNORM: KernelDecl<Layernorm<f16>> = norm::layernorm_f16;
        const RMSNORM_HELD: [KernelDecl<Rmsnorm<f16>>; 8] = [
            norm::rmsnorm_f16_c1,
            norm::rmsnorm_f16_c2,
            norm::rmsnorm_f16_c4,
            norm::rmsnorm_f16_c8,
            norm::rmsnorm_f16_c16,
            norm::rmsnorm_f16_c4w1,
            norm::rmsnorm_f16_c8w1,
            norm::rmsnorm_f16_c16w1,
        ];
        const LAYERNORM_HELD: [KernelDecl<Layernorm<f16>>; 8] = [
            norm::layernorm_f16_c1,
            norm::layernorm_f16_c2,
            norm::layernorm_f16_c4,
            norm::layernorm_f16_c8,
            norm::layernorm_f16_c16,
            norm::layernorm_f16_c4w1,
            norm::layernorm_f16_c8w1,
            norm::layernorm_f16_c16w1,
        ];
        const SOFTMAX: KernelDecl<Rows<f16, f16>> = softmax::softmax_f16;
        const SOFTMAX_HELD: [KernelDecl<Rows<f16, f16>>; 3] = [
            softmax::softmax_f16_c1,
            softmax::softmax_f16_c2,
            softmax::softmax_f16_c4,
        ];
        const TO_FP8: [KernelDecl<Convert<f16, u8>>; 4] = [
            cast::cast_f16_to_fp8_e4m3fn,
            cast::cast_f16_to_fp8_e5m2,
            cast::cast_f16_to_fp8_e4m3fnuz,
            cast::cast_f16_to_fp8_e5m2fnuz,
        ];

        fn kernels(library: &Library) -> &FloatKernels<f16> {
            &library.kernels.f16
        }
    }

    impl FloatDecls for bf16 {
        const NAME: &'static str = "bf16";
        const PACK: usize = 8;
        const ADD: KernelDecl<Binary<bf16>> = elementwise_float::add_bf16;
        const MUL: KernelDecl<Binary<bf16>> = elementwise_float::mul_bf16;
        const FMA: KernelDecl<Ternary<bf16>> = elementwise_float::fma_bf16;
        const SCALE: KernelDecl<Scale<bf16>> = elementwise_float::scale_bf16;
        const RELU: KernelDecl<Unary<bf16>> = elementwise_float::relu_bf16;
        const SILU: KernelDecl<Unary<bf16>> = elementwise_float::silu_bf16;
        const GELU: KernelDecl<Unary<bf16>> = elementwise_float::gelu_bf16;
        const ROW_SUM: KernelDecl<Rows<bf16, f32>> = row_reduce::row_sum_bf16;
        const ROW_MAX: KernelDecl<Rows<bf16, f32>> = row_reduce::row_max_bf16;
        const ROW_ARGMAX: KernelDecl<Rows<bf16, u32>> = row_reduce::row_argmax_bf16;
        const ROW_SUM_HELD: [KernelDecl<Rows<bf16, f32>>; 8] = [
            row_reduce::row_sum_bf16_c1,
            row_reduce::row_sum_bf16_c2,
            row_reduce::row_sum_bf16_c4,
            row_reduce::row_sum_bf16_c8,
            row_reduce::row_sum_bf16_c16,
            row_reduce::row_sum_bf16_c32,
            row_reduce::row_sum_bf16_c8w1,
            row_reduce::row_sum_bf16_c16w1,
        ];
        const ROW_MAX_HELD: [KernelDecl<Rows<bf16, f32>>; 5] = [
            row_reduce::row_max_bf16_c1,
            row_reduce::row_max_bf16_c2,
            row_reduce::row_max_bf16_c4,
            row_reduce::row_max_bf16_c8,
            row_reduce::row_max_bf16_c16,
        ];
        const ROW_ARGMAX_HELD: [KernelDecl<Rows<bf16, u32>>; 4] = [
            row_reduce::row_argmax_bf16_c1,
            row_reduce::row_argmax_bf16_c2,
            row_reduce::row_argmax_bf16_c4,
            row_reduce::row_argmax_bf16_c8,
        ];
        const RMSNORM: KernelDecl<Rmsnorm<bf16>> = norm::rmsnorm_bf16;
        const LAYERNORM: KernelDecl<Layernorm<bf16>> = norm::layernorm_bf16;
        const RMSNORM_HELD: [KernelDecl<Rmsnorm<bf16>>; 8] = [
            norm::rmsnorm_bf16_c1,
            norm::rmsnorm_bf16_c2,
            norm::rmsnorm_bf16_c4,
            norm::rmsnorm_bf16_c8,
            norm::rmsnorm_bf16_c16,
            norm::rmsnorm_bf16_c4w1,
            norm::rmsnorm_bf16_c8w1,
            norm::rmsnorm_bf16_c16w1,
        ];
        const LAYERNORM_HELD: [KernelDecl<Layernorm<bf16>>; 8] = [
            norm::layernorm_bf16_c1,
            norm::layernorm_bf16_c2,
            norm::layernorm_bf16_c4,
            norm::layernorm_bf16_c8,
            norm::layernorm_bf16_c16,
            norm::layernorm_bf16_c4w1,
            norm::layernorm_bf16_c8w1,
            norm::layernorm_bf16_c16w1,
        ];
        const SOFTMAX: KernelDecl<Rows<bf16, bf16>> = softmax::softmax_bf16;
        const SOFTMAX_HELD: [KernelDecl<Rows<bf16, bf16>>; 3] = [
            softmax::softmax_bf16_c1,
            softmax::softmax_bf16_c2,
            softmax::softmax_bf16_c4,
        ];
        const TO_FP8: [KernelDecl<Convert<bf16, u8>>; 4] = [
            cast::cast_bf16_to_fp8_e4m3fn,
            cast::cast_bf16_to_fp8_e5m2,
            cast::cast_bf16_to_fp8_e4m3fnuz,
            cast::cast_bf16_to_fp8_e5m2fnuz,
        ];

        fn kernels(library: &Library) -> &FloatKernels<bf16> {
            &library.kernels.bf16
        }
    }
}
