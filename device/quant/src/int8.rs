//! INT8, the MXINT8 element: two's complement with an implicit scale of 2^-6.
//!
//! Code `c` stands for `(c as i8) / 64`: the range is `-2 ..= 1 + 63/64` in steps of
//! `1/64`. `emax` is 0 (the largest power of two in range is 1). Encoding rounds to the
//! nearest multiple of 1/64 (ties to even) and always saturates to `-128/64 ..= 127/64`;
//! NaN encodes to 0. The value -2 (0x80) is produced only for inputs at or below
//! `-2 + 1/128`, so the range is asymmetric as the two's complement code is.

use crate::element::ElementFormat;

/// Round-to-nearest-even constant: adding and subtracting `1.5 * 2^23` rounds any f32 of
/// magnitude below `2^22` to an integer in the current (nearest-even) rounding mode.
const ROUND_TO_INTEGER: f32 = 12_582_912.0;

/// The MXINT8 element format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Int8;

impl Int8 {
    #[inline]
    fn encode(x: f32) -> u8 {
        let scaled = x * 64.0;
        let clamped = if scaled.is_nan() {
            0.0
        } else {
            scaled.clamp(-128.0, 127.0)
        };
        let rounded = (clamped + ROUND_TO_INTEGER) - ROUND_TO_INTEGER;
        rounded as i8 as u8
    }
}

impl ElementFormat for Int8 {
    const NAME: &'static str = "int8";
    const BITS: u32 = 8;
    const MAX: f32 = 127.0 / 64.0;
    const EMAX: i32 = 0;

    /// `(code as i8) / 64`, exact.
    #[inline]
    fn decode_to_f32(code: u8) -> f32 {
        code as i8 as f32 * (1.0 / 64.0)
    }

    /// Same as the saturating encoding: integers have no overflow codes.
    #[inline]
    fn encode_from_f32(x: f32) -> u8 {
        Self::encode(x)
    }

    #[inline]
    fn encode_from_f32_saturating(x: f32) -> u8 {
        Self::encode(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_half_to_even_in_units_of_one_64th() {
        assert_eq!(Int8::encode_from_f32(0.5 / 64.0), 0);
        assert_eq!(Int8::encode_from_f32(1.5 / 64.0), 2);
        assert_eq!(Int8::encode_from_f32(-2.5 / 64.0), (-2i8) as u8);
        assert_eq!(Int8::encode_from_f32(100.0), 127);
        assert_eq!(Int8::encode_from_f32(-100.0), 0x80);
        assert_eq!(Int8::encode_from_f32(f32::NAN), 0);
        assert_eq!(Int8::decode_to_f32(0x80), -2.0);
    }
}
