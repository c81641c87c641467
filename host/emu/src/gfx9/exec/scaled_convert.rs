//! gfx950's scaled conversions between f32/f16/bf16 and the OCP microscaling element formats
//! (`v_cvt_scalef32_*`, round to nearest even).
//!
//! The scale operand is an f32 whose biased exponent `e` (bits 30:23) is the E8M0 scale: a
//! narrow-to-wide conversion multiplies the decoded element by 2^(e - 127), a wide-to-narrow one
//! divides by it before rounding (e = 255 gives NaN). Wide results overflow to infinity. Narrow
//! FP8/BF8 results follow `v_cvt_pk_fp8_f32`: out of range values become NaN (FP8) or infinity
//! (BF8), or the largest finite value with the clamp bit. FP6/BF6/FP4 have no infinity or NaN:
//! out-of-range values, infinities and NaN saturate to the largest magnitude.
//!
//! Element selection follows AMD's pseudocode: `op_sel[0]` picks the source word of the packed
//! FP8 sources, `op_sel[1:0]` the source byte of single FP8 and packed FP4 sources, `op_sel[3]`
//! the destination word (FP8 pairs, single f16 results) and `op_sel[3:2]` the destination byte
//! (FP4 pairs); the rest of such destinations is kept. The stochastic-rounding forms
//! (`v_cvt_scalef32_sr_*`) are not executed.

use super::super::inst::{Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use super::Wave;
use super::fp8::Fp8;
use super::minifloat::{Minifloat, e8m0};
use crate::error::Fault;
use half::{bf16, f16};

/// A 16- or 32-bit IEEE-style format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wide {
    F32,
    F16,
    Bf16,
}

impl Wide {
    fn bits(self) -> u32 {
        if self == Wide::F32 { 32 } else { 16 }
    }

    fn decode(self, raw: u32) -> f64 {
        match self {
            Wide::F32 => f64::from(f32::from_bits(raw)),
            Wide::F16 => f16::from_bits(raw as u16).to_f64(),
            Wide::Bf16 => bf16::from_bits(raw as u16).to_f64(),
        }
    }

    fn encode(self, x: f64) -> u32 {
        match self {
            Wide::F32 => (x as f32).to_bits(),
            Wide::F16 => u32::from(f16::from_f64(x).to_bits()),
            Wide::Bf16 => u32::from(bf16::from_f64(x).to_bits()),
        }
    }
}

/// A microscaling element format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Narrow {
    Fp8,
    Bf8,
    Fp6,
    Bf6,
    Fp4,
}

impl Narrow {
    fn bits(self) -> u32 {
        match self {
            Narrow::Fp8 | Narrow::Bf8 => 8,
            Narrow::Fp6 | Narrow::Bf6 => 6,
            Narrow::Fp4 => 4,
        }
    }

    fn decode(self, raw: u32) -> f64 {
        match self {
            Narrow::Fp8 => f64::from(Fp8::e4m3(false).decode(raw as u8)),
            Narrow::Bf8 => f64::from(Fp8::e5m2(false).decode(raw as u8)),
            Narrow::Fp6 => f64::from(Minifloat::FP6.decode(raw)),
            Narrow::Bf6 => f64::from(Minifloat::BF6.decode(raw)),
            Narrow::Fp4 => f64::from(Minifloat::FP4.decode(raw)),
        }
    }

    fn encode(self, x: f64, saturate: bool) -> u32 {
        match self {
            Narrow::Fp8 => u32::from(Fp8::e4m3(false).encode(x as f32, saturate)),
            Narrow::Bf8 => u32::from(Fp8::e5m2(false).encode(x as f32, saturate)),
            Narrow::Fp6 => Minifloat::FP6.encode(x),
            Narrow::Bf6 => Minifloat::BF6.encode(x),
            Narrow::Fp4 => Minifloat::FP4.encode(x),
        }
    }
}

/// Where the narrow elements of a conversion start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Select {
    /// At bit 0, every element.
    Whole,
    /// In the word (16 bits) `op_sel[0]` (sources) or `op_sel[3]` (destinations).
    Word,
    /// In the byte `op_sel[1:0]` (sources) or `op_sel[3:2]` (destinations).
    Byte,
}

/// One scaled conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conversion {
    /// `count` narrow elements of src0 to wide ones; the scale is src1. `half_result`: one 16-bit
    /// result written to the destination half `op_sel[3]`.
    Widen {
        from: Narrow,
        to: Wide,
        count: u32,
        select: Select,
        half_result: bool,
    },
    /// Wide elements to `count` narrow ones. `pair_sources`: two f32 sources (src0, src1), scale
    /// src2; `interleaved`: src0 and src1 hold 16 elements each, taken alternately, scale src2;
    /// otherwise src0 holds all elements packed, scale src1.
    Narrow {
        from: Wide,
        to: Narrow,
        count: u32,
        select: Select,
        pair_sources: bool,
        interleaved: bool,
    },
}

/// Whether `op` is a deterministic scaled conversion this module executes.
pub(crate) fn handles(op: Op) -> bool {
    conversion(op).is_some()
}

fn conversion(op: Op) -> Option<Conversion> {
    use Narrow::*;
    use Op::*;
    let widen = |from, to, count, select| Conversion::Widen {
        from,
        to,
        count,
        select,
        half_result: false,
    };
    let narrow = |from, to, count, select| Conversion::Narrow {
        from,
        to,
        count,
        select,
        pair_sources: false,
        interleaved: false,
    };
    let pair = |to, select| Conversion::Narrow {
        from: Wide::F32,
        to,
        count: 2,
        select,
        pair_sources: true,
        interleaved: false,
    };
    Some(match op {
        V_CVT_SCALEF32_PK_F32_FP8 => widen(Fp8, Wide::F32, 2, Select::Word),
        V_CVT_SCALEF32_PK_F32_BF8 => widen(Bf8, Wide::F32, 2, Select::Word),
        V_CVT_SCALEF32_F32_FP8 => widen(Fp8, Wide::F32, 1, Select::Byte),
        V_CVT_SCALEF32_F32_BF8 => widen(Bf8, Wide::F32, 1, Select::Byte),
        V_CVT_SCALEF32_PK_F32_FP4 => widen(Fp4, Wide::F32, 2, Select::Byte),
        V_CVT_SCALEF32_PK_F16_FP8 => widen(Fp8, Wide::F16, 2, Select::Word),
        V_CVT_SCALEF32_PK_F16_BF8 => widen(Bf8, Wide::F16, 2, Select::Word),
        V_CVT_SCALEF32_PK_BF16_FP8 => widen(Fp8, Wide::Bf16, 2, Select::Word),
        V_CVT_SCALEF32_PK_BF16_BF8 => widen(Bf8, Wide::Bf16, 2, Select::Word),
        V_CVT_SCALEF32_PK_F16_FP4 => widen(Fp4, Wide::F16, 2, Select::Byte),
        V_CVT_SCALEF32_PK_BF16_FP4 => widen(Fp4, Wide::Bf16, 2, Select::Byte),
        V_CVT_SCALEF32_F16_FP8 | V_CVT_SCALEF32_F16_BF8 => Conversion::Widen {
            from: if op == V_CVT_SCALEF32_F16_FP8 {
                Fp8
            } else {
                Bf8
            },
            to: Wide::F16,
            count: 1,
            select: Select::Byte,
            half_result: true,
        },
        V_CVT_SCALEF32_PK32_F32_FP6 => widen(Fp6, Wide::F32, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_F32_BF6 => widen(Bf6, Wide::F32, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_F16_FP6 => widen(Fp6, Wide::F16, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_F16_BF6 => widen(Bf6, Wide::F16, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_BF16_FP6 => widen(Fp6, Wide::Bf16, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_BF16_BF6 => widen(Bf6, Wide::Bf16, 32, Select::Whole),
        V_CVT_SCALEF32_PK_FP8_F32 => pair(Fp8, Select::Word),
        V_CVT_SCALEF32_PK_BF8_F32 => pair(Bf8, Select::Word),
        V_CVT_SCALEF32_PK_FP4_F32 => pair(Fp4, Select::Byte),
        V_CVT_SCALEF32_PK_FP8_F16 => narrow(Wide::F16, Fp8, 2, Select::Word),
        V_CVT_SCALEF32_PK_BF8_F16 => narrow(Wide::F16, Bf8, 2, Select::Word),
        V_CVT_SCALEF32_PK_FP8_BF16 => narrow(Wide::Bf16, Fp8, 2, Select::Word),
        V_CVT_SCALEF32_PK_BF8_BF16 => narrow(Wide::Bf16, Bf8, 2, Select::Word),
        V_CVT_SCALEF32_PK_FP4_F16 => narrow(Wide::F16, Fp4, 2, Select::Byte),
        V_CVT_SCALEF32_PK_FP4_BF16 => narrow(Wide::Bf16, Fp4, 2, Select::Byte),
        V_CVT_SCALEF32_PK32_FP6_F16 => narrow(Wide::F16, Fp6, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_FP6_BF16 => narrow(Wide::Bf16, Fp6, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_BF6_F16 => narrow(Wide::F16, Bf6, 32, Select::Whole),
        V_CVT_SCALEF32_PK32_BF6_BF16 => narrow(Wide::Bf16, Bf6, 32, Select::Whole),
        V_CVT_SCALEF32_2XPK16_FP6_F32 | V_CVT_SCALEF32_2XPK16_BF6_F32 => Conversion::Narrow {
            from: Wide::F32,
            to: if op == V_CVT_SCALEF32_2XPK16_FP6_F32 {
                Fp6
            } else {
                Bf6
            },
            count: 32,
            select: Select::Whole,
            pair_sources: false,
            interleaved: true,
        },
        _ => return None,
    })
}

/// `count` registers of a vector operand, or a scalar or constant operand repeated in every lane.
fn registers(w: &Wave, o: &Operand, count: usize) -> Result<Vec<[u32; 64]>, Fault> {
    match o.kind {
        OperandKind::Vgpr(_) | OperandKind::Agpr(_) => {
            let sized = Operand {
                dwords: count as u8,
                ..*o
            };
            let (file, first) = w.vreg(&sized)?;
            Ok(file[first..first + count].to_vec())
        }
        _ => Ok(vec![[w.scalar(o)? as u32; 64]; count]),
    }
}

/// Bits `[bit, bit + width)` of a lane's registers read as one little-endian bit string.
fn field(regs: &[[u32; 64]], lane: usize, bit: u32, width: u32) -> u32 {
    let at = (bit / 32) as usize;
    let lo = u64::from(regs[at][lane]);
    let hi = regs.get(at + 1).map_or(0, |r| u64::from(r[lane]));
    ((lo | hi << 32) >> (bit % 32)) as u32 & ((1u64 << width) - 1) as u32
}

/// Writes `width` bits of `value` at `bit` of a lane's registers.
fn put(regs: &mut [[u32; 64]], lane: usize, bit: u32, width: u32, value: u32) {
    let mask = ((1u64 << width) - 1) << (bit % 32);
    let v = u64::from(value) << (bit % 32);
    let at = (bit / 32) as usize;
    regs[at][lane] = (regs[at][lane] & !(mask as u32)) | v as u32;
    if mask >> 32 != 0 {
        regs[at + 1][lane] = (regs[at + 1][lane] & !((mask >> 32) as u32)) | (v >> 32) as u32;
    }
}

/// The E8M0 factor of a scale operand value (its f32 biased exponent).
fn scale_factor(raw: u32) -> f64 {
    e8m0((raw >> 23) as u8)
}

/// Executes the scaled conversion `i` on the lanes of EXEC.
pub(crate) fn execute(w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let conversion = conversion(i.op).ok_or(Fault::Unsupported)?;
    let m = i.mods;
    if m.abs != 0 || m.neg != 0 || m.omod != 0 {
        return Err(Fault::Unsupported);
    }
    let op_sel = u32::from(m.op_sel);
    let exec = w.exec();
    match conversion {
        Conversion::Widen {
            from,
            to,
            count,
            select,
            half_result,
        } => {
            let src_bits = (count * from.bits()).div_ceil(32).max(1) as usize;
            let src = registers(w, &i.src[0], src_bits)?;
            let scale = registers(w, &i.src[1], 1)?;
            let offset = match select {
                Select::Whole => 0,
                Select::Word => 16 * (op_sel & 1),
                Select::Byte => 8 * (op_sel & 3),
            };
            let dst_dwords = (count * to.bits()).div_ceil(32) as usize;
            let mut dst = registers(w, &i.dst, dst_dwords)?;
            for lane in (0..64).filter(|l| exec >> l & 1 == 1) {
                let factor = scale_factor(scale[0][lane]);
                for k in 0..count {
                    let code = field(&src, lane, offset + k * from.bits(), from.bits());
                    let value = to.encode(from.decode(code) * factor);
                    let at = if half_result {
                        16 * (op_sel >> 3 & 1)
                    } else {
                        k * to.bits()
                    };
                    put(&mut dst, lane, at, to.bits(), value);
                }
            }
            store(w, &i.dst, &dst)
        }
        Conversion::Narrow {
            from,
            to,
            count,
            select,
            pair_sources,
            interleaved,
        } => {
            let per_source = if pair_sources || interleaved {
                count / 2
            } else {
                count
            };
            let src_dwords = (per_source * from.bits()).div_ceil(32) as usize;
            let a = registers(w, &i.src[0], src_dwords)?;
            let (b, scale) = if pair_sources || interleaved {
                (
                    registers(w, &i.src[1], src_dwords)?,
                    registers(w, &i.src[2], 1)?,
                )
            } else {
                (Vec::new(), registers(w, &i.src[1], 1)?)
            };
            let offset = match select {
                Select::Whole => 0,
                Select::Word => 16 * (op_sel >> 3 & 1),
                Select::Byte => 8 * (op_sel >> 2 & 3),
            };
            let dst_dwords = (count * to.bits()).div_ceil(32) as usize;
            let mut dst = registers(w, &i.dst, dst_dwords)?;
            for lane in (0..64).filter(|l| exec >> l & 1 == 1) {
                let factor = scale_factor(scale[0][lane]);
                for k in 0..count {
                    let raw = if pair_sources || interleaved {
                        let source = if k % 2 == 0 { &a } else { &b };
                        field(source, lane, k / 2 * from.bits(), from.bits())
                    } else {
                        field(&a, lane, k * from.bits(), from.bits())
                    };
                    let code = to.encode(from.decode(raw) / factor, m.clamp);
                    put(&mut dst, lane, offset + k * to.bits(), to.bits(), code);
                }
            }
            store(w, &i.dst, &dst)
        }
    }
}

/// Writes back destination registers (lanes outside EXEC keep their values, as read).
fn store(w: &mut Wave, o: &Operand, regs: &[[u32; 64]]) -> Result<(), Fault> {
    let sized = Operand {
        dwords: regs.len() as u8,
        ..*o
    };
    let (file, first) = w.vreg_mut(&sized)?;
    file[first..first + regs.len()].copy_from_slice(regs);
    Ok(())
}
