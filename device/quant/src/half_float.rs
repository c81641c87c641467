//! f16 and bf16, through the `half` crate: the 16-bit formats used for activations and
//! as input to the block codecs.
//!
//! `half`'s conversions from f32 round to nearest, ties to even, and keep NaN and
//! infinities; its conversions to f32 are exact. Both are integer code without float
//! library calls, so they run in kernels too.

pub use half::{bf16, f16};

/// A scalar the codecs can read as f32: f32 itself, f16 and bf16.
pub trait ToF32: Copy {
    /// The value as f32 (exact for all three types).
    fn to_f32_value(self) -> f32;
}

impl ToF32 for f32 {
    #[inline]
    fn to_f32_value(self) -> f32 {
        self
    }
}

impl ToF32 for f16 {
    #[inline]
    fn to_f32_value(self) -> f32 {
        self.to_f32()
    }
}

impl ToF32 for bf16 {
    #[inline]
    fn to_f32_value(self) -> f32 {
        self.to_f32()
    }
}

/// The f16 bit pattern nearest to `x` (ties to even; overflow gives infinity).
#[inline]
pub fn f16_bits_from_f32(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// The f32 value of an f16 bit pattern.
#[inline]
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    f16::from_bits(bits).to_f32()
}

/// The bf16 bit pattern nearest to `x` (ties to even; overflow gives infinity).
#[inline]
pub fn bf16_bits_from_f32(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

/// The f32 value of a bf16 bit pattern.
#[inline]
pub fn bf16_bits_to_f32(bits: u16) -> f32 {
    bf16::from_bits(bits).to_f32()
}
