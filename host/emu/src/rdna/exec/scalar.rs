//! RDNA scalar instructions: program control and waits (SOPP), the scalar ALU (SOP1, SOP2, SOPC,
//! SOPK) and scalar memory (SMEM).
//!
//! The scalar ALU operations GFX9 has run with GFX9's semantics; the ones RDNA added (64-bit add
//! and multiply, float arithmetic, split wait counters, the barrier signal) are here.

use super::super::inst::{Format, Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use super::lower::{gfx9_instruction, gfx9_op};
use crate::counters::InstructionClass;
use crate::error::Fault;
use crate::gfx9;
use crate::gfx9::exec::scalar as gfx9_scalar;
use crate::machine::{Ctx, Flow, Wave};

fn branch_target(w: &Wave, i: &Instruction) -> u64 {
    let off = i64::from(i.fields.imm as u32 as u16 as i16) * 4;
    (w.pc + 4).wrapping_add(off as u64)
}

/// Whether `op` waits for counters or dependencies (a no-op here, counted as a wait).
fn is_wait(op: Op) -> bool {
    let n = op.name();
    n.starts_with("s_waitcnt") || n.starts_with("s_wait_")
}

/// Executes a SOPP instruction.
pub(crate) fn sopp(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    let take = |c: bool| {
        if c {
            Flow::Jump(branch_target(w, i))
        } else {
            Flow::Next
        }
    };
    let imm = i.fields.imm as u32;
    let flow = match i.op {
        Op::S_BRANCH => Flow::Jump(branch_target(w, i)),
        Op::S_CBRANCH_SCC0 => take(!w.scc),
        Op::S_CBRANCH_SCC1 => take(w.scc),
        Op::S_CBRANCH_VCCZ => take(w.vcc() == 0),
        Op::S_CBRANCH_VCCNZ => take(w.vcc() != 0),
        Op::S_CBRANCH_EXECZ => take(w.exec() == 0),
        Op::S_CBRANCH_EXECNZ => take(w.exec() != 0),
        Op::S_ENDPGM | Op::S_ENDPGM_SAVED | Op::S_ENDPGM_ORDERED_PS_DONE => Flow::End,
        Op::S_BARRIER => {
            ctx.count(InstructionClass::Barrier);
            return Ok(Flow::Barrier);
        }
        Op::S_BARRIER_WAIT => {
            ctx.count(InstructionClass::Waitcnt);
            return Ok(Flow::Barrier);
        }
        op if is_wait(op) => {
            ctx.count(InstructionClass::Waitcnt);
            return Ok(Flow::Next);
        }
        Op::S_TRAP => return Err(Fault::Trap(imm as u16 & 0xff)),
        Op::S_SETHALT if imm & 1 == 1 => return Err(Fault::Trap(0)),
        Op::S_ROUND_MODE => {
            w.mode = w.mode & !0xf | imm & 0xf;
            Flow::Next
        }
        Op::S_DENORM_MODE => {
            w.mode = w.mode & !0xf0 | (imm & 0xf) << 4;
            Flow::Next
        }
        Op::S_NOP
        | Op::S_SETHALT
        | Op::S_DELAY_ALU
        | Op::S_CLAUSE
        | Op::S_SET_INST_PREFETCH_DISTANCE
        | Op::S_SLEEP
        | Op::S_SETPRIO
        | Op::S_SENDMSG
        | Op::S_ICACHE_INV
        | Op::S_WAKEUP
        | Op::S_SETKILL
        | Op::S_INCPERFLEVEL
        | Op::S_DECPERFLEVEL
        | Op::S_TTRACEDATA
        | Op::S_TTRACEDATA_IMM => Flow::Next,
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

/// Executes a SOP1/SOP2/SOPC/SOPK instruction.
pub(crate) fn salu(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    if is_wait(i.op) {
        ctx.count(InstructionClass::Waitcnt);
        return Ok(Flow::Next);
    }
    if matches!(i.op, Op::S_BARRIER_SIGNAL | Op::S_BARRIER_SIGNAL_ISFIRST) {
        ctx.count(InstructionClass::Barrier);
        return Ok(Flow::Next);
    }
    ctx.count(InstructionClass::Salu);
    if let Some(flow) = rdna_salu(w, i)? {
        return Ok(flow);
    }
    let op = gfx9_op(i.op).ok_or(Fault::Unsupported)?;
    let format = match i.format {
        Format::Sop1 => gfx9::Format::Sop1,
        Format::Sop2 => gfx9::Format::Sop2,
        Format::Sopc => gfx9::Format::Sopc,
        _ => gfx9::Format::Sopk,
    };
    let lowered = gfx9_instruction(i, op, format);
    if format == gfx9::Format::Sopk {
        gfx9_scalar::sopk(w, &lowered)
    } else {
        gfx9_scalar::salu(w, &lowered)
    }
}

/// The scalar ALU operations RDNA added; `None` for the others.
fn rdna_salu(w: &mut Wave, i: &Instruction) -> Result<Option<Flow>, Fault> {
    let read = |w: &Wave, k: usize| -> Result<u64, Fault> {
        if i.src[k].is_some() {
            w.scalar(&i.src[k])
        } else {
            Ok(0)
        }
    };
    let (a, b) = (read(w, 0)?, read(w, 1)?);
    let (fa, fb) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
    let f32_result = |w: &mut Wave, v: f32| w.write_scalar(&i.dst, u64::from(v.to_bits()));
    match i.op {
        Op::S_SENDMSG_RTN_B32 | Op::S_SENDMSG_RTN_B64 => w.write_scalar(&i.dst, 0)?,
        Op::S_VERSION => {}
        Op::S_ADD_NC_U64 => w.write_scalar(&i.dst, a.wrapping_add(b))?,
        Op::S_SUB_NC_U64 => w.write_scalar(&i.dst, a.wrapping_sub(b))?,
        Op::S_MUL_U64 => w.write_scalar(&i.dst, a.wrapping_mul(b))?,
        Op::S_ADD_F32 => f32_result(w, fa + fb)?,
        Op::S_SUB_F32 => f32_result(w, fa - fb)?,
        Op::S_MUL_F32 => f32_result(w, fa * fb)?,
        Op::S_FMAMK_F32 | Op::S_FMAAK_F32 => {
            let c = f32::from_bits(w.scalar(&i.src[2])? as u32);
            f32_result(w, fa.mul_add(fb, c))?
        }
        Op::S_FMAC_F32 => {
            let d = f32::from_bits(w.scalar(&i.dst)? as u32);
            f32_result(w, fa.mul_add(fb, d))?
        }
        Op::S_MIN_NUM_F32 => f32_result(w, gfx9::exec::float::min32(fa, fb, false))?,
        Op::S_MAX_NUM_F32 => f32_result(w, gfx9::exec::float::max32(fa, fb, false))?,
        Op::S_RNDNE_F32 => f32_result(w, fa.round_ties_even())?,
        Op::S_CEIL_F32 => f32_result(w, fa.ceil())?,
        Op::S_FLOOR_F32 => f32_result(w, fa.floor())?,
        Op::S_TRUNC_F32 => f32_result(w, fa.trunc())?,
        Op::S_CVT_F32_I32 => f32_result(w, a as u32 as i32 as f32)?,
        Op::S_CVT_F32_U32 => f32_result(w, a as u32 as f32)?,
        Op::S_CVT_I32_F32 => w.write_scalar(&i.dst, u64::from(fa as i32 as u32))?,
        Op::S_CVT_U32_F32 => w.write_scalar(&i.dst, u64::from(fa as u32))?,
        Op::S_CVT_F32_F16 => f32_result(w, half::f16::from_bits(a as u16).to_f32())?,
        Op::S_CVT_F16_F32 => {
            w.write_scalar(&i.dst, u64::from(half::f16::from_f32(fa).to_bits()))?
        }
        Op::S_CMP_LT_F32 => w.scc = fa < fb,
        Op::S_CMP_EQ_F32 => w.scc = fa == fb,
        Op::S_CMP_LE_F32 => w.scc = fa <= fb,
        Op::S_CMP_GT_F32 => w.scc = fa > fb,
        Op::S_CMP_LG_F32 => w.scc = fa.partial_cmp(&fb).is_some_and(|o| o.is_ne()),
        Op::S_CMP_GE_F32 => w.scc = fa >= fb,
        Op::S_CMP_O_F32 => w.scc = !fa.is_nan() && !fb.is_nan(),
        Op::S_CMP_U_F32 => w.scc = fa.is_nan() || fb.is_nan(),
        Op::S_CMP_NEQ_F32 => w.scc = fa != fb,
        _ => return Ok(None),
    }
    Ok(Some(Flow::Next))
}

/// Executes a scalar memory instruction: loads of 1 to 16 dwords (gfx12: also single bytes and
/// halves), from an address or through a buffer resource; cache controls and prefetches are no-ops.
pub(crate) fn smem(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    ctx.count(InstructionClass::Smem);
    let name = i.op.name();
    let Some(rest) = name
        .strip_prefix("s_load_")
        .or_else(|| name.strip_prefix("s_buffer_load_"))
    else {
        return if name.contains("_inv") || name.contains("prefetch") || name.contains("probe") {
            Ok(Flow::Next)
        } else {
            Err(Fault::Unsupported)
        };
    };
    // (bytes, signed) of each element; dword loads fill `dst.dwords` registers.
    let (bytes, signed) = match rest {
        "u8" => (1, false),
        "i8" => (1, true),
        "u16" => (2, false),
        "i16" => (2, true),
        _ => (4, false),
    };
    let soffset = match i.src[1].kind {
        OperandKind::Sgpr(_) => w.scalar(&i.src[1])? & 0xffff_ffff,
        _ => 0,
    };
    let offset = (i64::from(i.fields.imm) as u64).wrapping_add(soffset);
    let OperandKind::Sgpr(base_reg) = i.src[0].kind else {
        return Err(Fault::Unsupported);
    };
    let buffer = name.starts_with("s_buffer_");
    let (base, limit) = if buffer {
        let v = [0u8, 1, 2, 3].map(|k| w.sgpr_read(base_reg.wrapping_add(k)) as u32);
        (
            u64::from(v[0]) | u64::from(v[1] & 0xffff) << 32,
            Some(u64::from(v[2])),
        )
    } else {
        (
            w.scalar(&Operand {
                dwords: 2,
                ..i.src[0]
            })? & 0xffff_ffff_ffff,
            None,
        )
    };
    let OperandKind::Sgpr(r) = i.dst.kind else {
        return Err(Fault::Unsupported);
    };
    let dwords = u32::from(i.dst.dwords.max(1));
    if usize::from(r) + dwords as usize > 128 {
        return Err(Fault::Register(format!("s{r} (+{dwords})")));
    }
    let aligned = if bytes == 4 { offset & !3 } else { offset };
    for k in 0..dwords {
        let rel = aligned.wrapping_add(u64::from(k) * 4);
        let value = match limit {
            Some(num) if rel.saturating_add(u64::from(bytes)) > num => 0,
            _ => {
                let a = base.wrapping_add(rel);
                let mut buf = [0u8; 4];
                ctx.mem
                    .kernel_read(a, &mut buf[..bytes as usize])
                    .map_err(|e| Fault::from_memory(e, a, bytes, false))?;
                match (bytes, signed) {
                    (1, true) => buf[0] as i8 as i32 as u32,
                    (2, true) => i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32,
                    _ => u32::from_le_bytes(buf),
                }
            }
        };
        w.sgpr[usize::from(r) + k as usize] = value;
    }
    ctx.counters.scalar_read(u64::from(dwords * bytes.min(4)));
    Ok(Flow::Next)
}
