//! The waves of a worker that can run, and which goes next: picked by the schedule, or in
//! timing mode the one that can issue earliest, among those that can issue at the same cycle the
//! one of higher `s_setprio` priority, then the older, as the hardware arbitrates.

use super::schedule::{Picker, WaveRef};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Where a wave stands in the timed order: when it can issue next, and how it ranks among the
/// waves that can issue then. AMD's ISA guides give a wave's priority as its `s_setprio` level
/// (0 lowest, 3 highest; plus the queue's, which is 0 here) and then its age.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Standing {
    /// The cycle.
    pub at: f64,
    /// The wave's `s_setprio` level.
    pub priority: u8,
    /// The wave's launch number: the lower, the older.
    pub age: u64,
}

impl Standing {
    /// A standing no wave yields to (no other wave waits).
    const NONE: Standing = Standing {
        at: f64::INFINITY,
        priority: 0,
        age: u64::MAX,
    };

    /// Whether a wave with this standing lets the wave with `other` go first: `other` can issue
    /// earlier, or at the same cycle with a higher priority, or with the same and older.
    pub fn yields_to(self, other: Standing) -> bool {
        self.at > other.at
            || (self.at == other.at
                && (self.priority, Reverse(self.age)) < (other.priority, Reverse(other.age)))
    }
}

/// A timed wave in the heap: its standing's cycle (as `f64` bits, which order as non-negative
/// cycles do), priority (the highest first) and age, then the wave.
type Entry = (u64, Reverse<u8>, u64, WaveRef);

/// The runnable waves of a worker.
pub(crate) enum Ready {
    /// Picked by a schedule.
    Listed {
        waves: Vec<WaveRef>,
        picker: Picker,
        /// The position of the wave picked last.
        current: usize,
    },
    /// By their [`Standing`], first the one that goes first.
    Timed {
        heap: BinaryHeap<Reverse<Entry>>,
        /// The wave picked last, which is out of the heap while it runs.
        current: Option<WaveRef>,
    },
}

impl Ready {
    /// An empty set picked by `picker`.
    pub fn listed(picker: Picker) -> Ready {
        Ready::Listed {
            waves: Vec::new(),
            picker,
            current: 0,
        }
    }

    /// An empty set ordered by time.
    pub fn timed() -> Ready {
        Ready::Timed {
            heap: BinaryHeap::new(),
            current: None,
        }
    }

    /// Whether no wave can run.
    pub fn is_empty(&self) -> bool {
        match self {
            Ready::Listed { waves, .. } => waves.is_empty(),
            Ready::Timed { heap, current, .. } => heap.is_empty() && current.is_none(),
        }
    }

    /// Adds wave `w`, which stands at `standing` (timing mode).
    pub fn push(&mut self, w: WaveRef, standing: Standing) {
        match self {
            Ready::Listed { waves, .. } => waves.push(w),
            Ready::Timed { heap, .. } => {
                let at = standing.at.max(0.0).to_bits();
                heap.push(Reverse((at, Reverse(standing.priority), standing.age, w)));
            }
        }
    }

    /// The wave to run next and how many instructions it may run; it stays current until
    /// [`Ready::remove_current`] or, in timing mode, [`Ready::requeue_current`].
    pub fn next(&mut self) -> (WaveRef, u32) {
        match self {
            Ready::Listed {
                waves,
                picker,
                current,
            } => {
                let (at, slice) = picker.next(waves);
                *current = at;
                (waves[at], slice)
            }
            Ready::Timed { heap, current, .. } => {
                let Reverse((_, _, _, w)) = heap.pop().expect("a wave is ready");
                *current = Some(w);
                (w, u32::MAX)
            }
        }
    }

    /// The standing of the wave that goes next after the current one (timing mode; one no wave
    /// yields to when none waits).
    pub fn horizon(&self) -> Standing {
        match self {
            Ready::Timed { heap, .. } => heap.peek().map_or(
                Standing::NONE,
                |Reverse((at, Reverse(priority), age, _))| Standing {
                    at: f64::from_bits(*at),
                    priority: *priority,
                    age: *age,
                },
            ),
            Ready::Listed { .. } => Standing::NONE,
        }
    }

    /// Takes the current wave out (it waits at a barrier or ended).
    pub fn remove_current(&mut self) {
        match self {
            Ready::Listed { waves, current, .. } => {
                waves.swap_remove(*current);
            }
            Ready::Timed { current, .. } => *current = None,
        }
    }

    /// Puts the current wave back, standing at `standing` (timing mode; a listed wave never
    /// left).
    pub fn requeue_current(&mut self, standing: Standing) {
        if let Ready::Timed { current, .. } = self
            && let Some(w) = current.take()
        {
            self.push(w, standing);
        }
    }

    /// Drops the waves of slot `slot`, and renames slot `from` to `slot` (the slot was given
    /// away and the last slot moved into its place).
    pub fn give_away(&mut self, slot: u32, from: u32) {
        let rename = |w: &mut WaveRef| {
            if w.0 == from {
                w.0 = slot;
            }
        };
        match self {
            Ready::Listed { waves, .. } => {
                waves.retain(|w| w.0 != slot);
                waves.iter_mut().for_each(rename);
            }
            Ready::Timed { heap, .. } => {
                let kept: Vec<_> = std::mem::take(heap)
                    .into_iter()
                    .filter(|Reverse((_, _, _, w))| w.0 != slot)
                    .map(|Reverse((at, priority, age, mut w))| {
                        rename(&mut w);
                        Reverse((at, priority, age, w))
                    })
                    .collect();
                *heap = kept.into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Schedule;

    /// Wave `age` at cycle `at`, priority `priority`.
    fn wave(at: f64, priority: u8, age: u64) -> Standing {
        Standing { at, priority, age }
    }

    #[test]
    fn timed_waves_come_out_earliest_first_and_the_older_first_on_ties() {
        let mut r = Ready::timed();
        r.push((0, 0), wave(8.0, 0, 0));
        r.push((1, 0), wave(4.0, 0, 2));
        r.push((0, 1), wave(4.0, 0, 1));
        assert_eq!(r.next().0, (0, 1));
        assert_eq!(r.horizon(), wave(4.0, 0, 2));
        r.requeue_current(wave(12.0, 0, 1));
        assert_eq!(r.next().0, (1, 0));
        r.remove_current();
        assert_eq!(r.next().0, (0, 0));
        assert_eq!(r.horizon(), wave(12.0, 0, 1));
    }

    #[test]
    fn at_the_same_cycle_the_higher_priority_goes_first_then_the_older() {
        let mut r = Ready::timed();
        r.push((0, 0), wave(4.0, 0, 0));
        r.push((0, 1), wave(4.0, 2, 1));
        r.push((0, 2), wave(3.0, 0, 2));
        assert_eq!(r.next().0, (0, 2));
        let top = r.horizon();
        assert_eq!(top, wave(4.0, 2, 1));
        // The running wave (age 2) gives way at the same cycle to a higher priority, and to an
        // equal one that is older; never to a later one.
        assert!(wave(4.0, 1, 2).yields_to(top));
        assert!(wave(4.0, 2, 2).yields_to(top));
        assert!(!wave(4.0, 2, 0).yields_to(top));
        assert!(!wave(4.0, 3, 2).yields_to(top));
        assert!(!wave(3.5, 0, 2).yields_to(top));
        assert!(wave(4.5, 3, 0).yields_to(top));
        r.remove_current();
        assert_eq!(r.next().0, (0, 1));
        r.remove_current();
        assert_eq!(r.next().0, (0, 0));
        r.remove_current();
        assert!(!wave(1e9, 0, 9).yields_to(r.horizon()));
    }

    #[test]
    fn a_listed_wave_is_removed_where_it_was_picked() {
        let mut r = Ready::listed(Picker::new(Schedule::InOrder));
        r.push((0, 1), wave(0.0, 0, 0));
        r.push((0, 0), wave(0.0, 0, 1));
        assert_eq!(r.next().0, (0, 0));
        r.remove_current();
        assert_eq!(r.next().0, (0, 1));
        r.give_away(0, 3);
        assert!(r.is_empty());
    }
}
