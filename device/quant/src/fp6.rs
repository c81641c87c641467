//! 6-bit floating-point formats of the OCP MX specification: E2M3 and E3M2.
//!
//! | format | bias | max | min subnormal |
//! | --- | --- | --- | --- |
//! | [`E2M3`] | 1 | 7.5 | 0.125 |
//! | [`E3M2`] | 3 | 28 | 0.0625 |
//!
//! Every code is finite (no Inf, no NaN), so encoding always saturates to `±MAX`; NaN
//! encodes to +0. Codes are packed 4 per 3 bytes ([`crate::pack`]).

use crate::element::{ElementFormat, minifloat_format};
use crate::minifloat::{Layout, Specials};
use crate::pack::fp6_code_in_words;

minifloat_format!(
    /// OCP FP6 E2M3 (`float6_e2m3fn`): bias 1, max 7.5, no Inf/NaN.
    E2M3,
    "fp6_e2m3",
    Layout { bits: 6, exp_bits: 2, man_bits: 3, bias: 1, specials: Specials::AllFinite }
);

minifloat_format!(
    /// OCP FP6 E3M2 (`float6_e3m2fn`): bias 3, max 28, no Inf/NaN.
    E3M2,
    "fp6_e3m2",
    Layout { bits: 6, exp_bits: 3, man_bits: 2, bias: 3, specials: Specials::AllFinite }
);

/// Decodes the 16 FP6 codes packed in three little-endian words.
#[inline]
pub fn decode_words<F: ElementFormat>(words: [u32; 3]) -> [f32; 16] {
    core::array::from_fn(|j| F::decode_to_f32(fp6_code_in_words(&words, j)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxima_and_emax() {
        assert_eq!((E2M3::MAX, E2M3::EMAX), (7.5, 2));
        assert_eq!((E3M2::MAX, E3M2::EMAX), (28.0, 4));
    }

    #[test]
    fn words_decode_in_stream_order() {
        let codes: [u8; 16] = core::array::from_fn(|i| i as u8);
        let values = decode_words::<E2M3>(crate::pack::pack_fp6_words(codes));
        for (i, v) in values.iter().enumerate() {
            assert_eq!(*v, i as f32 / 8.0);
        }
    }
}
