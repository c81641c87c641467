//! What a kernel's output element must be: a reference value and the distance a correct kernel
//! may be from it, derived from the kernel's arithmetic (f32 roundings, the order of its sums)
//! and the rounding to its output type.

use super::format::{Format, Overflow, pow2};

/// The unit roundoff of f32, `2^-24`: the relative error of one f32 operation.
pub const F32_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// A reference value and the largest error a correct kernel may make.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expected {
    /// The exact (f64) result.
    pub value: f64,
    /// The largest allowed `|got - value|` (for finite values).
    pub error: f64,
}

impl Expected {
    /// A result that must be met exactly.
    pub fn exact(value: f64) -> Self {
        Self { value, error: 0.0 }
    }

    /// A result computed in f32 with an error of at most `compute_error`, then rounded to
    /// `format` (f32, f16 or bf16: relative `format.unit_roundoff()`, or half a subnormal step
    /// near zero). A result that overflows `format` even at the low end of that error must be the
    /// infinity of its sign.
    pub fn stored_as(value: f64, compute_error: f64, format: Format) -> Self {
        let lowest = (value.abs() - compute_error).max(0.0);
        if format
            .decode(format.encode(lowest, Overflow::Special))
            .is_infinite()
        {
            return Self::exact(f64::INFINITY.copysign(value));
        }
        let computed = value.abs() + compute_error;
        let rounding = format.unit_roundoff() * computed + format.min_subnormal() / 2.0;
        Self {
            value,
            error: compute_error + rounding,
        }
    }

    /// Whether `got` is acceptable: a NaN where the value is NaN, the same infinity where it is
    /// infinite, otherwise within `error` of the value.
    pub fn accepts(&self, got: f64) -> bool {
        if self.value.is_nan() {
            got.is_nan()
        } else if self.value.is_infinite() {
            got == self.value
        } else {
            (got - self.value).abs() <= self.error
        }
    }
}

/// `gamma(n) = n u / (1 - n u)` for f32: the relative error bound of a sum in which every term
/// passes through at most `n` additions (Higham, "Accuracy and Stability of Numerical
/// Algorithms", lemma 3.1).
pub fn gamma(n: u64) -> f64 {
    let nu = n as f64 * F32_ROUNDOFF;
    nu / (1.0 - nu)
}

/// The most additions any term passes through in the row kernels' sums: a work-item adds at
/// most `ceil(cols / workgroup_size)` terms into each of up to 8 lane accumulators, adds the
/// lanes (7), then the workgroup combines `log2(workgroup_size)` levels (DPP within the wave,
/// LDS across waves), plus one for safety.
pub fn row_sum_depth(cols: usize, workgroup_size: u32) -> u64 {
    let per_item = cols.div_ceil(workgroup_size as usize) as u64;
    per_item + 7 + u64::from(workgroup_size.next_power_of_two().trailing_zeros()) + 1
}

/// A bound on an f32 result's absolute error from the subnormal range: a few steps of the
/// smallest f32 subnormal.
pub fn f32_underflow() -> f64 {
    4.0 * pow2(-149)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_within_error_only() {
        let e = Expected {
            value: 1.0,
            error: 0.5,
        };
        assert!(e.accepts(1.5) && e.accepts(0.5) && !e.accepts(1.6) && !e.accepts(f64::NAN));
        assert!(Expected::exact(f64::NAN).accepts(f64::NAN));
        assert!(!Expected::exact(f64::NAN).accepts(0.0));
        assert!(Expected::exact(f64::INFINITY).accepts(f64::INFINITY));
        assert!(!Expected::exact(f64::INFINITY).accepts(f64::NEG_INFINITY));
    }

    #[test]
    fn stored_as_allows_one_rounding_to_the_format() {
        let e = Expected::stored_as(1.0, 0.0, Format::F16);
        assert!(e.accepts(1.0 + pow2(-11)) && !e.accepts(1.0 + pow2(-10)));
        assert!(Expected::stored_as(0.0, 0.0, Format::F16).accepts(pow2(-25)));
    }

    #[test]
    fn results_beyond_the_format_must_be_infinite() {
        assert!(Expected::stored_as(70000.0, 0.0, Format::F16).accepts(f64::INFINITY));
        assert!(!Expected::stored_as(70000.0, 0.0, Format::F16).accepts(65504.0));
        assert!(Expected::stored_as(-1e39, 1e30, Format::F32).accepts(f64::NEG_INFINITY));
        assert!(Expected::stored_as(65504.0, 1.0, Format::F16).accepts(65504.0));
    }
}
