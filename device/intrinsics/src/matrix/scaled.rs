//! gfx950's block-scaled MFMAs (`v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4`): hardware
//! microscaling. Each lane holds 32 codes of A and of B (FP8, FP6 or FP4, in any combination;
//! FP6 and FP4 as one block of 32 consecutive-K codes, FP8 as two runs of 16) and one E8M0 scale
//! of each operand (the scale of block `l / M`); the instruction multiplies every element by its
//! block's scale, then products are summed in f32.
//!
//! The element formats are the OCP ones of `iron_quant` (E4M3FN, E5M2, E2M3, E3M2, E2M1), packed
//! as `iron_quant::pack` packs them: FP8 one code per byte (32 bytes per lane), FP6 a
//! little-endian 6-bit stream (24 bytes), FP4 element `2i` in the low nibble of byte `i`
//! (16 bytes).

use core::marker::PhantomData;

use super::llvm;
use super::vector::{Accumulator, CodeFragment, Fragment, Vector};
use super::{MatrixCore, ScaledMma};

/// An element format of the scaled MFMAs, with its operand fragment (32 codes).
pub trait ScaledFormat: Copy {
    /// The format's operand code (`cbsz` for A, `blgp` for B).
    const CODE: i32;
    /// Bits per code.
    const BITS: u32;
    /// Runs of 16 or 32 consecutive-K codes a lane holds (2 for FP8, 1 for FP6 and FP4; see the
    /// module docs of [`super`]).
    const RUNS: u32;
    /// One lane's 32 codes.
    type Fragment: Fragment + PaddedWords;
}

/// A code fragment's words padded to eight (what the intrinsics' widest operand holds).
pub trait PaddedWords {
    /// The words, zero past the fragment's own.
    fn padded(self) -> [u32; 8];
}

impl<const W: usize> PaddedWords for CodeFragment<W> {
    #[inline(always)]
    fn padded(self) -> [u32; 8] {
        core::array::from_fn(|i| if i < W { self.0[i] } else { 0 })
    }
}

/// Declares a scaled element format.
macro_rules! formats {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $bits:literal, $runs:literal, $words:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name;

        impl ScaledFormat for $name {
            const CODE: i32 = $code;
            const BITS: u32 = $bits;
            const RUNS: u32 = $runs;
            type Fragment = CodeFragment<$words>;
        }
    )*};
}

formats! {
    /// OCP FP8 E4M3 (E4M3FN).
    Fp8E4M3 = 0, 8, 2, 8;
    /// OCP FP8 E5M2.
    Fp8E5M2 = 1, 8, 2, 8;
    /// OCP FP6 E2M3.
    Fp6E2M3 = 2, 6, 1, 6;
    /// OCP FP6 E3M2.
    Fp6E3M2 = 3, 6, 1, 6;
    /// OCP FP4 E2M1.
    Fp4E2M1 = 4, 4, 1, 4;
}

/// The first `N` of eight words as an intrinsic operand.
#[inline(always)]
fn operand<const N: usize>(words: [u32; 8]) -> Vector<i32, N> {
    Vector(core::array::from_fn(|i| words[i] as i32))
}

/// Calls the scaled intrinsic of one shape for the operand widths of `A` and `B` (a choice
/// made at compile time).
macro_rules! dispatch {
    ($a:ident, $b:ident, $c:expr, $sa:expr, $sb:expr,
     [$i88:ident, $i86:ident, $i84:ident, $i68:ident, $i66:ident, $i64:ident, $i48:ident, $i46:ident, $i44:ident]) => {{
        let (wa, wb) = ($a.padded(), $b.padded());
        let (sa, sb) = (i32::from($sa), i32::from($sb));
        let (fa, fb) = (A::CODE, B::CODE);
        // SAFETY: pure register operations; formats and byte selectors are constants.
        unsafe {
            match (A::BITS, B::BITS) {
                (8, 8) => llvm::$i88(operand::<8>(wa), operand::<8>(wb), $c, fa, fb, 0, sa, 0, sb),
                (8, 6) => llvm::$i86(operand::<8>(wa), operand::<6>(wb), $c, fa, fb, 0, sa, 0, sb),
                (8, _) => llvm::$i84(operand::<8>(wa), operand::<4>(wb), $c, fa, fb, 0, sa, 0, sb),
                (6, 8) => llvm::$i68(operand::<6>(wa), operand::<8>(wb), $c, fa, fb, 0, sa, 0, sb),
                (6, 6) => llvm::$i66(operand::<6>(wa), operand::<6>(wb), $c, fa, fb, 0, sa, 0, sb),
                (6, _) => llvm::$i64(operand::<6>(wa), operand::<4>(wb), $c, fa, fb, 0, sa, 0, sb),
                (_, 8) => llvm::$i48(operand::<4>(wa), operand::<8>(wb), $c, fa, fb, 0, sa, 0, sb),
                (_, 6) => llvm::$i46(operand::<4>(wa), operand::<6>(wb), $c, fa, fb, 0, sa, 0, sb),
                (_, _) => llvm::$i44(operand::<4>(wa), operand::<4>(wb), $c, fa, fb, 0, sa, 0, sb),
            }
        }
    }};
}

/// `v_mfma_scale_f32_16x16x128_f8f6f4` (gfx950): 16x16 f32 tile += (16x128 A, block-scaled)
/// times (128x16 B, block-scaled), A in format `A` and B in format `B`; 32 codes of A and B per
/// lane (one MX block each, with its scale), 4 elements of D.
#[derive(Clone, Copy, Debug)]
pub struct MfmaScaleF32_16x16x128F8F6F4<A, B>(PhantomData<(A, B)>);

impl<A: ScaledFormat, B: ScaledFormat> MatrixCore for MfmaScaleF32_16x16x128F8F6F4<A, B> {
    const M: u32 = 16;
    const N: u32 = 16;
    const K: u32 = 128;
    const A_BITS: u32 = A::BITS;
    const B_BITS: u32 = B::BITS;
    const A_RUNS: u32 = A::RUNS;
    const B_RUNS: u32 = B::RUNS;
    type A = A::Fragment;
    type B = B::Fragment;
    type Acc = Accumulator<4>;
    super::mfma_layout_fns!();
}

impl<A: ScaledFormat, B: ScaledFormat> ScaledMma for MfmaScaleF32_16x16x128F8F6F4<A, B> {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc, a_scale: u8, b_scale: u8) -> Self::Acc {
        Accumulator(dispatch!(
            a,
            b,
            c.0,
            a_scale,
            b_scale,
            [
                mfma_scale_16x16x128_8_8,
                mfma_scale_16x16x128_8_6,
                mfma_scale_16x16x128_8_4,
                mfma_scale_16x16x128_6_8,
                mfma_scale_16x16x128_6_6,
                mfma_scale_16x16x128_6_4,
                mfma_scale_16x16x128_4_8,
                mfma_scale_16x16x128_4_6,
                mfma_scale_16x16x128_4_4
            ]
        ))
    }
}

/// `v_mfma_scale_f32_32x32x64_f8f6f4` (gfx950): 32x32 f32 tile += (32x64 A, block-scaled)
/// times (64x32 B, block-scaled); 32 codes of A and B per lane (one MX block each, with its
/// scale), 16 elements of D.
#[derive(Clone, Copy, Debug)]
pub struct MfmaScaleF32_32x32x64F8F6F4<A, B>(PhantomData<(A, B)>);

impl<A: ScaledFormat, B: ScaledFormat> MatrixCore for MfmaScaleF32_32x32x64F8F6F4<A, B> {
    const M: u32 = 32;
    const N: u32 = 32;
    const K: u32 = 64;
    const A_BITS: u32 = A::BITS;
    const B_BITS: u32 = B::BITS;
    const A_RUNS: u32 = A::RUNS;
    const B_RUNS: u32 = B::RUNS;
    type A = A::Fragment;
    type B = B::Fragment;
    type Acc = Accumulator<16>;
    super::mfma_layout_fns!();
}

impl<A: ScaledFormat, B: ScaledFormat> ScaledMma for MfmaScaleF32_32x32x64F8F6F4<A, B> {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc, a_scale: u8, b_scale: u8) -> Self::Acc {
        Accumulator(dispatch!(
            a,
            b,
            c.0,
            a_scale,
            b_scale,
            [
                mfma_scale_32x32x64_8_8,
                mfma_scale_32x32x64_8_6,
                mfma_scale_32x32x64_8_4,
                mfma_scale_32x32x64_6_8,
                mfma_scale_32x32x64_6_6,
                mfma_scale_32x32x64_6_4,
                mfma_scale_32x32x64_4_8,
                mfma_scale_32x32x64_4_6,
                mfma_scale_32x32x64_4_4
            ]
        ))
    }
}
