//! The OCP microscaling element formats without infinities or NaNs (FP6 E2M3, BF6 E3M2, FP4 E2M1)
//! and the E8M0 scale format, as gfx950's matrix and conversion instructions read them.

/// A sign-magnitude float format with no infinity and no NaN encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Minifloat {
    exp_bits: u32,
    mant_bits: u32,
    bias: i32,
}

impl Minifloat {
    /// FP6 E2M3 (largest magnitude 7.5).
    pub const FP6: Minifloat = Minifloat {
        exp_bits: 2,
        mant_bits: 3,
        bias: 1,
    };
    /// BF6 E3M2 (largest magnitude 28).
    pub const BF6: Minifloat = Minifloat {
        exp_bits: 3,
        mant_bits: 2,
        bias: 3,
    };
    /// FP4 E2M1 (largest magnitude 6).
    pub const FP4: Minifloat = Minifloat {
        exp_bits: 2,
        mant_bits: 1,
        bias: 1,
    };

    /// The value of encoding `v` (its low `1 + exponent + mantissa` bits), exactly.
    pub fn decode(self, v: u32) -> f32 {
        let mag_bits = self.exp_bits + self.mant_bits;
        let sign = if v >> mag_bits & 1 == 1 { -1.0 } else { 1.0 };
        let exp = (v >> self.mant_bits) & ((1 << self.exp_bits) - 1);
        let mant = v & ((1 << self.mant_bits) - 1);
        let frac = mant as f32 / (1u32 << self.mant_bits) as f32;
        let magnitude = if exp == 0 {
            frac * 2f32.powi(1 - self.bias)
        } else {
            (1.0 + frac) * 2f32.powi(exp as i32 - self.bias)
        };
        sign * magnitude
    }

    /// The encoding nearest to `x` (ties to an even mantissa). Magnitudes beyond the largest
    /// finite value, infinities and NaN saturate to the largest magnitude with `x`'s sign (the
    /// formats have no infinity or NaN encodings).
    pub fn encode(self, x: f64) -> u32 {
        let mag_bits = self.exp_bits + self.mant_bits;
        let sign = u32::from(x.is_sign_negative()) << mag_bits;
        let a = x.abs();
        let largest = (1u32 << mag_bits) - 1;
        if a.is_nan() || a >= f64::from(self.decode(largest)) {
            return sign | largest;
        }
        // Magnitudes grow with the code: find the last code not above `a`, then round.
        let below = (0..=largest)
            .rev()
            .find(|&c| f64::from(self.decode(c)) <= a)
            .unwrap_or(0);
        let (lo, hi) = (
            f64::from(self.decode(below)),
            f64::from(self.decode(below + 1)),
        );
        let up = a - lo > hi - a || (a - lo == hi - a && below & 1 == 1);
        sign | if up { below + 1 } else { below }
    }
}

/// The factor an E8M0 scale encodes: 2^(v - 127), NaN for 0xFF.
pub(crate) fn e8m0(v: u8) -> f64 {
    if v == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(v) - 127)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for fmt in [Minifloat::FP6, Minifloat::BF6, Minifloat::FP4] {
            let codes = 1u32 << (1 + fmt.exp_bits + fmt.mant_bits);
            for c in 0..codes {
                let x = f64::from(fmt.decode(c));
                assert_eq!(fmt.encode(x), c, "{fmt:?} {c:#x} = {x}");
            }
        }
    }

    #[test]
    fn published_extremes() {
        // Sign, exponent and mantissa fields: 0|11|111, 1|00|001, 0|111|11, 0|000|01.
        assert_eq!(Minifloat::FP6.decode(0b011111), 7.5);
        assert_eq!(Minifloat::FP6.decode(0b100001), -0.125);
        assert_eq!(Minifloat::BF6.decode(0b011111), 28.0);
        assert_eq!(Minifloat::BF6.decode(0b000001), 0.0625);
        assert_eq!(Minifloat::FP4.decode(0b0111), 6.0);
        assert_eq!(Minifloat::FP4.decode(0b0001), 0.5);
        assert_eq!(Minifloat::FP4.decode(0b1010), -1.0);
        assert_eq!(Minifloat::FP4.decode(0b1000), 0.0);
        assert_eq!(
            Minifloat::FP4.encode(5.0),
            0b0110,
            "5 ties to 4, the even code"
        );
        assert_eq!(Minifloat::FP4.encode(5.1), 0b0111);
        assert_eq!(Minifloat::FP4.encode(-100.0), 0b1111);
        assert_eq!(Minifloat::FP4.encode(0.25), 0b0000, "ties to zero");
        assert_eq!(Minifloat::FP4.encode(f64::NAN), 0b0111);
        assert_eq!(e8m0(127), 1.0);
        assert_eq!(e8m0(0), 2f64.powi(-127));
        assert!(e8m0(255).is_nan());
    }
}
