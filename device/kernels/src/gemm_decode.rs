//! The staging of the software-decoding GEMM kernels: codes of any FP8/FP6/FP4 format (named at
//! run time), with or without E8M0 block scales, decoded by `iron_quant`'s decoders, scaled in
//! f32 and rounded to bf16 into the 16-bit LDS layout (swizzled rows of 32 elements,
//! [`swizzled`]), so that the bf16 matrix-instruction step reads them like any bf16 operand.
//!
//! Each work-item moves one unit of 16 consecutive-K codes per K tile (128 rows x 2 units): the
//! global read is one access of 16, 12 or 8 bytes (FP8, FP6, FP4) when the unit lies inside the
//! matrix and its rows keep it aligned, else byte by byte (plain FP8 with `k` not a multiple of
//! 16, the only operand whose units can be partial or unaligned). Decoding happens on the LDS
//! side of the stage, after the step that hides the global load's latency.

use crate::gemm::{BLOCK, THREADS};
use crate::gemm_mx::{
    FORMAT_E2M1, FORMAT_E2M3, FORMAT_E3M2, FORMAT_E4M3FN, FORMAT_E4M3FNUZ, FORMAT_E5M2, format_bits,
};
use crate::gemm_stage::{
    HALF_TILE_K, SCALE_ONE, SWIZZLED_ROW_BYTES, Words8, Words16, store16, swizzled,
};
use crate::gemm_tile::{Stage, thread};
use iron_intrinsics::half::f32_to_bf16;
use iron_quant::{
    E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E8M0, ElementFormat, fp4, fp6, fp8,
};

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

/// The 16 values of four FP8 words (byte `i` is element `i`).
#[inline(always)]
fn fp8_values<F: ElementFormat>(w: [u32; 4]) -> [f32; 16] {
    let words = w.map(fp8::decode_word::<F>);
    core::array::from_fn(|j| words[j / 4][j % 4])
}

/// The unscaled values of a unit's codes in format `format`.
#[inline(always)]
fn decode_unit(format: u32, w: [u32; 4]) -> [f32; 16] {
    match format {
        FORMAT_E4M3FN => fp8_values::<E4M3Fn>(w),
        FORMAT_E5M2 => fp8_values::<E5M2>(w),
        FORMAT_E4M3FNUZ => fp8_values::<E4M3Fnuz>(w),
        FORMAT_E2M3 => fp6::decode_words::<E2M3>([w[0], w[1], w[2]]),
        FORMAT_E3M2 => fp6::decode_words::<E3M2>([w[0], w[1], w[2]]),
        FORMAT_E2M1 => {
            let (low, high) = (fp4::decode_word(w[0]), fp4::decode_word(w[1]));
            core::array::from_fn(|j| if j < 8 { low[j] } else { high[j - 8] })
        }
        _ => fp8_values::<E5M2Fnuz>(w),
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
        let values = decode_unit(self.format, codes);
        let bits: [u16; 16] = core::array::from_fn(|j| f32_to_bf16(values[j] * factor));
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
