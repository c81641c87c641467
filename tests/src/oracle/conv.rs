//! Reference for the convolution kernels: direct f64 sums over the exact (decoded) inputs, written
//! from the definitions (causal depthwise 1-D convolution; 2-D cross-correlation with groups,
//! stride, per-side padding and dilation), each output paired with the error of the kernels'
//! documented arithmetic: a sum of the bias and the products in f32 (any order), an optional
//! SiLU, and one rounding to the output format.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow, gamma};
use super::format::Format;

/// Relative error of the kernels' f32 SiLU `v / (1 + e^-v)` beyond that of `v`: `e^x` within
/// 2 ulp, then one addition and one division, each correctly rounded (with margin).
const SILU_ROUNDOFF: f64 = 8.0 * F32_ROUNDOFF;

/// `v / (1 + e^-v)` in f64.
pub fn silu(v: f64) -> f64 {
    v / (1.0 + (-v).exp())
}

/// A sum of a bias and products as the oracle tracks it: the exact value, the sum of
/// magnitudes and the number of terms.
#[derive(Debug, Clone, Copy)]
pub struct Sum {
    value: f64,
    magnitude: f64,
    terms: u64,
}

impl Sum {
    /// The sum of `bias` alone.
    pub fn new(bias: f64) -> Self {
        Sum {
            value: bias,
            magnitude: bias.abs(),
            terms: 0,
        }
    }

    /// Adds `product`.
    pub fn add(&mut self, product: f64) {
        self.value += product;
        self.magnitude += product.abs();
        self.terms += 1;
    }

    /// What the kernel writes for this sum computed in f32, then SiLU when `with_silu`, stored
    /// as `out`. The f32 sum is within `gamma(terms + 1)` of the sum of magnitudes; SiLU's
    /// slope is at most 1.1 in magnitude, and its own evaluation adds `SILU_ROUNDOFF`
    /// relative error. An infinite term makes the sum that infinity (or NaN, with terms of
    /// both signs) in any order of addition, as in IEEE arithmetic.
    pub fn expected(&self, with_silu: bool, out: Format) -> Expected {
        let Sum {
            value,
            magnitude,
            terms,
        } = *self;
        if value.is_infinite() {
            return Expected::exact(if with_silu { silu(value) } else { value });
        }
        if value.is_nan() || !magnitude.is_finite() {
            return Expected::exact(f64::NAN);
        }
        let mut error = gamma(terms + 1) * magnitude + (terms + 1) as f64 * f32_underflow();
        error += F32_ROUNDOFF * (value.abs() + error);
        let (value, error) = if with_silu {
            let s = silu(value);
            (s, 1.1 * error + SILU_ROUNDOFF * s.abs() + f32_underflow())
        } else {
            (value, error)
        };
        Expected::stored_as(value, error, out)
    }
}

/// A causal depthwise 1-D convolution: `x` `[batch, channels, length]`, `w` `[channels, width]`.
#[derive(Debug, Clone, Copy)]
pub struct Conv1d<'a> {
    /// The input.
    pub x: &'a [f64],
    /// The taps.
    pub w: &'a [f64],
    /// One value per channel, or none.
    pub bias: Option<&'a [f64]>,
    /// `(batch, channels, length, width)`.
    pub shape: (usize, usize, usize, usize),
    /// Whether SiLU follows.
    pub silu: bool,
}

/// What the causal convolution writes to each element of `y` (`[batch, channels, length]`):
/// `bias[c] + sum_j w[c][j] x[b][c][t - (width - 1) + j]`, inputs before `t = 0` being zero.
pub fn conv1d_causal(p: &Conv1d<'_>, out: Format) -> Vec<Expected> {
    let (batch, channels, length, width) = p.shape;
    let mut expected = Vec::with_capacity(batch * channels * length);
    for row in 0..batch * channels {
        let c = row % channels;
        let b = p.bias.map_or(0.0, |bias| bias[c]);
        for t in 0..length {
            let mut sum = Sum::new(b);
            for j in (0..width).filter(|&j| t + j + 1 >= width) {
                sum.add(p.w[c * width + j] * p.x[row * length + t + j + 1 - width]);
            }
            expected.push(sum.expected(p.silu, out));
        }
    }
    expected
}

/// A 2-D convolution in exact values and plain sizes.
#[derive(Debug, Clone, Copy)]
pub struct Conv2d<'a> {
    /// The input: `[batch, C, H, W]`, or `[batch, H, W, C]` when `nhwc`.
    pub x: &'a [f64],
    /// The weights: `[K, C / groups, R, S]`, or `[K, R, S, C / groups]` when `nhwc`.
    pub w: &'a [f64],
    /// One value per output channel, or none.
    pub bias: Option<&'a [f64]>,
    /// Channels-last layouts.
    pub nhwc: bool,
    /// Images.
    pub batch: usize,
    /// Input channels `C` and output channels `K`.
    pub channels: (usize, usize),
    /// Groups.
    pub groups: usize,
    /// Input height and width.
    pub input: (usize, usize),
    /// Filter height and width.
    pub kernel: (usize, usize),
    /// Vertical and horizontal stride.
    pub stride: (usize, usize),
    /// `[(top, bottom), (left, right)]` zeros around the input.
    pub padding: [(usize, usize); 2],
    /// Vertical and horizontal dilation.
    pub dilation: (usize, usize),
}

impl Conv2d<'_> {
    /// Output height and width: the number of window positions inside the padded input.
    pub fn output(&self) -> (usize, usize) {
        let positions = |input: usize, (before, after): (usize, usize), k, stride, dilation| {
            let padded = input + before + after;
            let span = dilation * (k - 1) + 1;
            (0..).take_while(|i| i * stride + span <= padded).count()
        };
        (
            positions(
                self.input.0,
                self.padding[0],
                self.kernel.0,
                self.stride.0,
                self.dilation.0,
            ),
            positions(
                self.input.1,
                self.padding[1],
                self.kernel.1,
                self.stride.1,
                self.dilation.1,
            ),
        )
    }

    /// Input element `(n, c, ih, iw)` with `ih`, `iw` in padded coordinates (zero outside).
    fn input_at(&self, n: usize, c: usize, ih: usize, iw: usize) -> f64 {
        let (h, w) = self.input;
        let (top, left) = (self.padding[0].0, self.padding[1].0);
        if ih < top || iw < left || ih - top >= h || iw - left >= w {
            return 0.0;
        }
        let (ih, iw, channels) = (ih - top, iw - left, self.channels.0);
        self.x[if self.nhwc {
            ((n * h + ih) * w + iw) * channels + c
        } else {
            ((n * channels + c) * h + ih) * w + iw
        }]
    }

    /// Weight `(k, c, r, s)`, `c` within the group.
    fn weight_at(&self, k: usize, c: usize, r: usize, s: usize) -> f64 {
        let per_group = self.channels.0 / self.groups;
        let (rs, ss) = self.kernel;
        self.w[if self.nhwc {
            ((k * rs + r) * ss + s) * per_group + c
        } else {
            ((k * per_group + c) * rs + r) * ss + s
        }]
    }
}

/// What the 2-D convolution writes to each element of `y` (`[batch, K, OH, OW]`, or
/// `[batch, OH, OW, K]` when `nhwc`).
pub fn conv2d(p: &Conv2d<'_>, out: Format) -> Vec<Expected> {
    let (oh, ow) = p.output();
    let (c_in, c_out) = p.channels;
    let (c_group, k_group) = (c_in / p.groups, c_out / p.groups);
    let mut by_position = Vec::with_capacity(p.batch * c_out * oh * ow);
    for n in 0..p.batch {
        for k in 0..c_out {
            let g = k / k_group;
            let b = p.bias.map_or(0.0, |bias| bias[k]);
            for y in 0..oh {
                for x in 0..ow {
                    let mut sum = Sum::new(b);
                    for c in 0..c_group {
                        for r in 0..p.kernel.0 {
                            for s in 0..p.kernel.1 {
                                let ih = y * p.stride.0 + r * p.dilation.0;
                                let iw = x * p.stride.1 + s * p.dilation.1;
                                sum.add(
                                    p.weight_at(k, c, r, s)
                                        * p.input_at(n, g * c_group + c, ih, iw),
                                );
                            }
                        }
                    }
                    by_position.push(((n, k, y, x), sum.expected(false, out)));
                }
            }
        }
    }
    if p.nhwc {
        by_position.sort_by_key(|&((n, k, y, x), _)| (n, y, x, k));
    }
    by_position.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_causal_convolution_sees_only_the_past() {
        let x = [1.0, 2.0, 3.0];
        let p = Conv1d {
            x: &x,
            w: &[10.0, 1.0],
            bias: Some(&[0.5]),
            shape: (1, 1, 3, 2),
            silu: false,
        };
        let values: Vec<f64> = conv1d_causal(&p, Format::F32)
            .iter()
            .map(|e| e.value)
            .collect();
        assert_eq!(values, [1.5, 12.5, 23.5]);
    }

    #[test]
    fn padding_stride_and_dilation_place_the_window() {
        // One 3x3 image with values 1..9 and a 2x2 filter of ones.
        let x: Vec<f64> = (1..=9).map(f64::from).collect();
        let padded = Conv2d {
            x: &x,
            w: &[1.0; 4],
            bias: None,
            nhwc: false,
            batch: 1,
            channels: (1, 1),
            groups: 1,
            input: (3, 3),
            kernel: (2, 2),
            stride: (2, 2),
            padding: [(1, 1), (1, 1)],
            dilation: (1, 1),
        };
        assert_eq!(padded.output(), (2, 2));
        let values: Vec<f64> = conv2d(&padded, Format::F32)
            .iter()
            .map(|e| e.value)
            .collect();
        assert_eq!(values, [1.0, 2.0 + 3.0, 4.0 + 7.0, 5.0 + 6.0 + 8.0 + 9.0]);
        // Dilation 2 without padding: one window, the four corners.
        let dilated = Conv2d {
            stride: (1, 1),
            padding: [(0, 0), (0, 0)],
            dilation: (2, 2),
            ..padded
        };
        assert_eq!(dilated.output(), (1, 1));
        assert_eq!(
            conv2d(&dilated, Format::F32)[0].value,
            1.0 + 3.0 + 7.0 + 9.0
        );
    }

    #[test]
    fn infinite_terms_give_their_infinity_or_nan() {
        let mut sum = Sum::new(1.0);
        sum.add(f64::INFINITY);
        assert!(sum.expected(false, Format::F32).accepts(f64::INFINITY));
        assert!(sum.expected(true, Format::F32).accepts(f64::INFINITY));
        sum.add(f64::NEG_INFINITY);
        assert!(sum.expected(false, Format::F32).accepts(f64::NAN));
        let mut negative = Sum::new(0.0);
        negative.add(f64::NEG_INFINITY);
        assert!(
            negative
                .expected(false, Format::Bf16)
                .accepts(f64::NEG_INFINITY)
        );
        assert!(negative.expected(true, Format::F32).accepts(f64::NAN));
    }

    #[test]
    fn silu_widens_the_error() {
        let mut sum = Sum::new(1.0);
        sum.add(2.0);
        let (plain, activated) = (
            sum.expected(false, Format::F32),
            sum.expected(true, Format::F32),
        );
        assert_eq!(plain.value, 3.0);
        assert!((activated.value - silu(3.0)).abs() < 1e-15 && activated.error > plain.error);
    }
}
