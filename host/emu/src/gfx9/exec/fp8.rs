//! 8-bit floating point formats of the conversion instructions: E4M3 ("fp8") and E5M2 ("bf8"),
//! in the OCP variants gfx950 uses and the FNUZ variants (no infinities, no negative zero, NaN = 0x80,
//! exponent bias one higher) gfx942 uses.

/// One 8-bit float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fp8 {
    exp_bits: u32,
    mant_bits: u32,
    bias: i32,
    fnuz: bool,
}

impl Fp8 {
    /// E4M3 (`fp8`): FNUZ on gfx942, OCP E4M3FN otherwise.
    pub fn e4m3(fnuz: bool) -> Fp8 {
        Fp8 {
            exp_bits: 4,
            mant_bits: 3,
            bias: if fnuz { 8 } else { 7 },
            fnuz,
        }
    }

    /// E5M2 (`bf8`): FNUZ on gfx942, OCP otherwise.
    pub fn e5m2(fnuz: bool) -> Fp8 {
        Fp8 {
            exp_bits: 5,
            mant_bits: 2,
            bias: if fnuz { 16 } else { 15 },
            fnuz,
        }
    }

    fn has_inf(self) -> bool {
        !self.fnuz && self.exp_bits == 5
    }

    /// Largest finite magnitude's encoding (without sign).
    fn max_code(self) -> u8 {
        match (self.fnuz, self.exp_bits) {
            (true, _) => 0x7f,
            (false, 4) => 0x7e,
            _ => 0x7b,
        }
    }

    fn nan(self) -> u8 {
        if self.fnuz { 0x80 } else { 0x7f }
    }

    /// Decodes `v` exactly.
    pub fn decode(self, v: u8) -> f32 {
        let sign = if v & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let mag = v & 0x7f;
        if self.fnuz && v == 0x80 {
            return f32::NAN;
        }
        let exp = u32::from(mag) >> self.mant_bits;
        let mant = u32::from(mag) & ((1 << self.mant_bits) - 1);
        let max_exp = (1 << self.exp_bits) - 1;
        if !self.fnuz {
            if self.exp_bits == 5 && exp == max_exp {
                return if mant == 0 {
                    sign * f32::INFINITY
                } else {
                    f32::NAN
                };
            }
            if self.exp_bits == 4 && mag == 0x7f {
                return f32::NAN;
            }
        }
        let m = mant as f32 / (1 << self.mant_bits) as f32;
        if exp == 0 {
            sign * m * 2f32.powi(1 - self.bias)
        } else {
            sign * (1.0 + m) * 2f32.powi(exp as i32 - self.bias)
        }
    }

    /// Encodes `x` rounding to nearest even; out-of-range values saturate to the largest finite value
    /// when `saturate`, else become infinity (E5M2 OCP) or NaN.
    pub fn encode(self, x: f32, saturate: bool) -> u8 {
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        if x.is_nan() {
            return self.nan();
        }
        let max = self.decode(self.max_code());
        let a = f64::from(x.abs());
        if x.is_infinite() && !saturate {
            return if self.has_inf() {
                sign | 0x7c
            } else {
                self.nan()
            };
        }
        // Quantum of the format at |x|: denormals share the smallest normal exponent.
        let e = if a == 0.0 {
            1 - self.bias
        } else {
            (a.log2().floor() as i32).max(1 - self.bias)
        };
        let quantum = 2f64.powi(e - self.mant_bits as i32);
        let q = (a / quantum).round_ties_even() * quantum;
        if q > f64::from(max) {
            let halfway = f64::from(max)
                + 2f64.powi((f64::from(max).log2().floor() as i32) - self.mant_bits as i32) / 2.0;
            if saturate || (a < halfway && !self.has_inf()) {
                return sign | self.max_code();
            }
            return if self.has_inf() {
                sign | 0x7c
            } else {
                self.nan()
            };
        }
        if q == 0.0 {
            return if self.fnuz { 0 } else { sign };
        }
        let e = q.log2().floor() as i32;
        let code = if e < 1 - self.bias {
            (q / 2f64.powi(1 - self.bias - self.mant_bits as i32)) as u8
        } else {
            let exp = (e + self.bias) as u8;
            let mant = ((q / 2f64.powi(e) - 1.0) * f64::from(1u32 << self.mant_bits)).round() as u8;
            exp << self.mant_bits | mant
        };
        sign | code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for fmt in [
            Fp8::e4m3(false),
            Fp8::e4m3(true),
            Fp8::e5m2(false),
            Fp8::e5m2(true),
        ] {
            for v in 0..=255u8 {
                let x = fmt.decode(v);
                if x.is_nan() || (fmt.fnuz && v == 0x80) {
                    continue;
                }
                if x.is_infinite() {
                    assert_eq!(fmt.encode(x, false), v, "{fmt:?} {v:#x}");
                    continue;
                }
                assert_eq!(fmt.encode(x, false), v, "{fmt:?} {v:#x} = {x}");
            }
        }
    }

    #[test]
    fn published_extremes() {
        assert_eq!(Fp8::e4m3(false).decode(0x7e), 448.0);
        assert_eq!(Fp8::e4m3(true).decode(0x7f), 240.0);
        assert_eq!(Fp8::e5m2(false).decode(0x7b), 57344.0);
        assert_eq!(Fp8::e5m2(true).decode(0x7f), 57344.0);
        assert_eq!(Fp8::e4m3(false).decode(0x01), 2f32.powi(-9));
        assert_eq!(Fp8::e4m3(true).decode(0x01), 2f32.powi(-10));
        assert_eq!(Fp8::e4m3(false).encode(1000.0, true), 0x7e);
        assert_eq!(Fp8::e4m3(false).encode(1000.0, false), 0x7f);
        assert_eq!(Fp8::e5m2(false).encode(1e6, false), 0x7c);
        assert_eq!(Fp8::e4m3(false).encode(1.0625, false), 0x38, "ties to even");
        assert_eq!(
            Fp8::e4m3(false).encode(1.1875, false),
            0x3a,
            "ties to even, up"
        );
    }
}
