//! Element formats of the matrix sources: decoding and random finite encodings.

use half::f16;
use rand::Rng;
use rand::rngs::StdRng;

/// Element format of a source matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    F32,
    F64,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    Fp6,
    Bf6,
    Fp4,
}

impl Fmt {
    pub fn bits(self) -> u32 {
        match self {
            Fmt::F64 => 64,
            Fmt::F32 => 32,
            Fmt::F16 | Fmt::Bf16 => 16,
            Fmt::I8 | Fmt::Fp8 | Fmt::Bf8 => 8,
            Fmt::Fp6 | Fmt::Bf6 => 6,
            Fmt::Fp4 => 4,
        }
    }

    /// The `f8f6f4` format code (CBSZ/BLGP value).
    pub fn code(self) -> u32 {
        match self {
            Fmt::Fp8 => 0,
            Fmt::Bf8 => 1,
            Fmt::Fp6 => 2,
            Fmt::Bf6 => 3,
            _ => 4,
        }
    }

    /// The value of encoding `raw`; FP8/BF8 are FNUZ when `fnuz`.
    pub fn decode(self, raw: u64, fnuz: bool) -> f64 {
        match self {
            Fmt::F32 => f64::from(f32::from_bits(raw as u32)),
            Fmt::F64 => f64::from_bits(raw),
            Fmt::F16 => f16::from_bits(raw as u16).to_f64(),
            Fmt::Bf16 => f64::from(f32::from_bits((raw as u32) << 16)),
            Fmt::I8 => f64::from(raw as u8 as i8),
            Fmt::Fp8 => small_float(raw, 4, 3, if fnuz { 8 } else { 7 }, fnuz),
            Fmt::Bf8 => small_float(raw, 5, 2, if fnuz { 16 } else { 15 }, fnuz),
            Fmt::Fp6 => small_float(raw, 2, 3, 1, false),
            Fmt::Bf6 => small_float(raw, 3, 2, 3, false),
            Fmt::Fp4 => small_float(raw, 2, 1, 1, false),
        }
    }

    /// A random finite encoding.
    pub fn random(self, rng: &mut StdRng, fnuz: bool) -> u64 {
        match self {
            Fmt::F32 => u64::from(rng.random_range(-1.0f32..1.0).to_bits()),
            Fmt::F64 => rng.random_range(-1.0f64..1.0).to_bits(),
            Fmt::F16 => u64::from(f16::from_f32(rng.random_range(-2.0f32..2.0)).to_bits()),
            Fmt::Bf16 => u64::from(rng.random_range(-2.0f32..2.0).to_bits() >> 16),
            _ => loop {
                let raw = rng.random_range(0..1u64 << self.bits());
                if self.decode(raw, fnuz).is_finite() {
                    return raw;
                }
            },
        }
    }
}

/// Decodes a sign-exponent-mantissa encoding of `1 + e + m` bits. The 8-bit formats have the OCP
/// specials (E4M3: S.1111.111 is NaN; E5M2: exponent 31 is Inf/NaN) or, `fnuz`, only 0x80 = NaN.
fn small_float(raw: u64, e: u32, m: u32, bias: i32, fnuz: bool) -> f64 {
    let raw = raw as u32;
    let sign = if raw >> (e + m) & 1 == 1 { -1.0 } else { 1.0 };
    let exp = raw >> m & ((1 << e) - 1);
    let mant = raw & ((1 << m) - 1);
    if e + m == 7 {
        if fnuz && raw == 0x80 {
            return f64::NAN;
        }
        if !fnuz && e == 4 && exp == 15 && mant == 7 {
            return f64::NAN;
        }
        if !fnuz && e == 5 && exp == 31 {
            return if mant == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
    }
    let frac = f64::from(mant) / f64::from(1u32 << m);
    if exp == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
    }
}
