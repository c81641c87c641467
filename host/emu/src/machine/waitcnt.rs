//! Memory instructions in flight and the wait counters that order them: the waitcnt check.
//!
//! Hardware issues a load and goes on; its destination registers are written later, and only a
//! wait (`s_waitcnt` on GFX9 and GFX11, GFX12's `s_wait_*`) guarantees they hold the loaded
//! value. The emulator completes every access inside its instruction, so code that uses a
//! load's destination before the wait gets the loaded value here and the old one, or a race,
//! on hardware. With the check on, each wave keeps the accesses it has issued and not yet
//! waited for, and an instruction naming a register one of them still has to write is a fault.
//!
//! Which accesses a wait completes follows the counters' ordering rules (AMD's ISA guides,
//! "Data dependency resolution"; LLVM's SIInsertWaitcnts relies on the same): accesses of one
//! [`Queue`] that the hardware returns in order complete oldest first, so a wait for at most
//! `n` outstanding completes an access once more than `n` of its queue were issued at or after
//! it; an access of a queue that returns out of order is complete only after a wait for zero.
//! A counter is at most its hardware maximum (the wave stalls at it), so the oldest accesses
//! beyond it are complete without a wait.
//!
//! Not modelled: operands an encoding does not name (EXEC, VCC and M0 read implicitly) and VGPRs
//! renamed by GFX9's GPR index mode (such instructions are not checked). The GFX9 wait states
//! between a store's issue and an overwrite of its data are no counter: `super::store_data`.

use std::collections::VecDeque;

use super::operand::{Operand, OperandKind};
use crate::target::Target;

/// The register files an access can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegisterFile {
    /// Scalar registers (the GFX9-numbered file of the wave state).
    Scalar,
    /// Architected vector registers.
    Vector,
    /// Accumulation registers.
    Accumulation,
}

/// Consecutive registers of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Registers {
    pub file: RegisterFile,
    pub first: u8,
    pub count: u8,
}

impl Registers {
    /// The registers operand `o` names, if it names any.
    pub fn of(o: &Operand) -> Option<Registers> {
        let (file, first) = match o.kind {
            OperandKind::Sgpr(r) => (RegisterFile::Scalar, r),
            OperandKind::Vgpr(r) => (RegisterFile::Vector, r),
            OperandKind::Agpr(r) => (RegisterFile::Accumulation, r),
            _ => return None,
        };
        Some(Registers {
            file,
            first,
            count: o.dwords.max(1),
        })
    }

    /// The registers as assembly names them (`v4`, `s[8:11]`, `a[0:3]`).
    pub fn name(&self) -> String {
        let prefix = match self.file {
            RegisterFile::Scalar => "s",
            RegisterFile::Vector => "v",
            RegisterFile::Accumulation => "a",
        };
        if self.count == 1 {
            format!("{prefix}{}", self.first)
        } else {
            let last = u16::from(self.first) + u16::from(self.count) - 1;
            format!("{prefix}[{}:{last}]", self.first)
        }
    }

    /// Indices of the registers, within their file (at most 255 for vector files, 127 scalar).
    fn indices(&self) -> impl Iterator<Item = usize> {
        let limit = match self.file {
            RegisterFile::Scalar => 128,
            _ => 256,
        };
        let first = usize::from(self.first);
        first..(first + usize::from(self.count)).min(limit)
    }
}

/// Every register an instruction's operands name, read or written.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Footprint {
    ranges: [Option<Registers>; 10],
}

impl Footprint {
    /// The registers `operands` name (operands naming constants are skipped). An instruction
    /// names at most ten register operands.
    pub fn named<'a>(operands: impl IntoIterator<Item = &'a Operand>) -> Footprint {
        let mut f = Footprint::default();
        let mut registers = operands.into_iter().filter_map(Registers::of);
        for (slot, r) in f.ranges.iter_mut().zip(&mut registers) {
            *slot = Some(r);
        }
        debug_assert!(
            registers.next().is_none(),
            "more than ten register operands"
        );
        f
    }

    /// The register ranges, in operand order.
    pub fn ranges(&self) -> impl Iterator<Item = Registers> + '_ {
        self.ranges.iter().flatten().copied()
    }
}

/// A class of accesses that one wait counter counts, and whose order of completion is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queue {
    /// Vector memory (vmcnt; GFX12 loadcnt): loads and atomics that return, in order; on GFX9
    /// stores too. GFX10 and later count stores apart (vscnt, storecnt); no register waits on
    /// them, so they are not kept.
    Vector,
    /// LDS (lgkmcnt; GFX12 dscnt), in order; on GFX10 and later flat accesses too.
    Lds,
    /// Scalar memory (lgkmcnt; GFX12 kmcnt), returned out of order.
    Scalar,
    /// A GFX9 flat access's count on vmcnt: it may complete out of order with other vector
    /// accesses, because it may be an LDS access.
    FlatVector,
    /// A GFX9 flat access's count on lgkmcnt, out of order for the same reason.
    FlatLds,
}

/// How many queues there are.
pub(crate) const QUEUES: usize = 5;

impl Queue {
    /// Every queue, in index order.
    pub const ALL: [Queue; QUEUES] = [
        Queue::Vector,
        Queue::Lds,
        Queue::Scalar,
        Queue::FlatVector,
        Queue::FlatLds,
    ];

    /// The queue's place in per-queue arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the queue's accesses complete in the order they were issued.
    pub fn ordered(self) -> bool {
        matches!(self, Queue::Vector | Queue::Lds)
    }

    /// How many accesses the queue's counter holds before the wave stalls.
    pub fn limit(self, target: Target) -> usize {
        match self {
            Queue::Vector | Queue::FlatVector => 63,
            Queue::Lds | Queue::FlatLds | Queue::Scalar if !target.is_rdna() => 15,
            Queue::Scalar if target.has_split_counters() => 31,
            _ => 63,
        }
    }

    /// The counter to wait on, as `target`'s assembly names it.
    pub fn counter(self, target: Target) -> &'static str {
        match (self, target.has_split_counters()) {
            (Queue::Vector, true) => "loadcnt",
            (Queue::Lds, true) => "dscnt",
            (Queue::Scalar, true) => "kmcnt",
            (Queue::Vector, false) => "vmcnt",
            (Queue::Lds | Queue::Scalar, false) => "lgkmcnt",
            (Queue::FlatVector | Queue::FlatLds, _) => "vmcnt(0) or lgkmcnt(0)",
        }
    }
}

/// What a memory instruction puts in flight: the queues that count it (a flat access is
/// counted by two counters) and the registers it writes when it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Issue {
    pub queues: [Option<Queue>; 2],
    pub writes: Option<Registers>,
}

/// What a wait instruction waits for: per queue, at most how many accesses stay outstanding
/// (`None`: the queue is not waited for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wait {
    at_most: [Option<u8>; QUEUES],
}

impl Wait {
    /// At most how many accesses of `q` stay outstanding (`None`: `q` is not waited for).
    pub fn at_most(&self, q: Queue) -> Option<u8> {
        self.at_most[q.index()]
    }

    /// A wait leaving at most `n` accesses of each of `queues` outstanding, on top of `self`.
    pub fn with(mut self, queues: &[Queue], n: u8) -> Wait {
        for q in queues {
            self.at_most[q.index()] = Some(n);
        }
        self
    }
}

/// How an instruction takes part in the wait counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Counting {
    /// Not at all.
    #[default]
    None,
    /// It issues an access.
    Issue(Issue),
    /// It waits.
    Wait(Wait),
}

/// An access in flight.
#[derive(Clone, Copy, Debug)]
struct Access {
    queues: [Option<Queue>; 2],
    writes: Option<Registers>,
    /// The PC of the instruction that issued it.
    pc: u64,
}

/// The use of a register that an access in flight still has to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hazard {
    /// The registers used that the access writes.
    pub registers: Registers,
    /// The PC of the instruction that issued the access.
    pub pc: u64,
    /// The queue the access is waited for on.
    pub queue: Queue,
}

/// One bit per register of each file that some access in flight writes.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    scalar: [u64; 2],
    vector: [u64; 4],
    accumulation: [u64; 4],
}

impl Pending {
    fn words(&mut self, file: RegisterFile) -> &mut [u64] {
        match file {
            RegisterFile::Scalar => &mut self.scalar,
            RegisterFile::Vector => &mut self.vector,
            RegisterFile::Accumulation => &mut self.accumulation,
        }
    }

    fn mark(&mut self, r: Registers) {
        let words = self.words(r.file);
        for i in r.indices() {
            words[i / 64] |= 1 << (i % 64);
        }
    }

    fn any(&self, r: Registers) -> bool {
        let words: &[u64] = match r.file {
            RegisterFile::Scalar => &self.scalar,
            RegisterFile::Vector => &self.vector,
            RegisterFile::Accumulation => &self.accumulation,
        };
        r.indices().any(|i| words[i / 64] >> (i % 64) & 1 == 1)
    }
}

/// The accesses a wave has issued and not yet waited for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outstanding {
    /// In issue order, oldest first.
    accesses: VecDeque<Access>,
    /// How many of `accesses` each queue holds.
    queued: [usize; QUEUES],
    pending: Pending,
}

/// The registers `a` and `b` both name.
pub(crate) fn overlap(a: Registers, b: Registers) -> Option<Registers> {
    if a.file != b.file {
        return None;
    }
    let first = a.first.max(b.first);
    let end =
        (u16::from(a.first) + u16::from(a.count)).min(u16::from(b.first) + u16::from(b.count));
    (u16::from(first) < end).then(|| Registers {
        file: a.file,
        first,
        count: (end - u16::from(first)) as u8,
    })
}

impl Outstanding {
    /// Forgets every access (a new wave starts).
    pub fn clear(&mut self) {
        self.accesses.clear();
        self.queued = [0; QUEUES];
        self.pending = Pending::default();
    }

    /// The first register of `footprint` that an access in flight still has to write, for an
    /// instruction that issues `issue` (if any). An access overwriting the destination of an
    /// earlier one of the same in-order queue is no hazard: the two complete in order.
    pub fn hazard(&self, footprint: &Footprint, issue: Option<&Issue>) -> Option<Hazard> {
        if self.accesses.is_empty() {
            return None;
        }
        for used in footprint.ranges() {
            if !self.pending.any(used) {
                continue;
            }
            let own_destination = issue.filter(|i| i.writes == Some(used));
            for a in &self.accesses {
                let Some(registers) = a.writes.and_then(|w| overlap(w, used)) else {
                    continue;
                };
                let in_order_with = |i: &Issue| {
                    a.queues
                        .iter()
                        .flatten()
                        .any(|q| q.ordered() && i.queues.contains(&Some(*q)))
                };
                if own_destination.is_some_and(in_order_with) {
                    continue;
                }
                let queue = a.queues.iter().flatten().next().copied();
                return Some(Hazard {
                    registers,
                    pc: a.pc,
                    queue: queue.unwrap_or(Queue::Vector),
                });
            }
        }
        None
    }

    /// Records the access `issue` that the instruction at `pc` put in flight.
    pub fn issue(&mut self, issue: &Issue, pc: u64, target: Target) {
        let ordered = issue.queues.iter().flatten().any(|q| q.ordered());
        if issue.writes.is_none() && !ordered {
            return;
        }
        self.accesses.push_back(Access {
            queues: issue.queues,
            writes: issue.writes,
            pc,
        });
        if let Some(w) = issue.writes {
            self.pending.mark(w);
        }
        for q in issue.queues.iter().flatten() {
            self.queued[q.index()] += 1;
        }
        let full = issue
            .queues
            .iter()
            .flatten()
            .any(|&q| self.queued[q.index()] > q.limit(target));
        if full {
            // The wave stalled until the counter went below its maximum: the queue's oldest
            // access is complete.
            let mut limits = [usize::MAX; QUEUES];
            for q in issue.queues.iter().flatten() {
                limits[q.index()] = q.limit(target);
            }
            self.complete(|counts, a| {
                a.queues
                    .iter()
                    .flatten()
                    .any(|q| counts[q.index()] > limits[q.index()])
            });
        }
    }

    /// Completes the accesses `wait` guarantees are done.
    pub fn wait(&mut self, wait: &Wait) {
        if self.accesses.is_empty() {
            return;
        }
        self.complete(|counts, a| {
            a.queues
                .iter()
                .flatten()
                .any(|q| match wait.at_most[q.index()] {
                    Some(n) if q.ordered() => counts[q.index()] > usize::from(n),
                    Some(n) => n == 0,
                    None => false,
                })
        });
    }

    /// Removes the accesses `done` says are complete, given how many accesses of each queue
    /// were issued at or after them, and with each the older accesses of its in-order queues.
    fn complete(&mut self, done: impl Fn(&[usize; QUEUES], &Access) -> bool) {
        let mut counts = [0usize; QUEUES];
        let mut younger_done = [false; QUEUES];
        let mut keep = vec![true; self.accesses.len()];
        for (k, a) in self.accesses.iter().enumerate().rev() {
            for q in a.queues.iter().flatten() {
                counts[q.index()] += 1;
            }
            let ordered = || a.queues.iter().flatten().filter(|q| q.ordered());
            if done(&counts, a) || ordered().any(|q| younger_done[q.index()]) {
                keep[k] = false;
                for q in ordered() {
                    younger_done[q.index()] = true;
                }
            }
        }
        let mut k = 0;
        self.accesses.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        self.pending = Pending::default();
        self.queued = [0; QUEUES];
        for a in &self.accesses {
            if let Some(w) = a.writes {
                self.pending.mark(w);
            }
            for q in a.queues.iter().flatten() {
                self.queued[q.index()] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(first: u8, count: u8) -> Registers {
        Registers {
            file: RegisterFile::Vector,
            first,
            count,
        }
    }

    fn load(queue: Queue, writes: Option<Registers>) -> Issue {
        Issue {
            queues: [Some(queue), None],
            writes,
        }
    }

    fn uses(r: Registers) -> Footprint {
        let mut f = Footprint::default();
        f.ranges[0] = Some(r);
        f
    }

    #[test]
    fn a_load_is_pending_until_a_wait_covers_it() {
        let mut o = Outstanding::default();
        o.issue(&load(Queue::Vector, Some(v(4, 4))), 0x100, Target::Gfx942);
        o.issue(&load(Queue::Vector, Some(v(8, 1))), 0x108, Target::Gfx942);
        let h = o.hazard(&uses(v(6, 1)), None).unwrap();
        assert_eq!(
            (h.registers, h.pc, h.queue),
            (v(6, 1), 0x100, Queue::Vector)
        );
        assert_eq!(o.hazard(&uses(v(0, 4)), None), None);
        o.wait(&Wait::default().with(&[Queue::Vector], 2));
        assert!(o.hazard(&uses(v(6, 1)), None).is_some(), "two in flight");
        o.wait(&Wait::default().with(&[Queue::Vector], 1));
        assert_eq!(o.hazard(&uses(v(4, 4)), None), None);
        assert_eq!(o.hazard(&uses(v(8, 1)), None).map(|h| h.pc), Some(0x108));
        o.wait(&Wait::default().with(&[Queue::Lds], 0));
        assert!(o.hazard(&uses(v(8, 1)), None).is_some(), "another counter");
        o.wait(&Wait::default().with(&[Queue::Vector], 0));
        assert_eq!(o.hazard(&uses(v(8, 1)), None), None);
    }

    #[test]
    fn out_of_order_queues_complete_only_at_zero() {
        let mut o = Outstanding::default();
        let s = Registers {
            file: RegisterFile::Scalar,
            first: 4,
            count: 2,
        };
        o.issue(&load(Queue::Scalar, Some(s)), 0x10, Target::Gfx1100);
        o.issue(&load(Queue::Scalar, None), 0x18, Target::Gfx1100);
        o.wait(&Wait::default().with(&[Queue::Scalar], 1));
        assert!(o.hazard(&uses(s), None).is_some());
        o.wait(&Wait::default().with(&[Queue::Scalar], 0));
        assert!(o.hazard(&uses(s), None).is_none());
    }

    #[test]
    fn a_later_load_to_the_same_registers_of_an_in_order_queue_is_no_hazard() {
        let mut o = Outstanding::default();
        let first = load(Queue::Lds, Some(v(0, 2)));
        o.issue(&first, 0x20, Target::Gfx90a);
        assert_eq!(o.hazard(&uses(v(0, 2)), Some(&first)), None);
        let scalar = load(Queue::Scalar, Some(v(0, 2)));
        assert!(o.hazard(&uses(v(0, 2)), Some(&scalar)).is_some());
        assert!(o.hazard(&uses(v(1, 1)), None).is_some());
    }

    #[test]
    fn a_completed_access_completes_the_older_ones_of_its_in_order_queues() {
        // A GFX11 flat load on vmcnt and lgkmcnt, after a global load: lgkmcnt(0) completes
        // the flat load, and with it the global load issued before it.
        let mut o = Outstanding::default();
        o.issue(&load(Queue::Vector, Some(v(1, 1))), 0x30, Target::Gfx1100);
        let flat = Issue {
            queues: [Some(Queue::Vector), Some(Queue::Lds)],
            writes: Some(v(2, 1)),
        };
        o.issue(&flat, 0x38, Target::Gfx1100);
        o.wait(&Wait::default().with(&[Queue::Lds], 0));
        assert_eq!(o.hazard(&uses(v(1, 2)), None), None);
    }

    #[test]
    fn a_gfx9_flat_load_completes_only_when_a_counter_drains() {
        let mut o = Outstanding::default();
        let flat = Issue {
            queues: [Some(Queue::FlatVector), Some(Queue::FlatLds)],
            writes: Some(v(3, 1)),
        };
        o.issue(&flat, 0x50, Target::Gfx942);
        o.issue(&load(Queue::Vector, Some(v(4, 1))), 0x58, Target::Gfx942);
        o.issue(&load(Queue::Vector, None), 0x60, Target::Gfx942);
        let vm = [Queue::Vector, Queue::FlatVector];
        o.wait(&Wait::default().with(&vm, 1));
        assert_eq!(o.hazard(&uses(v(4, 1)), None), None, "in order: done");
        let h = o.hazard(&uses(v(3, 1)), None).unwrap();
        assert_eq!(
            (h.pc, h.queue.counter(Target::Gfx942)),
            (0x50, "vmcnt(0) or lgkmcnt(0)")
        );
        o.wait(&Wait::default().with(&[Queue::Lds, Queue::Scalar, Queue::FlatLds], 0));
        assert_eq!(o.hazard(&uses(v(3, 1)), None), None);
    }

    #[test]
    fn a_full_counter_completes_its_oldest_access() {
        let mut o = Outstanding::default();
        o.issue(&load(Queue::Lds, Some(v(0, 1))), 0x40, Target::Gfx942);
        for k in 0..15 {
            o.issue(&load(Queue::Lds, None), 0x48 + 8 * k, Target::Gfx942);
        }
        assert!(o.hazard(&uses(v(0, 1)), None).is_none(), "16th LDS access");
    }
}
