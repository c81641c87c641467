//! A decoder of element codes built for throughput, for the quantized GEMV: each code's
//! magnitude bits are placed in an f32's exponent and mantissa fields and the result multiplied
//! by `2^(127 - bias)`, which rebases the exponent and turns a zero exponent field into the
//! format's subnormals through f32 subnormal arithmetic (Iron's kernels keep f32 subnormals);
//! the sign bit is inserted afterwards and special codes (NaN, infinity) are selected in. About
//! six instructions per element, against about twelve for `iron-quant`'s field-by-field decode
//! that the dequantization kernels use; the results are the same values (every code's value is
//! exact in f32), which the GEMV's tests check against the oracle for every code.

use crate::decode::{UNIT, UnitCodes, UnitElement};
use iron_quant::pack::fp6_code_in_words;

/// How an element format encodes its values, as the fast decoder needs it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Sign, exponent and mantissa fields.
    Float {
        /// Mantissa bits.
        man_bits: u32,
        /// Exponent bias.
        bias: i32,
        /// The special codes.
        specials: Specials,
    },
    /// A two's complement byte times `2^-6` (MXINT8).
    Int8,
}

/// Which codes of a sign/exponent/mantissa format are not numbers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Specials {
    /// Every code is a number (FP4, FP6).
    None,
    /// S.1111.111 is NaN (OCP E4M3).
    NanAllOnes,
    /// The all-ones exponent holds infinities (mantissa 0) and NaNs (OCP E5M2).
    Ieee,
    /// The code of -0 is the only NaN (FNUZ).
    NanAtNegativeZero,
}

/// `2^k` for `-126 <= k <= 127`.
#[inline(always)]
const fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// The value of `code` (its low `E::BITS` bits) in format `E`.
#[inline(always)]
fn element<E: UnitElement>(code: u32) -> f32 {
    match E::ENCODING {
        Encoding::Int8 => f32::from(code as u8 as i8) * (1.0 / 64.0),
        Encoding::Float {
            man_bits,
            bias,
            specials,
        } => {
            let sign_bit = 1 << (E::BITS - 1);
            let magnitude = code & (sign_bit - 1);
            let rebased = f32::from_bits(magnitude << (23 - man_bits)) * pow2(127 - bias);
            let sign = (code & sign_bit) << (32 - E::BITS);
            let number = f32::from_bits(rebased.to_bits() | sign);
            let exponent_all_ones = magnitude >> man_bits == (sign_bit - 1) >> man_bits;
            match specials {
                Specials::None => number,
                Specials::NanAllOnes if magnitude == sign_bit - 1 => f32::NAN,
                Specials::Ieee if exponent_all_ones => {
                    let infinity = f32::INFINITY.to_bits() | sign;
                    if magnitude == (sign_bit - 1) & !((1 << man_bits) - 1) {
                        f32::from_bits(infinity)
                    } else {
                        f32::NAN
                    }
                }
                Specials::NanAtNegativeZero if code == sign_bit => f32::NAN,
                _ => number,
            }
        }
    }
}

/// The 16 element values of a unit of format `E` (unscaled).
#[inline(always)]
pub fn decode_fast<E: UnitElement>(codes: UnitCodes) -> [f32; UNIT] {
    let w = codes.words();
    core::array::from_fn(|j| {
        let code = match E::BITS {
            6 => u32::from(fp6_code_in_words(&[w[0], w[1], w[2]], j)),
            bits => {
                let bit = j as u32 * bits;
                (w[(bit / 32) as usize] >> (bit % 32)) & ((1 << bits) - 1)
            }
        };
        element::<E>(code)
    })
}
