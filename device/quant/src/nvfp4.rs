//! NVFP4: E2M1 elements in blocks of 16 sharing one E4M3 scale, plus one f32 scale per
//! tensor.
//!
//! The value of element `i` of block `b` is `(e2m1(i) * e4m3(scale_b)) * tensor_scale`.
//! Quantization, as implemented here:
//! - `tensor_scale = amax_tensor / (448 * 6)` over the finite values (1.0 when that is
//!   zero, subnormal or not finite), so the largest block scale lands near E4M3's 448;
//! - per block, `scale_b = e4m3_saturating(amax_block / (6 * tensor_scale))` (round to
//!   nearest even);
//! - each element is `e2m1_saturating(x / (e4m3(scale_b) * tensor_scale))`; a block whose
//!   scale rounds to zero stores zero codes.
//!
//! A block containing NaN or ±Inf stores the E4M3 NaN scale (0x7F) and zero codes, so it
//! decodes to NaN. Packing is that of MXFP4: 8 bytes per block, element `2i` in the low
//! nibble. No gfx target has NVFP4 hardware; kernels decode it in software.

use crate::block::{BlockFormat, max_magnitude_bits};
use crate::element::ElementFormat;
use crate::pack::pack_codes;
use crate::{E2M1, E4M3Fn};

/// Elements per NVFP4 block.
pub const NVFP4_BLOCK_LEN: usize = 16;

/// The E4M3 NaN code used as the scale of a non-finite block.
const NAN_SCALE: u8 = 0x7F;

/// The NVFP4 block format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nvfp4;

impl BlockFormat for Nvfp4 {
    type Element = E2M1;
    const NAME: &'static str = "nvfp4";
    const BLOCK_LEN: usize = NVFP4_BLOCK_LEN;
    const USES_TENSOR_SCALE: bool = true;

    #[inline]
    fn scale_to_f32(scale: u8) -> f32 {
        E4M3Fn::decode_to_f32(scale)
    }

    #[inline]
    fn tensor_scale_for_amax(amax: f32) -> f32 {
        let scale = amax / (E4M3Fn::MAX * E2M1::MAX);
        if (f32::MIN_POSITIVE..f32::INFINITY).contains(&scale) {
            scale
        } else {
            1.0
        }
    }

    #[inline]
    fn encode_block(values: &[f32], tensor_scale: f32, packed: &mut [u8]) -> u8 {
        let amax_bits = max_magnitude_bits(values);
        let mut codes = [0u8; NVFP4_BLOCK_LEN];
        let scale = if amax_bits >= 0x7F80_0000 {
            NAN_SCALE
        } else {
            let amax = f32::from_bits(amax_bits);
            let scale = E4M3Fn::encode_from_f32_saturating(amax / (E2M1::MAX * tensor_scale));
            let divisor = E4M3Fn::decode_to_f32(scale) * tensor_scale;
            if divisor > 0.0 {
                for (code, &x) in codes.iter_mut().zip(values) {
                    *code = E2M1::encode_from_f32_saturating(x / divisor);
                }
            }
            scale
        };
        pack_codes(
            E2M1::BITS,
            &codes[..values.len().min(NVFP4_BLOCK_LEN)],
            packed,
        );
        scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_round_trips_representable_values() {
        let values: [f32; 16] = core::array::from_fn(|i| [0.5, -1.0, 3.0, 6.0][i % 4]);
        let mut packed = [0u8; 8];
        let scale = Nvfp4::encode_block(&values, 1.0, &mut packed);
        assert_eq!(Nvfp4::scale_to_f32(scale), 1.0);
        let mut out = [0.0f32; 16];
        Nvfp4::decode_block(&packed, scale, 1.0, &mut out);
        assert_eq!(out, values);
    }

    #[test]
    fn tensor_scale_maps_amax_to_the_top_of_the_range() {
        assert_eq!(Nvfp4::tensor_scale_for_amax(2688.0), 1.0);
        assert_eq!(Nvfp4::tensor_scale_for_amax(0.0), 1.0);
        assert_eq!(Nvfp4::tensor_scale_for_amax(5376.0), 2.0);
    }
}
