//! GEMM on the matrix cores (CDNA's MFMA: gfx90a, gfx942, gfx950; RDNA's WMMA: gfx1100,
//! gfx1201, wave32 and wave64), 16-bit and FP8 inputs: `C = alpha * A B + beta * C (+ bias)`,
//! `A` `[M, K]`, `B` `[K, N]`, `C` `[M, N]` row-major, accumulated in f32. The microscaled
//! formats are in [`crate::gemm_mx`]. The same kernels, arguments, launch and results on every
//! gfx: only the matrix instruction differs.
//!
//! Kernels (arguments `(a, b, c, bias, alpha, beta, m, n, k, flags)`):
//! - `gemm_{bf16,f16}_{f32,bf16,f16}_{rr,rc,cr,cc}`: A and B f16 or bf16 (both the same), `C`
//!   in the second type, A's and B's layouts in the suffix (`r` row-major, `c` column-major; A's
//!   first); every gfx. Instruction: `v_mfma_f32_32x32x16_{f16,bf16}` on gfx950,
//!   `v_mfma_f32_32x32x8_{f16,bf16}` on gfx90a and gfx942, `v_wmma_f32_16x16x16_{f16,bf16}` on
//!   gfx1100 and gfx1201.
//! - `gemm_{bf16,f16}_{f32,bf16,f16}_{rr,rc,cr,cc}_64`: the same in blocks of [`SMALL_BLOCK`]
//!   (64 x 64 of `C` per workgroup instead of 128 x 128), for products too small to give every
//!   compute unit a block of 128: four times the workgroups (16 instead of 4 at 256 x 256), each
//!   reading its tiles of A and B once, so twice the operand traffic in all. The FP8 kernels
//!   below have `_64` instances too.
//! - `gemm_fp8_{e4m3fnuz,e5m2fnuz}_{f32,bf16,f16}` (gfx942) and
//!   `gemm_fp8_{e4m3fn,e5m2}_{f32,bf16,f16}` (gfx950, gfx1201): A and B FP8 codes of the named
//!   format (both the same), through `v_mfma_f32_32x32x16_{fp8_fp8,bf8_bf8}` (gfx942, gfx950) or
//!   `v_wmma_f32_16x16x16_{fp8_fp8,bf8_bf8}` (gfx1201); the gfx's FP8 is the only one its
//!   instructions read (FNUZ on gfx942, OCP on gfx950 and gfx1201). A per-tensor scale of A and
//!   B is applied by folding it into `alpha` (the host does). Other FP8 formats, mixed pairs and
//!   the gfx without FP8 instructions (gfx90a, gfx1100) run on [`crate::gemm_mx`]'s decoding
//!   kernels.
//!
//! Layouts: `C` is row-major (`C[i][j]` at `c[i * n + j]`). A is row-major (`a[i * k + l]`) or
//! column-major (`a[l * m + i]`), B row-major (`b[l * n + j]`) or column-major (`b[j * k + l]`),
//! each layout pair its own kernel: one kernel for all four held four main loops, 52 to 96 KB
//! of code, more than an instruction cache holds. FP8 kernels take A row-major and B
//! column-major only (both K-contiguous: "TN", the layout FP8 GEMM libraries use).
//!
//! `flags` holds [`FLAG_BIAS`]: `bias` (`n` f32) is added to every row. Without it `bias`
//! is never read (it may be null).
//!
//! Arithmetic: products of A and B elements are exact and summed in f32 by the matrix
//! instructions, each over 8 to 16 of a K tile's elements (the hardware's internal order within
//! an instruction): consecutive ones where a lane's fragment is 16 or 32 bytes, else
//! interleaved sets (see `gemm_tile::PlainStep`). Then `v = alpha * acc`, `v = fma(beta, C_old, v)` when
//! `beta != 0` (when `beta == 0`, `C` is not read: it may hold NaN), `v += bias[j]` with a bias,
//! and `v` is rounded once to `C`'s type (nearest even). `A B` is computed whatever `alpha` is.
//! On gfx90a the f16 and bf16 MFMAs flush subnormal inputs and results to zero (AMD documents
//! this MI200 behaviour); the other gfx keep them, and the FP8 instructions keep them
//! everywhere.
//!
//! Launch: workgroups of exactly [`THREADS`] (256) work-items, 1-D; a grid of `(ceil(n / 128),
//! ceil(m / 128))` workgroups (x over columns, y over rows of `C`; `/ 64` for the `_64` kernels);
//! dynamic LDS [`HALF_LDS_BYTES`] or [`FP8_LDS_BYTES`]. Any `m`, `n`, `k` (including 0: `k = 0`
//! writes `beta * C + bias`); 16-byte loads where rows of A and B are a multiple of 16 bytes,
//! narrower at the edges. Buffers 16-byte aligned (device allocations are).
//!
//! Tiling (see `gemm_tile`): each workgroup computes a 128 x 128 tile of `C` as instruction tiles
//! (32 x 32 on CDNA, 16 x 16 on RDNA), each wave 64 x 64 of it (4 waves of 64 lanes) or 64 x 32 (8
//! waves of 32 lanes); K tiles of 32 (16-bit) or 64 (FP8) elements are staged in LDS (K-contiguous,
//! rows of 64 bytes whose 16-byte chunks are swizzled against bank conflicts), double-buffered.
//! The `_64` kernels compute 64 x 64 (waves of 32 x 32, or 32 x 16 in wave32) over K tiles twice
//! as deep (64 16-bit elements, 128 FP8 codes), staged as two K subtiles in the same LDS bytes
//! and multiplied in K's order, so every element's sum is the same as in blocks of 128 (but for
//! the sign of a zero sum when the last K tile's second subtile lies wholly past `k` and adds
//! zeros). A
//! block whose K tiles all lie inside both matrices (aligned as the 16-byte loads need: `k` a
//! multiple of the K tile, K-contiguous rows and rows-contiguous columns a multiple of 8 elements)
//! runs a loop without per-tile checks. A block inside `C` with `n` a multiple of 4 writes `C` with
//! one 16-byte (f32) or 8-byte (16-bit) store per 4 columns on every gfx but gfx1100, whose WMMA
//! accumulators hold every other row (there, one store per element).

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::dtype::Float,
    crate::gemm_stage::{HALF_TILE_K, HalfOperand, half_tile_k},
    crate::gemm_tile::{Output, PlainStep, block_origin, gemm},
    iron_intrinsics::matrix::Mma,
};

/// Work-items per workgroup of every GEMM kernel (exactly this many).
pub const THREADS: u32 = 256;
/// Rows and columns of `C` per workgroup.
pub const BLOCK: u32 = 128;
/// Rows and columns of `C` per workgroup of the `_64` kernels: for products whose blocks of
/// [`BLOCK`] would leave most compute units idle.
pub const SMALL_BLOCK: u32 = 64;
/// Flag: add `bias` (`n` f32) to every row of `C`.
pub const FLAG_BIAS: u32 = 1 << 2;
/// Dynamic LDS of the 16-bit kernels: two buffers of A's and B's 128 x 32 tiles (rows of 64
/// bytes, swizzled).
pub const HALF_LDS_BYTES: u32 = 2 * 2 * BLOCK * 64;
/// Dynamic LDS of the FP8 kernels: two buffers of A's and B's 128 x 64 tiles (rows of 64 bytes,
/// swizzled).
pub const FP8_LDS_BYTES: u32 = 2 * 2 * BLOCK * 64;

/// The f16 matrix instruction of the GEMM kernels on this gfx: the largest tile there is (32 x
/// 32 on CDNA, which halves the instructions per K tile against 16 x 16).
#[cfg(iron_gfx = "gfx950")]
pub(crate) type GemmF16Core = iron_intrinsics::matrix::MfmaF32_32x32x16F16;
/// The f16 matrix instruction of the GEMM kernels on this gfx.
#[cfg(any(iron_gfx = "gfx90a", iron_gfx = "gfx942", not(target_arch = "amdgpu")))]
pub(crate) type GemmF16Core = iron_intrinsics::matrix::MfmaF32_32x32x8F16;
/// The f16 matrix instruction of the GEMM kernels on this gfx.
#[cfg(iron_matrix = "wmma")]
pub(crate) type GemmF16Core = F16Core;
/// The bf16 matrix instruction of the GEMM kernels on this gfx (also the decoding kernels').
#[cfg(iron_gfx = "gfx950")]
pub(crate) type GemmBf16Core = iron_intrinsics::matrix::MfmaF32_32x32x16Bf16;
/// The bf16 matrix instruction of the GEMM kernels on this gfx (also the decoding kernels').
#[cfg(any(iron_gfx = "gfx90a", iron_gfx = "gfx942", not(target_arch = "amdgpu")))]
pub(crate) type GemmBf16Core = iron_intrinsics::matrix::MfmaF32_32x32x8Bf16;
/// The bf16 matrix instruction of the GEMM kernels on this gfx (also the decoding kernels').
#[cfg(iron_matrix = "wmma")]
pub(crate) type GemmBf16Core = Bf16Core;

/// The f16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(iron_gfx = "gfx950")]
pub(crate) type F16Core = iron_intrinsics::matrix::MfmaF32_16x16x32F16;
/// The f16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(any(iron_gfx = "gfx90a", iron_gfx = "gfx942", not(target_arch = "amdgpu")))]
pub(crate) type F16Core = iron_intrinsics::matrix::MfmaF32_16x16x16F16;
/// The f16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(iron_matrix = "wmma")]
pub(crate) type F16Core = iron_intrinsics::matrix::WmmaF32_16x16x16F16;
/// The bf16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(iron_gfx = "gfx950")]
pub(crate) type Bf16Core = iron_intrinsics::matrix::MfmaF32_16x16x32Bf16;
/// The bf16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(any(iron_gfx = "gfx90a", iron_gfx = "gfx942", not(target_arch = "amdgpu")))]
pub(crate) type Bf16Core = iron_intrinsics::matrix::MfmaF32_16x16x16Bf16;
/// The bf16 matrix instruction of the implicit-GEMM convolution on this gfx.
#[cfg(iron_matrix = "wmma")]
pub(crate) type Bf16Core = iron_intrinsics::matrix::WmmaF32_16x16x16Bf16;

/// The 16-bit GEMM with instruction `I`, output type `O`, A K-contiguous (row-major) when
/// `A_ROWS` and B K-contiguous (column-major) when `B_COLS`, in blocks of `B` rows and columns.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "a GEMM kernel's arguments")]
unsafe fn gemm_half<I: Mma, O: Float, const A_ROWS: bool, const B_COLS: bool, const B: u32>(
    a: *const u16,
    b: *const u16,
    c: *mut O,
    bias: *const f32,
    alpha: f32,
    beta: f32,
    (m, n, k): (u32, u32, u32),
    flags: u32,
) {
    let (row0, col0) = block_origin::<B>();
    let a = HalfOperand::<A_ROWS, B> {
        base: a,
        rows: m,
        k,
        row0,
    };
    let b = HalfOperand::<B_COLS, B> {
        base: b,
        rows: n,
        k,
        row0: col0,
    };
    let out = Output::new(c, bias, alpha, beta, m, n, flags);
    let tiles = k.div_ceil(half_tile_k(B));
    // SAFETY: as the caller guarantees.
    unsafe { gemm::<_, _, PlainStep<I, HALF_TILE_K>, O, B>(&a, &b, tiles, &out) };
}

/// `C = alpha * A B + beta * C (+ bias)`, A and B `T` (multiplied by the gfx's matrix
/// instruction `I` for `T`), C `O`, A row-major when `A_ROWS` (else column-major) and B
/// column-major when `B_COLS` (else row-major); see the module docs.
#[kernel(
    block = 256,
    instances = [
        gemm_bf16_f32_rr<bf16, GemmBf16Core, f32, true, false, BLOCK>,
        gemm_bf16_f32_rc<bf16, GemmBf16Core, f32, true, true, BLOCK>,
        gemm_bf16_f32_cr<bf16, GemmBf16Core, f32, false, false, BLOCK>,
        gemm_bf16_f32_cc<bf16, GemmBf16Core, f32, false, true, BLOCK>,
        gemm_bf16_bf16_rr<bf16, GemmBf16Core, bf16, true, false, BLOCK>,
        gemm_bf16_bf16_rc<bf16, GemmBf16Core, bf16, true, true, BLOCK>,
        gemm_bf16_bf16_cr<bf16, GemmBf16Core, bf16, false, false, BLOCK>,
        gemm_bf16_bf16_cc<bf16, GemmBf16Core, bf16, false, true, BLOCK>,
        gemm_bf16_f16_rr<bf16, GemmBf16Core, f16, true, false, BLOCK>,
        gemm_bf16_f16_rc<bf16, GemmBf16Core, f16, true, true, BLOCK>,
        gemm_bf16_f16_cr<bf16, GemmBf16Core, f16, false, false, BLOCK>,
        gemm_bf16_f16_cc<bf16, GemmBf16Core, f16, false, true, BLOCK>,
        gemm_f16_f32_rr<f16, GemmF16Core, f32, true, false, BLOCK>,
        gemm_f16_f32_rc<f16, GemmF16Core, f32, true, true, BLOCK>,
        gemm_f16_f32_cr<f16, GemmF16Core, f32, false, false, BLOCK>,
        gemm_f16_f32_cc<f16, GemmF16Core, f32, false, true, BLOCK>,
        gemm_f16_bf16_rr<f16, GemmF16Core, bf16, true, false, BLOCK>,
        gemm_f16_bf16_rc<f16, GemmF16Core, bf16, true, true, BLOCK>,
        gemm_f16_bf16_cr<f16, GemmF16Core, bf16, false, false, BLOCK>,
        gemm_f16_bf16_cc<f16, GemmF16Core, bf16, false, true, BLOCK>,
        gemm_f16_f16_rr<f16, GemmF16Core, f16, true, false, BLOCK>,
        gemm_f16_f16_rc<f16, GemmF16Core, f16, true, true, BLOCK>,
        gemm_f16_f16_cr<f16, GemmF16Core, f16, false, false, BLOCK>,
        gemm_f16_f16_cc<f16, GemmF16Core, f16, false, true, BLOCK>,
        gemm_bf16_f32_rr_64<bf16, GemmBf16Core, f32, true, false, SMALL_BLOCK>,
        gemm_bf16_f32_rc_64<bf16, GemmBf16Core, f32, true, true, SMALL_BLOCK>,
        gemm_bf16_f32_cr_64<bf16, GemmBf16Core, f32, false, false, SMALL_BLOCK>,
        gemm_bf16_f32_cc_64<bf16, GemmBf16Core, f32, false, true, SMALL_BLOCK>,
        gemm_bf16_bf16_rr_64<bf16, GemmBf16Core, bf16, true, false, SMALL_BLOCK>,
        gemm_bf16_bf16_rc_64<bf16, GemmBf16Core, bf16, true, true, SMALL_BLOCK>,
        gemm_bf16_bf16_cr_64<bf16, GemmBf16Core, bf16, false, false, SMALL_BLOCK>,
        gemm_bf16_bf16_cc_64<bf16, GemmBf16Core, bf16, false, true, SMALL_BLOCK>,
        gemm_bf16_f16_rr_64<bf16, GemmBf16Core, f16, true, false, SMALL_BLOCK>,
        gemm_bf16_f16_rc_64<bf16, GemmBf16Core, f16, true, true, SMALL_BLOCK>,
        gemm_bf16_f16_cr_64<bf16, GemmBf16Core, f16, false, false, SMALL_BLOCK>,
        gemm_bf16_f16_cc_64<bf16, GemmBf16Core, f16, false, true, SMALL_BLOCK>,
        gemm_f16_f32_rr_64<f16, GemmF16Core, f32, true, false, SMALL_BLOCK>,
        gemm_f16_f32_rc_64<f16, GemmF16Core, f32, true, true, SMALL_BLOCK>,
        gemm_f16_f32_cr_64<f16, GemmF16Core, f32, false, false, SMALL_BLOCK>,
        gemm_f16_f32_cc_64<f16, GemmF16Core, f32, false, true, SMALL_BLOCK>,
        gemm_f16_bf16_rr_64<f16, GemmF16Core, bf16, true, false, SMALL_BLOCK>,
        gemm_f16_bf16_rc_64<f16, GemmF16Core, bf16, true, true, SMALL_BLOCK>,
        gemm_f16_bf16_cr_64<f16, GemmF16Core, bf16, false, false, SMALL_BLOCK>,
        gemm_f16_bf16_cc_64<f16, GemmF16Core, bf16, false, true, SMALL_BLOCK>,
        gemm_f16_f16_rr_64<f16, GemmF16Core, f16, true, false, SMALL_BLOCK>,
        gemm_f16_f16_rc_64<f16, GemmF16Core, f16, true, true, SMALL_BLOCK>,
        gemm_f16_f16_cr_64<f16, GemmF16Core, f16, false, false, SMALL_BLOCK>,
        gemm_f16_f16_cc_64<f16, GemmF16Core, f16, false, true, SMALL_BLOCK>,
    ]
)]
#[allow(clippy::too_many_arguments, reason = "a GEMM kernel's arguments")]
pub fn gemm_16bit<T, I: Mma, O: Float, const A_ROWS: bool, const B_COLS: bool, const B: u32>(
    a: *const T,
    b: *const T,
    c: *mut O,
    bias: *const f32,
    alpha: f32,
    beta: f32,
    m: u32,
    n: u32,
    k: u32,
    flags: u32,
) {
    // SAFETY: the launch follows the module's contract.
    unsafe {
        gemm_half::<I, O, A_ROWS, B_COLS, B>(
            a as *const u16,
            b as *const u16,
            c,
            bias,
            alpha,
            beta,
            (m, n, k),
            flags,
        )
    };
}

/// Bytes per row of an FP8 K tile.
#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
const FP8_TILE_K: u32 = 64;

/// The FP8 matrix instruction of this gfx, A and B in encoding `F`.
#[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
type Fp8Core<F> = iron_intrinsics::matrix::MfmaF32_32x32x16F8<F, F>;
/// The FP8 matrix instruction of this gfx, A and B in encoding `F`.
#[cfg(iron_gfx = "gfx1201")]
type Fp8Core<F> = iron_intrinsics::matrix::WmmaF32_16x16x16F8<F, F>;

/// The FP8 GEMM with codes of kind `F` for A and B, output type `O`, in blocks of `B` rows and
/// columns.
///
/// # Safety
/// The kernel's contract (module docs).
#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "a GEMM kernel's arguments")]
unsafe fn gemm_fp8<F: iron_intrinsics::matrix::F8Kind, O: Float, const B: u32>(
    a: *const u8,
    b: *const u8,
    c: *mut O,
    bias: *const f32,
    alpha: f32,
    beta: f32,
    (m, n, k): (u32, u32, u32),
    flags: u32,
) {
    use crate::gemm_stage::CodeOperand;
    const { assert!(CodeOperand::<2, B>::TILE_BYTES == FP8_TILE_K) };
    let (row0, col0) = block_origin::<B>();
    let a = CodeOperand::<2, B> {
        base: a,
        rows: m,
        row_bytes: k,
        row0,
    };
    let b = CodeOperand::<2, B> {
        base: b,
        rows: n,
        row_bytes: k,
        row0: col0,
    };
    let out = Output::new(c, bias, alpha, beta, m, n, flags);
    let tiles = k.div_ceil(CodeOperand::<2, B>::K_TILE_BYTES);
    type Step<F> = PlainStep<Fp8Core<F>, FP8_TILE_K>;
    // SAFETY: as the caller guarantees.
    unsafe { gemm::<_, _, Step<F>, O, B>(&a, &b, tiles, &out) };
}

/// Declares an FP8 GEMM kernel: `fnuz` ones for gfx942, `ocp` ones for gfx950 and gfx1201.
macro_rules! fp8_kernel {
    (fnuz, $($rest:tt)*) => {
        fp8_kernel!(@ iron_gfx = "gfx942", "gfx942", $($rest)*);
    };
    (ocp, $($rest:tt)*) => {
        fp8_kernel!(@ any(iron_gfx = "gfx950", iron_gfx = "gfx1201"), "gfx950 and gfx1201", $($rest)*);
    };
    (@ $cfg:meta, $gfx:literal, $name:ident, $kind:ident, $format:literal, $out:ident, $block:ident) => {
        #[doc = concat!("`C = alpha * A B + beta * C (+ bias)`, A and B ", $format, " codes (A row-major, B column-major), C ", stringify!($out), ", in blocks of [`", stringify!($block), "`]; ", $gfx, " only; see the module docs.")]
        #[cfg(any(not(target_arch = "amdgpu"), $cfg))]
        #[kernel(max_threads = 256)]
        pub fn $name(
            a: *const u8,
            b: *const u8,
            c: *mut $out,
            bias: *const f32,
            alpha: f32,
            beta: f32,
            m: u32,
            n: u32,
            k: u32,
            flags: u32,
        ) {
            use iron_intrinsics::matrix::$kind;
            // SAFETY: the launch follows the module's contract.
            unsafe {
                gemm_fp8::<$kind, $out, $block>(a, b, c, bias, alpha, beta, (m, n, k), flags)
            };
        }
    };
}

fp8_kernel!(fnuz, gemm_fp8_e4m3fnuz_f32, Fp8, "E4M3FNUZ", f32, BLOCK);
fp8_kernel!(fnuz, gemm_fp8_e4m3fnuz_bf16, Fp8, "E4M3FNUZ", bf16, BLOCK);
fp8_kernel!(fnuz, gemm_fp8_e4m3fnuz_f16, Fp8, "E4M3FNUZ", f16, BLOCK);
fp8_kernel!(fnuz, gemm_fp8_e5m2fnuz_f32, Bf8, "E5M2FNUZ", f32, BLOCK);
fp8_kernel!(fnuz, gemm_fp8_e5m2fnuz_bf16, Bf8, "E5M2FNUZ", bf16, BLOCK);
fp8_kernel!(fnuz, gemm_fp8_e5m2fnuz_f16, Bf8, "E5M2FNUZ", f16, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e4m3fn_f32, Fp8, "E4M3FN", f32, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e4m3fn_bf16, Fp8, "E4M3FN", bf16, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e4m3fn_f16, Fp8, "E4M3FN", f16, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_f32, Bf8, "E5M2", f32, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_bf16, Bf8, "E5M2", bf16, BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_f16, Bf8, "E5M2", f16, BLOCK);
fp8_kernel!(
    fnuz,
    gemm_fp8_e4m3fnuz_f32_64,
    Fp8,
    "E4M3FNUZ",
    f32,
    SMALL_BLOCK
);
fp8_kernel!(
    fnuz,
    gemm_fp8_e4m3fnuz_bf16_64,
    Fp8,
    "E4M3FNUZ",
    bf16,
    SMALL_BLOCK
);
fp8_kernel!(
    fnuz,
    gemm_fp8_e4m3fnuz_f16_64,
    Fp8,
    "E4M3FNUZ",
    f16,
    SMALL_BLOCK
);
fp8_kernel!(
    fnuz,
    gemm_fp8_e5m2fnuz_f32_64,
    Bf8,
    "E5M2FNUZ",
    f32,
    SMALL_BLOCK
);
fp8_kernel!(
    fnuz,
    gemm_fp8_e5m2fnuz_bf16_64,
    Bf8,
    "E5M2FNUZ",
    bf16,
    SMALL_BLOCK
);
fp8_kernel!(
    fnuz,
    gemm_fp8_e5m2fnuz_f16_64,
    Bf8,
    "E5M2FNUZ",
    f16,
    SMALL_BLOCK
);
fp8_kernel!(ocp, gemm_fp8_e4m3fn_f32_64, Fp8, "E4M3FN", f32, SMALL_BLOCK);
fp8_kernel!(
    ocp,
    gemm_fp8_e4m3fn_bf16_64,
    Fp8,
    "E4M3FN",
    bf16,
    SMALL_BLOCK
);
fp8_kernel!(ocp, gemm_fp8_e4m3fn_f16_64, Fp8, "E4M3FN", f16, SMALL_BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_f32_64, Bf8, "E5M2", f32, SMALL_BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_bf16_64, Bf8, "E5M2", bf16, SMALL_BLOCK);
fp8_kernel!(ocp, gemm_fp8_e5m2_f16_64, Bf8, "E5M2", f16, SMALL_BLOCK);
