//! The waves of a worker that can run, and which goes next: picked by the schedule, or in
//! timing mode the one that can issue earliest.

use super::schedule::{Picker, WaveRef};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The runnable waves of a worker.
pub(crate) enum Ready {
    /// Picked by a schedule.
    Listed {
        waves: Vec<WaveRef>,
        picker: Picker,
        /// The position of the wave picked last.
        current: usize,
    },
    /// By the cycle each can issue next, earliest first (ties in the order they were added).
    Timed {
        /// (cycle as `f64` bits, sequence, wave).
        heap: BinaryHeap<Reverse<(u64, u64, WaveRef)>>,
        sequence: u64,
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
            sequence: 0,
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

    /// Adds wave `w`, which can issue at cycle `at` (timing mode).
    pub fn push(&mut self, w: WaveRef, at: f64) {
        match self {
            Ready::Listed { waves, .. } => waves.push(w),
            Ready::Timed { heap, sequence, .. } => {
                *sequence += 1;
                heap.push(Reverse((at.max(0.0).to_bits(), *sequence, w)));
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
                let Reverse((_, _, w)) = heap.pop().expect("a wave is ready");
                *current = Some(w);
                (w, u32::MAX)
            }
        }
    }

    /// The earliest cycle another wave can issue at (timing mode; infinite when none can).
    pub fn horizon(&self) -> f64 {
        match self {
            Ready::Timed { heap, .. } => heap
                .peek()
                .map_or(f64::INFINITY, |Reverse((at, _, _))| f64::from_bits(*at)),
            Ready::Listed { .. } => f64::INFINITY,
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

    /// Puts the current wave back, to issue at cycle `at` (timing mode; a listed wave never
    /// left).
    pub fn requeue_current(&mut self, at: f64) {
        if let Ready::Timed { current, .. } = self
            && let Some(w) = current.take()
        {
            self.push(w, at);
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
                    .filter(|Reverse((_, _, w))| w.0 != slot)
                    .map(|Reverse((at, seq, mut w))| {
                        rename(&mut w);
                        Reverse((at, seq, w))
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

    #[test]
    fn timed_waves_come_out_earliest_first_and_in_arrival_order_on_ties() {
        let mut r = Ready::timed();
        r.push((0, 0), 8.0);
        r.push((0, 1), 4.0);
        r.push((1, 0), 4.0);
        assert_eq!(r.next().0, (0, 1));
        assert_eq!(r.horizon(), 4.0);
        r.requeue_current(12.0);
        assert_eq!(r.next().0, (1, 0));
        r.remove_current();
        assert_eq!(r.next().0, (0, 0));
        assert_eq!(r.horizon(), 12.0);
    }

    #[test]
    fn a_listed_wave_is_removed_where_it_was_picked() {
        let mut r = Ready::listed(Picker::new(Schedule::InOrder));
        r.push((0, 1), 0.0);
        r.push((0, 0), 0.0);
        assert_eq!(r.next().0, (0, 0));
        r.remove_current();
        assert_eq!(r.next().0, (0, 1));
        r.give_away(0, 3);
        assert!(r.is_empty());
    }
}
