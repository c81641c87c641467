//! Errors of a dispatch: what went wrong, and where (kernel, workgroup, wave, PC, instruction).

use crate::memory::MemoryError;
use std::fmt;
use thiserror::Error;

/// What went wrong while running a kernel.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum Fault {
    /// A global/flat/buffer/scalar access outside every allocation.
    #[error("memory fault: {write} {bytes} bytes at {address:#x}", write = if *.write { "write of" } else { "read of" })]
    Memory {
        /// First byte of the access.
        address: u64,
        /// Access size in bytes.
        bytes: u32,
        /// Whether it was a write.
        write: bool,
    },
    /// A global or scalar access into one of the emulator's own regions that a kernel may not
    /// access that way: a write into the kernarg segment or the dispatch packet, any global
    /// access into scratch's backing store.
    #[error("{verb} {bytes} bytes at {address:#x} into {what}", verb = if *.write { "write of" } else { "read of" })]
    Protected {
        /// First byte of the access.
        address: u64,
        /// Access size in bytes.
        bytes: u32,
        /// Whether it was a write.
        write: bool,
        /// What the region holds.
        what: &'static str,
    },
    /// An LDS access outside the workgroup's LDS allocation.
    #[error("LDS access of {bytes} bytes at offset {offset:#x} outside the {size}-byte allocation")]
    Lds {
        /// Byte offset in LDS.
        offset: u64,
        /// Access size in bytes.
        bytes: u32,
        /// The workgroup's LDS size.
        size: u32,
    },
    /// Two waves of a workgroup touched the same LDS dword with no barrier between them, one
    /// of them writing (racecheck): their order, and so the result, is the schedule's.
    #[error("{0}")]
    LdsRace(Box<LdsRace>),
    /// A read of an LDS dword the workgroup never wrote (initcheck): on hardware it holds
    /// whatever the previous workgroup on the CU left there.
    #[error(
        "read of uninitialised LDS: lane {lane} reads LDS offset {offset:#x}, which no wave of the workgroup has written"
    )]
    UninitializedLds {
        /// Byte offset in LDS of the dword.
        offset: u64,
        /// The lane that reads it.
        lane: u32,
    },
    /// A read of device memory that neither the host nor a kernel ever wrote (initcheck):
    /// hardware gives whatever the memory held before it was allocated.
    #[error(
        "read of uninitialised device memory: {}reads {address:#x}, which neither the host nor a kernel has written",
        .lane.map(|l| format!("lane {l} ")).unwrap_or_default()
    )]
    UninitializedMemory {
        /// The first unwritten byte the access reads.
        address: u64,
        /// The lane that reads it (none for a scalar load).
        lane: Option<u32>,
    },
    /// A read of private (scratch) memory the work-item never wrote (initcheck): hardware gives
    /// what an earlier wave left there.
    #[error(
        "read of uninitialised scratch: lane {lane} reads private offset {offset:#x}, which the work-item has not written"
    )]
    UninitializedScratch {
        /// Byte offset in the work-item's private segment.
        offset: u64,
        /// The lane that reads it.
        lane: u32,
    },
    /// An instruction used registers that a load issued earlier may still be writing: no wait
    /// (`s_waitcnt`, `s_wait_*`) for the load stands between them (waitcnt check). Hardware
    /// reads the registers' old value, or the load's value lands after the instruction's write.
    #[error("{0}")]
    WaitcntHazard(Box<WaitcntHazard>),
    /// A VALU instruction wrote registers that a store of more than 8 bytes, issued too few
    /// wait states before, may still be reading its data from (waitcnt check; GFX9 only,
    /// where the code must leave the wait states with `s_nop`). Hardware may store the new
    /// value.
    #[error("{0}")]
    StoreDataHazard(Box<StoreDataHazard>),
    /// A wave read a global dword that another wave of its WGP-mode workgroup stored, without
    /// the release and acquire that make the store visible across the WGP's two CUs
    /// (visibility check). Hardware may return the value the reader's L0 cache held before.
    #[error("{0}")]
    WgpVisibility(Box<WgpVisibility>),
    /// Two waves touched the same global dword, one writing with a plain store, with nothing
    /// ordering them: no barrier of their workgroup, no release and acquire between them
    /// (racecheck on global memory). Their order, and so the result, is the hardware's.
    #[error("{0}")]
    GlobalRace(Box<GlobalRace>),
    /// The waves of a workgroup met at barriers at different PCs (synccheck): a barrier in
    /// code that only some waves run. Lists every waiting wave and the PC of its barrier.
    #[error("divergent barrier: the workgroup's waves wait at different barriers ({})",
        .0.iter().map(|(w, pc)| format!("wave {w} at pc {pc:#x}")).collect::<Vec<_>>().join(", "))]
    DivergentBarrier(Vec<(u32, u64)>),
    /// A scratch (private) access outside the lane's private segment.
    #[error(
        "scratch access of {bytes} bytes at offset {offset:#x} outside the {size}-byte private segment"
    )]
    Scratch {
        /// Byte offset in the lane's private segment.
        offset: u64,
        /// Access size in bytes.
        bytes: u32,
        /// Private segment size per lane.
        size: u32,
    },
    /// Words at the PC do not decode.
    #[error("unknown instruction encoding {word0:#010x} {word1:#010x}")]
    UnknownEncoding {
        /// First dword.
        word0: u32,
        /// Second dword.
        word1: u32,
    },
    /// The PC left the loaded code.
    #[error("program counter outside the loaded code")]
    PcOutOfCode,
    /// A decodable instruction the emulator does not execute.
    #[error("unsupported instruction")]
    Unsupported,
    /// A whole class of instructions the emulator decodes and prints but does not execute.
    #[error("{0} are not executed by the emulator")]
    NotExecuted(&'static str),
    /// An instruction names a register that does not exist or is of the wrong kind.
    #[error("invalid register operand: {0}")]
    Register(String),
    /// `s_trap` was executed.
    #[error("s_trap {0}")]
    Trap(u16),
    /// RDNA's illegal instruction (the all-zero word) was executed: hardware raises an
    /// illegal-instruction exception. Code that runs into it usually ran past its end into the
    /// padding between functions.
    #[error("illegal instruction (the all-zero word; execution ran into padding?)")]
    IllegalInstruction,
}

/// An LDS race: the access that found it (its wave, PC and instruction are the error's) and the
/// earlier access of another wave it conflicts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdsRace {
    /// Byte offset in LDS of the dword both touched.
    pub offset: u64,
    /// The lane of this access.
    pub lane: u32,
    /// What this access is after the other: "a read after a write", "a write after a read" or
    /// "a write after a write".
    pub what: &'static str,
    /// The other wave (its index in the workgroup).
    pub other_wave: u32,
    /// The other access's PC, when known.
    pub other_pc: Option<u64>,
}

impl fmt::Display for LdsRace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LDS race: lane {} makes {} of LDS offset {:#x} by wave {}",
            self.lane, self.what, self.offset, self.other_wave
        )?;
        if let Some(pc) = self.other_pc {
            write!(f, " at pc {pc:#x}")?;
        }
        f.write_str(" with no barrier between them")
    }
}

/// A waitcnt hazard: the load whose destination the instruction (the error's) used too early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitcntHazard {
    /// The registers used that the load writes, as assembly names them.
    pub registers: String,
    /// The PC of the load.
    pub load_pc: u64,
    /// The load's disassembly.
    pub load: String,
    /// The counter a wait must drain, as the target's assembly names it.
    pub counter: &'static str,
}

impl fmt::Display for WaitcntHazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "waitcnt hazard: {} may still be written by `{}` at pc {:#x}, issued earlier with \
             no wait for {} since",
            self.registers, self.load, self.load_pc, self.counter
        )
    }
}

/// A store-data hazard: the store whose data the instruction (the error's) overwrote too soon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDataHazard {
    /// The store's data registers the instruction writes, as assembly names them.
    pub registers: String,
    /// The PC of the store.
    pub store_pc: u64,
    /// The store's disassembly.
    pub store: String,
    /// The wait states the target needs between the store and a write of its data.
    pub wait_states: u8,
}

impl fmt::Display for StoreDataHazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "store data hazard: {} may still be read by `{}` at pc {:#x}, issued fewer than {} \
             wait state(s) earlier (put `s_nop {}` after the store)",
            self.registers,
            self.store,
            self.store_pc,
            self.wait_states,
            self.wait_states.saturating_sub(1)
        )
    }
}

/// A WGP visibility fault: the store the read (the error's) may not see, and what is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgpVisibility {
    /// The dword read.
    pub address: u64,
    /// The lane that reads it.
    pub lane: u32,
    /// The wave of the workgroup that stored it.
    pub writer_wave: u32,
    /// The PC of the store.
    pub writer_pc: u64,
    /// What the memory model asks for and the code lacks.
    pub missing: String,
}

impl fmt::Display for WgpVisibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "WGP visibility: lane {} reads {:#x}, stored by wave {} at pc {:#x}, without {}: \
             the waves may be on different CUs of the WGP",
            self.lane, self.address, self.writer_wave, self.writer_pc, self.missing
        )
    }
}

/// A race on global memory: the access that found it (its workgroup, wave, PC and instruction
/// are the error's) and the earlier access of another wave it conflicts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalRace {
    /// The dword both touched.
    pub address: u64,
    /// The lane of this access.
    pub lane: u32,
    /// What this access is after the other: "a read after a write", "a write after a read" or
    /// "a write after a write".
    pub what: &'static str,
    /// The other access's workgroup.
    pub other_workgroup: [u32; 3],
    /// The other access's wave (its index in its workgroup).
    pub other_wave: u32,
    /// The other access's PC.
    pub other_pc: u64,
    /// What would order the two accesses, with the target's code for it.
    pub missing: String,
}

impl fmt::Display for GlobalRace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.other_workgroup;
        write!(
            f,
            "global memory race: lane {} makes {} of {:#x} by workgroup ({x}, {y}, {z}) wave {} \
             at pc {:#x}, with nothing ordering them: missing {}",
            self.lane, self.what, self.address, self.other_wave, self.other_pc, self.missing
        )
    }
}

impl Fault {
    /// The fault of a kernel's global or scalar access of `bytes` at `address` that memory refused.
    pub(crate) fn from_memory(e: MemoryError, address: u64, bytes: u32, write: bool) -> Fault {
        match e {
            MemoryError::Unwritten { address } => Fault::UninitializedMemory {
                address,
                lane: None,
            },
            MemoryError::Protected { what, .. } => Fault::Protected {
                address,
                bytes,
                write,
                what,
            },
            _ => Fault::Memory {
                address,
                bytes,
                write,
            },
        }
    }
}

/// What a wave was doing when a dispatch stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveStatus {
    /// Running: its next instruction is the one shown.
    Running,
    /// Waiting at a workgroup barrier for the workgroup's other waves.
    AtBarrier,
    /// Finished (`s_endpgm`).
    Done,
}

impl fmt::Display for WaveStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WaveStatus::Running => "running",
            WaveStatus::AtBarrier => "waiting at a barrier",
            WaveStatus::Done => "finished",
        })
    }
}

/// Where one wave stood when a dispatch ran out of its instruction budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveSnapshot {
    /// Workgroup id (x, y, z).
    pub workgroup: [u32; 3],
    /// Wave index within the workgroup.
    pub wave: u32,
    /// Address of its next instruction.
    pub pc: u64,
    /// That instruction, disassembled (empty when it does not decode).
    pub instruction: String,
    /// What the wave was doing.
    pub status: WaveStatus,
}

impl fmt::Display for WaveSnapshot {
    /// The wave's workgroup, index, PC, status and next instruction, on one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(
            f,
            "workgroup ({x}, {y}, {z}) wave {} at pc {:#x}, {}: `{}`",
            self.wave, self.pc, self.status, self.instruction
        )
    }
}

/// The resident waves of a dispatch that ran out of its budget, as one line: each wave when
/// there are few, otherwise the places they stood (PC and status) with how many waves stood
/// there, most first, so that a stuck grid of thousands of waves reads in a sentence.
pub struct ResidentWaves<'a>(pub &'a [WaveSnapshot]);

impl ResidentWaves<'_> {
    /// Waves listed one by one up to this many (four workgroups of four waves).
    const LISTED_WAVES: usize = 16;
    /// Places listed up to this many.
    const LISTED_PLACES: usize = 8;
}

impl fmt::Display for ResidentWaves<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let waves = self.0;
        if waves.len() <= Self::LISTED_WAVES {
            for (k, w) in waves.iter().enumerate() {
                write!(f, "{}{w}", if k == 0 { "" } else { "; " })?;
            }
            return Ok(());
        }
        let mut places: Vec<(&WaveSnapshot, usize)> = Vec::new();
        for w in waves {
            match places
                .iter_mut()
                .find(|(first, _)| first.pc == w.pc && first.status == w.status)
            {
                Some((_, count)) => *count += 1,
                None => places.push((w, 1)),
            }
        }
        places.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.pc.cmp(&b.0.pc)));
        write!(f, "{} waves at {} places", waves.len(), places.len())?;
        for (first, count) in places.iter().take(Self::LISTED_PLACES) {
            let [x, y, z] = first.workgroup;
            write!(
                f,
                "; {count} at pc {:#x}, {}: `{}` (first workgroup ({x}, {y}, {z}) wave {})",
                first.pc, first.status, first.instruction, first.wave
            )?;
        }
        if places.len() > Self::LISTED_PLACES {
            let rest: usize = places[Self::LISTED_PLACES..]
                .iter()
                .map(|(_, count)| count)
                .sum();
            write!(
                f,
                "; {rest} at {} other places",
                places.len() - Self::LISTED_PLACES
            )?;
        }
        Ok(())
    }
}

/// A failed dispatch.
#[derive(Clone, Debug, PartialEq)]
pub enum EmuError {
    /// The dispatch itself is malformed (before any instruction ran).
    InvalidDispatch {
        /// Kernel name.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// A device memory operation failed outside kernel execution.
    Memory(MemoryError),
    /// The dispatch ran more wave-instructions than its budget: a loop that does not end, or a
    /// wait for something that never comes. Says where every resident wave stood.
    BudgetExceeded {
        /// Kernel name.
        kernel: String,
        /// The budget, in wave-instructions.
        budget: u64,
        /// Workgroups that had finished.
        finished_workgroups: u64,
        /// Workgroups of the grid.
        workgroups: u64,
        /// Every resident wave.
        waves: Vec<WaveSnapshot>,
    },
    /// Execution failed.
    Execution {
        /// Kernel name.
        kernel: String,
        /// Workgroup id (x, y, z).
        workgroup: [u32; 3],
        /// Wave index within the workgroup.
        wave: u32,
        /// Address of the instruction.
        pc: u64,
        /// The instruction, disassembled (empty if it could not be decoded: the fault then
        /// names its words).
        instruction: String,
        /// What went wrong.
        fault: Fault,
    },
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::InvalidDispatch { kernel, reason } => {
                write!(f, "kernel `{kernel}`: invalid dispatch: {reason}")
            }
            EmuError::Memory(e) => write!(f, "device memory: {e}"),
            EmuError::BudgetExceeded {
                kernel,
                budget,
                finished_workgroups,
                workgroups,
                waves,
            } => {
                write!(
                    f,
                    "kernel `{kernel}`: instruction budget of {budget} wave-instructions exceeded \
                     ({finished_workgroups} of {workgroups} workgroups finished); the resident waves: \
                     {}",
                    ResidentWaves(waves)
                )
            }
            EmuError::Execution {
                kernel,
                workgroup,
                wave,
                pc,
                instruction,
                fault,
            } => {
                write!(
                    f,
                    "kernel `{kernel}`: {fault} in workgroup ({}, {}, {}) wave {wave} at pc {pc:#x}",
                    workgroup[0], workgroup[1], workgroup[2]
                )?;
                if instruction.is_empty() {
                    Ok(())
                } else {
                    write!(f, ": `{instruction}`")
                }
            }
        }
    }
}

impl std::error::Error for EmuError {}

impl From<MemoryError> for EmuError {
    fn from(e: MemoryError) -> Self {
        EmuError::Memory(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(group: u32, wave: u32, pc: u64, status: WaveStatus) -> WaveSnapshot {
        WaveSnapshot {
            workgroup: [group, 0, 0],
            wave,
            pc,
            instruction: format!("s_nop {pc}"),
            status,
        }
    }

    #[test]
    fn few_resident_waves_are_listed_one_by_one() {
        let waves = [
            wave(0, 0, 16, WaveStatus::Running),
            wave(0, 1, 32, WaveStatus::AtBarrier),
        ];
        assert_eq!(
            ResidentWaves(&waves).to_string(),
            "workgroup (0, 0, 0) wave 0 at pc 0x10, running: `s_nop 16`; \
             workgroup (0, 0, 0) wave 1 at pc 0x20, waiting at a barrier: `s_nop 32`"
        );
    }

    #[test]
    fn many_resident_waves_are_counted_by_place_most_first() {
        let mut waves: Vec<WaveSnapshot> = (0..300)
            .map(|k| wave(k / 4, k % 4, 0x100, WaveStatus::AtBarrier))
            .collect();
        waves.extend((0..20).map(|k| wave(k, 0, 0x200, WaveStatus::Running)));
        waves.extend((0..10).map(|k| wave(k, 1, 0x100, WaveStatus::Running)));
        waves.extend((0..9).map(|k| wave(k, 2, 0x300 + 4 * u64::from(k), WaveStatus::Running)));
        let text = ResidentWaves(&waves).to_string();
        assert!(
            text.starts_with(
                "339 waves at 12 places; 300 at pc 0x100, waiting at a barrier: `s_nop 256` \
                 (first workgroup (0, 0, 0) wave 0); 20 at pc 0x200, running: `s_nop 512` \
                 (first workgroup (0, 0, 0) wave 0); 10 at pc 0x100, running: `s_nop 256` \
                 (first workgroup (0, 0, 0) wave 1); 1 at pc 0x300"
            ),
            "{text}"
        );
        assert!(text.ends_with("; 4 at 4 other places"), "{text}");
    }
}
