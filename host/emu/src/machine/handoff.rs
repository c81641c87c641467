//! Slots changing hands between a dispatch's workers, so that none idles while another still
//! has several workgroups to run.
//!
//! Every slot is always either being run by a worker or on its way to one, so every resident
//! workgroup keeps making progress (a wave spinning on another workgroup still finishes):
//! - a worker takes its own slot indices when it starts; a worker with nothing left to run first
//!   takes the indices of a worker that has not started yet (a pool thread can start late);
//! - otherwise it waits, counted as hungry, until a busy worker with two or more workgroups
//!   hands it a slot between two turns, or the dispatch ends.
//!
//! A hand-over claims one hungry worker before it gives, so no slot waits unclaimed while
//! every worker is busy.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The slots of a dispatch that are not with a worker: indices not yet made, and made slots
/// given away.
pub(super) struct Handoff<S> {
    /// Per worker, the slot indices it has not made yet.
    unmade: Vec<Mutex<Vec<u32>>>,
    /// Slots given and not yet taken.
    given: Mutex<Vec<S>>,
    /// Signalled when a slot is given or the dispatch ends.
    changed: Condvar,
    /// Workers waiting for a slot that no giver has claimed yet.
    hungry: AtomicU32,
}

impl<S> Handoff<S> {
    /// The hand-off of a dispatch whose worker `w` owns the slot indices `sets[w]`.
    pub fn new(sets: Vec<Vec<u32>>) -> Self {
        Handoff {
            unmade: sets.into_iter().map(Mutex::new).collect(),
            given: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            hungry: AtomicU32::new(0),
        }
    }

    /// The slot indices of worker `worker` that no one has taken yet.
    pub fn own(&self, worker: usize) -> Vec<u32> {
        std::mem::take(&mut *lock(&self.unmade[worker]))
    }

    /// The slot indices of some worker that has not started, if any.
    pub fn unstarted(&self) -> Option<Vec<u32>> {
        self.unmade.iter().find_map(|set| {
            let taken = std::mem::take(&mut *lock(set));
            (!taken.is_empty()).then_some(taken)
        })
    }

    /// Whether a worker waits for a slot (one relaxed load: busy workers ask between turns).
    pub fn wanted(&self) -> bool {
        self.hungry.load(Ordering::Relaxed) > 0
    }

    /// Claims one waiting worker for a slot the caller then [`Handoff::give`]s; false if
    /// another giver claimed the last one first.
    pub fn claim(&self) -> bool {
        self.hungry
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |h| h.checked_sub(1))
            .is_ok()
    }

    /// Gives `slot` to the worker the caller claimed.
    pub fn give(&self, slot: S) {
        lock(&self.given).push(slot);
        self.changed.notify_one();
    }

    /// Waits for a given slot; `None` once `ended()` holds (every workgroup finished or the
    /// dispatch stopped).
    pub fn wait(&self, ended: impl Fn() -> bool) -> Option<S> {
        let mut given = lock(&self.given);
        self.hungry.fetch_add(1, Ordering::AcqRel);
        loop {
            if let Some(slot) = given.pop() {
                return Some(slot);
            }
            if ended() {
                // A worker that ends unclaimed withdraws; one claimed at the end (the dispatch
                // stopped) leaves its slot to `into_left`.
                self.claim();
                return None;
            }
            given = self.changed.wait(given).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Wakes every waiting worker to check whether the dispatch ended. Called by whoever ends
    /// it, after making `ended()` hold.
    pub fn end(&self) {
        let _given = lock(&self.given);
        self.changed.notify_all();
    }

    /// The slots given and never taken (only when the dispatch stopped).
    pub fn into_left(self) -> Vec<S> {
        self.given.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

/// Locks `m`, taking over a poisoned lock (a worker that panicked stops the dispatch anyway).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::Handoff;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_late_workers_slots_go_to_the_first_idle_worker() {
        let h: Handoff<()> = Handoff::new(vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(h.own(0), [0, 2]);
        assert_eq!(h.unstarted(), Some(vec![1, 3]));
        assert_eq!(h.own(1), Vec::<u32>::new());
        assert_eq!(h.unstarted(), None);
    }

    #[test]
    fn a_slot_is_given_only_to_a_claimed_waiter() {
        let h: Handoff<u32> = Handoff::new(vec![vec![], vec![]]);
        assert!(!h.wanted() && !h.claim());
        let ended = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| h.wait(|| ended.load(Ordering::Relaxed)));
            while !h.wanted() {
                std::thread::yield_now();
            }
            assert!(h.claim());
            assert!(!h.claim(), "one waiter is claimed once");
            h.give(7);
            assert_eq!(waiter.join().unwrap(), Some(7));
        });
        let waiter = std::thread::scope(|s| {
            let waiter = s.spawn(|| h.wait(|| ended.load(Ordering::Relaxed)));
            while !h.wanted() {
                std::thread::yield_now();
            }
            ended.store(true, Ordering::Relaxed);
            h.end();
            waiter.join().unwrap()
        });
        assert_eq!(waiter, None);
        assert!(!h.wanted(), "a waiter that ends withdraws");
        assert!(h.into_left().is_empty());
    }
}
