//! What each GFX9 instruction asks of the compute unit's pipes, for the timing model.

use super::super::inst::{Format, Instruction};
use super::super::opcodes::Op;
use super::mfma_shape::{Element, Shape};
use crate::target::Target;
use crate::timing::cost::{Cost, VectorRate, mfma_cycles, vector_rate};

/// The pipe `i` issues to on `target`, and for how long.
pub(crate) fn cost(target: Target, i: &Instruction) -> Cost {
    let name = i.op.name();
    let imm = i.fields.imm as u16;
    match i.format {
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => Cost::Scalar,
        Format::Sopp => program_control(i.op, name, imm),
        Format::Smem => Cost::ScalarMemory,
        Format::Ds => Cost::Lds,
        Format::Flat
        | Format::Global
        | Format::Scratch
        | Format::Mubuf
        | Format::Mtbuf
        | Format::Mimg => Cost::VectorMemory,
        Format::Mfma => match Shape::of(i.op, &i.fields) {
            Some(shape) => Cost::Matrix {
                cycles: matrix_cycles(target, &shape),
            },
            None => Cost::Vector {
                rate: VectorRate::Full,
            },
        },
        _ => Cost::Vector {
            rate: vector_rate(name, false),
        },
    }
}

/// Cycles the MFMA of `shape` holds the matrix core on `target`.
fn matrix_cycles(target: Target, shape: &Shape) -> u16 {
    let eight_bit = |e: Element| matches!(e, Element::Fp8 | Element::Bf8);
    mfma_cycles(
        target != Target::Gfx90a,
        target == Target::Gfx950,
        shape.m,
        shape.blocks == 1 && shape.a != Element::F32,
        shape.a == Element::F64,
        shape.f8f6f4 && (eight_bit(shape.a) || eight_bit(shape.b)),
    )
}

/// The cost of a SOPP instruction.
fn program_control(op: Op, name: &str, imm: u16) -> Cost {
    match op {
        Op::S_WAITCNT => Cost::Wait,
        Op::S_BARRIER => Cost::Barrier,
        Op::S_NOP => Cost::Nop {
            states: (imm & 0xf) + 1,
        },
        Op::S_SLEEP => Cost::Sleep { units: imm & 0x7f },
        Op::S_SETPRIO => Cost::Priority {
            level: (imm & 3) as u8,
        },
        Op::S_ENDPGM | Op::S_ENDPGM_SAVED => Cost::End,
        _ if op == Op::S_BRANCH || name.starts_with("s_cbranch") => Cost::Branch,
        _ => Cost::Scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx9::decode::decode;

    #[test]
    fn s_setprio_costs_its_level() {
        // SOPP opcode 15, SIMM16 = 2 (only bits 1:0 count).
        let i = decode(Target::Gfx942, &[0xbf8f_0006]).unwrap();
        assert_eq!(i.op, Op::S_SETPRIO);
        assert_eq!(cost(Target::Gfx942, &i), Cost::Priority { level: 2 });
    }
}
