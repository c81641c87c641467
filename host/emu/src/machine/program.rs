//! Loaded code and its decoded-instruction caches: each instruction is decoded once, on first use,
//! per wave size (RDNA lane-mask operands differ between wave32 and wave64).

use super::Isa;
use super::operand::DecodeError;
use super::races::AgentSync;
use super::store_data::StoreData;
use super::visibility::Sync;
use super::waitcnt::{Counting, Footprint};
use super::wave::VectorRows;
use crate::WaveSize;
use crate::error::Fault;
use crate::target::Target;
use crate::timing::cost::Cost;

/// What the waitcnt, visibility and global racecheck need of one decoded instruction.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dependencies {
    /// The registers it names (the waitcnt check).
    pub footprint: Footprint,
    /// How it takes part in the wait counters (the waitcnt check).
    pub counting: Counting,
    /// What it does for the visibility of global stores in WGP mode.
    pub sync: Sync,
    /// Whether its global reads bypass the CU's L0 cache (GFX11 `glc`, GFX12 scope SE or
    /// wider), seeing every completed store of the workgroup without an acquire.
    pub bypasses_l0: bool,
    /// What it does towards an agent-scope release or acquire (the global racecheck).
    pub agent: AgentSync,
    /// Whether its global accesses are coherent ones, as volatile and atomic loads and stores
    /// are compiled (the global racecheck leaves them alone).
    pub coherent: bool,
    /// What it does towards the store-data hazard (the waitcnt check).
    pub store_data: StoreData,
}

/// A target's code for the releases and acquires of LLVM's AMDGPUUsage memory model, as the
/// checks' errors name it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FenceCode {
    /// An agent-scope release (the global racecheck).
    pub agent_release: &'static str,
    /// An agent-scope acquire (the global racecheck).
    pub agent_acquire: &'static str,
    /// A workgroup-scope release in WGP mode (the visibility check); `None` without WGP mode.
    pub wgp_release: Option<&'static str>,
    /// A workgroup-scope acquire in WGP mode (the visibility check); `None` without WGP mode.
    pub wgp_acquire: Option<&'static str>,
}

/// Instructions decoded for one wave size.
#[derive(Clone)]
struct Cache<T> {
    /// Per dword of code: 0 if not decoded yet, else index + 1 into `decoded`.
    slots: Vec<u32>,
    decoded: Vec<T>,
    /// The vector registers each decoded instruction names.
    rows: Vec<VectorRows>,
    /// What the checks need of each decoded instruction.
    dependencies: Vec<Dependencies>,
    /// What each decoded instruction asks of the pipes (timing mode).
    costs: Vec<Cost>,
}

impl<T> Cache<T> {
    fn new() -> Cache<T> {
        Cache {
            slots: Vec::new(),
            decoded: Vec::new(),
            rows: Vec::new(),
            dependencies: Vec::new(),
            costs: Vec::new(),
        }
    }
}

/// Code loaded at a device address, with the instructions decoded so far.
pub struct Program<I: Isa> {
    target: Target,
    base: u64,
    words: Vec<u32>,
    /// Caches for wave32 and wave64 code.
    caches: [Cache<I::Instruction>; 2],
}

impl<I: Isa> Clone for Program<I> {
    fn clone(&self) -> Self {
        Program {
            target: self.target,
            base: self.base,
            words: self.words.clone(),
            caches: self.caches.clone(),
        }
    }
}

fn cache_index(wave: WaveSize) -> usize {
    match wave {
        WaveSize::Wave32 => 0,
        WaveSize::Wave64 => 1,
    }
}

impl<I: Isa> Program<I> {
    /// Code `text` loaded at `base` for `target`.
    pub(crate) fn new(target: Target, text: &[u8], base: u64) -> Program<I> {
        let words: Vec<u32> = text
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        Program {
            target,
            base,
            words,
            caches: [Cache::new(), Cache::new()],
        }
    }

    /// Index of the decoded instruction at `pc` for waves of `wave` lanes, decoding it on first use.
    pub(crate) fn index_of(&mut self, pc: u64, wave: WaveSize) -> Result<usize, Fault> {
        let off = pc.checked_sub(self.base).ok_or(Fault::PcOutOfCode)?;
        if off % 4 != 0 {
            return Err(Fault::PcOutOfCode);
        }
        let k = usize::try_from(off / 4).map_err(|_| Fault::PcOutOfCode)?;
        if k >= self.words.len() {
            return Err(Fault::PcOutOfCode);
        }
        let cache = &mut self.caches[cache_index(wave)];
        if cache.slots.is_empty() {
            cache.slots = vec![0; self.words.len()];
        }
        let slot = cache.slots[k];
        if slot != 0 {
            return Ok(slot as usize - 1);
        }
        let inst = I::decode(self.target, wave, &self.words[k..]).map_err(|e| match e {
            DecodeError::Unknown { word0, word1 } => Fault::UnknownEncoding { word0, word1 },
            DecodeError::Truncated => Fault::PcOutOfCode,
        })?;
        let dependencies = I::dependencies(self.target, &inst);
        cache
            .rows
            .push(VectorRows::covering(&dependencies.footprint));
        cache.dependencies.push(dependencies);
        cache.costs.push(I::cost(self.target, &inst));
        cache.decoded.push(inst);
        cache.slots[k] = cache.decoded.len() as u32;
        Ok(cache.decoded.len() - 1)
    }

    /// The decoded instruction at `index` (from [`Program::index_of`] with the same wave size).
    pub(crate) fn instruction(&self, wave: WaveSize, index: usize) -> &I::Instruction {
        &self.caches[cache_index(wave)].decoded[index]
    }

    /// The vector registers the decoded instruction at `index` names.
    pub(crate) fn rows(&self, wave: WaveSize, index: usize) -> VectorRows {
        self.caches[cache_index(wave)].rows[index]
    }

    /// What the decoded instruction at `index` asks of the pipes.
    pub(crate) fn cost(&self, wave: WaveSize, index: usize) -> &Cost {
        &self.caches[cache_index(wave)].costs[index]
    }

    /// What the waitcnt check needs of the decoded instruction at `index`.
    pub(crate) fn dependencies(&self, wave: WaveSize, index: usize) -> &Dependencies {
        &self.caches[cache_index(wave)].dependencies[index]
    }
}
