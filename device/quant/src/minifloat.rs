//! The shared codec of the small sign/exponent/mantissa formats (FP8, FP6, FP4).
//!
//! A format is a [`Layout`]: widths, bias and how it spends its special codes. Encoding
//! rounds to nearest, ties to even, on the f32 bit pattern (no float library calls);
//! decoding builds the f32 bit pattern directly. All functions take the layout by
//! reference to a `const` and are always inlined, so every field becomes a constant.

/// How a format uses the codes that IEEE 754 reserves for infinities and NaNs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Specials {
    /// IEEE 754 style: the all-ones exponent holds ±Inf (mantissa 0) and NaNs (OCP E5M2).
    Ieee,
    /// Only S.1111.111 is NaN, no infinities (OCP E4M3, "FN": finite and NaN).
    NanAllOnes,
    /// One NaN at 0x80, the code of negative zero; no infinities, no -0 ("FNUZ").
    NanAtNegativeZero,
    /// Every code is a finite number (FP6, FP4).
    AllFinite,
}

/// The parameters of one small floating-point format.
pub(crate) struct Layout {
    /// Total width in bits (sign + exponent + mantissa).
    pub(crate) bits: u32,
    /// Exponent field width.
    pub(crate) exp_bits: u32,
    /// Mantissa field width.
    pub(crate) man_bits: u32,
    /// Exponent bias.
    pub(crate) bias: i32,
    /// Use of the special codes.
    pub(crate) specials: Specials,
}

const F32_QUIET_NAN: u32 = 0x7FC0_0000;
const F32_INFINITY: u32 = 0x7F80_0000;
const F32_MIN_NORMAL: u32 = 0x0080_0000;

impl Layout {
    /// Mask of the exponent field once shifted down.
    const fn exp_mask(&self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    /// Mask of the mantissa field.
    const fn man_mask(&self) -> u32 {
        (1 << self.man_bits) - 1
    }

    /// Exponent of the smallest normal number (also the scale of the subnormals).
    const fn min_exp(&self) -> i32 {
        1 - self.bias
    }

    /// Code (without sign) of the largest finite magnitude.
    pub(crate) const fn max_magnitude_code(&self) -> u32 {
        match self.specials {
            Specials::Ieee => (self.exp_mask() << self.man_bits) - 1,
            Specials::NanAllOnes => (1 << (self.bits - 1)) - 2,
            Specials::NanAtNegativeZero | Specials::AllFinite => (1 << (self.bits - 1)) - 1,
        }
    }

    /// Largest finite value, computed from the fields with integer arithmetic only.
    pub(crate) const fn max_value(&self) -> f32 {
        let code = self.max_magnitude_code();
        let exp = (code >> self.man_bits) as i32 - self.bias;
        let man = code & self.man_mask();
        f32::from_bits((((exp + 127) as u32) << 23) | (man << (23 - self.man_bits)))
    }

    /// Exponent of the largest finite value: `floor(log2(max_value))` (the MX `emax`).
    pub(crate) const fn max_exp(&self) -> i32 {
        (self.max_magnitude_code() >> self.man_bits) as i32 - self.bias
    }
}

/// `2^k` for `-126 <= k <= 127`, built from bits.
#[inline]
pub(crate) const fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `value >> shift` rounded to nearest, ties to even; `1 <= shift <= 31`.
#[inline(always)]
pub(crate) const fn shift_right_round_even(value: u32, shift: u32) -> u32 {
    let kept = value >> shift;
    let rest = value & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let round_up = (rest > half) | ((rest == half) & (kept & 1 == 1));
    kept + round_up as u32
}

/// Magnitude code of `|x|` (f32 bits without sign, not NaN), rounded to nearest even.
/// May exceed the format's largest code; the caller handles overflow.
#[inline(always)]
fn round_magnitude(l: &Layout, abs: u32) -> u32 {
    if abs < F32_MIN_NORMAL {
        // f32 zeros and subnormals lie far below half the smallest subnormal of every
        // format here (at least 2^-17), so they round to zero.
        return 0;
    }
    let exp = (abs >> 23) as i32 - 127;
    if exp >= l.min_exp() {
        // Rebase the exponent field to the format's bias; the mantissa carry of the
        // rounding moves into the exponent field by itself.
        let rebased = abs - (((127 - l.bias) as u32) << 23);
        shift_right_round_even(rebased, 23 - l.man_bits)
    } else {
        // Subnormal result: the significand counted in units of the smallest subnormal.
        let significand = (abs & 0x007F_FFFF) | F32_MIN_NORMAL;
        let shift = (23 - l.man_bits) as i32 + (l.min_exp() - exp);
        let shift = if shift > 31 { 31 } else { shift as u32 };
        shift_right_round_even(significand, shift)
    }
}

/// The NaN code for an input NaN with sign bit `sign`.
#[inline(always)]
const fn nan_code(l: &Layout, sign: u32) -> u32 {
    let sign_bit = sign << (l.bits - 1);
    match l.specials {
        // Quiet NaN: all-ones exponent, top mantissa bit set.
        Specials::Ieee => sign_bit | (l.exp_mask() << l.man_bits) | (1 << (l.man_bits - 1)),
        Specials::NanAllOnes => sign_bit | ((1 << (l.bits - 1)) - 1),
        Specials::NanAtNegativeZero => 1 << (l.bits - 1),
        // No NaN exists: the documented choice is +0.
        Specials::AllFinite => 0,
    }
}

/// The code for a magnitude that overflows the finite range, when not saturating.
#[inline(always)]
const fn overflow_code(l: &Layout, sign: u32) -> u32 {
    let sign_bit = sign << (l.bits - 1);
    match l.specials {
        Specials::Ieee => sign_bit | (l.exp_mask() << l.man_bits),
        Specials::NanAllOnes | Specials::NanAtNegativeZero => nan_code(l, sign),
        Specials::AllFinite => sign_bit | l.max_magnitude_code(),
    }
}

/// Encodes `x`, rounding to nearest even. Finite overflow and infinities become
/// `±max` when `saturate` is set (or the format has no special codes), otherwise the
/// format's infinity or NaN. NaN becomes the format's NaN (+0 when it has none).
#[inline(always)]
pub(crate) fn encode(l: &Layout, x: f32, saturate: bool) -> u8 {
    let bits = x.to_bits();
    let sign = bits >> 31;
    let abs = bits & 0x7FFF_FFFF;
    let magnitude = round_magnitude(l, abs);
    let max = l.max_magnitude_code();
    let code = if abs > F32_INFINITY {
        nan_code(l, sign)
    } else if magnitude > max {
        if saturate {
            (sign << (l.bits - 1)) | max
        } else {
            overflow_code(l, sign)
        }
    } else if magnitude == 0 && l.specials == Specials::NanAtNegativeZero {
        0
    } else {
        (sign << (l.bits - 1)) | magnitude
    };
    code as u8
}

/// Decodes a code to the f32 of the same value (exact: every value of these formats is
/// an f32). NaN codes give a quiet NaN carrying the code's sign where the format has one.
#[inline(always)]
pub(crate) fn decode(l: &Layout, code: u8) -> f32 {
    let c = code as u32 & ((1 << l.bits) - 1);
    let sign = (c >> (l.bits - 1)) << 31;
    let exp = (c >> l.man_bits) & l.exp_mask();
    let man = c & l.man_mask();
    let normal = (((exp as i32 + 127 - l.bias) as u32) << 23) | (man << (23 - l.man_bits));
    let subnormal = (man as f32 * pow2(l.min_exp() - l.man_bits as i32)).to_bits();
    let magnitude = if exp == 0 { subnormal } else { normal };
    let bits = match l.specials {
        Specials::Ieee if exp == l.exp_mask() => {
            sign | if man == 0 {
                F32_INFINITY
            } else {
                F32_QUIET_NAN
            }
        }
        Specials::NanAllOnes if c & !(1 << (l.bits - 1)) == (1 << (l.bits - 1)) - 1 => {
            sign | F32_QUIET_NAN
        }
        Specials::NanAtNegativeZero if c == 1 << (l.bits - 1) => F32_QUIET_NAN,
        _ => sign | magnitude,
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_rounds_half_to_even() {
        assert_eq!(shift_right_round_even(0b101, 1), 0b10);
        assert_eq!(shift_right_round_even(0b111, 1), 0b100);
        assert_eq!(shift_right_round_even(0b1011, 2), 0b11);
        assert_eq!(shift_right_round_even(0b1001, 2), 0b10);
        assert_eq!(shift_right_round_even(0b1010, 2), 0b10);
        assert_eq!(shift_right_round_even(0b1110, 2), 0b100);
        assert_eq!(shift_right_round_even(u32::MAX >> 1, 31), 1);
        assert_eq!(shift_right_round_even(1 << 30, 31), 0);
    }

    #[test]
    fn pow2_builds_exact_powers() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(-3), 0.125);
        assert_eq!(pow2(10), 1024.0);
        assert_eq!(pow2(-126), f32::MIN_POSITIVE);
    }
}
