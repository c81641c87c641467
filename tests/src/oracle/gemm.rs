//! Reference for the GEMM kernels: `C = alpha * A B + beta * C + bias` in f64 from the exact
//! (decoded) input values, and the error of the kernels' documented arithmetic: products exact,
//! summed in f32 by the MFMAs, then `alpha * acc`, `fma(beta, C, .)`, `+ bias`, each rounded in
//! f32, and one rounding to the output format.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma};
use super::format::Format;

/// A GEMM problem in exact values: `a` row-major `[m, k]`, `b` row-major `[k, n]`, the old `c`
/// row-major `[m, n]` (read when `beta != 0`), and the bias (`n` values) if any.
#[derive(Debug, Clone, Copy)]
pub struct Problem<'a> {
    /// A, row-major `[m, k]`.
    pub a: &'a [f64],
    /// B, row-major `[k, n]`.
    pub b: &'a [f64],
    /// The old C, row-major `[m, n]`.
    pub c: &'a [f64],
    /// The bias of `n` values.
    pub bias: Option<&'a [f64]>,
    /// The factor of `A B` (the f32 value the kernel multiplies by).
    pub alpha: f64,
    /// The factor of the old C.
    pub beta: f64,
    /// `(m, n, k)`.
    pub shape: (usize, usize, usize),
}

/// The most additions a product passes through in an f32 sum of `k` products and the
/// accumulator, in any order the MFMAs choose: `k` (one per other term), plus one.
pub fn gemm_depth(k: usize) -> u64 {
    k as u64 + 1
}

/// What the kernel writes to each element of `C` (row-major `[m, n]`), stored as `out`.
///
/// Error: the sum of products is within `gamma(k + 1) sum |a b|` (plus underflow), then
/// `alpha *` rounds once (relative `u`), the fused `beta` step and the bias add round once
/// each. A NaN product, or infinite terms whose sum is undefined, make the element NaN (an
/// infinite magnitude of terms is only checked for being non-finite).
pub fn gemm(p: &Problem<'_>, out: Format) -> Vec<Expected> {
    let (m, n, k) = p.shape;
    let mut expected = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let products = (0..k).map(|l| p.a[i * k + l] * p.b[l * n + j]);
            let dot: f64 = products.clone().sum();
            let magnitude: f64 = products.map(f64::abs).sum();
            let mut value = p.alpha * dot;
            let mut error =
                p.alpha.abs() * (gamma(gemm_depth(k)) * magnitude + k as f64 * f32_underflow());
            error += F32_ROUNDOFF * (value.abs() + error);
            if p.beta != 0.0 {
                value += p.beta * p.c[i * n + j];
                error += F32_ROUNDOFF * (value.abs() + error);
            }
            if let Some(bias) = p.bias {
                value += bias[j];
                error += F32_ROUNDOFF * (value.abs() + error);
            }
            if value.is_nan() || !magnitude.is_finite() {
                expected.push(Expected::exact(f64::NAN));
            } else {
                expected.push(Expected::stored_as(value, error + f32_underflow(), out));
            }
        }
    }
    expected
}

/// The `[rows, cols]` row-major matrix stored column-major in `data` (`X[i][j]` at
/// `data[j * rows + i]`), as row-major values.
pub fn from_col_major(data: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols)
        .map(|at| data[(at % cols) * rows + at / cols])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_scalars_and_bias_combine_in_order() {
        // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A B = [[19, 22], [43, 50]].
        let (a, b, c) = (
            [1.0, 2.0, 3.0, 4.0],
            [5.0, 6.0, 7.0, 8.0],
            [1.0, -1.0, 0.5, 0.0],
        );
        let p = Problem {
            a: &a,
            b: &b,
            c: &c,
            bias: Some(&[10.0, 20.0]),
            alpha: 2.0,
            beta: -1.0,
            shape: (2, 2, 2),
        };
        let want = [
            2.0 * 19.0 - 1.0 + 10.0,
            44.0 + 1.0 + 20.0,
            86.0 - 0.5 + 10.0,
            100.0 + 20.0,
        ];
        for (e, w) in gemm(&p, Format::F32).iter().zip(want) {
            assert!(e.accepts(w) && !e.accepts(w + 1e-3), "{e:?} {w}");
        }
    }

    #[test]
    fn nan_inputs_poison_their_row_and_beta_zero_ignores_c() {
        let (a, b, c) = ([f64::NAN, 1.0], [1.0, 1.0], [f64::NAN, f64::NAN]);
        let p = Problem {
            a: &a,
            b: &b,
            c: &c,
            bias: None,
            alpha: 1.0,
            beta: 0.0,
            shape: (2, 1, 1),
        };
        let got = gemm(&p, Format::Bf16);
        assert!(got[0].value.is_nan() && got[1].accepts(1.0));
    }

    #[test]
    fn column_major_data_reads_back_row_major() {
        // [[1, 2, 3], [4, 5, 6]] stored by columns.
        let data = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
        assert_eq!(from_col_major(&data, 2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}
