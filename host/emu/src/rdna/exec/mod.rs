//! RDNA execution on the shared machine model (`crate::machine`), in wave32 and wave64.
//!
//! Where RDNA does what GFX9 does (most scalar ALU operations, the per-lane ALU math, packed math,
//! LDS and memory accesses), the GFX9 semantics run (see `lower`); what differs is here: program
//! control and the split wait counters, the VALU operand model (true16 halves, DPP16 and DPP8, VOPD
//! dual issue, lane masks of one SGPR in wave32), cross-lane operations, scalar memory, the buffer
//! resource's addressing and range checks (see `buffer`) and where each target keeps workgroup ids.
//!
//! Not executed (they stop the wave with [`Fault::Unsupported`]): image, export, interpolation and
//! GDS instructions, formatted buffer accesses (`buffer_*_format_*`), the sparse WMMA forms
//! (`v_swmmac_*`; see `wmma`), `v_movrel*`, floating point min/max memory atomics, and
//! scalar float operations other than add, subtract, multiply, FMA, min, max, rounding,
//! conversions and compares.

mod buffer;
mod cost;
mod counting;
mod initial_state;
mod lanes;
mod lower;
mod memory;
mod scalar;
mod valu;
mod valu_ops;
mod wmma;

use super::inst::{Format, Instruction};
use super::opcodes::Op;
use crate::counters::InstructionClass;
use crate::dispatch::{DecodedInstruction, Dispatch};
use crate::error::Fault;
use crate::gfx9::decode::DecodeError;
use crate::machine::{Ctx, Flow, Isa, LaunchState, Wave};
use crate::machine::{Dependencies, FenceCode};
use crate::timing::cost::Cost;
use crate::{Target, WaveSize};

/// The RDNA instruction set on the machine model.
pub(crate) struct Rdna;

impl Isa for Rdna {
    type Instruction = Instruction;

    fn decode(target: Target, wave: WaveSize, words: &[u32]) -> Result<Instruction, DecodeError> {
        super::decode(target, wave, words)
    }

    fn len(i: &Instruction) -> u8 {
        i.len
    }

    fn dependencies(target: Target, i: &Instruction) -> Dependencies {
        counting::dependencies(target, i)
    }

    fn fence_code(target: Target) -> FenceCode {
        counting::fence_code(target)
    }

    fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
        execute(ctx, w, i)
    }

    fn cost(target: Target, i: &Instruction) -> Cost {
        cost::cost(target, i)
    }

    fn disassemble(target: Target, i: &Instruction) -> String {
        super::disassemble(target, i)
    }

    fn traced(i: &Instruction) -> DecodedInstruction<'_> {
        DecodedInstruction::Rdna(i)
    }

    fn initialize(
        w: &mut Wave,
        target: Target,
        d: &Dispatch<'_>,
        launch: &LaunchState,
        group: [u32; 3],
        index: u32,
        scratch_wave: u32,
    ) {
        initial_state::initialize(w, target, d, launch, group, index, scratch_wave);
    }
}

/// Executes one instruction of `w`.
fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    if i.op == Op::V_ILLEGAL {
        return Err(Fault::IllegalInstruction);
    }
    match i.format {
        Format::Sopp => scalar::sopp(ctx, w, i),
        Format::Sop1 | Format::Sop2 | Format::Sopc | Format::Sopk => scalar::salu(ctx, w, i),
        Format::Smem => scalar::smem(ctx, w, i),
        Format::Vop3p if wmma::is_wmma(i.op) => {
            ctx.count(InstructionClass::Mfma);
            wmma::execute(ctx.target, w, i)?;
            Ok(Flow::Next)
        }
        Format::Vop1
        | Format::Vop2
        | Format::Vopc
        | Format::Vop3
        | Format::Vop3sd
        | Format::Vop3p
        | Format::Vopd => {
            ctx.count(InstructionClass::Valu);
            valu::execute(ctx, w, i)?;
            Ok(Flow::Next)
        }
        Format::Ds => {
            memory::ds(ctx, w, i)?;
            Ok(Flow::Next)
        }
        Format::Flat | Format::Global | Format::Scratch | Format::Mubuf => {
            memory::vmem(ctx, w, i)?;
            Ok(Flow::Next)
        }
    }
}
