//! The FP8 operand encodings of the plain FP8 matrix instructions, and the plain FP8 MFMAs
//! (gfx942, gfx950): 8 FP8 codes of A and of B per lane, f32 accumulation. gfx1201's FP8 WMMAs
//! take the same encodings (`super::wmma`).
//!
//! AMD names the two FP8 encodings "fp8" (E4M3) and "bf8" (E5M2). Which variant of each the
//! instructions read depends on the gfx: gfx942 reads the FNUZ encodings (E4M3FNUZ, E5M2FNUZ: no
//! infinities, no negative zero, NaN only at 0x80), gfx950 and gfx1201 the OCP ones (E4M3FN,
//! E5M2). Products are exact and accumulate in f32.

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
use {
    super::llvm,
    super::vector::{Accumulator, CodeFragment},
    super::{MatrixCore, Mma},
    core::marker::PhantomData,
};

/// An FP8 operand encoding of the plain FP8 MFMAs: [`Fp8`] or [`Bf8`].
pub trait F8Kind: Copy {
    /// Whether it is the E5M2 ("bf8") encoding.
    const IS_BF8: bool;
}

/// E4M3 codes ("fp8"): E4M3FNUZ on gfx942, OCP E4M3FN on gfx950 and gfx1201.
#[derive(Clone, Copy, Debug)]
pub struct Fp8;

/// E5M2 codes ("bf8"): E5M2FNUZ on gfx942, OCP E5M2 on gfx950 and gfx1201.
#[derive(Clone, Copy, Debug)]
pub struct Bf8;

impl F8Kind for Fp8 {
    const IS_BF8: bool = false;
}

impl F8Kind for Bf8 {
    const IS_BF8: bool = true;
}

/// The 8 codes of a fragment as the intrinsics' `i64` operand.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
#[inline(always)]
fn codes(fragment: CodeFragment<2>) -> i64 {
    let [low, high] = fragment.0;
    (u64::from(low) | (u64::from(high) << 32)) as i64
}

/// `v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}`: 16x16 f32 tile += 16x32 times 32x16 FP8 codes in
/// encodings `A` and `B`; 8 codes of A and B per lane (one 8-byte run), 4 elements of D.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
#[derive(Clone, Copy, Debug)]
pub struct MfmaF32_16x16x32F8<A, B>(PhantomData<(A, B)>);

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
impl<A: F8Kind, B: F8Kind> MatrixCore for MfmaF32_16x16x32F8<A, B> {
    const M: u32 = 16;
    const N: u32 = 16;
    const K: u32 = 32;
    const A_BITS: u32 = 8;
    const B_BITS: u32 = 8;
    type A = CodeFragment<2>;
    type B = CodeFragment<2>;
    type Acc = Accumulator<4>;
    super::mfma_layout_fns!();
}

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
impl<A: F8Kind, B: F8Kind> Mma for MfmaF32_16x16x32F8<A, B> {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
        let (a, b, c) = (codes(a), codes(b), c.0);
        // SAFETY: pure register operations; the broadcast controls are constants.
        Accumulator(unsafe {
            match (A::IS_BF8, B::IS_BF8) {
                (false, false) => llvm::mfma_f32_16x16x32_fp8_fp8(a, b, c, 0, 0, 0),
                (false, true) => llvm::mfma_f32_16x16x32_fp8_bf8(a, b, c, 0, 0, 0),
                (true, false) => llvm::mfma_f32_16x16x32_bf8_fp8(a, b, c, 0, 0, 0),
                (true, true) => llvm::mfma_f32_16x16x32_bf8_bf8(a, b, c, 0, 0, 0),
            }
        })
    }
}

/// `v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}`: 32x32 f32 tile += 32x16 times 16x32 FP8 codes;
/// 8 codes of A and B per lane, 16 elements of D.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
#[derive(Clone, Copy, Debug)]
pub struct MfmaF32_32x32x16F8<A, B>(PhantomData<(A, B)>);

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
impl<A: F8Kind, B: F8Kind> MatrixCore for MfmaF32_32x32x16F8<A, B> {
    const M: u32 = 32;
    const N: u32 = 32;
    const K: u32 = 16;
    const A_BITS: u32 = 8;
    const B_BITS: u32 = 8;
    type A = CodeFragment<2>;
    type B = CodeFragment<2>;
    type Acc = Accumulator<16>;
    super::mfma_layout_fns!();
}

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
impl<A: F8Kind, B: F8Kind> Mma for MfmaF32_32x32x16F8<A, B> {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
        let (a, b, c) = (codes(a), codes(b), c.0);
        // SAFETY: pure register operations; the broadcast controls are constants.
        Accumulator(unsafe {
            match (A::IS_BF8, B::IS_BF8) {
                (false, false) => llvm::mfma_f32_32x32x16_fp8_fp8(a, b, c, 0, 0, 0),
                (false, true) => llvm::mfma_f32_32x32x16_fp8_bf8(a, b, c, 0, 0, 0),
                (true, false) => llvm::mfma_f32_32x32x16_bf8_fp8(a, b, c, 0, 0, 0),
                (true, true) => llvm::mfma_f32_32x32x16_bf8_bf8(a, b, c, 0, 0, 0),
            }
        })
    }
}
