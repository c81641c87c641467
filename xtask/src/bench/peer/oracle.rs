//! CPU references for the peer benchmark's workloads: each output element in f64 with the
//! magnitude its error scales with (the sum of the absolute terms that make it), so one
//! tolerance per output type judges every family: `|got - want| <= rel x magnitude + abs`.

use serde::Serialize;

/// One expected output element.
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    /// The exact value.
    pub value: f64,
    /// What its rounding errors scale with.
    pub magnitude: f64,
}

/// A tolerance: relative to an element's magnitude, plus an absolute floor.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tolerance {
    /// Relative to [`Expected::magnitude`].
    pub rel: f64,
    /// Absolute, for results near zero (underflow of the output type).
    pub abs: f64,
}

impl Tolerance {
    /// f32 outputs computed in f32 (sums of up to a few thousand terms).
    pub const F32: Tolerance = Tolerance {
        rel: 1e-4,
        abs: 1e-9,
    };
    /// f16 outputs computed in f32 and rounded once (half an f16 ulp is 2^-11 relative).
    pub const F16: Tolerance = Tolerance {
        rel: 2e-3,
        abs: 1e-7,
    };
    /// bf16 outputs computed in f32 and rounded once (half a bf16 ulp is 2^-8 relative).
    pub const BF16: Tolerance = Tolerance {
        rel: 1.6e-2,
        abs: 1e-7,
    };
    /// Bit-exact results (conversions with one rounding, data movement).
    pub const EXACT: Tolerance = Tolerance { rel: 0.0, abs: 0.0 };
}

/// The first mismatch of `got` against `want`, described, or `None` when every element is
/// within `tol` (a NaN, e.g. the poison of an element no one wrote, never is).
pub fn check(got: &[f64], want: &[Expected], tol: Tolerance) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    // The poison of an element nobody wrote is NaN: never within tolerance.
    let allowed = |w: &Expected| tol.rel * w.magnitude + tol.abs;
    let wrong = |(g, w): &(&f64, &Expected)| g.is_nan() || (*g - w.value).abs() > allowed(w);
    let bad = got.iter().zip(want).filter(wrong).count();
    let (i, (g, w)) = got
        .iter()
        .zip(want)
        .enumerate()
        .find(|(_, pair)| wrong(pair))?;
    Some(format!(
        "{bad} of {} outputs wrong; the first, [{i}]: got {g}, expected {} (tolerance {:.3e})",
        got.len(),
        w.value,
        allowed(w)
    ))
}

/// Values the output must hold exactly.
pub fn exact(values: impl IntoIterator<Item = f64>) -> Vec<Expected> {
    values
        .into_iter()
        .map(|value| Expected {
            value,
            magnitude: value.abs(),
        })
        .collect()
}

/// `x + y`.
pub fn add(x: &[f64], y: &[f64]) -> Vec<Expected> {
    x.iter()
        .zip(y)
        .map(|(a, b)| Expected {
            value: a + b,
            magnitude: a.abs() + b.abs(),
        })
        .collect()
}

/// The sum of each row of `cols` elements.
pub fn row_sums(x: &[f64], cols: usize) -> Vec<Expected> {
    x.chunks(cols)
        .map(|row| Expected {
            value: row.iter().sum(),
            magnitude: row.iter().map(|v| v.abs()).sum(),
        })
        .collect()
}

/// GPT-NeoX RoPE of `x` (`[tokens, heads, head_dim]`, every element rotated): pair `j` of a
/// head (elements `j` and `j + head_dim / 2`) of the token at position `p` turns by
/// `p * theta^(-2j / head_dim)`.
pub fn rope_neox(
    x: &[f64],
    positions: &[u32],
    heads: usize,
    head_dim: usize,
    theta: f64,
) -> Vec<Expected> {
    let half = head_dim / 2;
    let mut out = vec![
        Expected {
            value: 0.0,
            magnitude: 0.0
        };
        x.len()
    ];
    for (t, &p) in positions.iter().enumerate() {
        for h in 0..heads {
            let base = (t * heads + h) * head_dim;
            for j in 0..half {
                let angle = f64::from(p) * theta.powf(-2.0 * j as f64 / head_dim as f64);
                let (sin, cos) = angle.sin_cos();
                let (a, b) = (x[base + j], x[base + j + half]);
                // An f32 angle is a few ulps off (its rounding, and that of the inverse
                // frequency times the position): 2^-13 of the angle in the magnitude allows
                // about 4 ulps of it at the f16 tolerance.
                let angle_error = (a.abs() + b.abs()) * angle * f64::powi(2.0, -13);
                out[base + j] = Expected {
                    value: a * cos - b * sin,
                    magnitude: (a * cos).abs() + (b * sin).abs() + angle_error,
                };
                out[base + j + half] = Expected {
                    value: a * sin + b * cos,
                    magnitude: (a * sin).abs() + (b * cos).abs() + angle_error,
                };
            }
        }
    }
    out
}

/// Attention forward of every head of `q`, `k`, `v` (`[heads, seq, head_dim]` each):
/// `O = softmax(scale Q K^T) V`, query `i` seeing keys `j <= i` when `causal`. The magnitude of
/// an output is `sum p_j |v_j|`, with the terms an f16 denormal flush may drop weighted up.
pub fn attention(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    (seq, dim): (usize, usize),
    scale: f64,
    causal: bool,
) -> Vec<Expected> {
    let mut out = Vec::with_capacity(q.len());
    for head in 0..q.len() / (seq * dim) {
        let at = |row: usize| (head * seq + row) * dim;
        for i in 0..seq {
            let keys = if causal { i + 1 } else { seq };
            let qi = &q[at(i)..at(i) + dim];
            let scores: Vec<f64> = (0..keys)
                .map(|j| {
                    let kj = &k[at(j)..at(j) + dim];
                    scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for d in 0..dim {
                let (mut value, mut magnitude) = (0.0, 0.0);
                for (j, ej) in e.iter().enumerate() {
                    let term = ej / sum * v[at(j) + d];
                    value += term;
                    magnitude += term.abs();
                    // The probabilities are rounded to f16 for the second product, relative to
                    // a running maximum no larger than the row's. One below f16's smallest
                    // normal (2^-14) is a denormal, which gfx90a's MFMA flushes to zero: such a
                    // term may be missing, so it counts at 1 / the f16 tolerance.
                    if *ej < f64::powi(2.0, -14) {
                        magnitude += term.abs() / Tolerance::F16.rel;
                    }
                }
                out.push(Expected { value, magnitude });
            }
        }
    }
    out
}

/// Softmax of each row of `cols` elements.
pub fn softmax(x: &[f64], cols: usize) -> Vec<Expected> {
    x.chunks(cols)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = row.iter().map(|v| (v - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.into_iter().map(move |v| Expected {
                value: v / sum,
                magnitude: v / sum,
            })
        })
        .collect()
}

/// `x / sqrt(mean(x^2) + eps) * weight` for each row.
pub fn rmsnorm(x: &[f64], weight: &[f64], eps: f64) -> Vec<Expected> {
    let cols = weight.len();
    x.chunks(cols)
        .flat_map(|row| {
            let scale = 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / cols as f64 + eps).sqrt();
            row.iter().zip(weight).map(move |(v, w)| {
                let y = v * scale * w;
                Expected {
                    value: y,
                    magnitude: y.abs(),
                }
            })
        })
        .collect()
}

/// `(x - mean) / sqrt(var + eps) * weight + bias` for each row (biased variance).
pub fn layernorm(x: &[f64], weight: &[f64], bias: &[f64], eps: f64) -> Vec<Expected> {
    let cols = weight.len();
    x.chunks(cols)
        .flat_map(|row| {
            let mean = row.iter().sum::<f64>() / cols as f64;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / cols as f64;
            let scale = 1.0 / (var + eps).sqrt();
            // The mean's rounding moves every centred value by about |mean| + mean |x|.
            let mean_abs = row.iter().map(|v| v.abs()).sum::<f64>() / cols as f64;
            row.iter()
                .zip(weight.iter().zip(bias))
                .map(move |(v, (w, b))| {
                    let scaled = (v - mean) * scale * w;
                    Expected {
                        value: scaled + b,
                        magnitude: scaled.abs() + (mean_abs * scale * w).abs() + b.abs(),
                    }
                })
        })
        .collect()
}

/// `C = A B` with `A` `m x k` row-major and `B` `k x n`, column-major when `b_col_major`.
pub fn gemm(
    a: &[f64],
    b: &[f64],
    (m, n, k): (usize, usize, usize),
    b_col_major: bool,
) -> Vec<Expected> {
    let b_at = |kk: usize, j: usize| {
        if b_col_major {
            b[j * k + kk]
        } else {
            b[kk * n + j]
        }
    };
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let (mut value, mut magnitude) = (0.0, 0.0);
            for kk in 0..k {
                let p = a[i * k + kk] * b_at(kk, j);
                value += p;
                magnitude += p.abs();
            }
            out.push(Expected { value, magnitude });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_accepts_within_tolerance_and_rejects_poison_and_error() {
        let want = add(&[1.0, 2.0], &[0.5, -4.0]);
        assert_eq!(check(&[1.5, -2.0], &want, Tolerance::F32), None);
        assert!(check(&[1.5, f64::NAN], &want, Tolerance::F32).is_some());
        assert!(check(&[1.5, -2.01], &want, Tolerance::F32).is_some());
        assert!(check(&[1.5], &want, Tolerance::F32).is_some());
    }

    #[test]
    fn gemm_reads_b_in_either_layout() {
        // A = [[1, 2]], B = [[3, 4], [5, 6]]: C = [[13, 16]].
        let row = gemm(&[1.0, 2.0], &[3.0, 4.0, 5.0, 6.0], (1, 2, 2), false);
        let col = gemm(&[1.0, 2.0], &[3.0, 5.0, 4.0, 6.0], (1, 2, 2), true);
        for c in [row, col] {
            assert_eq!(c.iter().map(|e| e.value).collect::<Vec<_>>(), [13.0, 16.0]);
        }
    }

    #[test]
    fn rope_turns_pairs_by_position_and_leaves_position_zero() {
        // One token, one head of 2: the pair turns by the position (theta^0 = 1).
        let at = |p| rope_neox(&[1.0, 0.0], &[p], 1, 2, 10000.0);
        assert_eq!(
            at(0).iter().map(|e| e.value).collect::<Vec<_>>(),
            [1.0, 0.0]
        );
        let one_radian = at(1);
        assert!((one_radian[0].value - 1f64.cos()).abs() < 1e-15);
        assert!((one_radian[1].value - 1f64.sin()).abs() < 1e-15);
    }

    #[test]
    fn attention_averages_values_and_masks_later_keys() {
        // One head, two rows of dim 1, equal scores: the mean of V, or row 0's own V causal.
        let (q, k, v) = ([0.0, 0.0], [1.0, 1.0], [2.0, 4.0]);
        let full = attention(&q, &k, &v, (2, 1), 1.0, false);
        assert_eq!(full.iter().map(|e| e.value).collect::<Vec<_>>(), [3.0, 3.0]);
        let causal = attention(&q, &k, &v, (2, 1), 1.0, true);
        assert_eq!(
            causal.iter().map(|e| e.value).collect::<Vec<_>>(),
            [2.0, 3.0]
        );
    }

    #[test]
    fn row_sums_sum_each_row() {
        let sums = row_sums(&[1.0, -2.0, 3.0, 4.0], 2);
        assert_eq!(
            sums.iter().map(|e| e.value).collect::<Vec<_>>(),
            [-1.0, 7.0]
        );
        assert_eq!(sums[0].magnitude, 3.0);
    }
}
