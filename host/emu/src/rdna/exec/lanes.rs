//! RDNA cross-lane and register-move instructions, which do not fit the per-lane model: reading and
//! writing single lanes, the permutes within rows of 16 (`v_permlane16`, `v_permlanex16`) and
//! across halves of a wave64 (`v_permlane64`), and register swaps.

use super::super::inst::{Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use crate::error::Fault;
use crate::gfx9::exec::valu::read_operand;
use crate::machine::{Ctx, Wave};

/// Executes `i` if it is a cross-lane or register-move instruction; `false` if it is not one.
pub(crate) fn execute(_ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<bool, Fault> {
    let exec = w.exec();
    let lanes = w.lanes as usize;
    match i.op {
        Op::V_NOP | Op::V_PIPEFLUSH => {}
        Op::V_READFIRSTLANE_B32 => {
            let l = if exec == 0 {
                0
            } else {
                exec.trailing_zeros() as usize
            };
            let v = read(w, &i.src[0])?;
            w.write_scalar(&i.dst, v[l] & 0xffff_ffff)?;
        }
        Op::V_READLANE_B32 => {
            let lane = w.scalar(&i.src[1])? as usize % lanes;
            let v = read(w, &i.src[0])?;
            w.write_scalar(&i.dst, v[lane] & 0xffff_ffff)?;
        }
        Op::V_WRITELANE_B32 => {
            let value = w.scalar(&i.src[0])? as u32;
            let lane = w.scalar(&i.src[1])? as usize % lanes;
            let (file, r) = w.vreg_mut(&i.dst)?;
            file[r][lane] = value;
        }
        Op::V_PERMLANE16_B32 | Op::V_PERMLANEX16_B32 => {
            // Lane i of each row of 16 reads lane sel[i] of its own row (permlane16) or of the
            // other row of its half (permlanex16); sel is the nibble i of {src2, src1}.
            let select = w.scalar(&i.src[1])? & 0xffff_ffff | w.scalar(&i.src[2])? << 32;
            let v = read(w, &i.src[0])?;
            let across = i.op == Op::V_PERMLANEX16_B32;
            let (file, r) = w.vreg_mut(&i.dst)?;
            for (l, slot) in file[r].iter_mut().enumerate().take(lanes) {
                if exec >> l & 1 == 1 {
                    let row = if across { (l & !15) ^ 16 } else { l & !15 };
                    *slot = v[row + (select >> (4 * (l % 16)) & 0xf) as usize] as u32;
                }
            }
        }
        Op::V_PERMLANE64_B32 => {
            // Wave64 only: the halves swap (a no-op in wave32).
            if lanes == 64 {
                let v = read(w, &i.src[0])?;
                let (file, r) = w.vreg_mut(&i.dst)?;
                for l in 0..64 {
                    if exec >> l & 1 == 1 {
                        file[r][l] = v[l ^ 32] as u32;
                    }
                }
            }
        }
        Op::V_SWAP_B32 => {
            let (a, b) = (vgpr(&i.dst)?, vgpr(&i.src[0])?);
            for l in 0..64 {
                if exec >> l & 1 == 1 {
                    let t = w.vgpr[a][l];
                    w.vgpr[a][l] = w.vgpr[b][l];
                    w.vgpr[b][l] = t;
                }
            }
        }
        Op::V_SWAP_B16 => {
            // The halves op_sel names (bit 3: destination, bit 0: source) are exchanged.
            let (a, b) = (vgpr(&i.dst)?, vgpr(&i.src[0])?);
            let sa = if i.mods.op_sel >> 3 & 1 == 1 { 16 } else { 0 };
            let sb = if i.mods.op_sel & 1 == 1 { 16 } else { 0 };
            for l in 0..64 {
                if exec >> l & 1 == 1 {
                    let x = w.vgpr[a][l] >> sa & 0xffff;
                    let y = w.vgpr[b][l] >> sb & 0xffff;
                    w.vgpr[a][l] = w.vgpr[a][l] & !(0xffff << sa) | y << sa;
                    w.vgpr[b][l] = w.vgpr[b][l] & !(0xffff << sb) | x << sb;
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn read(w: &Wave, o: &Operand) -> Result<[u64; 64], Fault> {
    let mut v = [0u64; 64];
    read_operand(w, o, &mut v)?;
    Ok(v)
}

fn vgpr(o: &Operand) -> Result<usize, Fault> {
    match o.kind {
        OperandKind::Vgpr(r) => Ok(usize::from(r)),
        _ => Err(Fault::Register("expected a VGPR".into())),
    }
}
