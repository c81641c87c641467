//! The order in which the machine runs the waves of a dispatch: which wave goes next, and for how
//! many instructions.

use std::fmt;
use std::str::FromStr;

/// How a dispatch's waves are interleaved.
///
/// Hardware runs every workgroup that fits on the device at once, its waves issuing in an order
/// no program may rely on. [`Schedule::Random`] models that: every workgroup that fits is
/// resident, and a generator seeded with `seed` picks the next wave and how long it runs, so a
/// kernel that depends on an order it was not promised gives different results under different
/// seeds, while a run on one host thread (`Gpu::set_threads`) is repeatable. On more threads
/// each draws from a seed of its own and the threads' interleaving adds to the schedule's. [`Schedule::InOrder`] is the kindest order there is: one
/// workgroup at a time, in id order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// One workgroup at a time, in id order (x fastest); its waves take turns in slices of
    /// 256 instructions.
    InOrder,
    /// Every workgroup that fits on the device resident at once; the next wave, and the number
    /// of instructions it runs (a power of two from 1 to 512), drawn from a generator seeded with `seed`.
    Random {
        /// The generator's seed.
        seed: u64,
    },
}

impl Schedule {
    /// The seed of the default schedule.
    pub const DEFAULT_SEED: u64 = 0x1E0D_5EED;
}

impl Default for Schedule {
    /// `random:` [`Schedule::DEFAULT_SEED`].
    fn default() -> Schedule {
        Schedule::Random {
            seed: Schedule::DEFAULT_SEED,
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::InOrder => f.write_str("in-order"),
            Schedule::Random { seed } => write!(f, "random:{seed}"),
        }
    }
}

/// A schedule that does not parse: what was given, and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleParseError(String);

impl fmt::Display for ScheduleParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown schedule `{}`: expected `in-order`, `random` or `random:SEED` \
             (SEED a decimal or 0x-prefixed hexadecimal 64-bit number)",
            self.0
        )
    }
}

impl std::error::Error for ScheduleParseError {}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    /// `in-order`, `random` (the default seed) or `random:SEED`.
    fn from_str(s: &str) -> Result<Schedule, ScheduleParseError> {
        let bad = || ScheduleParseError(s.to_string());
        match s.split_once(':') {
            None if s == "in-order" => Ok(Schedule::InOrder),
            None if s == "random" => Ok(Schedule::default()),
            Some(("random", seed)) => {
                let seed = match seed.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => seed.parse(),
                }
                .map_err(|_| bad())?;
                Ok(Schedule::Random { seed })
            }
            _ => Err(bad()),
        }
    }
}

/// A resident wave: its workgroup's slot and its index in the workgroup.
pub(crate) type WaveRef = (u32, u32);

/// Instructions a wave runs per turn under [`Schedule::InOrder`].
const IN_ORDER_SLICE: u32 = 256;

/// Chooses the next wave to run, and for how long.
pub(crate) enum Picker {
    /// Round robin over the waves in (slot, index) order, after the one that ran last.
    RoundRobin { last: Option<WaveRef> },
    /// Seeded random choice.
    Random(fastrand::Rng),
}

impl Picker {
    /// The picker of `schedule`.
    pub fn new(schedule: Schedule) -> Picker {
        Picker::for_worker(schedule, 0)
    }

    /// The picker of `schedule` for the dispatch's worker thread `worker`: worker 0 draws from
    /// the schedule's seed, each other worker from a seed of its own.
    pub fn for_worker(schedule: Schedule, worker: u32) -> Picker {
        match schedule {
            Schedule::InOrder => Picker::RoundRobin { last: None },
            Schedule::Random { seed } => Picker::Random(fastrand::Rng::with_seed(
                seed ^ u64::from(worker).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            )),
        }
    }

    /// The position in `runnable` (not empty) of the wave to run next, and how many
    /// instructions it may run.
    pub fn next(&mut self, runnable: &[WaveRef]) -> (usize, u32) {
        match self {
            Picker::RoundRobin { last } => {
                let after = |w: &&WaveRef| last.is_none_or(|l| **w > l);
                let pick = runnable
                    .iter()
                    .filter(after)
                    .min()
                    .or_else(|| runnable.iter().min())
                    .copied()
                    .unwrap_or_default();
                *last = Some(pick);
                let at = runnable.iter().position(|w| *w == pick).unwrap_or(0);
                (at, IN_ORDER_SLICE)
            }
            Picker::Random(rng) => {
                let at = rng.usize(..runnable.len());
                (at, 1 << rng.u32(0..=9))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_and_print_back() {
        for text in ["in-order", "random:0", "random:18446744073709551615"] {
            let s: Schedule = text.parse().unwrap();
            assert_eq!(s.to_string(), text);
        }
        assert_eq!("random".parse::<Schedule>(), Ok(Schedule::default()));
        assert_eq!(
            "random:0x10".parse::<Schedule>(),
            Ok(Schedule::Random { seed: 16 })
        );
        for bad in [
            "",
            "random:",
            "random:-1",
            "in-order:3",
            "fifo",
            "random:0xg",
        ] {
            let e = bad.parse::<Schedule>().unwrap_err();
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn round_robin_visits_the_waves_in_order_and_wraps() {
        let mut p = Picker::new(Schedule::InOrder);
        let runnable = [(0, 2), (0, 0), (0, 1)];
        let order: Vec<WaveRef> = (0..4).map(|_| runnable[p.next(&runnable).0]).collect();
        assert_eq!(order, [(0, 0), (0, 1), (0, 2), (0, 0)]);
    }

    #[test]
    fn a_seed_fixes_the_choices_and_another_seed_changes_them() {
        let runnable: Vec<WaveRef> = (0..16).map(|k| (k / 4, k % 4)).collect();
        let picks = |seed| {
            let mut p = Picker::new(Schedule::Random { seed });
            (0..64).map(|_| p.next(&runnable)).collect::<Vec<_>>()
        };
        assert_eq!(picks(7), picks(7));
        assert_ne!(picks(7), picks(8));
        let worker = |w| {
            let mut p = Picker::for_worker(Schedule::Random { seed: 7 }, w);
            (0..64).map(|_| p.next(&runnable)).collect::<Vec<_>>()
        };
        assert_eq!(worker(0), picks(7));
        assert_ne!(worker(1), picks(7));
        assert!(
            picks(7)
                .iter()
                .all(|&(at, n)| at < 16 && n.is_power_of_two() && n <= 512)
        );
    }
}
