//! References for the row reductions (`row_sum_<t>`, `row_max_<t>`, `row_argmax_<t>`): one
//! result per row, from the row's exact values.

use super::expected::{Expected, f32_underflow, gamma, row_sum_depth};

/// The sum of `row` (f32 out) as `row_sum_<t>` computes it with `workgroup_size` work-items:
/// any order of f32 additions in which no term passes through more than
/// [`row_sum_depth`] additions is within `gamma(depth) * sum |x|`. Assumes partial sums stay in
/// f32's range.
pub fn sum(row: &[f64], workgroup_size: u32) -> Expected {
    let value: f64 = row.iter().sum();
    let magnitude: f64 = row.iter().map(|x| x.abs()).sum();
    let depth = row_sum_depth(row.len(), workgroup_size);
    Expected {
        value,
        error: gamma(depth) * magnitude + depth as f64 * f32_underflow(),
    }
}

/// The maximum of `row` (exact): NaN if the row holds a NaN, `-inf` for an empty row.
pub fn max(row: &[f64]) -> Expected {
    if row.iter().any(|x| x.is_nan()) {
        return Expected::exact(f64::NAN);
    }
    Expected::exact(row.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

/// The index of the first maximal element of `row`: the first NaN if there is one, else the
/// first element equal to the maximum (-0 equals +0); `u32::MAX` for an empty row.
pub fn argmax(row: &[f64]) -> u32 {
    if let Some(i) = row.iter().position(|x| x.is_nan()) {
        return i as u32;
    }
    let best = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    row.iter()
        .position(|&x| x == best)
        .map_or(u32::MAX, |i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_of_ties_and_nans() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[1.0, f64::NAN, 5.0, f64::NAN]), 1);
        assert_eq!(argmax(&[-0.0, 0.0]), 0);
        assert_eq!(argmax(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), 0);
        assert_eq!(argmax(&[]), u32::MAX);
    }

    #[test]
    fn max_propagates_nan_and_is_minus_infinity_when_empty() {
        assert!(max(&[1.0, f64::NAN]).accepts(f64::NAN));
        assert!(max(&[]).accepts(f64::NEG_INFINITY));
        assert!(max(&[-2.0, 7.5, 7.0]).accepts(7.5) && !max(&[7.5]).accepts(7.0));
    }

    #[test]
    fn sum_tolerance_catches_a_missing_element() {
        let row: Vec<f64> = (0..10_000).map(|i| 1.0 + f64::from(i % 7)).collect();
        let e = sum(&row, 256);
        assert!(e.accepts(e.value));
        assert!(
            !e.accepts(e.value - row[17]),
            "dropping one element must fail"
        );
        assert!(sum(&[], 64).accepts(0.0));
    }
}
