//! The software GPU as a device: [`Emulator`] drives `iron-emu` as a driver drives a GPU.
//!
//! The emulator (`host/emu`) is the hardware: it executes code it is handed. This module is its
//! driver: it parses code objects, places their segments in device memory, reads kernel
//! descriptors and hands the emulator what the HIP runtime hands a real GPU (entry point,
//! descriptor, kernarg segment with the hidden arguments filled, grid, workgroup size, dynamic
//! LDS). Work runs synchronously, in submission order, so streams are queues in name only;
//! events time the host's emulation, not a GPU's.
//!
//! ```no_run
//! use iron::emulator::Emulator;
//! let emulator = Emulator::new("gfx950")?;
//! let device = emulator.device();
//! // load modules, allocate buffers and launch through `device` as on a GPU; then:
//! let counters = emulator.take_counters();
//! # Ok::<(), iron::DeviceError>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use iron_emu::{CodeId, Counters, Dispatch, EmuError, Fault, Gpu, Target};

pub use iron_emu::timing;
pub use iron_emu::{Checks, Progress, ProgressHook, Schedule};

mod printing;

pub use printing::{MIN_PRINT_BUFFER_BYTES, PrintSink};

use crate::code_object::{CodeObject, TargetId};
use crate::device::{
    Backend, BackendError, Device, DeviceAddress, DeviceError, DeviceProperties, EventHandle,
    KernelLaunch, ModuleHandle, StreamHandle,
};
use crate::device_panic::{DevicePanic, RECORD_BYTES, RECORD_SYMBOL};

/// Device memory the emulator hands out before reporting out-of-memory (it lives in host RAM).
pub const EMULATOR_MEMORY_BYTES: u64 = 8 << 30;

/// Largest address (relative to its load base) a code object's segments or code may reach: real
/// code objects span megabytes, and a malformed one must not make the emulator reserve more.
const MAX_CODE_OBJECT_SPAN: u64 = 1 << 30;

/// The environment variable that sets the schedule of every emulator a process creates
/// (`in-order`, `random` or `random:SEED`; see [`Schedule`]), so that a test suite can be run
/// again under other interleavings without changing its code.
pub const SCHEDULE_VARIABLE: &str = "IRON_EMU_SCHEDULE";

/// The environment variable that sets how many host threads every emulator a process creates
/// runs a dispatch on (a positive number; by default one per host core, see
/// [`Emulator::set_threads`]).
pub const THREADS_VARIABLE: &str = "IRON_EMU_THREADS";

/// Where a traced dispatch sends its lines.
pub type TraceSink = Box<dyn FnMut(&str) + Send>;

/// Alignment of every emulator allocation (what the HIP runtime guarantees at least).
const ALLOCATION_ALIGN: u64 = 256;

/// The gfx targets the emulator executes.
pub fn emulated_targets() -> Vec<&'static str> {
    Target::ALL.iter().map(|t| t.name()).collect()
}

/// An emulated GPU of one gfx, usable as a [`Device`], with the profiler counters of the
/// dispatches it ran.
#[derive(Clone)]
pub struct Emulator {
    backend: Arc<EmulatorBackend>,
}

impl Emulator {
    /// An emulated GPU of processor `gfx` (e.g. `"gfx950"`); [`emulated_targets`] lists the
    /// processors it models.
    ///
    /// # Example
    /// ```
    /// use iron::DeviceBuffer;
    /// use iron::emulator::Emulator;
    ///
    /// let emulator = Emulator::new("gfx1100")?;
    /// let device = emulator.device();
    /// assert_eq!(device.properties().target.processor, "gfx1100");
    /// assert_eq!(device.properties().wave_size, 32);
    /// // Device memory lives in host memory; copies and launches work as on a GPU.
    /// let buffer = DeviceBuffer::from_slice(&device, &[1.5f32, 2.5])?;
    /// assert_eq!(buffer.to_vec()?, [1.5, 2.5]);
    /// // A processor it does not model is an error naming the ones it does.
    /// assert!(Emulator::new("gfx908").is_err());
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn new(gfx: &str) -> Result<Emulator, DeviceError> {
        let target = Target::from_name(gfx).ok_or_else(|| {
            BackendError::NoDevice(format!(
                "the emulator does not model {gfx}: it runs {}",
                emulated_targets().join(", ")
            ))
        })?;
        let emulator = Emulator {
            backend: Arc::new(EmulatorBackend::new(target)),
        };
        if let Some(schedule) = schedule_from(std::env::var_os(SCHEDULE_VARIABLE))? {
            emulator.set_schedule(schedule);
        }
        if let Some(threads) = threads_from(std::env::var_os(THREADS_VARIABLE))? {
            emulator.set_threads(threads);
        }
        Ok(emulator)
    }

    /// Sets how the following dispatches interleave their waves. By default (and as
    /// [`SCHEDULE_VARIABLE`] may set it for every emulator) every workgroup that fits on the
    /// device is resident and a seeded generator picks the waves: a kernel that relies on an
    /// order nothing promised it then fails here as on hardware, and on one host thread
    /// ([`Emulator::set_threads`]) the same seed repeats the same run.
    ///
    /// # Example
    /// ```
    /// use iron::emulator::{Emulator, Schedule};
    ///
    /// let emulator = Emulator::new("gfx942")?;
    /// emulator.set_schedule("random:7".parse().expect("a schedule"));
    /// assert_eq!(emulator.schedule(), Schedule::Random { seed: 7 });
    /// emulator.set_schedule(Schedule::InOrder);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_schedule(&self, schedule: Schedule) {
        self.backend.lock().gpu.set_schedule(schedule);
    }

    /// Sets the sanitizer checks of the following dispatches (by default [`Checks::ALL`]: an
    /// LDS race between two waves of a workgroup, its waves waiting at different barriers, a
    /// read of LDS, scratch or device memory never written, a register used before the wait
    /// for the load that writes it, an access to a buffer none of the launch's pointer
    /// arguments points into, in WGP mode a read of another wave's global store without
    /// release and acquire, or two waves' accesses of a global dword, one a plain store, with
    /// no barrier or agent-scope release and acquire ordering them, is a launch error naming
    /// the waves).
    ///
    /// # Example
    /// ```
    /// use iron::emulator::{Checks, Emulator};
    ///
    /// let emulator = Emulator::new("gfx1100")?;
    /// emulator.set_checks(Checks::NONE);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_checks(&self, checks: Checks) {
        self.backend.lock().gpu.set_checks(checks);
    }

    /// Sets how many host threads run each following dispatch (by default, and as
    /// [`THREADS_VARIABLE`] may set it, one per host core; 0 counts as 1). The resident
    /// workgroups are shared out among them, so a large grid runs faster; a kernel free of races
    /// gives the same results on any number, and a racy one may vary from run to run on more
    /// than one.
    ///
    /// # Example
    /// ```
    /// use iron::emulator::Emulator;
    ///
    /// let emulator = Emulator::new("gfx950")?;
    /// emulator.set_threads(1);
    /// assert_eq!(emulator.threads(), 1);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_threads(&self, threads: u32) {
        self.backend.lock().gpu.set_threads(threads);
    }

    /// The host threads each dispatch may run on.
    pub fn threads(&self) -> u32 {
        self.backend.lock().gpu.threads()
    }

    /// The schedule the following dispatches run under.
    pub fn schedule(&self) -> Schedule {
        self.backend.lock().gpu.schedule()
    }

    /// Sets the compute units (CDNA) or WGPs (RDNA) of the emulated device, which with a
    /// kernel's occupancy decide how many of its workgroups are resident at once (by default
    /// those of the target's largest product, e.g. 304 on gfx942; 0 counts as 1). A device made
    /// by [`Self::device`] reports the count set when it was made (its properties are read
    /// once), which is what the library sizes its grids by.
    pub fn set_compute_units(&self, compute_units: u32) {
        self.backend.lock().gpu.set_compute_units(compute_units);
    }

    /// Sets the hook each following dispatch tells of every workgroup it finishes (`None`, the
    /// default: no hook), to show how far a long emulation has come.
    ///
    /// # Example
    /// ```
    /// use iron::emulator::{Emulator, Progress};
    /// use std::sync::Arc;
    ///
    /// let emulator = Emulator::new("gfx942")?;
    /// emulator.set_progress(Some(Arc::new(|p: Progress| {
    ///     if p.finished_workgroups % 1000 == 0 {
    ///         eprintln!("{} of {} workgroups", p.finished_workgroups, p.workgroups);
    ///     }
    /// })));
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_progress(&self, hook: Option<ProgressHook>) {
        self.backend.lock().gpu.set_progress(hook);
    }

    /// Estimates the time of the following dispatches on `device` (`None`, the default: no
    /// estimate). Each then runs on one host thread with as many workgroups resident as the
    /// device holds, its waves issuing in the order the cycle model says, and its counters carry
    /// a [`timing::TimingSummary`]. A device of another gfx is refused, naming the right ones.
    ///
    /// # Example
    /// ```
    /// use iron::emulator::{Emulator, timing::Device};
    ///
    /// let emulator = Emulator::new("gfx942")?;
    /// emulator.set_timing(Device::by_name("MI300X")).expect("a gfx942 device");
    /// assert!(emulator.set_timing(Device::by_name("MI355X")).is_err());
    /// // launch kernels; then each entry of `take_counters()` has its `timing`.
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_timing(
        &self,
        device: Option<&'static timing::Device>,
    ) -> Result<(), timing::DeviceMismatch> {
        self.backend.lock().gpu.set_timing(device)
    }

    /// The emulated GPU as a device (every call returns a handle to the same GPU).
    pub fn device(&self) -> Device {
        Device::from_backend(self.backend.clone())
            .expect("the emulator backend reports its properties without failing")
    }

    /// Limits each dispatch to this many executed wave-instructions (a kernel that runs longer
    /// fails with a fault naming the limit, instead of hanging).
    pub fn set_instruction_budget(&self, wave_instructions: u64) {
        self.backend
            .lock()
            .gpu
            .set_instruction_budget(wave_instructions);
    }

    /// Sends every instruction the following dispatches execute to `sink`, one line each:
    /// workgroup, wave, PC, EXEC mask and the disassembled instruction.
    pub fn set_trace(&self, sink: TraceSink) {
        self.backend.lock().trace = Some(sink);
    }

    /// Sends what the following dispatches print (`iron_intrinsics::print!`, or `printf` in a
    /// HIP kernel) to `sink`, one call per dispatch that printed, instead of to stdout.
    ///
    /// # Example
    /// ```
    /// use iron::emulator::Emulator;
    /// use std::sync::{Arc, Mutex};
    ///
    /// let emulator = Emulator::new("gfx950")?;
    /// let printed = Arc::new(Mutex::new(String::new()));
    /// let into = Arc::clone(&printed);
    /// emulator.set_print_sink(Box::new(move |text| into.lock().unwrap().push_str(text)));
    /// // ... launch kernels that print; then `printed` holds their output.
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn set_print_sink(&self, sink: PrintSink) {
        self.backend.lock().printer.set_sink(sink);
    }

    /// Sets the size of the printf buffer a dispatch that prints gets (by default
    /// [`DEFAULT_BUFFER_BYTES`](crate::print::DEFAULT_BUFFER_BYTES), at least
    /// [`MIN_PRINT_BUFFER_BYTES`]). When it fills, the device drops output and prints a line
    /// saying so.
    pub fn set_print_buffer_bytes(&self, bytes: usize) {
        let mut s = self.backend.lock();
        let state = &mut *s;
        state.printer.set_bytes(&mut state.gpu, bytes);
    }

    /// The device address and size of the global `name` of a loaded module (what
    /// `hipModuleGetGlobal` answers), or `None` when the module or the global does not exist.
    /// Copies to and from it work like those of an allocation.
    pub fn module_global(&self, module: ModuleHandle, name: &str) -> Option<(DeviceAddress, u64)> {
        let s = self.backend.lock();
        let loaded = s.modules.get(&module.0)?;
        let variable = loaded.code_object.variable(name)?;
        Some((loaded.base + variable.address, variable.size))
    }

    /// The device memory a loaded module takes, as (start, bytes): its code, constants and
    /// globals. `None` when no such module is loaded.
    pub fn module_memory(&self, module: ModuleHandle) -> Option<(DeviceAddress, u64)> {
        let s = self.backend.lock();
        let loaded = s.modules.get(&module.0)?;
        Some((loaded.base, loaded.extent))
    }

    /// The counters of every dispatch since the last call, in launch order, with the kernel's
    /// name.
    pub fn take_counters(&self) -> Vec<(String, Counters)> {
        std::mem::take(&mut self.backend.lock().dispatches)
    }
}

/// The schedule [`SCHEDULE_VARIABLE`]'s value names, if it is set.
fn schedule_from(value: Option<std::ffi::OsString>) -> Result<Option<Schedule>, BackendError> {
    let Some(value) = value else { return Ok(None) };
    let text = value.to_string_lossy();
    text.parse()
        .map(Some)
        .map_err(|e| BackendError::NoDevice(format!("{SCHEDULE_VARIABLE}={text}: {e}")))
}

/// The thread count [`THREADS_VARIABLE`]'s value names, if it is set.
fn threads_from(value: Option<std::ffi::OsString>) -> Result<Option<u32>, BackendError> {
    let Some(value) = value else { return Ok(None) };
    let text = value.to_string_lossy();
    match text.parse::<u32>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(BackendError::NoDevice(format!(
            "{THREADS_VARIABLE}={text}: expected a positive number of host threads"
        ))),
    }
}

/// A code object placed in the emulator's memory.
struct LoadedModule {
    code_object: CodeObject,
    /// Device address where the code object's virtual address 0 lies.
    base: DeviceAddress,
    /// Bytes of device memory from `base` that the code object's segments and code take.
    extent: u64,
    code: CodeId,
}

struct State {
    gpu: Gpu,
    modules: HashMap<u64, LoadedModule>,
    allocated: HashMap<DeviceAddress, u64>,
    allocated_bytes: u64,
    streams: HashSet<u64>,
    events: HashMap<u64, Instant>,
    next_handle: u64,
    dispatches: Vec<(String, Counters)>,
    trace: Option<TraceSink>,
    printer: printing::Printer,
}

/// The [`Backend`] over an `iron_emu::Gpu`.
struct EmulatorBackend {
    target: Target,
    state: Mutex<State>,
}

impl EmulatorBackend {
    fn new(target: Target) -> EmulatorBackend {
        EmulatorBackend {
            target,
            state: Mutex::new(State {
                gpu: Gpu::new(target),
                modules: HashMap::new(),
                allocated: HashMap::new(),
                allocated_bytes: 0,
                streams: HashSet::new(),
                events: HashMap::new(),
                next_handle: 1,
                dispatches: Vec::new(),
                trace: None,
                printer: printing::Printer::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-updated in a way later calls
        // would misread (every update is a single insert or remove), so a poisoned lock is used.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    fn handle(&mut self) -> u64 {
        let h = self.next_handle;
        self.next_handle += 1;
        h
    }

    fn check_stream(
        &self,
        operation: &'static str,
        stream: StreamHandle,
    ) -> Result<(), BackendError> {
        if stream == StreamHandle::DEFAULT || self.streams.contains(&stream.0) {
            Ok(())
        } else {
            Err(BackendError::BadHandle {
                operation,
                what: "stream",
                handle: stream.0,
            })
        }
    }

    fn check_range(
        &self,
        operation: &'static str,
        address: u64,
        len: u64,
    ) -> Result<(), BackendError> {
        // A loaded module's memory (its globals, such as the panic record, and constants) is
        // device memory too, as on a GPU.
        let modules = self.modules.values().map(|m| (m.base, m.extent));
        let inside = self
            .allocated
            .iter()
            .map(|(&start, &size)| (start, size))
            .chain(modules)
            .any(|(start, size)| {
                address >= start
                    && address
                        .checked_add(len)
                        .is_some_and(|end| end <= start + size)
            });
        if inside {
            Ok(())
        } else {
            Err(BackendError::BadAddress {
                operation,
                address,
                len,
            })
        }
    }
}

/// The message of a dispatch that ran out of its instruction budget: where every resident wave
/// stood, and what to do about it.
fn budget_detail(
    budget: u64,
    finished: u64,
    workgroups: u64,
    waves: &[iron_emu::WaveSnapshot],
) -> String {
    format!(
        "instruction budget of {budget} wave-instructions exceeded ({finished} of {workgroups} \
         workgroups finished): the kernel did not finish; check its loop bounds, and whether it \
         waits for a workgroup that cannot be resident with it (the emulator holds as many \
         workgroups at once as the device would; Emulator::set_compute_units changes how many); \
         or raise the limit with Emulator::set_instruction_budget (`--budget` of \
         `cargo xtask emu run`). The resident waves: {}",
        iron_emu::ResidentWaves(waves)
    )
}

/// The addresses a launch hands its kernel: every 8 bytes of its kernarg segment at a 4-byte
/// offset, read as an address (so pointers passed as buffers, as integers or inside structs all
/// count, and hidden pointers a runtime fills), and the module's own allocation (`module_base`:
/// its globals). The buffers check faults an access to a buffer none of them points into.
fn passed_buffers(kernarg: &[u8], module_base: u64) -> Vec<u64> {
    let words = kernarg
        .windows(8)
        .step_by(4)
        .filter_map(|w| w.try_into().ok());
    std::iter::once(module_base)
        .chain(words.map(u64::from_le_bytes))
        .collect()
}

/// The panic record of `module` when a lane of the dispatch that faulted panicked. It stays
/// (so that a HIP runtime over the emulator can read it too) until the next launch of the
/// module clears it ([`clear_panic`]).
fn read_panic(gpu: &Gpu, module: &LoadedModule) -> Option<DevicePanic> {
    let variable = module.code_object.variable(RECORD_SYMBOL)?;
    if variable.size != RECORD_BYTES as u64 {
        return None;
    }
    let address = module.base + variable.address;
    let mut record = [0; RECORD_BYTES];
    gpu.memory().read(address, &mut record).ok()?;
    DevicePanic::from_record(&record, |at, len| {
        let mut bytes = vec![0; len];
        gpu.memory().read(at, &mut bytes).ok().map(|()| bytes)
    })
}

/// Empties the panic record of `module` (if it has one) before a dispatch.
fn clear_panic(gpu: &mut Gpu, module: &LoadedModule) -> Result<(), BackendError> {
    let Some(variable) = module.code_object.variable(RECORD_SYMBOL) else {
        return Ok(());
    };
    if variable.size != RECORD_BYTES as u64 {
        return Ok(());
    }
    gpu.memory_mut()
        .write(module.base + variable.address, &[0; RECORD_BYTES])
        .map_err(|e| memory_failure("launch", e))
}

/// What to do about a kernel fault, as a clause to append to its message.
fn fault_advice(fault: &Fault) -> &'static str {
    match fault {
        Fault::Memory { .. } => {
            "; the address is outside every live buffer: check the buffers' lengths against the \
             grid and the kernel's indexing"
        }
        Fault::Protected { .. } => {
            "; a wild pointer: check how the kernel computes the address (the emulator's own \
             regions are read-only or hidden from global accesses)"
        }
        Fault::Lds { .. } | Fault::Scratch { .. } => {
            "; check the kernel's indexing against its LDS or scratch size"
        }
        Fault::Trap(_) => "; s_trap is a device-side abort: a panic or failed check in the kernel",
        Fault::UnknownEncoding { .. } | Fault::Unsupported => {
            "; the emulator cannot run this code: check that the code object is for this gfx"
        }
        Fault::NotExecuted(_) => "; run this kernel on a GPU",
        Fault::PcOutOfCode => "; the kernel branched outside its code",
        Fault::IllegalInstruction => {
            "; the kernel ran past its end or branched into data: check its code object"
        }
        Fault::Register(_) => "",
        Fault::UninitializedLds { .. } => {
            "; write the LDS before reading it (hardware leaves what the last workgroup wrote)"
        }
        Fault::UninitializedMemory { .. } => {
            "; write the buffer (upload or fill it) before a kernel reads it: a new allocation \
             holds whatever the memory held before"
        }
        Fault::UninitializedScratch { .. } => {
            "; the kernel reads a private variable before writing it (hardware leaves what an \
             earlier wave wrote)"
        }
        Fault::DivergentBarrier(_) => {
            "; a barrier only some waves reach: move it out of the condition (hardware lets \
             the waves through, pairing barriers the code did not mean to pair)"
        }
        Fault::WgpVisibility(_) => {
            "; in WGP mode a workgroup's waves share global memory only through a release \
             before the barrier and an acquire after it (workgroup-scope fences)"
        }
        Fault::WaitcntHazard(_) => {
            "; the code uses a load's destination before waiting for it: a compiler emits the \
             wait itself, so look for inline assembly or a hand-written code object"
        }
        Fault::StoreDataHazard(_) => {
            "; the code writes a wide store's data registers right after the store: a compiler \
             leaves the wait states itself, so look for inline assembly or a hand-written code \
             object"
        }
        Fault::LdsRace(_) => {
            "; put a barrier (workgroup_barrier) between the two accesses, or make them atomic; \
             Emulator::set_checks(Checks::NONE) runs without the check"
        }
        Fault::GlobalRace(_) => {
            "; waves of one workgroup need a barrier between the two accesses, workgroups a \
             release (a fence, then an atomic) by the one and an acquire (an atomic, then a \
             fence) by the other; or make the accesses atomic"
        }
    }
}

fn memory_failure(operation: &'static str, e: impl std::fmt::Display) -> BackendError {
    BackendError::Failed {
        operation,
        detail: e.to_string(),
    }
}

impl Backend for EmulatorBackend {
    fn properties(&self) -> Result<DeviceProperties, BackendError> {
        Ok(DeviceProperties {
            name: format!("Iron emulator ({})", self.target.name()),
            target: TargetId::new(self.target.name()),
            wave_size: self.target.wave_size(),
            compute_units: self.lock().gpu.compute_units(),
            lds_per_workgroup: self.target.max_lds_bytes(),
            max_threads_per_block: 1024,
            global_memory: EMULATOR_MEMORY_BYTES,
        })
    }

    fn alloc(&self, bytes: u64) -> Result<DeviceAddress, BackendError> {
        let mut s = self.lock();
        let size = bytes.max(1);
        if s.allocated_bytes.saturating_add(size) > EMULATOR_MEMORY_BYTES {
            return Err(BackendError::OutOfMemory { bytes });
        }
        let address = s
            .gpu
            .memory_mut()
            .alloc(size, ALLOCATION_ALIGN)
            .map_err(|_| BackendError::OutOfMemory { bytes })?;
        s.allocated.insert(address, size);
        s.allocated_bytes += size;
        Ok(address)
    }

    fn free(&self, address: DeviceAddress) -> Result<(), BackendError> {
        let mut s = self.lock();
        let size = s
            .allocated
            .remove(&address)
            .ok_or(BackendError::BadAddress {
                operation: "free",
                address,
                len: 0,
            })?;
        s.allocated_bytes -= size;
        s.gpu
            .memory_mut()
            .free(address)
            .map_err(|e| memory_failure("free", e))
    }

    fn write(&self, dst: DeviceAddress, src: &[u8]) -> Result<(), BackendError> {
        let mut s = self.lock();
        s.check_range("write", dst, src.len() as u64)?;
        s.gpu
            .memory_mut()
            .write(dst, src)
            .map_err(|e| memory_failure("write", e))
    }

    fn read(&self, src: DeviceAddress, dst: &mut [u8]) -> Result<(), BackendError> {
        let s = self.lock();
        s.check_range("read", src, dst.len() as u64)?;
        s.gpu
            .memory()
            .read(src, dst)
            .map_err(|e| memory_failure("read", e))
    }

    fn fill(&self, dst: DeviceAddress, value: u8, len: u64) -> Result<(), BackendError> {
        let mut s = self.lock();
        s.check_range("fill", dst, len)?;
        let bytes = s
            .gpu
            .memory_mut()
            .slice_mut(dst, len)
            .map_err(|e| memory_failure("fill", e))?;
        bytes.fill(value);
        Ok(())
    }

    unsafe fn write_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.lock().check_stream("write_async", stream)?;
        self.write(dst, src)
    }

    unsafe fn read_async(
        &self,
        stream: StreamHandle,
        src: DeviceAddress,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.lock().check_stream("read_async", stream)?;
        self.read(src, dst)
    }

    fn fill_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        value: u8,
        len: u64,
    ) -> Result<(), BackendError> {
        self.lock().check_stream("fill_async", stream)?;
        self.fill(dst, value, len)
    }

    fn load_module(&self, code_object: &[u8]) -> Result<ModuleHandle, BackendError> {
        let fail = |detail: String| BackendError::Failed {
            operation: "load_module",
            detail,
        };
        let co = CodeObject::parse(code_object).map_err(|e| fail(e.to_string()))?;
        if co.target().processor != self.target.name() {
            return Err(fail(format!(
                "the code object is for {}, this emulator runs {}",
                co.target().processor,
                self.target.name()
            )));
        }
        let text = co.text();
        let extent = co
            .load_segments()
            .iter()
            .map(|seg| seg.vaddr.checked_add(seg.mem_size))
            .chain([text.address.checked_add(text.bytes.len() as u64)])
            .try_fold(0u64, |extent, end| end.map(|end| extent.max(end)))
            .filter(|&extent| extent <= MAX_CODE_OBJECT_SPAN)
            .ok_or_else(|| {
                fail(format!(
                    "the code object's segments and code reach beyond {MAX_CODE_OBJECT_SPAN} bytes \
                     of address space: the file is malformed, rebuild it"
                ))
            })?;
        let mut s = self.lock();
        let base = s
            .gpu
            .memory_mut()
            .alloc(extent.max(1), 4096)
            .map_err(|e| fail(format!("cannot place {extent} bytes of code: {e}")))?;
        for seg in co.load_segments() {
            // As the loader does: the file's bytes, then zeros to the segment's memory size
            // (.bss), so that every byte of it counts as written.
            let mut image = seg.bytes.clone();
            image.resize(image.len().max(seg.mem_size as usize), 0);
            s.gpu
                .memory_mut()
                .write(base + seg.vaddr, &image)
                .map_err(|e| fail(e.to_string()))?;
        }
        for relocation in co.relocations() {
            let Some(value) = relocation.value_at(base) else {
                return Err(fail(format!(
                    "the code object has a relocation of type {} at {:#x}, which the \
                     emulator's loader does not apply (it applies R_AMDGPU_ABS64 and \
                     R_AMDGPU_RELATIVE64)",
                    relocation.kind, relocation.offset
                )));
            };
            if relocation
                .offset
                .checked_add(8)
                .is_none_or(|end| end > extent)
            {
                return Err(fail(format!(
                    "a relocation at {:#x} lies outside the code object's segments: the file is \
                     malformed, rebuild it",
                    relocation.offset
                )));
            }
            s.gpu
                .memory_mut()
                .write(base + relocation.offset, &value.to_le_bytes())
                .map_err(|e| fail(e.to_string()))?;
        }
        let code = s.gpu.load_code(&co.text().bytes, base + co.text().address);
        let handle = s.handle();
        s.modules.insert(
            handle,
            LoadedModule {
                code_object: co,
                base,
                extent: extent.max(1),
                code,
            },
        );
        Ok(ModuleHandle(handle))
    }

    fn unload_module(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let mut s = self.lock();
        let loaded = s.modules.remove(&module.0).ok_or(BackendError::BadHandle {
            operation: "unload_module",
            what: "module",
            handle: module.0,
        })?;
        s.gpu
            .memory_mut()
            .free(loaded.base)
            .map_err(|e| memory_failure("unload_module", e))
    }

    unsafe fn launch(&self, launch: &KernelLaunch<'_>) -> Result<(), BackendError> {
        let mut s = self.lock();
        s.check_stream("launch", launch.stream)?;
        let state = &mut *s;
        let loaded = state
            .modules
            .get(&launch.module.0)
            .ok_or(BackendError::BadHandle {
                operation: "launch",
                what: "module",
                handle: launch.module.0,
            })?;
        let kernel = loaded
            .code_object
            .kernel(launch.kernel)
            .map_err(|e| memory_failure("launch", e))?;
        let descriptor = iron_emu::KernelDescriptor::from_bytes(&kernel.descriptor().to_bytes())
            .ok_or_else(|| memory_failure("launch", "unreadable kernel descriptor"))?;
        let mut kernarg = launch.kernarg.to_vec();
        let print_buffer = state
            .printer
            .prepare(&mut state.gpu, kernel.metadata(), &mut kernarg)
            .map_err(|e| memory_failure("launch", e))?;
        clear_panic(&mut state.gpu, loaded)?;
        let buffers = passed_buffers(&kernarg, loaded.base);
        let dispatch = Dispatch {
            kernel_name: launch.kernel,
            code: loaded.code,
            entry: loaded.base + kernel.entry_address(),
            descriptor,
            kernarg: &kernarg,
            grid: launch.grid,
            workgroup_size: launch.block,
            dynamic_lds: launch.dynamic_lds,
            buffers: Some(&buffers),
        };
        let target = self.target;
        let result = match state.trace.as_mut() {
            Some(sink) => state.gpu.dispatch_traced(&dispatch, &mut |event| {
                let [x, y, z] = event.workgroup;
                sink(&format!(
                    "wg ({x},{y},{z}) wave {} pc {:#x} exec {:#018x}: {}",
                    event.wave,
                    event.pc,
                    event.exec,
                    iron_emu::disassemble(target, event.instruction)
                ));
            }),
            None => state.gpu.dispatch(&dispatch),
        };
        if let Some(buffer) = print_buffer {
            state
                .printer
                .finish(&state.gpu, buffer, loaded.code_object.printf_formats());
        }
        match result {
            Ok(counters) => {
                state.dispatches.push((launch.kernel.to_string(), counters));
                Ok(())
            }
            Err(EmuError::Execution {
                workgroup: [x, y, z],
                wave,
                pc,
                instruction,
                fault,
                ..
            }) => Err(BackendError::KernelFault {
                kernel: launch.kernel.to_string(),
                panic: read_panic(&state.gpu, loaded).map(Box::new),
                detail: format!(
                    "{fault} in workgroup ({x}, {y}, {z}) wave {wave} at pc {pc:#x}: `{instruction}`{}",
                    fault_advice(&fault)
                ),
            }),
            Err(EmuError::BudgetExceeded {
                budget,
                finished_workgroups,
                workgroups,
                waves,
                ..
            }) => Err(BackendError::KernelFault {
                kernel: launch.kernel.to_string(),
                panic: None,
                detail: budget_detail(budget, finished_workgroups, workgroups, &waves),
            }),
            Err(e) => Err(memory_failure("launch", e)),
        }
    }

    fn create_stream(&self) -> Result<StreamHandle, BackendError> {
        let mut s = self.lock();
        let h = s.handle();
        s.streams.insert(h);
        Ok(StreamHandle(h))
    }

    fn synchronize_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.lock().check_stream("synchronize_stream", stream)
    }

    fn destroy_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        if self.lock().streams.remove(&stream.0) {
            Ok(())
        } else {
            Err(BackendError::BadHandle {
                operation: "destroy_stream",
                what: "stream",
                handle: stream.0,
            })
        }
    }

    fn record_event(&self, stream: StreamHandle) -> Result<EventHandle, BackendError> {
        let mut s = self.lock();
        s.check_stream("record_event", stream)?;
        let h = s.handle();
        s.events.insert(h, Instant::now());
        Ok(EventHandle(h))
    }

    fn event_elapsed(
        &self,
        start: EventHandle,
        end: EventHandle,
    ) -> Result<Duration, BackendError> {
        let s = self.lock();
        let time = |e: EventHandle| {
            s.events.get(&e.0).copied().ok_or(BackendError::BadHandle {
                operation: "event_elapsed",
                what: "event",
                handle: e.0,
            })
        };
        Ok(time(end)?.saturating_duration_since(time(start)?))
    }

    fn destroy_event(&self, event: EventHandle) -> Result<(), BackendError> {
        match self.lock().events.remove(&event.0) {
            Some(_) => Ok(()),
            None => Err(BackendError::BadHandle {
                operation: "destroy_event",
                what: "event",
                handle: event.0,
            }),
        }
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
}

/// The hand-made code objects of the code-object tests.
#[cfg(test)]
#[path = "../code-object/tests/code_object_common/mod.rs"]
mod hand_made;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceBuffer;

    fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    fn u64_at(bytes: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    }

    fn u16_at(bytes: &[u8], at: usize) -> usize {
        usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
    }

    /// Offset of the section header of the section called `name`.
    fn section_header(elf: &[u8], name: &str) -> usize {
        let (shoff, count, strndx) = (u64_at(elf, 40) as usize, u16_at(elf, 60), u16_at(elf, 62));
        let names = u64_at(elf, shoff + 64 * strndx + 24) as usize;
        (0..count)
            .map(|i| shoff + 64 * i)
            .find(|&header| {
                let at = names
                    + u32::from_le_bytes(elf[header..header + 4].try_into().unwrap()) as usize;
                elf[at..].starts_with(name.as_bytes()) && elf[at + name.len()] == 0
            })
            .expect("the section exists")
    }

    /// A kernel-less gfx950 code object whose `.text` (16 bytes) is said to load at `address`.
    fn text_at(address: u64) -> Vec<u8> {
        let mut elf = hand_made::ElfBuilder::new(Vec::new()).build();
        let text = section_header(&elf, ".text");
        let offset = u64_at(&elf, text + 24) as usize;
        elf.resize(elf.len().max(offset + 16), 0);
        put_u64(&mut elf, text + 16, address);
        put_u64(&mut elf, text + 32, 16);
        elf
    }

    /// A kernel-less gfx950 code object whose first `PT_LOAD` segment spans `mem_size` bytes.
    fn segment_of(mem_size: u64) -> Vec<u8> {
        let mut elf = hand_made::ElfBuilder::new(Vec::new()).build();
        let phoff = u64_at(&elf, 32) as usize;
        let load = (0..u16_at(&elf, 56))
            .map(|i| phoff + 56 * i)
            .find(|&header| elf[header..header + 4] == 1u32.to_le_bytes())
            .expect("a PT_LOAD segment");
        put_u64(&mut elf, load + 40, mem_size);
        elf
    }

    #[test]
    fn the_schedule_variable_names_a_schedule_or_is_an_error() {
        assert_eq!(schedule_from(None), Ok(None));
        assert_eq!(
            schedule_from(Some("random:12".into())),
            Ok(Some(Schedule::Random { seed: 12 }))
        );
        assert_eq!(
            schedule_from(Some("in-order".into())),
            Ok(Some(Schedule::InOrder))
        );
        let e = schedule_from(Some("sometimes".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IRON_EMU_SCHEDULE=sometimes: unknown schedule `sometimes`: expected `in-order`, \
             `random` or `random:SEED` (SEED a decimal or 0x-prefixed hexadecimal 64-bit number)"
        );
    }

    #[test]
    fn the_threads_variable_names_a_positive_count_or_is_an_error() {
        assert_eq!(threads_from(None), Ok(None));
        assert_eq!(threads_from(Some("3".into())), Ok(Some(3)));
        for bad in ["0", "-1", "two", ""] {
            let e = threads_from(Some(bad.into())).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("IRON_EMU_THREADS={bad}: expected a positive number of host threads"),
            );
        }
    }

    #[test]
    fn code_objects_reaching_past_the_address_space_are_refused() {
        let emulator = Emulator::new("gfx950").unwrap();
        let device = emulator.device();
        assert!(device.backend().load_module(&text_at(0x1000)).is_ok());
        for image in [
            text_at(u64::MAX - 8),
            text_at(MAX_CODE_OBJECT_SPAN),
            segment_of(8 << 30),
            segment_of(u64::MAX),
        ] {
            CodeObject::parse(&image).expect("the reader accepts it; the loader must refuse it");
            let error = device.backend().load_module(&image).unwrap_err();
            assert!(error.to_string().contains("reach beyond"), "{error}");
        }
        let buffer = DeviceBuffer::from_slice(&device, &[7u32; 16]).unwrap();
        assert_eq!(buffer.to_vec().unwrap(), vec![7u32; 16]);
    }
}
