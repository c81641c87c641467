//! The GFX9 family as gfx90a, gfx942 and gfx950 implement it (wave64): opcode tables, decoder,
//! disassembler and instruction semantics.

pub mod decode;
pub mod disasm;
pub(crate) mod exec;
pub mod inst;
pub mod opcodes;
pub mod tables;

pub use decode::{DecodeError, decode};
pub use disasm::disassemble;
pub use inst::{
    Dpp, Ext, Fields, Format, Instruction, Modifiers, Operand, OperandKind, Sdwa, Special,
};
pub use opcodes::Op;
pub use tables::{Encoding, NumType, OpInfo, OpcodeTables, OperandSpec, RegKind};
