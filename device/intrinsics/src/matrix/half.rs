//! The 16-bit float MFMAs: f16 and bf16 operands, f32 accumulation.

use super::llvm;
use super::vector::{Accumulator, Bf16Fragment, F16Fragment};
use super::{MatrixCore, Mma};

/// Declares one 16-bit MFMA: its type, shape, fragments and intrinsic.
macro_rules! half_mfma {
    ($(#[$doc:meta])* $cfg:meta, $name:ident, $m:literal x $n:literal x $k:literal,
     $fragment:ident<$per_lane:literal>, $acc:literal, $intrinsic:ident) => {
        $(#[$doc])*
        #[$cfg]
        #[derive(Clone, Copy, Debug)]
        pub struct $name;

        #[$cfg]
        impl MatrixCore for $name {
            const M: u32 = $m;
            const N: u32 = $n;
            const K: u32 = $k;
            const A_BITS: u32 = 16;
            const B_BITS: u32 = 16;
            type A = $fragment<$per_lane>;
            type B = $fragment<$per_lane>;
            type Acc = Accumulator<$acc>;
            super::mfma_layout_fns!();
        }

        #[$cfg]
        impl Mma for $name {
            #[inline(always)]
            fn mma(a: Self::A, b: Self::B, c: Self::Acc) -> Self::Acc {
                // SAFETY: a pure register operation; the broadcast controls are constants.
                Accumulator(unsafe { llvm::$intrinsic(a.0, b.0, c.0, 0, 0, 0) })
            }
        }
    };
}

half_mfma!(
    /// `v_mfma_f32_16x16x16_f16`: 16x16 f32 tile += 16x16 f16 times 16x16 f16; 4 elements of
    /// A and B per lane, 4 of D (see the module's lane layouts).
    cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu"))), MfmaF32_16x16x16F16, 16 x 16 x 16, F16Fragment<4>, 4,
    mfma_f32_16x16x16_f16
);
half_mfma!(
    /// `v_mfma_f32_16x16x16_bf16`: as [`MfmaF32_16x16x16F16`] with bf16 operands.
    cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu"))), MfmaF32_16x16x16Bf16, 16 x 16 x 16, Bf16Fragment<4>, 4,
    mfma_f32_16x16x16_bf16
);
half_mfma!(
    /// `v_mfma_f32_32x32x8_f16`: 32x32 f32 tile += 32x8 f16 times 8x32 f16; 4 elements of A and
    /// B per lane, 16 of D.
    cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu"))), MfmaF32_32x32x8F16, 32 x 32 x 8, F16Fragment<4>, 16,
    mfma_f32_32x32x8_f16
);
half_mfma!(
    /// `v_mfma_f32_32x32x8_bf16`: as [`MfmaF32_32x32x8F16`] with bf16 operands.
    cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu"))), MfmaF32_32x32x8Bf16, 32 x 32 x 8, Bf16Fragment<4>, 16,
    mfma_f32_32x32x8_bf16
);
half_mfma!(
    /// `v_mfma_f32_16x16x32_f16` (gfx950): 16x16 f32 tile += 16x32 f16 times 32x16 f16; 8
    /// elements of A and B per lane (one 16-byte run), 4 of D.
    cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu"))), MfmaF32_16x16x32F16, 16 x 16 x 32, F16Fragment<8>, 4,
    mfma_f32_16x16x32_f16
);
half_mfma!(
    /// `v_mfma_f32_16x16x32_bf16` (gfx950): as [`MfmaF32_16x16x32F16`] with bf16 operands.
    cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu"))), MfmaF32_16x16x32Bf16, 16 x 16 x 32, Bf16Fragment<8>, 4,
    mfma_f32_16x16x32_bf16
);
half_mfma!(
    /// `v_mfma_f32_32x32x16_f16` (gfx950): 32x32 f32 tile += 32x16 f16 times 16x32 f16; 8
    /// elements of A and B per lane, 16 of D.
    cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu"))), MfmaF32_32x32x16F16, 32 x 32 x 16, F16Fragment<8>, 16,
    mfma_f32_32x32x16_f16
);
half_mfma!(
    /// `v_mfma_f32_32x32x16_bf16` (gfx950): as [`MfmaF32_32x32x16F16`] with bf16 operands.
    cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu"))), MfmaF32_32x32x16Bf16, 32 x 32 x 16, Bf16Fragment<8>, 16,
    mfma_f32_32x32x16_bf16
);
