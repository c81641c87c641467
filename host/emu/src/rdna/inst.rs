//! A decoded RDNA instruction: opcode, format, operands and modifier fields.
//!
//! Operands use the GFX9 operand model ([`Operand`]); scalar registers are numbered as the shared
//! wave state numbers them (GFX9's register file: `m0` is 124 and `null` 125, although RDNA encodes
//! them the other way round), so that both families execute on one machine model.

use super::opcodes::Op;

pub use crate::gfx9::inst::{Modifiers, Operand, OperandKind, Special};

/// The encoding an instruction was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit immediate.
    Sopk,
    /// Scalar compare.
    Sopc,
    /// Scalar program control (branches, waits, barriers).
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, one source (32-bit encoding).
    Vop1,
    /// Vector ALU, two sources (32-bit encoding).
    Vop2,
    /// Vector compare (32-bit encoding).
    Vopc,
    /// Vector ALU, 64-bit encoding with abs/neg/clamp/omod/op_sel.
    Vop3,
    /// Vector ALU, 64-bit encoding with a scalar carry/flag destination.
    Vop3sd,
    /// Packed vector ALU.
    Vop3p,
    /// Two vector ALU operations issued together (X in the instruction, Y in [`Instruction::dual`]).
    Vopd,
    /// Local data share.
    Ds,
    /// Flat memory (generic address space).
    Flat,
    /// Global memory.
    Global,
    /// Scratch (private) memory.
    Scratch,
    /// Buffer memory.
    Mubuf,
}

impl Format {
    /// Whether this is one of the VALU formats.
    pub fn is_valu(self) -> bool {
        matches!(
            self,
            Format::Vop1
                | Format::Vop2
                | Format::Vopc
                | Format::Vop3
                | Format::Vop3sd
                | Format::Vop3p
                | Format::Vopd
        )
    }
}

/// DPP16 control of a VALU instruction (applies to src0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dpp16 {
    /// The 9-bit DPP_CTRL field.
    pub ctrl: u16,
    /// Rows (groups of 16 lanes) that write results.
    pub row_mask: u8,
    /// Banks (groups of 4 lanes within a row) that write results.
    pub bank_mask: u8,
    /// Invalid source lanes read zero instead of disabling the write.
    pub bound_ctrl: bool,
    /// Fetch inactive: source lanes that are disabled in EXEC are still read.
    pub fetch_inactive: bool,
}

/// DPP8 control of a VALU instruction: each lane of a group of 8 reads lane `lanes[i]` of its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dpp8 {
    /// Source lane within the group of 8, per lane of the group.
    pub lanes: [u8; 8],
    /// Fetch inactive: source lanes that are disabled in EXEC are still read.
    pub fetch_inactive: bool,
}

/// Extension of a VALU encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    /// Plain encoding.
    None,
    /// DPP16: src0 is a VGPR read through a row-wise lane permutation.
    Dpp16(Dpp16),
    /// DPP8: src0 is a VGPR read through a lane selection within groups of 8.
    Dpp8(Dpp8),
}

/// Fields of memory, branch and immediate encodings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fields {
    /// SOPK/SOPP: the 16-bit immediate. SMEM/FLAT/MUBUF: the signed byte offset. DS: offset0.
    pub imm: i32,
    /// DS: offset1.
    pub offset1: u8,
    /// DS: global data share.
    pub gds: bool,
    /// gfx11 cache bits: glc (also: an atomic returns the pre-op value), slc, dlc.
    pub glc: bool,
    /// gfx11: slc.
    pub slc: bool,
    /// gfx11: dlc.
    pub dlc: bool,
    /// gfx12 temporal hint (3 bits; for atomics bit 0 means "return the pre-op value").
    pub th: u8,
    /// gfx12 scope (0 CU, 1 SE, 2 device, 3 system).
    pub scope: u8,
    /// gfx12: non-volatile.
    pub nv: bool,
    /// Scratch: the address is in a VGPR (SVE).
    pub sve: bool,
    /// Buffer: vaddr holds an offset.
    pub offen: bool,
    /// Buffer: vaddr holds an index.
    pub idxen: bool,
    /// Buffer: texture fail enable.
    pub tfe: bool,
}

/// The Y half of a VOPD instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dual {
    /// The operation.
    pub op: Op,
    /// Destination VGPR.
    pub dst: Operand,
    /// Sources (src2: the accumulator of FMAC/DOT2ACC, the K constant of FMAAK, VCC of CNDMASK).
    pub src: [Operand; 3],
}

/// A decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// Which instruction (for VOPD: the X half).
    pub op: Op,
    /// Which encoding it came from.
    pub format: Format,
    /// Length in bytes, literal included.
    pub len: u8,
    /// Destination (VGPR, SGPR or memory data register).
    pub dst: Operand,
    /// Second, scalar destination (VOP3SD carry/flag).
    pub sdst: Operand,
    /// Sources. VALU/SALU: src0..src2. SMEM: sbase, soffset. DS: addr, data0, data1.
    /// FLAT/GLOBAL/SCRATCH: addr, data, saddr. Buffer: vaddr, resource, soffset.
    pub src: [Operand; 3],
    /// VALU modifiers. In every VALU encoding, `op_sel` bit `k` selects the high half of 16-bit
    /// source `k` and bit 3 that of a 16-bit destination (VOP1/VOP2/VOPC encode it in the VGPR
    /// number's top bit).
    pub mods: Modifiers,
    /// DPP extension.
    pub ext: Ext,
    /// Immediate and memory fields.
    pub fields: Fields,
    /// VOPD: the Y half.
    pub dual: Option<Dual>,
}
