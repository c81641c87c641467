//! The 16-bit float formats kernels keep in memory, as types with arithmetic and as conversions
//! on bit patterns: f16 (IEEE 754 binary16) and bf16 (bfloat16, the top half of an f32).
//!
//! [`f16`](struct@f16) and [`bf16`] are the `half` crate's types on the host and `u16` newtypes
//! with the same API subset on the GPU (bit patterns, f32 conversions, the constants, the predicates,
//! `+ - * /` and negation with their assigning and by-reference forms, IEEE comparisons,
//! `min`/`max`, `total_cmp`, `Default`, `Debug`), so one kernel source compiles for both and
//! host code launches kernels with `half`'s slices. On the GPU arithmetic is one f32 operation
//! rounded once, which is correctly rounded and what `half` computes (see `common`); for f16
//! LLVM turns it into the native f16 instructions. `half` has no `abs`: `x.copysign(ZERO)` is
//! the absolute value on both sides.
//!
//! The free functions convert bit patterns (`u16`) on the GPU. Rounding is to nearest, ties to
//! even, for both narrowing conversions; overflow gives infinity and a NaN stays a (quiet) NaN
//! of the same sign. Widening is exact. [`pack_halves`] moves bit patterns between words.

#[cfg(not(target_arch = "amdgpu"))]
pub use ::half::{bf16, f16};

#[cfg(target_arch = "amdgpu")]
#[macro_use]
mod common;

#[cfg(target_arch = "amdgpu")]
mod bfloat16;
#[cfg(target_arch = "amdgpu")]
mod binary16;

#[cfg(target_arch = "amdgpu")]
pub use bfloat16::bf16;
#[cfg(target_arch = "amdgpu")]
pub use binary16::f16;

crate::arch::gpu_extern! { "C" {
    /// `fpext half to float` on an i16 bit pattern: `v_cvt_f32_f16`.
    #[link_name = "llvm.convert.from.fp16.f32"]
    fn convert_from_fp16(bits: u16) -> f32;
    /// `fptrunc float to half` to an i16 bit pattern: `v_cvt_f16_f32`, in the current rounding
    /// mode (round to nearest even unless a kernel changes the mode, which Iron's never do).
    #[link_name = "llvm.convert.to.fp16.f32"]
    fn convert_to_fp16(x: f32) -> u16;
}}

/// Half `HALF` (0: bits 0..16, 1: bits 16..32) of `low` and of `high`, packed into one word:
/// `low`'s in bits 0..16, `high`'s in bits 16..32 (a pair of 16-bit values taken from two
/// words). One `v_perm_b32` on the GPU.
#[inline(always)]
pub fn pack_halves<const HALF: u32>(low: u32, high: u32) -> u32 {
    const { assert!(HALF < 2) };
    #[cfg(target_arch = "amdgpu")]
    {
        // v_perm_b32 reads src0 as bytes 4..8 and src1 as bytes 0..4 of one value; byte n of
        // the selector names byte n of the result.
        let selector = if HALF == 0 { 0x0504_0100 } else { 0x0706_0302 };
        // SAFETY: a register operation, without memory effects.
        unsafe { crate::arch::perm(high, low, selector) }
    }
    #[cfg(not(target_arch = "amdgpu"))]
    {
        ((low >> (16 * HALF)) & 0xFFFF) | ((high >> (16 * HALF)) << 16)
    }
}

/// The f32 value of the f16 bit pattern `bits` (exact): `v_cvt_f32_f16`. The same value as
/// `f16::from_bits(bits).to_f32()`, kept on integers for kernels that keep f16 data as `u16`
/// (LLVM schedules the two forms differently).
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    // SAFETY: a pure arithmetic conversion with no preconditions.
    unsafe { convert_from_fp16(bits) }
}

/// The f16 bit pattern nearest to `x` (ties to even; beyond the f16 range: infinity):
/// `v_cvt_f16_f32`, the same as `f16::from_f32(x).to_bits()`.
#[inline(always)]
pub fn f32_to_f16(x: f32) -> u16 {
    // SAFETY: a pure arithmetic conversion with no preconditions.
    unsafe { convert_to_fp16(x) }
}

#[cfg(iron_gfx = "gfx950")]
crate::arch::gpu_extern! { "C" {
    /// `fptrunc <2 x float> to <2 x half>` as one word (`a` in the low half): iron-build defines
    /// this marker in the post-LTO module, and LLVM selects gfx950's `v_cvt_pk_f16_f32` for it.
    #[gpu(unsafe(ffi_const))]
    #[link_name = "iron.cvt.pk.f16.f32"]
    fn convert_pair_to_f16(a: f32, b: f32) -> u32;
}}

/// The f16 bit patterns nearest to `a` (bits 0..16) and to `b` (bits 16..32), as
/// [`f32_to_f16`] rounds them: gfx950's `v_cvt_pk_f16_f32` there, two conversions and a pack
/// elsewhere.
#[inline(always)]
pub fn f32_pair_to_f16(a: f32, b: f32) -> u32 {
    #[cfg(iron_gfx = "gfx950")]
    {
        // SAFETY: a pure arithmetic conversion with no preconditions.
        unsafe { convert_pair_to_f16(a, b) }
    }
    #[cfg(not(iron_gfx = "gfx950"))]
    {
        u32::from(f32_to_f16(a)) | (u32::from(f32_to_f16(b)) << 16)
    }
}

#[cfg(iron_gfx = "gfx950")]
crate::arch::gpu_extern! { "C" {
    /// `fptrunc <2 x float> to <2 x bfloat>` as one word (`a` in the low half): iron-build
    /// defines this marker in the post-LTO module, and LLVM selects gfx950's
    /// `v_cvt_pk_bf16_f32` for it.
    #[gpu(unsafe(ffi_const))]
    #[link_name = "iron.cvt.pk.bf16.f32"]
    fn convert_pair_to_bf16(a: f32, b: f32) -> u32;
}}

/// The bf16 bit patterns nearest to `a` (bits 0..16) and to `b` (bits 16..32), as
/// [`f32_to_bf16`] rounds them: gfx950's `v_cvt_pk_bf16_f32` there, two conversions and a pack
/// elsewhere.
#[inline(always)]
pub fn f32_pair_to_bf16(a: f32, b: f32) -> u32 {
    #[cfg(iron_gfx = "gfx950")]
    {
        // SAFETY: a pure arithmetic conversion with no preconditions.
        unsafe { convert_pair_to_bf16(a, b) }
    }
    #[cfg(not(iron_gfx = "gfx950"))]
    {
        u32::from(f32_to_bf16(a)) | (u32::from(f32_to_bf16(b)) << 16)
    }
}

/// The f32 value of the bf16 bit pattern `bits` (exact: bf16 is the top half of an f32).
#[inline(always)]
pub fn bf16_to_f32(bits: u16) -> f32 {
    bf16::from_bits(bits).to_f32()
}

/// The bf16 bit pattern nearest to `x` (ties to even; beyond the bf16 range: infinity): gfx950's
/// `v_cvt_pk_bf16_f32`, about five integer instructions elsewhere. A NaN keeps its sign and
/// becomes quiet.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}
