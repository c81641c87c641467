//! The staging of the software-decoding GEMM kernels: codes of any FP8/FP6/FP4 format (named at
//! run time), with or without E8M0 block scales, decoded exactly by one decoder for every format
//! (its layout, five uniform values, chosen at run time: `RuntimeLayout`), scaled in f32 and
//! rounded to bf16 into the 16-bit LDS layout (swizzled rows of 32 elements, [`swizzled`]), so
//! that the bf16 matrix-instruction step reads them like any bf16 operand. One decoder instead
//! of seven inlined per operand keeps the kernels under 32 KB of code on CDNA.
//!
//! Each work-item moves one unit of 16 consecutive-K codes per K tile (128 rows x 2 units): the
//! global read is one access of 16, 12 or 8 bytes (FP8, FP6, FP4) when the unit lies inside the
//! matrix and its rows keep it aligned, else byte by byte (plain FP8 with `k` not a multiple of
//! 16, the only operand whose units can be partial or unaligned). Decoding happens on the LDS
//! side of the stage, after the step that hides the global load's latency.

use crate::decode::UnitElement;
use crate::decode_fast::{Encoding, Specials};
use crate::gemm::{BLOCK, THREADS};
use crate::gemm_mx::{
    FORMAT_E2M1, FORMAT_E2M3, FORMAT_E3M2, FORMAT_E4M3FN, FORMAT_E4M3FNUZ, FORMAT_E5M2, format_bits,
};
use crate::gemm_stage::{
    HALF_TILE_K, SCALE_ONE, SWIZZLED_ROW_BYTES, Words8, Words16, store16, swizzled,
};
use crate::gemm_tile::{Stage, thread};
use iron_intrinsics::half::f32_to_bf16;
use iron_quant::pack::fp6_code_in_words;
use iron_quant::{E2M1, E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E8M0, ElementFormat};

/// Codes per unit.
const UNIT: u32 = 16;

/// A byte-coded operand of `rows x k` elements, K-contiguous (row `r`'s codes from bit
/// `r * k * bits` of the packed stream), in the element format `format` (a
/// [`crate::gemm_mx`] format code), with scale codes `rows x k / 32` when `scaled`.
pub struct DecodedOperand {
    /// The packed codes.
    pub codes: *const u8,
    /// The E8M0 scale codes, read only when `scaled`.
    pub scales: *const u8,
    /// Rows (M for A, N for B).
    pub rows: u32,
    /// K.
    pub k: u32,
    /// The element format code.
    pub format: u32,
    /// Whether blocks of 32 carry scale codes.
    pub scaled: bool,
    /// The workgroup's first row.
    pub row0: u32,
}

const _: () = assert!(BLOCK * HALF_TILE_K / UNIT == THREADS);

/// A format's layout as the run-time decoder reads it: five uniform values, so that one decoder
/// serves every format and each operand keeps only these live across the K loop.
///
/// The decoder takes a code at the top of a word (sign in bit 31) and shifts its magnitude so
/// that the code's exponent field lands on an f32's; multiplying by `2^(127 - bias)` rebases
/// the exponent, and a zero exponent field becomes the format's subnormals through f32
/// subnormal arithmetic (as in [`crate::decode_fast`]). Every code's value is exact in f32.
#[derive(Clone, Copy)]
struct RuntimeLayout {
    /// Right shift from the magnitude at the top of a word to its place in an f32:
    /// `9 - exponent bits`.
    place: u32,
    /// `2^(127 - bias)`.
    rebase: f32,
    /// The placed magnitude of infinity; `u32::MAX` (no placed magnitude) when there is none.
    infinity: u32,
    /// The smallest placed magnitude that is NaN; `u32::MAX` when none is.
    nan_from: u32,
    /// A top-aligned code that is NaN whatever its magnitude rule (FNUZ's -0); `1` (no
    /// top-aligned code) when there is none.
    nan_code: u32,
}

/// No placed magnitude and no top-aligned code of at most 8 bits is `u32::MAX`.
const NONE: u32 = u32::MAX;

impl RuntimeLayout {
    /// The layout of format `E`.
    const fn of<E: UnitElement>() -> Self {
        let Encoding::Float {
            man_bits,
            bias,
            specials,
        } = E::ENCODING
        else {
            panic!("not a sign/exponent/mantissa format")
        };
        let exp_bits = E::BITS - 1 - man_bits;
        let all_ones = ((1 << (exp_bits + man_bits)) - 1) << (23 - man_bits);
        let infinity = ((1 << exp_bits) - 1) << 23;
        let (infinity, nan_from, nan_code) = match specials {
            Specials::None => (NONE, NONE, 1),
            Specials::NanAllOnes => (NONE, all_ones, 1),
            Specials::Ieee => (infinity, infinity + 1, 1),
            Specials::NanAtNegativeZero => (NONE, NONE, 1 << 31),
        };
        RuntimeLayout {
            place: 9 - exp_bits,
            rebase: f32::from_bits(((127 - bias) as u32 + 127) << 23),
            infinity,
            nan_from,
            nan_code,
        }
    }

    /// The layout of the element format with [`crate::gemm_mx`] format code `format`
    /// (E5M2FNUZ for codes past the last).
    #[inline(always)]
    fn of_format(format: u32) -> Self {
        match format {
            FORMAT_E4M3FN => const { Self::of::<E4M3Fn>() },
            FORMAT_E5M2 => const { Self::of::<E5M2>() },
            FORMAT_E4M3FNUZ => const { Self::of::<E4M3Fnuz>() },
            FORMAT_E2M3 => const { Self::of::<E2M3>() },
            FORMAT_E3M2 => const { Self::of::<E3M2>() },
            FORMAT_E2M1 => const { Self::of::<E2M1>() },
            _ => const { Self::of::<E5M2Fnuz>() },
        }
    }

    /// The value of the code `top` (its bits at the top of the word, the rest zero).
    #[inline(always)]
    fn value(self, top: u32) -> f32 {
        let placed = (top << 1) >> self.place;
        let magnitude = if placed == self.infinity {
            f32::INFINITY
        } else {
            f32::from_bits(placed) * self.rebase
        };
        let number = f32::from_bits(magnitude.to_bits() | (top & (1 << 31)));
        // `|`, not `||`: both tests are cheap, and a short circuit would branch.
        let nan = (placed >= self.nan_from) | (top == self.nan_code);
        if nan { f32::NAN } else { number }
    }
}

/// The 16 codes of a unit of `bits`-bit codes (code `j` from stream bits `bits * j ..`), each
/// at the top of its word.
#[inline(always)]
fn top_aligned_codes(bits: u32, w: [u32; 4]) -> [u32; 16] {
    match bits {
        6 => core::array::from_fn(|j| u32::from(fp6_code_in_words(&[w[0], w[1], w[2]], j)) << 26),
        4 => core::array::from_fn(|j| (w[j / 8] << (28 - 4 * (j % 8))) & 0xF000_0000),
        _ => core::array::from_fn(|j| (w[j / 4] << (24 - 8 * (j % 4))) & 0xFF00_0000),
    }
}

impl DecodedOperand {
    /// This work-item's unit in a tile: `(row in tile, first k in tile)`.
    #[inline(always)]
    fn unit_position() -> (u32, u32) {
        let t = thread();
        (t / 2, (t % 2) * UNIT)
    }

    /// Whether the workgroup's K tile `tile` lies inside the matrix with every unit aligned for
    /// its wide read (uniform across the workgroup).
    #[inline(always)]
    fn is_interior(&self, tile: u32) -> bool {
        let aligned = format_bits(self.format) != 8 || self.k.is_multiple_of(UNIT);
        aligned && self.row0 + BLOCK <= self.rows && (tile + 1) * HALF_TILE_K <= self.k
    }

    /// The codes of the unit `(row, k..k + 16)`, zero outside the matrix; `interior` when the
    /// whole tile is ([`DecodedOperand::is_interior`]).
    ///
    /// # Safety
    /// `codes` must hold `rows` rows of `k` codes, 16-byte aligned, and `row < rows`, `k < self.k`.
    #[inline(always)]
    unsafe fn unit_codes(&self, row: u32, k: u32, interior: bool) -> [u32; 4] {
        let bits = format_bits(self.format);
        let first = (row as usize * self.k as usize + k as usize) * bits as usize / 8;
        // SAFETY: row < rows: the row's codes are inside the buffer.
        let at = unsafe { self.codes.add(first) };
        let full = interior || k + UNIT <= self.k;
        // SAFETY (the wide reads): the unit is inside the row; rows of FP6 and FP4 codes have k
        // a multiple of 32 (the host checks), which keeps units 4- and 8-byte aligned, and FP8
        // rows are 16-byte aligned when k is a multiple of 16.
        match bits {
            4 if full => {
                let [a, b] = unsafe { (*(at as *const Words8)).0 };
                [a, b, 0, 0]
            }
            6 if full => {
                let [a, b, c] = unsafe { *(at as *const [u32; 3]) };
                [a, b, c, 0]
            }
            _ if full && (interior || self.k.is_multiple_of(UNIT)) => unsafe {
                (*(at as *const Words16)).0
            },
            _ => {
                // Plain FP8 only: one byte per code, zero past the row's end.
                let byte = |i: u32| {
                    if k + i < self.k {
                        // SAFETY: inside the row.
                        u32::from(unsafe { *at.add(i as usize) })
                    } else {
                        0
                    }
                };
                core::array::from_fn(|w| {
                    let i = 4 * w as u32;
                    byte(i) | (byte(i + 1) << 8) | (byte(i + 2) << 16) | (byte(i + 3) << 24)
                })
            }
        }
    }
}

impl Stage for DecodedOperand {
    const LDS_BYTES: u32 = BLOCK * SWIZZLED_ROW_BYTES;
    type Held = ([u32; 4], u8);

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        let (r, kk) = Self::unit_position();
        let (row, k) = (self.row0 + r, tile * HALF_TILE_K + kk);
        if row >= self.rows || k >= self.k {
            return ([0; 4], SCALE_ONE);
        }
        // SAFETY: row < rows and k < k: inside the matrix, as the caller guarantees.
        let codes = unsafe { self.unit_codes(row, k, self.is_interior(tile)) };
        let scale = if self.scaled {
            let at = row as usize * (self.k / 32) as usize + (k / 32) as usize;
            // SAFETY: row < rows and k / 32 < k / 32 blocks of the row.
            unsafe { *self.scales.add(at) }
        } else {
            SCALE_ONE
        };
        (codes, scale)
    }

    #[inline(always)]
    unsafe fn store(&self, (codes, scale): Self::Held, lds: *mut u8) {
        let (r, kk) = Self::unit_position();
        let factor = E8M0::decode_to_f32(scale);
        let layout = RuntimeLayout::of_format(self.format);
        let codes = top_aligned_codes(format_bits(self.format), codes);
        let bits = codes.map(|code| f32_to_bf16(layout.value(code) * factor));
        let words: [u32; 8] =
            core::array::from_fn(|w| u32::from(bits[2 * w]) | (u32::from(bits[2 * w + 1]) << 16));
        for half in 0..2 {
            let run = core::array::from_fn(|i| words[4 * half + i]);
            let at = swizzled(r, (kk + 8 * half as u32) * 2);
            // SAFETY: row r < 128, elements kk + 8 * half .. + 8 < 32 of it (one 16-byte chunk):
            // inside the buffer, 16-byte aligned.
            unsafe { store16(lds.add(at as usize), run) };
        }
    }
}
