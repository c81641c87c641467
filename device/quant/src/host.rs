//! Host tensor API (feature `alloc`): quantize row-major tensors into packed elements and
//! scales, and back.
//!
//! A tensor of shape `[rows, cols]` is quantized in blocks of `BLOCK_LEN` consecutive
//! elements of a row, so `cols` must be a multiple of the block length. The result holds
//! - `elements`: row after row, each row `cols * BITS / 8` packed bytes ([`crate::pack`]);
//! - `scales`: one code per block, shape `[rows, cols / BLOCK_LEN]`, row-major;
//! - `tensor_scale`: the per-tensor f32 scale (NVFP4; 1.0 for MX formats).
//!
//! For a matrix-core operand, quantize A as `[M, K]` and B as its transpose `[N, K]`: each
//! MX block is then a contiguous 16/24/32-byte run of 32 K-consecutive elements with its
//! scale byte beside it in `scales`. Which runs one lane of gfx950's scaled MFMA loads
//! depends on the instruction shape and element type (AMD's published CDNA4 examples load
//! one whole 32-element FP4 block per lane for 32x32x64, but two 16-element FP8 runs per
//! lane for the same shape); the kernel's loader chooses, the storage layout does not.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use crate::block::{BlockFormat, MAX_BLOCK_LEN};
use crate::element::ElementFormat;
use crate::half_float::ToF32;
use crate::pack::{pack_codes, packed_len, unpack_codes};

/// Why a tensor could not be quantized or dequantized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantError {
    /// The data length is not `rows * cols`.
    ShapeMismatch {
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
        /// Number of values given.
        len: usize,
    },
    /// `rows * cols` does not fit in `usize`.
    ShapeOverflow {
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
    },
    /// The row length is not a whole number of blocks.
    ColsNotMultipleOfBlock {
        /// The block format's name.
        format: &'static str,
        /// Columns asked for.
        cols: usize,
        /// The format's block length.
        block: usize,
    },
    /// A buffer does not have the length the shape and format require.
    BufferLength {
        /// Which buffer ("elements", "scales", "output", "packed").
        buffer: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
}

impl fmt::Display for QuantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ShapeMismatch { rows, cols, len } => {
                write!(
                    f,
                    "tensor of {len} values does not have shape [{rows}, {cols}]"
                )
            }
            Self::ShapeOverflow { rows, cols } => {
                write!(
                    f,
                    "shape [{rows}, {cols}] has more elements than fit in memory"
                )
            }
            Self::ColsNotMultipleOfBlock {
                format,
                cols,
                block,
            } => write!(
                f,
                "{format} needs the row length to be a multiple of {block}, got {cols} columns"
            ),
            Self::BufferLength {
                buffer,
                expected,
                actual,
            } => {
                write!(
                    f,
                    "{buffer} buffer has {actual} entries, the shape needs {expected}"
                )
            }
        }
    }
}

impl core::error::Error for QuantError {}

/// A row-major `[rows, cols]` tensor in block format `B`.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedTensor<B: BlockFormat> {
    rows: usize,
    cols: usize,
    elements: Vec<u8>,
    scales: Vec<u8>,
    tensor_scale: f32,
    format: PhantomData<B>,
}

/// Checks a `[rows, cols]` shape against format `B` and returns `rows * cols`.
fn checked_shape<B: BlockFormat>(rows: usize, cols: usize) -> Result<usize, QuantError> {
    let count = rows
        .checked_mul(cols)
        .ok_or(QuantError::ShapeOverflow { rows, cols })?;
    if !cols.is_multiple_of(B::BLOCK_LEN) {
        return Err(QuantError::ColsNotMultipleOfBlock {
            format: B::NAME,
            cols,
            block: B::BLOCK_LEN,
        });
    }
    Ok(count)
}

/// Returns `Ok` when `actual == expected`, else a [`QuantError::BufferLength`].
fn check_len(buffer: &'static str, expected: usize, actual: usize) -> Result<(), QuantError> {
    if expected == actual {
        Ok(())
    } else {
        Err(QuantError::BufferLength {
            buffer,
            expected,
            actual,
        })
    }
}

/// Largest finite magnitude of `input` (0 when there is none).
fn finite_amax<T: ToF32>(input: &[T]) -> f32 {
    input.iter().fold(0.0f32, |max, v| {
        let magnitude = f32::from_bits(v.to_f32_value().to_bits() & 0x7FFF_FFFF);
        if magnitude > max && magnitude < f32::INFINITY {
            magnitude
        } else {
            max
        }
    })
}

impl<B: BlockFormat> QuantizedTensor<B> {
    /// Quantizes a row-major `[rows, cols]` tensor of f32, f16 or bf16 values.
    ///
    /// Errors if `input.len() != rows * cols` or `cols` is not a multiple of the block.
    pub fn quantize<T: ToF32>(input: &[T], rows: usize, cols: usize) -> Result<Self, QuantError> {
        let count = checked_shape::<B>(rows, cols)?;
        if input.len() != count {
            return Err(QuantError::ShapeMismatch {
                rows,
                cols,
                len: input.len(),
            });
        }
        let tensor_scale = if B::USES_TENSOR_SCALE {
            B::tensor_scale_for_amax(finite_amax(input))
        } else {
            1.0
        };
        let blocks = count / B::BLOCK_LEN;
        let mut elements = vec![0u8; blocks * B::BLOCK_BYTES];
        let mut scales = vec![0u8; blocks];
        let mut values = [0.0f32; MAX_BLOCK_LEN];
        let values = &mut values[..B::BLOCK_LEN];
        let chunks = input
            .chunks_exact(B::BLOCK_LEN)
            .zip(elements.chunks_exact_mut(B::BLOCK_BYTES));
        for ((block, packed), scale) in chunks.zip(scales.iter_mut()) {
            for (value, &x) in values.iter_mut().zip(block) {
                *value = x.to_f32_value();
            }
            *scale = B::encode_block(values, tensor_scale, packed);
        }
        Ok(Self {
            rows,
            cols,
            elements,
            scales,
            tensor_scale,
            format: PhantomData,
        })
    }

    /// Rebuilds a tensor from its parts (e.g. read back from a device), checking that the
    /// buffer lengths match the shape.
    pub fn from_parts(
        rows: usize,
        cols: usize,
        elements: Vec<u8>,
        scales: Vec<u8>,
        tensor_scale: f32,
    ) -> Result<Self, QuantError> {
        let blocks = checked_shape::<B>(rows, cols)? / B::BLOCK_LEN;
        check_len("elements", blocks * B::BLOCK_BYTES, elements.len())?;
        check_len("scales", blocks, scales.len())?;
        Ok(Self {
            rows,
            cols,
            elements,
            scales,
            tensor_scale,
            format: PhantomData,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns (elements per row).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The packed element codes, row after row.
    pub fn elements(&self) -> &[u8] {
        &self.elements
    }

    /// The scale codes, `[rows, cols / BLOCK_LEN]` row-major.
    pub fn scales(&self) -> &[u8] {
        &self.scales
    }

    /// The per-tensor scale (1.0 for formats without one).
    pub fn tensor_scale(&self) -> f32 {
        self.tensor_scale
    }

    /// The buffers `(elements, scales)`, consuming the tensor.
    pub fn into_parts(self) -> (Vec<u8>, Vec<u8>) {
        (self.elements, self.scales)
    }

    /// Dequantizes into `out` (`rows * cols` values, row-major).
    pub fn dequantize_into(&self, out: &mut [f32]) -> Result<(), QuantError> {
        check_len("output", self.rows * self.cols, out.len())?;
        let blocks = out
            .chunks_exact_mut(B::BLOCK_LEN)
            .zip(self.elements.chunks_exact(B::BLOCK_BYTES))
            .zip(&self.scales);
        // The host unpacks a block's codes at once (cheaper than `B::decode_block`'s
        // per-element extraction) and decodes them with the same element and scale code.
        let mut codes = [0u8; MAX_BLOCK_LEN];
        let codes = &mut codes[..B::BLOCK_LEN];
        for ((values, packed), &scale) in blocks {
            unpack_codes(B::Element::BITS, packed, codes);
            for (value, &code) in values.iter_mut().zip(codes.iter()) {
                *value = B::apply_scale(B::Element::decode_to_f32(code), scale, self.tensor_scale);
            }
        }
        Ok(())
    }

    /// Dequantizes to a new row-major f32 tensor.
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.rows * self.cols];
        // The output has the tensor's own shape, so the length check cannot fail.
        let _ = self.dequantize_into(&mut out);
        out
    }
}

/// Encodes each value of `input` in element format `E` (no scale) and packs the codes.
/// `saturating` selects [`ElementFormat::encode_from_f32_saturating`] over
/// [`ElementFormat::encode_from_f32`].
pub fn encode_elements<E: ElementFormat, T: ToF32>(input: &[T], saturating: bool) -> Vec<u8> {
    let codes: Vec<u8> = input
        .iter()
        .map(|x| {
            let x = x.to_f32_value();
            if saturating {
                E::encode_from_f32_saturating(x)
            } else {
                E::encode_from_f32(x)
            }
        })
        .collect();
    let mut packed = vec![0u8; packed_len(E::BITS, codes.len())];
    pack_codes(E::BITS, &codes, &mut packed);
    packed
}

/// Decodes `count` packed codes of element format `E` (no scale).
///
/// Errors if `packed` does not hold exactly `count` codes.
pub fn decode_elements<E: ElementFormat>(
    packed: &[u8],
    count: usize,
) -> Result<Vec<f32>, QuantError> {
    check_len("packed", packed_len(E::BITS, count), packed.len())?;
    let mut codes = vec![0u8; count];
    unpack_codes(E::BITS, packed, &mut codes);
    Ok(codes.into_iter().map(E::decode_to_f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{E2M1, MxFp4, Nvfp4};
    use alloc::string::ToString;

    #[test]
    fn shape_errors_are_values_with_clear_messages() {
        let data = [0.0f32; 40];
        let err = QuantizedTensor::<MxFp4>::quantize(&data, 2, 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "mxfp4 needs the row length to be a multiple of 32, got 20 columns"
        );
        let err = QuantizedTensor::<MxFp4>::quantize(&data, 1, 32).unwrap_err();
        assert_eq!(
            err,
            QuantError::ShapeMismatch {
                rows: 1,
                cols: 32,
                len: 40
            }
        );
        let err = QuantizedTensor::<Nvfp4>::quantize(&data, usize::MAX, 32).unwrap_err();
        assert_eq!(
            err,
            QuantError::ShapeOverflow {
                rows: usize::MAX,
                cols: 32
            }
        );
        let err = decode_elements::<E2M1>(&[0u8; 3], 8).unwrap_err();
        assert_eq!(
            err.to_string(),
            "packed buffer has 3 entries, the shape needs 4"
        );
    }

    #[test]
    fn from_parts_checks_lengths() {
        let err =
            QuantizedTensor::<MxFp4>::from_parts(1, 64, alloc::vec![0; 32], alloc::vec![0; 1], 1.0)
                .unwrap_err();
        assert_eq!(
            err,
            QuantError::BufferLength {
                buffer: "scales",
                expected: 2,
                actual: 1
            }
        );
    }

    #[test]
    fn empty_tensor_is_fine() {
        let t = QuantizedTensor::<MxFp4>::quantize::<f32>(&[], 0, 64).unwrap();
        assert!(t.elements().is_empty() && t.scales().is_empty());
        assert!(t.dequantize().is_empty());
    }
}
