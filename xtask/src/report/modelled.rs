//! The estimated time of a run on a device, from the emulator's cycle model: the time, how close
//! it comes to the roofline bound, and where the waves waited, over the whole run and in its
//! hottest loop.

use super::roofline::Estimate;
use iron_emu::timing::{Stall, TimingSummary};
use serde::Serialize;

/// Where waves waited: each reason's share of the wave-cycles waited (reasons with none left
/// out).
#[derive(Clone, Debug, Serialize)]
pub struct Stalls(pub Vec<(&'static str, f64)>);

impl Stalls {
    fn of(cycles: &[u64; 7]) -> Stalls {
        let total: u64 = cycles.iter().sum();
        Stalls(
            Stall::ALL
                .iter()
                .zip(cycles)
                .filter(|&(_, &c)| c > 0)
                .map(|(s, &c)| (s.name(), c as f64 / total as f64))
                .collect(),
        )
    }

    /// The reason with the largest share, if any wave waited.
    pub fn top(&self) -> Option<(&'static str, f64)> {
        self.0.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// A run's modelled time on one device.
#[derive(Clone, Debug, Serialize)]
pub struct Modelled {
    /// The device's name.
    pub device: &'static str,
    /// Estimated seconds (a model, not a measurement).
    pub seconds: f64,
    /// The roofline bound over the estimate: 1.0 is a kernel at the bound.
    pub of_roofline: f64,
    /// Where the waves waited over the whole run.
    pub stalls: Stalls,
    /// Wave-instructions of the hottest loop, and where its instructions waited.
    pub main_loop: Option<(u64, Stalls)>,
}

impl Modelled {
    /// The estimate `t` set against the roofline bound `bound` of the same device.
    pub fn new(t: &TimingSummary, bound: &Estimate) -> Modelled {
        let seconds = t.seconds();
        Modelled {
            device: t.device,
            seconds,
            of_roofline: if seconds > 0.0 {
                bound.seconds / seconds
            } else {
                0.0
            },
            stalls: Stalls::of(&t.stalls),
            main_loop: t
                .main_loop
                .as_ref()
                .map(|l| (l.instructions, Stalls::of(&l.stalls))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_and_the_top_reason_is_the_largest() {
        let s = Stalls::of(&[10, 0, 30, 0, 0, 60, 0]);
        let total: f64 = s.0.iter().map(|(_, x)| x).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert_eq!(s.0.len(), 3);
        assert_eq!(s.top(), Some(("barrier", 0.6)));
        assert!(Stalls::of(&[0; 7]).top().is_none());
    }
}
