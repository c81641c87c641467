//! What each RDNA instruction asks of the compute unit's pipes, for the timing model.

use super::super::inst::{Format, Instruction};
use super::super::opcodes::Op;
use super::wmma;
use crate::target::Target;
use crate::timing::cost::{Cost, VectorRate, vector_rate};

/// The pipe `i` issues to on `target`, and for how long.
pub(crate) fn cost(target: Target, i: &Instruction) -> Cost {
    let name = i.op.name();
    let imm = i.fields.imm as u16;
    match i.format {
        Format::Sopp | Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => {
            scalar(i.op, name, imm)
        }
        Format::Smem => Cost::ScalarMemory,
        Format::Ds => Cost::Lds,
        Format::Flat | Format::Global | Format::Scratch | Format::Mubuf => Cost::VectorMemory,
        Format::Vop3p if wmma::is_wmma(i.op) => match wmma::cycles(target, i.op) {
            Some(cycles) => Cost::Matrix { cycles },
            None => Cost::Vector {
                rate: VectorRate::Full,
            },
        },
        _ => Cost::Vector {
            rate: vector_rate(name, true),
        },
    }
}

/// The cost of a scalar or program-control instruction.
fn scalar(op: Op, name: &str, imm: u16) -> Cost {
    match op {
        Op::S_BARRIER | Op::S_BARRIER_WAIT => Cost::Barrier,
        Op::S_NOP => Cost::Nop {
            states: (imm & 0xf) + 1,
        },
        Op::S_SLEEP => Cost::Sleep { units: imm & 0x7f },
        Op::S_SETPRIO => Cost::Priority {
            level: (imm & 3) as u8,
        },
        Op::S_DELAY_ALU => Cost::DelayAlu { fields: imm },
        Op::S_ENDPGM | Op::S_ENDPGM_SAVED | Op::S_ENDPGM_ORDERED_PS_DONE => Cost::End,
        _ if name.starts_with("s_waitcnt") || name.starts_with("s_wait_") => Cost::Wait,
        _ if op == Op::S_BRANCH || name.starts_with("s_cbranch") => Cost::Branch,
        _ => Cost::Scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WaveSize;
    use crate::rdna::decode::decode;

    #[test]
    fn s_setprio_costs_its_level() {
        // SOPP opcode 53, SIMM16 = 3.
        let i = decode(Target::Gfx1100, WaveSize::Wave32, &[0xbfb5_0003]).unwrap();
        assert_eq!(i.op, Op::S_SETPRIO);
        assert_eq!(cost(Target::Gfx1100, &i), Cost::Priority { level: 3 });
    }
}
