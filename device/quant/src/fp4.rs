//! The 4-bit floating-point format of the OCP MX specification: E2M1.
//!
//! Bias 1; the eight magnitudes are 0, 0.5, 1, 1.5, 2, 3, 4, 6. Every code is finite, so
//! encoding always saturates to `±6`; NaN encodes to +0. Two codes per byte, element `2i`
//! in the low nibble ([`crate::pack`]).

use crate::element::{ElementFormat, minifloat_format};
use crate::minifloat::{Layout, Specials};
use crate::pack::unpack_fp4_word;

minifloat_format!(
    /// OCP FP4 E2M1 (`float4_e2m1fn`): bias 1, max 6, no Inf/NaN.
    E2M1,
    "fp4_e2m1",
    Layout { bits: 4, exp_bits: 2, man_bits: 1, bias: 1, specials: Specials::AllFinite }
);

/// Decodes the 8 FP4 codes of a little-endian word (code `j` in bits `4j+3..4j`).
#[inline]
pub fn decode_word(word: u32) -> [f32; 8] {
    let codes = unpack_fp4_word(word);
    let mut out = [0.0f32; 8];
    for (value, &code) in out.iter_mut().zip(codes.iter()) {
        *value = E2M1::decode_to_f32(code);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_decode_lists_the_magnitudes() {
        assert_eq!(
            decode_word(0x7654_3210),
            [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
        );
        assert_eq!(decode_word(0xFEDC_BA98)[7], -6.0);
        assert_eq!((E2M1::MAX, E2M1::EMAX), (6.0, 2));
    }
}
