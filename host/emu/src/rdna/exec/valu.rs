//! RDNA vector ALU: the operand model around the GFX9 per-lane semantics (`valu_ops::compute`).
//!
//! What is RDNA's own: 16-bit operands are halves of VGPRs (op_sel bit `k` selects the high half of
//! source `k`, bit 3 that of the destination, whose other half is kept); src0 may be read through a
//! DPP16 (row_share, row_xmask, fetch-inactive) or DPP8 lane selection; lane masks (VCC, compare
//! results, carries) are one SGPR in wave32; VOPD issues two operations that both read their
//! sources before either writes.

use super::super::decode::is_16bit;
use super::super::inst::{Dpp8, Dpp16, Ext, Format, Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use super::super::tables::{NumType, OperandSpec, RegKind};
use super::lower::{gfx9_instruction, gfx9_op};
use super::{lanes, valu_ops};
use crate::error::Fault;
use crate::gfx9;
use crate::gfx9::exec::valu::{
    Lanes, dpp_source, flush_denormals, output_modifiers, read_operand, read_operand_lanes,
    sign_modifiers,
};
use crate::gfx9::exec::valu_ops::{Env, Res, active_lanes, clamp_is_integer, compute};
use crate::machine::{Ctx, Wave};

/// Executes a VALU instruction on `w`.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    match i.format {
        Format::Vopd => return vopd(w, i),
        Format::Vop3p => return vop3p(w, i),
        _ => {}
    }
    if lanes::execute(ctx, w, i)? {
        return Ok(());
    }
    let exec = w.exec();
    let mut specs = i.op.info().operands_on(ctx.target);
    // FMAMK reads K from src1, which moves the register operand to src2.
    if matches!(i.op, Op::V_FMAMK_F16 | Op::V_FMAMK_F32) {
        specs[3] = specs[2];
    }
    let mut srcs = [[0u64; 64]; 3];
    let mut valid = u64::MAX;
    for (k, lanes) in srcs.iter_mut().enumerate() {
        if i.src[k].is_some() {
            // A tied accumulator (the destination read as source 2) has the destination's shape.
            let spec = if k == 2 && specs[3].kind == RegKind::None {
                specs[0]
            } else {
                specs[k + 1]
            };
            valid &= gather(w, i, k, spec, lanes)?;
        }
    }
    // The shared semantics see each 16-bit source as the half `gather` selected, so its op_sel
    // bit must not select again (v_cvt_pk_f32_fp8's word select is such a bit).
    let mut mods = i.mods;
    for (k, spec) in specs[1..].iter().enumerate() {
        if is_16bit(*spec) {
            mods.op_sel &= !(1 << k);
        }
    }
    let env = Env {
        vcc: w.vcc(),
        ieee: w.ieee(),
        clamp: i.mods.clamp,
        mods,
        vop3: matches!(i.format, Format::Vop3 | Format::Vop3sd),
        fnuz: false,
        lanes: active_lanes(exec),
    };
    let mut d = [0u64; 64];
    let math = gfx9_op(i.op);
    let res = if valu_ops::compute(i.op, &srcs, &mut d) {
        Res::Vector
    } else {
        compute(math.ok_or(Fault::Unsupported)?, &env, &srcs, &mut d)?
    };
    let integer_clamp = (i.mods.clamp || i.mods.omod != 0) && math.is_some_and(clamp_is_integer);
    let mut write = exec;
    match i.ext {
        Ext::Dpp16(dpp) => {
            write &= dpp16_write_mask(dpp);
            if !dpp.bound_ctrl {
                write &= valid;
            }
        }
        Ext::Dpp8(_) | Ext::None => {}
    }
    match res {
        Res::Vector => write_vector(w, i, specs[0], integer_clamp, &mut d, write),
        Res::Mask(m) => write_compare(w, i, m & exec, false),
        Res::MaskExec(m) => write_compare(w, i, m & exec, true),
        Res::VectorCarry(c) => {
            write_vector(w, i, specs[0], integer_clamp, &mut d, write)?;
            w.write_scalar(&i.sdst, c & exec)
        }
    }
}

/// Reads source `k` (of shape `spec`) of `i` for every lane with its DPP selection, half
/// selection and float modifiers applied; returns the lanes whose DPP source was valid (all lanes
/// without DPP).
fn gather(
    w: &Wave,
    i: &Instruction,
    k: usize,
    spec: OperandSpec,
    out: &mut Lanes,
) -> Result<u64, Fault> {
    // Only the lanes up to the highest active one are computed; DPP may read any.
    let lanes = match i.ext {
        Ext::None => active_lanes(w.exec()),
        Ext::Dpp16(_) | Ext::Dpp8(_) => 64,
    };
    read_operand_lanes(w, &i.src[k], out, lanes)?;
    let mut valid = u64::MAX;
    if k == 0 {
        match i.ext {
            Ext::Dpp16(dpp) => valid = dpp16_permute(dpp, out, w.exec(), w.lanes),
            Ext::Dpp8(dpp) => dpp8_permute(dpp, out, w.exec(), w.lanes),
            Ext::None => {}
        }
    }
    if is_16bit(spec) {
        let hi = i.mods.op_sel >> k & 1 == 1;
        for v in out.iter_mut() {
            *v = if hi { *v >> 16 } else { *v } & 0xffff;
        }
    }
    let float = matches!(spec.ty, NumType::Float | NumType::BFloat);
    let select = matches!(i.op, Op::V_CNDMASK_B32 | Op::V_CNDMASK_B16) && k < 2;
    let abs = (float || select) && i.mods.abs >> k & 1 == 1;
    let neg = (float || select) && i.mods.neg >> k & 1 == 1;
    sign_modifiers(out, spec.bits, abs, neg);
    if float && !select {
        flush_denormals(w, spec.bits, true, out);
    }
    Ok(valid)
}

/// Source lane of lane `l` under DPP16 control `c` (`None`: out of range or not a control).
fn dpp16_source(c: u16, l: usize) -> Option<usize> {
    let row = l & !15;
    match c {
        0x150..=0x15f => Some(row + usize::from(c & 0xf)),
        0x160..=0x16f => Some(row + ((l & 15) ^ usize::from(c & 0xf))),
        // The wave shifts, rotates and row broadcasts are GFX9-only.
        0x130..=0x13f | 0x142 | 0x143 => None,
        _ => dpp_source(c, l),
    }
}

/// Applies a DPP16 lane selection to `v`; returns the lanes whose source lane was valid (in range,
/// and active unless fetch-inactive is set). Invalid sources read zero.
fn dpp16_permute(dpp: Dpp16, v: &mut Lanes, exec: u64, lanes: u32) -> u64 {
    let src = *v;
    let mut valid = 0u64;
    for (l, out) in v.iter_mut().enumerate().take(lanes as usize) {
        match dpp16_source(dpp.ctrl, l) {
            Some(s) if dpp.fetch_inactive || exec >> s & 1 == 1 => {
                *out = src[s];
                valid |= 1 << l;
            }
            _ => *out = 0,
        }
    }
    valid
}

/// Applies a DPP8 lane selection to `v`: lane `l` reads lane `lanes[l % 8]` of its group of 8;
/// an inactive source lane reads zero unless fetch-inactive is set.
fn dpp8_permute(dpp: Dpp8, v: &mut Lanes, exec: u64, lanes: u32) {
    let src = *v;
    for (l, out) in v.iter_mut().enumerate().take(lanes as usize) {
        let s = (l & !7) + usize::from(dpp.lanes[l % 8]);
        *out = if dpp.fetch_inactive || exec >> s & 1 == 1 {
            src[s]
        } else {
            0
        };
    }
}

/// Lanes a DPP16 instruction writes, from its row and bank masks.
fn dpp16_write_mask(dpp: Dpp16) -> u64 {
    let mut m = 0u64;
    for l in 0..64 {
        let row = l / 16;
        let bank = (l % 16) / 4;
        if dpp.row_mask >> row & 1 == 1 && dpp.bank_mask >> bank & 1 == 1 {
            m |= 1 << l;
        }
    }
    m
}

/// Writes a per-lane result to the destination: a VGPR (a 16-bit result to the half op_sel[3]
/// names, keeping the other half), a VGPR pair, or for the scalar-result operations an SGPR.
/// Float results get omod and clamp unless clamp saturates an integer result (`integer_clamp`).
fn write_vector(
    w: &mut Wave,
    i: &Instruction,
    spec: OperandSpec,
    integer_clamp: bool,
    d: &mut Lanes,
    write: u64,
) -> Result<(), Fault> {
    let float = matches!(spec.ty, NumType::Float);
    if float && (i.mods.omod != 0 || i.mods.clamp) && !integer_clamp {
        output_modifiers(w, spec.bits, i.mods.omod, i.mods.clamp, d);
    }
    if float {
        flush_denormals(w, spec.bits, false, d);
    }
    if let OperandKind::Sgpr(_) = i.dst.kind {
        let v = d[0]
            & if i.dst.dwords >= 2 {
                u64::MAX
            } else {
                0xffff_ffff
            };
        return w.write_scalar(&i.dst, v);
    }
    let dst = i.dst;
    let (file, r) = w.vreg_mut(&dst)?;
    if dst.dwords >= 2 {
        let (lo, hi) = file.split_at_mut(r + 1);
        let (lo, hi) = (&mut lo[r], &mut hi[0]);
        for l in 0..64 {
            if write >> l & 1 == 1 {
                lo[l] = d[l] as u32;
                hi[l] = (d[l] >> 32) as u32;
            }
        }
        return Ok(());
    }
    let reg = &mut file[r];
    if is_16bit(spec) {
        let shift = if i.mods.op_sel >> 3 & 1 == 1 { 16 } else { 0 };
        for (l, slot) in reg.iter_mut().enumerate() {
            if write >> l & 1 == 1 {
                *slot = *slot & !(0xffff << shift) | (d[l] as u32 & 0xffff) << shift;
            }
        }
    } else {
        for (l, slot) in reg.iter_mut().enumerate() {
            if write >> l & 1 == 1 {
                *slot = d[l] as u32;
            }
        }
    }
    Ok(())
}

/// Writes a compare result to the destination lane mask (VCC or an SGPR), and for CMPX to EXEC.
fn write_compare(w: &mut Wave, i: &Instruction, m: u64, to_exec: bool) -> Result<(), Fault> {
    if i.dst.is_some() {
        w.write_scalar(&i.dst, m)?;
    }
    if to_exec {
        w.set_exec(m);
    }
    Ok(())
}

/// One half of a VOPD instruction: its result lanes, computed before either half writes.
fn vopd_half(w: &Wave, op: Op, src: &[Operand; 3]) -> Result<Lanes, Fault> {
    let math = gfx9_op(op).ok_or(Fault::Unsupported)?;
    let mut srcs = [[0u64; 64]; 3];
    for (o, lanes) in src.iter().zip(srcs.iter_mut()) {
        if o.is_some() {
            read_operand(w, o, lanes)?;
        }
    }
    let env = Env {
        vcc: w.vcc(),
        ieee: w.ieee(),
        clamp: false,
        mods: Default::default(),
        vop3: false,
        fnuz: false,
        lanes: active_lanes(w.exec()),
    };
    let mut d = [0u64; 64];
    match compute(math, &env, &srcs, &mut d)? {
        Res::Vector => Ok(d),
        _ => Err(Fault::Unsupported),
    }
}

/// Executes both halves of a VOPD instruction.
fn vopd(w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let y = i.dual.ok_or(Fault::Unsupported)?;
    let mut dx = vopd_half(w, i.op, &i.src)?;
    let mut dy = vopd_half(w, y.op, &y.src)?;
    let exec = w.exec();
    for (dst, d, op) in [(&i.dst, &mut dx, i.op), (&y.dst, &mut dy, y.op)] {
        if matches!(op.info().operands[0].ty, NumType::Float) {
            flush_denormals(w, 32, false, d);
        }
        let (file, r) = w.vreg_mut(dst)?;
        for (l, slot) in file[r].iter_mut().enumerate() {
            if exec >> l & 1 == 1 {
                *slot = d[l] as u32;
            }
        }
    }
    Ok(())
}

/// Executes a VOP3P instruction with the GFX9 packed-math semantics.
fn vop3p(w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    if i.ext != Ext::None {
        return Err(Fault::Unsupported);
    }
    let op = gfx9_op(i.op).ok_or(Fault::Unsupported)?;
    gfx9::exec::vop3p::execute(w, &gfx9_instruction(i, op, gfx9::Format::Vop3p))
}
