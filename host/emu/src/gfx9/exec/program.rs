//! Loaded code and its decoded-instruction cache (each instruction is decoded once, on first use).

use super::super::decode::{DecodeError, decode};
use super::super::inst::Instruction;
use crate::error::Fault;
use crate::target::Target;

/// Code loaded at a device address, with the instructions decoded so far.
pub struct Program {
    target: Target,
    base: u64,
    words: Vec<u32>,
    /// Per dword of code: 0 if not decoded yet, else index + 1 into `decoded`.
    slots: Vec<u32>,
    decoded: Vec<Instruction>,
}

impl Program {
    /// Code `text` loaded at `base` for `target`.
    pub fn new(target: Target, text: &[u8], base: u64) -> Program {
        let words: Vec<u32> = text
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        let slots = vec![0; words.len()];
        Program {
            target,
            base,
            words,
            slots,
            decoded: Vec::new(),
        }
    }

    /// Index of the decoded instruction at `pc`, decoding it on first use.
    pub(crate) fn index_of(&mut self, pc: u64) -> Result<usize, Fault> {
        let off = pc.checked_sub(self.base).ok_or(Fault::PcOutOfCode)?;
        if off % 4 != 0 {
            return Err(Fault::PcOutOfCode);
        }
        let k = usize::try_from(off / 4).map_err(|_| Fault::PcOutOfCode)?;
        let slot = *self.slots.get(k).ok_or(Fault::PcOutOfCode)?;
        if slot != 0 {
            return Ok(slot as usize - 1);
        }
        let inst = decode(self.target, &self.words[k..]).map_err(|e| match e {
            DecodeError::Unknown { word0, word1 } => Fault::UnknownEncoding { word0, word1 },
            DecodeError::Truncated => Fault::PcOutOfCode,
        })?;
        self.decoded.push(inst);
        self.slots[k] = self.decoded.len() as u32;
        Ok(self.decoded.len() - 1)
    }

    /// The decoded instruction at `index` (from [`Program::index_of`]).
    pub(crate) fn instruction(&self, index: usize) -> &Instruction {
        &self.decoded[index]
    }
}
