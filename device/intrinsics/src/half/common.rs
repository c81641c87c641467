//! What the device's f16 and bf16 share: the predicates read the bit pattern, arithmetic and
//! comparisons go through f32, and every operator has the forms `half` gives (by value, by
//! reference, compound assignment), so that a kernel written against `half` on the host
//! compiles unchanged for the GPU.
//!
//! Arithmetic is one f32 operation on the exact f32 values followed by one rounding (to nearest,
//! ties to even). That is the correctly rounded result: f32's 24-bit significand has at least
//! `2p + 2` bits for both formats (p = 11 for f16, 8 for bf16), the condition under which
//! rounding twice (to f32, then to the narrow format) equals rounding once for `+ - * /`
//! (S. A. Figueroa, "When is double rounding innocuous?", 1995). It is also what `half` computes
//! on the host, so device and host agree bit for bit (NaN payloads aside).

/// The bit-level queries, the f32-based operators and comparisons, `From` and `Debug` of a
/// 16-bit float newtype `$t` over `u16` with a `from_f32`/`to_f32` pair, whose exponent field
/// is `$exp` and fraction field `$frac` (masks of the bit pattern).
macro_rules! float16_common {
    ($t:ident, exponent = $exp:literal, fraction = $frac:literal) => {
        impl $t {
            /// Whether this is a NaN (any payload, either sign).
            #[inline(always)]
            #[must_use]
            pub const fn is_nan(self) -> bool {
                self.0 & 0x7FFF > $exp
            }

            /// Whether this is +∞ or −∞.
            #[inline(always)]
            #[must_use]
            pub const fn is_infinite(self) -> bool {
                self.0 & 0x7FFF == $exp
            }

            /// Whether this is neither infinite nor NaN.
            #[inline(always)]
            #[must_use]
            pub const fn is_finite(self) -> bool {
                self.0 & $exp != $exp
            }

            /// Whether this is neither zero, subnormal, infinite nor NaN.
            #[inline(always)]
            #[must_use]
            pub const fn is_normal(self) -> bool {
                let exponent = self.0 & $exp;
                exponent != $exp && exponent != 0
            }

            /// The category of the value (zero, subnormal, normal, infinite, NaN).
            #[inline(always)]
            #[must_use]
            pub const fn classify(self) -> core::num::FpCategory {
                use core::num::FpCategory;
                match (self.0 & $exp, self.0 & $frac) {
                    (0, 0) => FpCategory::Zero,
                    (0, _) => FpCategory::Subnormal,
                    ($exp, 0) => FpCategory::Infinite,
                    ($exp, _) => FpCategory::Nan,
                    _ => FpCategory::Normal,
                }
            }

            /// Whether the sign bit is clear (+0, positive values, +∞, NaNs with a clear sign).
            #[inline(always)]
            #[must_use]
            pub const fn is_sign_positive(self) -> bool {
                self.0 & 0x8000 == 0
            }

            /// Whether the sign bit is set (−0, negative values, −∞, NaNs with the sign set).
            #[inline(always)]
            #[must_use]
            pub const fn is_sign_negative(self) -> bool {
                self.0 & 0x8000 != 0
            }

            /// 1 for a positive sign (+0 and +∞ included), −1 for a negative one, NaN for NaN.
            #[inline(always)]
            #[must_use]
            pub const fn signum(self) -> $t {
                if self.is_nan() {
                    self
                } else if self.is_sign_negative() {
                    Self::NEG_ONE
                } else {
                    Self::ONE
                }
            }

            /// The magnitude of `self` with the sign of `sign` (a NaN too). With
            /// `sign = ZERO` this is the absolute value, which `half` spells this way.
            #[inline(always)]
            #[must_use]
            pub const fn copysign(self, sign: $t) -> $t {
                Self((sign.0 & 0x8000) | (self.0 & 0x7FFF))
            }

            /// The larger of the two; if one is NaN, the other (as `half` and IEEE 754's
            /// `maxNum`). Of two zeros, `self`.
            #[inline(always)]
            #[must_use]
            pub fn max(self, other: $t) -> $t {
                if self.is_nan() || other > self { other } else { self }
            }

            /// The smaller of the two; if one is NaN, the other (as `half` and IEEE 754's
            /// `minNum`). Of two zeros, `self`.
            #[inline(always)]
            #[must_use]
            pub fn min(self, other: $t) -> $t {
                if self.is_nan() || other < self { other } else { self }
            }

            /// IEEE 754 `totalOrder`: −NaN < −∞ < ... < −0 < +0 < ... < +∞ < +NaN, on the bit
            /// patterns (a total order, unlike `partial_cmp`).
            #[inline(always)]
            #[must_use]
            pub fn total_cmp(&self, other: &Self) -> core::cmp::Ordering {
                // Sign-magnitude to two's complement order: a negative pattern's magnitude bits
                // are flipped, so larger magnitudes sort lower.
                let key = |bits: u16| {
                    let signed = bits as i16;
                    signed ^ (((signed >> 15) as u16) >> 1) as i16
                };
                key(self.0).cmp(&key(other.0))
            }
        }

        impl From<$t> for f32 {
            /// The exact f32 value.
            #[inline(always)]
            fn from(x: $t) -> f32 {
                x.to_f32()
            }
        }

        impl From<$t> for f64 {
            /// The exact f64 value.
            #[inline(always)]
            fn from(x: $t) -> f64 {
                f64::from(x.to_f32())
            }
        }

        impl From<i8> for $t {
            /// The value of `x` (exact: both formats hold every 8-bit integer).
            #[inline(always)]
            fn from(x: i8) -> $t {
                $t::from_f32(f32::from(x))
            }
        }

        impl From<u8> for $t {
            /// The value of `x` (exact: both formats hold every 8-bit integer).
            #[inline(always)]
            fn from(x: u8) -> $t {
                $t::from_f32(f32::from(x))
            }
        }

        impl PartialEq for $t {
            /// IEEE equality: NaN equals nothing, +0 equals −0.
            #[inline(always)]
            fn eq(&self, other: &$t) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $t {
            /// IEEE order: `None` when either is NaN, +0 and −0 equal.
            #[inline(always)]
            fn partial_cmp(&self, other: &$t) -> Option<core::cmp::Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
            #[inline(always)]
            fn lt(&self, other: &$t) -> bool {
                self.to_f32() < other.to_f32()
            }
            #[inline(always)]
            fn le(&self, other: &$t) -> bool {
                self.to_f32() <= other.to_f32()
            }
            #[inline(always)]
            fn gt(&self, other: &$t) -> bool {
                self.to_f32() > other.to_f32()
            }
            #[inline(always)]
            fn ge(&self, other: &$t) -> bool {
                self.to_f32() >= other.to_f32()
            }
        }

        impl core::ops::Neg for $t {
            type Output = $t;
            /// The sign bit flipped (NaNs too), as IEEE 754's `negate`.
            #[inline(always)]
            fn neg(self) -> $t {
                Self(self.0 ^ 0x8000)
            }
        }

        impl core::ops::Neg for &$t {
            type Output = $t;
            #[inline(always)]
            fn neg(self) -> $t {
                -*self
            }
        }

        impl core::fmt::Debug for $t {
            /// As the f32 value (what `half` prints).
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        float16_common!(@op $t, Add, add, AddAssign, add_assign, +);
        float16_common!(@op $t, Sub, sub, SubAssign, sub_assign, -);
        float16_common!(@op $t, Mul, mul, MulAssign, mul_assign, *);
        float16_common!(@op $t, Div, div, DivAssign, div_assign, /);
    };
    (@op $t:ident, $trait:ident, $method:ident, $assign:ident, $assign_method:ident, $op:tt) => {
        impl core::ops::$trait for $t {
            type Output = $t;
            /// One f32 operation, rounded once (correctly rounded: see the module).
            #[inline(always)]
            fn $method(self, rhs: $t) -> $t {
                $t::from_f32(self.to_f32() $op rhs.to_f32())
            }
        }

        impl core::ops::$trait<&$t> for $t {
            type Output = $t;
            #[inline(always)]
            fn $method(self, rhs: &$t) -> $t {
                self $op *rhs
            }
        }

        impl core::ops::$trait<$t> for &$t {
            type Output = $t;
            #[inline(always)]
            fn $method(self, rhs: $t) -> $t {
                *self $op rhs
            }
        }

        impl core::ops::$trait<&$t> for &$t {
            type Output = $t;
            #[inline(always)]
            fn $method(self, rhs: &$t) -> $t {
                *self $op *rhs
            }
        }

        impl core::ops::$assign for $t {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: $t) {
                *self = *self $op rhs;
            }
        }

        impl core::ops::$assign<&$t> for $t {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: &$t) {
                *self = *self $op *rhs;
            }
        }
    };
}

/// Associated constants `$name` of the 16-bit float `$t`, each a bit pattern.
macro_rules! float16_constants {
    ($t:ident { $($(#[doc = $doc:literal])* $name:ident = $bits:literal;)* }) => {
        impl $t {
            $(
                $(#[doc = $doc])*
                pub const $name: $t = $t($bits);
            )*
        }
    };
}

/// The mathematical constants of `half` for `$t`: each the real number rounded to nearest
/// (ties to even), given as bit patterns in the order E, π, 1/π, 1/√2, 2/π, 2/√π, π/2, π/3,
/// π/4, π/6, π/8, ln 10, ln 2, log10 e, log10 2, log2 e, log2 10, √2.
macro_rules! float16_math_constants {
    ($t:ident, [$e:literal, $pi:literal, $frac_1_pi:literal, $frac_1_sqrt_2:literal,
        $frac_2_pi:literal, $frac_2_sqrt_pi:literal, $frac_pi_2:literal, $frac_pi_3:literal,
        $frac_pi_4:literal, $frac_pi_6:literal, $frac_pi_8:literal, $ln_10:literal,
        $ln_2:literal, $log10_e:literal, $log10_2:literal, $log2_e:literal, $log2_10:literal,
        $sqrt_2:literal]) => {
        float16_constants!($t {
            /// Euler's number e, rounded.
            E = $e;
            /// π, rounded.
            PI = $pi;
            /// 1/π, rounded.
            FRAC_1_PI = $frac_1_pi;
            /// 1/√2, rounded.
            FRAC_1_SQRT_2 = $frac_1_sqrt_2;
            /// 2/π, rounded.
            FRAC_2_PI = $frac_2_pi;
            /// 2/√π, rounded.
            FRAC_2_SQRT_PI = $frac_2_sqrt_pi;
            /// π/2, rounded.
            FRAC_PI_2 = $frac_pi_2;
            /// π/3, rounded.
            FRAC_PI_3 = $frac_pi_3;
            /// π/4, rounded.
            FRAC_PI_4 = $frac_pi_4;
            /// π/6, rounded.
            FRAC_PI_6 = $frac_pi_6;
            /// π/8, rounded.
            FRAC_PI_8 = $frac_pi_8;
            /// ln 10, rounded.
            LN_10 = $ln_10;
            /// ln 2, rounded.
            LN_2 = $ln_2;
            /// log10 e, rounded.
            LOG10_E = $log10_e;
            /// log10 2, rounded.
            LOG10_2 = $log10_2;
            /// log2 e, rounded.
            LOG2_E = $log2_e;
            /// log2 10, rounded.
            LOG2_10 = $log2_10;
            /// √2, rounded.
            SQRT_2 = $sqrt_2;
        });
    };
}
