//! Conversions between f32 and the 16-bit float formats kernels keep in memory: f16 (IEEE 754
//! binary16) and bf16 (bfloat16, the top half of an f32), on bit patterns (`u16`).
//!
//! f16 uses the hardware conversions (`v_cvt_f32_f16`, `v_cvt_f16_f32`: one instruction each,
//! through LLVM's `convert.{from,to}.fp16`). bf16 to f32 is a shift; f32 to bf16 is integer
//! rounding (about five instructions), the same on every gfx.
//!
//! Rounding is to nearest, ties to even, for both narrowing conversions; overflow gives infinity
//! and a NaN stays a (quiet) NaN of the same sign. Widening is exact.

unsafe extern "C" {
    /// `fpext half to float` on an i16 bit pattern: `v_cvt_f32_f16`.
    #[link_name = "llvm.convert.from.fp16.f32"]
    fn convert_from_fp16(bits: u16) -> f32;
    /// `fptrunc float to half` to an i16 bit pattern: `v_cvt_f16_f32`, in the current rounding
    /// mode (round to nearest even unless a kernel changes the mode, which Iron's never do).
    #[link_name = "llvm.convert.to.fp16.f32"]
    fn convert_to_fp16(x: f32) -> u16;
}

/// The f32 value of the f16 bit pattern `bits` (exact).
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    // SAFETY: a pure arithmetic conversion with no preconditions.
    unsafe { convert_from_fp16(bits) }
}

/// The f16 bit pattern nearest to `x` (ties to even; beyond the f16 range: infinity).
#[inline(always)]
pub fn f32_to_f16(x: f32) -> u16 {
    // SAFETY: a pure arithmetic conversion with no preconditions.
    unsafe { convert_to_fp16(x) }
}

/// The f32 value of the bf16 bit pattern `bits` (exact: bf16 is the top half of an f32).
#[inline(always)]
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// The bf16 bit pattern nearest to `x` (ties to even; beyond the bf16 range: infinity). A NaN
/// keeps its sign and becomes quiet.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    // Adding just under half of the dropped part's unit, plus the kept part's lowest bit, rounds
    // to nearest with ties going to the even result; a carry moves into the exponent by itself.
    let rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16;
    let quiet_nan = (bits >> 16) | 0x0040;
    // A select, not a branch: the same instructions for every lane.
    let is_nan = bits & 0x7FFF_FFFF > 0x7F80_0000;
    (if is_nan { quiet_nan } else { rounded }) as u16
}
