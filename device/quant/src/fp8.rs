//! 8-bit floating-point formats: OCP E4M3 ("FN") and E5M2, and the FNUZ variants gfx942 uses.
//!
//! | format | bias | max | min subnormal | Inf | NaN | -0 |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | [`E4M3Fn`] | 7 | 448 | 2^-9 | none | S.1111.111 | yes |
//! | [`E5M2`] | 15 | 57344 | 2^-16 | S.11111.00 | S.11111.{01,10,11} | yes |
//! | [`E4M3Fnuz`] | 8 | 240 | 2^-10 | none | 0x80 only | none |
//! | [`E5M2Fnuz`] | 16 | 57344 | 2^-17 | none | 0x80 only | none |
//!
//! Non-saturating encoding sends overflow to Inf (E5M2) or NaN (the others), as the OCP
//! 8-bit specification and ml_dtypes do; the saturating variant clamps to `±MAX`.

use crate::element::{ElementFormat, minifloat_format};
use crate::minifloat::{Layout, Specials};

minifloat_format!(
    /// OCP FP8 E4M3 (`float8_e4m3fn`): no infinities, NaN = S.1111.111, max 448.
    E4M3Fn,
    "fp8_e4m3fn",
    Layout { bits: 8, exp_bits: 4, man_bits: 3, bias: 7, specials: Specials::NanAllOnes }
);

minifloat_format!(
    /// OCP FP8 E5M2 (`float8_e5m2`): IEEE 754 style infinities and NaNs, max 57344.
    E5M2,
    "fp8_e5m2",
    Layout { bits: 8, exp_bits: 5, man_bits: 2, bias: 15, specials: Specials::Ieee }
);

minifloat_format!(
    /// FP8 E4M3 FNUZ (`float8_e4m3fnuz`, gfx942): bias 8, one NaN (0x80), no -0, max 240.
    E4M3Fnuz,
    "fp8_e4m3fnuz",
    Layout { bits: 8, exp_bits: 4, man_bits: 3, bias: 8, specials: Specials::NanAtNegativeZero }
);

minifloat_format!(
    /// FP8 E5M2 FNUZ (`float8_e5m2fnuz`, gfx942): bias 16, one NaN (0x80), no -0, max 57344.
    E5M2Fnuz,
    "fp8_e5m2fnuz",
    Layout { bits: 8, exp_bits: 5, man_bits: 2, bias: 16, specials: Specials::NanAtNegativeZero }
);

/// Decodes the four FP8 codes of a little-endian word (byte `i` is element `i`).
#[inline]
pub fn decode_word<F: ElementFormat>(word: u32) -> [f32; 4] {
    let bytes = word.to_le_bytes();
    [
        F::decode_to_f32(bytes[0]),
        F::decode_to_f32(bytes[1]),
        F::decode_to_f32(bytes[2]),
        F::decode_to_f32(bytes[3]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxima_and_emax_follow_the_layouts() {
        assert_eq!(E4M3Fn::MAX, 448.0);
        assert_eq!(E5M2::MAX, 57344.0);
        assert_eq!(E4M3Fnuz::MAX, 240.0);
        assert_eq!(E5M2Fnuz::MAX, 57344.0);
        assert_eq!((E4M3Fn::EMAX, E5M2::EMAX), (8, 15));
        assert_eq!((E4M3Fnuz::EMAX, E5M2Fnuz::EMAX), (7, 15));
    }

    #[test]
    fn word_decode_reads_bytes_low_first() {
        let word = u32::from_le_bytes([0x38, 0xB8, 0x00, 0x7E]);
        assert_eq!(decode_word::<E4M3Fn>(word), [1.0, -1.0, 0.0, 448.0]);
    }
}
