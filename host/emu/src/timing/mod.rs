//! Time: a cycle model of the compute units and the memory below them, which estimates how long
//! a dispatch takes on a named device.
//!
//! It is a model, not a measurement. Waves issue in order under the pipes' and the memory
//! counters' rules; each cache level has a size, a latency and a bandwidth; DRAM has a latency
//! and a bandwidth. The cycles become time at a clock that falls with the matrix cores' use, as
//! the power manager lowers it under dense matrix work. Its constants and their sources are in
//! [`DEVICES`]; what it leaves out (the instruction cache, the dispatcher's launch rate, DRAM
//! pages and refresh, other clock changes) is listed in `docs/performance.md` with its error
//! against published measurements.

mod cache;
pub(crate) mod cost;
mod devices;
mod memory;
pub(crate) mod model;

pub use devices::{CacheLevel, DEVICES, Device, Dram, MAF_MATRIX_USE};

use crate::target::Target;
use std::fmt;
use std::ops::AddAssign;

/// A timing device of another target than the GPU's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceMismatch {
    /// The device asked for.
    pub device: &'static Device,
    /// The target the GPU emulates.
    pub target: Target,
}

impl fmt::Display for DeviceMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let others: Vec<&str> = Device::of_target(self.target).map(|d| d.name).collect();
        write!(
            f,
            "{} is a {} device, and the code runs on {}: choose one of {}",
            self.device.name,
            self.device.target,
            self.target,
            others.join(", ")
        )
    }
}

impl std::error::Error for DeviceMismatch {}

/// What held a wave back from issuing as early as it could.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stall {
    /// Its issue period, or a vector or scalar ALU pipe busy with other waves.
    Issue,
    /// An earlier result `s_delay_alu` names. (`s_nop` wait states and `s_sleep` are those
    /// instructions' own time: the wave is busy with them, not waiting.)
    Dependency,
    /// Waiting for global or scalar memory, as long as the data would take with no queueing.
    Memory,
    /// Waiting for global memory beyond that: queueing for a cache's or DRAM's bandwidth.
    Bandwidth,
    /// Waiting for the LDS, or for its results.
    Lds,
    /// Waiting at a barrier for the workgroup's other waves.
    Barrier,
    /// The SIMD's matrix core busy with an earlier matrix instruction.
    Matrix,
}

impl Stall {
    /// Every reason, in the order of [`TimingSummary::stalls`].
    pub const ALL: [Stall; 7] = [
        Stall::Issue,
        Stall::Dependency,
        Stall::Memory,
        Stall::Bandwidth,
        Stall::Lds,
        Stall::Barrier,
        Stall::Matrix,
    ];

    /// The reason's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stall::Issue => "issue",
            Stall::Dependency => "dependency",
            Stall::Memory => "memory latency",
            Stall::Bandwidth => "bandwidth",
            Stall::Lds => "LDS",
            Stall::Barrier => "barrier",
            Stall::Matrix => "matrix core busy",
        }
    }
}

/// The hottest loop of a dispatch: the backward jump whose body took the most wave-cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopTime {
    /// PC of the loop's first instruction (the jump's target).
    pub first_pc: u64,
    /// PC of the jump back.
    pub last_pc: u64,
    /// Wave-instructions the loop issued.
    pub instructions: u64,
    /// Wave-cycles its instructions waited, per [`Stall::ALL`] reason.
    pub stalls: [u64; 7],
}

/// The estimated time of a dispatch (or the sum over dispatches) on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingSummary {
    /// The device's name.
    pub device: &'static str,
    /// Engine cycles from the first wave's start until the last wave ended.
    pub cycles: u64,
    /// The same in picoseconds, at the clock the device runs at for the dispatch's use of the
    /// matrix cores ([`Device::clock_under_matrix_use`]).
    pub picoseconds: u64,
    /// Wave-cycles waves waited before issuing, per [`Stall::ALL`] reason.
    pub stalls: [u64; 7],
    /// Cycles the matrix cores were busy, summed over SIMDs.
    pub matrix_busy: u64,
    /// Bytes moved between the last cache level and DRAM.
    pub dram_bytes: u64,
    /// The hottest loop, if the dispatch jumped back at all.
    pub main_loop: Option<LoopTime>,
}

impl TimingSummary {
    /// The estimated time in seconds.
    pub fn seconds(&self) -> f64 {
        self.picoseconds as f64 * 1e-12
    }

    /// The engine clock in MHz the estimate ran at (averaged over dispatches, by time).
    pub fn clock_mhz(&self) -> f64 {
        if self.picoseconds == 0 {
            return 0.0;
        }
        self.cycles as f64 / self.picoseconds as f64 * 1e6
    }

    /// Wave-cycles waited for `reason`.
    pub fn stalled(&self, reason: Stall) -> u64 {
        self.stalls[reason as usize]
    }
}

impl AddAssign<&TimingSummary> for TimingSummary {
    /// Dispatches one after another: times add up, the main loop stays the first's.
    fn add_assign(&mut self, o: &TimingSummary) {
        self.cycles += o.cycles;
        self.picoseconds += o.picoseconds;
        for (a, b) in self.stalls.iter_mut().zip(o.stalls) {
            *a += b;
        }
        self.matrix_busy += o.matrix_busy;
        self.dram_bytes += o.dram_bytes;
        if self.main_loop.is_none() {
            self.main_loop = o.main_loop.clone();
        }
    }
}
