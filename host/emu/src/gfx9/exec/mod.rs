//! GFX9 execution on the shared machine model (`crate::machine`): every instruction's semantics,
//! in the submodules by family. The per-lane ALU, packed-math, LDS and memory semantics are also
//! what RDNA executes where the two families agree.
//!
//! Not executed (they stop the wave with [`Fault::Unsupported`]): the sparse SMFMAC and the XF32
//! matrix instructions (decoded only), GDS,
//! scalar scratch (`s_scratch_*`), `s_cbranch_g_fork`/`i_fork`/`join`, `s_cbranch_cdbg*`,
//! `s_rfe*`, `s_setvskip`, `s_sendmsghalt`, `s_setreg` of hardware registers other than MODE and
//! TRAPSTS, `v_cvt_pkaccum_u8_f32`, `v_qsad_pk_u16_u8`, `v_mqsad_*`, `v_screen_partition_4se_b32`,
//! formatted buffer accesses with packed 10/11-bit data formats, and on gfx950 the stochastic
//! rounding conversions `v_cvt_scalef32_sr_*` and `v_cvt_sr_{f16,bf16}_f32` and `v_prng_b32`. Not
//! modelled:
//! rounding modes other than round-to-nearest-even, FP16 overflow mode, exception/trap status bits.

mod buffer_format;
mod cost;
mod counting;
pub(crate) mod float;
mod fp8;
pub(crate) mod lds;
mod mfma;
mod mfma_layout;
mod mfma_shape;
mod minifloat;
pub(crate) mod scalar;
mod scaled_convert;
pub(crate) mod valu;
pub(crate) mod valu_ops;
pub(crate) mod vmem;
pub(crate) mod vop3p;
mod wave;

pub(crate) use crate::machine::{Ctx, Flow, LaunchState, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
pub(crate) use wave::Wave;

use super::inst::{Format, Instruction};
use super::opcodes::Op;
use crate::WaveSize;
use crate::counters::InstructionClass;
use crate::dispatch::{DecodedInstruction, Dispatch};
use crate::error::Fault;
use crate::machine::Isa;
use crate::machine::{Dependencies, FenceCode};
use crate::target::Target;
use crate::timing::cost::Cost;

/// The GFX9 instruction set on the machine model.
pub(crate) struct Gfx9;

impl Isa for Gfx9 {
    type Instruction = Instruction;

    fn decode(
        target: Target,
        _wave: WaveSize,
        words: &[u32],
    ) -> Result<Instruction, super::DecodeError> {
        super::decode(target, words)
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
        super::disasm::print(target, i)
    }

    fn traced(i: &Instruction) -> DecodedInstruction<'_> {
        DecodedInstruction::Gfx9(i)
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
        wave::initialize(w, target, d, launch, group, index, scratch_wave);
    }
}

/// `i` with its VGPR operands offset as GPR index mode (`s_set_gpr_idx_on`) asks: M0[7:0] is the
/// index, M0[12..=15] enable it for src0, src1, src2 and the destination.
fn gpr_indexed(w: &Wave, i: &Instruction) -> Result<Instruction, Fault> {
    let m0 = w.sgpr[usize::from(super::decode::M0)];
    let index = m0 & 0xff;
    let shift = |o: &mut super::inst::Operand| -> Result<(), Fault> {
        if let super::inst::OperandKind::Vgpr(r) = o.kind {
            let n = u32::from(r) + index;
            if n + u32::from(o.dwords.max(1)) > wave::VGPRS as u32 {
                return Err(Fault::Register(format!("v{n} (GPR index mode)")));
            }
            o.kind = super::inst::OperandKind::Vgpr(n as u8);
        }
        Ok(())
    };
    let mut out = *i;
    for k in 0..3 {
        if m0 >> (12 + k) & 1 == 1 {
            shift(&mut out.src[k])?;
        }
    }
    if m0 >> 15 & 1 == 1 {
        shift(&mut out.dst)?;
    }
    Ok(out)
}

/// Executes one instruction of `w`.
fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    if w.mode & wave::MODE_GPR_IDX_EN != 0
        && matches!(
            i.format,
            Format::Vop1
                | Format::Vop2
                | Format::Vopc
                | Format::Vop3
                | Format::Vop3b
                | Format::Vop3p
        )
    {
        let indexed = gpr_indexed(w, i)?;
        return execute_instruction(ctx, w, &indexed);
    }
    execute_instruction(ctx, w, i)
}

fn execute_instruction(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<Flow, Fault> {
    match i.format {
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc | Format::Sopp => {
            scalar::execute(ctx, w, i)
        }
        Format::Smem => scalar::smem(ctx, w, i),
        Format::Vop3 if scaled_convert::handles(i.op) => {
            ctx.count(InstructionClass::Valu);
            scaled_convert::execute(w, i)?;
            Ok(Flow::Next)
        }
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3b => {
            ctx.count(InstructionClass::Valu);
            valu::execute(ctx, w, i)?;
            Ok(Flow::Next)
        }
        Format::Vop3p => {
            ctx.count(InstructionClass::Valu);
            vop3p::execute(w, i)?;
            Ok(Flow::Next)
        }
        Format::Mfma => {
            ctx.count(InstructionClass::Mfma);
            if matches!(i.op, Op::V_ACCVGPR_READ_B32 | Op::V_ACCVGPR_WRITE_B32) {
                vop3p::execute(w, i)?;
            } else {
                mfma::execute(ctx.target, w, i)?;
            }
            Ok(Flow::Next)
        }
        Format::Ds => {
            lds::execute(ctx, w, i)?;
            Ok(Flow::Next)
        }
        Format::Flat | Format::Global | Format::Scratch | Format::Mubuf | Format::Mtbuf => {
            vmem::execute(ctx, w, i)?;
            Ok(Flow::Next)
        }
        Format::Mimg => Err(Fault::NotExecuted(
            "image instructions (MIMG: texture sampling, image loads, stores and atomics)",
        )),
    }
}
