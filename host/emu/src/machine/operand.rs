//! The operand vocabulary the machine model and the ISA front ends share: what an instruction's
//! operand names (a scalar, vector or accumulation register, a constant, a special source), the
//! scalar register file's fixed entries, and why words do not decode. The machine reads and
//! writes registers through these; the front ends (GFX9, RDNA) decode into them.

use thiserror::Error;

/// Special scalar sources that are neither registers nor numeric constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// FLAT_SCRATCH base, low 32 bits.
    FlatScratchBaseLo,
    /// FLAT_SCRATCH base, high 32 bits.
    FlatScratchBaseHi,
    /// Base of the shared (LDS) aperture, high 32 bits.
    SharedBase,
    /// Limit of the shared aperture, high 32 bits.
    SharedLimit,
    /// Base of the private (scratch) aperture, high 32 bits.
    PrivateBase,
    /// Limit of the private aperture, high 32 bits.
    PrivateLimit,
    /// POPS exiting wave id (graphics only).
    PopsExitingWaveId,
    /// 1 if VCC is zero.
    Vccz,
    /// 1 if EXEC is zero.
    Execz,
    /// The scalar condition code.
    Scc,
    /// LDS direct read (graphics only).
    LdsDirect,
    /// A reserved source encoding.
    Reserved(u16),
}

/// What an operand names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// No operand.
    None,
    /// Scalar register file entry 0..=127 (s0-s101, flat_scratch, xnack_mask, vcc, ttmp, m0, exec).
    Sgpr(u8),
    /// Vector register.
    Vgpr(u8),
    /// Accumulation register.
    Agpr(u8),
    /// Inline constant: its 9-bit source code and its value expanded for the operand's type.
    Inline {
        /// Source encoding (128..=248).
        code: u16,
        /// Value as the instruction reads it.
        value: u64,
    },
    /// 32-bit literal following the instruction, and its value expanded for the operand's type.
    Literal {
        /// The literal dword.
        raw: u32,
        /// Value as the instruction reads it.
        value: u64,
    },
    /// A special source.
    Special(Special),
}

/// One operand: what it names and how many dwords it spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    /// What the operand names.
    pub kind: OperandKind,
    /// Number of consecutive 32-bit registers (1 for constants of any width).
    pub dwords: u8,
}

impl Operand {
    /// No operand.
    pub const NONE: Operand = Operand {
        kind: OperandKind::None,
        dwords: 0,
    };

    /// Builds an operand.
    pub fn new(kind: OperandKind, dwords: u8) -> Operand {
        Operand { kind, dwords }
    }

    /// Whether the slot is used.
    pub fn is_some(&self) -> bool {
        !matches!(self.kind, OperandKind::None)
    }
}

/// Why words could not be decoded.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    /// The encoding or opcode is not one the target has.
    #[error("unknown encoding {word0:#010x} {word1:#010x}")]
    Unknown {
        /// First instruction dword.
        word0: u32,
        /// Second dword (0 if absent).
        word1: u32,
    },
    /// The instruction runs past the end of the code.
    #[error("instruction truncated at end of code")]
    Truncated,
}

/// Scalar register file index of VCC (low half).
pub const VCC: u8 = 106;
/// Scalar register file index of EXEC (low half).
pub const EXEC: u8 = 126;
/// Scalar register file index of M0.
pub const M0: u8 = 124;
/// Scalar register file index of FLAT_SCRATCH (low half).
pub const FLAT_SCRATCH: u8 = 102;
