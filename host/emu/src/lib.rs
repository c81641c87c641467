//! A software AMD GPU: an AMDGPU ISA emulator that executes real code objects.
//!
//! The emulator plays the part of the hardware. It receives what a driver hands a GPU (the loaded
//! code, a kernel's entry point and descriptor, the kernarg bytes, the grid) and runs the kernel wave
//! by wave, instruction by instruction, reporting memory faults, unknown instructions and traps as
//! errors that name the kernel, workgroup, wave, PC and instruction.
//!
//! Decoding is table driven: the per-family opcode tables are generated from AMD's machine-readable
//! ISA data (see `gen/`), and each family lives in its own module: `gfx9` (CDNA: gfx90a, gfx942,
//! gfx950) and `rdna` (gfx1100, gfx1201).
#![deny(missing_docs)]

mod counters;
mod dispatch;
mod error;
pub mod gfx9;
mod machine;
mod memory;
pub mod rdna;
mod target;
pub mod timing;

pub use counters::{ACCESS_WIDTHS, Counters, InstructionClass};
pub use dispatch::{
    CodeId, DEFAULT_INSTRUCTION_BUDGET, DecodedInstruction, Dispatch, Gpu, KernelDescriptor,
    Progress, ProgressHook, TraceEvent, disassemble,
};
pub use error::{
    EmuError, Fault, GlobalRace, LdsRace, ResidentWaves, StoreDataHazard, WaitcntHazard,
    WaveSnapshot, WaveStatus, WgpVisibility,
};
pub use machine::{Checks, ChecksParseError, Schedule, ScheduleParseError};
pub use memory::{DeviceMemory, MemoryError};
pub use target::{Target, WaveSize};
