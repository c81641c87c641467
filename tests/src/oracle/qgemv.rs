//! Reference for `qgemv_<format>_<x>_<y>`: `y[b][m] = scale_m * sum_k W[m][k] x[b][k]` in f64
//! from the decoded weights ([`super::dequant`]), and the error of the kernel's f32
//! accumulation.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma};
use super::format::Format;

/// The most additions any product passes through in the kernel's sum of a row of `k` columns:
/// a lane accumulates, with fused multiply-adds, 16 products per unit for each of its units
/// (at most `ceil(64 / wave)` units per 1024-column chunk: the worst case is a wave of 32), the
/// wave adds 32 or 64 lanes in at most 6 levels; one more to spare.
pub fn qgemv_depth(k: usize) -> u64 {
    let chunks = k.div_ceil(1024) as u64;
    16 * 2 * chunks + 6 + 1
}

/// What the kernel writes to `y` (`[batch, m]`), for weights `w` (`[m, k]`, exact decoded
/// values without the row or tensor scale), `x` (`[batch, k]`), the factor `scale[m]` applied to
/// each row's sum (FP8 row scale, NVFP4 tensor scale, or 1) and output format `out`.
///
/// Kernel error: the weights are exact in f32 (the decoded element times its block scale, barring
/// underflow); the sum is within `gamma(depth) sum |w x|`; the scaling rounds once more (relative
/// `u`); then one rounding to `out`. A NaN weight or input makes the row NaN.
pub fn qgemv(
    w: &[f64],
    x: &[f64],
    scale: &[f64],
    (m, k, batch): (usize, usize, usize),
    out: Format,
) -> Vec<Expected> {
    let depth = qgemv_depth(k);
    let mut expected = Vec::with_capacity(batch * m);
    for b in 0..batch {
        let xb = &x[b * k..(b + 1) * k];
        for (row, &s) in scale.iter().enumerate().take(m) {
            let wr = &w[row * k..(row + 1) * k];
            let sum: f64 = wr.iter().zip(xb).map(|(w, x)| w * x).sum();
            let magnitude: f64 = wr.iter().zip(xb).map(|(w, x)| (w * x).abs()).sum();
            let value = sum * s;
            if value.is_nan() || magnitude.is_infinite() {
                expected.push(Expected::exact(if value.is_nan() {
                    f64::NAN
                } else {
                    value
                }));
                continue;
            }
            let error = s.abs() * (gamma(depth) * magnitude + k as f64 * f32_underflow())
                + F32_ROUNDOFF * value.abs();
            expected.push(Expected::stored_as(value, error, out));
        }
    }
    expected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_dot_the_inputs_and_get_scaled() {
        // W = [[1, 2], [3, -4]], x = [[1, 1], [0.5, 2]], scales 1 and 0.5.
        let w = [1.0, 2.0, 3.0, -4.0];
        let x = [1.0, 1.0, 0.5, 2.0];
        let y = qgemv(&w, &x, &[1.0, 0.5], (2, 2, 2), Format::F32);
        let want = [3.0, -0.5, 4.5, -3.25];
        for (e, v) in y.iter().zip(want) {
            assert!(e.accepts(v) && !e.accepts(v + 1e-4), "{e:?} {v}");
        }
    }

    #[test]
    fn nan_weights_poison_their_row_only() {
        let w = [f64::NAN, 1.0, 1.0, 1.0];
        let y = qgemv(&w, &[1.0, 1.0], &[1.0, 1.0], (2, 2, 1), Format::Bf16);
        assert!(y[0].value.is_nan() && y[1].accepts(2.0));
    }
}
