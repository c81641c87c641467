//! WMMA: `D = A B + C` over 16x16 matrices with K = 16, A and B in f16 or bf16, C and D in f32, in
//! wave32, with the lane layouts of AMD's matrix instruction calculator:
//!
//! - gfx11: lanes `l` and `l + 16` both hold row `l % 16` of A (k = 0..15, two per VGPR) and
//!   column `l % 16` of B; element `i` of lane `l`'s C/D is `D[2i + l / 16][l % 16]`.
//! - gfx12: element `i` (two per VGPR) of lane `l`'s A and B is k = `8(i / 4) + 4(l / 16) + i % 4`
//!   of row (column) `l % 16`; element `i` of lane `l`'s C/D is `D[8(l / 16) + i][l % 16]`.
//!
//! The products are exact and are summed with C without intermediate rounding. Wave64 WMMA, the
//! f16/bf16-output and integer forms and the neg modifiers stop the wave as unsupported.

use super::super::inst::{Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use crate::error::Fault;
use crate::gfx9::exec::valu::read_operand;
use crate::machine::Wave;
use crate::target::Target;
use half::{bf16, f16};

/// Whether `op` is a WMMA instruction.
pub(crate) fn is_wmma(op: Op) -> bool {
    op.name().starts_with("v_wmma_") || op.name().starts_with("v_swmmac_")
}

/// The k index of element `i` of lane `l`'s A (or B) fragment.
fn k_of(target: Target, l: usize, i: usize) -> usize {
    if target == Target::Gfx1201 {
        8 * (i / 4) + 4 * (l / 16) + i % 4
    } else {
        i
    }
}

/// The row of element `i` of lane `l`'s C/D fragment (its column is `l % 16`).
fn row_of(target: Target, l: usize, i: usize) -> usize {
    if target == Target::Gfx1201 {
        8 * (l / 16) + i
    } else {
        2 * i + l / 16
    }
}

/// Executes a WMMA instruction on wave `w` of `target`.
pub(crate) fn execute(target: Target, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let input: fn(u16) -> f32 = match i.op {
        Op::V_WMMA_F32_16X16X16_F16 => |h| f16::from_bits(h).to_f32(),
        Op::V_WMMA_F32_16X16X16_BF16 => |h| bf16::from_bits(h).to_f32(),
        _ => return Err(Fault::Unsupported),
    };
    if w.lanes != 32 || i.mods.neg != 0 || i.mods.neg_hi != 0 {
        return Err(Fault::Unsupported);
    }
    // Elements of A and B per lane: 16 on gfx11 (8 VGPRs), 8 on gfx12 (4 VGPRs).
    let elements = if target == Target::Gfx1201 { 8 } else { 16 };
    let fragment = |k: usize| -> Result<Vec<[u32; 64]>, Fault> {
        let o = &i.src[k];
        (0..u8::try_from(elements / 2).unwrap_or(0))
            .map(|r| register(w, o, r))
            .collect()
    };
    let (a_regs, b_regs) = (fragment(0)?, fragment(1)?);
    let c_regs: Vec<[u32; 64]> = (0..8)
        .map(|r| register(w, &i.src[2], r))
        .collect::<Result<_, _>>()?;
    let mut a = [[0.0f32; 16]; 16];
    let mut b = [[0.0f32; 16]; 16];
    let mut c = [[0.0f32; 16]; 16];
    for l in 0..32 {
        for e in 0..elements {
            let half = |regs: &[[u32; 64]]| (regs[e / 2][l] >> (16 * (e % 2))) as u16;
            let k = k_of(target, l, e);
            a[l % 16][k] = input(half(&a_regs));
            b[k][l % 16] = input(half(&b_regs));
        }
        for (e, reg) in c_regs.iter().enumerate() {
            c[row_of(target, l, e)][l % 16] = f32::from_bits(reg[l]);
        }
    }
    let (file, r) = w.vreg_mut(&i.dst)?;
    for (e, reg) in file[r..r + 8].iter_mut().enumerate() {
        for (l, slot) in reg.iter_mut().enumerate().take(32) {
            let (m, n) = (row_of(target, l, e), l % 16);
            let sum: f64 = (0..16)
                .map(|k| f64::from(a[m][k]) * f64::from(b[k][n]))
                .sum::<f64>()
                + f64::from(c[m][n]);
            *slot = (sum as f32).to_bits();
        }
    }
    Ok(())
}

/// Register `r` of a fragment operand for every lane: the VGPR `r` past its first, or a constant
/// broadcast to every register.
fn register(w: &Wave, o: &Operand, r: u8) -> Result<[u32; 64], Fault> {
    let mut v = [0u64; 64];
    match o.kind {
        OperandKind::Vgpr(first) => {
            let index = first
                .checked_add(r)
                .ok_or_else(|| Fault::Register(format!("v{first} (+{r})")))?;
            read_operand(w, &Operand::new(OperandKind::Vgpr(index), 1), &mut v)?;
        }
        _ => read_operand(w, o, &mut v)?,
    }
    Ok(v.map(|x| x as u32))
}
