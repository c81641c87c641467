//! Floating-point semantics that differ from plain IEEE host arithmetic: AMD's min/max, class tests,
//! frexp/ldexp, the division helpers (div_scale, div_fmas, div_fixup), fract, conversions.
//!
//! Accuracy: add, mul, fma, div, sqrt and conversions are exact (correctly rounded, round to nearest
//! even), as on the hardware. rcp, rsq, sqrt, exp, log, sin and cos use the exact host functions; the
//! hardware approximates them to about 1 ulp, so results may differ from a GPU by that much.

use half::f16;

/// Exponent field of an f32.
pub(crate) fn exponent32(x: f32) -> i32 {
    (x.to_bits() >> 23 & 0xff) as i32
}

/// Exponent field of an f64.
pub(crate) fn exponent64(x: f64) -> i32 {
    (x.to_bits() >> 52 & 0x7ff) as i32
}

/// Flushes an f32 denormal to a zero of the same sign.
pub(crate) fn flush32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// Flushes an f64 denormal to a zero of the same sign.
pub(crate) fn flush64(x: u64) -> u64 {
    if x & 0x7ff0_0000_0000_0000 == 0 {
        x & 0x8000_0000_0000_0000
    } else {
        x
    }
}

/// Flushes an f16 denormal to a zero of the same sign.
pub(crate) fn flush16(x: u16) -> u16 {
    if x & 0x7c00 == 0 { x & 0x8000 } else { x }
}

/// Signalling NaN test (quiet bit clear).
pub(crate) fn is_snan32(x: f32) -> bool {
    x.is_nan() && x.to_bits() & 0x0040_0000 == 0
}

pub(crate) fn is_snan64(x: f64) -> bool {
    x.is_nan() && x.to_bits() & 0x0008_0000_0000_0000 == 0
}

fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

fn quiet64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
}

/// V_MIN_F32: a NaN operand yields the other operand (IEEE mode quiets signalling NaNs);
/// -0 is less than +0.
pub(crate) fn min32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && is_snan32(a) {
        return quiet32(a);
    }
    if ieee && is_snan32(b) {
        return quiet32(b);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { a } else { b };
    }
    if a < b { a } else { b }
}

/// V_MAX_F32 (see [`min32`]).
pub(crate) fn max32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && is_snan32(a) {
        return quiet32(a);
    }
    if ieee && is_snan32(b) {
        return quiet32(b);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { b } else { a };
    }
    if a >= b { a } else { b }
}

pub(crate) fn min64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && is_snan64(a) {
        return quiet64(a);
    }
    if ieee && is_snan64(b) {
        return quiet64(b);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { a } else { b };
    }
    if a < b { a } else { b }
}

pub(crate) fn max64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && is_snan64(a) {
        return quiet64(a);
    }
    if ieee && is_snan64(b) {
        return quiet64(b);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { b } else { a };
    }
    if a >= b { a } else { b }
}

/// V_MED3_F32: median of three; if any is NaN the minimum of the three (min semantics).
pub(crate) fn med3_32(a: f32, b: f32, c: f32, ieee: bool) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return min32(min32(a, b, ieee), c, ieee);
    }
    let mx = max32(max32(a, b, ieee), c, ieee);
    if mx == a {
        max32(b, c, ieee)
    } else if mx == b {
        max32(a, c, ieee)
    } else {
        max32(a, b, ieee)
    }
}

/// The class bit of V_CMP_CLASS for a value: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf.
pub(crate) fn class_bit(bits: u64, exp_bits: u32, mant_bits: u32) -> u32 {
    let sign = bits >> (exp_bits + mant_bits) & 1 == 1;
    let exp = bits >> mant_bits & ((1 << exp_bits) - 1);
    let mant = bits & ((1 << mant_bits) - 1);
    let max_exp = (1 << exp_bits) - 1;
    if exp == max_exp && mant != 0 {
        return if mant >> (mant_bits - 1) & 1 == 1 {
            1
        } else {
            0
        };
    }
    let k = if exp == max_exp {
        9
    } else if exp > 0 {
        8
    } else if mant != 0 {
        7
    } else {
        6
    };
    if sign { 11 - k } else { k }
}

/// frexp exponent of an f32 (0 for inf/NaN).
pub(crate) fn frexp_exp32(x: f32) -> i32 {
    if !x.is_finite() || x == 0.0 {
        return 0;
    }
    let (_, e) = frexp64(f64::from(x));
    e
}

/// frexp mantissa of an f32 in [0.5, 1) (inf/NaN pass through).
pub(crate) fn frexp_mant32(x: f32) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    frexp64(f64::from(x)).0 as f32
}

/// frexp of an f64: (mantissa in [0.5, 1), exponent); zero and non-finite give (x, 0).
pub(crate) fn frexp64(x: f64) -> (f64, i32) {
    if !x.is_finite() || x == 0.0 {
        return (x, 0);
    }
    let mut e = exponent64(x);
    let mut y = x;
    if e == 0 {
        y = x * f64::from_bits(0x4350_0000_0000_0000); // 2^54
        e = exponent64(y) - 54;
    }
    let mant = f64::from_bits((y.to_bits() & !(0x7ff << 52)) | (1022u64 << 52));
    (mant, e - 1022)
}

/// x * 2^n, correctly rounded (handles denormal results and overflow).
pub(crate) fn ldexp64(x: f64, n: i32) -> f64 {
    let n = n.clamp(-2200, 2200);
    let mut r = x;
    let mut k = n;
    while k > 1000 {
        r *= f64::from_bits(0x7e70_0000_0000_0000); // 2^1000
        k -= 1000;
    }
    while k < -1000 {
        r *= f64::from_bits(0x0170_0000_0000_0000); // 2^-1000
        k += 1000;
    }
    r * pow2(k)
}

fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// x * 2^n for f32, correctly rounded.
pub(crate) fn ldexp32(x: f32, n: i32) -> f32 {
    // One rounding: x * 2^n is exact in f64 for the f32 range unless it underflows f32, and the
    // final conversion rounds once.
    ldexp64(f64::from(x), n.clamp(-400, 400)) as f32
}

/// V_FRACT: x - floor(x), kept below 1.0; NaN for infinities.
pub(crate) fn fract32(x: f32) -> f32 {
    if x.is_infinite() {
        return f32::NAN;
    }
    if x.is_nan() {
        return x;
    }
    (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
}

pub(crate) fn fract64(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    if x.is_nan() {
        return x;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// V_DIV_SCALE_F32: scales the numerator or denominator so the division steps stay in range;
/// returns (result, vcc bit).
pub(crate) fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let denorm = |x: f32| x != 0.0 && x.is_finite() && exponent32(x) == 0;
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    if exponent32(s2) - exponent32(s1) >= 96 {
        return (if s0 == s1 { ldexp32(s0, 64) } else { s0 }, true);
    }
    if denorm(s1) {
        return (ldexp32(s0, 64), false);
    }
    // The ISA computes 1/S1 in f64 and tests for an f64 denormal, which no f32 divisor gives:
    // testing against the f32 range would scale a divisor above 2^126 to infinity.
    let inv_d_denorm = {
        let r = 1.0 / f64::from(s1);
        r != 0.0 && r.is_finite() && r.abs() < f64::MIN_POSITIVE
    };
    let q_denorm = denorm(s2 / s1);
    if inv_d_denorm && q_denorm {
        return (if s0 == s1 { ldexp32(s0, 64) } else { s0 }, true);
    }
    if inv_d_denorm {
        return (ldexp32(s0, -64), false);
    }
    if q_denorm {
        return (if s0 == s2 { ldexp32(s0, 64) } else { s0 }, true);
    }
    if exponent32(s2) <= 23 {
        return (ldexp32(s0, 64), false);
    }
    (s0, false)
}

/// V_DIV_SCALE_F64 (see [`div_scale32`]).
pub(crate) fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let denorm = |x: f64| x != 0.0 && x.is_finite() && exponent64(x) == 0;
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    if exponent64(s2) - exponent64(s1) >= 768 {
        return (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if denorm(s1) {
        return (ldexp64(s0, 128), false);
    }
    let inv_d_denorm = denorm(1.0 / s1);
    let q_denorm = denorm(s2 / s1);
    if inv_d_denorm && q_denorm {
        return (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if inv_d_denorm {
        return (ldexp64(s0, -128), false);
    }
    if q_denorm {
        return (if s0 == s2 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if exponent64(s2) <= 53 {
        return (ldexp64(s0, 128), false);
    }
    (s0, false)
}

/// V_DIV_FIXUP_F32: special cases of the quotient s2/s1 given the approximation s0.
pub(crate) fn div_fixup32(s0: f32, s1: f32, s2: f32) -> f32 {
    let neg = s1.is_sign_negative() ^ s2.is_sign_negative();
    let signed = |x: f32| if neg { -x } else { x };
    if s2.is_nan() {
        return quiet32(s2);
    }
    if s1.is_nan() {
        return quiet32(s1);
    }
    if s1 == 0.0 && s2 == 0.0 || s1.is_infinite() && s2.is_infinite() {
        return f32::from_bits(0xffc0_0000);
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f32::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if exponent32(s2) - exponent32(s1) < -150 {
        return signed(0.0);
    }
    if exponent32(s1) == 255 {
        return signed(f32::MAX);
    }
    // A NaN approximation comes from the refinement steps overflowing (inf - inf): the quotient
    // is beyond the range, and the ISA answers with the signed overflow value, infinity.
    if s0.is_nan() {
        return signed(f32::INFINITY);
    }
    signed(s0.abs())
}

/// V_DIV_FIXUP_F64 (see [`div_fixup32`]).
pub(crate) fn div_fixup64(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = s1.is_sign_negative() ^ s2.is_sign_negative();
    let signed = |x: f64| if neg { -x } else { x };
    if s2.is_nan() {
        return quiet64(s2);
    }
    if s1.is_nan() {
        return quiet64(s1);
    }
    if s1 == 0.0 && s2 == 0.0 || s1.is_infinite() && s2.is_infinite() {
        return f64::from_bits(0xfff8_0000_0000_0000);
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if exponent64(s2) - exponent64(s1) < -1075 {
        return signed(0.0);
    }
    if exponent64(s1) == 2047 {
        return signed(f64::MAX);
    }
    // A NaN approximation comes from the refinement steps overflowing (inf - inf): the quotient
    // is beyond the range, and the ISA answers with the signed overflow value, infinity.
    if s0.is_nan() {
        return signed(f64::INFINITY);
    }
    signed(s0.abs())
}

/// V_DIV_FIXUP_F16 (computed in f32, exact for f16 inputs).
pub(crate) fn div_fixup16(s0: f16, s1: f16, s2: f16) -> f16 {
    let (a, b, c) = (s0.to_f32(), s1.to_f32(), s2.to_f32());
    let neg = b.is_sign_negative() ^ c.is_sign_negative();
    if c.is_nan() {
        return f16::from_bits(s2.to_bits() | 0x0200);
    }
    if b.is_nan() {
        return f16::from_bits(s1.to_bits() | 0x0200);
    }
    if b == 0.0 && c == 0.0 || b.is_infinite() && c.is_infinite() {
        return f16::from_bits(0xfe00);
    }
    let r = if b == 0.0 || c.is_infinite() {
        f32::INFINITY
    } else if b.is_infinite() || c == 0.0 {
        0.0
    } else {
        a.abs()
    };
    f16::from_f32(if neg { -r } else { r })
}

/// fma(a, b, c), undoing V_DIV_SCALE_F32's scaling when the lane's VCC bit is set
/// (V_DIV_FMAS_F32): by 2^64 when `c`'s exponent is above the bias (the denominator was scaled
/// up, the quotient is large), else by 2^-64 (the numerator was scaled up, the quotient is
/// subnormal).
pub(crate) fn div_fmas32(a: f32, b: f32, c: f32, scale: bool) -> f32 {
    let r = a.mul_add(b, c);
    match (scale, (c.to_bits() >> 23) & 0xff > 127) {
        (false, _) => r,
        (true, true) => ldexp32(r, 64),
        (true, false) => ldexp32(r, -64),
    }
}

/// V_DIV_FMAS_F64: as [`div_fmas32`], with V_DIV_SCALE_F64's factor 2^128.
pub(crate) fn div_fmas64(a: f64, b: f64, c: f64, scale: bool) -> f64 {
    let r = a.mul_add(b, c);
    match (scale, (c.to_bits() >> 52) & 0x7ff > 1023) {
        (false, _) => r,
        (true, true) => ldexp64(r, 128),
        (true, false) => ldexp64(r, -128),
    }
}

/// f32 to f16, rounding toward zero (V_CVT_PKRTZ_F16_F32).
pub(crate) fn f32_to_f16_rtz(x: f32) -> u16 {
    let r = f16::from_f32(x);
    if r.is_infinite() && x.is_finite() {
        return f16::MAX.to_bits() | if x < 0.0 { 0x8000 } else { 0 };
    }
    if r.is_finite() && r.to_f32().abs() > x.abs() {
        // Rounded away from zero: step one ulp back toward zero.
        return r.to_bits() - 1;
    }
    r.to_bits()
}

/// The f16 nearest `s + e` (round to nearest even), where `s` is the f64 nearest the exact value
/// and `e` the exact remainder: `e` decides a tie of `s`. `half`'s f64 conversion is not used on
/// inexact values: it rounds through f32 or ignores the low mantissa bits, rounding twice.
pub(crate) fn f64_to_f16_exact(s: f64, e: f64) -> f16 {
    if !s.is_finite() {
        return f16::from_f64(s);
    }
    let a = s.abs();
    let away = e != 0.0 && (e > 0.0) == (s > 0.0);
    if a > 65520.0 || a == 65520.0 && (e == 0.0 || away) {
        return f16::from_f64(s.signum() * f64::INFINITY);
    }
    let q = if a < 6.103515625e-5 {
        ldexp64(1.0, -24)
    } else {
        ldexp64(1.0, exponent64(a) - 1023 - 10)
    };
    let m = s / q;
    let r = if (m - m.trunc()).abs() == 0.5 && e != 0.0 {
        if away {
            m.trunc() + m.signum()
        } else {
            m.trunc()
        }
    } else {
        m.round_ties_even()
    };
    f16::from_f64(r * q)
}

/// `a * b + c` rounded once to f16 (round to nearest even), for a product exact in f64 (f16 or
/// f32 factors).
pub(crate) fn fma_to_f16(a: f64, b: f64, c: f64) -> f16 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return f16::from_f64(s);
    }
    let v = s - p;
    f64_to_f16_exact(s, (p - (s - v)) + (c - v))
}

/// Float to signed/unsigned normalised 16-bit integer (V_CVT_PKNORM_*).
pub(crate) fn to_snorm16(x: f32) -> u16 {
    let v = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
    (v * 32767.0).round_ties_even() as i16 as u16
}

pub(crate) fn to_unorm16(x: f32) -> u16 {
    let v = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (v * 65535.0).round_ties_even() as u16
}

/// Clamp of a float result to [0, 1]; NaN becomes 0 in DX10 clamp mode.
pub(crate) fn clamp01_32(x: f32, dx10: bool) -> f32 {
    if x.is_nan() {
        return if dx10 { 0.0 } else { x };
    }
    x.clamp(0.0, 1.0)
}

pub(crate) fn clamp01_64(x: f64, dx10: bool) -> f64 {
    if x.is_nan() {
        return if dx10 { 0.0 } else { x };
    }
    x.clamp(0.0, 1.0)
}

/// IEEE 754-2019 minimum (V_MINIMUM3_F32): NaN if either operand is NaN, -0 below +0.
pub(crate) fn minimum32(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return quiet32(if a.is_nan() { a } else { b });
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    a.min(b)
}

/// IEEE 754-2019 maximum (V_MAXIMUM3_F32): NaN if either operand is NaN, +0 above -0.
pub(crate) fn maximum32(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return quiet32(if a.is_nan() { a } else { b });
    }
    if a == b {
        return if a.is_sign_positive() { a } else { b };
    }
    a.max(b)
}

/// The fractional bits of 2/π, most significant first (0.a2f9836e...): the hardware holds 1201
/// of them (bits beyond are zero). Computed with exact integer arithmetic (Machin's formula).
const TWO_OVER_PI: [u32; 38] = [
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab,
];

/// V_TRIG_PREOP_F64: 53 bits of 2/π starting at bit `53 * segment` (shifted further for large
/// arguments), scaled so that the segments of all `segment` values sum to 2/π.
pub(crate) fn trig_preop(x: f64, segment: u32) -> f64 {
    let e = exponent64(x) as u32;
    let mut shift = (segment & 31) * 53;
    if e > 1077 {
        shift += e - 1077;
    }
    let mut bits = 0u64;
    for k in shift..shift + 53 {
        let b = if k < 1201 {
            TWO_OVER_PI[(k / 32) as usize] >> (31 - k % 32) & 1
        } else {
            0
        };
        bits = bits << 1 | u64::from(b);
    }
    let mut scale = -53 - shift as i32;
    if e >= 1968 {
        scale += 128;
    }
    ldexp64(bits as f64, scale)
}

/// The cube-map face of direction (x, y, z) and the V_CUBE* results for it: (face id, major axis,
/// s coordinate, t coordinate). NaN comparisons fall through to the next case.
pub(crate) fn cube(x: f32, y: f32, z: f32) -> (f32, f32, f32, f32) {
    let neg = |v: f32| v < 0.0;
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        let (id, sc) = if neg(z) { (5.0, -x) } else { (4.0, x) };
        (id, z, sc, -y)
    } else if y.abs() >= x.abs() {
        let (id, tc) = if neg(y) { (3.0, -z) } else { (2.0, z) };
        (id, y, x, tc)
    } else {
        let (id, sc) = if neg(x) { (1.0, z) } else { (0.0, -z) };
        (id, x, sc, -y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_bits_cover_every_category() {
        let c = |x: f32| class_bit(u64::from(x.to_bits()), 8, 23);
        assert_eq!(c(f32::from_bits(0x7f80_0001)), 0);
        assert_eq!(c(f32::NAN), 1);
        assert_eq!(c(f32::NEG_INFINITY), 2);
        assert_eq!(c(-1.5), 3);
        assert_eq!(c(-f32::from_bits(1)), 4);
        assert_eq!(c(-0.0), 5);
        assert_eq!(c(0.0), 6);
        assert_eq!(c(f32::from_bits(1)), 7);
        assert_eq!(c(2.0), 8);
        assert_eq!(c(f32::INFINITY), 9);
    }

    #[test]
    fn frexp_and_ldexp_invert() {
        for &x in &[1.0f64, 0.75, -3.5e300, 5e-324, 1e-310, 123456.789] {
            let (m, e) = frexp64(x);
            assert!((0.5..1.0).contains(&m.abs()), "{x}: {m}");
            assert_eq!(ldexp64(m, e), x);
        }
        assert_eq!(ldexp32(1.0, -149), f32::from_bits(1));
        assert_eq!(ldexp32(1.0, 128), f32::INFINITY);
        assert_eq!(frexp_exp32(8.0), 4);
        assert_eq!(frexp_mant32(8.0), 0.5);
    }

    #[test]
    fn min_max_follow_the_isa() {
        assert_eq!(min32(f32::NAN, 2.0, true), 2.0);
        assert_eq!(max32(1.0, f32::NAN, false), 1.0);
        assert!(min32(0.0, -0.0, true).is_sign_negative());
        assert!(max32(-0.0, 0.0, true).is_sign_positive());
        assert!(min32(f32::from_bits(0x7f80_0001), 1.0, true).is_nan());
        assert_eq!(med3_32(3.0, 1.0, 2.0, true), 2.0);
    }

    #[test]
    fn division_helpers_reconstruct_ieee_division() {
        // The LLVM f32 division expansion: scale, rcp, Newton steps with fma, fmas, fixup.
        for &(n, d) in &[
            (1.0f32, 3.0f32),
            (7.0, -2.0),
            (1e-30, 3e20),
            (5.0, 1e-40),
            (0.0, 2.0),
            (3e38, 1e-5),
            (0.003_906_25, 1.694_765_7e38),
            (1e38, 1.694_765_7e38),
            (-2.5, 3.0e38),
            (6.646_14e35, 9.1835e-41),
            (-3e38, 1e-45),
        ] {
            let (ds, _) = div_scale32(d, d, n);
            let (ns, vcc) = div_scale32(n, d, n);
            let r = 1.0 / ds;
            let e = (-ds).mul_add(r, 1.0);
            let r = e.mul_add(r, r);
            let q = ns * r;
            let e2 = (-ds).mul_add(q, ns);
            let q = e2.mul_add(r, q);
            let e3 = (-ds).mul_add(q, ns);
            let f = div_fmas32(e3, r, q, vcc);
            let out = div_fixup32(f, d, n);
            let exact = n / d;
            if exact.is_infinite() {
                assert_eq!(out, exact, "{n}/{d}");
                continue;
            }
            let ulp = (out.to_bits() as i64 - exact.to_bits() as i64).abs();
            assert!(ulp <= 1, "{n}/{d}: {out} vs {exact}");
        }
        assert!(div_fixup32(1.0, 0.0, 0.0).is_nan());
        assert_eq!(div_fixup32(1.0, 0.0, -3.0), f32::NEG_INFINITY);
    }

    #[test]
    fn round_toward_zero_to_half() {
        assert_eq!(f32_to_f16_rtz(1.0), 0x3c00);
        assert_eq!(f32_to_f16_rtz(1.0 + 1.0 / 1500.0), 0x3c00);
        assert_eq!(f32_to_f16_rtz(-70000.0), 0xfbff);
        assert_eq!(fract32(-0.25), 0.75);
        assert!(fract32(-1e-10) < 1.0);
    }
}
