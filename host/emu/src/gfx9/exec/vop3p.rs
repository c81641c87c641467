//! Packed math (VOP3P): two 16-bit or two 32-bit lanes per register with op_sel/op_sel_hi and
//! neg_lo/neg_hi, the mixed-precision FMA, dot products, and accumulation register moves.

use super::super::decode::inline_f16;
use super::super::inst::{Instruction, OperandKind};
use super::super::opcodes::Op;
use super::Wave;
use super::float::fma_to_f16;
use super::valu::{Lanes, read_operand};
use crate::error::Fault;
use half::f16;

fn hf(x: u64) -> f32 {
    f16::from_bits(x as u16).to_f32()
}

fn hb(x: f32) -> u64 {
    u64::from(f16::from_f32(x).to_bits())
}

/// Executes a VOP3P instruction.
pub(crate) fn execute(w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let exec = w.exec();
    let mut s = [[0u64; 64]; 3];
    for (o, lanes) in i.src.iter().zip(s.iter_mut()) {
        if o.is_some() {
            read_operand(w, o, lanes)?;
        }
    }
    let m = i.mods;
    let sel = |k: usize, hi_result: bool, v: u64, width: u32| -> u64 {
        let bit = if hi_result { m.op_sel_hi } else { m.op_sel } >> k & 1;
        let x = if bit == 1 { v >> width } else { v };
        x & if width == 32 { 0xffff_ffff } else { 0xffff }
    };
    let neg16 = |k: usize, hi: bool, v: u64| -> u64 {
        let n = if hi { m.neg_hi } else { m.neg } >> k & 1;
        if n == 1 { v ^ 0x8000 } else { v }
    };
    let mut d: Lanes = [0; 64];
    use Op::*;
    match i.op {
        V_PK_MINIMUM3_F16 | V_PK_MAXIMUM3_F16 => {
            let pick = if i.op == V_PK_MINIMUM3_F16 {
                super::float::minimum32
            } else {
                super::float::maximum32
            };
            for l in 0..64 {
                let mut out = 0u64;
                for half in 0..2 {
                    let hi = half == 1;
                    let x = |k: usize| hf(neg16(k, hi, sel(k, hi, s[k][l], 16)));
                    out |= hb(pick(pick(x(0), x(1)), x(2))) << (16 * half);
                }
                d[l] = out;
            }
        }
        V_PK_FMA_F16 | V_PK_ADD_F16 | V_PK_MUL_F16 | V_PK_MIN_F16 | V_PK_MAX_F16 => {
            let ieee = w.ieee();
            for l in 0..64 {
                let mut out = 0u64;
                for half in 0..2 {
                    let hi = half == 1;
                    let x = |k: usize| hf(neg16(k, hi, sel(k, hi, s[k][l], 16)));
                    let r = match i.op {
                        V_PK_FMA_F16 => {
                            let x = |k: usize| f64::from(x(k));
                            u64::from(fma_to_f16(x(0), x(1), x(2)).to_bits())
                        }
                        V_PK_ADD_F16 => hb(x(0) + x(1)),
                        V_PK_MUL_F16 => hb(x(0) * x(1)),
                        V_PK_MIN_F16 => hb(super::float::min32(x(0), x(1), ieee)),
                        _ => hb(super::float::max32(x(0), x(1), ieee)),
                    };
                    out |= r << (16 * half);
                }
                d[l] = out;
            }
        }
        V_PK_ADD_U16 | V_PK_SUB_U16 | V_PK_ADD_I16 | V_PK_SUB_I16 | V_PK_MUL_LO_U16
        | V_PK_MAX_I16 | V_PK_MIN_I16 | V_PK_MAX_U16 | V_PK_MIN_U16 | V_PK_LSHLREV_B16
        | V_PK_LSHRREV_B16 | V_PK_ASHRREV_I16 | V_PK_MAD_U16 | V_PK_MAD_I16 => {
            for l in 0..64 {
                let mut out = 0u64;
                for half in 0..2 {
                    let hi = half == 1;
                    let x = |k: usize| sel(k, hi, s[k][l], 16) as u16;
                    let (a, b, c) = (x(0), x(1), x(2));
                    let r: u16 = match i.op {
                        V_PK_ADD_U16 => {
                            if m.clamp {
                                a.saturating_add(b)
                            } else {
                                a.wrapping_add(b)
                            }
                        }
                        V_PK_SUB_U16 => {
                            if m.clamp {
                                a.saturating_sub(b)
                            } else {
                                a.wrapping_sub(b)
                            }
                        }
                        V_PK_ADD_I16 => {
                            (if m.clamp {
                                (a as i16).saturating_add(b as i16)
                            } else {
                                (a as i16).wrapping_add(b as i16)
                            }) as u16
                        }
                        V_PK_SUB_I16 => {
                            (if m.clamp {
                                (a as i16).saturating_sub(b as i16)
                            } else {
                                (a as i16).wrapping_sub(b as i16)
                            }) as u16
                        }
                        V_PK_MUL_LO_U16 => a.wrapping_mul(b),
                        V_PK_MAX_I16 => (a as i16).max(b as i16) as u16,
                        V_PK_MIN_I16 => (a as i16).min(b as i16) as u16,
                        V_PK_MAX_U16 => a.max(b),
                        V_PK_MIN_U16 => a.min(b),
                        V_PK_LSHLREV_B16 => b << (a & 15),
                        V_PK_LSHRREV_B16 => b >> (a & 15),
                        V_PK_ASHRREV_I16 => ((b as i16) >> (a & 15)) as u16,
                        V_PK_MAD_U16 => a.wrapping_mul(b).wrapping_add(c),
                        _ => (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16,
                    };
                    out |= u64::from(r) << (16 * half);
                }
                d[l] = out;
            }
        }
        V_PK_FMA_F32 | V_PK_MUL_F32 | V_PK_ADD_F32 | V_PK_MOV_B32 => {
            for l in 0..64 {
                let mut out = 0u64;
                for half in 0..2 {
                    let hi = half == 1;
                    let x = |k: usize| {
                        let v = sel(k, hi, s[k][l], 32) as u32;
                        let n = if hi { m.neg_hi } else { m.neg } >> k & 1;
                        f32::from_bits(if n == 1 && i.op != V_PK_MOV_B32 {
                            v ^ 0x8000_0000
                        } else {
                            v
                        })
                    };
                    let r = match i.op {
                        V_PK_FMA_F32 => x(0).mul_add(x(1), x(2)),
                        V_PK_MUL_F32 => x(0) * x(1),
                        V_PK_ADD_F32 => x(0) + x(1),
                        // v_pk_mov_b32: the low result takes src0 (op_sel[0]), the high one src1 (op_sel[1]).
                        _ => {
                            let v = if hi {
                                s[1][l] >> (32 * u64::from(m.op_sel >> 1 & 1))
                            } else {
                                s[0][l] >> (32 * u64::from(m.op_sel & 1))
                            };
                            f32::from_bits(v as u32)
                        }
                    };
                    out |= u64::from(r.to_bits()) << (32 * half);
                }
                d[l] = out;
            }
        }
        V_FMA_MIX_F32 | V_FMA_MIXLO_F16 | V_FMA_MIXHI_F16 => {
            // An inline float constant in an f16 slot is its f16 encoding in the low half, not
            // the low half of its f32 encoding.
            for (k, o) in i.src.iter().enumerate() {
                if let OperandKind::Inline { code, .. } = o.kind
                    && (240..=248).contains(&code)
                    && m.op_sel_hi >> k & 1 == 1
                {
                    s[k].fill(u64::from(inline_f16(code)));
                }
            }
            for l in 0..64 {
                // op_sel_hi[k] says source k is f16 (op_sel[k] then picks its half); else f32.
                let x = |k: usize| -> f64 {
                    let v = s[k][l];
                    let mut f = if m.op_sel_hi >> k & 1 == 1 {
                        f64::from(hf(v >> (16 * u64::from(m.op_sel >> k & 1))))
                    } else {
                        f64::from(f32::from_bits(v as u32))
                    };
                    if m.neg_hi >> k & 1 == 1 {
                        f = f.abs();
                    }
                    if m.neg >> k & 1 == 1 {
                        f = -f;
                    }
                    f
                };
                let r = x(0).mul_add(x(1), x(2));
                let h = fma_to_f16(x(0), x(1), x(2));
                d[l] = match i.op {
                    V_FMA_MIX_F32 => u64::from((r as f32).to_bits()),
                    V_FMA_MIXLO_F16 => {
                        let old = w.vreg(&i.dst)?.0[w.vreg(&i.dst)?.1][l];
                        u64::from(old & 0xffff_0000) | u64::from(h.to_bits())
                    }
                    _ => {
                        let old = w.vreg(&i.dst)?.0[w.vreg(&i.dst)?.1][l];
                        u64::from(old & 0xffff) | u64::from(h.to_bits()) << 16
                    }
                };
            }
        }
        V_DOT2_F32_F16 => {
            for l in 0..64 {
                let x = |k: usize, hi: bool| f64::from(hf(neg16(k, hi, sel(k, hi, s[k][l], 16))));
                let r = x(0, false) * x(1, false)
                    + x(0, true) * x(1, true)
                    + f64::from(f32::from_bits(s[2][l] as u32));
                d[l] = u64::from((r as f32).to_bits());
            }
        }
        V_DOT2_F32_BF16 => {
            for l in 0..64 {
                let x = |k: usize, hi: bool| {
                    let v = neg16(k, hi, sel(k, hi, s[k][l], 16));
                    f32::from_bits((v as u32 & 0xffff) << 16)
                };
                let r = x(0, false) * x(1, false)
                    + x(0, true) * x(1, true)
                    + f32::from_bits(s[2][l] as u32);
                d[l] = u64::from(r.to_bits());
            }
        }
        V_DOT2_I32_I16 | V_DOT2_U32_U16 => {
            let signed = i.op == V_DOT2_I32_I16;
            for l in 0..64 {
                let x = |k: usize, hi: bool| {
                    let v = sel(k, hi, s[k][l], 16) as u16;
                    if signed {
                        i64::from(v as i16)
                    } else {
                        i64::from(v)
                    }
                };
                let r = x(0, false) * x(1, false)
                    + x(0, true) * x(1, true)
                    + i64::from(s[2][l] as u32 as i32);
                d[l] = r as u64 & 0xffff_ffff;
            }
        }
        V_DOT4_I32_I8 | V_DOT4_U32_U8 | V_DOT8_I32_I4 | V_DOT8_U32_U4 => {
            let signed = matches!(i.op, V_DOT4_I32_I8 | V_DOT8_I32_I4);
            let (n, bits) = if matches!(i.op, V_DOT4_I32_I8 | V_DOT4_U32_U8) {
                (4, 8)
            } else {
                (8, 4)
            };
            for l in 0..64 {
                let field = |v: u64, k: u32| {
                    let x = (v >> (k * bits)) & ((1 << bits) - 1);
                    if signed {
                        ((x << (64 - bits)) as i64) >> (64 - bits)
                    } else {
                        x as i64
                    }
                };
                let acc = if signed {
                    i64::from(s[2][l] as u32 as i32)
                } else {
                    i64::from(s[2][l] as u32)
                };
                let r = (0..n).fold(acc, |a, k| a + field(s[0][l], k) * field(s[1][l], k));
                d[l] = r as u64 & 0xffff_ffff;
            }
        }
        V_ACCVGPR_READ_B32 | V_ACCVGPR_WRITE_B32 => d = s[0],
        _ => return Err(Fault::Unsupported),
    }
    let dwords = i.dst.dwords.max(1);
    let (file, r) = w.vreg_mut(&i.dst)?;
    for l in 0..64 {
        if exec >> l & 1 == 1 {
            file[r][l] = d[l] as u32;
            if dwords >= 2 {
                file[r + 1][l] = (d[l] >> 32) as u32;
            }
        }
    }
    Ok(())
}
