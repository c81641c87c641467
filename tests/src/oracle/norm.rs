//! References for `rmsnorm_<t>` and `layernorm_<t>`: the normalized row in f64, and for each
//! element the error a kernel may make computing in f32 (sums in the order bounded by
//! [`row_sum_depth`]) and rounding once to the output format.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma, row_sum_depth};
use super::format::Format;

/// `y = x / sqrt(mean(x^2) + eps) * weight` for one row.
///
/// Kernel error: the sum of squares is within `gamma(depth)` (all terms positive), which the
/// square root halves; the mean, `+ eps`, square root and reciprocal add 2 roundings, the two
/// products 2 more: `gamma(depth) + 6u` relative, with a factor 2 to spare.
pub fn rmsnorm(
    x: &[f64],
    weight: &[f64],
    eps: f64,
    out: Format,
    workgroup_size: u32,
) -> Vec<Expected> {
    let n = x.len() as f64;
    let mean_square = x.iter().map(|v| v * v).sum::<f64>() / n;
    let scale = 1.0 / (mean_square + eps).sqrt();
    let relative = 2.0 * (gamma(row_sum_depth(x.len(), workgroup_size)) + 6.0 * F32_ROUNDOFF);
    x.iter()
        .zip(weight)
        .map(|(&v, &w)| {
            let y = v * scale * w;
            Expected::stored_as(y, relative * y.abs() + f32_underflow(), out)
        })
        .collect()
}

/// `y = (x - mean) / sqrt(var + eps) * weight + bias` for one row (biased variance).
///
/// Kernel error, with `u` the f32 roundoff and `g = gamma(depth)`: the kernel's mean is off by
/// at most `dm = (g + u) mean|x|`; its variance (the mean of squares of `x - mean'`) is off by
/// the relative `g + 3u` plus `dm^2 / var`, so its scale `r` by the relative
/// `e_r = g + 4u + dm^2 / (var + eps)`; then
/// `|dy| <= |w| r (dm + u |x - mean|) + |w r (x - mean)| (e_r + u) + u |y|`, doubled to spare.
pub fn layernorm(
    x: &[f64],
    weight: &[f64],
    bias: &[f64],
    eps: f64,
    out: Format,
    workgroup_size: u32,
) -> Vec<Expected> {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let variance = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let scale = 1.0 / (variance + eps).sqrt();
    let u = F32_ROUNDOFF;
    let g = gamma(row_sum_depth(x.len(), workgroup_size));
    let mean_error = (g + u) * x.iter().map(|v| v.abs()).sum::<f64>() / n;
    let scale_error = g + 4.0 * u + mean_error * mean_error / (variance + eps);
    x.iter()
        .zip(weight.iter().zip(bias))
        .map(|(&v, (&w, &b))| {
            let centered = v - mean;
            let y = centered * scale * w + b;
            let error = (w * scale).abs() * (mean_error + u * centered.abs())
                + (w * scale * centered).abs() * (scale_error + u)
                + u * y.abs();
            Expected::stored_as(y, 2.0 * error + f32_underflow(), out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmsnorm_of_a_constant_row_is_the_weight() {
        let x = [3.0; 5];
        let w = [1.0, 2.0, -1.0, 0.5, 0.0];
        for (e, &w) in rmsnorm(&x, &w, 0.0, Format::F32, 64).iter().zip(&w) {
            assert!(e.accepts(w) && !e.accepts(w + 1e-4), "{e:?}");
        }
    }

    #[test]
    fn layernorm_centres_and_scales() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let ones = [1.0; 4];
        let zeros = [0.0; 4];
        let y = layernorm(&x, &ones, &zeros, 0.0, Format::F32, 64);
        let values: Vec<f64> = y.iter().map(|e| e.value).collect();
        let mean = values.iter().sum::<f64>() / 4.0;
        let var = values.iter().map(|v| v * v).sum::<f64>() / 4.0;
        assert!(mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-12);
        let shifted = layernorm(&x, &[2.0; 4], &[5.0; 4], 0.0, Format::F16, 64);
        assert!(shifted[0].accepts(5.0 - 2.0 * 1.5 / 1.25f64.sqrt()));
        assert!(!shifted[0].accepts(5.0), "a wrong answer fails");
    }

    #[test]
    fn layernorm_tolerance_grows_with_a_large_mean() {
        let small: Vec<f64> = (0..256).map(|i| f64::from(i % 9)).collect();
        let large: Vec<f64> = small.iter().map(|v| v + 1e4).collect();
        let ones = [1.0; 256];
        let zeros = [0.0; 256];
        let a = layernorm(&small, &ones, &zeros, 1e-5, Format::F32, 256);
        let b = layernorm(&large, &ones, &zeros, 1e-5, Format::F32, 256);
        assert!(b[0].error > a[0].error);
        assert!(
            b[0].error < 1e-2,
            "still tight enough to catch a wrong mean"
        );
    }
}
