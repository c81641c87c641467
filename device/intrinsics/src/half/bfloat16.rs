//! The device's `bf16` (bfloat16: 1 sign, 8 exponent, 7 fraction bits; the top half of an f32).
//!
//! Stored as its bit pattern. Widening is a shift; narrowing is gfx950's conversion instruction
//! (`v_cvt_pk_bf16_f32`) there and integer rounding (about five instructions,
//! [`super::f32_to_bf16`]) elsewhere. Rust has no bfloat type, so gfx950's conversion is reached
//! through a marker that iron-build defines as LLVM's `fptrunc float to bfloat`. No target has
//! bf16 arithmetic LLVM reaches, so every operator is a shift per operand, the f32 instruction
//! and the rounding.

#[cfg(iron_gfx = "gfx950")]
crate::arch::gpu_extern! { "C" {
    /// `fptrunc float to bfloat` as an i16 bit pattern (round to nearest even, a NaN made
    /// quiet): iron-build defines this marker in the post-LTO module, and LLVM selects
    /// `v_cvt_pk_bf16_f32` for it.
    #[gpu(unsafe(ffi_const))]
    #[link_name = "iron.cvt.bf16.f32"]
    fn convert_to_bf16(x: f32) -> u16;
}}

/// A bfloat16 value: the same API subset as the `half` crate's `bf16` (which it is on the
/// host), so that one kernel source compiles for both.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct bf16(u16);

impl bf16 {
    /// The value with bit pattern `bits`.
    #[inline(always)]
    #[must_use]
    pub const fn from_bits(bits: u16) -> bf16 {
        bf16(bits)
    }

    /// The bit pattern.
    #[inline(always)]
    #[must_use]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The value nearest to `x`: ties to even, beyond `MAX` (after rounding) ±∞, a NaN stays a
    /// NaN of the same sign (made quiet).
    #[inline(always)]
    #[must_use]
    pub fn from_f32(x: f32) -> bf16 {
        #[cfg(iron_gfx = "gfx950")]
        {
            // SAFETY: a pure arithmetic conversion with no preconditions.
            bf16(unsafe { convert_to_bf16(x) })
        }
        #[cfg(not(iron_gfx = "gfx950"))]
        {
            Self::from_f32_by_rounding(x)
        }
    }

    /// [`Self::from_f32`] in integer instructions.
    #[cfg(not(iron_gfx = "gfx950"))]
    #[inline(always)]
    fn from_f32_by_rounding(x: f32) -> bf16 {
        let bits = x.to_bits();
        // Adding just under half of the dropped part's unit, plus the kept part's lowest bit,
        // rounds to nearest with ties going to the even result; a carry moves into the exponent
        // by itself. (Only a NaN pattern can wrap, and the select below discards it.)
        let rounded = bits.wrapping_add(0x7FFF + ((bits >> 16) & 1));
        let quiet_nan = bits | 0x0040_0000;
        // A select, not a branch, on the whole words: one float compare finds a NaN, and the
        // shift to the top half folds into the packing of two results into one word.
        let kept = if x.is_nan() { quiet_nan } else { rounded };
        bf16((kept >> 16) as u16)
    }

    /// The value as f32 (exact: the pattern shifted into the top half).
    #[inline(always)]
    #[must_use]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }

    /// Decimal digits the format holds exactly.
    pub const DIGITS: u32 = 2;
    /// Significand bits, the implicit one included.
    pub const MANTISSA_DIGITS: u32 = 8;
    /// One more than the largest binary exponent of a finite value.
    pub const MAX_EXP: i32 = 128;
    /// One more than the smallest binary exponent of a normal value.
    pub const MIN_EXP: i32 = -125;
    /// The largest `n` such that `10^n` is finite.
    pub const MAX_10_EXP: i32 = 38;
    /// The smallest `n` such that `10^n` is normal.
    pub const MIN_10_EXP: i32 = -37;
    /// The radix of the representation.
    pub const RADIX: u32 = 2;
}

float16_constants!(bf16 {
    /// +0.
    ZERO = 0x0000;
    /// −0.
    NEG_ZERO = 0x8000;
    /// 1.
    ONE = 0x3F80;
    /// −1.
    NEG_ONE = 0xBF80;
    /// The gap between 1 and the next value, 2^−7.
    EPSILON = 0x3C00;
    /// +∞.
    INFINITY = 0x7F80;
    /// −∞.
    NEG_INFINITY = 0xFF80;
    /// A quiet NaN (the pattern `half` uses).
    NAN = 0x7FC0;
    /// The largest finite value, (2 − 2^−7) 2^127.
    MAX = 0x7F7F;
    /// The smallest finite value, −(2 − 2^−7) 2^127.
    MIN = 0xFF7F;
    /// The smallest positive normal value, 2^−126.
    MIN_POSITIVE = 0x0080;
    /// The smallest positive subnormal value, 2^−133.
    MIN_POSITIVE_SUBNORMAL = 0x0001;
    /// The largest subnormal value, 2^−126 − 2^−133.
    MAX_SUBNORMAL = 0x007F;
});

float16_math_constants!(
    bf16,
    [
        0x402E, 0x4049, 0x3EA3, 0x3F35, 0x3F23, 0x3F90, 0x3FC9, 0x3F86, 0x3F49, 0x3F06, 0x3EC9,
        0x4013, 0x3F31, 0x3EDE, 0x3E9A, 0x3FB9, 0x4055, 0x3FB5
    ]
);

float16_common!(bf16, exponent = 0x7F80, fraction = 0x007F);
