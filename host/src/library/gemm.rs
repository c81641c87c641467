//! Matrix-core GEMM (`device/kernels/src/gemm.rs`, `gemm_mx.rs`): `C = alpha * A B + beta * C
//! (+ bias)` with `C` row-major `[m, n]`, accumulated in f32, on CDNA's MFMA (gfx90a, gfx942,
//! gfx950) and RDNA's WMMA (gfx1100, gfx1201, wave32 and wave64 builds alike). The API, the
//! kernels' names and arguments, and the results are the same on every gfx; only the path a
//! format takes differs:
//!
//! | method | A, B | layouts | gfx90a | gfx942 | gfx950 | gfx1100 | gfx1201 |
//! | --- | --- | --- | --- | --- | --- | --- | --- |
//! | [`Library::gemm`] | f16 or bf16 | either, per operand (a kernel per pair) | 32x32x8 MFMA | 32x32x8 MFMA | 32x32x16 MFMA | 16x16x16 WMMA | 16x16x16 WMMA |
//! | [`Library::gemm_fp8`] | FP8 codes + f32 scale per tensor | A row-major, B column-major | decoded | FNUZ: FP8 MFMA; OCP: decoded | OCP: FP8 MFMA; FNUZ: decoded | decoded | OCP: FP8 WMMA; FNUZ: decoded |
//! | [`Library::gemm_mx`] | MXFP8, MXFP6, MXFP4 ([`MxGemmFormat`]) | A `[m, k]`, B `[n, k]` | decoded | decoded | scaled MFMA (same format for A and B), else decoded | decoded | decoded |
//!
//! "Decoded" is the portable path ([`GemmPath::Decoded`]): codes are decoded in software (with
//! their block scales) into bf16 in LDS and multiplied by the gfx's bf16 matrix instruction;
//! every FP8/FP6/FP4 value times a power-of-two scale is exact in bf16 unless it falls below
//! `2^-126`, so both paths compute the same products. [`Library::gemm_mx_decoded`] forces it on
//! any gfx. The FP8 paths take the same FP8 encoding for A and B on the hardware path; mixed
//! pairs decode.
//!
//! On gfx90a the f16 and bf16 MFMAs (so [`Library::gemm`] and the decoded path) flush
//! subnormal inputs and results to zero, as AMD documents for MI200; the other gfx keep them.
//!
//! Each workgroup computes a block of 128 x 128 elements of `C`. [`Library::gemm`] and the FP8
//! instructions' path of [`Library::gemm_fp8`] also have kernels for blocks of 64 x 64
//! (`gemm_<t>_<o>_<layouts>_64`, `gemm_fp8_<format>_<o>_64`), which they take by default
//! ([`GemmTile::Auto`]) when blocks of 128 would be at most half the device's compute units: at
//! 256 x 256 x 256 on MI300X the cycle model estimates 3.4 and 3.5 us instead of 6.9 and 6.0
//! (f16 to f32, B row- and column-major). [`Epilogue::tile`] chooses explicitly.
//!
//! `C` may have any of the library's float types ([`Float`]). `beta = 0` does not read `C`.
//! Scalars apply in this order, each rounded in f32: `alpha * acc`, `+ beta * C` (fused),
//! `+ bias[j]`, then one rounding to `C`'s type. For FP8, `alpha` is first multiplied by the
//! tensor scales, `alpha * scale_a * scale_b` (left to right, in f32).
//!
//! ```no_run
//! use iron::library::{Epilogue, GemmShape, Layout, Library, bf16};
//! use iron::{Device, DeviceBuffer};
//!
//! let device = Device::hip(0)?;
//! let library = Library::load_built(&device)?;
//! let (m, n, k) = (512, 256, 1024);
//! let a = DeviceBuffer::from_slice(&device, &vec![bf16::ONE; m * k])?;
//! let b = DeviceBuffer::from_slice(&device, &vec![bf16::ONE; k * n])?;
//! let mut c = DeviceBuffer::<f32>::alloc(&device, m * n)?;
//! let stream = device.default_stream();
//! let shape = GemmShape { m, n, k };
//! let ab = ((&a, Layout::RowMajor), (&b, Layout::RowMajor));
//! library.gemm(&stream, ab.0, ab.1, &mut c, shape, Epilogue::default())?;
//! assert_eq!(c.to_vec()?[0], k as f32);
//! # Ok::<(), iron::library::LibraryError>(())
//! ```
//!
//! Every method checks the buffers against the shape (`A` at least `m * k` elements, `B` `k * n`,
//! `C` `m * n`, the bias `n`), the sizes against the kernels (`m` below 2^32 with at most 65535 row
//! blocks of 128, or of 64; `n` at most `2^31 / (128 * size of C's element)`, 4,194,304 columns of
//! f32, since the epilogue addresses a block of `C` with 32-bit byte offsets; `k` below `2^32 -
//! 256`), and returns without launching when `m` or `n` is 0. Kernels are resolved at each call; a
//! library built for a gfx without matrix cores is refused with [`LibraryError::Unsupported`].

use iron_kernels::gemm::{
    self as kernels, BLOCK, FLAG_BIAS, FP8_LDS_BYTES, HALF_LDS_BYTES, SMALL_BLOCK, THREADS,
};
use iron_kernels::gemm_mx::{
    self as mx_kernels, DECODED_LDS_BYTES, FLAG_A_SCALED, FLAG_B_SCALED, FORMAT_E2M1, FORMAT_E2M3,
    FORMAT_E3M2, FORMAT_E4M3FN, FORMAT_E4M3FNUZ, FORMAT_E5M2, FORMAT_E5M2FNUZ, format_flags,
    mx_lds_bytes,
};
use iron_quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2};

use super::Library;
use super::dequant::{DequantFormat, DeviceQuantizedTensor};
use super::dtype::{Float, Fp8Format, bf16, f16};
use super::error::LibraryError;
use super::geometry::{check_holds, elements_of, to_u32};
use crate::device::{DeviceBuffer, Stream};
use crate::launch::{KernelSignature, LaunchArg, LaunchConfig};
use iron_intrinsics::launch::KernelDecl;

/// How an operand is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Rows one after the other: `X[i][j]` at `x[i * cols + j]`.
    RowMajor,
    /// Columns one after the other: `X[i][j]` at `x[j * rows + i]`.
    ColMajor,
}

/// The sizes of a GEMM: `A` is `[m, k]`, `B` `[k, n]`, `C` `[m, n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmShape {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
    /// Columns of `A`, rows of `B`.
    pub k: usize,
}

/// The scalars and the bias of a GEMM, `C = alpha * A B + beta * C + bias`, and the blocks of
/// `C` its workgroups compute.
#[derive(Debug, Clone, Copy)]
pub struct Epilogue<'a> {
    /// The factor of `A B`.
    pub alpha: f32,
    /// The factor of the old `C` (0: `C` is not read).
    pub beta: f32,
    /// `n` f32 added to every row of `C`.
    pub bias: Option<&'a DeviceBuffer<f32>>,
    /// The block of `C` each workgroup computes ([`Library::gemm`] and the FP8 instructions'
    /// path of [`Library::gemm_fp8`] have two; the other paths take [`GemmTile::Auto`] or
    /// [`GemmTile::Block128`]).
    pub tile: GemmTile,
}

impl Default for Epilogue<'_> {
    /// `C = A B`, the tile chosen for the shape.
    fn default() -> Self {
        Epilogue {
            alpha: 1.0,
            beta: 0.0,
            bias: None,
            tile: GemmTile::Auto,
        }
    }
}

/// The block of `C` each workgroup of a GEMM computes. The results are the same whatever the
/// tile: each element's products are summed in the same order over the same K subtiles (32
/// 16-bit elements, 64 FP8 codes), but for the sign of a zero sum when the last K tile of a
/// block of 64 ends in a subtile wholly past `k` (its zeros are added too).
///
/// ```no_run
/// use iron::library::{Epilogue, GemmShape, GemmTile, Layout, Library, bf16};
/// use iron::{Device, DeviceBuffer};
///
/// let device = Device::hip(0)?;
/// let library = Library::load_built(&device)?;
/// let (m, n, k) = (256, 256, 256);
/// let a = DeviceBuffer::from_slice(&device, &vec![bf16::ONE; m * k])?;
/// let b = DeviceBuffer::from_slice(&device, &vec![bf16::ONE; k * n])?;
/// let mut c = DeviceBuffer::<f32>::alloc(&device, m * n)?;
/// // Blocks of 128 whatever the device (`Auto` takes blocks of 64 at this size on a device of
/// // 8 compute units or more).
/// let epilogue = Epilogue {
///     tile: GemmTile::Block128,
///     ..Epilogue::default()
/// };
/// let ab = ((&a, Layout::RowMajor), (&b, Layout::RowMajor));
/// let shape = GemmShape { m, n, k };
/// library.gemm(&device.default_stream(), ab.0, ab.1, &mut c, shape, epilogue)?;
/// # Ok::<(), iron::library::LibraryError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum GemmTile {
    /// [`GemmTile::Block64`] where the path has it, when blocks of 128 would be at most half
    /// as many as the device's compute units (a small `C`: 16 workgroups instead of 4 at 256 x
    /// 256), else [`GemmTile::Block128`].
    #[default]
    Auto,
    /// 128 x 128 per workgroup (`gemm_<t>_<o>_<layouts>`): every GEMM has it.
    Block128,
    /// 64 x 64 per workgroup (`gemm_<t>_<o>_<layouts>_64` and `gemm_fp8_<format>_<o>_64`, K
    /// tiles twice as deep): [`Library::gemm`], and [`Library::gemm_fp8`] on the FP8
    /// instructions ([`GemmPath::Fp8Hardware`]). Each workgroup reads its operands' tiles once,
    /// so the whole GEMM reads A and B twice as often as with blocks of 128.
    Block64,
}

/// An FP8 operand: `codes` of one [`Fp8Format`] and the f32 scale of the whole tensor
/// (the value of code `x` is `decode(x) * scale`).
#[derive(Debug, Clone, Copy)]
pub struct Fp8Matrix<'a> {
    /// The codes, one byte each.
    pub codes: &'a DeviceBuffer<u8>,
    /// Their encoding.
    pub format: Fp8Format,
    /// The tensor's scale.
    pub scale: f32,
}

/// Which kernel family a GEMM runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmPath {
    /// The 16-bit matrix-instruction kernels (`gemm_{bf16,f16}_*`).
    Matrix16,
    /// The FP8 matrix-instruction kernels (`gemm_fp8_*`: MFMA on gfx942 and gfx950, WMMA on
    /// gfx1201).
    Fp8Hardware,
    /// gfx950's block-scaled MFMA kernels (`gemm_mx*`).
    MxHardware,
    /// Software decoding into bf16 and the bf16 matrix instruction (`gemm_decoded_*`).
    Decoded,
}

/// The signature of the 16-bit GEMM kernels.
type HalfGemm<T, O> = fn(*const T, *const T, *mut O, *const f32, f32, f32, u32, u32, u32, u32);
/// The signature of the FP8 GEMM kernels.
type Fp8Gemm<O> = fn(*const u8, *const u8, *mut O, *const f32, f32, f32, u32, u32, u32, u32);
/// The signature of the MX and decoding GEMM kernels.
type CodedGemm<O> = fn(
    *const u8,
    *const u8,
    *const u8,
    *const u8,
    *mut O,
    *const f32,
    f32,
    f32,
    u32,
    u32,
    u32,
    u32,
);

/// The input types of [`Library::gemm`]: [`f16`](struct@f16) and [`bf16`].
pub trait GemmInput: Float + sealed::GemmInputDecls {}

impl GemmInput for f16 {}
impl GemmInput for bf16 {}

/// The output types of every GEMM: the library's [`Float`]s.
pub trait GemmOutput: Float + sealed::GemmOutputDecls {}

impl GemmOutput for f32 {}
impl GemmOutput for f16 {}
impl GemmOutput for bf16 {}

/// The block formats [`Library::gemm_mx`] takes: MXFP8 (E4M3, E5M2), MXFP6 (E2M3, E3M2) and
/// MXFP4.
pub trait MxGemmFormat: DequantFormat + sealed::MxGemmCodes {}

impl MxGemmFormat for MxFp8E4M3 {}
impl MxGemmFormat for MxFp8E5M2 {}
impl MxGemmFormat for MxFp6E2M3 {}
impl MxGemmFormat for MxFp6E3M2 {}
impl MxGemmFormat for MxFp4 {}

pub(crate) mod sealed {
    use super::*;

    /// The 16-bit kernels of one input type.
    pub trait GemmInputDecls: Sized + 'static {
        /// `gemm_<t>_<o>_{rr,rc,cr,cc}`, in that order
        /// ([`layout_index`](super::layout_index)).
        fn gemm_kernels<O: GemmOutput>() -> [KernelDecl<HalfGemm<Self, O>>; 4];
        /// `gemm_<t>_<o>_{rr,rc,cr,cc}_64`, in that order.
        fn gemm_kernels_64<O: GemmOutput>() -> [KernelDecl<HalfGemm<Self, O>>; 4];
    }

    impl GemmInputDecls for bf16 {
        fn gemm_kernels<O: GemmOutput>() -> [KernelDecl<HalfGemm<bf16, O>>; 4] {
            O::BF16
        }
        fn gemm_kernels_64<O: GemmOutput>() -> [KernelDecl<HalfGemm<bf16, O>>; 4] {
            O::BF16_64
        }
    }

    impl GemmInputDecls for f16 {
        fn gemm_kernels<O: GemmOutput>() -> [KernelDecl<HalfGemm<f16, O>>; 4] {
            O::F16
        }
        fn gemm_kernels_64<O: GemmOutput>() -> [KernelDecl<HalfGemm<f16, O>>; 4] {
            O::F16_64
        }
    }

    /// Every GEMM kernel writing one output type.
    pub trait GemmOutputDecls: Sized + 'static {
        /// `gemm_bf16_<o>_{rr,rc,cr,cc}`.
        const BF16: [KernelDecl<HalfGemm<bf16, Self>>; 4];
        /// `gemm_f16_<o>_{rr,rc,cr,cc}`.
        const F16: [KernelDecl<HalfGemm<f16, Self>>; 4];
        /// `gemm_bf16_<o>_{rr,rc,cr,cc}_64`.
        const BF16_64: [KernelDecl<HalfGemm<bf16, Self>>; 4];
        /// `gemm_f16_<o>_{rr,rc,cr,cc}_64`.
        const F16_64: [KernelDecl<HalfGemm<f16, Self>>; 4];
        /// gfx942's `gemm_fp8_{e4m3fnuz,e5m2fnuz}_<o>`.
        const FP8_FNUZ: [KernelDecl<Fp8Gemm<Self>>; 2];
        /// gfx950's and gfx1201's `gemm_fp8_{e4m3fn,e5m2}_<o>`.
        const FP8_OCP: [KernelDecl<Fp8Gemm<Self>>; 2];
        /// gfx942's `gemm_fp8_{e4m3fnuz,e5m2fnuz}_<o>_64`.
        const FP8_FNUZ_64: [KernelDecl<Fp8Gemm<Self>>; 2];
        /// gfx950's and gfx1201's `gemm_fp8_{e4m3fn,e5m2}_<o>_64`.
        const FP8_OCP_64: [KernelDecl<Fp8Gemm<Self>>; 2];
        /// gfx950's `gemm_{mxfp8_e4m3,mxfp8_e5m2,mxfp6_e2m3,mxfp6_e3m2,mxfp4}_<o>`.
        const MX: [KernelDecl<CodedGemm<Self>>; 5];
        /// `gemm_decoded_<o>`.
        const DECODED: KernelDecl<CodedGemm<Self>>;
    }

    macro_rules! outputs {
        ($($t:ident: [$($bf16:ident)*] [$($f16:ident)*] [$($bf16_64:ident)*] [$($f16_64:ident)*]
           [$fnuz0:ident $fnuz1:ident] [$ocp0:ident $ocp1:ident]
           [$fnuz64_0:ident $fnuz64_1:ident] [$ocp64_0:ident $ocp64_1:ident]
           [$mx0:ident $mx1:ident $mx2:ident $mx3:ident $mx4:ident] $decoded:ident;)*) => {$(
            impl GemmOutputDecls for $t {
                const BF16: [KernelDecl<HalfGemm<bf16, $t>>; 4] = [$(kernels::$bf16),*];
                const F16: [KernelDecl<HalfGemm<f16, $t>>; 4] = [$(kernels::$f16),*];
                const BF16_64: [KernelDecl<HalfGemm<bf16, $t>>; 4] = [$(kernels::$bf16_64),*];
                const F16_64: [KernelDecl<HalfGemm<f16, $t>>; 4] = [$(kernels::$f16_64),*];
                const FP8_FNUZ: [KernelDecl<Fp8Gemm<$t>>; 2] = [kernels::$fnuz0, kernels::$fnuz1];
                const FP8_OCP: [KernelDecl<Fp8Gemm<$t>>; 2] = [kernels::$ocp0, kernels::$ocp1];
                const FP8_FNUZ_64: [KernelDecl<Fp8Gemm<$t>>; 2] =
                    [kernels::$fnuz64_0, kernels::$fnuz64_1];
                const FP8_OCP_64: [KernelDecl<Fp8Gemm<$t>>; 2] =
                    [kernels::$ocp64_0, kernels::$ocp64_1];
                const MX: [KernelDecl<CodedGemm<$t>>; 5] = [
                    mx_kernels::$mx0,
                    mx_kernels::$mx1,
                    mx_kernels::$mx2,
                    mx_kernels::$mx3,
                    mx_kernels::$mx4,
                ];
                const DECODED: KernelDecl<CodedGemm<$t>> = mx_kernels::$decoded;
            }
        )*};
    }

    outputs! {
        f32: [gemm_bf16_f32_rr gemm_bf16_f32_rc gemm_bf16_f32_cr gemm_bf16_f32_cc]
            [gemm_f16_f32_rr gemm_f16_f32_rc gemm_f16_f32_cr gemm_f16_f32_cc]
            [gemm_bf16_f32_rr_64 gemm_bf16_f32_rc_64 gemm_bf16_f32_cr_64 gemm_bf16_f32_cc_64]
            [gemm_f16_f32_rr_64 gemm_f16_f32_rc_64 gemm_f16_f32_cr_64 gemm_f16_f32_cc_64]
            [gemm_fp8_e4m3fnuz_f32 gemm_fp8_e5m2fnuz_f32] [gemm_fp8_e4m3fn_f32 gemm_fp8_e5m2_f32]
            [gemm_fp8_e4m3fnuz_f32_64 gemm_fp8_e5m2fnuz_f32_64]
            [gemm_fp8_e4m3fn_f32_64 gemm_fp8_e5m2_f32_64]
            [gemm_mxfp8_e4m3_f32 gemm_mxfp8_e5m2_f32 gemm_mxfp6_e2m3_f32 gemm_mxfp6_e3m2_f32 gemm_mxfp4_f32]
            gemm_decoded_f32;
        bf16: [gemm_bf16_bf16_rr gemm_bf16_bf16_rc gemm_bf16_bf16_cr gemm_bf16_bf16_cc]
            [gemm_f16_bf16_rr gemm_f16_bf16_rc gemm_f16_bf16_cr gemm_f16_bf16_cc]
            [gemm_bf16_bf16_rr_64 gemm_bf16_bf16_rc_64 gemm_bf16_bf16_cr_64 gemm_bf16_bf16_cc_64]
            [gemm_f16_bf16_rr_64 gemm_f16_bf16_rc_64 gemm_f16_bf16_cr_64 gemm_f16_bf16_cc_64]
            [gemm_fp8_e4m3fnuz_bf16 gemm_fp8_e5m2fnuz_bf16] [gemm_fp8_e4m3fn_bf16 gemm_fp8_e5m2_bf16]
            [gemm_fp8_e4m3fnuz_bf16_64 gemm_fp8_e5m2fnuz_bf16_64]
            [gemm_fp8_e4m3fn_bf16_64 gemm_fp8_e5m2_bf16_64]
            [gemm_mxfp8_e4m3_bf16 gemm_mxfp8_e5m2_bf16 gemm_mxfp6_e2m3_bf16 gemm_mxfp6_e3m2_bf16 gemm_mxfp4_bf16]
            gemm_decoded_bf16;
        f16: [gemm_bf16_f16_rr gemm_bf16_f16_rc gemm_bf16_f16_cr gemm_bf16_f16_cc]
            [gemm_f16_f16_rr gemm_f16_f16_rc gemm_f16_f16_cr gemm_f16_f16_cc]
            [gemm_bf16_f16_rr_64 gemm_bf16_f16_rc_64 gemm_bf16_f16_cr_64 gemm_bf16_f16_cc_64]
            [gemm_f16_f16_rr_64 gemm_f16_f16_rc_64 gemm_f16_f16_cr_64 gemm_f16_f16_cc_64]
            [gemm_fp8_e4m3fnuz_f16 gemm_fp8_e5m2fnuz_f16] [gemm_fp8_e4m3fn_f16 gemm_fp8_e5m2_f16]
            [gemm_fp8_e4m3fnuz_f16_64 gemm_fp8_e5m2fnuz_f16_64]
            [gemm_fp8_e4m3fn_f16_64 gemm_fp8_e5m2_f16_64]
            [gemm_mxfp8_e4m3_f16 gemm_mxfp8_e5m2_f16 gemm_mxfp6_e2m3_f16 gemm_mxfp6_e3m2_f16 gemm_mxfp4_f16]
            gemm_decoded_f16;
    }

    /// How the MX kernels name a block format.
    pub trait MxGemmCodes {
        /// Position in [`GemmOutputDecls::MX`].
        const INDEX: usize;
        /// The element format code of the decoding kernels.
        const FORMAT: u32;
        /// Bits per element code.
        const BITS: u32;
    }

    macro_rules! mx_codes {
        ($($t:ty => $index:literal, $format:ident, $bits:literal;)*) => {$(
            impl MxGemmCodes for $t {
                const INDEX: usize = $index;
                const FORMAT: u32 = $format;
                const BITS: u32 = $bits;
            }
        )*};
    }

    mx_codes! {
        MxFp8E4M3 => 0, FORMAT_E4M3FN, 8;
        MxFp8E5M2 => 1, FORMAT_E5M2, 8;
        MxFp6E2M3 => 2, FORMAT_E2M3, 6;
        MxFp6E3M2 => 3, FORMAT_E3M2, 6;
        MxFp4 => 4, FORMAT_E2M1, 4;
    }
}

/// The position of a layout pair's kernel among a type's 16-bit kernels: `rr`, `rc`, `cr`, `cc`
/// (A's layout first; `r` row-major, `c` column-major).
fn layout_index(a: Layout, b: Layout) -> usize {
    2 * usize::from(a == Layout::ColMajor) + usize::from(b == Layout::ColMajor)
}

/// The gfx with matrix cores the GEMM kernels are built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatrixGfx {
    Gfx90a,
    Gfx942,
    Gfx950,
    Gfx1100,
    Gfx1201,
}

impl MatrixGfx {
    /// The matrix-core gfx of a code object's processor name, or the error refusing
    /// `operation` on it.
    fn of(processor: &str, operation: &'static str) -> Result<MatrixGfx, LibraryError> {
        match processor {
            "gfx90a" => Ok(MatrixGfx::Gfx90a),
            "gfx942" => Ok(MatrixGfx::Gfx942),
            "gfx950" => Ok(MatrixGfx::Gfx950),
            "gfx1100" => Ok(MatrixGfx::Gfx1100),
            "gfx1201" => Ok(MatrixGfx::Gfx1201),
            other => Err(LibraryError::Unsupported {
                operation,
                gfx: other.to_owned(),
                reason: "the GEMM kernels need matrix cores (MFMA: gfx90a, gfx942, gfx950; WMMA: \
                         gfx1100, gfx1201): load a library built for one of them"
                    .to_owned(),
            }),
        }
    }

    /// The FP8 encodings this gfx's FP8 matrix instructions read (none on gfx90a and gfx1100).
    fn native_fp8(self) -> &'static [Fp8Format] {
        match self {
            MatrixGfx::Gfx90a | MatrixGfx::Gfx1100 => &[],
            MatrixGfx::Gfx942 => &[Fp8Format::E4M3Fnuz, Fp8Format::E5M2Fnuz],
            MatrixGfx::Gfx950 | MatrixGfx::Gfx1201 => &[Fp8Format::E4M3Fn, Fp8Format::E5M2],
        }
    }
}

/// The element format code of the decoding kernels for an FP8 format.
fn fp8_format_code(format: Fp8Format) -> u32 {
    match format {
        Fp8Format::E4M3Fn => FORMAT_E4M3FN,
        Fp8Format::E5M2 => FORMAT_E5M2,
        Fp8Format::E4M3Fnuz => FORMAT_E4M3FNUZ,
        Fp8Format::E5M2Fnuz => FORMAT_E5M2FNUZ,
    }
}

/// The launch argument of a device buffer.
fn buffer_arg<T>(buffer: &DeviceBuffer<T>) -> LaunchArg<'_> {
    LaunchArg::Buffer {
        address: buffer.address(),
        device: buffer.device(),
    }
}

/// A checked shape as the kernels' arguments, with its launch geometry.
#[derive(Debug, Clone, Copy)]
struct Launch {
    m: u32,
    n: u32,
    k: u32,
    grid: [u32; 3],
}

impl Launch {
    /// The launch configuration with `lds` bytes of dynamic LDS.
    fn config(&self, lds: u32) -> LaunchConfig {
        LaunchConfig::new(self.grid, [THREADS, 1, 1]).with_dynamic_lds(lds)
    }
}

/// Largest grid dimension in y (row tiles) the launch takes.
const MAX_ROW_TILES: u32 = 65535;

/// Largest `k`: the kernels step through K in tiles of up to 128 elements in 32-bit arithmetic.
const MAX_K: u32 = u32::MAX - 256;

/// Largest `n` for an output of `O`: the epilogue writes a 128-row block of `C` through a
/// range-checked buffer whose byte offsets stay below `2^31` (4,194,304 columns of f32,
/// 8,388,608 of 16-bit values).
const fn max_n<O>() -> u32 {
    ((1u64 << 31) / (BLOCK as u64 * size_of::<O>() as u64)) as u32
}

/// The block side [`GemmTile::Auto`] gives a GEMM of `shape` on a device of `compute_units`:
/// [`SMALL_BLOCK`] when blocks of [`BLOCK`] would be at most half as many as the compute units.
/// Blocks of 64 read the operands twice as often; on MI300X's cycle model at the peak clock
/// (304 compute units, f16 B row-major) they take 3.4 instead of 6.9 us at 256^3 (4 blocks of
/// 128), 11.8 instead of 22.1 at 1024^3 (64), 31.1 instead of 33.1 at 1536^3 (144), and 124.2
/// instead of 48.4 at 2048^3 (256), bound by the caches' bandwidth. The clock under matrix work
/// narrows the gaps without reversing them (at 1536^3, 33.8 against 35.8 us).
fn auto_block(shape: GemmShape, compute_units: u32) -> u32 {
    let blocks = shape.m.div_ceil(BLOCK as usize) * shape.n.div_ceil(BLOCK as usize);
    if 2 * blocks <= compute_units as usize {
        SMALL_BLOCK
    } else {
        BLOCK
    }
}

impl Library {
    /// The matrix-core gfx this library's code object is for, or an error naming it.
    fn matrix_gfx(&self, operation: &'static str) -> Result<MatrixGfx, LibraryError> {
        MatrixGfx::of(&self.module().code_object().target().processor, operation)
    }

    /// The block [`GemmTile::Auto`] takes for a GEMM of `shape` on this library's device, on the
    /// paths that have both blocks ([`Library::gemm`], and [`Library::gemm_fp8`] on
    /// [`GemmPath::Fp8Hardware`]): for a caller that sets one block against the other, or
    /// records which one ran.
    ///
    /// ```no_run
    /// use iron::library::{GemmShape, GemmTile, Library};
    /// use iron::Device;
    ///
    /// let device = Device::hip(0)?;
    /// let library = Library::load_built(&device)?;
    /// let tile = library.auto_gemm_tile(GemmShape { m: 256, n: 256, k: 256 });
    /// assert!(matches!(tile, GemmTile::Block64 | GemmTile::Block128));
    /// # Ok::<(), iron::library::LibraryError>(())
    /// ```
    pub fn auto_gemm_tile(&self, shape: GemmShape) -> GemmTile {
        if auto_block(shape, self.device().properties().compute_units) == SMALL_BLOCK {
            GemmTile::Block64
        } else {
            GemmTile::Block128
        }
    }

    /// The block side ([`BLOCK`] or [`SMALL_BLOCK`]) `tile` gives a GEMM of `shape` with
    /// kernels for both on this library's device.
    fn gemm_block(&self, tile: GemmTile, shape: GemmShape) -> u32 {
        match tile {
            GemmTile::Block128 => BLOCK,
            GemmTile::Block64 => SMALL_BLOCK,
            GemmTile::Auto => self.gemm_block(self.auto_gemm_tile(shape), shape),
        }
    }

    /// The block side of a GEMM that has kernels for blocks of [`BLOCK`] only: an error for
    /// [`GemmTile::Block64`].
    fn large_gemm_block(
        &self,
        operation: &'static str,
        tile: GemmTile,
    ) -> Result<u32, LibraryError> {
        if tile == GemmTile::Block64 {
            return Err(LibraryError::Unsupported {
                operation,
                gfx: self.module().code_object().target().processor.clone(),
                reason: "its kernels compute blocks of 128 x 128 only (GemmTile::Block128 or \
                         GemmTile::Auto); the 64 x 64 kernels are the 16-bit GEMM's (gemm) and \
                         the FP8 instructions' (gemm_fp8's GemmPath::Fp8Hardware)"
                    .to_string(),
            });
        }
        Ok(BLOCK)
    }

    /// Checks a shape and the output and bias buffers for blocks of `block` rows and columns;
    /// `None` when there is nothing to write.
    fn gemm_launch<O>(
        &self,
        operation: &'static str,
        shape: GemmShape,
        c: &DeviceBuffer<O>,
        epilogue: &Epilogue<'_>,
        block: u32,
    ) -> Result<Option<Launch>, LibraryError> {
        let GemmShape { m, n, k } = shape;
        let cells = elements_of(operation, m, n)?;
        check_holds(operation, "c", c, "m * n", cells)?;
        if let Some(bias) = epilogue.bias {
            check_holds(operation, "bias", bias, "n", n)?;
        }
        let launch = Launch {
            m: to_u32(operation, "m", m, u32::MAX)?,
            n: to_u32(operation, "n", n, max_n::<O>())?,
            k: to_u32(operation, "k", k, MAX_K)?,
            grid: [
                to_u32(
                    operation,
                    if block == BLOCK {
                        "ceil(n / 128) (column tiles)"
                    } else {
                        "ceil(n / 64) (column tiles)"
                    },
                    n.div_ceil(block as usize),
                    u32::MAX / THREADS,
                )?,
                to_u32(
                    operation,
                    if block == BLOCK {
                        "ceil(m / 128) (row tiles)"
                    } else {
                        "ceil(m / 64) (row tiles)"
                    },
                    m.div_ceil(block as usize),
                    MAX_ROW_TILES,
                )?,
                1,
            ],
        };
        Ok((cells > 0).then_some(launch))
    }

    /// Launches a GEMM kernel whose signature is `F`, with `buffers` before `(c, bias)` and the
    /// scalars after them.
    ///
    /// # Safety
    /// The buffers must hold what the kernel reads and writes for `launch`'s shape.
    #[allow(clippy::too_many_arguments, reason = "a GEMM launch's parts")]
    unsafe fn launch_gemm<F: KernelSignature, O>(
        &self,
        stream: &Stream,
        decl: KernelDecl<F>,
        lds: u32,
        buffers: &[LaunchArg<'_>],
        c: &mut DeviceBuffer<O>,
        epilogue: &Epilogue<'_>,
        launch: Launch,
        flags: u32,
    ) -> Result<(), LibraryError> {
        let kernel = self.module().kernel(decl)?;
        let (bias, flags) = match epilogue.bias {
            Some(bias) => (buffer_arg(bias), flags | FLAG_BIAS),
            None => (
                LaunchArg::Buffer {
                    address: 0,
                    device: c.device(),
                },
                flags,
            ),
        };
        let mut args = buffers.to_vec();
        args.extend([
            buffer_arg(c),
            bias,
            LaunchArg::value(&epilogue.alpha.to_le_bytes()),
            LaunchArg::value(&epilogue.beta.to_le_bytes()),
            LaunchArg::value(&launch.m.to_le_bytes()),
            LaunchArg::value(&launch.n.to_le_bytes()),
            LaunchArg::value(&launch.k.to_le_bytes()),
            LaunchArg::value(&flags.to_le_bytes()),
        ]);
        // SAFETY: as the caller guarantees; the signature was checked when resolving the kernel
        // and the arguments follow it; the bias is read only with FLAG_BIAS.
        unsafe { stream.launch_untyped(kernel.kernel(), launch.config(lds), &args)? };
        Ok(())
    }

    /// `C = alpha * A B + beta * C (+ bias)` with A `[m, k]` and B `[k, n]` of f16 or bf16 in
    /// the given layouts, `C` row-major `[m, n]` of any [`GemmOutput`].
    #[allow(
        clippy::too_many_arguments,
        reason = "a GEMM's operands, layouts and shape"
    )]
    pub fn gemm<T: GemmInput, O: GemmOutput>(
        &self,
        stream: &Stream,
        (a, a_layout): (&DeviceBuffer<T>, Layout),
        (b, b_layout): (&DeviceBuffer<T>, Layout),
        c: &mut DeviceBuffer<O>,
        shape: GemmShape,
        epilogue: Epilogue<'_>,
    ) -> Result<(), LibraryError> {
        const OP: &str = "gemm";
        self.matrix_gfx(OP)?;
        check_holds(OP, "a", a, "m * k", elements_of(OP, shape.m, shape.k)?)?;
        check_holds(OP, "b", b, "k * n", elements_of(OP, shape.k, shape.n)?)?;
        let block = self.gemm_block(epilogue.tile, shape);
        let Some(launch) = self.gemm_launch(OP, shape, c, &epilogue, block)? else {
            return Ok(());
        };
        let kernels = if block == BLOCK {
            T::gemm_kernels::<O>()
        } else {
            T::gemm_kernels_64::<O>()
        };
        let decl = kernels[layout_index(a_layout, b_layout)];
        let buffers = [buffer_arg(a), buffer_arg(b)];
        // SAFETY: gemm_<t>_<o>_<layouts> reads A's m * k and B's k * n elements in the layouts
        // its name gives, C's m * n (when beta != 0) and the bias's n (with FLAG_BIAS), and
        // writes C's m * n; every buffer holds that (checked above) and starts 16-byte aligned.
        unsafe {
            self.launch_gemm(
                stream,
                decl,
                HALF_LDS_BYTES,
                &buffers,
                c,
                &epilogue,
                launch,
                0,
            )
        }
    }

    /// The path [`Library::gemm_fp8`] takes for these formats on this library's gfx.
    pub fn fp8_gemm_path(&self, a: Fp8Format, b: Fp8Format) -> Result<GemmPath, LibraryError> {
        let native = self.matrix_gfx("gemm_fp8")?.native_fp8();
        Ok(if a == b && native.contains(&a) {
            GemmPath::Fp8Hardware
        } else {
            GemmPath::Decoded
        })
    }

    /// `C = alpha * (scale_a A) (scale_b B) + beta * C (+ bias)` with A row-major `[m, k]` and
    /// B column-major (`[n, k]`, K contiguous) FP8 codes, `C` row-major `[m, n]`. The path is
    /// [`Library::fp8_gemm_path`]'s.
    pub fn gemm_fp8<O: GemmOutput>(
        &self,
        stream: &Stream,
        a: Fp8Matrix<'_>,
        b: Fp8Matrix<'_>,
        c: &mut DeviceBuffer<O>,
        shape: GemmShape,
        epilogue: Epilogue<'_>,
    ) -> Result<(), LibraryError> {
        const OP: &str = "gemm_fp8";
        let gfx = self.matrix_gfx(OP)?;
        let path = self.fp8_gemm_path(a.format, b.format)?;
        check_holds(
            OP,
            "a",
            a.codes,
            "m * k",
            elements_of(OP, shape.m, shape.k)?,
        )?;
        check_holds(
            OP,
            "b",
            b.codes,
            "k * n",
            elements_of(OP, shape.k, shape.n)?,
        )?;
        let block = if path == GemmPath::Fp8Hardware {
            self.gemm_block(epilogue.tile, shape)
        } else {
            self.large_gemm_block(OP, epilogue.tile)?
        };
        let Some(launch) = self.gemm_launch(OP, shape, c, &epilogue, block)? else {
            return Ok(());
        };
        let epilogue = Epilogue {
            alpha: epilogue.alpha * a.scale * b.scale,
            ..epilogue
        };
        let e5m2 = usize::from(matches!(a.format, Fp8Format::E5M2 | Fp8Format::E5M2Fnuz));
        // SAFETY (both launches): the kernel reads A's m * k and B's n * k codes (row-major,
        // K contiguous), C and the bias as in `gemm`, and writes C's m * n; every buffer holds
        // that (checked above). The decoding kernel reads no scale codes without the SCALED
        // flags.
        unsafe {
            if path == GemmPath::Fp8Hardware {
                let decl = match (gfx, block == BLOCK) {
                    (MatrixGfx::Gfx942, true) => O::FP8_FNUZ[e5m2],
                    (MatrixGfx::Gfx942, false) => O::FP8_FNUZ_64[e5m2],
                    (_, true) => O::FP8_OCP[e5m2],
                    (_, false) => O::FP8_OCP_64[e5m2],
                };
                let buffers = [buffer_arg(a.codes), buffer_arg(b.codes)];
                self.launch_gemm(
                    stream,
                    decl,
                    FP8_LDS_BYTES,
                    &buffers,
                    c,
                    &epilogue,
                    launch,
                    0,
                )
            } else {
                let flags = format_flags(fp8_format_code(a.format), fp8_format_code(b.format));
                let null = LaunchArg::Buffer {
                    address: 0,
                    device: a.codes.device(),
                };
                let buffers = [buffer_arg(a.codes), null, buffer_arg(b.codes), null];
                self.launch_gemm(
                    stream,
                    O::DECODED,
                    DECODED_LDS_BYTES,
                    &buffers,
                    c,
                    &epilogue,
                    launch,
                    flags,
                )
            }
        }
    }

    /// The path [`Library::gemm_mx`] takes for these formats on this library's gfx.
    pub fn mx_gemm_path<FA: MxGemmFormat, FB: MxGemmFormat>(
        &self,
    ) -> Result<GemmPath, LibraryError> {
        let gfx = self.matrix_gfx("gemm_mx")?;
        Ok(if gfx == MatrixGfx::Gfx950 && FA::INDEX == FB::INDEX {
            GemmPath::MxHardware
        } else {
            GemmPath::Decoded
        })
    }

    /// `C = alpha * A B + beta * C (+ bias)` with A an `[m, k]` and B an `[n, k]` (B
    /// transposed: column-major `[k, n]`) block-scaled tensor, `C` row-major `[m, n]`. The path
    /// is [`Library::mx_gemm_path`]'s.
    pub fn gemm_mx<FA: MxGemmFormat, FB: MxGemmFormat, O: GemmOutput>(
        &self,
        stream: &Stream,
        a: &DeviceQuantizedTensor<FA>,
        b: &DeviceQuantizedTensor<FB>,
        c: &mut DeviceBuffer<O>,
        epilogue: Epilogue<'_>,
    ) -> Result<(), LibraryError> {
        let hardware = self.mx_gemm_path::<FA, FB>()? == GemmPath::MxHardware;
        self.gemm_coded(stream, a, b, c, epilogue, hardware)
    }

    /// [`Library::gemm_mx`] on the portable path ([`GemmPath::Decoded`]) whatever the gfx: the
    /// same products through software decoding and the bf16 matrix instruction.
    pub fn gemm_mx_decoded<FA: MxGemmFormat, FB: MxGemmFormat, O: GemmOutput>(
        &self,
        stream: &Stream,
        a: &DeviceQuantizedTensor<FA>,
        b: &DeviceQuantizedTensor<FB>,
        c: &mut DeviceBuffer<O>,
        epilogue: Epilogue<'_>,
    ) -> Result<(), LibraryError> {
        self.matrix_gfx("gemm_mx")?;
        self.gemm_coded(stream, a, b, c, epilogue, false)
    }

    /// The MX GEMM on the hardware (`hardware`) or the decoding path.
    fn gemm_coded<FA: MxGemmFormat, FB: MxGemmFormat, O: GemmOutput>(
        &self,
        stream: &Stream,
        a: &DeviceQuantizedTensor<FA>,
        b: &DeviceQuantizedTensor<FB>,
        c: &mut DeviceBuffer<O>,
        epilogue: Epilogue<'_>,
        hardware: bool,
    ) -> Result<(), LibraryError> {
        const OP: &str = "gemm_mx";
        if a.cols() != b.cols() {
            return Err(LibraryError::BadShape {
                operation: OP,
                detail: format!(
                    "A is [{}, {}] and B is [{}, {}]: both must have k columns (B is given as [n, k])",
                    a.rows(),
                    a.cols(),
                    b.rows(),
                    b.cols()
                ),
            });
        }
        let shape = GemmShape {
            m: a.rows(),
            n: b.rows(),
            k: a.cols(),
        };
        let block = self.large_gemm_block(OP, epilogue.tile)?;
        let Some(launch) = self.gemm_launch(OP, shape, c, &epilogue, block)? else {
            return Ok(());
        };
        let buffers = [
            buffer_arg(a.elements()),
            buffer_arg(a.scales()),
            buffer_arg(b.elements()),
            buffer_arg(b.scales()),
        ];
        // SAFETY (both launches): the kernel reads A's m x k and B's n x k codes with their
        // scale codes (the tensors' constructors checked their buffers hold them; k is a
        // multiple of 32), C and the bias as in `gemm`, and writes C's m * n.
        unsafe {
            if hardware {
                let decl = O::MX[FA::INDEX];
                let lds = mx_lds_bytes(FA::BITS);
                self.launch_gemm(stream, decl, lds, &buffers, c, &epilogue, launch, 0)
            } else {
                let flags = format_flags(FA::FORMAT, FB::FORMAT) | FLAG_A_SCALED | FLAG_B_SCALED;
                self.launch_gemm(
                    stream,
                    O::DECODED,
                    DECODED_LDS_BYTES,
                    &buffers,
                    c,
                    &epilogue,
                    launch,
                    flags,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mx_formats_index_their_kernels_and_decoders() {
        use sealed::{GemmOutputDecls, MxGemmCodes};
        assert_eq!(
            <f32 as GemmOutputDecls>::MX[MxFp4::INDEX].name,
            "gemm_mxfp4_f32"
        );
        assert_eq!(
            <bf16 as GemmOutputDecls>::MX[MxFp6E3M2::INDEX].name,
            "gemm_mxfp6_e3m2_bf16"
        );
        assert_eq!(
            <f16 as GemmOutputDecls>::MX[MxFp8E5M2::INDEX].name,
            "gemm_mxfp8_e5m2_f16"
        );
        assert_eq!(
            <f32 as GemmOutputDecls>::FP8_FNUZ[1].name,
            "gemm_fp8_e5m2fnuz_f32"
        );
        assert_eq!(
            <f16 as GemmOutputDecls>::FP8_OCP[0].name,
            "gemm_fp8_e4m3fn_f16"
        );
        assert_eq!(MxFp6E2M3::BITS, 6);
        assert_eq!(MxFp4::FORMAT, FORMAT_E2M1);
    }

    #[test]
    fn every_matrix_gfx_is_taken_and_others_are_refused_naming_the_fix() {
        for (gfx, native) in [
            ("gfx90a", 0),
            ("gfx942", 2),
            ("gfx950", 2),
            ("gfx1100", 0),
            ("gfx1201", 2),
        ] {
            let matrix = MatrixGfx::of(gfx, "gemm").unwrap();
            assert_eq!(matrix.native_fp8().len(), native, "{gfx}");
        }
        assert_eq!(
            MatrixGfx::Gfx1201.native_fp8(),
            [Fp8Format::E4M3Fn, Fp8Format::E5M2]
        );
        let err = MatrixGfx::of("gfx1030", "gemm_fp8").unwrap_err();
        assert!(matches!(err, LibraryError::Unsupported { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "gemm_fp8: not available on gfx1030: the GEMM kernels need matrix cores (MFMA: gfx90a, \
             gfx942, gfx950; WMMA: gfx1100, gfx1201): load a library built for one of them"
        );
    }

    #[test]
    fn auto_takes_blocks_of_64_while_blocks_of_128_would_fill_half_the_compute_units() {
        let shape = |m, n| GemmShape { m, n, k: 256 };
        assert_eq!(auto_block(shape(256, 256), 304), SMALL_BLOCK);
        assert_eq!(auto_block(shape(1536, 1536), 304), SMALL_BLOCK);
        assert_eq!(auto_block(shape(1536, 1664), 304), BLOCK);
        assert_eq!(auto_block(shape(2048, 2048), 304), BLOCK);
        assert_eq!(auto_block(shape(1, 1), 1), BLOCK);
        assert_eq!(auto_block(shape(1, 1), 2), SMALL_BLOCK);
    }

    #[test]
    fn the_default_epilogue_is_a_plain_product() {
        let e = Epilogue::default();
        assert_eq!((e.alpha, e.beta, e.bias.is_none()), (1.0, 0.0, true));
        assert_eq!(e.tile, GemmTile::Auto);
    }
}
