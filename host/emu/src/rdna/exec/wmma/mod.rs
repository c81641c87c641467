//! WMMA: `D = A B + C` over 16x16 tiles (K = 16, or 32 for `v_wmma_i32_16x16x32_iu4`), every dense
//! form of gfx1100 and gfx1201 in wave32 and wave64 (lane layouts: [`layout`]; formats: [`form`]).
//!
//! Arithmetic model:
//! - Float forms: the products are exact and are summed with C in f64 (exact unless the terms'
//!   exponents spread beyond f64's precision), then rounded once to the output format, to nearest
//!   even (f32, or f16/bf16 for the 16-bit outputs): no intermediate rounding. Infinities and NaNs
//!   propagate as in IEEE arithmetic (inf * 0 and inf - inf give NaN), subnormal inputs and results
//!   are kept (no flushing); fp8 is OCP E4M3 (NaN at 0x7f/0xff, no infinities) and bf8 OCP E5M2.
//! - Float modifiers: for 16-bit A and B, `neg_lo[s]` negates the elements held in the low halves of
//!   source `s`'s registers and `neg_hi[s]` those in the high halves; for C, `neg_hi[2]` takes the
//!   absolute value and `neg_lo[2]` then negates.
//! - Integer forms: `neg_lo[0]` / `neg_lo[1]` make A / B signed (else unsigned); the exact sum with C
//!   wraps to 32 bits, or saturates to the i32 range with `clamp`; the other neg bits are ignored.
//! - gfx11 16-bit C/D: `op_sel[2]` selects the high halves of the C and D registers; D's other
//!   halves keep their values. gfx12 packs 16-bit C/D two a register.
//! - Every lane of the wave is read and written whatever EXEC holds (the ISA requires EXEC to be all
//!   ones); where gfx11 lane groups replicate an A/B element, the lowest lane's copy is used.
//!
//! The sparse `v_swmmac_*` forms stop the wave as unsupported.

mod form;
mod layout;

use super::super::inst::{Instruction, Operand, OperandKind};
use super::super::opcodes::Op;
use crate::error::Fault;
use crate::gfx9::exec::valu::read_operand;
use crate::machine::Wave;
use crate::target::Target;
use form::{Form, Input, Output};
use half::{bf16, f16};
use layout::{Layout, ab_slot, field};

/// Whether `op` is a WMMA instruction.
pub(crate) fn is_wmma(op: Op) -> bool {
    op.name().starts_with("v_wmma_") || op.name().starts_with("v_swmmac_")
}

/// Cycles the dense WMMA `op` holds its SIMD, from AMD's matrix instruction calculator: 32 for
/// every gfx11 form; on gfx12 16 for 16-bit sources and 8 for 8-bit and 4-bit ones. `None` for
/// the sparse forms, which are not executed.
pub(crate) fn cycles(target: Target, op: Op) -> Option<u16> {
    let form = Form::of(op)?;
    Some(match (target, form.a.bits()) {
        (Target::Gfx1201, 16) => 16,
        (Target::Gfx1201, _) => 8,
        _ => 32,
    })
}

/// Executes a WMMA instruction on wave `w` of `target`.
pub(crate) fn execute(target: Target, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let form = Form::of(i.op).ok_or(Fault::Unsupported)?;
    let layout = Layout::new(target, w.lanes as usize);
    let a = input(w, layout, &i.src[0], form, form.a)?;
    let b = input(w, layout, &i.src[1], form, form.b)?;
    let high = i.mods.op_sel & 4 != 0;
    let bits = form.out.bits();
    let c_regs = registers(w, &i.src[2], layout.cd_registers(bits))?;
    let mut c = [[0u32; 16]; 16];
    for l in 0..layout.lanes() {
        for e in 0..layout.cd_elements() {
            let (r, shift) = layout.cd_slot(e, bits, high);
            c[layout.cd_row(l, e)][l % 16] = field(c_regs[r][l], shift, bits);
        }
    }
    let d = if form.is_integer() {
        integer_product(form, &a, &b, &c, i.mods.neg, i.mods.clamp)
    } else {
        float_product(form, &a, &b, &c, i.mods.neg, i.mods.neg_hi)
    };
    let (file, first) = w.vreg_mut(&i.dst)?;
    for l in 0..layout.lanes() {
        for e in 0..layout.cd_elements() {
            let (r, shift) = layout.cd_slot(e, bits, high);
            let slot = &mut file[first + r][l];
            let mask = (u32::MAX >> (32 - bits)) << shift;
            *slot = (*slot & !mask) | (d[layout.cd_row(l, e)][l % 16] << shift & mask);
        }
    }
    Ok(())
}

/// One input matrix as element codes, indexed `[row or column][k]` (A by row, B by column), each
/// tagged with whether it sat in the high half of its register (for the 16-bit `neg_hi` modifier).
type Codes = [[(u32, bool); 32]; 16];

/// Reads the A (or B) fragment operand `o` of elements `format` into element codes.
fn input(w: &Wave, layout: Layout, o: &Operand, form: Form, format: Input) -> Result<Codes, Fault> {
    let bits = format.bits();
    let regs = registers(w, o, layout.ab_registers(form.k, bits))?;
    let mut codes = [[(0, false); 32]; 16];
    for l in (0..layout.lanes()).rev() {
        for e in 0..layout.ab_elements(form.k) {
            let (r, shift) = ab_slot(e, bits);
            codes[l % 16][layout.ab_k(form.k, l, e)] =
                (field(regs[r][l], shift, bits), shift >= 16);
        }
    }
    Ok(codes)
}

/// The float forms: `D[m][n] = sum_k A[m][k] B[k][n] + C[m][n]`, as element codes of D.
fn float_product(
    form: Form,
    a: &Codes,
    b: &Codes,
    c: &[[u32; 16]; 16],
    neg: u8,
    neg_hi: u8,
) -> [[u32; 16]; 16] {
    let value = |format: Input, s: u8, (code, high): (u32, bool)| {
        let x = format.float(code);
        let negate = format.bits() == 16 && (if high { neg_hi } else { neg }) >> s & 1 != 0;
        if negate { -x } else { x }
    };
    std::array::from_fn(|m| {
        std::array::from_fn(|n| {
            let mut acc = match form.out {
                Output::F32 => f64::from(f32::from_bits(c[m][n])),
                Output::F16 => f16::from_bits(c[m][n] as u16).to_f64(),
                _ => bf16::from_bits(c[m][n] as u16).to_f64(),
            };
            if neg_hi & 4 != 0 {
                acc = acc.abs();
            }
            if neg & 4 != 0 {
                acc = -acc;
            }
            let sum = (0..form.k).fold(acc, |s, k| {
                s + value(form.a, 0, a[m][k]) * value(form.b, 1, b[n][k])
            });
            match form.out {
                Output::F32 => (sum as f32).to_bits(),
                Output::F16 => u32::from(f16::from_f64(sum).to_bits()),
                _ => u32::from(bf16::from_f64(sum).to_bits()),
            }
        })
    })
}

/// The integer forms: the exact sum wrapped to 32 bits, or saturated when `clamp`.
fn integer_product(
    form: Form,
    a: &Codes,
    b: &Codes,
    c: &[[u32; 16]; 16],
    neg: u8,
    clamp: bool,
) -> [[u32; 16]; 16] {
    let (a_signed, b_signed) = (neg & 1 != 0, neg & 2 != 0);
    std::array::from_fn(|m| {
        std::array::from_fn(|n| {
            let sum = (0..form.k).fold(i64::from(c[m][n] as i32), |s, k| {
                s + form.a.integer(a[m][k].0, a_signed) * form.b.integer(b[n][k].0, b_signed)
            });
            if clamp {
                sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
            } else {
                sum as u32
            }
        })
    })
}

/// `count` registers of a fragment operand for every lane: the VGPRs from its first, or a constant
/// broadcast to every register.
fn registers(w: &Wave, o: &Operand, count: usize) -> Result<Vec<[u32; 64]>, Fault> {
    (0..count)
        .map(|r| {
            let mut v = [0u64; 64];
            match o.kind {
                OperandKind::Vgpr(first) => {
                    let index = u8::try_from(r)
                        .ok()
                        .and_then(|r| first.checked_add(r))
                        .ok_or_else(|| Fault::Register(format!("v{first} (+{r})")))?;
                    read_operand(w, &Operand::new(OperandKind::Vgpr(index), 1), &mut v)?;
                }
                _ => read_operand(w, o, &mut v)?,
            }
            Ok(v.map(|x| x as u32))
        })
        .collect()
}
