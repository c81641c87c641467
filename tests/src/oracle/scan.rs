//! References for the prefix sums (`scan_u32`, `scan_f32`): the exact sums, wrapping for u32,
//! and for f32 the error of any grouping of the additions the decoupled look-back can make.

use super::expected::{Expected, f32_underflow, gamma};

/// The prefix sums of `x` as `scan_u32` writes them: `x[0] + ... + x[i]` (inclusive) or
/// `x[0] + ... + x[i - 1]` (exclusive), wrapping.
pub fn prefix_sums_u32(x: &[u32], inclusive: bool) -> Vec<u32> {
    let mut sum = 0u32;
    x.iter()
        .map(|&v| {
            let before = sum;
            sum = sum.wrapping_add(v);
            if inclusive { sum } else { before }
        })
        .collect()
}

/// The most additions a term passes through in element `i`'s sum when the kernel scans tiles of
/// `tile` elements: one per earlier tile on the look-back chain, plus the tile's own grouping
/// (8 items per work-item, 6 DPP levels of a wave, 4 levels across waves, the tile's prefix and
/// the work-item's offset), plus two for safety.
pub fn scan_depth(i: usize, tile: usize) -> u64 {
    (i / tile) as u64 + 8 + 6 + 4 + 2 + 2
}

/// The prefix sums of `x` (decoded f32 values) as `scan_f32` computes them with tiles of `tile`
/// elements: exact in f64, each within `gamma(depth) * sum |x|` over the terms it adds. Assumes
/// partial sums stay in f32's range.
pub fn prefix_sums_f32(x: &[f64], inclusive: bool, tile: usize) -> Vec<Expected> {
    let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let before = (sum, magnitude);
            sum += v;
            magnitude += v.abs();
            let (value, size) = if inclusive { (sum, magnitude) } else { before };
            let depth = scan_depth(i, tile);
            Expected {
                value,
                error: gamma(depth) * size + depth as f64 * f32_underflow(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u32_sums_wrap_and_exclusive_sums_start_at_zero() {
        let x = [u32::MAX, 2, 5];
        assert_eq!(prefix_sums_u32(&x, true), [u32::MAX, 1, 6]);
        assert_eq!(prefix_sums_u32(&x, false), [0, u32::MAX, 1]);
        assert!(prefix_sums_u32(&[], true).is_empty());
    }

    #[test]
    fn f32_sums_propagate_nan_and_infinity_and_allow_rounding() {
        let x = [1.0, f64::INFINITY, 2.0, f64::NAN, 3.0];
        let inclusive = prefix_sums_f32(&x, true, 2048);
        assert!(inclusive[0].accepts(1.0) && inclusive[1].accepts(f64::INFINITY));
        assert!(!inclusive[2].accepts(3.0) && inclusive[3].accepts(f64::NAN));
        let exclusive = prefix_sums_f32(&x, false, 2048);
        assert!(exclusive[0].accepts(0.0) && exclusive[1].accepts(1.0));
        assert!(exclusive[4].accepts(f64::NAN) && !exclusive[4].accepts(0.0));
        let long = prefix_sums_f32(&vec![1.0; 5000], true, 2048);
        let bound = long[4999].error;
        assert!(long[4999].accepts(5000.0 + bound) && !long[4999].accepts(5000.0 + 2.0 * bound));
        assert!(bound > 0.0 && bound < 0.01);
    }
}
