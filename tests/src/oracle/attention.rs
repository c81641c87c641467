//! Reference for the attention kernels: `O = softmax(scale * Q K^T + mask) V` in f64 per query
//! row, and for each output element the error a kernel may make, from the arithmetic the
//! kernels document: f32 dot products, probabilities `2^(x - m)` with a running maximum
//! rescaled once per tile or split, f32 sums, the probabilities rounded to the input type
//! before `P V` on the matrix cores (and flushed below its normal range on gfx90a), one
//! rounding to the output type.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma};
use super::format::{Format, pow2};

/// The sizes of a problem (tensors row-major: `Q`, `O` `[batch, heads_q, seq_q, head_dim]`,
/// `K`, `V` `[batch, heads_kv, seq_kv, head_dim]`).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Batch entries.
    pub batch: usize,
    /// Query heads (a multiple of `heads_kv`).
    pub heads_q: usize,
    /// Key and value heads.
    pub heads_kv: usize,
    /// Query rows per head.
    pub seq_q: usize,
    /// Key rows per head.
    pub seq_kv: usize,
    /// Elements per row.
    pub head_dim: usize,
}

/// How the kernel under test computes, as far as its error goes.
#[derive(Debug, Clone, Copy)]
pub struct Arithmetic {
    /// The format the probabilities are rounded to before `P V` (the matrix-core kernels), if
    /// any.
    pub rounded_probabilities: Option<Format>,
    /// Whether probabilities and values below the normal range of that format are flushed to
    /// zero (gfx90a's 16-bit MFMAs).
    pub flushes_subnormals: bool,
    /// The most times a row's running maximum may be rescaled (tiles plus splits).
    pub rescales: usize,
}

/// The keys query row `i` sees: `0..limit`, bottom-right aligned when causal.
pub fn visible_keys(i: usize, seq_q: usize, seq_kv: usize, causal: bool) -> usize {
    if causal {
        (i + 1 + seq_kv).saturating_sub(seq_q).min(seq_kv)
    } else {
        seq_kv
    }
}

/// Row `j` of the KV head starting at element `head` of `m` (rows of `d`).
fn kv_row(m: &[f64], head: usize, j: usize, d: usize) -> &[f64] {
    &m[head + j * d..][..d]
}

/// The smallest normal value of a 16-bit or 32-bit float format.
fn min_normal(format: Format) -> f64 {
    format.min_subnormal() * pow2(format.mantissa_bits() as i32)
}

/// The expected outputs, `[batch, heads_q, seq_q, head_dim]`, for inputs already decoded to f64.
///
/// Error of an output element, relative to `A = sum_j p_j |v_j| / l` (which bounds `|o|`), with
/// `u` the f32 roundoff: a score is off by at most `gamma(d + 2) sum_k |scale q_k k_k|` (the dot
/// product and the scale's rounding), which `2^x` turns into the same relative error of its
/// probability; the shift by the maximum and `2^x` add `(|x - m| + 3) u` per rescale (at most
/// `rescales + 1`); the sums add `gamma(seq_kv + rescales + 8)`; numerator and denominator both
/// carry it (twice), and the whole is doubled to spare. Rounded probabilities add their
/// format's relative roundoff (or half its smallest subnormal) times `p_j |v_j| / l`; flushing
/// adds every term whose final probability is below the normal range (the kernel's running
/// probability is at least the final one) and the normal range's bound on flushed values.
pub fn attention(
    (q, k, v): (&[f64], &[f64], &[f64]),
    shape: Shape,
    causal: bool,
    scale: f64,
    arithmetic: Arithmetic,
    out: Format,
) -> Vec<Expected> {
    let Shape {
        batch,
        heads_q,
        heads_kv,
        seq_q,
        seq_kv,
        head_dim: d,
    } = shape;
    let group = heads_q / heads_kv;
    let u = F32_ROUNDOFF;
    let mut expected = Vec::with_capacity(batch * heads_q * seq_q * d);
    for b in 0..batch {
        for h in 0..heads_q {
            let kv_head = (b * heads_kv + h / group) * seq_kv * d;
            for i in 0..seq_q {
                let q_row = &q[((b * heads_q + h) * seq_q + i) * d..][..d];
                let keys = visible_keys(i, seq_q, seq_kv, causal);
                if keys == 0 {
                    expected.extend((0..d).map(|_| Expected::exact(0.0)));
                    continue;
                }
                let (scores, magnitudes): (Vec<f64>, Vec<f64>) = (0..keys)
                    .map(|j| {
                        let k_row = kv_row(k, kv_head, j, d);
                        let dot: f64 = q_row.iter().zip(k_row).map(|(a, b)| a * b).sum();
                        let magnitude: f64 =
                            q_row.iter().zip(k_row).map(|(a, b)| (a * b).abs()).sum();
                        (scale * dot, scale.abs() * magnitude)
                    })
                    .unzip();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
                let p: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let l: f64 = p.iter().sum();
                let score_error =
                    magnitudes.iter().fold(0.0f64, |e, &m| e.max(m)) * gamma(d as u64 + 2);
                let shift_error = ((max - min) * std::f64::consts::LOG2_E + 3.0)
                    * u
                    * (arithmetic.rescales as f64 + 1.0);
                let sum_error = gamma((seq_kv + arithmetic.rescales + 8) as u64);
                let relative = 4.0 * (score_error + shift_error + sum_error);
                let mut value = vec![0.0; d];
                let mut magnitude = vec![0.0; d];
                let mut rounding = vec![0.0; d];
                for (j, &pj) in p.iter().enumerate() {
                    let weight = match arithmetic.rounded_probabilities {
                        Some(format)
                            if arithmetic.flushes_subnormals && pj < min_normal(format) =>
                        {
                            pj
                        }
                        Some(format) => format.unit_roundoff() * pj + format.min_subnormal() / 2.0,
                        None => 0.0,
                    };
                    let columns = value.iter_mut().zip(&mut magnitude).zip(&mut rounding);
                    for (((value, magnitude), rounding), &vc) in
                        columns.zip(kv_row(v, kv_head, j, d))
                    {
                        *value += pj * vc;
                        *magnitude += pj * vc.abs();
                        *rounding += weight * vc.abs();
                    }
                }
                let flush = match arithmetic.rounded_probabilities {
                    Some(format) if arithmetic.flushes_subnormals => min_normal(format),
                    _ => 0.0,
                };
                expected.extend((0..d).map(|c| {
                    let error =
                        (relative * magnitude[c] + rounding[c]) / l + flush + f32_underflow();
                    Expected::stored_as(value[c] / l, error, out)
                }));
            }
        }
    }
    expected
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXACT: Arithmetic = Arithmetic {
        rounded_probabilities: None,
        flushes_subnormals: false,
        rescales: 1,
    };

    fn shape(seq_q: usize, seq_kv: usize) -> Shape {
        Shape {
            batch: 1,
            heads_q: 1,
            heads_kv: 1,
            seq_q,
            seq_kv,
            head_dim: 2,
        }
    }

    #[test]
    fn one_key_returns_its_value() {
        let out = attention(
            (&[1.0, 2.0], &[3.0, -1.0], &[0.25, -4.0]),
            shape(1, 1),
            false,
            0.5,
            EXACT,
            Format::F32,
        );
        assert_eq!(
            out.iter().map(|e| e.value).collect::<Vec<_>>(),
            [0.25, -4.0]
        );
        assert!(!out[0].accepts(0.25 * 1.001));
    }

    #[test]
    fn equal_scores_average_the_values() {
        let v = [1.0, 0.0, 3.0, 2.0];
        let out = attention(
            (&[0.0, 0.0], &[1.0, 2.0, 3.0, 4.0], &v),
            shape(1, 2),
            false,
            1.0,
            EXACT,
            Format::F32,
        );
        assert_eq!(out[0].value, 2.0);
        assert_eq!(out[1].value, 1.0);
    }

    #[test]
    fn causal_rows_are_bottom_right_aligned() {
        assert_eq!(visible_keys(0, 2, 5, true), 4);
        assert_eq!(visible_keys(1, 2, 5, true), 5);
        assert_eq!(visible_keys(0, 5, 2, true), 0);
        assert_eq!(visible_keys(3, 5, 2, true), 1);
        assert_eq!(visible_keys(0, 5, 2, false), 2);
        // Two queries, three keys: the first query sees keys 0 and 1, the second all three...
        let q = [1.0, 0.0, 1.0, 0.0];
        let k = [0.0; 6];
        let v = [1.0, 1.0, 2.0, 2.0, 6.0, 6.0];
        let out = attention((&q, &k, &v), shape(2, 3), true, 1.0, EXACT, Format::F32);
        // ...so with equal scores the first row averages two values and the second three.
        assert_eq!(out[0].value, 1.5);
        assert_eq!(out[2].value, 3.0);
        let none = attention((&q, &k, &v), shape(2, 0), false, 1.0, EXACT, Format::F32);
        assert!(none.iter().all(|e| e.value == 0.0 && e.error == 0.0));
    }

    #[test]
    fn rounded_probabilities_widen_the_bound() {
        let (q, k, v) = ([1.0, 0.5], [0.3, 0.2, -0.7, 0.1], [1.0, -1.0, 0.5, 2.0]);
        let exact = attention((&q, &k, &v), shape(1, 2), false, 1.0, EXACT, Format::F32);
        let rounded = Arithmetic {
            rounded_probabilities: Some(Format::Bf16),
            ..EXACT
        };
        let wide = attention((&q, &k, &v), shape(1, 2), false, 1.0, rounded, Format::F32);
        assert!(wide[0].error > exact[0].error + 0.5 * Format::Bf16.unit_roundoff());
    }
}
