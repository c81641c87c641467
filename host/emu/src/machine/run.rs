//! Running a dispatch: the resident workgroups, each in a slot with its waves and LDS, and the
//! loop that lets the scheduler's chosen wave run until its slice ends, it waits at a barrier or
//! it ends. A slot whose workgroup finished takes the next workgroup of the grid.

use super::checks::Checks;
use super::schedule::{Picker, Schedule, WaveRef};
use super::wave::{State, VectorRows};
use super::{Ctx, Flow, Isa, LaunchState, Lds, Program, Wave};
use crate::counters::Counters;
use crate::dispatch::{Dispatch, TraceEvent};
use crate::error::{EmuError, Fault, WaveSnapshot, WaveStatus};
use crate::memory::DeviceMemory;
use crate::target::Target;

/// How a dispatch runs: its instruction budget, its schedule and the device's size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunOptions {
    /// Wave-instructions the dispatch may run in all.
    pub budget: u64,
    /// How waves are interleaved.
    pub schedule: Schedule,
    /// Compute units (CDNA) or WGPs (RDNA) of the device.
    pub compute_units: u32,
    /// The sanitizer checks.
    pub checks: Checks,
}

/// A workgroup on the device: its waves, its LDS, and how many of its waves still run.
struct Slot {
    group: [u32; 3],
    waves: Vec<Wave>,
    lds: Lds,
    /// Waves neither at a barrier nor finished.
    running: u32,
    /// Waves that finished.
    done: u32,
}

/// How a wave's turn ended.
enum Turn {
    /// Its slice ran out; it goes on later.
    Sliced,
    /// It waits at a barrier.
    Barrier,
    /// It ended.
    Ended,
    /// The dispatch's budget ran out.
    OutOfBudget,
}

/// The dispatch being run: what stays fixed, and the machine state that changes.
struct Run<'a, 't, I: Isa> {
    target: Target,
    d: &'a Dispatch<'a>,
    launch: &'a LaunchState,
    program: &'a mut Program<I>,
    mem: &'a mut DeviceMemory,
    trace: &'a mut Option<&'t mut dyn FnMut(&TraceEvent<'_>)>,
    counters: Counters,
    slots: Vec<Slot>,
    runnable: Vec<WaveRef>,
    /// Linear id (x fastest) of the next workgroup to place, and the grid's workgroup count.
    next_group: u64,
    workgroups: u64,
    finished: u64,
    executed: u64,
    budget: u64,
}

/// Runs every workgroup of `d`.
pub(crate) fn run_groups<I: Isa>(
    target: Target,
    mem: &mut DeviceMemory,
    program: &mut Program<I>,
    d: &Dispatch<'_>,
    launch: &LaunchState,
    options: RunOptions,
    trace: &mut Option<&mut dyn FnMut(&TraceEvent<'_>)>,
) -> Result<Counters, EmuError> {
    let workgroups: u64 = d.grid.iter().map(|&n| u64::from(n)).product();
    // How many workgroups the schedule keeps resident was decided with the scratch for them.
    let resident = u64::from(launch.resident_groups);
    let rows = VectorRows::allocated(&d.descriptor, target.is_rdna(), launch.wave.lanes() == 32);
    let slots = (0..resident)
        .map(|_| Slot {
            group: [0; 3],
            waves: (0..launch.waves_per_group)
                .map(|_| Wave::new(rows))
                .collect(),
            lds: Lds::new(launch.lds_size as usize, options.checks),
            running: 0,
            done: 0,
        })
        .collect();
    let mut run = Run {
        target,
        d,
        launch,
        program,
        mem,
        trace,
        counters: Counters {
            lds_bytes_per_workgroup: launch.lds_size,
            ..Counters::default()
        },
        slots,
        runnable: Vec::new(),
        next_group: 0,
        workgroups,
        finished: 0,
        executed: 0,
        budget: options.budget,
    };
    for slot in 0..resident as usize {
        run.place(slot);
    }
    let mut picker = Picker::new(options.schedule);
    while !run.runnable.is_empty() {
        let (at, slice) = picker.next(&run.runnable);
        let (slot, wave) = run.runnable[at];
        match run.turn(slot as usize, wave as usize, slice)? {
            Turn::Sliced => {}
            Turn::Barrier => {
                run.runnable.swap_remove(at);
                run.slots[slot as usize].running -= 1;
                if options.checks.barriers {
                    run.check_barrier(slot as usize)?;
                }
                run.release_barrier(slot as usize);
            }
            Turn::Ended => {
                run.runnable.swap_remove(at);
                let s = &mut run.slots[slot as usize];
                s.running -= 1;
                s.done += 1;
                if s.done == launch.waves_per_group {
                    run.finished += 1;
                    run.place(slot as usize);
                } else {
                    if options.checks.barriers {
                        run.check_barrier(slot as usize)?;
                    }
                    run.release_barrier(slot as usize);
                }
            }
            Turn::OutOfBudget => return Err(run.budget_exceeded()),
        }
    }
    Ok(run.counters)
}

impl<I: Isa> Run<'_, '_, I> {
    /// Starts the next workgroup of the grid, if any, in `slot`.
    fn place(&mut self, slot: usize) {
        if self.next_group >= self.workgroups {
            return;
        }
        let [gx, gy, _] = self.d.grid.map(u64::from);
        let id = self.next_group;
        let group = [id % gx, id / gx % gy, id / (gx * gy)].map(|c| c as u32);
        self.next_group += 1;
        let waves_per_group = self.launch.waves_per_group;
        let s = &mut self.slots[slot];
        s.group = group;
        s.lds.reset();
        for (k, w) in s.waves.iter_mut().enumerate() {
            w.lanes = self.launch.wave.lanes();
            let scratch_wave = slot as u32 * waves_per_group + k as u32;
            I::initialize(
                w,
                self.target,
                self.d,
                self.launch,
                group,
                k as u32,
                scratch_wave,
            );
            self.runnable.push((slot as u32, k as u32));
        }
        s.running = waves_per_group;
        s.done = 0;
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
        let instruction = self
            .program
            .index_of(pc, self.launch.wave)
            .map(|i| I::disassemble(self.target, self.program.instruction(self.launch.wave, i)))
            .unwrap_or_default();
        Err(EmuError::Execution {
            kernel: self.d.kernel_name.to_string(),
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
        let mut released = false;
        for (k, w) in s.waves.iter_mut().enumerate() {
            if w.state == State::Barrier {
                w.state = State::Running;
                self.runnable.push((slot as u32, k as u32));
                s.running += 1;
                released = true;
            }
        }
        if released {
            s.lds.barrier();
            self.counters.barriers += 1;
        }
    }

    /// Runs wave `k` of `slot` for at most `slice` instructions.
    fn turn(&mut self, slot: usize, k: usize, slice: u32) -> Result<Turn, EmuError> {
        let s = &mut self.slots[slot];
        let group = s.group;
        let w = &mut s.waves[k];
        let wave_size = self.launch.wave;
        let mut ctx = Ctx {
            target: self.target,
            mem: self.mem,
            lds: &mut s.lds,
            wave_index: k as u32,
            pc: 0,
            counters: &mut self.counters,
            scratch: self.launch.scratch,
        };
        for _ in 0..slice {
            let pc = w.pc;
            ctx.pc = pc;
            let fail = |fault: Fault, text: String| EmuError::Execution {
                kernel: self.d.kernel_name.to_string(),
                workgroup: group,
                wave: k as u32,
                pc,
                instruction: text,
                fault,
            };
            if self.executed >= self.budget {
                return Ok(Turn::OutOfBudget);
            }
            self.executed += 1;
            let index = self
                .program
                .index_of(pc, wave_size)
                .map_err(|f| fail(f, String::new()))?;
            w.hold(self.program.rows(wave_size, index));
            let inst = self.program.instruction(wave_size, index);
            if let Some(t) = self.trace.as_mut() {
                t(&TraceEvent {
                    workgroup: group,
                    wave: k as u32,
                    pc,
                    exec: w.exec(),
                    instruction: I::traced(inst),
                });
            }
            let flow = I::execute(&mut ctx, w, inst)
                .map_err(|f| fail(f, I::disassemble(self.target, inst)))?;
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
        }
        Ok(Turn::Sliced)
    }

    /// The budget error: where each wave of every resident, unfinished workgroup stood.
    fn budget_exceeded(&mut self) -> EmuError {
        let (target, wave_size) = (self.target, self.launch.wave);
        let mut waves = Vec::new();
        for s in self
            .slots
            .iter()
            .filter(|s| s.done < self.launch.waves_per_group)
        {
            for (k, w) in s.waves.iter().enumerate() {
                let instruction = self
                    .program
                    .index_of(w.pc, wave_size)
                    .map(|index| I::disassemble(target, self.program.instruction(wave_size, index)))
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
            kernel: self.d.kernel_name.to_string(),
            budget: self.budget,
            finished_workgroups: self.finished,
            workgroups: self.workgroups,
            waves,
        }
    }
}
