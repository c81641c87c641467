//! A decoder of element codes built for throughput, for the quantized GEMV and the decoding GEMM
//! (which reads its formats' layouts at run time, [`FloatLayout`]): each code's
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
#[derive(Clone, Copy, PartialEq)]
pub enum Encoding {
    /// Sign, exponent and mantissa fields.
    Float(FloatLayout),
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

/// A code no format here has (codes have at most 8 bits): the "none" of [`FloatLayout`]'s
/// special codes.
const NO_CODE: u32 = 1 << 8;

/// A sign/exponent/mantissa format as the values its decoding reads. The GEMV's kernels build
/// it from constants, one format per kernel; the decoding GEMM builds it at run time from the
/// format its arguments name, so one decoder serves every format.
#[derive(Clone, Copy, PartialEq)]
pub struct FloatLayout {
    /// Bits per code.
    bits: u32,
    /// Mantissa bits.
    man_bits: u32,
    /// `2^(127 - bias)`: rebases the code's exponent field, placed in an f32's, to the
    /// format's bias.
    rebase: f32,
    /// The smallest magnitude (code without sign) that is NaN, [`NO_CODE`] when none is.
    nan_from: u32,
    /// Whether the code of -0 is NaN (FNUZ).
    negative_zero_is_nan: bool,
    /// The magnitude of infinity, [`NO_CODE`] when the format has none.
    infinity: u32,
}

impl FloatLayout {
    /// The layout of a format with `bits` bits per code, `man_bits` of mantissa, exponent
    /// bias `bias` and special codes `specials`.
    pub const fn new(bits: u32, man_bits: u32, bias: i32, specials: Specials) -> Self {
        let max_magnitude = (1 << (bits - 1)) - 1;
        let infinity = max_magnitude & !((1 << man_bits) - 1);
        let (nan_from, infinity) = match specials {
            Specials::None | Specials::NanAtNegativeZero => (NO_CODE, NO_CODE),
            Specials::NanAllOnes => (max_magnitude, NO_CODE),
            Specials::Ieee => (infinity + 1, infinity),
        };
        FloatLayout {
            bits,
            man_bits,
            rebase: pow2(127 - bias),
            nan_from,
            negative_zero_is_nan: matches!(specials, Specials::NanAtNegativeZero),
            infinity,
        }
    }

    /// Bits per code.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        self.bits
    }

    /// The value of `code` (its low [`FloatLayout::bits`] bits; higher bits must be zero).
    #[inline(always)]
    pub fn value(self, code: u32) -> f32 {
        let sign_bit = 1 << (self.bits - 1);
        let magnitude = code & (sign_bit - 1);
        let rebased = f32::from_bits(magnitude << (23 - self.man_bits)) * self.rebase;
        let unsigned = if magnitude == self.infinity {
            f32::INFINITY
        } else {
            rebased
        };
        let number = f32::from_bits(unsigned.to_bits() | ((code & sign_bit) << (32 - self.bits)));
        // `|` and `&`, not `||` and `&&`: the tests are cheap, and a short circuit left branches
        // in the GEMV.
        let nan = (magnitude >= self.nan_from) | (self.negative_zero_is_nan & (code == sign_bit));
        if nan { f32::NAN } else { number }
    }
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
        Encoding::Float(layout) => layout.value(code),
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
