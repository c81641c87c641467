//! The cast kernels' reference: the output code for each input code.
//!
//! A cast writes the code of the output format nearest to the input's value (ties to even):
//! f32 to f16/bf16 overflows to infinity; casts to FP8 saturate (finite overflow and infinities
//! to `±max`). NaN payloads are unspecified for f16/bf16/f32 outputs; the FP8 NaN codes are
//! exact (S.1111.111 for E4M3FN, S.11111.10 for E5M2, 0x80 for FNUZ).

use super::format::{Format, Overflow};

/// The code a cast kernel writes for the input code `x` of format `from`, in format `to`.
pub fn cast(from: Format, to: Format, x: u32) -> u32 {
    let overflow = if to.bits() == 8 {
        Overflow::Saturate
    } else {
        Overflow::Special
    };
    to.encode(from.decode(x), overflow)
}

/// Whether an output code is right: the expected code, or any NaN of `to` where a NaN is
/// expected and `to` is f32, f16 or bf16 (whose NaN payloads are not specified).
pub fn cast_matches(to: Format, expected: u32, got: u32) -> bool {
    expected == got || (to.bits() > 8 && to.is_nan(expected) && to.is_nan(got))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::format::pow2;

    #[test]
    fn widening_is_exact_and_narrowing_rounds_to_even() {
        assert_eq!(
            cast(Format::F16, Format::F32, 0x3C01),
            (1.0f32 + 2f32.powi(-10)).to_bits()
        );
        assert_eq!(cast(Format::Bf16, Format::F32, 0xBF80), (-1.0f32).to_bits());
        let halfway = (1.0f32 + 2f32.powi(-11)).to_bits();
        assert_eq!(
            cast(Format::F32, Format::F16, halfway),
            0x3C00,
            "tie to even (down)"
        );
        let above = (1.0f32 + 3.0 * 2f32.powi(-11)).to_bits();
        assert_eq!(
            cast(Format::F32, Format::F16, above),
            0x3C02,
            "tie to even (up)"
        );
        assert_eq!(
            cast(Format::F32, Format::F16, 1e6f32.to_bits()),
            0x7C00,
            "overflow"
        );
        assert_eq!(
            cast(Format::F32, Format::Bf16, 0x3F80_8000),
            0x3F80,
            "tie to even"
        );
        assert_eq!(
            cast(Format::F32, Format::Bf16, 0x3F81_8000),
            0x3F82,
            "tie to even"
        );
        assert_eq!(cast(Format::F32, Format::Bf16, 0x3F80_8001), 0x3F81);
    }

    #[test]
    fn fp8_casts_saturate_and_keep_their_nan_codes() {
        let big = 1e9f32.to_bits();
        assert_eq!(cast(Format::F32, Format::E4m3fn, big), 0x7E);
        assert_eq!(
            cast(Format::F32, Format::E5m2, f32::NEG_INFINITY.to_bits()),
            0xFB
        );
        assert_eq!(cast(Format::F32, Format::E4m3fnuz, big), 0x7F);
        assert_eq!(cast(Format::F32, Format::E5m2fnuz, big), 0x7F);
        let negative_nan = (-f32::NAN).to_bits();
        assert_eq!(cast(Format::F32, Format::E4m3fn, negative_nan), 0xFF);
        assert_eq!(cast(Format::F32, Format::E5m2, negative_nan), 0xFE);
        assert_eq!(cast(Format::F32, Format::E4m3fnuz, negative_nan), 0x80);
        assert_eq!(cast(Format::F16, Format::E5m2fnuz, 0x7E00), 0x80);
        assert_eq!(
            cast(Format::F32, Format::E4m3fnuz, (-0.0f32).to_bits()),
            0x00
        );
        assert_eq!(cast(Format::F32, Format::E4m3fn, (-0.0f32).to_bits()), 0x80);
    }

    #[test]
    fn fp8_values_by_formula() {
        // E4M3FN: 1.mmm * 2^(e - 7); 3.5 = 1.75 * 2 -> e = 8, m = 0b110: 0x46.
        assert_eq!(cast(Format::F32, Format::E4m3fn, 3.5f32.to_bits()), 0x46);
        // E5M2: 0.25 = 1.0 * 2^-2 -> e = 13, m = 0: 0x34; 0.3125 = 1.25 * 2^-2 -> 0x35.
        assert_eq!(cast(Format::F32, Format::E5m2, 0.25f32.to_bits()), 0x34);
        assert_eq!(cast(Format::F32, Format::E5m2, 0.3125f32.to_bits()), 0x35);
        // E4M3FNUZ: bias 8; 0.5 = 1.0 * 2^-1 -> e = 7, m = 0: 0x38.
        assert_eq!(cast(Format::F32, Format::E4m3fnuz, 0.5f32.to_bits()), 0x38);
        // E5M2FNUZ subnormals: m * 2^-17; 3 * 2^-17 -> 0x03.
        let x = (3.0 * pow2(-17)) as f32;
        assert_eq!(cast(Format::F32, Format::E5m2fnuz, x.to_bits()), 0x03);
        // E4M3FN around 2^4 (exponent field 11): 16 = 0x58, 18 = 0x59; 17 is a tie (to even, 16),
        // 17.125 (bf16 0x4189) is nearer 18.
        assert_eq!(cast(Format::F32, Format::E4m3fn, 17f32.to_bits()), 0x58);
        assert_eq!(cast(Format::Bf16, Format::E4m3fn, 0x4189), 0x59);
    }

    #[test]
    fn nan_payloads_are_free_only_for_wide_outputs() {
        assert!(cast_matches(Format::F16, 0x7E00, 0xFE01));
        assert!(!cast_matches(Format::F16, 0x7E00, 0x7C00));
        assert!(!cast_matches(Format::E5m2, 0x7E, 0x7F));
    }
}
