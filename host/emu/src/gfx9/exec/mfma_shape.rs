//! The matrix instructions the emulator executes: each MFMA's block shape (M x N x K, number of
//! blocks), its source element formats and its accumulator type.

use super::super::inst::Fields;
use super::super::opcodes::Op;
use super::mfma_layout::{ResultLayout, SourceLayout};

/// Element format of an MFMA source matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Element {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// Signed 8-bit integer.
    I8,
    /// FP8 E4M3 (FNUZ on gfx942, OCP E4M3FN on gfx950).
    Fp8,
    /// BF8 E5M2 (FNUZ on gfx942, OCP on gfx950).
    Bf8,
    /// FP6 E2M3.
    Fp6,
    /// BF6 E3M2.
    Bf6,
    /// FP4 E2M1.
    Fp4,
}

impl Element {
    /// Width of one element in bits.
    pub fn bits(self) -> u32 {
        match self {
            Element::F64 => 64,
            Element::F32 => 32,
            Element::F16 | Element::Bf16 => 16,
            Element::I8 | Element::Fp8 | Element::Bf8 => 8,
            Element::Fp6 | Element::Bf6 => 6,
            Element::Fp4 => 4,
        }
    }

    /// The `f8f6f4` operand format selected by a CBSZ (A) or BLGP (B) field.
    fn f8f6f4(code: u8) -> Option<Element> {
        Some(match code {
            0 => Element::Fp8,
            1 => Element::Bf8,
            2 => Element::Fp6,
            3 => Element::Bf6,
            4 => Element::Fp4,
            _ => return None,
        })
    }
}

/// Type of the C and D matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accumulator {
    /// binary32 accumulators.
    F32,
    /// binary64 accumulators (register pairs).
    F64,
    /// 32-bit two's complement accumulators.
    I32,
}

/// One matrix instruction's geometry and types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Rows of A and D per block.
    pub m: u32,
    /// Columns of B and D per block.
    pub n: u32,
    /// Products summed per D element.
    pub k: u32,
    /// Independent blocks computed at once.
    pub blocks: u32,
    /// Element format of A.
    pub a: Element,
    /// Element format of B.
    pub b: Element,
    /// Type of C and D.
    pub acc: Accumulator,
    /// A `v_mfma[_scale]_f32_*_f8f6f4` instruction: CBSZ and BLGP are the operand formats.
    pub f8f6f4: bool,
}

impl Shape {
    /// The shape of `op`; the `f8f6f4` instructions take their operand formats from `fields`.
    /// `None` for instructions that are not executed (sparse SMFMAC, XF32).
    pub fn of(op: Op, fields: &Fields) -> Option<Shape> {
        use Accumulator as Acc;
        use Element::*;
        use Op::*;
        let (m, n, k, blocks, a, acc) = match op {
            V_MFMA_F32_32X32X1F32 | V_MFMA_F32_32X32X1_2B_F32 => (32, 32, 1, 2, F32, Acc::F32),
            V_MFMA_F32_16X16X1F32 | V_MFMA_F32_16X16X1_4B_F32 => (16, 16, 1, 4, F32, Acc::F32),
            V_MFMA_F32_4X4X1F32 | V_MFMA_F32_4X4X1_16B_F32 => (4, 4, 1, 16, F32, Acc::F32),
            V_MFMA_F32_32X32X2F32 | V_MFMA_F32_32X32X2_F32 => (32, 32, 2, 1, F32, Acc::F32),
            V_MFMA_F32_16X16X4F32 | V_MFMA_F32_16X16X4_F32 => (16, 16, 4, 1, F32, Acc::F32),
            V_MFMA_F32_32X32X4F16 | V_MFMA_F32_32X32X4_2B_F16 => (32, 32, 4, 2, F16, Acc::F32),
            V_MFMA_F32_16X16X4F16 | V_MFMA_F32_16X16X4_4B_F16 => (16, 16, 4, 4, F16, Acc::F32),
            V_MFMA_F32_4X4X4F16 | V_MFMA_F32_4X4X4_16B_F16 => (4, 4, 4, 16, F16, Acc::F32),
            V_MFMA_F32_32X32X8F16 | V_MFMA_F32_32X32X8_F16 => (32, 32, 8, 1, F16, Acc::F32),
            V_MFMA_F32_16X16X16F16 | V_MFMA_F32_16X16X16_F16 => (16, 16, 16, 1, F16, Acc::F32),
            V_MFMA_F32_16X16X32_F16 => (16, 16, 32, 1, F16, Acc::F32),
            V_MFMA_F32_32X32X16_F16 => (32, 32, 16, 1, F16, Acc::F32),
            V_MFMA_F32_32X32X2BF16 => (32, 32, 2, 2, Bf16, Acc::F32),
            V_MFMA_F32_16X16X2BF16 => (16, 16, 2, 4, Bf16, Acc::F32),
            V_MFMA_F32_4X4X2BF16 => (4, 4, 2, 16, Bf16, Acc::F32),
            V_MFMA_F32_32X32X4BF16 => (32, 32, 4, 1, Bf16, Acc::F32),
            V_MFMA_F32_16X16X8BF16 => (16, 16, 8, 1, Bf16, Acc::F32),
            V_MFMA_F32_32X32X4BF16_1K | V_MFMA_F32_32X32X4_2B_BF16 => {
                (32, 32, 4, 2, Bf16, Acc::F32)
            }
            V_MFMA_F32_16X16X4BF16_1K | V_MFMA_F32_16X16X4_4B_BF16 => {
                (16, 16, 4, 4, Bf16, Acc::F32)
            }
            V_MFMA_F32_4X4X4BF16_1K | V_MFMA_F32_4X4X4_16B_BF16 => (4, 4, 4, 16, Bf16, Acc::F32),
            V_MFMA_F32_32X32X8BF16_1K | V_MFMA_F32_32X32X8_BF16 => (32, 32, 8, 1, Bf16, Acc::F32),
            V_MFMA_F32_16X16X16BF16_1K | V_MFMA_F32_16X16X16_BF16 => {
                (16, 16, 16, 1, Bf16, Acc::F32)
            }
            V_MFMA_F32_16X16X32_BF16 => (16, 16, 32, 1, Bf16, Acc::F32),
            V_MFMA_F32_32X32X16_BF16 => (32, 32, 16, 1, Bf16, Acc::F32),
            V_MFMA_I32_32X32X4I8 | V_MFMA_I32_32X32X4_2B_I8 => (32, 32, 4, 2, I8, Acc::I32),
            V_MFMA_I32_16X16X4I8 | V_MFMA_I32_16X16X4_4B_I8 => (16, 16, 4, 4, I8, Acc::I32),
            V_MFMA_I32_4X4X4I8 | V_MFMA_I32_4X4X4_16B_I8 => (4, 4, 4, 16, I8, Acc::I32),
            V_MFMA_I32_32X32X8I8 => (32, 32, 8, 1, I8, Acc::I32),
            V_MFMA_I32_16X16X16I8 => (16, 16, 16, 1, I8, Acc::I32),
            V_MFMA_I32_32X32X16_I8 => (32, 32, 16, 1, I8, Acc::I32),
            V_MFMA_I32_16X16X32_I8 => (16, 16, 32, 1, I8, Acc::I32),
            V_MFMA_I32_32X32X32_I8 => (32, 32, 32, 1, I8, Acc::I32),
            V_MFMA_I32_16X16X64_I8 => (16, 16, 64, 1, I8, Acc::I32),
            V_MFMA_F64_16X16X4F64 | V_MFMA_F64_16X16X4_F64 => (16, 16, 4, 1, F64, Acc::F64),
            V_MFMA_F64_4X4X4F64 | V_MFMA_F64_4X4X4_4B_F64 => (4, 4, 4, 4, F64, Acc::F64),
            _ => return Self::eight_bit(op).or_else(|| Self::f8f6f4(op, fields)),
        };
        Some(Shape {
            m,
            n,
            k,
            blocks,
            a,
            b: a,
            acc,
            f8f6f4: false,
        })
    }

    /// The FP8/BF8 instructions of gfx942 and gfx950 (A and B formats in the name).
    fn eight_bit(op: Op) -> Option<Shape> {
        use Element::{Bf8, Fp8};
        use Op::*;
        let (m, k, a, b) = match op {
            V_MFMA_F32_16X16X32_FP8_FP8 => (16, 32, Fp8, Fp8),
            V_MFMA_F32_16X16X32_FP8_BF8 => (16, 32, Fp8, Bf8),
            V_MFMA_F32_16X16X32_BF8_FP8 => (16, 32, Bf8, Fp8),
            V_MFMA_F32_16X16X32_BF8_BF8 => (16, 32, Bf8, Bf8),
            V_MFMA_F32_32X32X16_FP8_FP8 => (32, 16, Fp8, Fp8),
            V_MFMA_F32_32X32X16_FP8_BF8 => (32, 16, Fp8, Bf8),
            V_MFMA_F32_32X32X16_BF8_FP8 => (32, 16, Bf8, Fp8),
            V_MFMA_F32_32X32X16_BF8_BF8 => (32, 16, Bf8, Bf8),
            _ => return None,
        };
        Some(Shape {
            m,
            n: m,
            k,
            blocks: 1,
            a,
            b,
            acc: Accumulator::F32,
            f8f6f4: false,
        })
    }

    /// gfx950's FP8/FP6/FP4 instructions, scaled or not.
    fn f8f6f4(op: Op, fields: &Fields) -> Option<Shape> {
        use Op::*;
        let (m, k) = match op {
            V_MFMA_F32_16X16X128_F8F6F4 | V_MFMA_SCALE_F32_16X16X128_F8F6F4 => (16, 128),
            V_MFMA_F32_32X32X64_F8F6F4 | V_MFMA_SCALE_F32_32X32X64_F8F6F4 => (32, 64),
            _ => return None,
        };
        Some(Shape {
            m,
            n: m,
            k,
            blocks: 1,
            a: Element::f8f6f4(fields.cbsz)?,
            b: Element::f8f6f4(fields.blgp)?,
            acc: Accumulator::F32,
            f8f6f4: true,
        })
    }

    /// Lane arrangement of A.
    pub fn a_layout(&self) -> SourceLayout {
        self.source_layout(self.m, self.a)
    }

    /// Lane arrangement of B.
    pub fn b_layout(&self) -> SourceLayout {
        self.source_layout(self.n, self.b)
    }

    fn source_layout(&self, outer: u32, element: Element) -> SourceLayout {
        SourceLayout {
            outer,
            k: self.k,
            blocks: self.blocks,
            chunked: self.f8f6f4 && element.bits() == 8,
        }
    }

    /// Lane arrangement of C and D.
    pub fn result_layout(&self) -> ResultLayout {
        ResultLayout {
            m: self.m,
            n: self.n,
            blocks: self.blocks,
            wide: self.acc == Accumulator::F64,
        }
    }
}
