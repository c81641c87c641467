//! References for the dequantization kernels (`dequant_<block format>_<f32|f16|bf16>` and
//! `dequant_fp8_<format>_<f32|f16|bf16>`), and the decoded weights of the quantized GEMV:
//! every code's value from the formats' definitions (sign, exponent, mantissa; `2^(c - 127)` for
//! E8M0; `c / 64` for INT8), unpacked from the little-endian bit stream bit by bit, in f64.

use super::expected::{Expected, F32_ROUNDOFF, f32_underflow};
use super::format::{Format, pow2};

/// The block-scaled formats of `iron_quant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockFormat {
    /// E2M1 elements, blocks of 32, E8M0 scales.
    MxFp4,
    /// FP6 E2M3 elements, blocks of 32, E8M0 scales.
    MxFp6E2M3,
    /// FP6 E3M2 elements, blocks of 32, E8M0 scales.
    MxFp6E3M2,
    /// FP8 E4M3 (OCP) elements, blocks of 32, E8M0 scales.
    MxFp8E4M3,
    /// FP8 E5M2 (OCP) elements, blocks of 32, E8M0 scales.
    MxFp8E5M2,
    /// INT8 elements (`c / 64`), blocks of 32, E8M0 scales.
    MxInt8,
    /// E2M1 elements, blocks of 16, E4M3 scales, an f32 tensor scale.
    Nvfp4,
}

impl BlockFormat {
    /// Every block format, for tests that sweep them.
    pub const ALL: [BlockFormat; 7] = [
        BlockFormat::MxFp4,
        BlockFormat::MxFp6E2M3,
        BlockFormat::MxFp6E3M2,
        BlockFormat::MxFp8E4M3,
        BlockFormat::MxFp8E5M2,
        BlockFormat::MxInt8,
        BlockFormat::Nvfp4,
    ];

    /// Elements per block.
    pub fn block_len(self) -> usize {
        if self == BlockFormat::Nvfp4 { 16 } else { 32 }
    }

    /// Bits per element code.
    pub fn bits(self) -> u32 {
        match self {
            BlockFormat::MxFp4 | BlockFormat::Nvfp4 => 4,
            BlockFormat::MxFp6E2M3 | BlockFormat::MxFp6E3M2 => 6,
            _ => 8,
        }
    }

    /// Packed bytes per block.
    pub fn block_bytes(self) -> usize {
        self.block_len() * self.bits() as usize / 8
    }

    /// The value of an element code (its low [`BlockFormat::bits`] bits).
    pub fn element(self, code: u32) -> f64 {
        match self {
            BlockFormat::MxFp4 | BlockFormat::Nvfp4 => all_finite(code, 2, 1, 1),
            BlockFormat::MxFp6E2M3 => all_finite(code, 2, 3, 1),
            BlockFormat::MxFp6E3M2 => all_finite(code, 3, 2, 3),
            BlockFormat::MxFp8E4M3 => Format::E4m3fn.decode(code),
            BlockFormat::MxFp8E5M2 => Format::E5m2.decode(code),
            BlockFormat::MxInt8 => f64::from(code as u8 as i8) / 64.0,
        }
    }

    /// The multiplier a scale code stands for: `2^(code - 127)` (NaN for 0xFF) for the MX
    /// formats, the E4M3 value for NVFP4.
    pub fn scale(self, code: u8) -> f64 {
        match self {
            BlockFormat::Nvfp4 => Format::E4m3fn.decode(u32::from(code)),
            _ if code == 0xFF => f64::NAN,
            _ => pow2(i32::from(code) - 127),
        }
    }
}

/// The value of a code of a sign/exponent/mantissa format without infinities or NaNs (FP4, FP6):
/// subnormal `m 2^(1 - bias - man_bits)` for a zero exponent field, else
/// `(2^man_bits + m) 2^(e - bias - man_bits)`.
fn all_finite(code: u32, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let negative = (code >> (exp_bits + man_bits)) & 1 == 1;
    let exponent = (code >> man_bits) & ((1 << exp_bits) - 1);
    let mantissa = code & ((1 << man_bits) - 1);
    let magnitude = if exponent == 0 {
        f64::from(mantissa) * pow2(1 - bias - man_bits as i32)
    } else {
        f64::from(mantissa + (1 << man_bits)) * pow2(exponent as i32 - bias - man_bits as i32)
    };
    if negative { -magnitude } else { magnitude }
}

/// Code `index` of a stream of `bits`-bit codes packed little-endian: bit `k` of the stream is
/// bit `k % 8` of byte `k / 8`, and code `i` is stream bits `bits * i .. bits * i + bits`.
pub fn code_at(bytes: &[u8], bits: u32, index: usize) -> u32 {
    (0..bits).fold(0, |code, b| {
        let bit = index * bits as usize + b as usize;
        code | (u32::from(bytes[bit / 8] >> (bit % 8)) & 1) << b
    })
}

/// The exact value of every element of a block-scaled tensor, in order: element `i` of block
/// `b` is `element(code) * scale(scales[b])`, times `tensor_scale` for NVFP4.
pub fn block_values(
    format: BlockFormat,
    packed: &[u8],
    scales: &[u8],
    tensor_scale: f32,
) -> Vec<f64> {
    let len = format.block_len();
    (0..scales.len() * len)
        .map(|i| {
            let block = &packed[i / len * format.block_bytes()..];
            let value = format.element(code_at(block, format.bits(), i % len))
                * format.scale(scales[i / len]);
            if format == BlockFormat::Nvfp4 {
                value * f64::from(tensor_scale)
            } else {
                value
            }
        })
        .collect()
}

/// What `dequant_<format>_<out>` writes for each element.
///
/// Kernel arithmetic: the MX product `element * 2^k` is exact in f32 (an error only below the
/// normal range, at most half a subnormal step); NVFP4's `element * scale` is exact (at most 6
/// significant bits) and the product with the tensor scale is rounded once (relative `u`); then
/// one rounding to the output format.
pub fn dequant_blocks(
    format: BlockFormat,
    packed: &[u8],
    scales: &[u8],
    tensor_scale: f32,
    out: Format,
) -> Vec<Expected> {
    block_values(format, packed, scales, tensor_scale)
        .into_iter()
        .map(|value| {
            if value.is_nan() {
                return Expected::exact(f64::NAN);
            }
            let rounding = if format == BlockFormat::Nvfp4 {
                F32_ROUNDOFF * value.abs()
            } else {
                0.0
            };
            Expected::stored_as(value, rounding + f32_underflow(), out)
        })
        .collect()
}

/// What `dequant_fp8_<format>_<out>` writes for each code: `decode(code) * scale`, rounded to
/// f32 (relative `u`) and then to the output format.
pub fn dequant_plain(format: Format, codes: &[u8], scale: f32, out: Format) -> Vec<Expected> {
    codes
        .iter()
        .map(|&code| {
            let value = format.decode(u32::from(code)) * f64::from(scale);
            if value.is_nan() {
                Expected::exact(f64::NAN)
            } else if value.is_infinite() {
                Expected::exact(value)
            } else {
                Expected::stored_as(value, F32_ROUNDOFF * value.abs() + f32_underflow(), out)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_values_are_the_published_ones() {
        let fp4: Vec<f64> = (0..8).map(|c| BlockFormat::MxFp4.element(c)).collect();
        assert_eq!(fp4, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(BlockFormat::Nvfp4.element(0xF), -6.0);
        // E2M3: max 7.5, smallest subnormal 1/8; E3M2: max 28, smallest subnormal 1/16.
        assert_eq!(BlockFormat::MxFp6E2M3.element(0x1F), 7.5);
        assert_eq!(BlockFormat::MxFp6E2M3.element(0x01), 0.125);
        assert_eq!(BlockFormat::MxFp6E2M3.element(0x3F), -7.5);
        assert_eq!(BlockFormat::MxFp6E3M2.element(0x1F), 28.0);
        assert_eq!(BlockFormat::MxFp6E3M2.element(0x01), 0.0625);
        assert_eq!(BlockFormat::MxFp8E4M3.element(0x7E), 448.0);
        assert!(BlockFormat::MxFp8E4M3.element(0xFF).is_nan());
        assert_eq!(BlockFormat::MxFp8E5M2.element(0xFC), f64::NEG_INFINITY);
        assert_eq!(BlockFormat::MxInt8.element(0x80), -2.0);
        assert_eq!(BlockFormat::MxInt8.element(0x7F), 127.0 / 64.0);
    }

    #[test]
    fn scales_follow_e8m0_and_e4m3() {
        assert_eq!(BlockFormat::MxFp4.scale(127), 1.0);
        assert_eq!(BlockFormat::MxFp4.scale(0), pow2(-127));
        assert_eq!(BlockFormat::MxInt8.scale(254), pow2(127));
        assert!(BlockFormat::MxFp8E4M3.scale(0xFF).is_nan());
        assert_eq!(BlockFormat::Nvfp4.scale(0x38), 1.0);
        assert_eq!(BlockFormat::Nvfp4.scale(0x7E), 448.0);
    }

    #[test]
    fn codes_unpack_in_stream_order() {
        // FP4: element 2i in the low nibble of byte i.
        assert_eq!(code_at(&[0x21, 0xF3], 4, 0), 0x1);
        assert_eq!(code_at(&[0x21, 0xF3], 4, 3), 0xF);
        // FP6: 4 codes in 3 bytes, byte 0 = c1[1:0] c0[5:0], byte 1 = c2[3:0] c1[5:2],
        // byte 2 = c3[5:0] c2[5:4].
        let bytes = [0x81, 0x38, 0xFF];
        let codes: Vec<u32> = (0..4).map(|i| code_at(&bytes, 6, i)).collect();
        assert_eq!(codes, [0b000001, 0b100010, 0b110011, 0b111111]);
    }

    #[test]
    fn block_values_scale_each_block() {
        // Two MXFP4 blocks: codes 0x2 (1.0) everywhere; scales 2^1 and 2^-2.
        let packed = [0x22u8; 32];
        let values = block_values(BlockFormat::MxFp4, &packed, &[128, 125], 1.0);
        assert!(values[..32].iter().all(|&v| v == 2.0));
        assert!(values[32..].iter().all(|&v| v == 0.25));
        let nv = block_values(BlockFormat::Nvfp4, &[0x77; 8], &[0x40], 0.5);
        assert!(nv.iter().all(|&v| v == 6.0 * 2.0 * 0.5));
        let half = dequant_blocks(BlockFormat::MxFp4, &packed, &[0xFF, 127], 1.0, Format::F16);
        assert!(half[0].value.is_nan() && half[40].accepts(1.0) && !half[40].accepts(1.001));
    }

    #[test]
    fn plain_fp8_rounds_the_product() {
        let e = dequant_plain(Format::E4m3fn, &[0x38, 0x7F], 3.0, Format::Bf16);
        assert!(e[0].accepts(3.0) && !e[0].accepts(3.02));
        assert!(e[1].value.is_nan());
    }
}
