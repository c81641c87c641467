//! RDNA's WMMAs (gfx1100, gfx1201, in the build's wave size): `v_wmma_f32_16x16x16_{f16,bf16}`,
//! and on gfx1201 `v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}` (OCP E4M3 and E5M2 codes). Every one
//! computes a 16 x 16 f32 tile += 16 x 16 A times 16 x 16 B; products are exact and accumulate in
//! f32.
//!
//! Lane `l` holds row `l % 16` of A, column `l % 16` of B and of D (module docs of [`super`]).
//! gfx11 copies the whole row (column) into every lane group: 16 elements of A and B per lane
//! whatever the wave size. gfx12 spreads them: `256 / WAVE` elements per lane (8 in wave32, 4 in
//! wave64). C and D hold `256 / WAVE` elements per lane on both.

use super::llvm::{self, WMMA_SPREAD};
use super::vector::{Accumulator, Bf16Fragment, F16Fragment};
use super::{MatrixCore, Mma};
#[cfg(iron_gfx = "gfx1100")]
use crate::target::WAVE;

/// Elements of A and B per lane of the 16-bit WMMAs: the whole row on gfx11.
#[cfg(iron_gfx = "gfx1100")]
const HALF_ELEMENTS: usize = 16;
/// Elements of A and B per lane of the 16-bit WMMAs: spread over the wave on gfx12.
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
const HALF_ELEMENTS: usize = WMMA_SPREAD;

/// The K index of the first element lane `lane` holds of A (and of B). gfx11: every lane holds
/// all of K.
#[cfg(iron_gfx = "gfx1100")]
#[inline(always)]
fn first_k(_lane: u32) -> u32 {
    0
}

/// The K index of the first element lane `lane` holds of A (and of B). gfx12: wave32's lane
/// groups hold `k = 8g ..`; in wave64, lanes `32..64` hold the second half of each wave32
/// lane's run.
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
#[inline(always)]
fn first_k(lane: u32) -> u32 {
    8 * ((lane % 32) / 16) + WMMA_SPREAD as u32 * (lane / 32)
}

/// The row of D that element `i` of lane `lane`'s accumulator is in. gfx11: rows interleaved
/// over the lane groups.
#[cfg(iron_gfx = "gfx1100")]
#[inline(always)]
fn d_row(lane: u32, i: u32) -> u32 {
    WAVE / 16 * i + lane / 16
}

/// The row of D that element `i` of lane `lane`'s accumulator is in. gfx12: consecutive rows
/// per lane, split over the wave as [`first_k`] splits K.
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
#[inline(always)]
fn d_row(lane: u32, i: u32) -> u32 {
    8 * ((lane % 32) / 16) + WMMA_SPREAD as u32 * (lane / 32) + i
}

/// [`MatrixCore::D_RUN`] of the WMMAs. gfx11: a lane's rows are a whole wave's lane groups apart.
#[cfg(iron_gfx = "gfx1100")]
const D_RUN: u32 = 1;
/// [`MatrixCore::D_RUN`] of the WMMAs. gfx12: a lane's rows are consecutive (4 or 8 of them).
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
const D_RUN: u32 = 4;

/// Implements [`MatrixCore`] for a 16x16x16 WMMA (generic over `$g`) with operands of `$bits`
/// bits in fragments `$fragment`.
macro_rules! wmma_core {
    ([$($g:ident: $bound:path),*] $name:ty, $bits:literal, $fragment:ty) => {
        impl<$($g: $bound),*> MatrixCore for $name {
            const M: u32 = 16;
            const N: u32 = 16;
            const K: u32 = 16;
            const A_BITS: u32 = $bits;
            const B_BITS: u32 = $bits;
            const D_RUN: u32 = $crate::matrix::wmma::D_RUN;
            type A = $fragment;
            type B = $fragment;
            type Acc = Accumulator<WMMA_SPREAD>;

            #[inline(always)]
            fn a_k(lane: u32, _run: u32) -> u32 {
                first_k(lane)
            }
            #[inline(always)]
            fn b_k(lane: u32, _run: u32) -> u32 {
                first_k(lane)
            }
            #[inline(always)]
            fn d_row(lane: u32, i: u32) -> u32 {
                d_row(lane, i)
            }
        }
    };
}

/// `v_wmma_f32_16x16x16_f16`: 16x16 f32 tile += 16x16 f16 times 16x16 f16 (see the module docs
/// for the elements per lane).
#[derive(Clone, Copy, Debug)]
pub struct WmmaF32_16x16x16F16;

wmma_core!([] WmmaF32_16x16x16F16, 16, F16Fragment<HALF_ELEMENTS>);

impl Mma for WmmaF32_16x16x16F16 {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
        // SAFETY: a pure register operation.
        Accumulator(unsafe { llvm::wmma_f32_16x16x16_f16(a.0, b.0, c.0) })
    }
}

/// `v_wmma_f32_16x16x16_bf16`: as [`WmmaF32_16x16x16F16`] with bf16 operands.
#[derive(Clone, Copy, Debug)]
pub struct WmmaF32_16x16x16Bf16;

wmma_core!([] WmmaF32_16x16x16Bf16, 16, Bf16Fragment<HALF_ELEMENTS>);

impl Mma for WmmaF32_16x16x16Bf16 {
    #[inline(always)]
    fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
        // SAFETY: a pure register operation.
        Accumulator(unsafe { llvm::wmma_f32_16x16x16_bf16(a.0, b.0, c.0) })
    }
}

#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
pub use fp8::WmmaF32_16x16x16F8;

/// gfx1201's FP8 WMMAs.
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
mod fp8 {
    use super::super::fp8::F8Kind;
    use super::super::llvm::{self, WMMA_SPREAD, WmmaCodes};
    use super::super::vector::{Accumulator, CodeFragment};
    use super::super::{MatrixCore, Mma};
    use super::{d_row, first_k};
    use core::marker::PhantomData;

    /// Words of FP8 codes per lane: `256 / WAVE` codes.
    const CODE_WORDS: usize = WMMA_SPREAD / 4;

    /// A fragment's codes as the intrinsics' operand.
    #[cfg(iron_wave = "32")]
    #[inline(always)]
    fn codes(fragment: CodeFragment<CODE_WORDS>) -> WmmaCodes {
        let [low, high] = fragment.0;
        super::super::vector::Vector([low as i32, high as i32])
    }

    /// A fragment's codes as the intrinsics' operand.
    #[cfg(any(iron_wave = "64", not(target_arch = "amdgpu")))]
    #[inline(always)]
    fn codes(fragment: CodeFragment<CODE_WORDS>) -> WmmaCodes {
        fragment.0[0] as i32
    }

    /// `v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}` (gfx1201): 16x16 f32 tile += 16x16 times 16x16
    /// FP8 codes in encodings `A` and `B` (OCP E4M3 for [`Fp8`](super::super::Fp8), E5M2 for
    /// [`Bf8`](super::super::Bf8)); `256 / WAVE` codes of A and B per lane.
    #[derive(Clone, Copy, Debug)]
    pub struct WmmaF32_16x16x16F8<A, B>(PhantomData<(A, B)>);

    wmma_core!([A: F8Kind, B: F8Kind] WmmaF32_16x16x16F8<A, B>, 8, CodeFragment<CODE_WORDS>);

    impl<A: F8Kind, B: F8Kind> Mma for WmmaF32_16x16x16F8<A, B> {
        #[inline(always)]
        fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
            let (a, b, c) = (codes(a), codes(b), c.0);
            // SAFETY: pure register operations.
            Accumulator(unsafe {
                match (A::IS_BF8, B::IS_BF8) {
                    (false, false) => llvm::wmma_f32_16x16x16_fp8_fp8(a, b, c),
                    (false, true) => llvm::wmma_f32_16x16x16_fp8_bf8(a, b, c),
                    (true, false) => llvm::wmma_f32_16x16x16_bf8_fp8(a, b, c),
                    (true, true) => llvm::wmma_f32_16x16x16_bf8_bf8(a, b, c),
                }
            })
        }
    }
}
