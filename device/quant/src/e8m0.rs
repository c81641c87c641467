//! E8M0, the OCP MX scale format: an unsigned power of two, `2^(code - 127)`.
//!
//! Codes 0..=254 are `2^-127 ..= 2^127`; 0xFF is NaN. There is no zero, no sign and no
//! infinity. `2^-127` is an f32 subnormal, which decoding builds exactly.
//!
//! Encoding a general f32 (the MX block scale does not need it: see [`crate::mx`]) rounds
//! to the nearest power of two with ties (`1.5 * 2^k`) going up, as ml_dtypes'
//! `float8_e8m0fnu` does; zero, negative numbers, infinities and NaN have no code and give
//! NaN. Positive values below `2^-127` give code 0 (the smallest scale); f32 subnormals
//! between `2^-127` and `1.5 * 2^-127` give code 0 here (nearest) where ml_dtypes gives 1.
//! Values that round above `2^127` give NaN, or code 0xFE when saturating.

use crate::element::ElementFormat;

/// The E8M0 scale format (`float8_e8m0fnu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E8M0;

impl E8M0 {
    /// The NaN code.
    pub const NAN: u8 = 0xFF;
    /// The code of 1.0.
    pub const ONE: u8 = 127;

    /// The code of `2^exponent`, clamped to the representable `-127..=127`.
    #[inline]
    pub const fn from_exponent(exponent: i32) -> u8 {
        let clamped = if exponent < -127 {
            -127
        } else if exponent > 127 {
            127
        } else {
            exponent
        };
        (clamped + 127) as u8
    }

    /// The exponent `k` of the scale `2^k` a (non-NaN) code stands for.
    #[inline]
    pub const fn to_exponent(code: u8) -> i32 {
        code as i32 - 127
    }

    #[inline]
    fn encode(x: f32, saturate: bool) -> u8 {
        let bits = x.to_bits();
        // Zero, negative numbers (sign bit set), infinities and NaN have no code.
        if bits == 0 || bits >= 0x7F80_0000 {
            return Self::NAN;
        }
        if bits < 0x0080_0000 {
            // Subnormal: code 1 (2^-126) from 1.5 * 2^-127 up, else the smallest code.
            return (bits >= 0x0060_0000) as u8;
        }
        let code = (bits >> 23) + ((bits & 0x007F_FFFF) >= 0x0040_0000) as u32;
        if code > 0xFE {
            if saturate { 0xFE } else { Self::NAN }
        } else {
            code as u8
        }
    }
}

impl ElementFormat for E8M0 {
    const NAME: &'static str = "e8m0";
    const BITS: u32 = 8;
    const MAX: f32 = f32::from_bits(0xFE << 23);
    const EMAX: i32 = 127;

    /// `2^(code - 127)`, NaN for 0xFF.
    #[inline]
    fn decode_to_f32(code: u8) -> f32 {
        let bits = match code {
            0 => 0x0040_0000,
            0xFF => 0x7FC0_0000,
            c => (c as u32) << 23,
        };
        f32::from_bits(bits)
    }

    #[inline]
    fn encode_from_f32(x: f32) -> u8 {
        Self::encode(x, false)
    }

    #[inline]
    fn encode_from_f32_saturating(x: f32) -> u8 {
        Self::encode(x, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_round_trip_and_clamp() {
        assert_eq!(E8M0::from_exponent(0), 127);
        assert_eq!(E8M0::from_exponent(-200), 0);
        assert_eq!(E8M0::from_exponent(200), 254);
        assert_eq!(E8M0::to_exponent(E8M0::from_exponent(-5)), -5);
    }

    #[test]
    fn decode_extremes() {
        assert_eq!(E8M0::decode_to_f32(127), 1.0);
        assert_eq!(E8M0::decode_to_f32(0), f32::from_bits(1 << 22));
        assert_eq!(E8M0::decode_to_f32(254), E8M0::MAX);
        assert!(E8M0::decode_to_f32(255).is_nan());
    }
}
