//! The dense WMMA forms: the element formats of A/B and of C/D, and the K dimension.

use super::super::super::opcodes::Op;
use half::{bf16, f16};

/// The format of the A or B elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Input {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// OCP E4M3 (`fp8`).
    Fp8,
    /// OCP E5M2 (`bf8`).
    Bf8,
    /// 8-bit integer, signed or unsigned by the instruction's `neg_lo` bit.
    Iu8,
    /// 4-bit integer, signed or unsigned by the instruction's `neg_lo` bit.
    Iu4,
}

impl Input {
    /// Width of one element in bits.
    pub fn bits(self) -> usize {
        match self {
            Input::F16 | Input::Bf16 => 16,
            Input::Fp8 | Input::Bf8 | Input::Iu8 => 8,
            Input::Iu4 => 4,
        }
    }

    /// The value of float element `code` (exact in f64).
    pub fn float(self, code: u32) -> f64 {
        match self {
            Input::F16 => f16::from_bits(code as u16).to_f64(),
            Input::Bf16 => bf16::from_bits(code as u16).to_f64(),
            Input::Fp8 => e4m3(code as u8),
            Input::Bf8 => e5m2(code as u8),
            Input::Iu8 | Input::Iu4 => f64::from(code),
        }
    }

    /// The value of integer element `code`, sign-extended when `signed`.
    pub fn integer(self, code: u32, signed: bool) -> i64 {
        let bits = self.bits() as u32;
        if signed {
            i64::from((code << (32 - bits)) as i32 >> (32 - bits))
        } else {
            i64::from(code)
        }
    }
}

/// The value of OCP E4M3 code `v`: bias 7, no infinities, NaN when all exponent and mantissa bits
/// are set.
fn e4m3(v: u8) -> f64 {
    if v & 0x7f == 0x7f {
        return f64::NAN;
    }
    minifloat(v, 3, 7)
}

/// The value of OCP E5M2 code `v`: bias 15, IEEE infinities and NaNs.
fn e5m2(v: u8) -> f64 {
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    match v & 0x7f {
        0x7c => sign * f64::INFINITY,
        0x7d..=0x7f => f64::NAN,
        _ => minifloat(v, 2, 15),
    }
}

/// The finite value of an 8-bit float with `mant_bits` mantissa bits and exponent bias `bias`.
fn minifloat(v: u8, mant_bits: u32, bias: i32) -> f64 {
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(v & 0x7f) >> mant_bits;
    let mant = f64::from(v & ((1 << mant_bits) - 1));
    let scale = f64::from(1u32 << mant_bits);
    if exp == 0 {
        sign * mant / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + mant / scale) * 2f64.powi(exp - bias)
    }
}

/// The format of the C and D elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Output {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// 32-bit integer.
    I32,
}

impl Output {
    /// Width of one element in bits.
    pub fn bits(self) -> usize {
        match self {
            Output::F32 | Output::I32 => 32,
            Output::F16 | Output::Bf16 => 16,
        }
    }
}

/// One dense WMMA form: `D (16x16) = A (16xK) B (Kx16) + C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Form {
    /// Elements of A.
    pub a: Input,
    /// Elements of B.
    pub b: Input,
    /// Elements of C and D.
    pub out: Output,
    /// The K dimension.
    pub k: usize,
}

impl Form {
    /// The form of `op`, or `None` for the sparse (`v_swmmac_*`) forms, which are not modelled.
    pub fn of(op: Op) -> Option<Form> {
        use Input::*;
        let (a, b, out, k) = match op {
            Op::V_WMMA_F32_16X16X16_F16 => (F16, F16, Output::F32, 16),
            Op::V_WMMA_F32_16X16X16_BF16 => (Bf16, Bf16, Output::F32, 16),
            Op::V_WMMA_F16_16X16X16_F16 => (F16, F16, Output::F16, 16),
            Op::V_WMMA_BF16_16X16X16_BF16 => (Bf16, Bf16, Output::Bf16, 16),
            Op::V_WMMA_I32_16X16X16_IU8 => (Iu8, Iu8, Output::I32, 16),
            Op::V_WMMA_I32_16X16X16_IU4 => (Iu4, Iu4, Output::I32, 16),
            Op::V_WMMA_I32_16X16X32_IU4 => (Iu4, Iu4, Output::I32, 32),
            Op::V_WMMA_F32_16X16X16_FP8_FP8 => (Fp8, Fp8, Output::F32, 16),
            Op::V_WMMA_F32_16X16X16_FP8_BF8 => (Fp8, Bf8, Output::F32, 16),
            Op::V_WMMA_F32_16X16X16_BF8_FP8 => (Bf8, Fp8, Output::F32, 16),
            Op::V_WMMA_F32_16X16X16_BF8_BF8 => (Bf8, Bf8, Output::F32, 16),
            _ => return None,
        };
        Some(Form { a, b, out, k })
    }

    /// Whether A and B are integers (the `iu` forms).
    pub fn is_integer(self) -> bool {
        self.out == Output::I32
    }
}
