//! Types of the generated RDNA opcode tables (`opcodes.rs`) and the per-target lookup.
//!
//! The tables are data: adding an instruction to the decoder means regenerating `opcodes.rs`
//! (see `gen/gen_rdna_tables.py`), not writing bit-twiddling code. Operand shapes are described with
//! the same types as GFX9's.

use super::opcodes::{GFX1100, GFX1201, OP_INFO, Op};
use crate::Target;

pub use crate::gfx9::tables::{NumType, OperandSpec, RegKind};

/// Static facts about one instruction.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// Mnemonic as LLVM prints it, without an `_e32`/`_e64` suffix.
    pub name: &'static str,
    /// Per target (gfx1100, gfx1201): whether LLVM prints `_e32`/`_e64` after the mnemonic (the
    /// instruction has both VOP1/2/C and VOP3 forms there).
    pub suffixed: [bool; 2],
    /// Whether the VOP3 form is VOP3SD (a scalar carry/flag destination in bits 14:8 instead of abs/op_sel).
    pub vop3sd: bool,
    /// Operand slots (bit 0 destination, bits 1-3 sources) that are lane masks: one bit per lane, so
    /// one SGPR in wave32 and a pair in wave64.
    pub lane_masks: u8,
    /// Operand slots: destination, then sources 0, 1, 2 (memory encodings: see the decoder), as
    /// gfx1100 has them.
    pub operands: [OperandSpec; 4],
    /// gfx1201's operand slots where they differ from gfx1100's (WMMA: half the A/B registers).
    pub gfx12_operands: Option<[OperandSpec; 4]>,
}

impl OpInfo {
    /// Whether LLVM prints `_e32`/`_e64` after the mnemonic on `target`.
    pub fn suffixed_on(&self, target: Target) -> bool {
        self.suffixed[usize::from(target == Target::Gfx1201)]
    }

    /// The operand slots on `target`.
    pub fn operands_on(&self, target: Target) -> [OperandSpec; 4] {
        match self.gfx12_operands {
            Some(o) if target == Target::Gfx1201 => o,
            _ => self.operands,
        }
    }

    /// Whether operand slot `slot` (0 destination, 1-3 sources) is a lane mask.
    pub fn is_lane_mask(&self, slot: usize) -> bool {
        self.lane_masks >> slot & 1 == 1
    }
}

/// The encodings that have opcode tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit immediate.
    Sopk,
    /// Scalar compare.
    Sopc,
    /// Scalar program control.
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, one source.
    Vop1,
    /// Vector ALU, two sources.
    Vop2,
    /// Vector compare.
    Vopc,
    /// Vector ALU, 64-bit encoding (also holds the VOP1/VOP2/VOPC and VOP3SD instructions).
    Vop3,
    /// Packed vector ALU and matrix instructions.
    Vop3p,
    /// The X half of a dual-issue VOPD instruction.
    VopdX,
    /// The Y half of a dual-issue VOPD instruction.
    VopdY,
    /// Local data share.
    Ds,
    /// Flat memory.
    Flat,
    /// Global memory.
    Global,
    /// Scratch memory.
    Scratch,
    /// Buffer memory (MUBUF on gfx11, VBUFFER on gfx12).
    Mubuf,
}

impl Encoding {
    /// Every encoding.
    pub const ALL: [Encoding; 18] = [
        Encoding::Sop1,
        Encoding::Sop2,
        Encoding::Sopk,
        Encoding::Sopc,
        Encoding::Sopp,
        Encoding::Smem,
        Encoding::Vop1,
        Encoding::Vop2,
        Encoding::Vopc,
        Encoding::Vop3,
        Encoding::Vop3p,
        Encoding::VopdX,
        Encoding::VopdY,
        Encoding::Ds,
        Encoding::Flat,
        Encoding::Global,
        Encoding::Scratch,
        Encoding::Mubuf,
    ];
}

/// Per-encoding opcode tables of one target: opcode number to instruction.
pub struct OpcodeTables {
    pub(crate) sop1: &'static [Option<Op>],
    pub(crate) sop2: &'static [Option<Op>],
    pub(crate) sopk: &'static [Option<Op>],
    pub(crate) sopc: &'static [Option<Op>],
    pub(crate) sopp: &'static [Option<Op>],
    pub(crate) smem: &'static [Option<Op>],
    pub(crate) vop1: &'static [Option<Op>],
    pub(crate) vop2: &'static [Option<Op>],
    pub(crate) vopc: &'static [Option<Op>],
    pub(crate) vop3: &'static [Option<Op>],
    pub(crate) vop3p: &'static [Option<Op>],
    pub(crate) vopdx: &'static [Option<Op>],
    pub(crate) vopdy: &'static [Option<Op>],
    pub(crate) ds: &'static [Option<Op>],
    pub(crate) flat: &'static [Option<Op>],
    pub(crate) global: &'static [Option<Op>],
    pub(crate) scratch: &'static [Option<Op>],
    pub(crate) mubuf: &'static [Option<Op>],
}

impl OpcodeTables {
    /// The tables of an RDNA target (`None` for targets of other families).
    pub fn for_target(target: Target) -> Option<&'static OpcodeTables> {
        match target {
            Target::Gfx1100 => Some(&GFX1100),
            Target::Gfx1201 => Some(&GFX1201),
            _ => None,
        }
    }

    /// The opcode table of one encoding: opcode number to instruction.
    pub fn table(&self, encoding: Encoding) -> &'static [Option<Op>] {
        match encoding {
            Encoding::Sop1 => self.sop1,
            Encoding::Sop2 => self.sop2,
            Encoding::Sopk => self.sopk,
            Encoding::Sopc => self.sopc,
            Encoding::Sopp => self.sopp,
            Encoding::Smem => self.smem,
            Encoding::Vop1 => self.vop1,
            Encoding::Vop2 => self.vop2,
            Encoding::Vopc => self.vopc,
            Encoding::Vop3 => self.vop3,
            Encoding::Vop3p => self.vop3p,
            Encoding::VopdX => self.vopdx,
            Encoding::VopdY => self.vopdy,
            Encoding::Ds => self.ds,
            Encoding::Flat => self.flat,
            Encoding::Global => self.global,
            Encoding::Scratch => self.scratch,
            Encoding::Mubuf => self.mubuf,
        }
    }

    /// Every (opcode number, instruction) slot of one encoding.
    pub fn slots(&self, encoding: Encoding) -> impl Iterator<Item = (u32, Op)> + '_ {
        self.table(encoding)
            .iter()
            .enumerate()
            .filter_map(|(n, op)| op.map(|op| (n as u32, op)))
    }
}

/// Looks `number` up in one encoding's table.
pub(crate) fn lookup(table: &[Option<Op>], number: u32) -> Option<Op> {
    table.get(number as usize).copied().flatten()
}

impl Op {
    /// Static facts about this instruction.
    pub fn info(self) -> &'static OpInfo {
        &OP_INFO[self as usize]
    }

    /// Mnemonic as LLVM prints it, without an `_e32`/`_e64` suffix.
    pub fn name(self) -> &'static str {
        self.info().name
    }
}
