//! gfx950's hardware conversions from the OCP microscaling element formats to f32: FP4 (E2M1),
//! FP6 (E2M3, E3M2) and FP8 (E4M3, E5M2), each element multiplied by a power-of-two scale in
//! the same instruction (`V_CVT_SCALEF32_PK_F32_FP4`, `..._PK32_F32_FP6`, `..._PK32_F32_BF6`,
//! `..._PK_F32_FP8`, `..._PK_F32_BF8`).
//!
//! The scale operand is an E8M0 code: the instructions read only the exponent field of their
//! f32 scale operand, so [`e8m0_operand`] places the code there. Element order follows
//! `iron_quant::pack`: FP4 element `2i` in the low nibble of byte `i`, FP6 element `i` in bits
//! `6i..6i+6` of the little-endian stream, FP8 element `i` in byte `i`.
//!
//! Only gfx950 has these instructions: among GPU builds this module exists in gfx950's alone
//! (elsewhere LLVM fails with "Cannot select"); the host has it for type-checking kernels.

/// Two f32 results of a packed conversion.
#[cfg_attr(target_arch = "amdgpu", repr(simd))]
#[cfg_attr(
    not(target_arch = "amdgpu"),
    allow(dead_code, reason = "read by transmute")
)]
#[derive(Clone, Copy)]
struct F32x2([f32; 2]);

/// Thirty-two f32 results of a 32-element FP6 conversion.
#[cfg_attr(target_arch = "amdgpu", repr(simd))]
#[cfg_attr(
    not(target_arch = "amdgpu"),
    allow(dead_code, reason = "read by transmute")
)]
#[derive(Clone, Copy)]
struct F32x32([f32; 32]);

/// Six 32-bit words: 32 packed FP6 codes.
#[cfg_attr(target_arch = "amdgpu", repr(simd))]
#[cfg_attr(
    not(target_arch = "amdgpu"),
    allow(dead_code, reason = "read by transmute")
)]
#[derive(Clone, Copy)]
struct U32x6([u32; 6]);

crate::arch::gpu_extern! { "unadjusted" {
    /// FP4 byte `byte_sel` of `src` (2 elements) times `2^(exponent(scale) - 127)`.
    #[link_name = "llvm.amdgcn.cvt.scalef32.pk.f32.fp4"]
    fn cvt_scalef32_pk_f32_fp4(src: u32, scale: f32, byte_sel: u32) -> F32x2;
    /// FP8 E4M3 half-word `word_sel` of `src` (2 elements), scaled.
    #[link_name = "llvm.amdgcn.cvt.scalef32.pk.f32.fp8"]
    fn cvt_scalef32_pk_f32_fp8(src: u32, scale: f32, word_sel: bool) -> F32x2;
    /// FP8 E5M2 half-word `word_sel` of `src` (2 elements), scaled.
    #[link_name = "llvm.amdgcn.cvt.scalef32.pk.f32.bf8"]
    fn cvt_scalef32_pk_f32_bf8(src: u32, scale: f32, word_sel: bool) -> F32x2;
    /// 32 FP6 E2M3 elements, scaled.
    #[link_name = "llvm.amdgcn.cvt.scalef32.pk32.f32.fp6"]
    fn cvt_scalef32_pk32_f32_fp6(src: U32x6, scale: f32) -> F32x32;
    /// 32 FP6 E3M2 elements, scaled.
    #[link_name = "llvm.amdgcn.cvt.scalef32.pk32.f32.bf6"]
    fn cvt_scalef32_pk32_f32_bf6(src: U32x6, scale: f32) -> F32x32;
}}

/// The lanes of a two-lane result.
#[inline(always)]
fn lanes2(v: F32x2) -> [f32; 2] {
    // SAFETY: a `repr(simd)` vector of two f32 has the size and bits of `[f32; 2]`.
    unsafe { core::mem::transmute::<F32x2, [f32; 2]>(v) }
}

/// The lanes of a 32-lane result.
#[inline(always)]
fn lanes32(v: F32x32) -> [f32; 32] {
    // SAFETY: a `repr(simd)` vector of 32 f32 has the size and bits of `[f32; 32]`.
    unsafe { core::mem::transmute::<F32x32, [f32; 32]>(v) }
}

/// The f32 whose exponent field is the E8M0 scale code `code` (the scale operand of these
/// instructions).
#[inline(always)]
pub fn e8m0_operand(code: u8) -> f32 {
    f32::from_bits(u32::from(code) << 23)
}

/// The 8 FP4 (E2M1) elements of `word`, element `j` from bits `4j..4j+4`, each times the E8M0
/// scale whose [`e8m0_operand`] is `scale`.
#[inline(always)]
pub fn fp4x8_to_f32(word: u32, scale: f32) -> [f32; 8] {
    // SAFETY: pure conversions; the byte selectors are constants in 0..4.
    let pairs = unsafe {
        [
            cvt_scalef32_pk_f32_fp4(word, scale, 0),
            cvt_scalef32_pk_f32_fp4(word, scale, 1),
            cvt_scalef32_pk_f32_fp4(word, scale, 2),
            cvt_scalef32_pk_f32_fp4(word, scale, 3),
        ]
    };
    let pairs = pairs.map(lanes2);
    core::array::from_fn(|j| pairs[j / 2][j % 2])
}

/// The 4 FP8 elements of `word` (byte `j` is element `j`), E4M3 when `E5M2` is false, each times
/// the E8M0 scale whose [`e8m0_operand`] is `scale`.
#[inline(always)]
pub fn fp8x4_to_f32<const E5M2: bool>(word: u32, scale: f32) -> [f32; 4] {
    // SAFETY: pure conversions; the half-word selectors are constants.
    let [low, high] = unsafe {
        if E5M2 {
            [
                cvt_scalef32_pk_f32_bf8(word, scale, false),
                cvt_scalef32_pk_f32_bf8(word, scale, true),
            ]
        } else {
            [
                cvt_scalef32_pk_f32_fp8(word, scale, false),
                cvt_scalef32_pk_f32_fp8(word, scale, true),
            ]
        }
    };
    let (low, high) = (lanes2(low), lanes2(high));
    [low[0], low[1], high[0], high[1]]
}

/// The first 16 FP6 elements of the 96-bit little-endian stream `words` (element `j` from bits
/// `6j..6j+6`), E2M3 when `E3M2` is false, each times the E8M0 scale whose [`e8m0_operand`] is
/// `scale`.
#[inline(always)]
pub fn fp6x16_to_f32<const E3M2: bool>(words: [u32; 3], scale: f32) -> [f32; 16] {
    let src = U32x6([words[0], words[1], words[2], 0, 0, 0]);
    // SAFETY: pure conversions.
    let all = unsafe {
        if E3M2 {
            cvt_scalef32_pk32_f32_bf6(src, scale)
        } else {
            cvt_scalef32_pk32_f32_fp6(src, scale)
        }
    };
    let all = lanes32(all);
    core::array::from_fn(|j| all[j])
}
