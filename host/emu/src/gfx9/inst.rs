//! A decoded GFX9 instruction: opcode, format, operands and modifier fields.

use super::opcodes::Op;
pub use crate::machine::operand::{Operand, OperandKind, Special};

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
    Vop3b,
    /// Packed vector ALU.
    Vop3p,
    /// Matrix fused multiply-add (VOP3P encoding with cbsz/abid/blgp).
    Mfma,
    /// Local data share.
    Ds,
    /// Flat memory (generic address space).
    Flat,
    /// Global memory.
    Global,
    /// Scratch (private) memory.
    Scratch,
    /// Untyped buffer memory.
    Mubuf,
    /// Typed buffer memory.
    Mtbuf,
    /// Image memory (gfx90a): decoded and printed, not executed.
    Mimg,
}

impl Format {
    /// Whether this is one of the VALU formats (VOP*).
    pub fn is_valu(self) -> bool {
        matches!(
            self,
            Format::Vop1
                | Format::Vop2
                | Format::Vopc
                | Format::Vop3
                | Format::Vop3b
                | Format::Vop3p
                | Format::Mfma
        )
    }
}

/// Source and output modifiers of VOP3/VOP3P/SDWA/DPP instructions (bit `i` refers to source `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Modifiers {
    /// Absolute value of a source (float operands).
    pub abs: u8,
    /// Negation of a source (float operands; low half for packed).
    pub neg: u8,
    /// Negation of the high half of a packed source.
    pub neg_hi: u8,
    /// VOP3: which 16-bit half each source (bit 3: destination) uses; VOP3P: half for the low result.
    pub op_sel: u8,
    /// VOP3P: half each source uses for the high result.
    pub op_sel_hi: u8,
    /// Clamp the result.
    pub clamp: bool,
    /// Output multiplier: 0 none, 1 *2, 2 *4, 3 /2.
    pub omod: u8,
}

/// Data-parallel primitive control of a VOP1/VOP2/VOPC instruction (applies to src0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dpp {
    /// The 9-bit DPP_CTRL field.
    pub ctrl: u16,
    /// Rows (groups of 16 lanes) that write results.
    pub row_mask: u8,
    /// Banks (groups of 4 lanes within a row) that write results.
    pub bank_mask: u8,
    /// Invalid source lanes read zero instead of disabling the write.
    pub bound_ctrl: bool,
}

/// Sub-dword addressing of a VOP1/VOP2/VOPC instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sdwa {
    /// Destination select (0-3 byte, 4-5 word, 6 dword).
    pub dst_sel: u8,
    /// What happens to the unselected destination bits (0 pad, 1 sign-extend, 2 preserve).
    pub dst_unused: u8,
    /// Source 0 select.
    pub src0_sel: u8,
    /// Source 1 select.
    pub src1_sel: u8,
    /// Sign-extend the selected source 0 bits.
    pub src0_sext: bool,
    /// Sign-extend the selected source 1 bits.
    pub src1_sext: bool,
}

/// Extension of a 32-bit VALU encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    /// Plain encoding.
    None,
    /// DPP: src0 is a VGPR read through a lane permutation.
    Dpp(Dpp),
    /// SDWA: sources and destination select bytes or words.
    Sdwa(Sdwa),
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
    /// glc (gfx90a) / sc0 (gfx940+): return the pre-op value of an atomic; coherence bits otherwise.
    pub glc: bool,
    /// slc (gfx90a) / nt (gfx940+).
    pub slc: bool,
    /// scc (gfx90a) / sc1 (gfx940+).
    pub scc: bool,
    /// MUBUF/FLAT: transfer to LDS instead of VGPRs.
    pub lds: bool,
    /// MUBUF: vaddr holds an offset.
    pub offen: bool,
    /// MUBUF: vaddr holds an index.
    pub idxen: bool,
    /// SMEM: the offset is an immediate (else an SGPR).
    pub smem_imm: bool,
    /// SMEM: an SGPR offset is added to the immediate one (soffset_en).
    pub soffset_en: bool,
    /// SMEM: non-volatile.
    pub nv: bool,
    /// Data/destination registers are AGPRs.
    pub acc: bool,
    /// Scratch: the address is in a VGPR (SVE, gfx940+).
    pub sve: bool,
    /// MFMA: broadcast control (cbsz).
    pub cbsz: u8,
    /// MFMA: broadcast block (abid).
    pub abid: u8,
    /// MFMA: B-matrix lane group pattern (blgp).
    pub blgp: u8,
    /// MFMA: C and D are AGPRs.
    pub acc_cd: bool,
    /// MTBUF: data format.
    pub dfmt: u8,
    /// MTBUF: number format.
    pub nfmt: u8,
    /// MIMG: which of the four components are read or written.
    pub dmask: u8,
    /// MIMG: unorm, da, a16, lwe and d16, as the bits of [`mimg`].
    pub mimg_flags: u8,
}

/// Bits of [`Fields::mimg_flags`].
pub mod mimg {
    /// Unnormalized texture coordinates.
    pub const UNORM: u8 = 1;
    /// The resource is an array (`da`).
    pub const DA: u8 = 2;
    /// 16-bit addresses.
    pub const A16: u8 = 4;
    /// LOD warning enable.
    pub const LWE: u8 = 8;
    /// 16-bit data (two components per register).
    pub const D16: u8 = 16;
}

/// A decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// Which instruction.
    pub op: Op,
    /// Which encoding it came from.
    pub format: Format,
    /// Length in bytes, literal included.
    pub len: u8,
    /// Destination (VGPR, SGPR or memory data register).
    pub dst: Operand,
    /// Second, scalar destination (VOP3B carry/flag) or the VOPC-in-VOP3 mask destination.
    pub sdst: Operand,
    /// Sources. VALU/SALU: src0..src2. SMEM: sbase, soffset. DS: addr, data0, data1.
    /// FLAT/GLOBAL/SCRATCH: addr, data, saddr. MUBUF: vaddr, srsrc, soffset.
    pub src: [Operand; 3],
    /// Scaled MFMA (VOP3PX2): the scale sources of A and B.
    pub scale: [Operand; 2],
    /// VALU modifiers.
    pub mods: Modifiers,
    /// DPP/SDWA extension of VOP1/VOP2/VOPC.
    pub ext: Ext,
    /// Immediate and memory fields.
    pub fields: Fields,
}
