//! How the quantized kernels (dequantization, quantized GEMV) read packed element codes: in
//! units of 16 consecutive elements, decoded by `iron-quant`'s word decoders
//! ([`iron_quant::fp4::decode_word`], [`iron_quant::fp6::decode_words`],
//! [`iron_quant::fp8::decode_word`]) and scaled as `iron-quant` defines
//! ([`BlockFormat::apply_scale`]).
//!
//! A unit's codes are 8 bytes (FP4), 12 bytes (FP6) or 16 bytes (FP8, INT8) of the packed stream
//! (`iron_quant::pack`); unit `u` starts at byte `u * bytes`, so a 16-byte-aligned stream keeps
//! every unit aligned to its width. An MX block (32 elements) is two units sharing a scale code;
//! an NVFP4 block (16) is one unit.
//!
//! The dequantization kernels read the units of a work-item together ([`load_item`]): as many
//! as fill whole 16-byte loads ([`crate::dequant::units_per_workitem`]: two FP4 units in one
//! load, four FP6 units in three, one FP8 or INT8 unit in one). The quantized GEMV reads one unit
//! at a time with one access of the unit's width ([`load_unit`]), decodes it with
//! [`crate::decode_fast`] instead (same values, fewer instructions) and applies its scale to its
//! sum of products ([`gemv_unit`]).
//!
//! On gfx950 the MX element formats (and, in the GEMV, plain OCP FP8) are decoded by the hardware
//! conversions of [`iron_intrinsics::convert`] instead: one instruction per 2 or 32 elements,
//! scale included, giving the same values (the conversions are exact; NaN scales are applied in
//! software), which the emulator tests check against the same oracle on gfx950 as on gfx942. The
//! constant `GFX950_CONVERSIONS` switches back to the software decoders.

use crate::decode_fast::{Encoding, Specials, decode_fast};
use iron_quant::block::BlockFormat;
use iron_quant::{
    E2M1, E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, ElementFormat, Int8, fp4, fp6, fp8,
};

/// Elements per unit.
pub const UNIT: usize = 16;

/// Whether gfx950 builds decode MX elements with the hardware conversions (see the module docs).
#[cfg(iron_gfx = "gfx950")]
const GFX950_CONVERSIONS: bool = true;

/// The E8M0 code of 1.0: the hardware conversions' scale for unscaled values.
#[cfg(iron_gfx = "gfx950")]
const E8M0_ONE: u8 = 127;

/// The hardware conversion gfx950 has for an element format, if any.
#[cfg(iron_gfx = "gfx950")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// None: decoded in software everywhere.
    Software,
    /// `V_CVT_SCALEF32_PK_F32_FP4`.
    Fp4,
    /// `V_CVT_SCALEF32_PK32_F32_FP6`.
    Fp6E2M3,
    /// `V_CVT_SCALEF32_PK32_F32_BF6`.
    Fp6E3M2,
    /// `V_CVT_SCALEF32_PK_F32_FP8` (OCP E4M3).
    Fp8E4M3,
    /// `V_CVT_SCALEF32_PK_F32_BF8` (OCP E5M2).
    Fp8E5M2,
}

/// An element format the quantized kernels read: its encoding (for the GEMV's fast decoder)
/// and (on gfx950) its hardware conversion.
pub trait UnitElement: ElementFormat {
    /// How the format encodes its values.
    const ENCODING: Encoding;
    /// The gfx950 conversion of this format.
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion;
}

impl UnitElement for E2M1 {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 1,
        bias: 1,
        specials: Specials::None,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Fp4;
}
impl UnitElement for E2M3 {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 3,
        bias: 1,
        specials: Specials::None,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Fp6E2M3;
}
impl UnitElement for E3M2 {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 2,
        bias: 3,
        specials: Specials::None,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Fp6E3M2;
}
impl UnitElement for E4M3Fn {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 3,
        bias: 7,
        specials: Specials::NanAllOnes,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Fp8E4M3;
}
impl UnitElement for E5M2 {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 2,
        bias: 15,
        specials: Specials::Ieee,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Fp8E5M2;
}
impl UnitElement for E4M3Fnuz {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 3,
        bias: 8,
        specials: Specials::NanAtNegativeZero,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Software;
}
impl UnitElement for E5M2Fnuz {
    const ENCODING: Encoding = Encoding::Float {
        man_bits: 2,
        bias: 16,
        specials: Specials::NanAtNegativeZero,
    };
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Software;
}
impl UnitElement for Int8 {
    const ENCODING: Encoding = Encoding::Int8;
    #[cfg(iron_gfx = "gfx950")]
    const CONVERSION: Conversion = Conversion::Software;
}

/// The packed codes of one unit as little-endian words (8-byte units fill two, 12-byte units
/// three; the rest are zero).
#[derive(Clone, Copy)]
pub struct UnitCodes([u32; 4]);

impl UnitCodes {
    /// The words.
    #[inline(always)]
    pub fn words(self) -> [u32; 4] {
        self.0
    }
}

/// Eight bytes read as one access.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Aligned8([u32; 2]);

/// Sixteen bytes read as one access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Aligned16([u32; 4]);

/// Bytes of codes per unit of element format `E`.
pub const fn unit_bytes<E: ElementFormat>() -> usize {
    UNIT * E::BITS as usize / 8
}

/// Reads unit `unit` of the code stream `codes` of element format `E`.
///
/// # Safety
/// The unit must lie inside the stream, and the stream must start 16-byte aligned.
#[inline(always)]
pub unsafe fn load_unit<E: ElementFormat>(codes: *const u8, unit: usize) -> UnitCodes {
    // SAFETY: in bounds and aligned to the unit's width, as the caller guarantees.
    unsafe {
        let at = codes.add(unit * unit_bytes::<E>());
        match E::BITS {
            4 => {
                let [a, b] = (*(at as *const Aligned8)).0;
                UnitCodes([a, b, 0, 0])
            }
            6 => {
                let [a, b, c] = *(at as *const [u32; 3]);
                UnitCodes([a, b, c, 0])
            }
            _ => UnitCodes((*(at as *const Aligned16)).0),
        }
    }
}

/// Words of codes a work-item reads at most: three 16-byte loads (four FP6 units).
const ITEM_WORDS: usize = 12;

/// The packed codes of one work-item's units as little-endian words (the words past its
/// `units_per_workitem * unit_bytes` bytes are zero).
#[derive(Clone, Copy)]
pub struct ItemCodes([u32; ITEM_WORDS]);

impl ItemCodes {
    /// The codes of the first unit of element format `E` left in the item.
    #[inline(always)]
    pub fn first_unit<E: ElementFormat>(self) -> UnitCodes {
        let words = unit_bytes::<E>() / 4;
        UnitCodes(core::array::from_fn(
            |k| if k < words { self.0[k] } else { 0 },
        ))
    }

    /// The codes after the first unit (moved to the front: each unit is then read at constant
    /// indices, with no register indexing even when the loop over units stays rolled).
    #[inline(always)]
    pub fn rest<E: ElementFormat>(self) -> ItemCodes {
        let words = unit_bytes::<E>() / 4;
        ItemCodes(core::array::from_fn(|k| {
            if k + words < ITEM_WORDS {
                self.0[k + words]
            } else {
                0
            }
        }))
    }
}

/// Reads work-item `item`'s codes of element format `E`: units
/// `item * per_item .. (item + 1) * per_item` (`per_item` =
/// [`crate::dequant::units_per_workitem`]), whole 16-byte loads.
///
/// # Safety
/// Those units must lie inside the stream, and the stream must start 16-byte aligned.
#[inline(always)]
pub unsafe fn load_item<E: ElementFormat>(codes: *const u8, item: usize) -> ItemCodes {
    let bytes = const { crate::dequant::units_per_workitem(E::BITS) * unit_bytes::<E>() };
    // SAFETY: the item's bytes are in bounds and start 16-byte aligned (`bytes` is 16 or 48),
    // as the caller guarantees; each load stays inside the item.
    unsafe {
        let at = codes.add(item * bytes) as *const Aligned16;
        let [a, b, c, d] = (*at).0;
        if bytes == 16 {
            ItemCodes([a, b, c, d, 0, 0, 0, 0, 0, 0, 0, 0])
        } else {
            let ([e, f, g, h], [i, j, k, l]) = ((*at.add(1)).0, (*at.add(2)).0);
            ItemCodes([a, b, c, d, e, f, g, h, i, j, k, l])
        }
    }
}

/// The 16 element values of a unit (unscaled), decoded in software.
#[inline(always)]
fn decode_software<E: ElementFormat>(codes: UnitCodes) -> [f32; UNIT] {
    let w = codes.0;
    match E::BITS {
        4 => {
            let (low, high) = (fp4::decode_word(w[0]), fp4::decode_word(w[1]));
            core::array::from_fn(|j| if j < 8 { low[j] } else { high[j - 8] })
        }
        6 => fp6::decode_words::<E>([w[0], w[1], w[2]]),
        _ => {
            let words = w.map(fp8::decode_word::<E>);
            core::array::from_fn(|j| words[j / 4][j % 4])
        }
    }
}

/// The 16 element values of a unit times the E8M0 scale `scale` (`2^(scale - 127)`, NaN for
/// 0xFF), by gfx950's conversions; `None` when the format has none.
#[cfg(iron_gfx = "gfx950")]
#[inline(always)]
fn decode_hardware<E: UnitElement>(codes: UnitCodes, scale: u8) -> Option<[f32; UNIT]> {
    use iron_intrinsics::convert::{e8m0_operand, fp4x8_to_f32, fp6x16_to_f32, fp8x4_to_f32};
    let (w, s) = (codes.0, e8m0_operand(scale));
    let values: [f32; UNIT] = match E::CONVERSION {
        Conversion::Software => return None,
        Conversion::Fp4 => {
            let (low, high) = (fp4x8_to_f32(w[0], s), fp4x8_to_f32(w[1], s));
            core::array::from_fn(|j| if j < 8 { low[j] } else { high[j - 8] })
        }
        Conversion::Fp6E2M3 => fp6x16_to_f32::<false>([w[0], w[1], w[2]], s),
        Conversion::Fp6E3M2 => fp6x16_to_f32::<true>([w[0], w[1], w[2]], s),
        Conversion::Fp8E4M3 => {
            let words = w.map(|word| fp8x4_to_f32::<false>(word, s));
            core::array::from_fn(|j| words[j / 4][j % 4])
        }
        Conversion::Fp8E5M2 => {
            let words = w.map(|word| fp8x4_to_f32::<true>(word, s));
            core::array::from_fn(|j| words[j / 4][j % 4])
        }
    };
    // The E8M0 NaN scale makes the whole block NaN, as iron-quant decodes it.
    Some(if scale == 0xFF {
        [f32::NAN; UNIT]
    } else {
        values
    })
}

/// The 16 values of a unit of element format `E` times the power-of-two E8M0 scale `scale`:
/// `element * B::scale_to_f32(scale)`, as [`BlockFormat::apply_scale`] defines it, with the
/// multiplier decoded once per unit.
#[inline(always)]
fn decode_e8m0_scaled<B: BlockFormat>(codes: UnitCodes, scale: u8) -> [f32; UNIT]
where
    B::Element: UnitElement,
{
    #[cfg(iron_gfx = "gfx950")]
    if GFX950_CONVERSIONS && let Some(values) = decode_hardware::<B::Element>(codes, scale) {
        return values;
    }
    let multiplier = B::scale_to_f32(scale);
    decode_software::<B::Element>(codes).map(|e| e * multiplier)
}

/// How a quantized tensor's units are scaled, as the kernels see it.
pub trait Quantized {
    /// The element format.
    type Element: UnitElement;
    /// Units sharing one scale code; 0 when the tensor has no scale codes (plain FP8).
    const UNITS_PER_SCALE: usize;
    /// The values of a unit with scale code `scale` (unused without scale codes) and f32 scale
    /// `tensor_scale` (unused by the MX formats).
    fn scaled(codes: UnitCodes, scale: u8, tensor_scale: f32) -> [f32; UNIT];
    /// The multiplier of scale code `scale` (1 without scale codes).
    fn unit_scale(scale: u8) -> f32;
}

/// A block format of `iron-quant` with E8M0 scales (the MX formats).
pub struct MxBlocks<B>(core::marker::PhantomData<B>);

impl<B: BlockFormat> Quantized for MxBlocks<B>
where
    B::Element: UnitElement,
{
    type Element = B::Element;
    const UNITS_PER_SCALE: usize = B::BLOCK_LEN / UNIT;
    #[inline(always)]
    fn scaled(codes: UnitCodes, scale: u8, _tensor_scale: f32) -> [f32; UNIT] {
        decode_e8m0_scaled::<B>(codes, scale)
    }
    #[inline(always)]
    fn unit_scale(scale: u8) -> f32 {
        B::scale_to_f32(scale)
    }
}

/// NVFP4: blocks of one unit, an E4M3 scale code each and an f32 tensor scale, applied as
/// `(element * block scale) * tensor scale`.
pub struct Nvfp4Blocks;

impl Quantized for Nvfp4Blocks {
    type Element = E2M1;
    const UNITS_PER_SCALE: usize = 1;
    #[inline(always)]
    fn scaled(codes: UnitCodes, scale: u8, tensor_scale: f32) -> [f32; UNIT] {
        // `BlockFormat::apply_scale`'s order of operations, the block scale decoded once.
        let block_scale = iron_quant::Nvfp4::scale_to_f32(scale);
        decode_software::<E2M1>(codes).map(|e| (e * block_scale) * tensor_scale)
    }
    #[inline(always)]
    fn unit_scale(scale: u8) -> f32 {
        iron_quant::Nvfp4::scale_to_f32(scale)
    }
}

/// Plain codes of element format `E` with one f32 scale: `element * tensor_scale`.
pub struct PlainCodes<E>(core::marker::PhantomData<E>);

impl<E: UnitElement> Quantized for PlainCodes<E> {
    type Element = E;
    const UNITS_PER_SCALE: usize = 0;
    #[inline(always)]
    fn scaled(codes: UnitCodes, _scale: u8, tensor_scale: f32) -> [f32; UNIT] {
        decode_software::<E>(codes).map(|e| e * tensor_scale)
    }
    #[inline(always)]
    fn unit_scale(_scale: u8) -> f32 {
        1.0
    }
}

/// The unscaled values of unit `unit` of a quantized tensor and the multiplier of its scale
/// code, for the GEMV: decoded by [`decode_fast`] (or gfx950's conversions, see the module
/// docs).
///
/// # Safety
/// The unit and its scale code must lie inside the buffers; `codes` must be 16-byte aligned.
#[inline(always)]
pub unsafe fn gemv_unit<Q: Quantized>(
    codes: *const u8,
    scales: *const u8,
    unit: usize,
) -> ([f32; UNIT], f32) {
    // SAFETY: the unit's scale code is in bounds, as the caller guarantees.
    let scale = unit
        .checked_div(Q::UNITS_PER_SCALE)
        .map_or(0, |index| unsafe { *scales.add(index) });
    // SAFETY: as the caller guarantees.
    let codes = unsafe { load_unit::<Q::Element>(codes, unit) };
    #[cfg(iron_gfx = "gfx950")]
    if GFX950_CONVERSIONS && let Some(values) = decode_hardware::<Q::Element>(codes, E8M0_ONE) {
        return (values, Q::unit_scale(scale));
    }
    (decode_fast::<Q::Element>(codes), Q::unit_scale(scale))
}
