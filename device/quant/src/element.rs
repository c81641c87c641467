//! The element-format trait: what a kernel needs to know about a format of at most 8 bits.

/// A number format of at most 8 bits whose codes are held in the low bits of a `u8`.
///
/// Kernels are generic over it: `F::decode_to_f32(code)` is branch-light integer code with
/// no float library calls. Encoding rounds to nearest, ties to even.
pub trait ElementFormat: Copy + Default + 'static {
    /// Short name, as used in error messages and benchmarks (e.g. `"fp8_e4m3fn"`).
    const NAME: &'static str;
    /// Width of a code in bits (4, 6 or 8).
    const BITS: u32;
    /// Largest finite value.
    const MAX: f32;
    /// Exponent of the largest power of two not above [`Self::MAX`]; the OCP MX
    /// specification calls it `emax_elem` and derives block scales from it.
    const EMAX: i32;

    /// The value of `code` (only the low [`Self::BITS`] bits are read).
    fn decode_to_f32(code: u8) -> f32;

    /// The code nearest to `x` (ties to even). Overflow follows the format: infinity
    /// where the format has one, else NaN where it has one, else `±MAX`.
    fn encode_from_f32(x: f32) -> u8;

    /// The code nearest to `x` (ties to even), with finite overflow and infinities
    /// clamped to `±MAX`. NaN still becomes the format's NaN (+0 when it has none).
    fn encode_from_f32_saturating(x: f32) -> u8;
}

/// Declares a unit type implementing [`ElementFormat`] over a [`crate::minifloat::Layout`].
macro_rules! minifloat_format {
    ($(#[$doc:meta])* $name:ident, $label:literal, $layout:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;

        impl $name {
            const LAYOUT: $crate::minifloat::Layout = $layout;
        }

        impl $crate::element::ElementFormat for $name {
            const NAME: &'static str = $label;
            const BITS: u32 = Self::LAYOUT.bits;
            const MAX: f32 = Self::LAYOUT.max_value();
            const EMAX: i32 = Self::LAYOUT.max_exp();

            #[inline]
            fn decode_to_f32(code: u8) -> f32 {
                $crate::minifloat::decode(&Self::LAYOUT, code)
            }

            #[inline]
            fn encode_from_f32(x: f32) -> u8 {
                $crate::minifloat::encode(&Self::LAYOUT, x, false)
            }

            #[inline]
            fn encode_from_f32_saturating(x: f32) -> u8 {
                $crate::minifloat::encode(&Self::LAYOUT, x, true)
            }
        }
    };
}

pub(crate) use minifloat_format;
