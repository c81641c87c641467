//! OCP Microscaling (MX) v1.0 block formats: 32 elements sharing one E8M0 scale.
//!
//! Scale choice (the conversion algorithm of the OCP MX v1.0 specification):
//! `shared_exp = floor(log2(max|x|)) - emax_elem`, clamped to the E8M0 range
//! `-127..=127`, and `X = 2^shared_exp`. Each element is `quantize(x / X)`, rounding to
//! nearest even and saturating to `±MAX` of the element format (the specification's
//! choice for values above the element's largest normal). With this scale `max|x| / X`
//! lies in `[2^emax, 2^(emax+1))`, so the largest elements of a block may saturate (e.g.
//! FP4: 7.9 becomes 6).
//!
//! Choices the specification leaves open, as implemented here:
//! - A block containing NaN or ±Inf gets the NaN scale (0xFF) and all-zero element codes:
//!   the whole block decodes to NaN.
//! - A block of zeros (or of magnitudes below `2^-126`, where `floor(log2)` clamps) gets
//!   scale code 0 (`2^-127`).
//! - Dequantization is `element * 2^shared_exp` in f32 (exact unless it leaves the f32
//!   range).

use core::marker::PhantomData;

use crate::block::{BlockFormat, max_magnitude_bits};
use crate::e8m0::E8M0;
use crate::element::ElementFormat;
use crate::pack::pack_codes;
use crate::{E2M1, E2M3, E3M2, E4M3Fn, E5M2, Int8};

/// Elements per MX block.
pub const MX_BLOCK_LEN: usize = 32;

/// The element formats the MX specification allows.
pub trait MxElement: ElementFormat {
    /// Name of the MX block format over this element (e.g. `"mxfp4"`).
    const MX_NAME: &'static str;
}

impl MxElement for E4M3Fn {
    const MX_NAME: &'static str = "mxfp8_e4m3";
}
impl MxElement for E5M2 {
    const MX_NAME: &'static str = "mxfp8_e5m2";
}
impl MxElement for E2M3 {
    const MX_NAME: &'static str = "mxfp6_e2m3";
}
impl MxElement for E3M2 {
    const MX_NAME: &'static str = "mxfp6_e3m2";
}
impl MxElement for E2M1 {
    const MX_NAME: &'static str = "mxfp4";
}
impl MxElement for Int8 {
    const MX_NAME: &'static str = "mxint8";
}

/// The MX block format over element format `E`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mx<E>(PhantomData<E>);

/// MXFP8 with E4M3 elements.
pub type MxFp8E4M3 = Mx<E4M3Fn>;
/// MXFP8 with E5M2 elements.
pub type MxFp8E5M2 = Mx<E5M2>;
/// MXFP6 with E2M3 elements.
pub type MxFp6E2M3 = Mx<E2M3>;
/// MXFP6 with E3M2 elements.
pub type MxFp6E3M2 = Mx<E3M2>;
/// MXFP4 (E2M1 elements).
pub type MxFp4 = Mx<E2M1>;
/// MXINT8 (INT8 elements with implicit scale 2^-6).
pub type MxInt8 = Mx<Int8>;

/// The E8M0 scale code for a block whose largest magnitude has f32 bits `amax_bits`
/// (finite): `floor(log2(amax)) - emax`, clamped to `-127..=127`.
#[inline]
pub fn mx_scale_code<E: ElementFormat>(amax_bits: u32) -> u8 {
    // floor(log2(amax)) + 127 is the f32 exponent field for normal amax; subnormal and
    // zero amax clamp to the smallest scale anyway, since emax >= 0.
    let biased = (amax_bits >> 23) as i32 - E::EMAX;
    if biased < 0 { 0 } else { biased as u8 }
}

/// `2^k` for `-149 <= k <= 127` (f32 subnormals included), built from bits.
#[inline]
const fn pow2_with_subnormals(k: i32) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1 << (k + 149))
    }
}

impl<E: MxElement> BlockFormat for Mx<E> {
    type Element = E;
    const NAME: &'static str = E::MX_NAME;
    const BLOCK_LEN: usize = MX_BLOCK_LEN;
    const USES_TENSOR_SCALE: bool = false;

    #[inline]
    fn scale_to_f32(scale: u8) -> f32 {
        E8M0::decode_to_f32(scale)
    }

    #[inline]
    fn tensor_scale_for_amax(_amax: f32) -> f32 {
        1.0
    }

    #[inline]
    fn encode_block(values: &[f32], _tensor_scale: f32, packed: &mut [u8]) -> u8 {
        let amax_bits = max_magnitude_bits(values);
        let mut codes = [0u8; MX_BLOCK_LEN];
        let scale = if amax_bits >= 0x7F80_0000 {
            E8M0::NAN
        } else {
            let scale = mx_scale_code::<E>(amax_bits);
            let inverse = pow2_with_subnormals(-E8M0::to_exponent(scale));
            for (code, &x) in codes.iter_mut().zip(values) {
                *code = E::encode_from_f32_saturating(x * inverse);
            }
            scale
        };
        pack_codes(E::BITS, &codes[..values.len().min(MX_BLOCK_LEN)], packed);
        scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_floor_log2_amax_minus_emax() {
        // amax 7.9: floor(log2) = 2; FP4 emax 2 -> shared_exp 0 -> code 127.
        assert_eq!(mx_scale_code::<E2M1>(7.9f32.to_bits()), 127);
        // amax 1.0: E4M3 emax 8 -> shared_exp -8.
        assert_eq!(mx_scale_code::<E4M3Fn>(1.0f32.to_bits()), 127 - 8);
        assert_eq!(mx_scale_code::<E2M1>(0), 0);
        assert_eq!(mx_scale_code::<Int8>(f32::MAX.to_bits()), 254);
    }

    #[test]
    fn largest_elements_saturate() {
        let mut values = [0.0f32; 32];
        values[0] = 7.9;
        values[1] = -3.0;
        let mut packed = [0u8; 16];
        let scale = MxFp4::encode_block(&values, 1.0, &mut packed);
        assert_eq!(scale, 127);
        assert_eq!(packed[0], 0xD7); // -3 (0xD) high nibble, 6 (0x7) low nibble
    }

    #[test]
    fn non_finite_block_decodes_to_nan() {
        let mut values = [1.0f32; 32];
        values[5] = f32::INFINITY;
        let mut packed = [0xAAu8; 32];
        let scale = MxFp8E4M3::encode_block(&values, 1.0, &mut packed);
        assert_eq!(scale, E8M0::NAN);
        assert!(packed.iter().all(|&b| b == 0));
        assert!(MxFp8E4M3::decode_element(&packed, scale, 1.0, 3).is_nan());
    }

    #[test]
    fn names() {
        assert_eq!(MxFp4::NAME, "mxfp4");
        assert_eq!(MxInt8::NAME, "mxint8");
        assert_eq!(MxFp6E3M2::NAME, "mxfp6_e3m2");
    }
}
