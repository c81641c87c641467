//! The LLVM matrix-core intrinsics, each declared for the gfx that has its instruction (any other
//! gfx fails the whole build with "Cannot select").
//!
//! The WMMAs take no controls; their operand vectors depend on the gfx and the wave size
//! ([`WmmaHalf`], [`WmmaBf16`], [`WmmaCodes`], [`WmmaAcc`]).
//!
//! The trailing `i32` operands of the plain MFMAs are the broadcast controls `cbsz`, `abid` and
//! `blgp` (Iron passes 0: no broadcast). The scaled MFMAs take `cbsz` and `blgp` as the A and B
//! element formats (0 FP8 E4M3, 1 FP8 E5M2, 2 FP6 E2M3, 3 FP6 E3M2, 4 FP4 E2M1), then per operand
//! an `opsel` (which byte of the scale word is the E8M0 scale; Iron passes 0) and the scale word.
//! Every one of these controls must be a compile-time constant.

use super::vector::Vector;
// The host's stand-in for the f16 lanes (the primitive type is nightly-only there).
#[cfg(not(target_arch = "amdgpu"))]
use crate::half::f16;

/// `<4 x float>`.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
type F32x4 = Vector<f32, 4>;
/// `<16 x float>`.
#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
type F32x16 = Vector<f32, 16>;

#[cfg(any(iron_matrix = "mfma", not(target_arch = "amdgpu")))]
crate::arch::gpu_extern! { "unadjusted" {
    /// `v_mfma_f32_16x16x16_f16`.
    #[link_name = "llvm.amdgcn.mfma.f32.16x16x16f16"]
    pub fn mfma_f32_16x16x16_f16(
        a: Vector<f16, 4>,
        b: Vector<f16, 4>,
        c: F32x4,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x4;
    /// `v_mfma_f32_32x32x8_f16`.
    #[link_name = "llvm.amdgcn.mfma.f32.32x32x8f16"]
    pub fn mfma_f32_32x32x8_f16(
        a: Vector<f16, 4>,
        b: Vector<f16, 4>,
        c: F32x16,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x16;
    /// `v_mfma_f32_16x16x16_bf16` (the CDNA2 "1k" form: 4 bf16 per lane).
    #[link_name = "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"]
    pub fn mfma_f32_16x16x16_bf16(
        a: Vector<i16, 4>,
        b: Vector<i16, 4>,
        c: F32x4,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x4;
    /// `v_mfma_f32_32x32x8_bf16` (the "1k" form).
    #[link_name = "llvm.amdgcn.mfma.f32.32x32x8bf16.1k"]
    pub fn mfma_f32_32x32x8_bf16(
        a: Vector<i16, 4>,
        b: Vector<i16, 4>,
        c: F32x16,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x16;
}}

#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
crate::arch::gpu_extern! { "unadjusted" {
    /// `v_mfma_f32_16x16x32_f16` (gfx950).
    #[link_name = "llvm.amdgcn.mfma.f32.16x16x32.f16"]
    pub fn mfma_f32_16x16x32_f16(
        a: Vector<f16, 8>,
        b: Vector<f16, 8>,
        c: F32x4,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x4;
    /// `v_mfma_f32_32x32x16_f16` (gfx950).
    #[link_name = "llvm.amdgcn.mfma.f32.32x32x16.f16"]
    pub fn mfma_f32_32x32x16_f16(
        a: Vector<f16, 8>,
        b: Vector<f16, 8>,
        c: F32x16,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x16;
    /// `v_mfma_f32_16x16x32_bf16` (gfx950).
    #[link_name = "llvm.amdgcn.mfma.f32.16x16x32.bf16"]
    pub fn mfma_f32_16x16x32_bf16(
        a: Vector<i16, 8>,
        b: Vector<i16, 8>,
        c: F32x4,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x4;
    /// `v_mfma_f32_32x32x16_bf16` (gfx950).
    #[link_name = "llvm.amdgcn.mfma.f32.32x32x16.bf16"]
    pub fn mfma_f32_32x32x16_bf16(
        a: Vector<i16, 8>,
        b: Vector<i16, 8>,
        c: F32x16,
        cbsz: i32,
        abid: i32,
        blgp: i32,
    ) -> F32x16;
}}

/// Declares the four FP8/BF8 operand combinations of one plain FP8 MFMA shape.
macro_rules! fp8_mfma {
    ($acc:ty; $($name:ident = $link:literal),* $(,)?) => {
        #[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
        crate::arch::gpu_extern! { "unadjusted" {
            $(
                #[doc = concat!("`", $link, "`: 8 codes per lane of A and B (FNUZ formats on gfx942, OCP on gfx950).")]
                #[link_name = $link]
                pub fn $name(a: i64, b: i64, c: $acc, cbsz: i32, abid: i32, blgp: i32) -> $acc;
            )*
        }}
    };
}

fp8_mfma!(F32x4;
    mfma_f32_16x16x32_fp8_fp8 = "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8",
    mfma_f32_16x16x32_fp8_bf8 = "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8",
    mfma_f32_16x16x32_bf8_fp8 = "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8",
    mfma_f32_16x16x32_bf8_bf8 = "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8",
);

fp8_mfma!(F32x16;
    mfma_f32_32x32x16_fp8_fp8 = "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8",
    mfma_f32_32x32x16_fp8_bf8 = "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8",
    mfma_f32_32x32x16_bf8_fp8 = "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8",
    mfma_f32_32x32x16_bf8_bf8 = "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8",
);

/// Declares the scaled MFMA of one shape for every pair of operand widths (8, 6 or 4 words per
/// lane: FP8, FP6, FP4 codes).
macro_rules! scaled_mfma {
    ($acc:ty; $($name:ident($wa:literal, $wb:literal) = $link:literal),* $(,)?) => {
        #[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
        crate::arch::gpu_extern! { "unadjusted" {
            $(
                #[doc = concat!("`", $link, "` (gfx950).")]
                #[link_name = $link]
                pub fn $name(
                    a: Vector<i32, $wa>,
                    b: Vector<i32, $wb>,
                    c: $acc,
                    a_format: i32,
                    b_format: i32,
                    a_opsel: i32,
                    a_scale: i32,
                    b_opsel: i32,
                    b_scale: i32,
                ) -> $acc;
            )*
        }}
    };
}

scaled_mfma!(F32x4;
    mfma_scale_16x16x128_8_8(8, 8) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32",
    mfma_scale_16x16x128_8_6(8, 6) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v6i32",
    mfma_scale_16x16x128_8_4(8, 4) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v4i32",
    mfma_scale_16x16x128_6_8(6, 8) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v8i32",
    mfma_scale_16x16x128_6_6(6, 6) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v6i32",
    mfma_scale_16x16x128_6_4(6, 4) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v4i32",
    mfma_scale_16x16x128_4_8(4, 8) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v8i32",
    mfma_scale_16x16x128_4_6(4, 6) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v6i32",
    mfma_scale_16x16x128_4_4(4, 4) = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32",
);

scaled_mfma!(F32x16;
    mfma_scale_32x32x64_8_8(8, 8) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32",
    mfma_scale_32x32x64_8_6(8, 6) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v6i32",
    mfma_scale_32x32x64_8_4(8, 4) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v4i32",
    mfma_scale_32x32x64_6_8(6, 8) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v8i32",
    mfma_scale_32x32x64_6_6(6, 6) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v6i32",
    mfma_scale_32x32x64_6_4(6, 4) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v4i32",
    mfma_scale_32x32x64_4_8(4, 8) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v8i32",
    mfma_scale_32x32x64_4_6(4, 6) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v6i32",
    mfma_scale_32x32x64_4_4(4, 4) = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32",
);

/// The f16 A and B operand of the 16-bit WMMAs: 16 elements per lane on gfx11 (both wave sizes),
/// `256 / WAVE` on gfx12.
#[cfg(iron_gfx = "gfx1100")]
pub type WmmaHalf = Vector<f16, 16>;
/// The f16 A and B operand of the 16-bit WMMAs (see the gfx1100 definition).
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
pub type WmmaHalf = Vector<f16, { WMMA_SPREAD }>;
/// The bf16 A and B operand of the 16-bit WMMAs, as bit patterns: as [`WmmaHalf`].
#[cfg(iron_gfx = "gfx1100")]
pub type WmmaBf16 = Vector<i16, 16>;
/// The bf16 A and B operand of the 16-bit WMMAs (see the gfx1100 definition).
#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
pub type WmmaBf16 = Vector<i16, { WMMA_SPREAD }>;
/// The f32 C and D operand of every WMMA: `256 / WAVE` elements per lane.
#[cfg(any(iron_matrix = "wmma", not(target_arch = "amdgpu")))]
pub type WmmaAcc = Vector<f32, { WMMA_SPREAD }>;
/// The FP8 A and B operand of gfx1201's FP8 WMMAs: 8 codes per lane (`<2 x i32>`) in wave32.
#[cfg(all(iron_gfx = "gfx1201", iron_wave = "32"))]
pub type WmmaCodes = Vector<i32, 2>;
/// The FP8 A and B operand of gfx1201's FP8 WMMAs: 4 codes per lane (`i32`) in wave64.
#[cfg(any(
    all(iron_gfx = "gfx1201", iron_wave = "64"),
    not(target_arch = "amdgpu")
))]
pub type WmmaCodes = i32;

/// Elements per lane of a 16 x 16 operand spread over the wave without copies: C and D of every
/// WMMA, and A and B of gfx12's 16x16x16 ones (8 in wave32, 4 in wave64).
#[cfg(any(iron_matrix = "wmma", not(target_arch = "amdgpu")))]
pub const WMMA_SPREAD: usize = (256 / crate::target::WAVE) as usize;

#[cfg(any(iron_matrix = "wmma", not(target_arch = "amdgpu")))]
crate::arch::gpu_extern! { "unadjusted" {
    /// `v_wmma_f32_16x16x16_f16`.
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.f16"]
    pub fn wmma_f32_16x16x16_f16(a: WmmaHalf, b: WmmaHalf, c: WmmaAcc) -> WmmaAcc;
    /// `v_wmma_f32_16x16x16_bf16`.
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.bf16"]
    pub fn wmma_f32_16x16x16_bf16(a: WmmaBf16, b: WmmaBf16, c: WmmaAcc) -> WmmaAcc;
}}

#[cfg(any(iron_gfx = "gfx1201", not(target_arch = "amdgpu")))]
crate::arch::gpu_extern! { "unadjusted" {
    /// `v_wmma_f32_16x16x16_fp8_fp8` (gfx1201, OCP E4M3 A and B).
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.fp8.fp8"]
    pub fn wmma_f32_16x16x16_fp8_fp8(a: WmmaCodes, b: WmmaCodes, c: WmmaAcc) -> WmmaAcc;
    /// `v_wmma_f32_16x16x16_fp8_bf8` (gfx1201, E4M3 A, E5M2 B).
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.fp8.bf8"]
    pub fn wmma_f32_16x16x16_fp8_bf8(a: WmmaCodes, b: WmmaCodes, c: WmmaAcc) -> WmmaAcc;
    /// `v_wmma_f32_16x16x16_bf8_fp8` (gfx1201, E5M2 A, E4M3 B).
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.bf8.fp8"]
    pub fn wmma_f32_16x16x16_bf8_fp8(a: WmmaCodes, b: WmmaCodes, c: WmmaAcc) -> WmmaAcc;
    /// `v_wmma_f32_16x16x16_bf8_bf8` (gfx1201, OCP E5M2 A and B).
    #[link_name = "llvm.amdgcn.wmma.f32.16x16x16.bf8.bf8"]
    pub fn wmma_f32_16x16x16_bf8_bf8(a: WmmaCodes, b: WmmaCodes, c: WmmaAcc) -> WmmaAcc;
}}
