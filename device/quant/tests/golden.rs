//! Bit-for-bit comparison with ml_dtypes (golden files written by `golden/make_golden.py`).
//!
//! What is compared:
//! - decoding of every code of the eight formats: identical f32 bits, NaN against NaN
//!   (payloads are not compared);
//! - non-saturating encoding (`encode_from_f32`) of every golden input for the FP8 formats
//!   and E8M0, which is what ml_dtypes' `astype` does;
//! - encoding of FP6/FP4, which always saturates both here and in ml_dtypes, for every
//!   input except NaN: ml_dtypes turns NaN into a signed zero (sign opposite to the NaN's
//!   sign bit) where this crate documents +0;
//! - E8M0 encoding of every input except the f32 subnormals strictly between `2^-127` and
//!   `1.5 * 2^-127`: ml_dtypes rounds those up to `2^-126`, this crate to the nearer
//!   `2^-127` (the MX scale choice never encodes a general f32, see `iron_quant::mx`).

use iron_quant::{E2M1, E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E8M0, ElementFormat};

const DECODE: &str = include_str!("golden/decode.txt");
const ENCODE: &str = include_str!("golden/encode.txt");

/// Column order of the golden files.
const FORMATS: [&str; 8] = [
    "fp8_e4m3fn",
    "fp8_e5m2",
    "fp8_e4m3fnuz",
    "fp8_e5m2fnuz",
    "fp6_e2m3",
    "fp6_e3m2",
    "fp4_e2m1",
    "e8m0",
];

fn rows(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
}

fn hex(field: &str) -> u32 {
    u32::from_str_radix(field, 16).expect("golden file holds hex numbers")
}

fn header_names(text: &str) -> Vec<&str> {
    text.lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(2)
        .collect()
}

#[test]
fn golden_files_list_the_expected_formats() {
    assert_eq!(header_names(DECODE), FORMATS);
    assert_eq!(header_names(ENCODE), FORMATS);
}

fn check_decode<F: ElementFormat>(column: usize) -> usize {
    let mut checked = 0;
    for row in rows(DECODE) {
        let code = hex(row[0]);
        let field = row[column + 1];
        if field == "-" {
            assert!(code >= 1 << F::BITS, "{} lacks code {code:#x}", F::NAME);
            continue;
        }
        let expected = f32::from_bits(hex(field));
        let got = F::decode_to_f32(code as u8);
        if expected.is_nan() {
            assert!(
                got.is_nan(),
                "{} code {code:#04x}: got {got}, want NaN",
                F::NAME
            );
        } else {
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "{} code {code:#04x}",
                F::NAME
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 1 << F::BITS);
    checked
}

#[test]
fn decode_matches_ml_dtypes_for_every_code() {
    let total = check_decode::<E4M3Fn>(0)
        + check_decode::<E5M2>(1)
        + check_decode::<E4M3Fnuz>(2)
        + check_decode::<E5M2Fnuz>(3)
        + check_decode::<E2M3>(4)
        + check_decode::<E3M2>(5)
        + check_decode::<E2M1>(6)
        + check_decode::<E8M0>(7);
    assert_eq!(total, 5 * 256 + 2 * 64 + 16);
}

/// Compares `encode_from_f32` with the golden column for the inputs `skip` does not reject;
/// returns how many inputs were compared.
fn check_encode<F: ElementFormat>(column: usize, skip: fn(f32) -> bool) -> usize {
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for row in rows(ENCODE) {
        let input = f32::from_bits(hex(row[0]));
        if skip(input) {
            continue;
        }
        let expected = hex(row[column + 1]) as u8;
        let got = F::encode_from_f32(input);
        if got != expected {
            mismatches.push((row[0].to_string(), input, got, expected));
        }
        checked += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{}: {} of {checked} inputs differ from ml_dtypes, first (bits, value, got, want): {:?}",
        F::NAME,
        mismatches.len(),
        &mismatches[..mismatches.len().min(8)]
    );
    checked
}

#[test]
fn fp8_encode_matches_ml_dtypes() {
    let n = check_encode::<E4M3Fn>(0, |_| false);
    assert!(n > 3000, "only {n} golden inputs");
    check_encode::<E5M2>(1, |_| false);
    check_encode::<E4M3Fnuz>(2, |_| false);
    check_encode::<E5M2Fnuz>(3, |_| false);
}

#[test]
fn fp6_fp4_encode_matches_ml_dtypes_except_nan() {
    check_encode::<E2M3>(4, f32::is_nan);
    check_encode::<E3M2>(5, f32::is_nan);
    check_encode::<E2M1>(6, f32::is_nan);
}

#[test]
fn e8m0_encode_matches_ml_dtypes() {
    let differs = |x: f32| (0x0040_0001..0x0060_0000).contains(&x.to_bits());
    let n = check_encode::<E8M0>(7, differs);
    assert!(n > 3000, "only {n} golden inputs");
}
