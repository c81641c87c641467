//! The device's `f16` (IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits).
//!
//! Stored as its bit pattern; the conversions are `fpext`/`fptrunc` of LLVM's `half`, so
//! `v_cvt_f32_f16` and `v_cvt_f16_f32`. Since every operator is written as f32 arithmetic
//! between those conversions, LLVM narrows `+ - *` and the comparisons to the native
//! `v_add_f16`, `v_sub_f16`, `v_mul_f16`, `v_cmp_*_f16` (all gfx9 and RDNA targets have them;
//! the narrowing is exact, see [`super`]), and `/` to its short correctly rounded f16 division
//! (`v_rcp_f32`, two refinement steps, `v_div_fixup_f16`).

/// Rust's own (unstable) `f16`, under another name, since this module's `f16` shadows it.
mod primitive {
    /// LLVM's `half`.
    pub(super) type Native = f16;
}
use primitive::Native;

/// An IEEE 754 binary16 value: the same API subset as the `half` crate's `f16` (which it is on
/// the host), so that one kernel source compiles for both.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct f16(u16);

impl f16 {
    /// The value with bit pattern `bits`.
    #[inline(always)]
    #[must_use]
    pub const fn from_bits(bits: u16) -> f16 {
        f16(bits)
    }

    /// The bit pattern.
    #[inline(always)]
    #[must_use]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The value nearest to `x`: ties to even, beyond `MAX` (after rounding) ±∞, a NaN stays a
    /// NaN of the same sign. One `v_cvt_f16_f32`.
    #[inline(always)]
    #[must_use]
    pub fn from_f32(x: f32) -> f16 {
        f16((x as Native).to_bits())
    }

    /// The value as f32 (exact). One `v_cvt_f32_f16`.
    #[inline(always)]
    #[must_use]
    pub fn to_f32(self) -> f32 {
        Native::from_bits(self.0) as f32
    }

    /// Decimal digits the format holds exactly.
    pub const DIGITS: u32 = 3;
    /// Significand bits, the implicit one included.
    pub const MANTISSA_DIGITS: u32 = 11;
    /// One more than the largest binary exponent of a finite value.
    pub const MAX_EXP: i32 = 16;
    /// One more than the smallest binary exponent of a normal value.
    pub const MIN_EXP: i32 = -13;
    /// The largest `n` such that `10^n` is finite.
    pub const MAX_10_EXP: i32 = 4;
    /// The smallest `n` such that `10^n` is normal.
    pub const MIN_10_EXP: i32 = -4;
    /// The radix of the representation.
    pub const RADIX: u32 = 2;
}

float16_constants!(f16 {
    /// +0.
    ZERO = 0x0000;
    /// −0.
    NEG_ZERO = 0x8000;
    /// 1.
    ONE = 0x3C00;
    /// −1.
    NEG_ONE = 0xBC00;
    /// The gap between 1 and the next value, 2^−10.
    EPSILON = 0x1400;
    /// +∞.
    INFINITY = 0x7C00;
    /// −∞.
    NEG_INFINITY = 0xFC00;
    /// A quiet NaN (the pattern `half` uses).
    NAN = 0x7E00;
    /// The largest finite value, 65504.
    MAX = 0x7BFF;
    /// The smallest finite value, −65504.
    MIN = 0xFBFF;
    /// The smallest positive normal value, 2^−14.
    MIN_POSITIVE = 0x0400;
    /// The smallest positive subnormal value, 2^−24.
    MIN_POSITIVE_SUBNORMAL = 0x0001;
    /// The largest subnormal value, 2^−14 − 2^−24.
    MAX_SUBNORMAL = 0x03FF;
});

float16_math_constants!(
    f16,
    [
        0x4170, 0x4248, 0x3518, 0x39A8, 0x3918, 0x3C83, 0x3E48, 0x3C30, 0x3A48, 0x3830, 0x3648,
        0x409B, 0x398C, 0x36F3, 0x34D1, 0x3DC5, 0x42A5, 0x3DA8
    ]
);

float16_common!(f16, exponent = 0x7C00, fraction = 0x03FF);
