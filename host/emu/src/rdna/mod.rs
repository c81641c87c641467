//! The RDNA family as gfx1100 (RDNA3) and gfx1201 (RDNA4) implement it, in wave32 and wave64:
//! opcode tables, decoder, disassembler and instruction semantics.

pub mod decode;
pub mod disasm;
pub(crate) mod exec;
pub mod inst;
pub mod opcodes;
pub mod tables;

pub use decode::{DecodeError, decode};
pub use disasm::disassemble;
pub use inst::{
    Dpp8, Dpp16, Dual, Ext, Fields, Format, Instruction, Modifiers, Operand, OperandKind, Special,
};
pub use opcodes::Op;
pub use tables::{Encoding, NumType, OpInfo, OpcodeTables, OperandSpec, RegKind};
