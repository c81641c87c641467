//! Where the matrix elements of an MFMA live in a wave64: which lane and which slot of a lane's
//! registers hold each element of the A and B sources and of the C/D accumulators.
//!
//! The mappings are those of AMD's matrix instruction calculator (CDNA1-CDNA3, `gfx9` register
//! layout) and of the CDNA4 guide for the `f8f6f4` instructions:
//!
//! - A source (`outer` = M rows, or N columns for B) of `blocks` blocks with `k` products per output
//!   holds `E = k * outer * blocks / 64` elements per lane, packed from bit 0 of the lane's first
//!   register. Element `s` of lane `l` is row `l % outer` of block `(l / outer) % blocks`, at
//!   `k = (l / (outer * blocks)) * E + s`.
//! - The 8-bit (FP8/BF8) sources of `v_mfma_*_f8f6f4` (`E = 32`) are split into two chunks of 16:
//!   element `s` of lane `l` is at `k = (s / 16) * 16 * G + 16 * (l / outer) + s % 16` with
//!   `G = 64 / outer` lane groups. Their FP6/BF6/FP4 sources follow the general rule.
//! - Accumulators of 32-bit elements are written in groups of 4 rows (one row per register) by
//!   `N` lanes; 64-bit elements in groups of one row. With `H` rows per group, `R = 64 / N` groups
//!   per register and `P = ceil(64 / (M * N / H))` blocks side by side in one register, element
//!   `D[b][i][j]` is register element `b * (M * N / 64) + (i / (H * R)) * H + i % H` of lane
//!   `(b % P) * N + ((i / H) % R) * P * N + j`.
//!
//! Worked out per shape (lane `l`, accumulator element `r`, source slot `s`):
//!
//! | blocks of M x N | A (B alike, column for row) | D element `r` of lane `l` |
//! | --- | --- | --- |
//! | 32x32, 1 block, K = 2E | row `l % 32`, k `E * (l / 32) + s` | row `8 * (r / 4) + 4 * (l / 32) + r % 4`, column `l % 32` |
//! | 32x32, 2 blocks, K = E | block `l / 32`, row `l % 32`, k `s` | block `r / 16`, then as above with `r % 16` |
//! | 16x16, 1 block, K = 4E | row `l % 16`, k `E * (l / 16) + s` | row `4 * (l / 16) + r`, column `l % 16` |
//! | 16x16, 4 blocks, K = E | block `l / 16`, row `l % 16`, k `s` | block `r / 4`, row `4 * (l / 16) + r % 4`, column `l % 16` |
//! | 4x4, 16 blocks, K = E | block `l / 4`, row `l % 4`, k `s` | block `l / 4`, row `r`, column `l % 4` |
//! | f64 16x16x4 | row `l % 16`, k `l / 16` | register pair `r`: row `4 * r + l / 16`, column `l % 16` |
//! | f64 4x4x4, 4 blocks | block `(l / 4) % 4`, row `l % 4`, k `l / 16` | block `(l / 4) % 4`, row `l / 16`, column `l % 4` |

/// Row (or column for B), k index and block of source element `slot` of `lane`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SourceElement {
    /// Row of A or column of B.
    pub outer: u32,
    /// Index along the reduction dimension.
    pub k: u32,
    /// Block index.
    pub block: u32,
}

/// The lane arrangement of one MFMA source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SourceLayout {
    /// Rows of A (M) or columns of B (N) per block.
    pub outer: u32,
    /// Products per output element (K).
    pub k: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// The 8-bit `f8f6f4` arrangement: two chunks of 16 elements per lane.
    pub chunked: bool,
}

impl SourceLayout {
    /// Elements of this source each lane holds.
    pub fn per_lane(self) -> u32 {
        self.k * self.outer * self.blocks / 64
    }

    /// The matrix element held in element `slot` of `lane`.
    pub fn element(self, lane: u32, slot: u32) -> SourceElement {
        let outer = lane % self.outer;
        let group = lane / self.outer;
        if self.chunked {
            let groups = 64 / self.outer;
            return SourceElement {
                outer,
                k: slot / 16 * 16 * groups + 16 * group + slot % 16,
                block: 0,
            };
        }
        SourceElement {
            outer,
            k: group / self.blocks * self.per_lane() + slot,
            block: group % self.blocks,
        }
    }
}

/// The lane arrangement of the C/D accumulators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResultLayout {
    /// Rows per block.
    pub m: u32,
    /// Columns per block.
    pub n: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// 64-bit elements (register pairs) instead of 32-bit ones.
    pub wide: bool,
}

impl ResultLayout {
    /// Accumulator elements per lane.
    pub fn per_lane(self) -> u32 {
        self.m * self.n * self.blocks / 64
    }

    /// (lane, element index within the lane) of `D[block][i][j]`.
    pub fn position(self, block: u32, i: u32, j: u32) -> (u32, u32) {
        let rows_per_group = if self.wide { 1 } else { 4 };
        let groups_per_register = 64 / self.n;
        let blocks_per_register = 64u32.div_ceil(self.m * self.n / rows_per_group);
        let element = block * (self.m * self.n / 64)
            + i / (rows_per_group * groups_per_register) * rows_per_group
            + i % rows_per_group;
        let lane = block % blocks_per_register * self.n
            + i / rows_per_group % groups_per_register * blocks_per_register * self.n
            + j;
        (lane, element)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [(u32, u32, u32, u32); 9] = [
        (32, 32, 1, 2),
        (16, 16, 1, 4),
        (4, 4, 1, 16),
        (32, 32, 8, 1),
        (16, 16, 16, 1),
        (4, 4, 4, 16),
        (32, 32, 4, 2),
        (16, 16, 4, 4),
        (16, 16, 128, 1),
    ];

    #[test]
    fn source_slots_cover_every_element_once() {
        for (m, _, k, blocks) in SHAPES {
            for chunked in [false, true] {
                if chunked && k * m != 2048 {
                    continue;
                }
                let l = SourceLayout {
                    outer: m,
                    k,
                    blocks,
                    chunked,
                };
                let mut seen = vec![false; (m * k * blocks) as usize];
                for lane in 0..64 {
                    for slot in 0..l.per_lane() {
                        let e = l.element(lane, slot);
                        let at = ((e.block * m + e.outer) * k + e.k) as usize;
                        assert!(!seen[at], "{l:?}: lane {lane} slot {slot} repeats {e:?}");
                        seen[at] = true;
                    }
                }
                assert!(seen.iter().all(|&s| s), "{l:?} leaves elements out");
            }
        }
    }

    #[test]
    fn result_positions_cover_every_register_once() {
        let narrow = SHAPES.map(|(m, n, _, blocks)| (m, n, blocks, false));
        let wide = [(16, 16, 1, true), (4, 4, 4, true)];
        for (m, n, blocks, wide) in narrow.into_iter().chain(wide) {
            let l = ResultLayout { m, n, blocks, wide };
            let mut seen = vec![false; 64 * l.per_lane() as usize];
            for b in 0..blocks {
                for i in 0..m {
                    for j in 0..n {
                        let (lane, e) = l.position(b, i, j);
                        assert!(e < l.per_lane(), "{l:?}: D[{b}][{i}][{j}] element {e}");
                        let at = (e * 64 + lane) as usize;
                        assert!(!seen[at], "{l:?}: D[{b}][{i}][{j}] collides");
                        seen[at] = true;
                    }
                }
            }
        }
    }

    #[test]
    fn published_examples() {
        // f16 16x16x16: lane l holds A[l % 16][4 * (l / 16) + i] and D[4 * (l / 16) + i][l % 16].
        let a = SourceLayout {
            outer: 16,
            k: 16,
            blocks: 1,
            chunked: false,
        };
        assert_eq!(
            a.element(37, 2),
            SourceElement {
                outer: 5,
                k: 10,
                block: 0
            }
        );
        let d = ResultLayout {
            m: 16,
            n: 16,
            blocks: 1,
            wide: false,
        };
        assert_eq!(d.position(0, 9, 3), (32 + 3, 1));
        // 32x32 f32 results: lane l, register r hold D[8 * (r / 4) + 4 * (l / 32) + r % 4][l % 32].
        let d = ResultLayout {
            m: 32,
            n: 32,
            blocks: 1,
            wide: false,
        };
        assert_eq!(d.position(0, 8 * 2 + 4 + 3, 7), (32 + 7, 11));
        // Scaled 32x32x64 FP8: bytes 16-31 of lane 32 hold k = 48..63.
        let f8 = SourceLayout {
            outer: 32,
            k: 64,
            blocks: 1,
            chunked: true,
        };
        assert_eq!(f8.element(32, 16).k, 48);
        assert_eq!(f8.element(0, 15).k, 15);
        // 16x16x128 FP8: register 4 byte 0 of lanes 16-31 holds k = 80.
        let f8 = SourceLayout {
            outer: 16,
            k: 128,
            blocks: 1,
            chunked: true,
        };
        assert_eq!(f8.element(16, 16).k, 80);
    }
}
