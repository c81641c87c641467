//! How the GEMM kernels stage their operands ([`Stage`]): 16-bit matrices in either layout, and
//! byte-coded matrices (FP8, FP6, FP4 codes, with or without E8M0 block scales) stored
//! K-contiguous.
//!
//! In LDS every operand tile is K-contiguous: its 128 rows (rows of A, columns of B) one after
//! the other, each `PITCH` bytes: the tile's K slice plus 16 bytes of padding, which keeps every
//! row 16-byte aligned and shifts consecutive rows across LDS banks.
//!
//! Global loads are 16 bytes wide when a run of 16 bytes lies inside the matrix and is aligned
//! (the matrix's rows are a multiple of 16 bytes); runs at the matrix's edges, and matrices
//! whose rows are not, are read narrower (8 bytes, or element by element), with zeros for
//! everything outside the matrix. A tile that lies wholly inside an aligned matrix (the
//! workgroup decides, uniformly) takes a straight path of 16-byte loads without per-run checks.

use crate::gemm::{BLOCK, Bf16Core, THREADS};
use crate::gemm_tile::{Stage, thread};
use iron_intrinsics::matrix::{Fragment, MatrixCore};

/// Sixteen bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Words16(pub [u32; 4]);

/// Eight bytes read as one access.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub struct Words8(pub [u32; 2]);

/// Elements of a 16-bit operand's K tile.
pub const HALF_TILE_K: u32 = 32;
/// Bytes of one lane's run of a 16-bit operand fragment of this gfx's instructions: 8 (gfx90a's
/// and gfx942's MFMAs, gfx1201's wave64 WMMAs), 16 (gfx950, gfx1201 wave32) or 32 (gfx1100).
const HALF_RUN_BYTES: u32 =
    <<Bf16Core as MatrixCore>::A as Fragment>::BYTES / <Bf16Core as MatrixCore>::A_RUNS;

/// Bytes per LDS row of a staged 16-bit tile: 32 elements and padding that spreads the fragment
/// reads over the LDS banks. 16-byte runs are read 8 lanes at a time (32-byte runs as two 16-byte
/// reads): rows 80 bytes (20 banks) apart put 8 consecutive rows on distinct banks, and keep rows
/// 16-byte aligned as those reads need. 8-byte runs are read 16 lanes at a time: rows 72 bytes
/// (18 banks) apart put 16 rows on distinct bank pairs; rows are then 8-byte aligned and written
/// with 8-byte stores.
pub const HALF_PITCH: u32 = HALF_TILE_K * 2 + if HALF_RUN_BYTES <= 8 { 8 } else { 16 };

/// Writes 16 bytes to a staged 16-bit tile at `p`: one 16-byte store when [`HALF_PITCH`] keeps
/// rows 16-byte aligned, else two 8-byte stores.
///
/// # Safety
/// `p` must be inside the tile's LDS buffer with 16 bytes behind it, aligned to 16 bytes (or 8
/// when the pitch is not a multiple of 16).
#[inline(always)]
pub unsafe fn store_half_run(p: *mut u8, words: [u32; 4]) {
    // SAFETY: as the caller guarantees.
    unsafe {
        if HALF_PITCH.is_multiple_of(16) {
            *(p as *mut Words16) = Words16(words);
        } else {
            *(p as *mut Words8) = Words8([words[0], words[1]]);
            *(p.add(8) as *mut Words8) = Words8([words[2], words[3]]);
        }
    }
}

/// 8-element runs each work-item moves per 16-bit tile (128 rows x 32 elements / 8 / 256).
const HALF_RUNS: usize = (BLOCK * HALF_TILE_K / 8 / THREADS) as usize;

/// A 16-bit (f16 or bf16) operand of `rows x k` elements (rows of A, or columns of B), stored
/// K-contiguous (`K_CONTIGUOUS`: element `(r, k)` at `base[r * k_total + k]`) or
/// rows-contiguous (at `base[k * rows + r]`). The workgroup stages rows `row0..row0 + 128`. The
/// layout is a type parameter so that each layout pair is its own straight-line code (a
/// run-time choice inside the loop costs scalar registers for its conditions).
pub struct HalfOperand<const K_CONTIGUOUS: bool> {
    /// The matrix's first element.
    pub base: *const u16,
    /// Rows (M for A, N for B).
    pub rows: u32,
    /// K.
    pub k: u32,
    /// The workgroup's first row.
    pub row0: u32,
}

impl<const K_CONTIGUOUS: bool> HalfOperand<K_CONTIGUOUS> {
    /// The 8 elements `(row, k..k + 8)` of a K-contiguous matrix, 0 outside it.
    ///
    /// # Safety
    /// `base` must hold `rows * k_total` elements, 16-byte aligned.
    #[inline(always)]
    unsafe fn k_run(&self, row: u32, k: u32) -> [u32; 4] {
        let line = row as usize * self.k as usize;
        if row < self.rows && k + 8 <= self.k && self.k.is_multiple_of(8) {
            // SAFETY: the run is inside the matrix and 16-byte aligned (rows of a multiple of 8
            // elements, k a multiple of 8).
            return unsafe { (*(self.base.add(line + k as usize) as *const Words16)).0 };
        }
        let element = |i: u32| {
            if row < self.rows && k + i < self.k {
                // SAFETY: inside the matrix.
                u32::from(unsafe { *self.base.add(line + (k + i) as usize) })
            } else {
                0
            }
        };
        core::array::from_fn(|w| element(2 * w as u32) | (element(2 * w as u32 + 1) << 16))
    }

    /// The 8 elements `(row..row + 8, k)` of a rows-contiguous matrix, 0 outside it.
    ///
    /// # Safety
    /// `base` must hold `rows * k_total` elements, 16-byte aligned.
    #[inline(always)]
    unsafe fn row_run(&self, row: u32, k: u32) -> [u32; 4] {
        let line = k as usize * self.rows as usize;
        if k < self.k && row + 8 <= self.rows && self.rows.is_multiple_of(8) {
            // SAFETY: inside the matrix and 16-byte aligned, as above.
            return unsafe { (*(self.base.add(line + row as usize) as *const Words16)).0 };
        }
        let element = |i: u32| {
            if k < self.k && row + i < self.rows {
                // SAFETY: inside the matrix.
                u32::from(unsafe { *self.base.add(line + (row + i) as usize) })
            } else {
                0
            }
        };
        core::array::from_fn(|w| element(2 * w as u32) | (element(2 * w as u32 + 1) << 16))
    }

    /// Whether the workgroup's tile at `k0` lies inside the matrix with every 8-element run
    /// 16-byte aligned: then every run is one 16-byte load, without checks (uniform across the
    /// workgroup).
    #[inline(always)]
    fn is_interior(&self, k0: u32) -> bool {
        let aligned = if K_CONTIGUOUS {
            self.k.is_multiple_of(8)
        } else {
            self.rows.is_multiple_of(8)
        };
        aligned && self.row0 + BLOCK <= self.rows && k0 + HALF_TILE_K <= self.k
    }

    /// Run `j` of this work-item in a tile: `(row in tile, k in tile)` of its first element.
    /// K-contiguous: 4 work-items cover a row's 32 elements. Rows-contiguous: 4 work-items cover
    /// 32 rows of one k, 16 k per group of 64 work-items (a wave64, or two wave32s) and run, so
    /// that LDS writes of a wave spread over banks.
    #[inline(always)]
    fn run_position(&self, j: usize) -> (u32, u32) {
        let t = thread();
        if K_CONTIGUOUS {
            let c = j as u32 * THREADS + t;
            (c / 4, (c % 4) * 8)
        } else {
            let (group, member) = (t / 64, t % 64);
            ((member % 4 + 4 * group) * 8, member / 4 + 16 * j as u32)
        }
    }
}

impl<const K_CONTIGUOUS: bool> Stage for HalfOperand<K_CONTIGUOUS> {
    const LDS_BYTES: u32 = BLOCK * HALF_PITCH;
    type Held = [[u32; 4]; HALF_RUNS];

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        let k0 = tile * HALF_TILE_K;
        let run = |j: usize| {
            let (r, k) = self.run_position(j);
            (self.row0 + r, k0 + k)
        };
        if self.is_interior(k0) {
            // SAFETY: every run lies inside the matrix, 16-byte aligned (is_interior).
            return core::array::from_fn(|j| unsafe {
                let (row, k) = run(j);
                let at = if K_CONTIGUOUS {
                    row as usize * self.k as usize + k as usize
                } else {
                    k as usize * self.rows as usize + row as usize
                };
                (*(self.base.add(at) as *const Words16)).0
            });
        }
        core::array::from_fn(|j| {
            let (row, k) = run(j);
            // SAFETY: as the caller guarantees.
            unsafe {
                if K_CONTIGUOUS {
                    self.k_run(row, k)
                } else {
                    self.row_run(row, k)
                }
            }
        })
    }

    #[inline(always)]
    unsafe fn store(&self, held: Self::Held, lds: *mut u8) {
        for (j, words) in held.iter().enumerate() {
            let (r, k) = self.run_position(j);
            if K_CONTIGUOUS {
                // SAFETY: row r < 128, elements k..k + 8 < 32: inside the buffer, aligned as
                // store_half_run needs.
                unsafe { store_half_run(lds.add((r * HALF_PITCH + k * 2) as usize), *words) };
            } else {
                for i in 0..8u32 {
                    let bits = (words[i as usize / 2] >> (16 * (i % 2))) as u16;
                    // SAFETY: row r + i < 128, element k < 32: inside the buffer.
                    unsafe {
                        *(lds.add(((r + i) * HALF_PITCH + k * 2) as usize) as *mut u16) = bits
                    };
                }
            }
        }
    }
}

/// A byte-coded operand (FP8 codes, or packed FP6/FP4 codes) of `rows` rows of `row_bytes`
/// bytes each, K-contiguous; K tiles of `32 * CHUNKS` bytes per row, each work-item moving
/// `CHUNKS` 16-byte chunks of a tile. LDS rows are padded by `PAD` bytes: 16 keeps them 16-byte
/// aligned (16-byte fragment reads), 8 spreads 8-byte fragment reads over the banks (as
/// [`HALF_PITCH`] does) and stores chunks as two 8-byte halves.
#[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", iron_gfx = "gfx1201"))]
pub struct CodeOperand<const CHUNKS: usize, const PAD: u32> {
    /// The first byte of row 0.
    pub base: *const u8,
    /// Rows.
    pub rows: u32,
    /// Bytes per row.
    pub row_bytes: u32,
    /// The workgroup's first row.
    pub row0: u32,
}

#[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", iron_gfx = "gfx1201"))]
impl<const CHUNKS: usize, const PAD: u32> CodeOperand<CHUNKS, PAD> {
    /// Bytes of one row's K tile.
    pub const TILE_BYTES: u32 = 32 * CHUNKS as u32;
    /// Bytes per LDS row.
    pub const PITCH: u32 = Self::TILE_BYTES + PAD;

    /// The 16 bytes at byte `offset` of row `row`, 0 outside the matrix.
    ///
    /// # Safety
    /// `base` must hold `rows * row_bytes` bytes, 16-byte aligned.
    #[inline(always)]
    unsafe fn chunk(&self, row: u32, offset: u32) -> [u32; 4] {
        if row >= self.rows || offset >= self.row_bytes {
            return [0; 4];
        }
        // SAFETY: row < rows: the row is inside the matrix.
        let line = unsafe { self.base.add(row as usize * self.row_bytes as usize) };
        let valid = self.row_bytes - offset;
        // SAFETY (all three reads): inside the row; aligned to their width because rows are a
        // multiple of it and offset is a multiple of 16.
        if valid >= 16 && self.row_bytes.is_multiple_of(16) {
            unsafe { (*(line.add(offset as usize) as *const Words16)).0 }
        } else if self.row_bytes.is_multiple_of(8) {
            let half = |h: u32| {
                if valid >= 8 * (h + 1) {
                    unsafe { (*(line.add((offset + 8 * h) as usize) as *const Words8)).0 }
                } else {
                    [0; 2]
                }
            };
            let (low, high) = (half(0), half(1));
            [low[0], low[1], high[0], high[1]]
        } else {
            let byte = |i: u32| {
                if i < valid {
                    u32::from(unsafe { *line.add((offset + i) as usize) })
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

    /// Chunk `j` of this work-item: `(row in tile, byte in the row's tile)`.
    #[inline(always)]
    fn chunk_position(j: usize) -> (u32, u32) {
        let c = j as u32 * THREADS + thread();
        let per_row = Self::TILE_BYTES / 16;
        (c / per_row, (c % per_row) * 16)
    }
}

#[cfg(any(iron_gfx = "gfx942", iron_gfx = "gfx950", iron_gfx = "gfx1201"))]
impl<const CHUNKS: usize, const PAD: u32> Stage for CodeOperand<CHUNKS, PAD> {
    const LDS_BYTES: u32 = BLOCK * Self::PITCH;
    type Held = [[u32; 4]; CHUNKS];

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        let first = tile * Self::TILE_BYTES;
        let interior = self.row_bytes.is_multiple_of(16)
            && self.row0 + BLOCK <= self.rows
            && first + Self::TILE_BYTES <= self.row_bytes;
        if interior {
            // SAFETY: every chunk lies inside the matrix, 16-byte aligned (rows of a multiple
            // of 16 bytes).
            return core::array::from_fn(|j| unsafe {
                let (r, byte) = Self::chunk_position(j);
                let at =
                    (self.row0 + r) as usize * self.row_bytes as usize + (first + byte) as usize;
                (*(self.base.add(at) as *const Words16)).0
            });
        }
        core::array::from_fn(|j| {
            let (r, byte) = Self::chunk_position(j);
            // SAFETY: as the caller guarantees.
            unsafe { self.chunk(self.row0 + r, first + byte) }
        })
    }

    #[inline(always)]
    unsafe fn store(&self, held: Self::Held, lds: *mut u8) {
        const { assert!(PAD == 8 || PAD == 16) };
        for (j, words) in held.iter().enumerate() {
            let (r, byte) = Self::chunk_position(j);
            // SAFETY: row r < 128, bytes byte..byte + 16 of its tile: inside the buffer,
            // 16-byte aligned (PAD 16) or 8-byte aligned and stored in halves (PAD 8).
            unsafe {
                let at = lds.add((r * Self::PITCH + byte) as usize);
                if PAD == 16 {
                    *(at as *mut Words16) = Words16(*words);
                } else {
                    *(at as *mut Words8) = Words8([words[0], words[1]]);
                    *(at.add(8) as *mut Words8) = Words8([words[2], words[3]]);
                }
            }
        }
    }
}

/// The E8M0 block scale code standing for 1: what rows and blocks outside the matrix get (their
/// elements are zero, and a NaN scale would make their products NaN).
pub const SCALE_ONE: u8 = 127;

/// The E8M0 scale codes of a block-scaled operand: `rows x blocks_per_row` codes, row-major
/// (blocks of 32 elements along K), staged 4 blocks (one 128-element K tile) per row: work-item
/// `r < 128` moves row `r`'s 4 codes as one word.
#[cfg(iron_gfx = "gfx950")]
pub struct ScaleOperand {
    /// The first code of row 0.
    pub base: *const u8,
    /// Rows.
    pub rows: u32,
    /// Blocks (codes) per row: K / 32.
    pub blocks_per_row: u32,
    /// The workgroup's first row.
    pub row0: u32,
}

/// Scale codes per row and K tile of gfx950's scaled MFMA kernels.
#[cfg(iron_gfx = "gfx950")]
pub const SCALES_PER_TILE: u32 = 4;

#[cfg(iron_gfx = "gfx950")]
impl Stage for ScaleOperand {
    const LDS_BYTES: u32 = BLOCK * SCALES_PER_TILE;
    type Held = u32;

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> u32 {
        let (row, block) = (self.row0 + thread(), tile * SCALES_PER_TILE);
        if thread() >= BLOCK || row >= self.rows {
            return u32::from_le_bytes([SCALE_ONE; 4]);
        }
        // SAFETY: row < rows: its codes are inside the buffer.
        let line = unsafe { self.base.add(row as usize * self.blocks_per_row as usize) };
        if block + SCALES_PER_TILE <= self.blocks_per_row && self.blocks_per_row.is_multiple_of(4) {
            // SAFETY: the four codes are inside the row and 4-byte aligned.
            return unsafe { *(line.add(block as usize) as *const u32) };
        }
        let code = |i: u32| {
            if block + i < self.blocks_per_row {
                // SAFETY: inside the row.
                unsafe { *line.add((block + i) as usize) }
            } else {
                SCALE_ONE
            }
        };
        u32::from_le_bytes([code(0), code(1), code(2), code(3)])
    }

    #[inline(always)]
    unsafe fn store(&self, held: u32, lds: *mut u8) {
        if thread() < BLOCK {
            // SAFETY: row thread() < 128 of the buffer, 4-byte aligned.
            unsafe { *(lds.add((thread() * SCALES_PER_TILE) as usize) as *mut u32) = held };
        }
    }
}

/// A block-scaled operand: its codes ([`CodeOperand`], 128-element K tiles) and their scale
/// codes ([`ScaleOperand`]), staged one after the other in LDS (scales at
/// [`MxOperand::SCALES_AT`]).
#[cfg(iron_gfx = "gfx950")]
pub struct MxOperand<const CHUNKS: usize> {
    /// The codes.
    pub codes: CodeOperand<CHUNKS, 16>,
    /// The scale codes.
    pub scales: ScaleOperand,
}

#[cfg(iron_gfx = "gfx950")]
impl<const CHUNKS: usize> MxOperand<CHUNKS> {
    /// Where the scale codes start in the operand's LDS buffer.
    pub const SCALES_AT: u32 = CodeOperand::<CHUNKS, 16>::LDS_BYTES;
}

#[cfg(iron_gfx = "gfx950")]
impl<const CHUNKS: usize> Stage for MxOperand<CHUNKS> {
    const LDS_BYTES: u32 = Self::SCALES_AT + ScaleOperand::LDS_BYTES;
    type Held = ([[u32; 4]; CHUNKS], u32);

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        // SAFETY: as the caller guarantees.
        unsafe { (self.codes.fetch(tile), self.scales.fetch(tile)) }
    }

    #[inline(always)]
    unsafe fn store(&self, held: Self::Held, lds: *mut u8) {
        // SAFETY: both parts lie in the operand's buffer.
        unsafe {
            self.codes.store(held.0, lds);
            self.scales.store(held.1, lds.add(Self::SCALES_AT as usize));
        }
    }
}
