//! Where each matrix element lives: the VGPR, bit offset and lane of every A, B, C and D element,
//! per target and wave size. Lane `l` belongs to lane group `g = l / 16`. Row `m` of A and column
//! `n` of B are held by the lanes with `l % 16 == m` (`n`); column `n` of C and D by the lanes with
//! `l % 16 == n`. Elements are packed from bit 0 of a fragment's first register (16-bit: two a
//! register, 8-bit: four, 4-bit: eight).
//!
//! - gfx11 (RDNA3), from AMD's matrix instruction calculator: every lane group holds the same whole
//!   row of A (column of B), element `e` at k = `e`, in wave32 and wave64 alike. Element `i` of C/D
//!   (one a register; 16-bit values in the half `op_sel[2]` selects) is row `2i + g` in wave32 and
//!   `4i + g` in wave64.
//! - gfx12 (RDNA4), wave32 (AMD's Composable Kernel WMMA traits, Triton's WMMA v2 layout, and
//!   kernels checked on hardware): the two lane groups split K: element `e` of A/B is
//!   k = `16 (e / 8) + 8 g + e % 8` (K = 16: group 0 holds k 0-7, group 1 k 8-15); element `i` of
//!   C/D is row `8 g + i`, 16-bit values packed two a register.
//! - gfx12, wave64: lanes 0-31 hold the first half of each wave32 fragment and lanes 32-63 the
//!   second: element `e` of lane `l` is element `e + E (l / 32)` of lane `l % 32` in the wave32
//!   layout, `E` being the elements a wave64 lane holds. So the lane groups 0-3 hold k 0-3, 8-11,
//!   4-7, 12-15 of A/B and rows 0-3, 8-11, 4-7, 12-15 of C/D (as RDNA4 kernels written for wave64
//!   document: lane groups {0, 2, 1, 3} in k and row order).
//!
//! A and B share their k order, so which k a register slot stands for never changes D (any common
//! reordering of k leaves the sum alone); the row order of C/D and the `l % 16` assignments do.

use crate::target::Target;

/// The lane layout of one (target, wave size).
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    /// gfx12 layouts (else gfx11).
    gfx12: bool,
    /// Lanes in the wave (32 or 64).
    lanes: usize,
}

impl Layout {
    /// The layout of `target` with `lanes` lanes a wave.
    pub fn new(target: Target, lanes: usize) -> Layout {
        Layout {
            gfx12: target == Target::Gfx1201,
            lanes,
        }
    }

    /// Lanes in the wave.
    pub fn lanes(self) -> usize {
        self.lanes
    }

    /// The wave32 lane and element holding what element `e` of lane `l` holds (gfx12).
    fn wave32(self, l: usize, e: usize, per_lane: usize) -> (usize, usize) {
        (l % 32, e + per_lane * (l / 32))
    }

    /// Elements of A (or B) each lane holds, for K = `k`.
    pub fn ab_elements(self, k: usize) -> usize {
        if self.gfx12 { 16 * k / self.lanes } else { k }
    }

    /// Registers of an A (or B) fragment of `bits`-wide elements, for K = `k`.
    pub fn ab_registers(self, k: usize, bits: usize) -> usize {
        (self.ab_elements(k) * bits).div_ceil(32)
    }

    /// The k index of element `e` of lane `l`'s A (or B) fragment, for K = `k`.
    pub fn ab_k(self, k: usize, l: usize, e: usize) -> usize {
        if self.gfx12 {
            let (l, e) = self.wave32(l, e, self.ab_elements(k));
            16 * (e / 8) + 8 * (l / 16) + e % 8
        } else {
            e
        }
    }

    /// Elements of C (or D) each lane holds.
    pub fn cd_elements(self) -> usize {
        256 / self.lanes
    }

    /// Registers of a C (or D) fragment of `bits`-wide elements.
    pub fn cd_registers(self, bits: usize) -> usize {
        if self.gfx12 {
            (self.cd_elements() * bits).div_ceil(32)
        } else {
            self.cd_elements()
        }
    }

    /// The row of element `i` of lane `l`'s C (or D) fragment (its column is `l % 16`).
    pub fn cd_row(self, l: usize, i: usize) -> usize {
        if self.gfx12 {
            let (l, i) = self.wave32(l, i, self.cd_elements());
            8 * (l / 16) + i
        } else {
            self.lanes / 16 * i + l / 16
        }
    }

    /// The register and bit offset of element `i` of a C (or D) fragment of `bits`-wide elements;
    /// `high` is gfx11's `op_sel[2]` (16-bit values in the high halves).
    pub fn cd_slot(self, i: usize, bits: usize, high: bool) -> (usize, u32) {
        if self.gfx12 {
            (i * bits / 32, (i * bits % 32) as u32)
        } else if bits == 16 && high {
            (i, 16)
        } else {
            (i, 0)
        }
    }
}

/// Bits `[shift, shift + bits)` of `word`.
pub(super) fn field(word: u32, shift: u32, bits: usize) -> u32 {
    (word >> shift) & (u32::MAX >> (32 - bits))
}

/// The register and bit offset of element `e` of an A (or B) fragment of `bits`-wide elements.
pub(super) fn ab_slot(e: usize, bits: usize) -> (usize, u32) {
    (e * bits / 32, (e * bits % 32) as u32)
}
