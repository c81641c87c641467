//! The machine model both ISA families run on: waves, workgroups, LDS, scratch, and the dispatcher.
//!
//! Every workgroup that fits on the device is resident at once and a seeded scheduler interleaves
//! their waves (or, in the [`Schedule::InOrder`] schedule, workgroups run one after another).
//! Each wave executes decoded instructions from a [`Program`]'s cache; what an instruction does
//! is its family's business ([`Isa`]).

mod checks;
mod handoff;
mod lds;
pub(crate) mod operand;
mod program;
pub(crate) mod races;
mod ready;
mod residency;
mod run;
mod schedule;
pub(crate) mod store_data;
pub(crate) mod visibility;
pub(crate) mod waitcnt;
pub(crate) mod wave;

pub use checks::{Checks, ChecksParseError};
pub(crate) use lds::Lds;
pub use program::Program;
pub(crate) use program::{Dependencies, FenceCode};
pub(crate) use run::RunOptions;
pub use schedule::{Schedule, ScheduleParseError};
pub(crate) use wave::Wave;

use crate::WaveSize;
use crate::counters::{Counters, InstructionClass};
use crate::dispatch::{DecodedInstruction, Dispatch, TraceEvent};
use crate::error::{EmuError, Fault};
use crate::memory::{Access, DeviceMemory, MemoryError, SharedMemory};
use crate::target::Target;
use crate::timing::cost::Cost;
use crate::timing::model::Effects;
use operand::DecodeError;

/// An instruction set the machine executes: how its code decodes, runs and prints, and what state
/// its waves start in.
pub(crate) trait Isa {
    /// A decoded instruction (each worker thread of a dispatch has its own decoded copy).
    type Instruction: Clone + Send;

    /// Decodes the instruction at the start of `words` for waves of `wave` lanes.
    fn decode(
        target: Target,
        wave: WaveSize,
        words: &[u32],
    ) -> Result<Self::Instruction, DecodeError>;

    /// Length of `i` in bytes.
    fn len(i: &Self::Instruction) -> u8;

    /// The registers `i` names and how it takes part in the wait counters (the waitcnt check).
    fn dependencies(target: Target, i: &Self::Instruction) -> Dependencies;

    /// `target`'s code for the memory model's releases and acquires, for the checks' errors.
    fn fence_code(target: Target) -> FenceCode;

    /// Executes `i` on wave `w`.
    fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Self::Instruction) -> Result<Flow, Fault>;

    /// What `i` asks of the compute unit's pipes (the timing model).
    fn cost(target: Target, i: &Self::Instruction) -> Cost;

    /// `i` as text, for error messages.
    fn disassemble(target: Target, i: &Self::Instruction) -> String;

    /// `i` as a trace callback sees it.
    fn traced(i: &Self::Instruction) -> DecodedInstruction<'_>;

    /// Sets up wave `index` of workgroup `group` as the hardware does before the first
    /// instruction, its private memory at wave `scratch_wave` of the scratch backing store.
    fn initialize(
        w: &mut Wave,
        target: Target,
        d: &Dispatch<'_>,
        launch: &LaunchState,
        group: [u32; 3],
        index: u32,
        scratch_wave: u32,
    );
}

/// High 32 bits of the shared (LDS) aperture: flat addresses `0x0001_0000_xxxx_xxxx` are LDS.
pub const SHARED_APERTURE_HI: u32 = 0x0001_0000;
/// High 32 bits of the private (scratch) aperture: flat addresses `0x0002_0000_xxxx_xxxx` are scratch.
pub const PRIVATE_APERTURE_HI: u32 = 0x0002_0000;

/// What an instruction asks of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Continue with the next instruction.
    Next,
    /// Continue at this address.
    Jump(u64),
    /// The wave waits at a barrier.
    Barrier,
    /// The wave has ended.
    End,
}

/// Scratch backing store of a dispatch: per-lane private segments, dword-interleaved per wave.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Scratch {
    /// Device address of the backing allocation (0 if the kernel has no scratch).
    pub base: u64,
    /// Private bytes per lane.
    pub per_lane: u32,
}

impl Scratch {
    /// Bytes of backing store per wave (laid out for 64 lanes whatever the wave size).
    pub fn per_wave(&self) -> u64 {
        u64::from(self.per_lane) * 64
    }
}

/// Everything an instruction may touch besides its wave.
pub(crate) struct Ctx<'a> {
    pub target: Target,
    /// The target's code for releases and acquires, as the checks' errors name it.
    pub fences: FenceCode,
    pub mem: &'a SharedMemory<'a>,
    pub lds: &'a mut Lds,
    /// The running wave's index in its workgroup, and the PC of its instruction.
    pub wave_index: u32,
    pub pc: u64,
    pub counters: &'a mut Counters,
    pub scratch: Scratch,
    /// The workgroup's record of its global stores (the WGP-mode visibility check).
    pub visibility: &'a mut visibility::Visibility,
    /// Whether the running instruction's global reads bypass the L0 cache.
    pub bypasses_l0: bool,
    /// What the dispatch's waves share for the racecheck on global memory, if it runs.
    pub races: Option<&'a races::GlobalRaces>,
    /// The running wave's part in it.
    pub order: &'a mut races::WaveOrder,
    /// Whether the running instruction's global accesses are coherent ones (volatile or
    /// atomic), which the racecheck leaves alone.
    pub coherent: bool,
    /// The dispatch's grid, in workgroups (to name the other party of a race).
    pub grid: [u32; 3],
    /// In timing mode: the cycle the running instruction issues at, and the device's clock in MHz
    /// (what `s_memtime` and `s_memrealtime` read).
    pub now: Option<(f64, f64)>,
    /// In timing mode: what the running instruction does that its time depends on.
    pub effects: Option<&'a mut Effects>,
}

impl Ctx<'_> {
    pub fn count(&mut self, class: InstructionClass) {
        self.counters.instructions[class.index()] += 1;
    }

    /// What `s_memtime` reads: the modelled cycle in timing mode, else the wave-instructions run
    /// so far.
    pub fn shader_cycles(&self) -> u64 {
        match self.now {
            Some((cycle, _)) => cycle as u64,
            None => self.counters.total_instructions(),
        }
    }

    /// What `s_memrealtime` reads: a count of a constant 100 MHz clock, from the modelled cycle at
    /// the peak clock in timing mode (the dispatch's clock under matrix work is known only at its
    /// end), else the wave-instructions run so far.
    pub fn real_time(&self) -> u64 {
        match self.now {
            Some((cycle, mhz)) => (cycle * 100.0 / mhz) as u64,
            None => self.counters.total_instructions(),
        }
    }

    /// Records a global access of `len` bytes at `address` for the timing model.
    fn touched(&mut self, address: u64, len: usize, write: bool) {
        if let Some(e) = self.effects.as_mut() {
            e.accesses.push((address, len as u32, write));
        }
    }

    fn lds_accessor(&self, lane: usize) -> lds::Accessor {
        lds::Accessor {
            wave: self.wave_index,
            pc: self.pc,
            lane,
        }
    }

    /// Device memory at `address` read into `out` by `lane` of the running wave.
    pub fn global_read(&mut self, address: u64, out: &mut [u8], lane: usize) -> Result<(), Fault> {
        self.mem
            .kernel_read(address, out)
            .map_err(|e| global_fault(e, address, out.len() as u32, false, lane))?;
        self.touched(address, out.len(), false);
        if self.visibility.enabled() && !self.bypasses_l0 {
            self.visibility
                .read(self.wave_index, address, out.len())
                .map_err(|s| self.stale(s, lane))?;
        }
        if let Some(races) = self.races.filter(|_| self.order.checked()) {
            races.read(self.order);
            if !self.coherent {
                self.check_races(
                    address,
                    out.len(),
                    lane,
                    |races, order, entry, bytes, pc| races.plain_read(order, entry, bytes, pc),
                )?;
            }
        }
        Ok(())
    }

    /// `data` written to device memory at `address` by `lane` of the running wave.
    pub fn global_write(&mut self, address: u64, data: &[u8], lane: usize) -> Result<(), Fault> {
        if let Some(races) = self.races.filter(|_| self.order.checked()) {
            races.storing(self.order);
            if self.coherent {
                self.synchronise(address, data.len());
            } else {
                self.check_races(
                    address,
                    data.len(),
                    lane,
                    |races, order, entry, bytes, pc| races.plain_write(order, entry, bytes, pc),
                )?;
            }
        }
        self.mem
            .kernel_write(address, data)
            .map_err(|e| Fault::from_memory(e, address, data.len() as u32, true))?;
        self.touched(address, data.len(), true);
        if self.visibility.enabled() {
            self.visibility
                .stored(self.wave_index, self.pc, address, data.len());
        }
        Ok(())
    }

    /// Runs the racecheck's `check` on each dword `[address, address + len)` touches.
    fn check_races(
        &self,
        address: u64,
        len: usize,
        lane: usize,
        check: impl Fn(
            &races::GlobalRaces,
            &races::WaveOrder,
            &[std::sync::atomic::AtomicU64],
            u64,
            u64,
        ) -> Result<(), races::Conflict>,
    ) -> Result<(), Fault> {
        let (Some(races), Some(shadow)) = (self.races, self.mem.shadow(address, len)) else {
            return Ok(());
        };
        let entries = shadow.chunks(races::SHADOW_WORDS);
        for (entry, (dword, bytes)) in entries.zip(visibility::dwords(address, len)) {
            let mask = (1 << bytes.end) - (1 << bytes.start);
            check(races, self.order, entry, mask, self.pc)
                .map_err(|c| self.global_race(c, dword, lane))?;
        }
        Ok(())
    }

    /// Forgets the racecheck's record of `[address, address + len)`: an atomic or a coherent
    /// store replaces it.
    fn synchronise(&self, address: u64, len: usize) {
        if let Some(shadow) = self.mem.shadow(address, len) {
            shadow
                .chunks(races::SHADOW_WORDS)
                .for_each(races::GlobalRaces::synchronised);
        }
    }

    /// The racecheck's fault for `lane`'s access of the dword at `address`.
    fn global_race(&self, c: races::Conflict, address: u64, lane: usize) -> Fault {
        let [gx, gy, _] = self.grid.map(u64::from);
        let id = c.other_group;
        let other_workgroup = [id % gx, id / gx % gy, id / (gx * gy)].map(|n| n as u32);
        let (release, acquire) = (self.fences.agent_release, self.fences.agent_acquire);
        let missing = match (c.same_group, c.released) {
            (true, _) => "a barrier between them".to_string(),
            (false, false) => format!("the other wave's release ({release}) after its access"),
            (false, true) => format!(
                "this wave's acquire ({acquire}) after reading what the other wave published"
            ),
        };
        Fault::GlobalRace(Box::new(crate::error::GlobalRace {
            address,
            lane: lane as u32,
            what: c.what,
            other_workgroup,
            other_wave: c.other_wave,
            other_pc: c.other_pc,
            missing,
        }))
    }

    /// The `bytes` at `address` replaced by `update` of their value, atomically against every
    /// other wave, by `lane` of the running wave; returns the old value.
    pub fn global_update(
        &mut self,
        address: u64,
        bytes: u32,
        lane: usize,
        update: impl FnOnce(u64) -> u64,
    ) -> Result<u64, Fault> {
        if let Some(races) = self.races.filter(|_| self.order.checked()) {
            races.storing(self.order);
            self.synchronise(address, bytes as usize);
        }
        let old = self
            .mem
            .kernel_update(address, bytes, update)
            .map_err(|e| global_fault(e, address, bytes, true, lane))?;
        self.touched(address, bytes as usize, true);
        if let Some(races) = self.races.filter(|_| self.order.checked()) {
            races.read(self.order);
        }
        if self.visibility.enabled() {
            self.visibility.updated(address, bytes as usize);
        }
        Ok(old)
    }

    /// The visibility fault of `lane`'s read that `stale` describes.
    fn stale(&self, stale: visibility::Stale, lane: usize) -> Fault {
        let code = |c: Option<&'static str>| c.unwrap_or("none on this target");
        let missing = if stale.released {
            format!(
                "the reader's acquire ({}) after the writer's release",
                code(self.fences.wgp_acquire)
            )
        } else {
            format!(
                "the writer's release ({}) after its store",
                code(self.fences.wgp_release)
            )
        };
        Fault::WgpVisibility(Box::new(crate::error::WgpVisibility {
            address: stale.address,
            lane: lane as u32,
            writer_wave: stale.writer,
            writer_pc: stale.writer_pc,
            missing,
        }))
    }

    /// LDS bytes `r` (in range) read by `lane` of the running wave.
    pub fn lds_read(&mut self, r: std::ops::Range<usize>, lane: usize) -> Result<&[u8], Fault> {
        let who = self.lds_accessor(lane);
        self.lds.read(r, who)
    }

    /// LDS bytes `r` (in range) to be written by `lane` of the running wave.
    pub fn lds_write(
        &mut self,
        r: std::ops::Range<usize>,
        lane: usize,
    ) -> Result<&mut [u8], Fault> {
        let who = self.lds_accessor(lane);
        self.lds.write(r, who)
    }

    /// LDS bytes `r` (in range) read and written atomically by `lane` of the running wave.
    pub fn lds_atomic(
        &mut self,
        r: std::ops::Range<usize>,
        lane: usize,
    ) -> Result<&mut [u8], Fault> {
        let who = self.lds_accessor(lane);
        self.lds.atomic(r, who)
    }
}

/// The fault of `lane`'s global access of `bytes` at `address` that failed with `e`.
fn global_fault(e: MemoryError, address: u64, bytes: u32, write: bool, lane: usize) -> Fault {
    match e {
        MemoryError::Unwritten { address } => Fault::UninitializedMemory {
            address,
            lane: Some(lane as u32),
        },
        e => Fault::from_memory(e, address, bytes, write),
    }
}

/// Scratch bytes one wave may have: 8 MiB, what the hardware's per-wave scratch size field
/// (COMPUTE_TMPRING_SIZE.WAVESIZE, 8191 KiB) describes, rounded up. A descriptor asking for
/// more is refused instead of making the emulator allocate it.
const MAX_SCRATCH_PER_WAVE: u64 = 8 << 20;

/// Bytes of scratch backing store a dispatch's resident workgroups may have together.
const MAX_SCRATCH_BACKING: u64 = 1 << 30;

fn invalid(d: &Dispatch<'_>, reason: impl Into<String>) -> EmuError {
    EmuError::InvalidDispatch {
        kernel: d.kernel_name.to_string(),
        reason: reason.into(),
    }
}

/// Runs one dispatch on `target`.
///
/// `programs` holds the loaded code's decoded copies, one per worker thread (the first is the
/// code's own; more are made as needed).
pub(crate) fn run_dispatch<I: Isa>(
    target: Target,
    mem: &mut DeviceMemory,
    programs: &mut Vec<Program<I>>,
    d: &Dispatch<'_>,
    dispatch_id: u64,
    options: RunOptions<'_>,
    mut trace: Option<&mut dyn FnMut(&TraceEvent<'_>)>,
) -> Result<Counters, EmuError> {
    let launch = prepare(target, mem, d, dispatch_id, options)?;
    let result = run::run_groups(target, mem, programs, d, &launch, options, &mut trace);
    let mut cleanup = vec![
        launch.kernarg_address,
        launch.packet_address,
        launch.queue_address,
    ];
    if launch.scratch.base != 0 {
        cleanup.push(launch.scratch.base);
    }
    for a in cleanup {
        mem.free(a)?;
    }
    result
}

fn prepare(
    target: Target,
    mem: &mut DeviceMemory,
    d: &Dispatch<'_>,
    dispatch_id: u64,
    options: RunOptions<'_>,
) -> Result<LaunchState, EmuError> {
    let desc = &d.descriptor;
    let wave = match (desc.wave32(), target.is_rdna()) {
        (false, _) => WaveSize::Wave64,
        (true, true) => WaveSize::Wave32,
        (true, false) => {
            return Err(invalid(
                d,
                "the kernel is built for wave32, the target runs wave64",
            ));
        }
    };
    if desc.kernarg_preload != 0 && target.is_rdna() {
        // AMDGPUUsage: KERNARG_PRELOAD_SPEC is defined for GFX90A and GFX940 onwards only, and
        // reserved (must be 0) elsewhere; LLVM preloads no kernel arguments on RDNA.
        return Err(invalid(
            d,
            format!(
                "the descriptor asks for kernel arguments preloaded into SGPRs \
                 (KERNARG_PRELOAD_SPEC {:#06x}), which {} does not support",
                desc.kernarg_preload,
                target.name()
            ),
        ));
    }
    if d.workgroup_size.contains(&0) {
        return Err(invalid(d, "a workgroup dimension is zero"));
    }
    let threads: u64 = d.workgroup_size.iter().map(|&x| u64::from(x)).product();
    if threads > 1024 {
        return Err(invalid(
            d,
            format!("workgroup of {threads} work-items exceeds 1024"),
        ));
    }
    let lds_size = u64::from(desc.group_segment_fixed_size) + u64::from(d.dynamic_lds);
    if lds_size > u64::from(target.max_lds_bytes()) {
        return Err(invalid(
            d,
            format!(
                "{lds_size} bytes of LDS exceed the target's {}",
                target.max_lds_bytes()
            ),
        ));
    }
    let waves_per_group = (threads as u32).div_ceil(wave.lanes());
    let workgroups: u64 = d.grid.iter().map(|&n| u64::from(n)).product();
    let fill = |compute_units| {
        residency::resident_workgroups(
            target,
            desc,
            wave,
            threads as u32,
            lds_size as u32,
            compute_units,
        )
        .min(u32::try_from(workgroups).unwrap_or(u32::MAX))
        .max(1)
    };
    // Timing mode fills the device it models, whatever the schedule.
    let resident_groups = match (options.timing, options.schedule) {
        (Some(device), _) => fill(device.compute_units),
        (None, Schedule::InOrder) => 1,
        (None, Schedule::Random { .. }) => fill(options.compute_units),
    };
    let kernarg_len = (d.kernarg.len() as u64)
        .max(u64::from(desc.kernarg_size))
        .max(64);
    let kernarg_address = mem.alloc_internal(
        kernarg_len,
        64,
        Access::ReadOnly("the dispatch's kernarg segment"),
    )?;
    // The segment as the runtime fills it: the arguments, zeros after them.
    let mut segment = d.kernarg.to_vec();
    segment.resize(kernarg_len as usize, 0);
    mem.write(kernarg_address, &segment)?;
    let packet_address = mem.alloc_internal(64, 64, Access::ReadOnly("the dispatch packet"))?;
    mem.write(
        packet_address,
        &dispatch_packet(d, kernarg_address, lds_size as u32),
    )?;
    let queue_address = mem.alloc_internal(256, 64, Access::ReadOnly("the dispatch's queue"))?;
    mem.write(queue_address, &[0; 256])?;
    let per_lane = u64::from(desc.private_segment_fixed_size).div_ceil(4) * 4;
    if per_lane * u64::from(wave.lanes()) > MAX_SCRATCH_PER_WAVE {
        return Err(invalid(
            d,
            format!(
                "{per_lane} bytes of scratch per work-item exceed the {} a wave of {} can have",
                MAX_SCRATCH_PER_WAVE / u64::from(wave.lanes()),
                wave.lanes()
            ),
        ));
    }
    // At most 8 MiB / 32 lanes, so it fits.
    let per_lane = per_lane as u32;
    // The driver bounds the waves that hold scratch at once; here the backing store of the
    // resident workgroups stays within MAX_SCRATCH_BACKING (at least one workgroup runs).
    let group_scratch = u64::from(per_lane) * 64 * u64::from(waves_per_group);
    let resident_groups = MAX_SCRATCH_BACKING
        .checked_div(group_scratch)
        .map_or(resident_groups, |fit| {
            resident_groups.min(fit.clamp(1, u64::from(u32::MAX)) as u32)
        });
    let scratch = if per_lane > 0 {
        let base = mem.alloc_internal(
            u64::from(per_lane) * 64 * u64::from(waves_per_group) * u64::from(resident_groups),
            256,
            Access::Hidden(
                "scratch's backing store (private memory is reached through its aperture)",
            ),
        )?;
        Scratch { base, per_lane }
    } else {
        Scratch::default()
    };
    Ok(LaunchState {
        kernarg_address,
        packet_address,
        queue_address,
        scratch,
        lds_size: lds_size as u32,
        waves_per_group,
        resident_groups,
        threads_per_group: threads as u32,
        dispatch_id,
        wave,
    })
}

/// The HSA kernel dispatch packet (64 bytes) for `d`.
fn dispatch_packet(d: &Dispatch<'_>, kernarg_address: u64, lds_size: u32) -> [u8; 64] {
    let mut p = [0u8; 64];
    let dims: u16 = if d.grid[2] > 1 || d.workgroup_size[2] > 1 {
        3
    } else if d.grid[1] > 1 || d.workgroup_size[1] > 1 {
        2
    } else {
        1
    };
    p[0..2].copy_from_slice(&2u16.to_le_bytes()); // HSA_PACKET_TYPE_KERNEL_DISPATCH
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for k in 0..3 {
        p[4 + 2 * k..6 + 2 * k].copy_from_slice(&(d.workgroup_size[k] as u16).to_le_bytes());
        let grid = d.grid[k].saturating_mul(d.workgroup_size[k]);
        p[12 + 4 * k..16 + 4 * k].copy_from_slice(&grid.to_le_bytes());
    }
    p[24..28].copy_from_slice(&d.descriptor.private_segment_fixed_size.to_le_bytes());
    p[28..32].copy_from_slice(&lds_size.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg_address.to_le_bytes());
    p
}

/// The per-launch facts wave initialisation needs.
#[derive(Clone, Copy)]
pub(crate) struct LaunchState {
    pub kernarg_address: u64,
    pub packet_address: u64,
    pub queue_address: u64,
    pub scratch: Scratch,
    pub lds_size: u32,
    pub waves_per_group: u32,
    /// Workgroups the device holds at once (1 in the in-order schedule).
    pub resident_groups: u32,
    pub threads_per_group: u32,
    pub dispatch_id: u64,
    /// Lanes per wave of this dispatch.
    pub wave: WaveSize,
}

#[cfg(test)]
mod tests {
    use crate::{Dispatch, EmuError, Gpu, KernelDescriptor, Target};

    /// Dispatches `s_endpgm` on gfx950 (wave64) with `private` scratch bytes per work-item.
    fn dispatch_with_scratch(private: u32) -> Result<(), EmuError> {
        let mut gpu = Gpu::new(Target::Gfx950);
        let code = 0xbf81_0000u32.to_le_bytes();
        let base = gpu.memory_mut().alloc(4, 4096).unwrap();
        let code_id = gpu.load_code(&code, base);
        let d = Dispatch {
            kernel_name: "scratch",
            code: code_id,
            entry: base,
            descriptor: KernelDescriptor {
                private_segment_fixed_size: private,
                compute_pgm_rsrc2: 1,
                kernel_code_properties: 1,
                ..Default::default()
            },
            kernarg: &[],
            grid: [1, 1, 1],
            workgroup_size: [256, 1, 1],
            dynamic_lds: 0,
            buffers: None,
        };
        gpu.dispatch(&d).map(|_| ())
    }

    #[test]
    fn scratch_beyond_the_per_wave_limit_is_refused_not_allocated() {
        let per_lane_limit = (super::MAX_SCRATCH_PER_WAVE / 64) as u32;
        dispatch_with_scratch(per_lane_limit).unwrap();
        for private in [per_lane_limit + 4, 1 << 26, u32::MAX] {
            match dispatch_with_scratch(private) {
                Err(EmuError::InvalidDispatch { reason, .. }) => {
                    assert!(
                        reason.contains("bytes of scratch per work-item"),
                        "{reason}"
                    )
                }
                other => panic!("{private} bytes per lane: {other:?}"),
            }
        }
    }
}
