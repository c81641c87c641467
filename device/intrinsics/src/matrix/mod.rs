//! Matrix cores: one instruction computes `D = A B + C` for a small tile on a whole wave, each
//! lane holding a fragment of every operand. CDNA's are the MFMAs (wave64), RDNA's the WMMAs
//! (16x16x16, wave32 or wave64).
//!
//! Every instruction is a type implementing [`MatrixCore`] (its shape, its operand fragment
//! types and its lane layout) and [`Mma`] (plain: `mma(a, b, c) -> d`) or [`ScaledMma`] (with
//! per-lane E8M0 block scales). The free functions move fragments between memory (global or
//! LDS) and registers in the instruction's layout: [`load_a`], [`load_b`], [`store_d`], and
//! [`a_row`], [`b_col`], [`d_col`], [`scale_block`] with [`MatrixCore::a_k`],
//! [`MatrixCore::b_k`] and [`MatrixCore::d_row`] say where each lane's elements are.
//!
//! | type | instruction | A, B per lane | gfx |
//! | --- | --- | --- | --- |
//! | `MfmaF32_16x16x16F16`, `MfmaF32_16x16x16Bf16` | `v_mfma_f32_16x16x16_{f16,bf16}` | 4 x 16-bit | gfx90a, gfx942, gfx950 |
//! | `MfmaF32_32x32x8F16`, `MfmaF32_32x32x8Bf16` | `v_mfma_f32_32x32x8_{f16,bf16}` | 4 x 16-bit | gfx90a, gfx942, gfx950 |
//! | `MfmaF32_16x16x32F16`, `MfmaF32_16x16x32Bf16` | `v_mfma_f32_16x16x32_{f16,bf16}` | 8 x 16-bit | gfx950 |
//! | `MfmaF32_32x32x16F16`, `MfmaF32_32x32x16Bf16` | `v_mfma_f32_32x32x16_{f16,bf16}` | 8 x 16-bit | gfx950 |
//! | `MfmaF32_16x16x32F8<A, B>` | `v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}` | 8 FP8 codes | gfx942 (FNUZ), gfx950 (OCP) |
//! | `MfmaF32_32x32x16F8<A, B>` | `v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}` | 8 FP8 codes | gfx942 (FNUZ), gfx950 (OCP) |
//! | `MfmaScaleF32_16x16x128F8F6F4<A, B>` | `v_mfma_scale_f32_16x16x128_f8f6f4` | 32 FP8/FP6/FP4 codes + scale | gfx950 |
//! | `MfmaScaleF32_32x32x64F8F6F4<A, B>` | `v_mfma_scale_f32_32x32x64_f8f6f4` | 32 FP8/FP6/FP4 codes + scale | gfx950 |
//! | `WmmaF32_16x16x16F16`, `WmmaF32_16x16x16Bf16` | `v_wmma_f32_16x16x16_{f16,bf16}` | gfx11: 16, gfx12: 256 / wave x 16-bit | gfx1100, gfx1201 (wave32, wave64) |
//! | `WmmaF32_16x16x16F8<A, B>` | `v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}` | 256 / wave OCP FP8 codes | gfx1201 (wave32, wave64) |
//!
//! Types that a gfx lacks do not exist in its build (the instruction would fail the whole build
//! with "Cannot select"): the MFMAs exist on CDNA (`iron_matrix = "mfma"`, wave64), the WMMAs on
//! RDNA (`iron_matrix = "wmma"`, in the build's wave size).
//!
//! # MFMA lane layouts
//! Every MFMA here has `M = N` and the same structure. With `G = 64 / M` groups of lanes
//! and `E = K / G` elements per lane (each lane's elements along K), in one run:
//! - A (`M x K`): lane `l` holds `A[l % M][E * (l / M) + i]` for `i = 0..E`;
//! - B (`K x N`): lane `l` holds `B[E * (l / N) + i][l % N]` for `i = 0..E`;
//! - C and D (`M x N`, f32, `M * N / 64` per lane): element `i` of lane `l` is
//!   `D[4 * G * (i / 4) + 4 * (l / N) + i % 4][l % N]`.
//!
//! So 16x16x16: lane `l` holds `A[l % 16][4 * (l / 16) + i]` (i < 4) and
//! `D[4 * (l / 16) + i][l % 16]`; 32x32x8: `A[l % 32][4 * (l / 32) + i]` and
//! `D[8 * (i / 4) + 4 * (l / 32) + i % 4][l % 32]` (i < 16); gfx950's 16x16x32 and the FP8
//! 16x16x32: `A[l % 16][8 * (l / 16) + i]` (i < 8).
//!
//! The scaled instructions hold `E = 32` elements per lane. FP6 and FP4 operands follow the rule
//! above (16x16x128: `A[l % 16][32 * (l / 16) + i]`). FP8 operands come in two runs of 16
//! ([`MatrixCore::A_RUNS`] = 2): element `i` of lane `l` is at
//! `k = (i / 16) * (K / 2) + 16 * (l / M) + i % 16` (16x16x128: `16 * (l / 16) + i` and
//! `64 + 16 * (l / 16) + i - 16`). Whatever the data layout, lane `l` supplies the E8M0 scale
//! of block `l / M` (`K` elements `32 * (l / M) ..`) of its row of A (`l % M`) and of its column
//! of B (`l % N`): [`scale_block`].
//!
//! Sources: AMD's Matrix Instruction Calculator (CDNA3) for the 16x16x16, 32x32x8 and FP8
//! 16x16x32 shapes; AMD's CDNA4 ISA guide and Composable Kernel's register-mapping tables of
//! its gfx950 MX MFMA tests for the scaled shapes (FP8 in two runs, FP6/FP4 in one, scales by
//! lane group); LLVM's and IREE's MFMA layout tables for gfx950's 16-bit shapes.
//!
//! # WMMA lane layouts
//! Every WMMA is 16x16x16; lane `l` holds row `l % 16` of A and column `l % 16` of B and of D,
//! its operand elements one run consecutive along K. With `g = l / 16` its lane group:
//! - gfx11 (wave32 and wave64): every lane group holds the whole row of A (column of B),
//!   `k = 0..16`; element `i` of D is row `(wave / 16) * i + g` (wave32 `2i + g`, wave64
//!   `4i + g`).
//! - gfx12 wave32: lane group `g` holds `k = 8g .. 8g + 8`; element `i` of D is row `8g + i`.
//! - gfx12 wave64: lanes `32..64` hold the second half of what wave32's lanes `0..32` hold: lane
//!   group `g` holds `k = 8 (g % 2) + 4 (g / 2) ..` (4 elements) and rows
//!   `8 (g % 2) + 4 (g / 2) + i` of D.
//!
//! Sources: AMD's Matrix Instruction Calculator (RDNA3) for gfx11; Composable Kernel's and
//! Triton's gfx12 WMMA layouts for gfx12.
//!
//! In memory the loads take "K-contiguous" tiles: A as rows of K (`A[r][k]` at byte
//! `r * ld + k * bits / 8`), B as columns of K (`B[k][c]` at byte `c * ld + k * bits / 8`), so a
//! lane's run is one access of 4 to 32 bytes. Packed codes follow `iron_quant::pack`
//! (element `i` of a run in bits `b * i .. b * (i + 1)`), which is also the order the
//! instructions read.

#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
mod fp8;
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
mod half;
mod llvm;
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
mod scaled;
mod vector;
#[cfg(any(iron_matrix = "wmma", not(target_arch = "amdgpu")))]
mod wmma;

#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
pub use fp8::{Bf8, F8Kind, Fp8};
#[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub use fp8::{MfmaF32_16x16x32F8, MfmaF32_32x32x16F8};
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
pub use half::{
    MfmaF32_16x16x16Bf16, MfmaF32_16x16x16F16, MfmaF32_32x32x8Bf16, MfmaF32_32x32x8F16,
};
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub use half::{
    MfmaF32_16x16x32Bf16, MfmaF32_16x16x32F16, MfmaF32_32x32x16Bf16, MfmaF32_32x32x16F16,
};
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub use scaled::{
    Fp4E2M1, Fp6E2M3, Fp6E3M2, Fp8E4M3, Fp8E5M2, MfmaScaleF32_16x16x128F8F6F4,
    MfmaScaleF32_32x32x64F8F6F4, PaddedWords, ScaledFormat,
};
pub use vector::{Accumulator, Bf16Fragment, CodeFragment, F16Fragment, Fragment};
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
pub use wmma::WmmaF32_16x16x16F8;
#[cfg(any(iron_matrix = "wmma", not(target_arch = "amdgpu")))]
pub use wmma::{WmmaF32_16x16x16Bf16, WmmaF32_16x16x16F16};

use crate::id::lane_id;

/// An f32 accumulator fragment (C and D operands).
pub trait Accumulate: Copy {
    /// Elements per lane.
    const LEN: usize;
    /// All elements zero.
    fn zero() -> Self;
    /// Element `i` (`i < LEN`), in layout order ([`MatrixCore::d_row`]).
    fn element(self, i: usize) -> f32;
}

impl<const N: usize> Accumulate for Accumulator<N> {
    const LEN: usize = N;
    #[inline(always)]
    fn zero() -> Self {
        Accumulator::zero()
    }
    #[inline(always)]
    fn element(self, i: usize) -> f32 {
        self.to_array()[i]
    }
}

/// A matrix-core instruction: its tile shape, its operands' fragment types and its lane layout
/// (with the functions of this module).
pub trait MatrixCore {
    /// Rows of A and D.
    const M: u32;
    /// Columns of B and D.
    const N: u32;
    /// The reduction length: columns of A, rows of B.
    const K: u32;
    /// Bits per element of A (16, 8, 6 or 4).
    const A_BITS: u32;
    /// Bits per element of B.
    const B_BITS: u32;
    /// Runs of consecutive-K elements each lane holds of A (1, or 2 for the scaled FP8 operands).
    const A_RUNS: u32 = 1;
    /// Runs of consecutive-K elements each lane holds of B.
    const B_RUNS: u32 = 1;
    /// Rows of D that runs of consecutive elements of a lane's accumulator cover in order: for
    /// every `i`, `d_row(lane, i) = d_row(lane, i - i % D_RUN) + i % D_RUN` (1: no such runs).
    const D_RUN: u32 = 1;
    /// A lane's fragment of A.
    type A: Fragment;
    /// A lane's fragment of B.
    type B: Fragment;
    /// A lane's fragment of C and D.
    type Acc: Accumulate;

    /// The K index of the first element of run `run` of lane `lane`'s A elements (a run is
    /// `A::BYTES / A_RUNS` bytes).
    fn a_k(lane: u32, run: u32) -> u32;
    /// The K index of the first element of run `run` of lane `lane`'s B elements.
    fn b_k(lane: u32, run: u32) -> u32;
    /// The row of D that element `i` of lane `lane`'s accumulator is in (its column is
    /// [`d_col`]).
    fn d_row(lane: u32, i: u32) -> u32;
}

/// A plain matrix-core instruction.
pub trait Mma: MatrixCore {
    /// `D = A B + C`, accumulated in f32. Wave-wide: every lane of the wave must execute it.
    fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc;
}

/// A block-scaled matrix-core instruction: each lane's A and B runs (one 32-element block each)
/// come with their E8M0 scale codes.
pub trait ScaledMma: MatrixCore {
    /// `D = (A * scales) (B * scales) + C`, accumulated in f32, with this lane's block scale
    /// codes `a_scale` and `b_scale` (E8M0: `2^(code - 127)`). Wave-wide.
    fn mma(a: Self::A, b: Self::B, c: Self::Acc, a_scale: u8, b_scale: u8) -> Self::Acc;
}

/// The MFMA lane layout (module docs), shared by every CDNA instruction.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
mod mfma_layout {
    use super::MatrixCore;

    /// Lanes per wave on CDNA.
    const LANES: u32 = 64;

    /// Elements of A (and of B) each lane holds: `K * M / 64`.
    #[inline(always)]
    const fn elements_per_lane<I: MatrixCore>() -> u32 {
        I::K * I::M / LANES
    }

    /// [`MatrixCore::a_k`] of an MFMA.
    #[inline(always)]
    pub fn a_k<I: MatrixCore>(lane: u32, run: u32) -> u32 {
        run * (I::K / I::A_RUNS) + elements_per_lane::<I>() / I::A_RUNS * (lane / I::M)
    }

    /// [`MatrixCore::b_k`] of an MFMA.
    #[inline(always)]
    pub fn b_k<I: MatrixCore>(lane: u32, run: u32) -> u32 {
        run * (I::K / I::B_RUNS) + elements_per_lane::<I>() / I::B_RUNS * (lane / I::N)
    }

    /// [`MatrixCore::d_row`] of an MFMA.
    #[inline(always)]
    pub fn d_row<I: MatrixCore>(lane: u32, i: u32) -> u32 {
        let groups = LANES / I::N;
        4 * groups * (i / 4) + 4 * (lane / I::N) + i % 4
    }
}

/// Implements the MFMA lane layout's functions of [`MatrixCore`] (inside an `impl`).
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
macro_rules! mfma_layout_fns {
    () => {
        const D_RUN: u32 = 4;
        #[inline(always)]
        fn a_k(lane: u32, run: u32) -> u32 {
            super::mfma_layout::a_k::<Self>(lane, run)
        }
        #[inline(always)]
        fn b_k(lane: u32, run: u32) -> u32 {
            super::mfma_layout::b_k::<Self>(lane, run)
        }
        #[inline(always)]
        fn d_row(lane: u32, i: u32) -> u32 {
            super::mfma_layout::d_row::<Self>(lane, i)
        }
    };
}
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
use mfma_layout_fns;

/// The row of A whose elements lane `lane` holds.
#[inline(always)]
pub fn a_row<I: MatrixCore>(lane: u32) -> u32 {
    lane % I::M
}

/// The column of B whose elements lane `lane` holds.
#[inline(always)]
pub fn b_col<I: MatrixCore>(lane: u32) -> u32 {
    lane % I::N
}

/// The block of 32 K elements whose scale lane `lane` supplies (scaled instructions).
#[inline(always)]
pub fn scale_block<I: ScaledMma>(lane: u32) -> u32 {
    lane / I::M
}

/// The column of D that lane `lane`'s accumulator elements are in.
#[inline(always)]
pub fn d_col<I: MatrixCore>(lane: u32) -> u32 {
    lane % I::N
}

/// This lane's fragment of an `M x K` tile of A stored K-contiguous: `A[r][k]` at byte
/// `r * ld + k * A_BITS / 8` of `tile`; one access per run.
///
/// # Safety
/// The tile's `M` rows of `K` elements must be readable; `tile` and `ld` must keep every lane's
/// run aligned as [`Fragment::read`] needs (both multiples of 16 bytes suffice).
#[inline(always)]
pub unsafe fn load_a<I: MatrixCore>(tile: *const u8, ld: u32) -> I::A {
    let lane = lane_id();
    let offset = a_row::<I>(lane) * ld + I::a_k(lane, 0) * I::A_BITS / 8;
    let stride = I::K / I::A_RUNS * I::A_BITS / 8;
    // SAFETY: the runs lie in the tile, aligned, as the caller guarantees.
    unsafe { I::A::read(tile.add(offset as usize), I::A_RUNS, stride) }
}

/// This lane's fragment of a `K x N` tile of B stored K-contiguous: `B[k][c]` at byte
/// `c * ld + k * B_BITS / 8` of `tile`.
///
/// # Safety
/// As for [`load_a`], for the tile's `N` columns of `K` elements.
#[inline(always)]
pub unsafe fn load_b<I: MatrixCore>(tile: *const u8, ld: u32) -> I::B {
    let lane = lane_id();
    let offset = b_col::<I>(lane) * ld + I::b_k(lane, 0) * I::B_BITS / 8;
    let stride = I::K / I::B_RUNS * I::B_BITS / 8;
    // SAFETY: the runs lie in the tile, aligned, as the caller guarantees.
    unsafe { I::B::read(tile.add(offset as usize), I::B_RUNS, stride) }
}

/// Writes this lane's accumulator elements to an `M x N` f32 tile stored row-major with `ld`
/// elements per row: `D[r][c]` at `d[r * ld + c]`.
///
/// # Safety
/// The tile's `M` rows of `N` elements must be writable.
#[inline(always)]
pub unsafe fn store_d<I: MatrixCore>(acc: I::Acc, d: *mut f32, ld: u32) {
    let lane = lane_id();
    for i in 0..<I::Acc as Accumulate>::LEN as u32 {
        let at = I::d_row(lane, i) * ld + d_col::<I>(lane);
        // SAFETY: inside the tile, as the caller guarantees.
        unsafe { *d.add(at as usize) = acc.element(i as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks [`MatrixCore::D_RUN`] against [`MatrixCore::d_row`] on every lane.
    fn check_d_run<I: MatrixCore>() {
        for lane in 0..64 {
            for i in 0..<I::Acc as Accumulate>::LEN as u32 {
                let first = i - i % I::D_RUN;
                assert_eq!(I::d_row(lane, i), I::d_row(lane, first) + i % I::D_RUN);
            }
        }
    }

    #[test]
    fn d_runs_follow_the_layouts() {
        check_d_run::<MfmaF32_16x16x16F16>();
        check_d_run::<MfmaF32_32x32x8Bf16>();
        check_d_run::<MfmaF32_16x16x32F16>();
        check_d_run::<MfmaF32_32x32x16F16>();
        check_d_run::<MfmaF32_16x16x32F8<Fp8, Fp8>>();
        check_d_run::<WmmaF32_16x16x16F16>();
        check_d_run::<WmmaF32_16x16x16F8<Fp8, Bf8>>();
    }
}
