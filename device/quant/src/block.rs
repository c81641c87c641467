//! The block-format trait: a run of elements sharing one scale code.

use crate::element::ElementFormat;
use crate::pack::code_at;

/// Largest [`BlockFormat::BLOCK_LEN`] of any format here (MX blocks hold 32 elements).
pub const MAX_BLOCK_LEN: usize = 32;

/// A block-scaled format: `BLOCK_LEN` elements packed in `BLOCK_BYTES` bytes, plus one
/// 8-bit scale code per block and, for some formats, one f32 scale per tensor.
///
/// The value of element `i` is `element(i) * scale(block) [* tensor_scale]`. Kernels decode
/// with [`BlockFormat::decode_element`] or [`BlockFormat::decode_block`]; the host encodes
/// with [`BlockFormat::encode_block`]. Slices shorter than a block make these panic
/// (on the GPU: trap); the host API checks all lengths first.
pub trait BlockFormat: Copy + Default + 'static {
    /// The element format.
    type Element: ElementFormat;
    /// Short name, as used in error messages and benchmarks (e.g. `"mxfp4"`).
    const NAME: &'static str;
    /// Elements per block.
    const BLOCK_LEN: usize;
    /// Packed bytes per block.
    const BLOCK_BYTES: usize = Self::BLOCK_LEN * Self::Element::BITS as usize / 8;
    /// Whether the format has a per-tensor f32 scale (NVFP4); when not, the tensor scale
    /// arguments are ignored.
    const USES_TENSOR_SCALE: bool;

    /// The multiplier a scale code stands for (NaN for a NaN scale code).
    fn scale_to_f32(scale: u8) -> f32;

    /// The per-tensor scale for a tensor whose largest finite magnitude is `amax`
    /// (1.0 for formats without one).
    fn tensor_scale_for_amax(amax: f32) -> f32;

    /// Quantizes one block: writes the packed codes of `values` (`BLOCK_LEN` values) into
    /// `packed` (`BLOCK_BYTES` bytes) and returns the block's scale code.
    fn encode_block(values: &[f32], tensor_scale: f32, packed: &mut [u8]) -> u8;

    /// The value of element `index` of a packed block.
    #[inline]
    fn decode_element(packed: &[u8], scale: u8, tensor_scale: f32, index: usize) -> f32 {
        let code = code_at(packed, Self::Element::BITS, index);
        Self::apply_scale(Self::Element::decode_to_f32(code), scale, tensor_scale)
    }

    /// Decodes one packed block into `out` (`BLOCK_LEN` values). Element by element, so
    /// that kernels keep everything in registers (no stack buffer).
    #[inline]
    fn decode_block(packed: &[u8], scale: u8, tensor_scale: f32, out: &mut [f32]) {
        for (index, value) in out.iter_mut().enumerate().take(Self::BLOCK_LEN) {
            *value = Self::decode_element(packed, scale, tensor_scale, index);
        }
    }

    /// `element * scale [* tensor_scale]`, in that order of f32 operations.
    #[inline]
    fn apply_scale(element: f32, scale: u8, tensor_scale: f32) -> f32 {
        let scaled = element * Self::scale_to_f32(scale);
        if Self::USES_TENSOR_SCALE {
            scaled * tensor_scale
        } else {
            scaled
        }
    }
}

/// Largest magnitude of `values` as f32 bits without sign. Any NaN or infinity makes it
/// at least `0x7F80_0000`, since their bit patterns order above every finite one.
#[inline]
pub(crate) fn max_magnitude_bits(values: &[f32]) -> u32 {
    values.iter().fold(0, |max, v| {
        let bits = v.to_bits() & 0x7FFF_FFFF;
        if bits > max { bits } else { max }
    })
}
