//! Vector ALU framework (VOP1, VOP2, VOPC, VOP3, VOP3B): source gathering with DPP, SDWA, op_sel,
//! abs/neg and denormal flushing; result write-back with EXEC, DPP write masks, SDWA destination
//! selects, omod, clamp, op_sel and carry/compare masks. The per-instruction semantics are in
//! `valu_ops`.

use super::super::inst::{Dpp, Ext, Format, Instruction, Operand, OperandKind, Sdwa};
use super::super::opcodes::Op;
use super::super::tables::{NumType, OperandSpec};
use super::float;
use super::valu_ops::{self, Env, Res};
use super::{Ctx, Wave};
use crate::error::Fault;

/// Lane values of one operand (raw bits, up to 64 per lane).
pub(crate) type Lanes = [u64; 64];

/// Executes a VALU instruction on `w`.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let exec = w.exec();
    if let Some(done) = cross_lane(w, i, exec)? {
        return done;
    }
    let info = i.op.info();
    let specs = info.operands;
    let mut srcs = [[0u64; 64]; 3];
    let mut dpp_valid = u64::MAX;
    for k in 0..3 {
        if i.src[k].is_some() {
            dpp_valid &= gather(w, i, k, specs[k + 1], &mut srcs[k])?;
        }
    }
    let env = Env {
        vcc: w.vcc(),
        ieee: w.ieee(),
        clamp: i.mods.clamp,
        mods: i.mods,
        vop3: matches!(i.format, Format::Vop3 | Format::Vop3b),
        fnuz: ctx.target == crate::Target::Gfx942,
        lanes: valu_ops::active_lanes(exec),
    };
    let mut d = [0u64; 64];
    let res = valu_ops::compute(i.op, &env, &srcs, &mut d)?;
    let mut write = exec;
    if let Ext::Dpp(dpp) = i.ext {
        write &= dpp_write_mask(dpp);
        if !dpp.bound_ctrl {
            write &= dpp_valid;
        }
    }
    match res {
        Res::Vector => write_vector(w, i, specs[0], &mut d, write),
        Res::Mask(m) => write_mask(w, i, m & exec, false),
        Res::MaskExec(m) => write_mask(w, i, m & exec, true),
        Res::VectorCarry(c) => {
            write_vector(w, i, specs[0], &mut d, write)?;
            w.write_scalar(&i.sdst, c & exec)
        }
    }
}

/// Reads source `k` of `i` into `out` for every lane; returns the lanes whose DPP source lane is
/// valid (all lanes if there is no DPP).
fn gather(
    w: &Wave,
    i: &Instruction,
    k: usize,
    spec: OperandSpec,
    out: &mut Lanes,
) -> Result<u64, Fault> {
    let o = &i.src[k];
    // Only the lanes up to the highest active one are computed; DPP may read any.
    let lanes = match i.ext {
        Ext::Dpp(_) => 64,
        _ => valu_ops::active_lanes(w.exec()),
    };
    read_operand_lanes(w, o, out, lanes)?;
    let mut valid = u64::MAX;
    if let (0, Ext::Dpp(dpp)) = (k, i.ext) {
        valid = dpp_permute(dpp, out, w.exec());
    }
    if let (Ext::Sdwa(sdwa), 0..=1) = (i.ext, k) {
        sdwa_select(sdwa, k, out);
    }
    let bits = spec.bits;
    if matches!(i.format, Format::Vop3 | Format::Vop3b) && bits == 16 && i.mods.op_sel >> k & 1 == 1
    {
        for v in out.iter_mut() {
            *v >>= 16;
        }
    }
    let float = matches!(spec.ty, NumType::Float | NumType::BFloat);
    let mods_apply = float || (i.op == Op::V_CNDMASK_B32 && k < 2);
    let abs = mods_apply && i.mods.abs >> k & 1 == 1;
    let neg = mods_apply && i.mods.neg >> k & 1 == 1;
    let width = if i.op == Op::V_CNDMASK_B32 { 32 } else { bits };
    sign_modifiers(out, width, abs, neg);
    if float && i.op != Op::V_CNDMASK_B32 {
        flush_denormals(w, bits, true, out);
    }
    Ok(valid)
}

/// Applies the abs and neg source modifiers to the sign bit of `width`-bit values.
pub(crate) fn sign_modifiers(v: &mut Lanes, width: u16, abs: bool, neg: bool) {
    if !abs && !neg {
        return;
    }
    let sign = match width {
        16 => 1u64 << 15,
        64 => 1u64 << 63,
        _ => 1u64 << 31,
    };
    for x in v.iter_mut() {
        if abs {
            *x &= !sign;
        }
        if neg {
            *x ^= sign;
        }
    }
}

/// Flushes denormal `bits`-wide floats to zero where MODE asks for it: for inputs (denorm mode 0
/// or 2) or for outputs (mode 0 or 1).
pub(crate) fn flush_denormals(w: &Wave, bits: u16, inputs: bool, v: &mut Lanes) {
    let mode = if bits == 32 {
        w.denorm32()
    } else {
        w.denorm16_64()
    };
    let flush = if inputs {
        mode == 0 || mode == 2
    } else {
        mode == 0 || mode == 1
    };
    if flush {
        for x in v.iter_mut() {
            *x = match bits {
                16 => u64::from(float::flush16(*x as u16)),
                64 => float::flush64(*x),
                _ => u64::from(float::flush32(*x as u32)),
            };
        }
    }
}

/// Reads an operand's raw bits for all lanes (scalars and constants are broadcast).
pub(crate) fn read_operand(w: &Wave, o: &Operand, out: &mut Lanes) -> Result<(), Fault> {
    read_operand_lanes(w, o, out, 64)
}

/// [`read_operand`] for the first `lanes` lanes of a vector register (the others are left as
/// they were).
pub(crate) fn read_operand_lanes(
    w: &Wave,
    o: &Operand,
    out: &mut Lanes,
    lanes: usize,
) -> Result<(), Fault> {
    match o.kind {
        OperandKind::Vgpr(_) | OperandKind::Agpr(_) => {
            let (file, r) = w.vreg(o)?;
            let lo = &file[r][..lanes];
            if o.dwords >= 2 {
                let hi = &file[r + 1][..lanes];
                for ((out, &lo), &hi) in out.iter_mut().zip(lo).zip(hi) {
                    *out = u64::from(lo) | u64::from(hi) << 32;
                }
            } else {
                for (out, &lo) in out.iter_mut().zip(lo) {
                    *out = u64::from(lo);
                }
            }
        }
        _ => {
            let v = w.scalar(o)?;
            out.fill(v);
        }
    }
    Ok(())
}

/// Source lane of lane `l` under DPP control `c` (`None`: out of range).
pub(crate) fn dpp_source(c: u16, l: usize) -> Option<usize> {
    let row = l & !15;
    let r = l & 15;
    let n = usize::from(c & 0xf);
    match c {
        0x000..=0x0ff => Some((l & !3) | (usize::from(c) >> (2 * (l & 3)) & 3)),
        0x101..=0x10f => (r + n < 16).then_some(row + r + n),
        0x111..=0x11f => r.checked_sub(n).map(|s| row + s),
        0x121..=0x12f => Some(row + (r + 16 - n) % 16),
        0x130 => (l < 63).then_some(l + 1),
        0x134 => Some((l + 1) % 64),
        0x138 => l.checked_sub(1),
        0x13c => Some((l + 63) % 64),
        0x140 => Some(row + 15 - r),
        0x141 => Some(row + (r & 8) + 7 - (r & 7)),
        0x142 => (row > 0).then(|| row - 1),
        0x143 => (l >= 32).then_some(31),
        // row_newbcast:n (gfx90a and later): lane n of each row to the whole row.
        0x150..=0x15f => Some(row + n),
        _ => None,
    }
}

/// Applies a DPP lane permutation to `v`; returns the mask of lanes whose source lane was valid
/// (in range and active). Invalid sources read zero.
fn dpp_permute(dpp: Dpp, v: &mut Lanes, exec: u64) -> u64 {
    let src = *v;
    let mut valid = 0u64;
    for (l, out) in v.iter_mut().enumerate() {
        match dpp_source(dpp.ctrl, l) {
            Some(s) if exec >> s & 1 == 1 => {
                *out = src[s];
                valid |= 1 << l;
            }
            _ => *out = 0,
        }
    }
    valid
}

/// Lanes a DPP instruction writes, from its row and bank masks.
fn dpp_write_mask(dpp: Dpp) -> u64 {
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

/// Extracts the selected byte or word of an SDWA source (zero- or sign-extended).
fn sdwa_select(s: Sdwa, k: usize, v: &mut Lanes) {
    let (sel, sext) = if k == 0 {
        (s.src0_sel, s.src0_sext)
    } else {
        (s.src1_sel, s.src1_sext)
    };
    if sel >= 6 {
        return;
    }
    for x in v.iter_mut() {
        let w = *x as u32;
        let r = match sel {
            0..=3 => {
                let b = w >> (8 * sel) & 0xff;
                if sext { b as u8 as i8 as i32 as u32 } else { b }
            }
            _ => {
                let h = w >> (16 * (sel - 4)) & 0xffff;
                if sext {
                    h as u16 as i16 as i32 as u32
                } else {
                    h
                }
            }
        };
        *x = u64::from(r);
    }
}

/// Writes a per-lane result to the destination register(s).
fn write_vector(
    w: &mut Wave,
    i: &Instruction,
    spec: OperandSpec,
    d: &mut Lanes,
    write: u64,
) -> Result<(), Fault> {
    let float = matches!(spec.ty, NumType::Float);
    if float
        && (i.mods.omod != 0 || i.mods.clamp)
        && !matches!(i.ext, Ext::Dpp(_))
        && !valu_ops::clamp_is_integer(i.op)
    {
        output_modifiers(w, spec.bits, i.mods.omod, i.mods.clamp, d);
    }
    if float {
        flush_denormals(w, spec.bits, false, d);
    }
    let dst = i.dst;
    let dwords = dst.dwords.max(1);
    let sdwa = if let Ext::Sdwa(s) = i.ext {
        Some(s)
    } else {
        None
    };
    let partial = if matches!(i.format, Format::Vop3) {
        valu_ops::partial_write(i.op, i.mods.op_sel)
    } else {
        None
    };
    let (file, r) = w.vreg_mut(&dst)?;
    if dwords >= 2 {
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
    if sdwa.is_none() && partial.is_none() {
        let keep = if spec.bits == 16 { 0xffff } else { u32::MAX };
        for (l, slot) in reg.iter_mut().enumerate() {
            let v = d[l] as u32 & keep;
            *slot = if write >> l & 1 == 1 { v } else { *slot };
        }
        return Ok(());
    }
    for l in 0..64 {
        if write >> l & 1 == 0 {
            continue;
        }
        let v = d[l] as u32;
        reg[l] = if let Some(s) = sdwa {
            sdwa_place(s, v, reg[l])
        } else if let Some((shift, width)) = partial {
            let mask = ((1u64 << width) - 1) as u32;
            reg[l] & !(mask << shift) | (v & mask) << shift
        } else if spec.bits == 16 {
            v & 0xffff
        } else {
            v
        };
    }
    Ok(())
}

/// Places an SDWA result into the selected byte/word of the old destination value.
fn sdwa_place(s: Sdwa, v: u32, old: u32) -> u32 {
    let (shift, width) = match s.dst_sel {
        0..=3 => (8 * u32::from(s.dst_sel), 8),
        4 | 5 => (16 * u32::from(s.dst_sel - 4), 16),
        _ => return v,
    };
    let mask = ((1u64 << width) - 1) as u32;
    let piece = (v & mask) << shift;
    match s.dst_unused {
        2 => old & !(mask << shift) | piece,
        1 => {
            let sign = v >> (width - 1) & 1 == 1;
            let above = if shift + width >= 32 {
                0
            } else {
                u32::MAX << (shift + width)
            };
            piece | if sign { above } else { 0 }
        }
        _ => piece,
    }
}

/// omod (x2, x4, /2) then clamp to [0, 1].
pub(crate) fn output_modifiers(w: &Wave, bits: u16, omod: u8, clamp: bool, d: &mut Lanes) {
    let dx10 = w.dx10_clamp();
    for v in d.iter_mut() {
        match bits {
            64 => {
                let mut x = f64::from_bits(*v);
                x *= [1.0, 2.0, 4.0, 0.5][usize::from(omod & 3)];
                if clamp {
                    x = float::clamp01_64(x, dx10);
                }
                *v = x.to_bits();
            }
            16 => {
                let mut x = half::f16::from_bits(*v as u16).to_f32();
                x *= [1.0, 2.0, 4.0, 0.5][usize::from(omod & 3)];
                if clamp {
                    x = float::clamp01_32(x, dx10);
                }
                *v = u64::from(half::f16::from_f32(x).to_bits());
            }
            _ => {
                let mut x = f32::from_bits(*v as u32);
                x *= [1.0, 2.0, 4.0, 0.5][usize::from(omod & 3)];
                if clamp {
                    x = float::clamp01_32(x, dx10);
                }
                *v = u64::from(x.to_bits());
            }
        }
    }
}

/// Writes a compare result mask to the destination (VCC or an SGPR pair), and to EXEC for CMPX.
fn write_mask(w: &mut Wave, i: &Instruction, m: u64, to_exec: bool) -> Result<(), Fault> {
    w.write_scalar(&Operand { dwords: 2, ..i.dst }, m)?;
    if to_exec {
        w.set_exec(m);
    }
    Ok(())
}

/// Cross-lane and register-move instructions that do not fit the per-lane model.
fn cross_lane(
    w: &mut Wave,
    i: &Instruction,
    exec: u64,
) -> Result<Option<Result<(), Fault>>, Fault> {
    let lane_of = |v: u64| (v & 63) as usize;
    match i.op {
        Op::V_NOP | Op::V_CLREXCP => Ok(Some(Ok(()))),
        Op::V_READFIRSTLANE_B32 => {
            let l = if exec == 0 {
                0
            } else {
                exec.trailing_zeros() as usize
            };
            let mut v = [0u64; 64];
            read_operand(w, &i.src[0], &mut v)?;
            Ok(Some(w.write_scalar(&i.dst, v[l] & 0xffff_ffff)))
        }
        Op::V_READLANE_B32 => {
            let lane = lane_of(w.scalar(&i.src[1])?);
            let mut v = [0u64; 64];
            read_operand(w, &i.src[0], &mut v)?;
            Ok(Some(w.write_scalar(&i.dst, v[lane] & 0xffff_ffff)))
        }
        Op::V_WRITELANE_B32 => {
            let value = w.scalar(&i.src[0])? as u32;
            let lane = lane_of(w.scalar(&i.src[1])?);
            let (file, r) = w.vreg_mut(&i.dst)?;
            file[r][lane] = value;
            Ok(Some(Ok(())))
        }
        Op::V_SWAP_B32 => {
            let (a, b) = (vreg_index(&i.dst)?, vreg_index(&i.src[0])?);
            for l in 0..64 {
                if exec >> l & 1 == 1 {
                    let t = w.vgpr[a][l];
                    w.vgpr[a][l] = w.vgpr[b][l];
                    w.vgpr[b][l] = t;
                }
            }
            Ok(Some(Ok(())))
        }
        Op::V_PERMLANE16_SWAP_B32 | Op::V_PERMLANE32_SWAP_B32 => {
            let (a, b) = (vreg_index(&i.dst)?, vreg_index(&i.src[0])?);
            let half = if i.op == Op::V_PERMLANE16_SWAP_B32 {
                16
            } else {
                32
            };
            // Swap the odd half-rows of the destination with the even half-rows of the source.
            for l in 0..64usize {
                if (l / half) % 2 == 1 {
                    let m = l - half;
                    if exec >> l & 1 == 1 || exec >> m & 1 == 1 {
                        let t = w.vgpr[a][l];
                        w.vgpr[a][l] = w.vgpr[b][m];
                        w.vgpr[b][m] = t;
                    }
                }
            }
            Ok(Some(Ok(())))
        }
        _ => Ok(None),
    }
}

fn vreg_index(o: &Operand) -> Result<usize, Fault> {
    match o.kind {
        OperandKind::Vgpr(r) => Ok(usize::from(r)),
        _ => Err(Fault::Register("expected a VGPR".into())),
    }
}
