//! RDNA LDS (DS) and vector memory (FLAT, GLOBAL, SCRATCH, buffer) instructions.
//!
//! The accesses themselves are GFX9's (addresses, apertures, scratch layout, atomics, LDS bank
//! conflicts); RDNA's differ in names, in the operand order of the DS compare-store (new value
//! first) and in the permutes' lane wrap: on gfx1100 `ds_bpermute`/`ds_permute` address lanes
//! modulo 32 within the lane's own half of a wave64 (a wave64 permutes as two wave32 halves; the
//! ISA guide's pseudocode says "modulo 32", and drivers that run on the hardware swap halves with
//! `v_permlane64` to cross them), on gfx1201 modulo the wave's lanes.

use super::super::inst::{Format, Instruction};
use super::super::opcodes::Op;
use super::lower::{gfx9_instruction, gfx9_op};
use crate::counters::InstructionClass;
use crate::error::Fault;
use crate::gfx9;
use crate::gfx9::exec::valu::read_operand;
use crate::gfx9::exec::vmem::{Access, Rmw};
use crate::machine::{Ctx, Wave};
use crate::target::Target;

/// Executes a DS instruction.
pub(crate) fn ds(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    if matches!(i.op, Op::DS_BPERMUTE_B32 | Op::DS_PERMUTE_B32) {
        return permute(ctx, w, i);
    }
    let op = gfx9_op(i.op).ok_or(Fault::Unsupported)?;
    let mut lowered = gfx9_instruction(i, op, gfx9::Format::Ds);
    if i.op.name().starts_with("ds_cmpstore") {
        // RDNA: data0 is the new value, data1 the compare value; GFX9 has them the other way.
        lowered.src.swap(1, 2);
    }
    gfx9::exec::lds::execute(ctx, w, &lowered)
}

/// `ds_bpermute_b32` (each lane reads the lane its address names) and `ds_permute_b32` (each lane
/// writes to the lane its address names; the highest source lane wins).
fn permute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    ctx.count(InstructionClass::Lds);
    let exec = w.exec();
    let lanes = w.lanes as usize;
    let wrap = if ctx.target == Target::Gfx1100 {
        32
    } else {
        lanes
    };
    let half = |l: usize| if wrap == 32 { l & 32 } else { 0 };
    let mut addr = [0u64; 64];
    let mut data = [0u64; 64];
    read_operand(w, &i.src[0], &mut addr)?;
    read_operand(w, &i.src[1], &mut data)?;
    let offset = (i.fields.imm as u32 & 0xff) | u32::from(i.fields.offset1) << 8;
    let lane_of =
        |l: usize| half(l) | (((addr[l] as u32).wrapping_add(offset) / 4) as usize % wrap);
    let mut tmp = [0u64; 64];
    for l in 0..lanes {
        if i.op == Op::DS_BPERMUTE_B32 {
            let s = lane_of(l);
            if exec >> s & 1 == 1 {
                tmp[l] = data[s];
            }
        } else if exec >> l & 1 == 1 {
            tmp[lane_of(l)] = data[l];
        }
    }
    let (file, r) = w.vreg_mut(&i.dst)?;
    for l in 0..lanes {
        if exec >> l & 1 == 1 {
            file[r][l] = tmp[l] as u32;
        }
    }
    Ok(())
}

/// Executes a FLAT/GLOBAL/SCRATCH or buffer instruction.
pub(crate) fn vmem(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let cache_control = matches!(
        i.op,
        Op::BUFFER_GL0_INV | Op::BUFFER_GL1_INV | Op::GLOBAL_INV | Op::GLOBAL_WB | Op::GLOBAL_WBINV
    );
    if cache_control {
        ctx.count(InstructionClass::VmemStore);
        return Ok(());
    }
    let format = match i.format {
        Format::Flat => gfx9::Format::Flat,
        Format::Global => gfx9::Format::Global,
        Format::Scratch => gfx9::Format::Scratch,
        Format::Mubuf => return super::buffer::execute(ctx, w, i),
        _ => return Err(Fault::Unsupported),
    };
    let Some(op) = gfx9_op(i.op) else {
        return float_min_max(ctx, w, i, format);
    };
    gfx9::exec::vmem::execute(ctx, w, &gfx9_instruction(i, op, format))
}

/// GFX11's FLAT and GLOBAL `atomic_{min,max}_f32` and GFX12's `atomic_{min,max}_num_f32`,
/// which GFX9 lacks: GFX9's f32 atomic add of the same encoding with the operation replaced. A
/// NaN operand gives the other one, as `v_min_f32` and `v_max_f32` do.
fn float_min_max(
    ctx: &mut Ctx<'_>,
    w: &mut Wave,
    i: &Instruction,
    format: gfx9::Format,
) -> Result<(), Fault> {
    let name = i.op.name().replace("_num_", "_");
    let op = if name.ends_with("_atomic_min_f32") {
        Rmw::MinF32
    } else if name.ends_with("_atomic_max_f32") {
        Rmw::MaxF32
    } else {
        return Err(Fault::Unsupported);
    };
    let add = match format {
        gfx9::Format::Flat => gfx9::Op::FLAT_ATOMIC_ADD_F32,
        gfx9::Format::Global => gfx9::Op::GLOBAL_ATOMIC_ADD_F32,
        _ => return Err(Fault::Unsupported),
    };
    let access = Access::Atomic { op, bytes: 4 };
    gfx9::exec::vmem::execute_access(ctx, w, &gfx9_instruction(i, add, format), access)
}
