//! References for the elementwise kernels (`add_<t>`, `mul_<t>`, `fma_<t>`, `scale_<t>`,
//! `relu_<t>`, `silu_<t>`, `gelu_<t>`): each takes the inputs' exact values (decoded from the
//! kernel's type) and the output format, and returns the f64 result with the error a kernel
//! computing in f32 and rounding once to the output may make.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow};
use super::format::Format;

/// `sqrt(2 / pi)`.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// A result of one f32 operation (one rounding), stored as `out`.
fn one_f32_rounding(value: f64, out: Format) -> Expected {
    Expected::stored_as(value, F32_ROUNDOFF * value.abs() + f32_underflow(), out)
}

/// `a + b`.
pub fn add(a: f64, b: f64, out: Format) -> Expected {
    one_f32_rounding(a + b, out)
}

/// `a * b`.
pub fn mul(a: f64, b: f64, out: Format) -> Expected {
    one_f32_rounding(a * b, out)
}

/// `a * b + c`, fused (one f32 rounding).
pub fn fma(a: f64, b: f64, c: f64, out: Format) -> Expected {
    one_f32_rounding(a.mul_add(b, c), out)
}

/// `alpha * x`.
pub fn scale(alpha: f64, x: f64, out: Format) -> Expected {
    one_f32_rounding(alpha * x, out)
}

/// `max(x, 0)`, NaN staying NaN: exact.
pub fn relu(x: f64, out: Format) -> Expected {
    Expected::stored_as(if x < 0.0 { 0.0 } else { x }, 0.0, out)
}

/// The absolute error allowance for results f32 cannot reach because `e^t` overflowed in the
/// kernel (`|x| e^-|t|` with `|t| > 88.7`, which is below `1e-36`).
const LOST_TO_OVERFLOW: f64 = 1e-36;

/// `x * sigmoid(x) = x / (1 + e^-x)`.
///
/// Kernel error: `e^-x` within 2 ulp (its argument is exact), `1 + e` and the division one
/// rounding each: 6 f32 roundings of the result is a safe bound.
pub fn silu(x: f64, out: Format) -> Expected {
    let value = x / (1.0 + (-x).exp());
    let error = 6.0 * F32_ROUNDOFF * value.abs() + LOST_TO_OVERFLOW + f32_underflow();
    Expected::stored_as(value, error, out)
}

/// GELU, tanh form: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
///
/// Kernel error: it evaluates `x / (1 + e^(-2u))` with `u` the tanh argument computed to about
/// 4 f32 roundings (its constants rounded to f32 included); an error `d` in `u` changes the
/// result by the relative `2 |u| sigmoid(-2u) d`, so the bound is
/// `(5 * 2 |u| sigmoid(-2u) + 8)` f32 roundings of the result.
pub fn gelu(x: f64, out: Format) -> Expected {
    let u = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
    // For u < 0, 1 + tanh(u) cancels (all digits are lost once tanh(u) rounds to -1, near
    // u = -19); the same quantity as 2 e^(2u) / (1 + e^(2u)) keeps them.
    let one_plus_tanh = if u < 0.0 {
        let e = (2.0 * u).exp();
        2.0 * e / (1.0 + e)
    } else {
        1.0 + u.tanh()
    };
    let value = 0.5 * x * one_plus_tanh;
    let sensitivity = 2.0 * u.abs() / (1.0 + (2.0 * u).exp());
    let relative = (5.0 * sensitivity + 8.0) * F32_ROUNDOFF;
    let error = relative * value.abs() + LOST_TO_OVERFLOW + f32_underflow();
    Expected::stored_as(value, error, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert!(silu(0.0, Format::F32).accepts(0.0));
        assert!(silu(1.0, Format::F32).accepts(0.731_058_578_630_004_9));
        assert!(gelu(1.0, Format::F32).accepts(0.841_191_990_607_7));
        assert!(gelu(-1.0, Format::F32).accepts(-0.158_808_009_392_3));
        assert!(
            !gelu(1.0, Format::F32).accepts(0.841_344_746),
            "the erf form differs"
        );
        assert!(
            relu(-3.0, Format::Bf16).accepts(0.0) && relu(f64::NAN, Format::F16).accepts(f64::NAN)
        );
        assert!(gelu(20.0, Format::F32).accepts(20.0) && silu(-200.0, Format::F32).accepts(-0.0));
    }

    #[test]
    fn the_kernels_gelu_form_equals_the_tanh_form() {
        for i in -400..=400 {
            let x = f64::from(i) / 40.0;
            let u = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
            let sigmoid_form = x / (1.0 + (-2.0 * u).exp());
            let e = gelu(x, Format::F32);
            assert!(
                (sigmoid_form - e.value).abs() <= 1e-15 * (1.0 + x.abs()),
                "{x}"
            );
        }
    }

    #[test]
    fn gelu_keeps_its_relative_accuracy_where_it_is_tiny() {
        for x in [-6.5, -8.0, -10.0, -12.0] {
            let u = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
            let sigmoid_form = x / (1.0 + (-2.0 * u).exp());
            let value = gelu(x, Format::F32).value;
            assert!(
                (sigmoid_form - value).abs() <= 1e-12 * sigmoid_form.abs(),
                "{x}: {value:e} vs {sigmoid_form:e}"
            );
        }
    }

    #[test]
    fn tolerances_follow_the_output_type() {
        let x = 1.0 + 2f64.powi(-9);
        assert!(add(x, 0.0, Format::F32).accepts(x));
        assert!(!add(x, 0.0, Format::F32).accepts(1.0));
        assert!(
            add(x, 0.0, Format::Bf16).accepts(1.0),
            "bf16 cannot hold 1 + 2^-9"
        );
        assert!(!mul(3.0, 5.0, Format::F16).accepts(15.03));
        assert!(fma(2.0, 3.0, 1.0, Format::F16).accepts(7.0));
        assert!(scale(0.5, 3.0, Format::F32).accepts(1.5));
    }
}
