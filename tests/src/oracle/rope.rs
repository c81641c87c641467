//! Reference for `rope_neox_<t>` and `rope_gptj_<t>`: each pair of a head rotated by
//! `p * theta^(-2j / rotary_dim)` in f64, and the error the kernel's f32 arithmetic may make.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow};
use super::format::{Format, pow2};

/// Which elements form the rotated pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// GPT-NeoX: element `j` with element `j + rotary_dim / 2`.
    NeoX,
    /// GPT-J: element `2j` with element `2j + 1`.
    GptJ,
}

impl Pairing {
    /// The two elements of pair `j` in a head with `rotary_dim` rotated elements.
    pub fn pair(self, j: usize, rotary_dim: usize) -> (usize, usize) {
        match self {
            Pairing::NeoX => (j, j + rotary_dim / 2),
            Pairing::GptJ => (2 * j, 2 * j + 1),
        }
    }
}

/// The shape and parameters of a RoPE launch.
#[derive(Clone, Copy, Debug)]
pub struct RopeShape {
    /// Heads per token.
    pub heads: usize,
    /// Elements per head.
    pub head_dim: usize,
    /// Rotated elements per head (even, at most `head_dim`).
    pub rotary_dim: usize,
    /// The frequency base.
    pub theta: f64,
}

/// The largest absolute error of the kernel's `sin_cos(a)` (`iron_intrinsics::fmath`): `2^-22`
/// below `|a| = 2^22`, plus the range reduction's `|a| 2^-46` beyond, here with a factor 4 to
/// spare.
pub fn sin_cos_error(angle: f64) -> f64 {
    pow2(-22) + angle.abs() * pow2(-44)
}

/// The kernel's rotation angle error bound for pair `j` at position `p`: its exponent
/// `e = -2j log2(theta) / rotary_dim` is computed with `log2` (1 ulp) and two roundings (a
/// relative `4u`, an absolute `4u |e|`), which `exp2` (1 ulp) turns into the relative
/// `4 ln2 |e| u + 2u` of `inv_freq`; the position's conversion and the product add `2u`.
/// Doubled to spare.
pub fn angle_error(angle: f64, exponent: f64) -> f64 {
    2.0 * angle.abs() * F32_ROUNDOFF * (4.0 * std::f64::consts::LN_2 * exponent.abs() + 4.0)
}

/// What `rope_<pairing>_<t>` leaves in `x` (`[tokens, heads, head_dim]`, decoded to f64), for
/// positions `positions` and output format `out`.
///
/// Kernel error for a pair `(a, b)`: the cosine and sine are off by the angle error plus the
/// `sin_cos` error, which moves each result by at most `(|a| + |b|)` times that; the products
/// and the fused multiply-add round twice more (`2u (|a| + |b|)`). Elements outside the rotated
/// pairs must come back unchanged.
pub fn rope(
    x: &[f64],
    positions: &[u32],
    shape: RopeShape,
    pairing: Pairing,
    out: Format,
) -> Vec<Expected> {
    let RopeShape {
        heads,
        head_dim,
        rotary_dim,
        theta,
    } = shape;
    let mut expected: Vec<Expected> = x.iter().map(|&v| Expected::exact(v)).collect();
    for (token, &p) in positions.iter().enumerate() {
        for head in 0..heads {
            let row = (token * heads + head) * head_dim;
            for j in 0..rotary_dim / 2 {
                let exponent = -2.0 * j as f64 * theta.log2() / rotary_dim as f64;
                let angle = f64::from(p) * exponent.exp2();
                let (sin, cos) = angle.sin_cos();
                let (ia, ib) = pairing.pair(j, rotary_dim);
                let (a, b) = (x[row + ia], x[row + ib]);
                let magnitude = a.abs() + b.abs();
                let error = magnitude
                    * (angle_error(angle, exponent) + sin_cos_error(angle) + 2.0 * F32_ROUNDOFF)
                    + f32_underflow();
                expected[row + ia] = Expected::stored_as(a * cos - b * sin, error, out);
                expected[row + ib] = Expected::stored_as(a * sin + b * cos, error, out);
            }
        }
    }
    expected
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: RopeShape = RopeShape {
        heads: 1,
        head_dim: 6,
        rotary_dim: 4,
        theta: 10000.0,
    };

    #[test]
    fn position_zero_changes_nothing() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        for pairing in [Pairing::NeoX, Pairing::GptJ] {
            let e = rope(&x, &[0], SHAPE, pairing, Format::F32);
            for (e, &v) in e.iter().zip(&x) {
                assert!(e.accepts(v) && !e.accepts(v + 1e-3));
            }
        }
    }

    #[test]
    fn pairs_rotate_by_their_frequency() {
        // Pair 0 turns by p radians; pair 1 by p / sqrt(theta) (theta^(-2/4)).
        let p = 3u32;
        let slow = 3.0f64 / 100.0;
        // NeoX pairs (0, 2) and (1, 3).
        let neox = rope(
            &[1.0, 1.0, 0.0, 0.0, 9.0, 9.0],
            &[p],
            SHAPE,
            Pairing::NeoX,
            Format::F32,
        );
        assert!(neox[0].accepts(3f64.cos()) && neox[2].accepts(3f64.sin()));
        assert!(neox[1].accepts(slow.cos()) && neox[3].accepts(slow.sin()));
        // GPT-J pairs (0, 1) and (2, 3).
        let x = [1.0, 0.0, 0.0, 1.0, 9.0, 9.0];
        let gptj = rope(&x, &[p], SHAPE, Pairing::GptJ, Format::F32);
        assert!(gptj[0].accepts(3f64.cos()) && gptj[1].accepts(3f64.sin()));
        assert!(gptj[2].accepts(-slow.sin()) && gptj[3].accepts(slow.cos()));
        assert!(gptj[4].accepts(9.0) && !gptj[4].accepts(9.0001));
        assert!(!gptj[0].accepts(3f64.cos() + 1e-4));
    }
}
