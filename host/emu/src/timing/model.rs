//! The compute units in time: when each wave's next instruction can issue, what each pipe is
//! busy with, and when each memory access a wave waits for completes.
//!
//! A wave issues in order, at most one instruction per issue period (4 cycles on CDNA, where a
//! SIMD is visited every fourth cycle; 1 on RDNA). An instruction issues once its wave may, its
//! pipe is free and what it waits for is there: the memory counters for `s_waitcnt`, the
//! earlier ALU result `s_delay_alu` names, the wait states of `s_nop`. Waves that can issue at
//! the same cycle go in the order of their `s_setprio` level, then their age. Vector ALU and
//! matrix pipes belong to a SIMD, the LDS and the vector-memory address unit to a compute unit,
//! and memory below the compute unit to [`MemorySystem`].

use super::cost::{Cost, VectorRate};
use super::devices::Device;
use super::memory::{Arrival, MemorySystem};
use super::{Stall, TimingSummary};
use crate::machine::waitcnt::{Counting, QUEUES, Queue};
use std::collections::{HashMap, VecDeque};

/// Cycles from the last wave's arrival at a barrier to the first wave's issue after it (the
/// model's choice: no public figure).
const BARRIER_LATENCY: f64 = 16.0;

/// Cycles per `s_sleep` unit (AMD's ISA guides: about 64 clocks per unit).
const SLEEP_CYCLES: f64 = 64.0;

/// Cycles from a vector ALU instruction's issue until a dependent one may issue on RDNA (LLVM's
/// GFX11 scheduling model), and for a transcendental.
const RDNA_VALU_LATENCY: f64 = 5.0;
const RDNA_TRANS_LATENCY: f64 = 10.0;

/// One access a wave waits on.
#[derive(Clone, Copy, Debug)]
struct Pending {
    arrival: Arrival,
    /// Whether it is an LDS access (its wait counts as LDS time).
    lds: bool,
}

/// A wave's place in time.
#[derive(Clone, Debug, Default)]
pub(crate) struct WaveClock {
    cu: usize,
    simd: usize,
    /// When the wave may issue its next instruction, as far as the wave itself goes.
    ready: f64,
    /// Per wait queue, the accesses in flight, oldest first (in-order queues hold
    /// non-decreasing completion times).
    queues: [VecDeque<Pending>; QUEUES],
    /// When the last four vector ALU results and last three transcendental results are there,
    /// most recent first (for `s_delay_alu`).
    valu: [f64; 4],
    trans: [f64; 3],
    /// When the last scalar ALU instruction issued.
    salu: f64,
    /// `s_delay_alu`'s holds: instructions to go before each applies, and until when.
    delays: [Option<(u8, f64)>; 2],
    /// When everything the wave issued is done: its last ALU and matrix results and its last
    /// memory access (the wave ends no earlier).
    drained: f64,
    /// Its priority (`s_setprio`) and its launch number, which decide between waves that can
    /// issue at one cycle.
    priority: u8,
    age: u64,
}

impl WaveClock {
    /// When the wave may issue next, as far as the wave itself goes.
    pub fn ready(&self) -> f64 {
        self.ready
    }

    /// Its priority (`s_setprio`: 0 lowest, 3 highest).
    pub fn priority(&self) -> u8 {
        self.priority
    }

    /// Its launch number on the device: the lower, the older.
    pub fn age(&self) -> u64 {
        self.age
    }
}

/// A SIMD's pipes: when each is free.
#[derive(Clone, Copy, Debug, Default)]
struct Simd {
    valu: f64,
    salu: f64,
    matrix: f64,
}

/// A compute unit's shared pipes.
#[derive(Clone, Debug, Default)]
struct ComputeUnit {
    simds: Vec<Simd>,
    lds: f64,
    address: f64,
}

/// What an instruction did that its time depends on, collected while it ran.
#[derive(Clone, Debug, Default)]
pub(crate) struct Effects {
    /// Global byte ranges its lanes read (`false`) or wrote or updated (`true`).
    pub accesses: Vec<(u64, u32, bool)>,
    /// LDS bytes it moved and the bank-conflict cycles it caused.
    pub lds_bytes: u64,
    pub lds_conflicts: u64,
}

impl Effects {
    /// Forgets the last instruction's effects.
    pub fn clear(&mut self) {
        self.accesses.clear();
        self.lds_bytes = 0;
        self.lds_conflicts = 0;
    }
}

/// Time spent per instruction (indexed by its place in the program's decoded cache).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InstructionTime {
    pub pc: u64,
    pub issued: u64,
    pub stalls: [f64; Stall::ALL.len()],
}

/// The device in time.
pub(crate) struct Model {
    device: &'static Device,
    rdna: bool,
    lanes: u32,
    /// Cycles between two issues of one wave.
    issue: f64,
    cus: Vec<ComputeUnit>,
    memory: MemorySystem,
    /// The last cycle any wave finished at.
    end: f64,
    stalls: [f64; Stall::ALL.len()],
    by_instruction: Vec<InstructionTime>,
    /// Backward jumps taken: (from PC, to PC) -> count.
    loops: HashMap<(u64, u64), u64>,
    lines: Vec<u64>,
    /// Wave-cycles of matrix pipe time booked.
    matrix_busy: f64,
    /// Waves started so far.
    launched: u64,
}

impl Model {
    /// `device` idle, for waves of `lanes` lanes.
    pub fn new(device: &'static Device, lanes: u32) -> Model {
        let rdna = device.target.is_rdna();
        let simds = device.simds as usize;
        Model {
            device,
            rdna,
            lanes,
            issue: if rdna { 1.0 } else { 4.0 },
            cus: (0..device.compute_units)
                .map(|_| ComputeUnit {
                    simds: vec![Simd::default(); simds],
                    ..ComputeUnit::default()
                })
                .collect(),
            memory: MemorySystem::new(device),
            end: 0.0,
            stalls: [0.0; Stall::ALL.len()],
            by_instruction: Vec::new(),
            loops: HashMap::new(),
            lines: Vec::new(),
            matrix_busy: 0.0,
            launched: 0,
        }
    }

    /// The device's peak engine clock in MHz.
    pub fn clock_mhz(&self) -> f64 {
        self.device.clock_mhz
    }

    /// The compute unit workgroup slot `slot` lives on: consecutive slots go to different
    /// partitions (as the dispatcher deals workgroups out to XCDs), then to different CUs.
    pub fn compute_unit_of(&self, slot: u32) -> usize {
        let cus = self.cus.len();
        let partitions = self.device.l2_partitions.max(1) as usize;
        let per = cus / partitions;
        let slot = slot as usize;
        let partition = slot % partitions;
        (partition * per + (slot / partitions) % per) % cus
    }

    /// Starts `clock`'s wave at cycle `at`, younger than every wave started before: wave `index`
    /// of the `waves` of a workgroup in slot `slot`. The slots of a compute unit deal their waves
    /// out to its SIMDs in turn.
    pub fn place(&mut self, clock: &mut WaveClock, slot: u32, index: u32, waves: u32, at: f64) {
        let simds = self.device.simds as usize;
        let on_cu = slot as usize / self.cus.len();
        *clock = WaveClock {
            cu: self.compute_unit_of(slot),
            simd: (on_cu * waves as usize + index as usize) % simds,
            ready: at,
            age: self.launched,
            ..WaveClock::default()
        };
        self.launched += 1;
    }

    /// Cycles a vector ALU instruction holds its SIMD.
    fn vector_cycles(&self, rate: VectorRate) -> f64 {
        let width = if self.rdna { 32.0 } else { 16.0 };
        let base = (f64::from(self.lanes) / width).max(1.0);
        match rate {
            VectorRate::Full => base,
            VectorRate::Transcendental if self.rdna => base,
            VectorRate::Transcendental => base * 4.0,
            VectorRate::Double => base * 16.0,
        }
    }

    /// When wave `clock` can issue an instruction of `cost` that counts as `counting`, and what
    /// held it past its own readiness.
    pub fn issue_time(&self, clock: &WaveClock, cost: &Cost, counting: &Counting) -> (f64, Stall) {
        let mut t = clock.ready;
        let mut why = Stall::Issue;
        let mut later = |at: f64, reason: Stall| {
            if at > t {
                t = at;
                why = reason;
            }
        };
        let cu = &self.cus[clock.cu];
        let simd = &cu.simds[clock.simd];
        for (left, until) in clock.delays.iter().flatten() {
            if *left == 0 {
                later(*until, Stall::Dependency);
            }
        }
        match cost {
            Cost::Vector { .. } => later(simd.valu, Stall::Issue),
            Cost::Scalar | Cost::Branch => later(simd.salu, Stall::Issue),
            Cost::Matrix { .. } => {
                later(simd.matrix, Stall::Matrix);
                if self.rdna {
                    later(simd.valu, Stall::Issue);
                }
            }
            Cost::Lds => later(cu.lds, Stall::Lds),
            Cost::VectorMemory => later(cu.address, Stall::Issue),
            _ => {}
        }
        match counting {
            Counting::Wait(wait) => {
                for q in Queue::ALL {
                    let Some(n) = wait.at_most(q) else { continue };
                    if let Some(p) = satisfied(&clock.queues[q.index()], usize::from(n), q) {
                        let reason = if p.lds { Stall::Lds } else { Stall::Memory };
                        later(p.arrival.done, reason);
                    }
                }
            }
            Counting::Issue(issue) => {
                // A full counter stalls the issue until its oldest access is back.
                for q in issue.queues.iter().flatten() {
                    let queue = &clock.queues[q.index()];
                    if queue.len() >= q.limit(self.device.target)
                        && let Some(p) = satisfied(queue, queue.len() - 1, *q)
                    {
                        later(p.arrival.done, Stall::Memory);
                    }
                }
            }
            Counting::None => {}
        }
        (t, why)
    }

    /// Books the instruction at program index `index` (at `pc`) that wave `clock` issued at `t`
    /// (held there by `why`), of `cost`, counting as `counting`, having done `effects`.
    #[allow(clippy::too_many_arguments)]
    pub fn issued(
        &mut self,
        clock: &mut WaveClock,
        index: usize,
        pc: u64,
        cost: &Cost,
        counting: &Counting,
        t: f64,
        why: Stall,
        effects: &Effects,
    ) {
        let stall = (t - clock.ready).max(0.0);
        let parts = match why {
            Stall::Memory => {
                // Waiting for memory is latency up to when the access would have been back
                // without queueing, and bandwidth after.
                let unloaded = self.waited_unloaded(clock, counting, t);
                let latency = (unloaded - clock.ready).clamp(0.0, stall);
                [
                    (Stall::Memory, latency),
                    (Stall::Bandwidth, stall - latency),
                ]
            }
            _ => [(why, stall), (why, 0.0)],
        };
        if self.by_instruction.len() <= index {
            self.by_instruction
                .resize(index + 1, InstructionTime::default());
        }
        let record = &mut self.by_instruction[index];
        record.pc = pc;
        record.issued += 1;
        for (reason, cycles) in parts {
            self.stalls[reason as usize] += cycles;
            record.stalls[reason as usize] += cycles;
        }
        for d in clock.delays.iter_mut() {
            *d = match *d {
                Some((0, _)) | None => None,
                Some((left, until)) => Some((left - 1, until)),
            };
        }
        let mut next = t + self.issue;
        let mut completion: Option<Pending> = None;
        match *cost {
            Cost::Vector { rate } => {
                let busy = self.vector_cycles(rate);
                let simd = &mut self.cus[clock.cu].simds[clock.simd];
                simd.valu = t + busy;
                let latency = if rate == VectorRate::Transcendental {
                    RDNA_TRANS_LATENCY
                } else {
                    RDNA_VALU_LATENCY
                };
                let done = t + busy.max(latency);
                clock.valu.rotate_right(1);
                clock.valu[0] = done;
                if rate == VectorRate::Transcendental {
                    clock.trans.rotate_right(1);
                    clock.trans[0] = done;
                }
            }
            Cost::Scalar | Cost::Branch => {
                self.cus[clock.cu].simds[clock.simd].salu = t + self.issue;
                clock.salu = t;
            }
            Cost::Matrix { cycles } => {
                let busy = f64::from(cycles);
                self.matrix_busy += busy;
                let simd = &mut self.cus[clock.cu].simds[clock.simd];
                simd.matrix = t + busy;
                if self.rdna {
                    simd.valu = t + busy;
                }
                clock.valu.rotate_right(1);
                clock.valu[0] = t + busy;
            }
            Cost::Lds => {
                let d = self.device;
                let cu = &mut self.cus[clock.cu];
                let start = t.max(cu.lds);
                let moved = (effects.lds_bytes as f64 / f64::from(d.lds_bytes_per_clock)).ceil();
                let busy = moved.max(1.0) + effects.lds_conflicts as f64;
                cu.lds = start + busy;
                let done = start + busy + f64::from(d.lds_latency);
                completion = Some(Pending {
                    arrival: Arrival {
                        done,
                        unloaded: t + f64::from(d.lds_latency),
                    },
                    lds: true,
                });
            }
            Cost::VectorMemory => {
                let cu = clock.cu;
                let start = t.max(self.cus[cu].address);
                self.cus[cu].address = start + self.issue;
                completion = Some(self.vector_memory(cu, start, effects));
            }
            Cost::ScalarMemory => {
                let done = t + f64::from(self.device.scalar_latency);
                completion = Some(Pending {
                    arrival: Arrival {
                        done,
                        unloaded: done,
                    },
                    lds: false,
                });
            }
            Cost::Nop { states } => next = t + f64::from(states) * self.issue,
            Cost::Sleep { units } => next = t + f64::from(units.max(1)) * SLEEP_CYCLES,
            Cost::DelayAlu { fields } => self.delay_alu(clock, fields),
            Cost::Priority { level } => clock.priority = level,
            Cost::Wait | Cost::Barrier | Cost::End => {}
        }
        match counting {
            Counting::Issue(issue) => {
                let p = completion.unwrap_or(Pending {
                    arrival: Arrival {
                        done: t,
                        unloaded: t,
                    },
                    lds: false,
                });
                for q in issue.queues.iter().flatten() {
                    let queue = &mut clock.queues[q.index()];
                    // What is back by now no wait needs: the queue holds what is in flight.
                    if q.ordered() {
                        while queue.front().is_some_and(|p| p.arrival.done <= t) {
                            queue.pop_front();
                        }
                    }
                    let mut p = p;
                    if q.ordered()
                        && let Some(last) = queue.back()
                    {
                        p.arrival.done = p.arrival.done.max(last.arrival.done);
                        p.arrival.unloaded = p.arrival.unloaded.max(last.arrival.unloaded);
                    }
                    queue.push_back(p);
                }
            }
            Counting::Wait(_) => {
                for (k, queue) in clock.queues.iter_mut().enumerate() {
                    if Queue::ALL[k].ordered() {
                        while queue.front().is_some_and(|p| p.arrival.done <= t) {
                            queue.pop_front();
                        }
                    } else {
                        queue.retain(|p| p.arrival.done > t);
                    }
                }
            }
            Counting::None => {}
        }
        if let Some(p) = completion {
            clock.drained = clock.drained.max(p.arrival.done);
        }
        clock.drained = clock.drained.max(clock.valu[0]);
        clock.ready = next;
        if matches!(cost, Cost::End) {
            self.end = self.end.max(t).max(clock.drained);
        }
    }

    /// The latest unloaded completion among the memory accesses that the wait `counting`, issuing
    /// at `t`, waited for.
    fn waited_unloaded(&self, clock: &WaveClock, counting: &Counting, t: f64) -> f64 {
        let mut unloaded: f64 = 0.0;
        for (k, queue) in clock.queues.iter().enumerate() {
            let waited = match counting {
                Counting::Wait(w) => w.at_most(Queue::ALL[k]).is_some(),
                Counting::Issue(i) => i.queues.contains(&Some(Queue::ALL[k])),
                Counting::None => false,
            };
            if waited {
                for p in queue.iter().filter(|p| !p.lds && p.arrival.done <= t) {
                    unloaded = unloaded.max(p.arrival.unloaded);
                }
            }
        }
        unloaded
    }

    /// When an access of `effects`' byte ranges issued at `start` from compute unit `cu`
    /// completes.
    fn vector_memory(&mut self, cu: usize, start: f64, effects: &Effects) -> Pending {
        let write = effects.accesses.iter().any(|a| a.2);
        let mut lines = std::mem::take(&mut self.lines);
        let ranges = effects.accesses.iter().map(|a| (a.0, a.1));
        self.memory.lines(ranges, &mut lines);
        let arrival = if write {
            self.memory.store_all(cu, &lines, start)
        } else {
            self.memory.load_all(cu, &lines, start)
        };
        self.lines = lines;
        let issue = start + self.issue;
        Pending {
            arrival: arrival.unwrap_or(Arrival {
                done: issue,
                unloaded: issue,
            }),
            lds: false,
        }
    }

    /// `s_delay_alu`: the next instruction (and the one `instskip` after it) waits for the ALU
    /// result each `instid` names.
    fn delay_alu(&self, clock: &mut WaveClock, fields: u16) {
        let until = |id: u16| -> Option<f64> {
            match id {
                1..=4 => Some(clock.valu[usize::from(id - 1)]),
                5..=7 => Some(clock.trans[usize::from(id - 5)]),
                9..=11 => Some(clock.salu + f64::from(id - 8)),
                _ => None,
            }
        };
        // INSTSKIP counts the instructions between the two it delays (0: the same one).
        let skip = (fields >> 4 & 0x7) as u8;
        clock.delays = [
            until(fields & 0xf).map(|u| (0, u)),
            until(fields >> 7 & 0xf).map(|u| (skip, u)),
        ];
    }

    /// Records a backward jump taken from `from` to `to`.
    pub fn jumped(&mut self, from: u64, to: u64) {
        if to <= from {
            *self.loops.entry((from, to)).or_default() += 1;
        }
    }

    /// Releases waves waiting at a barrier: they go on together once the last arrived.
    pub fn release(&mut self, waiting: Vec<&mut WaveClock>) {
        let last = waiting.iter().map(|c| c.ready).fold(0.0, f64::max);
        let release = last + BARRIER_LATENCY;
        for c in waiting {
            self.stalls[Stall::Barrier as usize] += release - c.ready;
            c.ready = release;
        }
    }

    /// The estimate once every wave finished.
    pub fn summary(&mut self) -> TimingSummary {
        let d = self.device;
        let main_loop = self.main_loop();
        // The kernel's end releases its stores to memory: it is over once DRAM took them.
        let end = self.memory.flush(self.end);
        let simd_cycles = end * f64::from(d.compute_units * d.simds);
        let matrix_use = if simd_cycles > 0.0 {
            self.matrix_busy / simd_cycles
        } else {
            0.0
        };
        TimingSummary {
            device: d.name,
            cycles: end.ceil() as u64,
            picoseconds: (end / d.clock_under_matrix_use(matrix_use) * 1e6).round() as u64,
            stalls: self.stalls.map(|s| s.round() as u64),
            matrix_busy: self.matrix_busy.round() as u64,
            dram_bytes: self.memory.dram_bytes,
            main_loop,
        }
    }

    /// The loop whose instructions waited and issued the most wave-cycles.
    fn main_loop(&self) -> Option<super::LoopTime> {
        let in_range = |from: u64, to: u64| {
            self.by_instruction
                .iter()
                .filter(move |r| r.issued > 0 && r.pc >= to && r.pc <= from)
        };
        let weight = |from, to| -> f64 {
            in_range(from, to)
                .map(|r| r.stalls.iter().sum::<f64>() + r.issued as f64 * self.issue)
                .sum()
        };
        let (&(from, to), _) = self
            .loops
            .iter()
            .max_by(|a, b| weight(a.0.0, a.0.1).total_cmp(&weight(b.0.0, b.0.1)))?;
        let mut stalls = [0.0; Stall::ALL.len()];
        let mut issued = 0;
        for r in in_range(from, to) {
            issued += r.issued;
            for (s, x) in stalls.iter_mut().zip(r.stalls) {
                *s += x;
            }
        }
        Some(super::LoopTime {
            first_pc: to,
            last_pc: from,
            instructions: issued,
            stalls: stalls.map(|s| s.round() as u64),
        })
    }
}

/// The access whose completion lets `queue` (of kind `q`) hold at most `n` accesses, if it holds
/// more.
fn satisfied(queue: &VecDeque<Pending>, n: usize, q: Queue) -> Option<Pending> {
    if queue.len() <= n {
        return None;
    }
    let k = queue.len() - n - 1;
    if q.ordered() {
        return queue.get(k).copied();
    }
    let mut by_done: Vec<Pending> = queue.iter().copied().collect();
    by_done.sort_by(|a, b| a.arrival.done.total_cmp(&b.arrival.done));
    by_done.get(k).copied()
}
