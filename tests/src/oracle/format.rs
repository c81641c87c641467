//! The number formats kernels read and write, as plain arithmetic: decoding a bit pattern to its
//! value, and encoding a value to the nearest bit pattern (ties to even), written from the
//! definitions (sign, biased exponent, mantissa) rather than from bit tricks, so that they can
//! judge the kernels' bit-level conversions.

/// A binary floating-point format of at most 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16: binary32's exponent, 7 mantissa bits.
    Bf16,
    /// OCP FP8 E4M3 ("FN"): bias 7, no infinities, NaN = S.1111.111, max 448.
    E4m3fn,
    /// OCP FP8 E5M2: bias 15, IEEE-style infinities and NaNs, max 57344.
    E5m2,
    /// FP8 E4M3 FNUZ: bias 8, no infinities, no -0, one NaN (0x80), max 240.
    E4m3fnuz,
    /// FP8 E5M2 FNUZ: bias 16, no infinities, no -0, one NaN (0x80), max 57344.
    E5m2fnuz,
}

/// Which codes of a format are not ordinary numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Specials {
    /// The all-ones exponent: mantissa 0 is ±infinity, anything else NaN.
    Ieee,
    /// Only the all-ones exponent and mantissa (either sign) is NaN.
    NanAllOnes,
    /// The code of -0 (sign bit alone) is the only NaN.
    NanAtNegativeZero,
}

/// What becomes of a value beyond the largest finite one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// The format's infinity, or its NaN when it has no infinity (the IEEE and OCP rule).
    Special,
    /// The largest finite value of the right sign (infinities too).
    Saturate,
}

impl Format {
    /// Every format, for tests that sweep them.
    pub const ALL: [Format; 7] = [
        Format::F32,
        Format::F16,
        Format::Bf16,
        Format::E4m3fn,
        Format::E5m2,
        Format::E4m3fnuz,
        Format::E5m2fnuz,
    ];

    /// (exponent bits, mantissa bits, bias, specials).
    fn layout(self) -> (u32, u32, i32, Specials) {
        match self {
            Format::F32 => (8, 23, 127, Specials::Ieee),
            Format::F16 => (5, 10, 15, Specials::Ieee),
            Format::Bf16 => (8, 7, 127, Specials::Ieee),
            Format::E4m3fn => (4, 3, 7, Specials::NanAllOnes),
            Format::E5m2 => (5, 2, 15, Specials::Ieee),
            Format::E4m3fnuz => (4, 3, 8, Specials::NanAtNegativeZero),
            Format::E5m2fnuz => (5, 2, 16, Specials::NanAtNegativeZero),
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        let (e, m, _, _) = self.layout();
        1 + e + m
    }

    /// Mantissa (fraction) bits.
    pub fn mantissa_bits(self) -> u32 {
        self.layout().1
    }

    /// The exponent of the smallest normal number, `1 - bias`.
    fn min_exponent(self) -> i32 {
        1 - self.layout().2
    }

    /// Half the distance from 1 to the next larger number: the largest relative error of one
    /// rounding to nearest (for results in the normal range).
    pub fn unit_roundoff(self) -> f64 {
        pow2(-(self.mantissa_bits() as i32) - 1)
    }

    /// The smallest positive (subnormal) number.
    pub fn min_subnormal(self) -> f64 {
        pow2(self.min_exponent() - self.mantissa_bits() as i32)
    }

    /// The largest finite number.
    pub fn max_finite(self) -> f64 {
        let (e, m, bias, specials) = self.layout();
        let all_ones = (1u32 << e) - 1;
        let (exponent_field, mantissa_field) = match specials {
            Specials::Ieee => (all_ones - 1, (1u32 << m) - 1),
            Specials::NanAllOnes => (all_ones, (1u32 << m) - 2),
            Specials::NanAtNegativeZero => (all_ones, (1u32 << m) - 1),
        };
        f64::from(mantissa_field + (1 << m)) * pow2(exponent_field as i32 - bias - m as i32)
    }

    /// The value of a code (the low [`Format::bits`] bits of `code`); a NaN keeps the code's sign
    /// bit.
    pub fn decode(self, code: u32) -> f64 {
        let (e, m, bias, specials) = self.layout();
        let width = self.bits();
        let code = code & mask(width);
        let negative = code >> (width - 1) == 1;
        let exponent_field = (code >> m) & mask(e);
        let mantissa_field = code & mask(m);
        let all_ones = mask(e);
        let is_nan = match specials {
            Specials::Ieee => exponent_field == all_ones && mantissa_field != 0,
            Specials::NanAllOnes => exponent_field == all_ones && mantissa_field == mask(m),
            Specials::NanAtNegativeZero => code == 1 << (width - 1),
        };
        if is_nan {
            return if negative { -f64::NAN } else { f64::NAN };
        }
        let magnitude = if specials == Specials::Ieee && exponent_field == all_ones {
            f64::INFINITY
        } else if exponent_field == 0 {
            f64::from(mantissa_field) * self.min_subnormal()
        } else {
            f64::from(mantissa_field + (1 << m)) * pow2(exponent_field as i32 - bias - m as i32)
        };
        if negative { -magnitude } else { magnitude }
    }

    /// The code of the number nearest to `x` (ties to the even mantissa), with `overflow` for
    /// values beyond [`Format::max_finite`]. A NaN gives the format's NaN (quiet, with the sign
    /// of `x` where the format has signed NaNs); a result of zero keeps the sign of `x` except in
    /// the FNUZ formats, which have no -0.
    pub fn encode(self, x: f64, overflow: Overflow) -> u32 {
        let (e, m, bias, specials) = self.layout();
        let width = self.bits();
        let sign = u32::from(x.is_sign_negative()) << (width - 1);
        if x.is_nan() {
            return match specials {
                Specials::Ieee => sign | (mask(e) << m) | (1 << (m - 1)),
                Specials::NanAllOnes => sign | mask(width - 1),
                Specials::NanAtNegativeZero => 1 << (width - 1),
            };
        }
        let magnitude = round_to_nearest_even(x.abs(), m, self.min_exponent());
        if magnitude > self.max_finite() {
            return match (overflow, specials) {
                (Overflow::Saturate, _) => sign | self.encode(self.max_finite(), overflow),
                (Overflow::Special, Specials::Ieee) => sign | (mask(e) << m),
                (Overflow::Special, _) => self.encode(f64::NAN.copysign(x), overflow),
            };
        }
        if magnitude == 0.0 {
            return if specials == Specials::NanAtNegativeZero {
                0
            } else {
                sign
            };
        }
        let exponent = exponent_of(magnitude);
        let code = if exponent < self.min_exponent() {
            (magnitude / self.min_subnormal()) as u32
        } else {
            let exponent_field = (exponent + bias) as u32;
            let mantissa_field = (magnitude / pow2(exponent - m as i32)) as u32 - (1 << m);
            (exponent_field << m) | mantissa_field
        };
        sign | code
    }

    /// Whether `code` is a NaN of this format.
    pub fn is_nan(self, code: u32) -> bool {
        self.decode(code).is_nan()
    }
}

/// `2^k`, exactly.
pub fn pow2(k: i32) -> f64 {
    2f64.powi(k)
}

/// The low `n` bits set.
fn mask(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1 << n) - 1 }
}

/// `floor(log2(a))` for a positive finite `a`.
fn exponent_of(a: f64) -> i32 {
    let mut k = a.log2().floor() as i32;
    while pow2(k) > a {
        k -= 1;
    }
    while pow2(k + 1) <= a {
        k += 1;
    }
    k
}

/// `a >= 0` rounded to a number with `mantissa_bits` fraction bits and exponents no lower than
/// `min_exponent` (below it, multiples of the smallest subnormal), ties to even; the exponent is
/// unbounded above.
fn round_to_nearest_even(a: f64, mantissa_bits: u32, min_exponent: i32) -> f64 {
    if a == 0.0 || a.is_infinite() {
        return a;
    }
    let quantum = pow2(exponent_of(a).max(min_exponent) - mantissa_bits as i32);
    (a / quantum).round_ties_even() * quantum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_constants() {
        assert_eq!(Format::F16.max_finite(), 65504.0);
        assert_eq!(Format::F16.min_subnormal(), pow2(-24));
        assert_eq!(
            Format::Bf16.max_finite(),
            f64::from(f32::MAX) * (1.0 - pow2(-8)) / (1.0 - pow2(-24))
        );
        assert_eq!(Format::F32.max_finite(), f64::from(f32::MAX));
        assert_eq!(Format::E4m3fn.max_finite(), 448.0);
        assert_eq!(Format::E5m2.max_finite(), 57344.0);
        assert_eq!(Format::E4m3fnuz.max_finite(), 240.0);
        assert_eq!(Format::E5m2fnuz.max_finite(), 57344.0);
        assert_eq!(Format::E4m3fn.min_subnormal(), pow2(-9));
        assert_eq!(Format::E5m2.min_subnormal(), pow2(-16));
        assert_eq!(Format::E4m3fnuz.min_subnormal(), pow2(-10));
        assert_eq!(Format::E5m2fnuz.min_subnormal(), pow2(-17));
    }

    #[test]
    fn known_codes() {
        let s = Overflow::Special;
        assert_eq!(Format::F16.encode(1.0, s), 0x3C00);
        assert_eq!(Format::F16.encode(-2.0, s), 0xC000);
        assert_eq!(Format::F16.encode(65504.0, s), 0x7BFF);
        assert_eq!(
            Format::F16.encode(65520.0, s),
            0x7C00,
            "the midpoint above max rounds up"
        );
        assert_eq!(Format::Bf16.encode(1.0, s), 0x3F80);
        assert_eq!(Format::Bf16.encode(-0.0, s), 0x8000);
        assert_eq!(Format::F32.encode(1.0, s), 0x3F80_0000);
        assert_eq!(Format::E4m3fn.encode(1.0, s), 0x38);
        assert_eq!(Format::E4m3fn.encode(448.0, s), 0x7E);
        assert_eq!(Format::E4m3fn.encode(-448.0, s), 0xFE);
        assert_eq!(
            Format::E4m3fn.encode(1e6, s),
            0x7F,
            "E4M3FN overflows to NaN"
        );
        assert_eq!(Format::E4m3fn.encode(1e6, Overflow::Saturate), 0x7E);
        assert_eq!(Format::E5m2.encode(57344.0, s), 0x7B);
        assert_eq!(Format::E5m2.encode(f64::INFINITY, s), 0x7C);
        assert_eq!(
            Format::E5m2.encode(f64::NEG_INFINITY, Overflow::Saturate),
            0xFB
        );
        assert_eq!(Format::E4m3fnuz.encode(1.0, s), 0x40);
        assert_eq!(Format::E4m3fnuz.encode(240.0, s), 0x7F);
        assert_eq!(Format::E4m3fnuz.encode(-0.0, s), 0x00, "FNUZ has no -0");
        assert_eq!(Format::E4m3fnuz.encode(f64::NAN, s), 0x80);
        assert_eq!(Format::E5m2fnuz.encode(1.0, s), 0x40);
        assert_eq!(Format::E4m3fn.encode(pow2(-9), s), 0x01);
        assert_eq!(
            Format::E4m3fn.encode(pow2(-10), s),
            0x00,
            "half the smallest subnormal ties to 0"
        );
        assert_eq!(
            Format::E4m3fn.encode(-pow2(-11), s),
            0x80,
            "underflow keeps the sign"
        );
    }

    #[test]
    fn every_16_and_8_bit_code_round_trips() {
        for format in Format::ALL.into_iter().filter(|f| f.bits() <= 16) {
            for code in 0..1u32 << format.bits() {
                let value = format.decode(code);
                if value.is_nan() {
                    assert!(format.is_nan(format.encode(value, Overflow::Special)));
                } else {
                    assert_eq!(
                        format.encode(value, Overflow::Special),
                        code,
                        "{format:?} {code:#x}"
                    );
                }
            }
        }
    }

    /// The finite values of a format with their codes, ascending, zero once (as +0).
    fn finite_values(format: Format) -> Vec<(f64, u32)> {
        let mut values: Vec<(f64, u32)> = (0..1u32 << format.bits())
            .map(|c| (format.decode(c), c))
            .filter(|(v, c)| v.is_finite() && !(*v == 0.0 && *c != 0))
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        values
    }

    #[test]
    fn midpoints_round_to_the_even_code_and_others_to_the_nearest() {
        for format in Format::ALL.into_iter().filter(|f| f.bits() <= 16) {
            let positive: Vec<(f64, u32)> = finite_values(format)
                .into_iter()
                .filter(|(v, _)| *v >= 0.0)
                .collect();
            for pair in positive.windows(2) {
                let ((lo, lo_code), (hi, hi_code)) = (pair[0], pair[1]);
                assert_eq!(
                    hi_code,
                    lo_code + 1,
                    "{format:?}: positive codes ascend with value"
                );
                let even = if lo_code % 2 == 0 { lo_code } else { hi_code };
                let mid = (lo + hi) / 2.0;
                let step = (hi - lo) / 8.0;
                let s = Overflow::Special;
                assert_eq!(format.encode(mid, s), even, "{format:?} midpoint {mid}");
                assert_eq!(
                    format.encode(mid - step, s),
                    lo_code,
                    "{format:?} below {mid}"
                );
                assert_eq!(
                    format.encode(mid + step, s),
                    hi_code,
                    "{format:?} above {mid}"
                );
            }
        }
    }

    #[test]
    fn fp8_encoding_is_the_nearest_code_by_search() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for format in [
            Format::E4m3fn,
            Format::E5m2,
            Format::E4m3fnuz,
            Format::E5m2fnuz,
        ] {
            let values = finite_values(format);
            for _ in 0..20_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let x = f64::from(f32::from_bits(state as u32));
                if !x.is_finite() || x.abs() > format.max_finite() {
                    continue;
                }
                let got = format.decode(format.encode(x, Overflow::Saturate));
                let best = values
                    .iter()
                    .map(|&(v, _)| (v - x).abs())
                    .fold(f64::INFINITY, f64::min);
                assert_eq!((got - x).abs(), best, "{format:?} {x}");
            }
        }
    }

    #[test]
    fn f16_and_bf16_rounding_agrees_with_the_half_crate() {
        use iron_kernels::dtype::{bf16, f16};
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..200_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Half of the inputs near f16's range, so that its subnormals and overflow are hit.
            let bits = if i % 2 == 0 {
                state as u32
            } else {
                (state as u32 & 0x807F_FFFF) | (((state >> 32) as u32 % 48 + 100) << 23)
            };
            let x = f32::from_bits(bits);
            let value = f64::from(x);
            let s = Overflow::Special;
            let (want16, wantb16) = (f16::from_f32(x).to_bits(), bf16::from_f32(x).to_bits());
            let (got16, gotb16) = (Format::F16.encode(value, s), Format::Bf16.encode(value, s));
            if x.is_nan() {
                assert!(Format::F16.is_nan(got16) && Format::Bf16.is_nan(gotb16));
            } else {
                assert_eq!(got16, u32::from(want16), "f16 of {x:e}");
                assert_eq!(gotb16, u32::from(wantb16), "bf16 of {x:e}");
            }
        }
    }

    #[test]
    fn saturation_clamps_overflow_and_infinities() {
        for format in [
            Format::E4m3fn,
            Format::E5m2,
            Format::E4m3fnuz,
            Format::E5m2fnuz,
        ] {
            let max = format.max_finite();
            for x in [max * 1.5, 1e30, f64::INFINITY] {
                assert_eq!(format.decode(format.encode(x, Overflow::Saturate)), max);
                assert_eq!(format.decode(format.encode(-x, Overflow::Saturate)), -max);
            }
            assert!(format.is_nan(format.encode(f64::NAN, Overflow::Saturate)));
        }
    }
}
