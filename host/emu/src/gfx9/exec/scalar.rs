//! Scalar ALU (SOP1, SOP2, SOPK, SOPC), program control (SOPP) and scalar memory (SMEM).

use super::super::decode::M0;
use super::super::inst::{Format, Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use super::{Ctx, Flow, Wave};
use crate::counters::InstructionClass;
use crate::error::Fault;

/// Executes a SOP1/SOP2/SOPK/SOPC/SOPP instruction.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    match i.format {
        Format::Sopp => sopp(ctx, w, i),
        Format::Sopk => {
            ctx.count(InstructionClass::Salu);
            sopk(w, i)
        }
        _ => {
            ctx.count(InstructionClass::Salu);
            salu(w, i)
        }
    }
}

fn branch_target(w: &Wave, i: &Instruction) -> u64 {
    let off = i64::from(i.fields.imm as u32 as u16 as i16) * 4;
    (w.pc + 4).wrapping_add(off as u64)
}

fn sopp(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    let take = |c: bool| {
        if c {
            Flow::Jump(branch_target(w, i))
        } else {
            Flow::Next
        }
    };
    let flow = match i.op {
        Op::S_BRANCH => Flow::Jump(branch_target(w, i)),
        Op::S_CBRANCH_SCC0 => take(!w.scc),
        Op::S_CBRANCH_SCC1 => take(w.scc),
        Op::S_CBRANCH_VCCZ => take(w.vcc() == 0),
        Op::S_CBRANCH_VCCNZ => take(w.vcc() != 0),
        Op::S_CBRANCH_EXECZ => take(w.exec() == 0),
        Op::S_CBRANCH_EXECNZ => take(w.exec() != 0),
        Op::S_ENDPGM | Op::S_ENDPGM_SAVED => Flow::End,
        Op::S_BARRIER => {
            ctx.count(InstructionClass::Barrier);
            return Ok(Flow::Barrier);
        }
        Op::S_WAITCNT => {
            ctx.count(InstructionClass::Waitcnt);
            return Ok(Flow::Next);
        }
        Op::S_TRAP => return Err(Fault::Trap(i.fields.imm as u16 & 0xff)),
        Op::S_NOP
        | Op::S_SLEEP
        | Op::S_SETPRIO
        | Op::S_ICACHE_INV
        | Op::S_INCPERFLEVEL
        | Op::S_DECPERFLEVEL
        | Op::S_TTRACEDATA
        | Op::S_SETKILL
        | Op::S_WAKEUP
        | Op::S_SENDMSG => Flow::Next,
        Op::S_SETHALT if i.fields.imm & 1 == 1 => return Err(Fault::Trap(0)),
        Op::S_SETHALT => Flow::Next,
        Op::S_SET_GPR_IDX_OFF => {
            w.mode &= !super::wave::MODE_GPR_IDX_EN;
            Flow::Next
        }
        Op::S_SET_GPR_IDX_MODE => {
            let m0 = &mut w.sgpr[usize::from(M0)];
            *m0 = (*m0 & !0xf000) | (i.fields.imm as u32 & 0xf) << 12;
            Flow::Next
        }
        _ => return Err(Fault::Unsupported),
    };
    ctx.count(
        if matches!(flow, Flow::Jump(_)) || i.op.name().starts_with("s_cbranch") {
            InstructionClass::Branch
        } else {
            InstructionClass::Salu
        },
    );
    Ok(flow)
}

/// Executes a SOPK instruction (uncounted).
pub(crate) fn sopk(w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    let imm = i.fields.imm as u32 as u16;
    let simm = i64::from(imm as i16);
    let d = &i.dst;
    let cur = || w.scalar(d);
    match i.op {
        Op::S_MOVK_I32 => w.write_scalar(d, simm as u64 & 0xffff_ffff)?,
        Op::S_CMOVK_I32 => {
            if w.scc {
                w.write_scalar(d, simm as u64 & 0xffff_ffff)?
            }
        }
        Op::S_CMPK_EQ_I32
        | Op::S_CMPK_LG_I32
        | Op::S_CMPK_GT_I32
        | Op::S_CMPK_GE_I32
        | Op::S_CMPK_LT_I32
        | Op::S_CMPK_LE_I32 => {
            let a = i64::from(cur()? as u32 as i32);
            w.scc = compare(i.op, a.cmp(&simm));
        }
        Op::S_CMPK_EQ_U32
        | Op::S_CMPK_LG_U32
        | Op::S_CMPK_GT_U32
        | Op::S_CMPK_GE_U32
        | Op::S_CMPK_LT_U32
        | Op::S_CMPK_LE_U32 => {
            let a = cur()? as u32;
            w.scc = compare(i.op, a.cmp(&u32::from(imm)));
        }
        Op::S_ADDK_I32 => {
            let a = cur()? as u32 as i32;
            let (r, o) = a.overflowing_add(simm as i32);
            w.scc = o;
            w.write_scalar(d, u64::from(r as u32))?;
        }
        Op::S_MULK_I32 => {
            let a = cur()? as u32 as i32;
            w.write_scalar(d, u64::from(a.wrapping_mul(simm as i32) as u32))?;
        }
        Op::S_GETREG_B32 => {
            let v = getreg(w, imm);
            w.write_scalar(d, u64::from(v))?;
        }
        Op::S_SETREG_B32 => {
            let v = cur()? as u32;
            setreg(w, imm, v)?;
        }
        Op::S_SETREG_IMM32_B32 => {
            let v = w.scalar(&i.src[0])? as u32;
            setreg(w, imm, v)?;
        }
        Op::S_CALL_B64 => {
            let ret = w.pc + 4;
            w.write_scalar(&Operand { dwords: 2, ..*d }, ret)?;
            return Ok(Flow::Jump(
                ret.wrapping_add((i64::from(imm as i16) * 4) as u64),
            ));
        }
        _ => return Err(Fault::Unsupported),
    }
    Ok(Flow::Next)
}

/// Hardware register fields: id (5:0), offset (10:6), size - 1 (15:11).
fn hwreg_field(imm: u16) -> (u16, u32, u32) {
    (
        imm & 0x3f,
        u32::from(imm >> 6 & 0x1f),
        u32::from(imm >> 11 & 0x1f) + 1,
    )
}

fn getreg(w: &Wave, imm: u16) -> u32 {
    let (id, offset, size) = hwreg_field(imm);
    let value = match id {
        1 => w.mode,
        // SH_MEM_BASES: private aperture base (15:0), shared aperture base (31:16), each the
        // high 16 bits of the aperture's 64-bit address.
        15 => super::PRIVATE_APERTURE_HI >> 16 | (super::SHARED_APERTURE_HI >> 16) << 16,
        _ => 0,
    };
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    value >> offset & mask
}

fn setreg(w: &mut Wave, imm: u16, v: u32) -> Result<(), Fault> {
    let (id, offset, size) = hwreg_field(imm);
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    match id {
        1 => {
            w.mode = (w.mode & !(mask << offset)) | ((v & mask) << offset);
            Ok(())
        }
        // TRAPSTS and the others carry no state the emulator models.
        3 => Ok(()),
        _ => Err(Fault::Unsupported),
    }
}

fn compare(op: Op, o: std::cmp::Ordering) -> bool {
    use Op::*;
    use std::cmp::Ordering::*;
    match op {
        S_CMP_EQ_I32 | S_CMP_EQ_U32 | S_CMP_EQ_U64 | S_CMPK_EQ_I32 | S_CMPK_EQ_U32 => o == Equal,
        S_CMP_LG_I32 | S_CMP_LG_U32 | S_CMP_LG_U64 | S_CMPK_LG_I32 | S_CMPK_LG_U32 => o != Equal,
        S_CMP_GT_I32 | S_CMP_GT_U32 | S_CMPK_GT_I32 | S_CMPK_GT_U32 => o == Greater,
        S_CMP_GE_I32 | S_CMP_GE_U32 | S_CMPK_GE_I32 | S_CMPK_GE_U32 => o != Less,
        S_CMP_LT_I32 | S_CMP_LT_U32 | S_CMPK_LT_I32 | S_CMPK_LT_U32 => o == Less,
        S_CMP_LE_I32 | S_CMP_LE_U32 | S_CMPK_LE_I32 | S_CMPK_LE_U32 => o != Greater,
        _ => false,
    }
}

/// Executes a SOP1/SOP2/SOPC instruction (uncounted).
pub(crate) fn salu(w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    let a = if i.src[0].is_some() {
        w.scalar(&i.src[0])?
    } else {
        0
    };
    let b = if i.src[1].is_some() {
        w.scalar(&i.src[1])?
    } else {
        0
    };
    let (a32, b32) = (a as u32, b as u32);
    let d = &i.dst;
    let set = |w: &mut Wave, v: u64, scc: Option<bool>| -> Result<Flow, Fault> {
        w.write_scalar(d, v)?;
        if let Some(s) = scc {
            w.scc = s;
        }
        Ok(Flow::Next)
    };
    use Op::*;
    match i.op {
        // SOP2
        S_ADD_U32 => {
            let (r, c) = a32.overflowing_add(b32);
            set(w, u64::from(r), Some(c))
        }
        S_SUB_U32 => {
            let (r, c) = a32.overflowing_sub(b32);
            set(w, u64::from(r), Some(c))
        }
        S_ADD_I32 => {
            let (r, o) = (a32 as i32).overflowing_add(b32 as i32);
            set(w, u64::from(r as u32), Some(o))
        }
        S_SUB_I32 => {
            let (r, o) = (a32 as i32).overflowing_sub(b32 as i32);
            set(w, u64::from(r as u32), Some(o))
        }
        S_ADDC_U32 => {
            let r = u64::from(a32) + u64::from(b32) + u64::from(w.scc);
            set(w, r & 0xffff_ffff, Some(r >> 32 != 0))
        }
        S_SUBB_U32 => {
            let r = i64::from(a32) - i64::from(b32) - i64::from(w.scc);
            set(w, r as u64 & 0xffff_ffff, Some(r < 0))
        }
        S_MIN_I32 => set(
            w,
            u64::from((a32 as i32).min(b32 as i32) as u32),
            Some((a32 as i32) < (b32 as i32)),
        ),
        S_MIN_U32 => set(w, u64::from(a32.min(b32)), Some(a32 < b32)),
        S_MAX_I32 => set(
            w,
            u64::from((a32 as i32).max(b32 as i32) as u32),
            Some((a32 as i32) > (b32 as i32)),
        ),
        S_MAX_U32 => set(w, u64::from(a32.max(b32)), Some(a32 > b32)),
        S_CSELECT_B32 | S_CSELECT_B64 => set(w, if w.scc { a } else { b }, None),
        S_AND_B32 | S_AND_B64 => bitop(w, d, a & b),
        S_OR_B32 | S_OR_B64 => bitop(w, d, a | b),
        S_XOR_B32 | S_XOR_B64 => bitop(w, d, a ^ b),
        S_ANDN2_B32 | S_ANDN2_B64 => bitop(w, d, a & !b),
        S_ORN2_B32 | S_ORN2_B64 => bitop(w, d, a | !b),
        S_NAND_B32 | S_NAND_B64 => bitop(w, d, !(a & b)),
        S_NOR_B32 | S_NOR_B64 => bitop(w, d, !(a | b)),
        S_XNOR_B32 | S_XNOR_B64 => bitop(w, d, !(a ^ b)),
        S_LSHL_B32 => bitop(w, d, u64::from(a32 << (b32 & 31))),
        S_LSHL_B64 => bitop(w, d, a << (b32 & 63)),
        S_LSHR_B32 => bitop(w, d, u64::from(a32 >> (b32 & 31))),
        S_LSHR_B64 => bitop(w, d, a >> (b32 & 63)),
        S_ASHR_I32 => bitop(w, d, u64::from(((a32 as i32) >> (b32 & 31)) as u32)),
        S_ASHR_I64 => bitop(w, d, ((a as i64) >> (b32 & 63)) as u64),
        S_BFM_B32 => set(w, u64::from(mask32(a32 & 31) << (b32 & 31)), None),
        S_BFM_B64 => set(w, mask64(a32 & 63) << (b32 & 63), None),
        S_MUL_I32 => set(
            w,
            u64::from((a32 as i32).wrapping_mul(b32 as i32) as u32),
            None,
        ),
        S_MUL_HI_U32 => set(w, (u64::from(a32) * u64::from(b32)) >> 32, None),
        S_MUL_HI_I32 => set(
            w,
            ((i64::from(a32 as i32) * i64::from(b32 as i32)) >> 32) as u64 & 0xffff_ffff,
            None,
        ),
        S_BFE_U32 => {
            let r = (a32 >> (b32 & 31)) & mask32(b32 >> 16 & 0x7f);
            bitop(w, d, u64::from(r))
        }
        S_BFE_I32 => {
            let width = b32 >> 16 & 0x7f;
            let r = sext32((a32 >> (b32 & 31)) & mask32(width), width);
            bitop(w, d, u64::from(r))
        }
        S_BFE_U64 => bitop(w, d, (a >> (b32 & 63)) & mask64(b32 >> 16 & 0x7f)),
        S_BFE_I64 => {
            let width = b32 >> 16 & 0x7f;
            let r = (a >> (b32 & 63)) & mask64(width);
            let r = if width == 0 {
                0
            } else if width >= 64 {
                r
            } else {
                ((r << (64 - width)) as i64 >> (64 - width)) as u64
            };
            bitop(w, d, r)
        }
        S_ABSDIFF_I32 => {
            let r = (i64::from(a32 as i32) - i64::from(b32 as i32)).unsigned_abs() as u32;
            bitop(w, d, u64::from(r))
        }
        S_LSHL1_ADD_U32 | S_LSHL2_ADD_U32 | S_LSHL3_ADD_U32 | S_LSHL4_ADD_U32 => {
            let sh = match i.op {
                S_LSHL1_ADD_U32 => 1,
                S_LSHL2_ADD_U32 => 2,
                S_LSHL3_ADD_U32 => 3,
                _ => 4,
            };
            let r = (u64::from(a32) << sh) + u64::from(b32);
            set(w, r & 0xffff_ffff, Some(r >> 32 != 0))
        }
        S_PACK_LL_B32_B16 => set(w, u64::from(a32 & 0xffff | b32 << 16), None),
        S_PACK_LH_B32_B16 => set(w, u64::from(a32 & 0xffff | b32 & 0xffff_0000), None),
        S_PACK_HH_B32_B16 => set(w, u64::from(a32 >> 16 | b32 & 0xffff_0000), None),
        // SOP1
        S_MOV_B32 | S_MOV_B64 => set(w, a, None),
        S_CMOV_B32 | S_CMOV_B64 => {
            if w.scc {
                w.write_scalar(d, a)?;
            }
            Ok(Flow::Next)
        }
        S_NOT_B32 => bitop(w, d, u64::from(!a32)),
        S_NOT_B64 => bitop(w, d, !a),
        S_WQM_B32 => bitop(w, d, wqm(a) & 0xffff_ffff),
        S_WQM_B64 => bitop(w, d, wqm(a)),
        S_BREV_B32 => set(w, u64::from(a32.reverse_bits()), None),
        S_BREV_B64 => set(w, a.reverse_bits(), None),
        S_BCNT0_I32_B32 => bitop(w, d, u64::from(a32.count_zeros())),
        S_BCNT0_I32_B64 => bitop(w, d, u64::from(a.count_zeros())),
        S_BCNT1_I32_B32 => bitop(w, d, u64::from(a32.count_ones())),
        S_BCNT1_I32_B64 => bitop(w, d, u64::from(a.count_ones())),
        S_FF0_I32_B32 => set(w, find(u64::from(!a32), 32), None),
        S_FF0_I32_B64 => set(w, find(!a, 64), None),
        S_FF1_I32_B32 => set(w, find(u64::from(a32), 32), None),
        S_FF1_I32_B64 => set(w, find(a, 64), None),
        S_FLBIT_I32_B32 => set(
            w,
            if a32 == 0 {
                0xffff_ffff
            } else {
                u64::from(a32.leading_zeros())
            },
            None,
        ),
        S_FLBIT_I32_B64 => set(
            w,
            if a == 0 {
                0xffff_ffff
            } else {
                u64::from(a.leading_zeros())
            },
            None,
        ),
        S_FLBIT_I32 => set(w, flbit_signed(i64::from(a32 as i32), 32), None),
        S_FLBIT_I32_I64 => set(w, flbit_signed(a as i64, 64), None),
        S_SEXT_I32_I8 => set(w, u64::from(a32 as u8 as i8 as i32 as u32), None),
        S_SEXT_I32_I16 => set(w, u64::from(a32 as u16 as i16 as i32 as u32), None),
        S_BITSET0_B32 | S_BITSET1_B32 | S_BITSET0_B64 | S_BITSET1_B64 => {
            let cur = w.scalar(d)?;
            let bit = 1u64 << (a32 & if d.dwords >= 2 { 63 } else { 31 });
            let v = if matches!(i.op, S_BITSET1_B32 | S_BITSET1_B64) {
                cur | bit
            } else {
                cur & !bit
            };
            set(w, v, None)
        }
        S_GETPC_B64 => set(w, w.pc + 4, None),
        S_SETPC_B64 => Ok(Flow::Jump(a)),
        S_SWAPPC_B64 => {
            let ret = w.pc + 4;
            w.write_scalar(d, ret)?;
            Ok(Flow::Jump(a))
        }
        S_AND_SAVEEXEC_B64 | S_OR_SAVEEXEC_B64 | S_XOR_SAVEEXEC_B64 | S_ANDN2_SAVEEXEC_B64
        | S_ORN2_SAVEEXEC_B64 | S_NAND_SAVEEXEC_B64 | S_NOR_SAVEEXEC_B64 | S_XNOR_SAVEEXEC_B64
        | S_ANDN1_SAVEEXEC_B64 | S_ORN1_SAVEEXEC_B64 | S_ANDN1_WREXEC_B64 | S_ANDN2_WREXEC_B64 => {
            let exec = w.exec();
            let new = match i.op {
                S_AND_SAVEEXEC_B64 => a & exec,
                S_OR_SAVEEXEC_B64 => a | exec,
                S_XOR_SAVEEXEC_B64 => a ^ exec,
                S_ANDN2_SAVEEXEC_B64 | S_ANDN2_WREXEC_B64 => a & !exec,
                S_ORN2_SAVEEXEC_B64 => a | !exec,
                S_NAND_SAVEEXEC_B64 => !(a & exec),
                S_NOR_SAVEEXEC_B64 => !(a | exec),
                S_XNOR_SAVEEXEC_B64 => !(a ^ exec),
                S_ANDN1_SAVEEXEC_B64 | S_ANDN1_WREXEC_B64 => !a & exec,
                _ => !a | exec,
            } & w.lane_mask();
            if matches!(i.op, S_ANDN1_WREXEC_B64 | S_ANDN2_WREXEC_B64) {
                w.set_exec(new);
                w.write_scalar(d, new)?;
            } else {
                w.write_scalar(d, exec)?;
                w.set_exec(new);
            }
            w.scc = new != 0;
            Ok(Flow::Next)
        }
        S_QUADMASK_B32 => bitop(w, d, quadmask(a & 0xffff_ffff)),
        S_QUADMASK_B64 => bitop(w, d, quadmask(a)),
        S_SET_GPR_IDX_ON => {
            // M0[7:0] = index, M0[15:12] = which operands are indexed (raw SSRC1 field).
            w.mode |= super::wave::MODE_GPR_IDX_EN;
            let mode = (i.fields.imm as u32 >> 8) & 0xf;
            let m0 = &mut w.sgpr[usize::from(M0)];
            *m0 = (*m0 & !0xf0ff) | (a32 & 0xff) | mode << 12;
            Ok(Flow::Next)
        }
        S_SET_GPR_IDX_IDX => {
            let m0 = &mut w.sgpr[usize::from(M0)];
            *m0 = (*m0 & !0xff) | (a32 & 0xff);
            Ok(Flow::Next)
        }
        S_MOVRELS_B32 | S_MOVRELS_B64 => {
            let OperandKind::Sgpr(r) = i.src[0].kind else {
                return Err(Fault::Unsupported);
            };
            let idx = u32::from(r) + w.sgpr[usize::from(M0)];
            let src = Operand {
                kind: OperandKind::Sgpr(
                    u8::try_from(idx).map_err(|_| Fault::Register(format!("s{idx}")))?,
                ),
                dwords: i.src[0].dwords,
            };
            let v = w.scalar(&src)?;
            set(w, v, None)
        }
        S_MOVRELD_B32 | S_MOVRELD_B64 => {
            let OperandKind::Sgpr(r) = d.kind else {
                return Err(Fault::Unsupported);
            };
            let idx = u32::from(r) + w.sgpr[usize::from(M0)];
            let dst = Operand {
                kind: OperandKind::Sgpr(
                    u8::try_from(idx).map_err(|_| Fault::Register(format!("s{idx}")))?,
                ),
                dwords: d.dwords,
            };
            w.write_scalar(&dst, a)?;
            Ok(Flow::Next)
        }
        S_ABS_I32 => bitop(w, d, u64::from((a32 as i32).unsigned_abs())),
        S_BITREPLICATE_B64_B32 => {
            let mut r = 0u64;
            for k in 0..32 {
                if a32 >> k & 1 == 1 {
                    r |= 3 << (2 * k);
                }
            }
            set(w, r, None)
        }
        // SOPC
        S_CMP_EQ_I32 | S_CMP_LG_I32 | S_CMP_GT_I32 | S_CMP_GE_I32 | S_CMP_LT_I32 | S_CMP_LE_I32 => {
            w.scc = compare(i.op, (a32 as i32).cmp(&(b32 as i32)));
            Ok(Flow::Next)
        }
        S_CMP_EQ_U32 | S_CMP_LG_U32 | S_CMP_GT_U32 | S_CMP_GE_U32 | S_CMP_LT_U32 | S_CMP_LE_U32 => {
            w.scc = compare(i.op, a32.cmp(&b32));
            Ok(Flow::Next)
        }
        S_CMP_EQ_U64 | S_CMP_LG_U64 => {
            w.scc = compare(i.op, a.cmp(&b));
            Ok(Flow::Next)
        }
        S_BITCMP0_B32 => {
            w.scc = a32 >> (b32 & 31) & 1 == 0;
            Ok(Flow::Next)
        }
        S_BITCMP1_B32 => {
            w.scc = a32 >> (b32 & 31) & 1 == 1;
            Ok(Flow::Next)
        }
        S_BITCMP0_B64 => {
            w.scc = a >> (b32 & 63) & 1 == 0;
            Ok(Flow::Next)
        }
        S_BITCMP1_B64 => {
            w.scc = a >> (b32 & 63) & 1 == 1;
            Ok(Flow::Next)
        }
        _ => Err(Fault::Unsupported),
    }
}

/// Writes a bitwise result and sets SCC to "result is not zero".
fn bitop(w: &mut Wave, d: &Operand, v: u64) -> Result<Flow, Fault> {
    let v = if d.dwords >= 2 { v } else { v & 0xffff_ffff };
    w.write_scalar(d, v)?;
    w.scc = v != 0;
    Ok(Flow::Next)
}

fn mask32(width: u32) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

fn mask64(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn sext32(v: u32, width: u32) -> u32 {
    if width == 0 {
        0
    } else if width >= 32 {
        v
    } else {
        (((v << (32 - width)) as i32) >> (32 - width)) as u32
    }
}

/// Index of the lowest set bit, or -1 (as u32) if none.
fn find(v: u64, width: u32) -> u64 {
    let v = if width == 32 { v & 0xffff_ffff } else { v };
    if v == 0 {
        0xffff_ffff
    } else {
        u64::from(v.trailing_zeros())
    }
}

/// Count of leading bits equal to the sign bit, or -1 if all bits are equal.
fn flbit_signed(v: i64, width: u32) -> u64 {
    let v = if width == 32 { i64::from(v as i32) } else { v };
    if v == 0 || v == -1 {
        return 0xffff_ffff;
    }
    let lz = if v < 0 {
        (!v).leading_zeros()
    } else {
        v.leading_zeros()
    };
    u64::from(lz - (64 - width))
}

fn wqm(v: u64) -> u64 {
    let mut r = 0;
    for q in 0..16 {
        if v >> (4 * q) & 0xf != 0 {
            r |= 0xf << (4 * q);
        }
    }
    r
}

fn quadmask(v: u64) -> u64 {
    let mut r = 0;
    for q in 0..16 {
        if v >> (4 * q) & 0xf != 0 {
            r |= 1 << q;
        }
    }
    r
}

/// Executes a scalar memory instruction.
pub(crate) fn smem(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    ctx.count(InstructionClass::Smem);
    let name = i.op.name();
    match i.op {
        Op::S_DCACHE_INV
        | Op::S_DCACHE_WB
        | Op::S_DCACHE_INV_VOL
        | Op::S_DCACHE_WB_VOL
        | Op::S_DCACHE_DISCARD
        | Op::S_DCACHE_DISCARD_X2
        | Op::S_ATC_PROBE
        | Op::S_ATC_PROBE_BUFFER => return Ok(Flow::Next),
        Op::S_MEMTIME => {
            w.write_scalar(&i.dst, ctx.shader_cycles())?;
            return Ok(Flow::Next);
        }
        Op::S_MEMREALTIME => {
            w.write_scalar(&i.dst, ctx.real_time())?;
            return Ok(Flow::Next);
        }
        _ => {}
    }
    let offset = if i.fields.smem_imm || i.fields.soffset_en {
        i64::from(i.fields.imm)
    } else {
        0
    };
    let soffset = if i.src[1].is_some() {
        w.scalar(&i.src[1])? as u32
    } else {
        0
    };
    let buffer = name.starts_with("s_buffer_");
    let base = w.scalar(&Operand {
        dwords: 2,
        ..i.src[0]
    })?;
    let rel = (offset as u64).wrapping_add(u64::from(soffset)) & !3;
    let dwords = u32::from(i.dst.dwords.max(1));
    let (address, limit) = if buffer {
        let words = [0u8, 1, 2, 3].map(|k| w.sgpr_read(src_reg(&i.src[0]) + k) as u32);
        let base = u64::from(words[0]) | u64::from(words[1] & 0xffff) << 32;
        (base.wrapping_add(rel), Some(u64::from(words[2])))
    } else {
        ((base & 0xffff_ffff_ffff).wrapping_add(rel) & !3, None)
    };
    if name.starts_with("s_load_") || name.starts_with("s_buffer_load_") {
        let OperandKind::Sgpr(r) = i.dst.kind else {
            return Err(Fault::Unsupported);
        };
        if usize::from(r) + dwords as usize > 128 {
            return Err(Fault::Register(format!("s{r} (+{dwords})")));
        }
        for k in 0..dwords {
            let off = rel.wrapping_add(u64::from(k) * 4);
            let v = match limit {
                Some(num) if off.saturating_add(4) > num => 0,
                _ => {
                    let a = address.wrapping_add(u64::from(k) * 4);
                    let mut b = [0u8; 4];
                    ctx.mem
                        .kernel_read(a, &mut b)
                        .map_err(|e| Fault::from_memory(e, a, 4, false))?;
                    u32::from_le_bytes(b)
                }
            };
            w.sgpr[usize::from(r) + k as usize] = v;
        }
        ctx.counters.scalar_read(u64::from(dwords) * 4);
        return Ok(Flow::Next);
    }
    if name.starts_with("s_store_") || name.starts_with("s_buffer_store_") {
        let OperandKind::Sgpr(r) = i.dst.kind else {
            return Err(Fault::Unsupported);
        };
        for k in 0..dwords {
            let off = rel.wrapping_add(u64::from(k) * 4);
            if matches!(limit, Some(num) if off.saturating_add(4) > num) {
                continue;
            }
            let a = address.wrapping_add(u64::from(k) * 4);
            let v = w.sgpr_read(r.wrapping_add(k as u8)) as u32;
            ctx.mem
                .kernel_write(a, &v.to_le_bytes())
                .map_err(|e| Fault::from_memory(e, a, 4, true))?;
        }
        ctx.counters.global_bytes_written += u64::from(dwords) * 4;
        return Ok(Flow::Next);
    }
    if let Some(rest) = name
        .strip_prefix("s_atomic_")
        .or_else(|| name.strip_prefix("s_buffer_atomic_"))
    {
        return scalar_atomic(ctx, w, i, rest, address, limit.map(|num| (num, rel)));
    }
    Err(Fault::Unsupported)
}

/// s_atomic_* / s_buffer_atomic_*: one read-modify-write of 4 or 8 bytes at `address`; SDATA holds
/// the data (then the compare value for cmpswap) and receives the pre-op value with glc.
fn scalar_atomic(
    ctx: &mut Ctx<'_>,
    w: &mut Wave,
    i: &Instruction,
    rest: &str,
    address: u64,
    buffer_range: Option<(u64, u64)>,
) -> Result<Flow, Fault> {
    use super::vmem::{Rmw, rmw};
    let (op, wide) = match rest.strip_suffix("_x2") {
        Some(op) => (op, true),
        None => (rest, false),
    };
    let op = match op {
        "swap" => Rmw::Swap,
        "cmpswap" => Rmw::CmpSwap,
        "add" => Rmw::Add,
        "sub" => Rmw::Sub,
        "smin" => Rmw::SMin,
        "umin" => Rmw::UMin,
        "smax" => Rmw::SMax,
        "umax" => Rmw::UMax,
        "and" => Rmw::And,
        "or" => Rmw::Or,
        "xor" => Rmw::Xor,
        "inc" => Rmw::Inc,
        "dec" => Rmw::Dec,
        _ => return Err(Fault::Unsupported),
    };
    let bytes: u32 = if wide { 8 } else { 4 };
    let words = bytes / 4;
    let OperandKind::Sgpr(r) = i.dst.kind else {
        return Err(Fault::Unsupported);
    };
    let read = |w: &Wave, at: u8| -> u64 {
        let lo = w.sgpr_read(at);
        if wide {
            lo & 0xffff_ffff | w.sgpr_read(at.wrapping_add(1)) << 32
        } else {
            lo & 0xffff_ffff
        }
    };
    let data = read(w, r);
    let cmp = read(w, r.wrapping_add(words as u8));
    if matches!(buffer_range, Some((num, rel)) if rel.saturating_add(u64::from(bytes)) > num) {
        return Ok(Flow::Next);
    }
    let old = ctx
        .mem
        .kernel_update(address, bytes, |old| rmw(op, bytes, old, data, cmp))
        .map_err(|e| Fault::from_memory(e, address, bytes, true))?;
    ctx.counters.scalar_read(u64::from(bytes));
    ctx.counters.global_bytes_written += u64::from(bytes);
    if i.fields.glc {
        w.write_scalar(
            &Operand {
                kind: OperandKind::Sgpr(r),
                dwords: words as u8,
            },
            old,
        )?;
    }
    Ok(Flow::Next)
}

fn src_reg(o: &Operand) -> u8 {
    match o.kind {
        OperandKind::Sgpr(r) => r,
        _ => 0,
    }
}
