//! The emulated GPU's interface: what a driver hands the hardware to run a kernel.
//!
//! The driver loads the code object's text at an address, allocates and fills memory, and dispatches a
//! kernel: entry address, kernel descriptor, kernarg bytes, grid and workgroup size, dynamic LDS size.
//! The emulator builds the HSA dispatch packet and the kernarg segment in device memory, sets up each
//! wave's initial registers from the descriptor as the hardware does, and runs the waves.

use crate::counters::Counters;
use crate::error::EmuError;
use crate::machine::{self, Checks, Program, RunOptions, Schedule};
use crate::memory::DeviceMemory;
use crate::target::Target;
use crate::timing::{Device, DeviceMismatch};
use crate::{gfx9, rdna};

/// The fields of a kernel descriptor (`<kernel>.kd`, 64 bytes) that the hardware reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// Static LDS bytes per workgroup.
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Size of the kernarg segment.
    pub kernarg_size: u32,
    /// Entry point relative to the descriptor's own address.
    pub kernel_code_entry_byte_offset: i64,
    /// COMPUTE_PGM_RSRC3 (gfx90a+: accumulation register offset, tg_split).
    pub compute_pgm_rsrc3: u32,
    /// COMPUTE_PGM_RSRC1 (register counts, float mode, IEEE and DX10 clamp modes).
    pub compute_pgm_rsrc1: u32,
    /// COMPUTE_PGM_RSRC2 (scratch, user SGPR count, system SGPR/VGPR enables).
    pub compute_pgm_rsrc2: u32,
    /// Which user SGPRs are initialised, and the wave size.
    pub kernel_code_properties: u16,
    /// Kernarg preload (CDNA): length (bits 6:0) and offset (bits 15:7) in dwords of the kernarg
    /// data loaded into the user SGPRs. When the length is nonzero the wave starts 256 bytes past
    /// the entry, as firmware that supports preloading starts it; RDNA targets refuse it.
    pub kernarg_preload: u16,
}

impl KernelDescriptor {
    /// Size of a kernel descriptor in bytes.
    pub const SIZE: usize = 64;

    /// Parses the 64 descriptor bytes (`None` if fewer are given).
    pub fn from_bytes(b: &[u8]) -> Option<KernelDescriptor> {
        let b = b.get(..Self::SIZE)?;
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let mut off = [0u8; 8];
        off.copy_from_slice(&b[16..24]);
        Some(KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(off),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16_at(56),
            kernarg_preload: u16_at(58),
        })
    }

    /// Number of user SGPRs the CP initialises (COMPUTE_PGM_RSRC2.USER_SGPR_COUNT).
    pub fn user_sgpr_count(&self) -> u32 {
        self.compute_pgm_rsrc2 >> 1 & 0x1f
    }

    /// Whether the private segment (scratch) is enabled (COMPUTE_PGM_RSRC2.ENABLE_PRIVATE_SEGMENT).
    pub fn private_segment_enabled(&self) -> bool {
        self.compute_pgm_rsrc2 & 1 == 1
    }

    /// Which work-item id VGPRs are set: 0 = x, 1 = x and y, 2 = x, y and z.
    pub fn vgpr_workitem_ids(&self) -> u32 {
        self.compute_pgm_rsrc2 >> 11 & 3
    }

    /// Whether the kernel runs in WGP mode (COMPUTE_PGM_RSRC1.WGP_MODE, GFX10 and later): its
    /// waves may be spread over both CUs of a workgroup processor.
    pub fn wgp_mode(&self) -> bool {
        self.compute_pgm_rsrc1 >> 29 & 1 == 1
    }

    /// Whether the kernel was built for wave32 (KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32).
    pub fn wave32(&self) -> bool {
        self.kernel_code_properties >> 10 & 1 == 1
    }
}

/// A kernel launch as the driver describes it to the hardware.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch<'a> {
    /// Kernel name (used in error messages).
    pub kernel_name: &'a str,
    /// The loaded code the kernel lives in.
    pub code: CodeId,
    /// Device address of the kernel's first instruction.
    pub entry: u64,
    /// The kernel descriptor.
    pub descriptor: KernelDescriptor,
    /// The kernarg segment, hidden arguments included (copied to device memory by the emulator).
    pub kernarg: &'a [u8],
    /// Number of workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Work-items per workgroup in x, y, z.
    pub workgroup_size: [u32; 3],
    /// LDS bytes requested at launch in addition to the descriptor's static size.
    pub dynamic_lds: u32,
    /// The device addresses the launch hands the kernel (its pointer arguments, and the code
    /// object's own allocation for its globals), when the caller knows them. With the buffers
    /// check on ([`crate::Checks::buffers`]), a kernel's access to a buffer (an allocation
    /// from [`DeviceMemory::alloc`](crate::DeviceMemory::alloc)) that holds none of them is
    /// then a fault, like a wild pointer's, although the memory is live. `None`: any buffer.
    pub buffers: Option<&'a [u64]>,
}

/// Handle of code loaded with [`Gpu::load_code`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CodeId(pub(crate) usize);

/// One executed instruction, as reported to a trace callback.
#[derive(Clone, Copy, Debug)]
pub struct TraceEvent<'a> {
    /// Workgroup id.
    pub workgroup: [u32; 3],
    /// Wave index within the workgroup.
    pub wave: u32,
    /// Address of the instruction.
    pub pc: u64,
    /// EXEC before the instruction.
    pub exec: u64,
    /// The decoded instruction (print it with [`disassemble`]).
    pub instruction: DecodedInstruction<'a>,
}

/// A decoded instruction of either family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodedInstruction<'a> {
    /// A GFX9 (CDNA) instruction.
    Gfx9(&'a gfx9::Instruction),
    /// An RDNA instruction.
    Rdna(&'a rdna::Instruction),
}

impl<'a> From<&'a gfx9::Instruction> for DecodedInstruction<'a> {
    fn from(i: &'a gfx9::Instruction) -> Self {
        DecodedInstruction::Gfx9(i)
    }
}

impl<'a> From<&'a rdna::Instruction> for DecodedInstruction<'a> {
    fn from(i: &'a rdna::Instruction) -> Self {
        DecodedInstruction::Rdna(i)
    }
}

/// Formats an instruction of either family as LLVM's disassembler prints it for `target`.
pub fn disassemble<'a>(target: Target, instruction: impl Into<DecodedInstruction<'a>>) -> String {
    match instruction.into() {
        DecodedInstruction::Gfx9(i) => gfx9::disasm::print(target, i),
        DecodedInstruction::Rdna(i) => rdna::disassemble(target, i),
    }
}

/// Code loaded for one family: the decoded copy of each worker thread that ran it.
enum LoadedCode {
    Gfx9(Vec<Program<gfx9::exec::Gfx9>>),
    Rdna(Vec<Program<rdna::exec::Rdna>>),
}

/// Default limit on wave-instructions per dispatch.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = 2_000_000_000;

/// The emulated GPU: device memory, loaded code, and the dispatcher.
pub struct Gpu {
    target: Target,
    memory: DeviceMemory,
    programs: Vec<LoadedCode>,
    budget: u64,
    schedule: Schedule,
    compute_units: u32,
    checks: Checks,
    threads: u32,
    /// The threads that run dispatches beside the caller's (`threads - 1` of them), made on the
    /// first dispatch that can use them.
    pool: Option<rayon::ThreadPool>,
    next_dispatch_id: u64,
    timing: Option<&'static Device>,
    progress: Option<ProgressHook>,
}

/// How far a dispatch has come, as a [`ProgressHook`] hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Workgroups finished so far.
    pub finished_workgroups: u64,
    /// Workgroups in the grid.
    pub workgroups: u64,
}

/// Called each time a workgroup of a dispatch finishes, on the thread that ran it: lets a
/// caller show how far a long emulation has come (a timed 8192^3 GEMM runs for the better part
/// of an hour). It must be cheap and decide itself how often to say anything.
pub type ProgressHook = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// The host's cores: the worker threads a dispatch may use by default.
fn host_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

impl Gpu {
    /// A GPU of `target` with empty memory.
    pub fn new(target: Target) -> Gpu {
        Gpu {
            target,
            memory: DeviceMemory::new(),
            programs: Vec::new(),
            budget: DEFAULT_INSTRUCTION_BUDGET,
            schedule: Schedule::default(),
            compute_units: target.compute_units(),
            checks: Checks::default(),
            threads: host_cores(),
            pool: None,
            next_dispatch_id: 1,
            timing: None,
            progress: None,
        }
    }

    /// The target this GPU models.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Device memory.
    pub fn memory(&self) -> &DeviceMemory {
        &self.memory
    }

    /// Device memory, for allocating, writing and freeing.
    pub fn memory_mut(&mut self) -> &mut DeviceMemory {
        &mut self.memory
    }

    /// Loads executable code (a code object's `.text` bytes) at device address `load_address`.
    /// Instructions are decoded once, on first execution, and kept for later dispatches.
    pub fn load_code(&mut self, text: &[u8], load_address: u64) -> CodeId {
        let target = self.target;
        self.programs.push(if target.is_rdna() {
            LoadedCode::Rdna(vec![Program::new(target, text, load_address)])
        } else {
            LoadedCode::Gfx9(vec![Program::new(target, text, load_address)])
        });
        CodeId(self.programs.len() - 1)
    }

    /// Sets the per-dispatch limit on executed wave-instructions (exceeding it is an error).
    pub fn set_instruction_budget(&mut self, wave_instructions: u64) {
        self.budget = wave_instructions;
    }

    /// Sets how dispatches interleave their waves (by default [`Schedule::default`]: every
    /// workgroup that fits resident, waves picked by a generator with a fixed seed).
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    /// The schedule dispatches run under.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// Sets the compute units (CDNA) or WGPs (RDNA) of the modelled device, which with a
    /// kernel's occupancy decide how many of its workgroups are resident at once; by default
    /// [`Target::compute_units`]. 0 counts as 1.
    pub fn set_compute_units(&mut self, compute_units: u32) {
        self.compute_units = compute_units.max(1);
    }

    /// The compute units (CDNA) or WGPs (RDNA) of the emulated device.
    pub fn compute_units(&self) -> u32 {
        self.compute_units
    }

    /// Sets how many host threads may run a dispatch's workgroups at once: by default one per
    /// host core; 0 counts as 1. A dispatch uses at most one thread per resident workgroup, and
    /// one when it is traced. With one thread a [`Schedule::Random`] run is repeatable; with
    /// more, a kernel whose result depends on how its waves interleave may give a different
    /// result each run, and a kernel whose result does not gives the same one.
    pub fn set_threads(&mut self, threads: u32) {
        let threads = threads.max(1);
        if threads != self.threads {
            self.pool = None;
        }
        self.threads = threads;
    }

    /// The host threads a dispatch may use.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// Sets the sanitizer checks of the following dispatches (by default [`Checks::ALL`]).
    pub fn set_checks(&mut self, checks: Checks) {
        self.checks = checks;
    }

    /// The checks dispatches run under.
    pub fn checks(&self) -> Checks {
        self.checks
    }

    /// Sets the device whose time following dispatches estimate (`None`: no timing, the default).
    ///
    /// In timing mode a dispatch runs on one host thread, with as many workgroups resident as
    /// the device holds and its waves issuing in the order the cycle model says; its counters
    /// carry a [`TimingSummary`](crate::timing::TimingSummary). A device of another target is
    /// refused.
    pub fn set_timing(&mut self, device: Option<&'static Device>) -> Result<(), DeviceMismatch> {
        if let Some(d) = device
            && d.target != self.target
        {
            return Err(DeviceMismatch {
                device: d,
                target: self.target,
            });
        }
        self.timing = device;
        Ok(())
    }

    /// Sets the hook that hears each following dispatch's progress (`None`, the default: no
    /// hook).
    pub fn set_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }

    /// The device dispatches estimate their time on, if any.
    pub fn timing(&self) -> Option<&'static Device> {
        self.timing
    }

    /// Runs a kernel to completion; returns its counters.
    pub fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<Counters, EmuError> {
        self.run(d, None)
    }

    /// Runs a kernel, reporting every executed instruction to `trace`.
    pub fn dispatch_traced(
        &mut self,
        d: &Dispatch<'_>,
        trace: &mut dyn FnMut(&TraceEvent<'_>),
    ) -> Result<Counters, EmuError> {
        self.run(d, Some(trace))
    }

    fn run(
        &mut self,
        d: &Dispatch<'_>,
        trace: Option<&mut dyn FnMut(&TraceEvent<'_>)>,
    ) -> Result<Counters, EmuError> {
        let program = self
            .programs
            .get_mut(d.code.0)
            .ok_or_else(|| EmuError::InvalidDispatch {
                kernel: d.kernel_name.to_string(),
                reason: "unknown code handle".into(),
            })?;
        let id = self.next_dispatch_id;
        self.next_dispatch_id += 1;
        let (target, memory) = (self.target, &mut self.memory);
        if self.pool.is_none() && self.threads > 1 {
            // Without the threads (the host refused them) the dispatch runs on the caller's.
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(self.threads as usize - 1)
                .thread_name(|i| format!("iron-emu-{}", i + 1))
                .build()
                .ok();
        }
        let options = RunOptions {
            budget: self.budget,
            schedule: self.schedule,
            compute_units: self.compute_units,
            checks: self.checks,
            pool: self.pool.as_ref(),
            timing: self.timing,
            progress: self.progress.as_deref(),
        };
        match program {
            LoadedCode::Gfx9(p) => machine::run_dispatch(target, memory, p, d, id, options, trace),
            LoadedCode::Rdna(p) => machine::run_dispatch(target, memory, p, d, id, options, trace),
        }
    }
}
