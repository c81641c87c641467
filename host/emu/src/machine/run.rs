//! Running a dispatch: the resident workgroups, each in a slot with its waves and LDS, and the
//! loop that lets the scheduler's chosen wave run until its slice ends, it waits at a barrier or
//! it ends. A slot whose workgroup finished takes the next workgroup of the grid.
//!
//! The slots are dealt out to workers: the calling thread and the threads of the GPU's pool (one
//! per host core by default), each worker on a thread of its own for the whole dispatch, so that
//! a wave spinning on another worker's workgroup never waits for a thread. Each worker
//! interleaves the waves of its own slots with a picker of its own; all of them share the device
//! memory, the grid's next workgroup and the instruction budget. A slot is with one worker at a
//! time, so its LDS, its barriers and its checks are that worker's alone; a worker left with
//! nothing to run takes over slots from the others ([`super::handoff`]).

use super::checks::Checks;
use super::handoff::Handoff;
use super::races::{GlobalRaces, SHADOW_WORDS, WaveOrder};
use super::ready::{Ready, Standing};
use super::schedule::{Picker, Schedule};
use super::visibility::Visibility;
use super::waitcnt::Counting;
use super::wave::{MODE_GPR_IDX_EN, State, VectorRows};
use super::{Ctx, Flow, Isa, LaunchState, Lds, Program, Wave};
use crate::counters::Counters;
use crate::dispatch::{Dispatch, Progress, TraceEvent};
use crate::error::{EmuError, Fault, StoreDataHazard, WaitcntHazard, WaveSnapshot, WaveStatus};
use crate::memory::{DeviceMemory, SharedMemory};
use crate::target::Target;
use crate::timing::Device;
use crate::timing::model::{Effects, Model, WaveClock};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A trace callback, if the dispatch is traced.
type Trace<'t> = Option<&'t mut dyn FnMut(&TraceEvent<'_>)>;

/// How a dispatch runs: its instruction budget, its schedule, the device's size, its checks,
/// the host threads besides the caller's, the device it is timed on and who hears its progress.
#[derive(Clone, Copy)]
pub(crate) struct RunOptions<'p> {
    /// Wave-instructions the dispatch may run in all.
    pub budget: u64,
    /// How waves are interleaved.
    pub schedule: Schedule,
    /// Compute units (CDNA) or WGPs (RDNA) of the device.
    pub compute_units: u32,
    /// The sanitizer checks.
    pub checks: Checks,
    /// The threads that run workers besides the caller's, if any.
    pub pool: Option<&'p rayon::ThreadPool>,
    /// The device whose time to model, if any (timing mode: one worker, waves in time order).
    pub timing: Option<&'static Device>,
    /// Told of each finished workgroup, if any.
    pub progress: Option<&'p (dyn Fn(Progress) + Send + Sync)>,
}

/// A workgroup on the device: its waves, its LDS, and how many of its waves still run.
struct Slot {
    /// The slot's place among all the dispatch's slots (which part of scratch it owns, and its
    /// first workgroup).
    index: u32,
    group: [u32; 3],
    waves: Vec<Wave>,
    lds: Lds,
    /// Its global stores, for the WGP-mode visibility check.
    visibility: Visibility,
    /// Per wave, its part in the global racecheck.
    orders: Vec<WaveOrder>,
    /// Waves neither at a barrier nor finished.
    running: u32,
    /// Waves that finished.
    done: u32,
    /// Whether it holds a workgroup that has not finished.
    busy: bool,
}

impl Slot {
    /// Slot `index` of the dispatch `sh`, empty.
    fn new(index: u32, sh: &Shared<'_>) -> Slot {
        let waves_per_group = sh.launch.waves_per_group;
        Slot {
            index,
            group: [0; 3],
            waves: (0..waves_per_group).map(|_| Wave::new(sh.rows)).collect(),
            lds: Lds::new(sh.launch.lds_size as usize, sh.checks),
            visibility: Visibility::new(sh.wgp_checked, waves_per_group as usize),
            orders: vec![WaveOrder::default(); waves_per_group as usize],
            running: 0,
            done: 0,
            busy: false,
        }
    }
}

/// How a wave's turn ended.
enum Turn {
    /// Its slice ran out; it goes on later.
    Sliced,
    /// Timing mode: its next instruction stands here, behind another wave's.
    Later(Standing),
    /// It waits at a barrier.
    Barrier,
    /// It ended.
    Ended,
    /// The dispatch's budget ran out.
    OutOfBudget,
}

/// Why a dispatch stopped before its last workgroup finished.
enum Stop {
    Fault(EmuError),
    OutOfBudget,
}

/// What the workers of a dispatch share.
struct Shared<'a> {
    target: Target,
    d: &'a Dispatch<'a>,
    launch: &'a LaunchState,
    mem: &'a SharedMemory<'a>,
    checks: Checks,
    /// The global racecheck's shared part, if it runs.
    races: Option<GlobalRaces>,
    workgroups: u64,
    /// The register rows each wave has, and whether the WGP-mode visibility check runs: what a
    /// worker needs to make its slots.
    rows: VectorRows,
    wgp_checked: bool,
    /// Linear id (x fastest) of the next workgroup to place once the first ones are.
    next_group: AtomicU64,
    finished: AtomicU64,
    /// Wave-instructions the workers have claimed of the budget, and the budget.
    claimed: AtomicU64,
    budget: u64,
    /// What a worker claims of the budget at a time.
    claim_size: u64,
    /// Why the dispatch stops, from the first worker that stopped it.
    stopped: Mutex<Option<Stop>>,
    /// Whether `stopped` is set: every worker stops at its next turn.
    stopping: AtomicBool,
    /// The slots not with a worker.
    handoff: Handoff<Slot>,
    /// Told of each finished workgroup.
    progress: Option<&'a (dyn Fn(Progress) + Send + Sync)>,
}

/// Wave-instructions a worker claims of the budget at a time at most, so that the workers rarely
/// touch the shared count.
const BUDGET_CLAIM: u64 = 1 << 14;

/// The claim of each of `workers` workers on `budget`: small enough that a small budget is shared
/// among them all (a worker holding it whole would leave the others' workgroups unstarted).
fn claim_size(budget: u64, workers: u32) -> u64 {
    (budget / (16 * u64::from(workers))).clamp(1, BUDGET_CLAIM)
}

impl Shared<'_> {
    /// Claims up to `claim_size` wave-instructions of the budget; 0 once it is spent.
    fn claim(&self) -> u64 {
        let share = |used: u64| self.claim_size.min(self.budget - used);
        self.claimed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used < self.budget).then(|| used + share(used))
            })
            .map_or(0, share)
    }

    /// Stops every worker; the first reason given is the dispatch's.
    fn stop(&self, why: Stop) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        stopped.get_or_insert(why);
        self.stopping.store(true, Ordering::Relaxed);
        drop(stopped);
        self.handoff.end();
    }

    /// Whether the dispatch is over for a worker with nothing to run: every workgroup finished,
    /// or it stops.
    fn ended(&self) -> bool {
        self.finished.load(Ordering::Acquire) >= self.workgroups
            || self.stopping.load(Ordering::Relaxed)
    }
}

/// One worker thread's part of the dispatch: its slots, the waves of them that can run, its
/// counters and its copy of the decoded program.
struct Worker<'a, I: Isa> {
    shared: &'a Shared<'a>,
    program: &'a mut Program<I>,
    counters: Counters,
    /// Its place among the workers (which slot indices it starts with).
    index: usize,
    slots: Vec<Slot>,
    ready: Ready,
    /// Wave-instructions claimed of the budget and not yet run.
    allowance: u64,
    /// The device in time (timing mode), and what the running instruction did.
    model: Option<Model>,
    effects: Effects,
}

/// Runs every workgroup of `d`.
pub(crate) fn run_groups<I: Isa>(
    target: Target,
    mem: &mut DeviceMemory,
    programs: &mut Vec<Program<I>>,
    d: &Dispatch<'_>,
    launch: &LaunchState,
    options: RunOptions<'_>,
    trace: &mut Trace<'_>,
) -> Result<Counters, EmuError> {
    // How many workgroups the schedule keeps resident was decided with the scratch for them.
    let resident = launch.resident_groups;
    let pool = options.pool;
    let workers = match pool {
        Some(pool) if trace.is_none() && options.timing.is_none() => {
            (pool.current_num_threads() as u32 + 1).clamp(1, resident.max(1))
        }
        _ => 1,
    };
    let rows = VectorRows::allocated(&d.descriptor, target.is_rdna(), launch.wave.lanes() == 32);
    let wgp_checked = options.checks.wgp && target.is_rdna() && d.descriptor.wgp_mode();
    // Slot `index` belongs to worker `index % workers`, and its first workgroup is `index`.
    let sets: Vec<Vec<u32>> = (0..workers)
        .map(|w| (w..resident).step_by(workers as usize).collect())
        .collect();
    let workgroups: u64 = d.grid.iter().map(|&n| u64::from(n)).product();
    let passed = d.buffers.filter(|_| options.checks.buffers);
    let races = options.checks.global_races;
    let shadow_words = if races { SHADOW_WORDS } else { 0 };
    let view = mem.shared(options.checks.init, passed, shadow_words);
    let shared = Shared {
        target,
        d,
        launch,
        mem: &view,
        checks: options.checks,
        races: races.then(|| GlobalRaces::new(launch.waves_per_group)),
        workgroups,
        rows,
        wgp_checked,
        next_group: AtomicU64::new(u64::from(resident).min(workgroups)),
        finished: AtomicU64::new(0),
        claimed: AtomicU64::new(0),
        budget: options.budget,
        claim_size: claim_size(options.budget, workers),
        stopped: Mutex::new(None),
        stopping: AtomicBool::new(false),
        handoff: Handoff::new(sets),
        progress: options.progress,
    };
    while programs.len() < workers as usize {
        let copy = programs[0].clone();
        programs.push(copy);
    }
    let lanes = launch.wave.lanes();
    let mut crew = programs.iter_mut().enumerate().map(|(index, p)| {
        let model = options.timing.map(|device| Model::new(device, lanes));
        Worker::new(&shared, p, index, model)
    });
    let own = crew.next().expect("a dispatch has at least one worker");
    let parts: Vec<(Vec<Slot>, Counters)> = match pool.filter(|_| options.timing.is_none()) {
        Some(pool) if workers > 1 => {
            let mut helped: Vec<Option<(Vec<Slot>, Counters)>> =
                (1..workers).map(|_| None).collect();
            let own = pool.in_place_scope(|s| {
                for ((worker, w), out) in crew.zip(1u32..).zip(helped.iter_mut()) {
                    s.spawn(move |_| {
                        *out = Some(worker.run(Picker::for_worker(options.schedule, w), &mut None));
                    });
                }
                own.run(Picker::new(options.schedule), trace)
            });
            std::iter::once(own)
                .chain(helped.into_iter().flatten())
                .collect()
        }
        _ => vec![own.run(Picker::new(options.schedule), trace)],
    };
    let mut counters = Counters {
        lds_bytes_per_workgroup: launch.lds_size,
        ..Counters::default()
    };
    for (_, c) in &parts {
        counters += c;
    }
    let finished = shared.finished.load(Ordering::Relaxed);
    let left = shared.handoff.into_left();
    match shared
        .stopped
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        None => Ok(counters),
        Some(Stop::Fault(e)) => Err(e),
        Some(Stop::OutOfBudget) => {
            let mut slots: Vec<&Slot> = parts.iter().flat_map(|(s, _)| s).chain(&left).collect();
            slots.sort_by_key(|s| [s.group[2], s.group[1], s.group[0]]);
            Err(budget_exceeded(
                target,
                &mut programs[0],
                d,
                launch,
                &slots,
                options.budget,
                finished,
            ))
        }
    }
}

impl<'a, I: Isa> Worker<'a, I> {
    /// Worker `index` of the dispatch, which makes its slots when it starts.
    fn new(
        shared: &'a Shared<'a>,
        program: &'a mut Program<I>,
        index: usize,
        model: Option<Model>,
    ) -> Self {
        Worker {
            shared,
            program,
            counters: Counters::default(),
            index,
            slots: Vec::new(),
            ready: Ready::listed(Picker::new(Schedule::InOrder)),
            allowance: 0,
            model,
            effects: Effects::default(),
        }
    }

    /// Makes the slots `indices` and places the first workgroup of each (slot `index` runs
    /// workgroup `index` first, as a serial run places them), on the worker's own thread: the
    /// slots' memory is then the thread's, and no worker waits for the others' to be made.
    fn make(&mut self, indices: Vec<u32>) {
        let sh = self.shared;
        for index in indices {
            let slot = self.slots.len();
            self.slots.push(Slot::new(index, sh));
            if u64::from(index) < sh.workgroups {
                self.place_group(slot, u64::from(index));
            }
        }
    }

    /// Runs the worker's slots, and slots it takes over, until every workgroup finished or the
    /// dispatch stops; returns the slots and the counters.
    fn run(mut self, picker: Picker, trace: &mut Trace<'_>) -> (Vec<Slot>, Counters) {
        self.ready = match self.model {
            Some(_) => Ready::timed(),
            None => Ready::listed(picker),
        };
        let handoff = &self.shared.handoff;
        let own = handoff.own(self.index);
        self.make(own);
        loop {
            if let Err(why) = self.run_slots(trace) {
                self.shared.stop(why);
                break;
            }
            if let Some(indices) = handoff.unstarted() {
                self.make(indices);
                continue;
            }
            match handoff.wait(|| self.shared.ended()) {
                Some(slot) => self.adopt(slot),
                None => break,
            }
        }
        if let Some(model) = &mut self.model {
            self.counters.timing = Some(model.summary());
        }
        (self.slots, self.counters)
    }

    /// Takes over `slot`, given by another worker, with its waves as they stand.
    fn adopt(&mut self, slot: Slot) {
        let at = self.slots.len() as u32;
        for (k, w) in slot.waves.iter().enumerate() {
            if w.state == State::Running {
                self.ready.push((at, k as u32), standing(&w.clock));
            }
        }
        self.slots.push(slot);
    }

    /// Gives a busy slot to a waiting worker, if one waits and this worker has another busy
    /// slot to go on with.
    fn share(&mut self) {
        let handoff = &self.shared.handoff;
        let mut busy = self.slots.iter().enumerate().filter(|(_, s)| s.busy);
        let (Some(_), Some((slot, _))) = (busy.next(), busy.next()) else {
            return;
        };
        if !handoff.claim() {
            return;
        }
        let last = self.slots.len() - 1;
        self.ready.give_away(slot as u32, last as u32);
        let given = self.slots.swap_remove(slot);
        handoff.give(given);
    }

    /// Runs the worker's slots until none has a wave to run or the dispatch stops.
    fn run_slots(&mut self, trace: &mut Trace<'_>) -> Result<(), Stop> {
        let checks = self.shared.checks;
        let waves_per_group = self.shared.launch.waves_per_group;
        while !self.ready.is_empty() {
            if self.shared.stopping.load(Ordering::Relaxed) {
                return Ok(());
            }
            if self.shared.handoff.wanted() {
                self.share();
            }
            let ((slot, wave), slice) = self.ready.next();
            let slot = slot as usize;
            match self
                .turn(slot, wave as usize, slice, trace)
                .map_err(Stop::Fault)?
            {
                Turn::Sliced => {
                    let clock = &self.slots[slot].waves[wave as usize].clock;
                    self.ready.requeue_current(standing(clock));
                }
                Turn::Later(standing) => self.ready.requeue_current(standing),
                Turn::Barrier => {
                    self.ready.remove_current();
                    self.slots[slot].running -= 1;
                    if checks.barriers {
                        self.check_barrier(slot).map_err(Stop::Fault)?;
                    }
                    self.release_barrier(slot);
                }
                Turn::Ended => {
                    self.ready.remove_current();
                    let s = &mut self.slots[slot];
                    s.running -= 1;
                    s.done += 1;
                    if s.done == waves_per_group {
                        s.busy = false;
                        let finished = self.shared.finished.fetch_add(1, Ordering::AcqRel) + 1;
                        if let Some(progress) = self.shared.progress {
                            progress(Progress {
                                finished_workgroups: finished,
                                workgroups: self.shared.workgroups,
                            });
                        }
                        if finished == self.shared.workgroups {
                            self.shared.handoff.end();
                        }
                        self.place(slot);
                    } else {
                        if checks.barriers {
                            self.check_barrier(slot).map_err(Stop::Fault)?;
                        }
                        self.release_barrier(slot);
                    }
                }
                Turn::OutOfBudget => return Err(Stop::OutOfBudget),
            }
        }
        Ok(())
    }

    /// Starts the next workgroup of the grid, if any, in `slot`.
    fn place(&mut self, slot: usize) {
        let sh = self.shared;
        if sh.next_group.load(Ordering::Relaxed) >= sh.workgroups {
            return;
        }
        let id = sh.next_group.fetch_add(1, Ordering::Relaxed);
        if id < sh.workgroups {
            self.place_group(slot, id);
        }
    }

    /// Starts workgroup `id` (linear, x fastest) in `slot`.
    fn place_group(&mut self, slot: usize, id: u64) {
        let sh = self.shared;
        let [gx, gy, _] = sh.d.grid.map(u64::from);
        let group = [id % gx, id / gx % gy, id / (gx * gy)].map(|c| c as u32);
        let waves_per_group = sh.launch.waves_per_group;
        let s = &mut self.slots[slot];
        // In timing mode the workgroup starts when the slot's last one ended.
        let start = s.waves.iter().map(|w| w.clock.ready()).fold(0.0, f64::max);
        s.group = group;
        s.lds.reset();
        s.visibility.reset();
        let scratch = sh.launch.scratch;
        if scratch.base != 0 {
            let bytes = scratch.per_wave() * u64::from(waves_per_group);
            sh.mem
                .forget(scratch.base + u64::from(s.index) * bytes, bytes);
        }
        for (k, order) in s.orders.iter_mut().enumerate() {
            *order = sh
                .races
                .as_ref()
                .map_or_else(WaveOrder::default, |r| r.wave(id, k as u32));
        }
        for (k, w) in s.waves.iter_mut().enumerate() {
            w.lanes = sh.launch.wave.lanes();
            w.outstanding.clear();
            w.store_data.clear();
            let scratch_wave = s.index * waves_per_group + k as u32;
            I::initialize(w, sh.target, sh.d, sh.launch, group, k as u32, scratch_wave);
            if let Some(model) = &mut self.model {
                model.place(&mut w.clock, s.index, k as u32, waves_per_group, start);
            }
            self.ready.push((slot as u32, k as u32), standing(&w.clock));
        }
        s.running = waves_per_group;
        s.done = 0;
        s.busy = true;
        self.counters.workgroups += 1;
        self.counters.waves += u64::from(waves_per_group);
    }

    /// synccheck, when the waves of `slot` are about to be released (none runs): the waves
    /// waiting at a barrier must wait at the same one. The error is the first waiting wave's.
    fn check_barrier(&mut self, slot: usize) -> Result<(), EmuError> {
        let s = &self.slots[slot];
        if s.running != 0 {
            return Ok(());
        }
        // A waiting wave's PC is past its barrier, a 4-byte SOPP instruction in both families.
        let waiting: Vec<(u32, u64)> = s
            .waves
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state == State::Barrier)
            .map(|(i, w)| (i as u32, w.pc.wrapping_sub(4)))
            .collect();
        let [(wave, pc), ..] = waiting[..] else {
            return Ok(());
        };
        if waiting.iter().all(|&(_, other)| other == pc) {
            return Ok(());
        }
        let (target, wave_size) = (self.shared.target, self.shared.launch.wave);
        let instruction = self
            .program
            .index_of(pc, wave_size)
            .map(|i| I::disassemble(target, self.program.instruction(wave_size, i)))
            .unwrap_or_default();
        Err(EmuError::Execution {
            kernel: self.shared.d.kernel_name.to_string(),
            workgroup: s.group,
            wave,
            pc,
            instruction,
            fault: Fault::DivergentBarrier(waiting),
        })
    }

    /// Lets the waves of `slot` waiting at a barrier go on once none of its waves still runs.
    fn release_barrier(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        if s.running != 0 {
            return;
        }
        if let Some(model) = &mut self.model {
            let waiting = s.waves.iter_mut().filter(|w| w.state == State::Barrier);
            model.release(waiting.map(|w| &mut w.clock).collect());
        }
        let mut released = false;
        for (k, w) in s.waves.iter_mut().enumerate() {
            if w.state == State::Barrier {
                w.state = State::Running;
                s.orders[k].passed_barrier();
                self.ready.push((slot as u32, k as u32), standing(&w.clock));
                s.running += 1;
                released = true;
            }
        }
        if released {
            s.lds.barrier();
            self.counters.barriers += 1;
        }
    }

    /// Runs wave `k` of `slot` for at most `slice` instructions, and fewer if the budget has
    /// fewer left.
    fn turn(
        &mut self,
        slot: usize,
        k: usize,
        slice: u32,
        trace: &mut Trace<'_>,
    ) -> Result<Turn, EmuError> {
        if self.allowance == 0 {
            self.allowance = self.shared.claim();
            if self.allowance == 0 {
                return Ok(Turn::OutOfBudget);
            }
        }
        let allowed = u32::try_from(self.allowance).map_or(slice, |left| slice.min(left));
        let mut ran = 0;
        let turn = self.run_slice(slot, k, allowed, &mut ran, trace);
        self.allowance -= ran;
        turn
    }

    /// Runs at most `slice` instructions of wave `k` of `slot`, counting them in `ran`.
    /// The instruction at `pc` as text, for an error naming it (empty if it does not decode).
    fn disassembly_at(&mut self, pc: u64, wave: crate::WaveSize) -> String {
        let target = self.shared.target;
        self.program
            .index_of(pc, wave)
            .map(|k| I::disassemble(target, self.program.instruction(wave, k)))
            .unwrap_or_default()
    }

    fn run_slice(
        &mut self,
        slot: usize,
        k: usize,
        slice: u32,
        ran: &mut u64,
        trace: &mut Trace<'_>,
    ) -> Result<Turn, EmuError> {
        let sh = self.shared;
        let s = &mut self.slots[slot];
        let group = s.group;
        let w = &mut s.waves[k];
        let wave_size = sh.launch.wave;
        // In timing mode the wave runs while its instructions stand before every other wave's:
        // they issue earlier, or at the same cycle ranked above.
        let horizon = self.ready.horizon();
        let model = self.model.as_mut();
        let clock_mhz = model.as_ref().map(|m| m.clock_mhz());
        let mut model = model;
        let mut ctx = Ctx {
            target: sh.target,
            fences: I::fence_code(sh.target),
            mem: sh.mem,
            lds: &mut s.lds,
            wave_index: k as u32,
            pc: 0,
            counters: &mut self.counters,
            scratch: sh.launch.scratch,
            visibility: &mut s.visibility,
            bypasses_l0: false,
            races: sh.races.as_ref(),
            order: &mut s.orders[k],
            coherent: false,
            grid: sh.d.grid,
            now: None,
            effects: model.is_some().then_some(&mut self.effects),
        };
        for _ in 0..slice {
            let pc = w.pc;
            ctx.pc = pc;
            let fail = |fault: Fault, text: String| EmuError::Execution {
                kernel: sh.d.kernel_name.to_string(),
                workgroup: group,
                wave: k as u32,
                pc,
                instruction: text,
                fault,
            };
            let index = self
                .program
                .index_of(pc, wave_size)
                .map_err(|f| fail(f, String::new()))?;
            let dependencies = self.program.dependencies(wave_size, index);
            let cost = self.program.cost(wave_size, index);
            let hold = match model.as_deref() {
                Some(m) => {
                    let (at, why) = m.issue_time(&w.clock, cost, &dependencies.counting);
                    let wants = Standing {
                        at,
                        ..standing(&w.clock)
                    };
                    if wants.yields_to(horizon) {
                        return Ok(Turn::Later(wants));
                    }
                    Some((at, why))
                }
                None => None,
            };
            *ran += 1;
            w.hold(self.program.rows(wave_size, index));
            let inst = self.program.instruction(wave_size, index);
            // GPR index mode renames the VGPRs an instruction names: it is not checked.
            if sh.checks.waits && w.mode & MODE_GPR_IDX_EN == 0 {
                let issue = match &dependencies.counting {
                    Counting::Issue(issue) => Some(issue),
                    _ => None,
                };
                if let Some(h) = w.outstanding.hazard(&dependencies.footprint, issue) {
                    let fault = Fault::WaitcntHazard(Box::new(WaitcntHazard {
                        registers: h.registers.name(),
                        load_pc: h.pc,
                        load: self.disassembly_at(h.pc, wave_size),
                        counter: h.queue.counter(sh.target),
                    }));
                    return Err(fail(fault, self.disassembly_at(pc, wave_size)));
                }
                if let Some(o) = w.store_data.overwrite(&dependencies.store_data) {
                    let fault = Fault::StoreDataHazard(Box::new(StoreDataHazard {
                        registers: o.registers.name(),
                        store_pc: o.pc,
                        store: self.disassembly_at(o.pc, wave_size),
                        wait_states: o.needs,
                    }));
                    return Err(fail(fault, self.disassembly_at(pc, wave_size)));
                }
            }
            if ctx.visibility.enabled() {
                ctx.visibility.step(k as u32, dependencies.sync);
                ctx.bypasses_l0 = dependencies.bypasses_l0;
            }
            if ctx.order.checked() {
                ctx.order.step(dependencies.agent);
                ctx.coherent = dependencies.coherent;
            }
            if let Some(t) = trace.as_mut() {
                t(&TraceEvent {
                    workgroup: group,
                    wave: k as u32,
                    pc,
                    exec: w.exec(),
                    instruction: I::traced(inst),
                });
            }
            let lds_before = (
                ctx.counters.lds_bytes,
                ctx.counters.lds_bank_conflict_cycles,
            );
            if let (Some((at, _)), Some(mhz), Some(e)) = (hold, clock_mhz, ctx.effects.as_mut()) {
                e.clear();
                ctx.now = Some((at, mhz));
            }
            let flow = I::execute(&mut ctx, w, inst)
                .map_err(|f| fail(f, I::disassemble(sh.target, inst)))?;
            let lds_bytes = ctx.counters.lds_bytes - lds_before.0;
            let lds_conflicts = ctx.counters.lds_bank_conflict_cycles - lds_before.1;
            if let (Some((at, why)), Some(m), Some(effects)) =
                (hold, model.as_deref_mut(), ctx.effects.as_deref_mut())
            {
                effects.lds_bytes = lds_bytes;
                effects.lds_conflicts = lds_conflicts;
                m.issued(
                    &mut w.clock,
                    index,
                    pc,
                    cost,
                    &dependencies.counting,
                    at,
                    why,
                    effects,
                );
                if let Flow::Jump(to) = flow {
                    m.jumped(pc, to);
                }
            }
            if sh.checks.waits {
                match &dependencies.counting {
                    Counting::Issue(issue) => w.outstanding.issue(issue, pc, sh.target),
                    Counting::Wait(wait) => w.outstanding.wait(wait),
                    Counting::None => {}
                }
                w.store_data.step(&dependencies.store_data, pc);
            }
            match flow {
                Flow::Next => w.pc = pc + u64::from(I::len(inst)),
                Flow::Jump(target) => w.pc = target,
                Flow::Barrier => {
                    w.pc = pc + u64::from(I::len(inst));
                    w.state = State::Barrier;
                    return Ok(Turn::Barrier);
                }
                Flow::End => {
                    w.state = State::Done;
                    return Ok(Turn::Ended);
                }
            }
            if model.is_some() && standing(&w.clock).yields_to(horizon) {
                return Ok(Turn::Sliced);
            }
        }
        Ok(Turn::Sliced)
    }
}

/// Where a wave's clock puts it in the timed order.
fn standing(clock: &WaveClock) -> Standing {
    Standing {
        at: clock.ready(),
        priority: clock.priority(),
        age: clock.age(),
    }
}

/// The budget error: where each wave of every resident, unfinished workgroup stood.
fn budget_exceeded<I: Isa>(
    target: Target,
    program: &mut Program<I>,
    d: &Dispatch<'_>,
    launch: &LaunchState,
    slots: &[&Slot],
    budget: u64,
    finished: u64,
) -> EmuError {
    let wave_size = launch.wave;
    let mut waves = Vec::new();
    for s in slots.iter().filter(|s| s.busy) {
        for (k, w) in s.waves.iter().enumerate() {
            let instruction = program
                .index_of(w.pc, wave_size)
                .map(|index| I::disassemble(target, program.instruction(wave_size, index)))
                .unwrap_or_default();
            let status = match w.state {
                State::Running => WaveStatus::Running,
                State::Barrier => WaveStatus::AtBarrier,
                State::Done => WaveStatus::Done,
            };
            waves.push(WaveSnapshot {
                workgroup: s.group,
                wave: k as u32,
                pc: w.pc,
                instruction,
                status,
            });
        }
    }
    EmuError::BudgetExceeded {
        kernel: d.kernel_name.to_string(),
        budget,
        finished_workgroups: finished,
        workgroups: d.grid.iter().map(|&n| u64::from(n)).product(),
        waves,
    }
}

#[cfg(test)]
mod tests {
    use super::{BUDGET_CLAIM, claim_size};

    #[test]
    fn a_small_budget_is_shared_among_the_workers_and_a_large_one_claimed_in_chunks() {
        assert_eq!(claim_size(4000, 2), 125);
        assert_eq!(claim_size(8, 2), 1);
        assert_eq!(claim_size(0, 1), 1);
        assert_eq!(claim_size(2_000_000_000, 2), BUDGET_CLAIM);
    }
}
