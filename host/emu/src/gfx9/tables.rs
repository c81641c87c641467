//! Types of the generated GFX9 opcode tables (`opcodes.rs`) and the per-target lookup.
//!
//! The tables are data: adding an instruction to the decoder means regenerating `opcodes.rs`
//! (see `gen/gen_gfx9_tables.py`), not writing bit-twiddling code.

use super::opcodes::{GFX90A, GFX942, GFX950, OP_INFO, Op};
use crate::Target;

/// How the bits of an operand are to be read as a number (decides how constants are expanded and printed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumType {
    /// Unsigned integer or untyped bits (a 64-bit literal is zero-extended).
    Int,
    /// Signed integer (a 64-bit literal is sign-extended).
    Sint,
    /// IEEE binary floating point of the operand's width (f16, f32 or f64).
    Float,
    /// bfloat16.
    BFloat,
    /// Two f16 values in 32 bits.
    PackedFloat,
    /// Two 16-bit integers in 32 bits.
    PackedInt,
    /// Two bf16 values in 32 bits.
    PackedBFloat,
    /// Two 32-bit values (f32, or bits for v_pk_mov_b32) in 64 bits.
    PackedFloat32,
}

/// Which register files (or immediates) an operand slot may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegKind {
    /// The slot is unused.
    None,
    /// A vector register.
    Vgpr,
    /// A vector or accumulation register (chosen by the encoding's `acc` bit).
    VgprOrAgpr,
    /// An accumulation register.
    Agpr,
    /// A scalar register.
    Sgpr,
    /// Any source: scalar or vector register, inline constant or literal.
    Src,
    /// An immediate field.
    Imm,
}

/// Shape of one operand slot of an instruction: width in bits, number type, register kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandSpec {
    /// Width in bits (16, 32, 64, 96, 128, ... up to 1024 for MFMA accumulators).
    pub bits: u16,
    /// How the bits read as a number.
    pub ty: NumType,
    /// Which register files the slot may name.
    pub kind: RegKind,
}

impl OperandSpec {
    /// An unused slot.
    pub const NONE: OperandSpec = OperandSpec {
        bits: 0,
        ty: NumType::Int,
        kind: RegKind::None,
    };

    /// Number of 32-bit registers the operand occupies (at least one).
    pub fn dwords(self) -> u8 {
        (u32::from(self.bits).div_ceil(32)).max(1) as u8
    }
}

/// Static facts about one instruction.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// Mnemonic as LLVM prints it, without an `_e32`/`_e64` suffix.
    pub name: &'static str,
    /// Whether LLVM prints `_e32`/`_e64` after the mnemonic (the instruction has both VOP1/2/C and VOP3 forms).
    pub suffixed: bool,
    /// Whether the VOP3 form is VOP3B (a scalar destination in bits 14:8 instead of abs/op_sel).
    pub vop3b: bool,
    /// Operand slots: destination, then sources 0, 1, 2 (memory encodings: see the decoder).
    pub operands: [OperandSpec; 4],
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
    pub(crate) ds: &'static [Option<Op>],
    pub(crate) flat: &'static [Option<Op>],
    pub(crate) global: &'static [Option<Op>],
    pub(crate) scratch: &'static [Option<Op>],
    pub(crate) mubuf: &'static [Option<Op>],
    pub(crate) mtbuf: &'static [Option<Op>],
    pub(crate) vop3px2: &'static [Option<Op>],
    pub(crate) mimg: &'static [Option<Op>],
}

impl OpcodeTables {
    /// The tables of a GFX9 target (`None` for targets of other families).
    pub fn for_target(target: Target) -> Option<&'static OpcodeTables> {
        match target {
            Target::Gfx90a => Some(&GFX90A),
            Target::Gfx942 => Some(&GFX942),
            Target::Gfx950 => Some(&GFX950),
            Target::Gfx1100 | Target::Gfx1201 => None,
        }
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
    /// Vector ALU, 64-bit encoding (also holds the VOP1/VOP2/VOPC instructions).
    Vop3,
    /// Packed vector ALU and matrix instructions.
    Vop3p,
    /// Local data share.
    Ds,
    /// Flat memory.
    Flat,
    /// Global memory.
    Global,
    /// Scratch memory.
    Scratch,
    /// Untyped buffer memory.
    Mubuf,
    /// Typed buffer memory.
    Mtbuf,
    /// Scale-loading pair of a scaled MFMA.
    Vop3px2,
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
        Encoding::Ds,
        Encoding::Flat,
        Encoding::Global,
        Encoding::Scratch,
        Encoding::Mubuf,
        Encoding::Mtbuf,
        Encoding::Vop3px2,
    ];
}

impl OpcodeTables {
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
            Encoding::Ds => self.ds,
            Encoding::Flat => self.flat,
            Encoding::Global => self.global,
            Encoding::Scratch => self.scratch,
            Encoding::Mubuf => self.mubuf,
            Encoding::Mtbuf => self.mtbuf,
            Encoding::Vop3px2 => self.vop3px2,
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
