//! Reference for `softmax_<t>`: `e^(x - max) / sum e^(x - max)` for one row in f64, and for each
//! element the error a kernel may make in f32.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma, row_sum_depth};
use super::format::Format;

/// The softmax of one row (NaN everywhere when the row holds a NaN or `+inf`, or only `-inf`,
/// as the formula gives).
///
/// Kernel error, with `u` the f32 roundoff: `x - max` is rounded (an absolute `u |x - max|`,
/// which `e^` turns relative) and `e^` is `2^((x - max) log2 e)` within `|x - max| + 1` ulp, so
/// `e_i` is within the relative `(2 |x_i - max| + 1) u`, which the doubled `(|x_i - max| + 3) u`
/// below covers; the sum adds `gamma(depth')` with a depth that counts the online
/// variant's rescalings (at most one per chunk); the reciprocal and the product 2 roundings.
/// Doubled to spare.
pub fn softmax(x: &[f64], out: Format, workgroup_size: u32) -> Vec<Expected> {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    let u = F32_ROUNDOFF;
    // Terms that are exactly 0 (x = -inf) carry no error.
    let term_error = |v: f64, e: f64| {
        if e == 0.0 {
            0.0
        } else {
            ((v - max).abs() + 3.0) * u
        }
    };
    let per_item = x.len().div_ceil(workgroup_size as usize) as u64;
    let depth = row_sum_depth(x.len(), workgroup_size) + 3 * per_item;
    let sum_error = x
        .iter()
        .zip(&exps)
        .map(|(&v, &e)| e * term_error(v, e))
        .sum::<f64>()
        / sum
        + gamma(depth);
    x.iter()
        .zip(&exps)
        .map(|(&v, &e)| {
            let y = e / sum;
            let relative = 2.0 * (term_error(v, e) + sum_error + 2.0 * u);
            Expected::stored_as(y, relative * y.abs() + f32_underflow(), out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_sums_to_one_and_keeps_its_order() {
        let x = [0.5, -1.0, 3.0, 2.0, 3.0];
        let y = softmax(&x, Format::F32, 64);
        let total: f64 = y.iter().map(|e| e.value).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(y[2].value == y[4].value && y[2].value > y[3].value && y[3].value > y[0].value);
        assert!(!y[0].accepts(y[0].value * 1.001));
    }

    #[test]
    fn special_values() {
        let nan = softmax(&[1.0, f64::NAN], Format::F32, 64);
        assert!(nan.iter().all(|e| e.value.is_nan()));
        let inf = softmax(&[1.0, f64::INFINITY], Format::F32, 64);
        assert!(inf.iter().all(|e| e.value.is_nan()));
        let all_minus_inf = softmax(&[f64::NEG_INFINITY; 3], Format::F16, 64);
        assert!(all_minus_inf.iter().all(|e| e.value.is_nan()));
        let some = softmax(&[f64::NEG_INFINITY, 0.0], Format::Bf16, 64);
        assert!(some[0].accepts(0.0) && some[1].accepts(1.0));
    }

    #[test]
    fn shift_invariance() {
        let x: Vec<f64> = (0..100).map(|i| f64::from(i % 13) * 0.25).collect();
        let shifted: Vec<f64> = x.iter().map(|v| v + 1000.0).collect();
        for (a, b) in softmax(&x, Format::F32, 64)
            .iter()
            .zip(softmax(&shifted, Format::F32, 64))
        {
            assert!((a.value - b.value).abs() < 1e-12);
        }
    }
}
