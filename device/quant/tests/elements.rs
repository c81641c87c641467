//! Element formats against definitions written here independently of the crate:
//! every code decoded by a sign/exponent/mantissa formula in f64 (`powi`), encode checked
//! by brute-force nearest search over all codes, plus ties, saturation, overflow, NaN, Inf.

use iron_quant::half_float::{
    bf16_bits_from_f32, bf16_bits_to_f32, f16_bits_from_f32, f16_bits_to_f32,
};
use iron_quant::{E2M1, E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E8M0, ElementFormat, Int8};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The value of a code, `None` for NaN.
type Reference = fn(u32) -> Option<f64>;

/// `(-1)^s * 2^(e - bias) * (1 + m / 2^mbits)`, or the subnormal `2^(1 - bias) * m / 2^mbits`.
fn sem(code: u32, ebits: u32, mbits: u32, bias: i32) -> f64 {
    let sign = if code >> (ebits + mbits) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let e = ((code >> mbits) & ((1 << ebits) - 1)) as i32;
    let m = (code & ((1 << mbits) - 1)) as f64 / 2f64.powi(mbits as i32);
    if e == 0 {
        sign * 2f64.powi(1 - bias) * m
    } else {
        sign * 2f64.powi(e - bias) * (1.0 + m)
    }
}

fn e4m3fn(c: u32) -> Option<f64> {
    if c & 0x7F == 0x7F {
        None
    } else {
        Some(sem(c, 4, 3, 7))
    }
}

fn e5m2(c: u32) -> Option<f64> {
    let sign = if c & 0x80 != 0 { -1.0 } else { 1.0 };
    match (c >> 2) & 0x1F {
        0x1F if c & 3 == 0 => Some(sign * f64::INFINITY),
        0x1F => None,
        _ => Some(sem(c, 5, 2, 15)),
    }
}

fn e4m3fnuz(c: u32) -> Option<f64> {
    if c == 0x80 {
        None
    } else {
        Some(sem(c, 4, 3, 8))
    }
}

fn e5m2fnuz(c: u32) -> Option<f64> {
    if c == 0x80 {
        None
    } else {
        Some(sem(c, 5, 2, 16))
    }
}

fn e2m3(c: u32) -> Option<f64> {
    Some(sem(c, 2, 3, 1))
}

fn e3m2(c: u32) -> Option<f64> {
    Some(sem(c, 3, 2, 3))
}

fn e2m1(c: u32) -> Option<f64> {
    Some(sem(c, 2, 1, 1))
}

fn e8m0(c: u32) -> Option<f64> {
    if c == 0xFF {
        None
    } else {
        Some(2f64.powi(c as i32 - 127))
    }
}

fn int8(c: u32) -> Option<f64> {
    Some(c as u8 as i8 as f64 / 64.0)
}

fn check_every_code<F: ElementFormat>(reference: Reference) {
    for code in 0..1u32 << F::BITS {
        let got = F::decode_to_f32(code as u8);
        match reference(code) {
            None => assert!(got.is_nan(), "{} {code:#x}: got {got}, want NaN", F::NAME),
            Some(want) => {
                assert_eq!(got as f64, want, "{} code {code:#x}", F::NAME);
                assert_eq!(
                    got.is_sign_negative(),
                    want.is_sign_negative(),
                    "{} {code:#x}",
                    F::NAME
                );
            }
        }
    }
}

#[test]
fn every_code_decodes_to_its_formula_value() {
    check_every_code::<E4M3Fn>(e4m3fn);
    check_every_code::<E5M2>(e5m2);
    check_every_code::<E4M3Fnuz>(e4m3fnuz);
    check_every_code::<E5M2Fnuz>(e5m2fnuz);
    check_every_code::<E2M3>(e2m3);
    check_every_code::<E3M2>(e3m2);
    check_every_code::<E2M1>(e2m1);
    check_every_code::<E8M0>(e8m0);
    check_every_code::<Int8>(int8);
}

/// Largest finite value of a reference.
fn reference_max(bits: u32, reference: Reference) -> f64 {
    (0..1u32 << bits)
        .filter_map(reference)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

#[test]
fn declared_max_and_emax_match_the_formulas() {
    fn check<F: ElementFormat>(reference: Reference) {
        let max = reference_max(F::BITS, reference);
        assert_eq!(F::MAX as f64, max, "{}", F::NAME);
        assert_eq!(F::EMAX, max.log2().floor() as i32, "{}", F::NAME);
    }
    check::<E4M3Fn>(e4m3fn);
    check::<E5M2>(e5m2);
    check::<E4M3Fnuz>(e4m3fnuz);
    check::<E5M2Fnuz>(e5m2fnuz);
    check::<E2M3>(e2m3);
    check::<E3M2>(e3m2);
    check::<E2M1>(e2m1);
    check::<E8M0>(e8m0);
    check::<Int8>(int8);
}

fn check_round_trip<F: ElementFormat>(reference: Reference) {
    for code in 0..1u32 << F::BITS {
        let Some(value) = reference(code) else {
            continue;
        };
        if value.is_infinite() {
            continue;
        }
        let x = value as f32;
        assert_eq!(F::encode_from_f32(x) as u32, code, "{} {value}", F::NAME);
        assert_eq!(
            F::encode_from_f32_saturating(x) as u32,
            code,
            "{} {value}",
            F::NAME
        );
    }
}

#[test]
fn every_representable_value_round_trips() {
    check_round_trip::<E4M3Fn>(e4m3fn);
    check_round_trip::<E5M2>(e5m2);
    check_round_trip::<E4M3Fnuz>(e4m3fnuz);
    check_round_trip::<E5M2Fnuz>(e5m2fnuz);
    check_round_trip::<E2M3>(e2m3);
    check_round_trip::<E3M2>(e3m2);
    check_round_trip::<E2M1>(e2m1);
    check_round_trip::<E8M0>(e8m0);
    check_round_trip::<Int8>(int8);
}

/// Nearest finite code to `x` by search over all codes, saturating; ties go to the even
/// code (the code's low bit is the mantissa's low bit in every format here).
/// Zero keeps the sign of `x` where the format has a negative zero.
fn nearest_saturating(bits: u32, reference: Reference, x: f64) -> u32 {
    let has_negative_zero = (0..1u32 << bits)
        .filter_map(reference)
        .any(|v| v == 0.0 && v.is_sign_negative());
    let mut best: Option<(f64, u32)> = None;
    for code in 0..1u32 << bits {
        let Some(v) = reference(code) else { continue };
        let wrong_zero =
            has_negative_zero && v == 0.0 && v.is_sign_negative() != x.is_sign_negative();
        if !v.is_finite() || wrong_zero {
            continue;
        }
        let d = (v - x).abs();
        best = match best {
            Some((bd, bc)) if bd < d || (bd == d && bc & 1 == 0) => Some((bd, bc)),
            _ => Some((d, code)),
        };
    }
    best.unwrap().1
}

fn check_nearest<F: ElementFormat>(reference: Reference, rng: &mut ChaCha8Rng) {
    let max = reference_max(F::BITS, reference);
    let codes: Vec<f64> = (0..1u32 << F::BITS)
        .filter_map(reference)
        .filter(|v| v.is_finite())
        .collect();
    for i in 0..4000 {
        let x: f32 = match i % 3 {
            // Spread over the range and a little past it.
            0 => (rng.random::<f64>() * 2.0 - 1.0) as f32 * max as f32 * 1.3,
            // Log-uniform magnitudes, to reach the subnormals.
            1 => {
                (rng.random::<f64>() * 40.0 - 30.0).exp2() as f32
                    * if rng.random() { 1.0 } else { -1.0 }
            }
            // Exact midpoints of neighbouring values (ties).
            _ => {
                let a = codes[rng.random_range(0..codes.len())];
                let b = codes[rng.random_range(0..codes.len())];
                ((a + b) / 2.0) as f32
            }
        };
        let want = nearest_saturating(F::BITS, reference, x as f64);
        let got = F::encode_from_f32_saturating(x);
        assert_eq!(got as u32, want, "{}: {x:e}", F::NAME);
        if (x as f64).abs() <= max {
            assert_eq!(F::encode_from_f32(x), got, "{}: {x:e}", F::NAME);
        }
    }
}

#[test]
fn encode_is_nearest_with_ties_to_even() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    check_nearest::<E4M3Fn>(e4m3fn, &mut rng);
    check_nearest::<E5M2>(e5m2, &mut rng);
    check_nearest::<E4M3Fnuz>(e4m3fnuz, &mut rng);
    check_nearest::<E5M2Fnuz>(e5m2fnuz, &mut rng);
    check_nearest::<E2M3>(e2m3, &mut rng);
    check_nearest::<E3M2>(e3m2, &mut rng);
    check_nearest::<E2M1>(e2m1, &mut rng);
    check_nearest::<Int8>(int8, &mut rng);
}

#[test]
fn specific_ties_round_to_even() {
    // E4M3: 1.0625 lies halfway between 1.0 (0x38) and 1.125 (0x39): even is 0x38.
    assert_eq!(E4M3Fn::encode_from_f32(1.0625), 0x38);
    // 1.1875 between 1.125 (0x39) and 1.25 (0x3A): even is 0x3A.
    assert_eq!(E4M3Fn::encode_from_f32(1.1875), 0x3A);
    // FP4: 2.5 between 2 (0x4) and 3 (0x5) -> 2; 5 between 4 (0x6) and 6 (0x7) -> 4.
    assert_eq!(E2M1::encode_from_f32(2.5), 0x4);
    assert_eq!(E2M1::encode_from_f32(-5.0), 0xE);
    // FP4 subnormal tie: 0.25 between 0 and 0.5 -> 0; 0.75 between 0.5 and 1 -> 1.0.
    assert_eq!(E2M1::encode_from_f32(0.25), 0x0);
    assert_eq!(E2M1::encode_from_f32(0.75), 0x2);
    // E5M2 smallest subnormal 2^-16: half of it ties to 0, 1.5x ties to 2^-15.
    assert_eq!(E5M2::encode_from_f32(2f32.powi(-17)), 0x00);
    assert_eq!(E5M2::encode_from_f32(1.5 * 2f32.powi(-16)), 0x02);
    // Just above a tie rounds away.
    assert_eq!(
        E2M1::encode_from_f32(f32::from_bits(2.5f32.to_bits() + 1)),
        0x5
    );
}

/// `(just below, at, just above)` the overflow threshold `max + ulp(max) / 2`.
fn around_overflow(max: f32, mbits: i32) -> [f32; 3] {
    let ulp = 2f32.powi(max.log2().floor() as i32 - mbits);
    let t = max + ulp / 2.0;
    [
        f32::from_bits(t.to_bits() - 1),
        t,
        f32::from_bits(t.to_bits() + 1),
    ]
}

#[test]
fn overflow_follows_each_format() {
    // (format max, mantissa bits, expected codes for below/at/above threshold)
    let [b, t, a] = around_overflow(448.0, 3);
    let e4m3 = [b, t, a].map(E4M3Fn::encode_from_f32);
    assert_eq!(e4m3, [0x7E, 0x7E, 0x7F]); // 448 is even: the tie stays; beyond is NaN
    let [b, t, a] = around_overflow(57344.0, 2);
    assert_eq!([b, t, a].map(E5M2::encode_from_f32), [0x7B, 0x7C, 0x7C]); // tie goes to Inf
    let [b, t, a] = around_overflow(240.0, 3);
    assert_eq!([b, t, a].map(E4M3Fnuz::encode_from_f32), [0x7F, 0x80, 0x80]);
    let [b, t, a] = around_overflow(57344.0, 2);
    assert_eq!([b, t, a].map(E5M2Fnuz::encode_from_f32), [0x7F, 0x80, 0x80]);
    // Negative overflow keeps the sign where a signed special exists.
    assert_eq!(E5M2::encode_from_f32(-1e6), 0xFC);
    assert_eq!(E4M3Fn::encode_from_f32(-1e6), 0xFF);
    // Saturating mode clamps, including infinities.
    assert_eq!(E4M3Fn::encode_from_f32_saturating(1e6), 0x7E);
    assert_eq!(E5M2::encode_from_f32_saturating(f32::NEG_INFINITY), 0xFB);
    assert_eq!(E4M3Fnuz::encode_from_f32_saturating(f32::INFINITY), 0x7F);
    assert_eq!(E5M2Fnuz::encode_from_f32_saturating(-1e9), 0xFF);
    // FP6/FP4 have no specials: both modes saturate.
    assert_eq!(E2M3::encode_from_f32(100.0), 0x1F);
    assert_eq!(E3M2::encode_from_f32(f32::NEG_INFINITY), 0x3F);
    assert_eq!(E2M1::encode_from_f32(7.0), 0x7);
    assert_eq!(E8M0::encode_from_f32(f32::MAX), 0xFF);
    assert_eq!(E8M0::encode_from_f32_saturating(f32::MAX), 0xFE);
}

#[test]
fn nan_inf_and_zero_encode_as_documented() {
    let nan = f32::NAN;
    let neg_nan = -f32::NAN;
    assert_eq!(
        (
            E4M3Fn::encode_from_f32(nan),
            E4M3Fn::encode_from_f32(neg_nan)
        ),
        (0x7F, 0xFF)
    );
    assert_eq!(E4M3Fn::encode_from_f32_saturating(nan), 0x7F);
    assert_eq!(
        (E5M2::encode_from_f32(nan), E5M2::encode_from_f32(neg_nan)),
        (0x7E, 0xFE)
    );
    assert_eq!(E5M2::encode_from_f32(f32::INFINITY), 0x7C);
    assert_eq!(E4M3Fn::encode_from_f32(f32::INFINITY), 0x7F);
    for x in [nan, neg_nan, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(E4M3Fnuz::encode_from_f32(x), 0x80);
        assert_eq!(E5M2Fnuz::encode_from_f32(x), 0x80);
    }
    // No negative zero in FNUZ; the other formats keep the sign of zero.
    assert_eq!(E4M3Fnuz::encode_from_f32(-0.0), 0x00);
    assert_eq!(E5M2Fnuz::encode_from_f32(-1e-30), 0x00);
    assert_eq!(E4M3Fn::encode_from_f32(-0.0), 0x80);
    assert_eq!(E2M1::encode_from_f32(-1e-30), 0x8);
    // Formats without NaN encode NaN as +0.
    assert_eq!(E2M3::encode_from_f32(neg_nan), 0);
    assert_eq!(E3M2::encode_from_f32_saturating(nan), 0);
    assert_eq!(E2M1::encode_from_f32(nan), 0);
    assert_eq!(Int8::encode_from_f32(nan), 0);
    // E8M0: no zero, no sign, no infinity.
    for x in [0.0, -0.0, -1.0, nan, f32::INFINITY] {
        assert_eq!(E8M0::encode_from_f32(x), 0xFF, "{x}");
    }
    assert_eq!(E8M0::encode_from_f32(1e-45), 0x00);
    assert_eq!(E8M0::encode_from_f32(0.75), 127); // 1.5 * 2^-1: ties go up
    assert_eq!(E8M0::encode_from_f32(0.74), 126);
}

#[test]
fn f16_and_bf16_decode_every_code_and_round_trip() {
    for bits in 0..=u16::MAX as u32 {
        let code = bits as u16;
        let f16_exp = (bits >> 10) & 0x1F;
        let bf16_exp = (bits >> 7) & 0xFF;
        let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
        let f16_want = match f16_exp {
            0x1F if bits & 0x3FF == 0 => sign * f64::INFINITY,
            0x1F => f64::NAN,
            _ => sem(bits, 5, 10, 15),
        };
        let bf16_want = match bf16_exp {
            0xFF if bits & 0x7F == 0 => sign * f64::INFINITY,
            0xFF => f64::NAN,
            _ => sem(bits, 8, 7, 127),
        };
        let f16_got = f16_bits_to_f32(code);
        let bf16_got = bf16_bits_to_f32(code);
        if f16_want.is_nan() {
            assert!(f16_got.is_nan());
        } else {
            assert_eq!(f16_got as f64, f16_want, "f16 {bits:#x}");
            assert_eq!(f16_bits_from_f32(f16_got), code);
        }
        if bf16_want.is_nan() {
            assert!(bf16_got.is_nan());
        } else {
            assert_eq!(bf16_got as f64, bf16_want, "bf16 {bits:#x}");
            assert_eq!(bf16_bits_from_f32(bf16_got), code);
        }
    }
    // Ties to even: 1 + 2^-11 lies between f16 1.0 and 1 + 2^-10.
    assert_eq!(f16_bits_from_f32(1.0 + 2f32.powi(-11)), 0x3C00);
    assert_eq!(bf16_bits_from_f32(1.0 + 3.0 * 2f32.powi(-8)), 0x3F82);
}
