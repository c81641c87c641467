//! How the GEMM kernels stage their operands ([`Stage`]): 16-bit matrices in either layout, and
//! byte-coded matrices (FP8, FP6, FP4 codes, with or without E8M0 block scales) stored
//! K-contiguous.
//!
//! In LDS every operand tile is K-contiguous: its 128 rows (rows of A, columns of B) one after the
//! other; a 16-bit operand in blocks of 64 puts its two K subtiles of 64 rows there instead. Tiles
//! of 64 bytes per row (16-bit, FP8, MXFP4 and decoded operands) are stored without padding, their
//! four 16-byte chunks XOR-swizzled per row ([`swizzled`]), which keeps the LDS banks free of
//! conflicts for the stores of either operand layout and for the fragment reads of every gfx (see
//! [`swizzled`]). Wider rows (MXFP8, MXFP6) are padded ([`CodeOperand::offset`]).
//!
//! Global loads are 16 bytes wide when a run of 16 bytes lies inside the matrix and is aligned
//! (the matrix's rows are a multiple of 16 bytes); runs at the matrix's edges, and matrices
//! whose rows are not, are read narrower (8 bytes, or element by element), with zeros for
//! everything outside the matrix. A tile that lies wholly inside an aligned matrix (the
//! workgroup decides, uniformly) takes a straight path of 16-byte loads without per-run checks.

use crate::gemm::{BLOCK, THREADS};
use crate::gemm_tile::{Stage, thread};
use iron_intrinsics::half::pack_halves;

/// Sixteen bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Words16(pub [u32; 4]);

/// Eight bytes read as one access.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub struct Words8(pub [u32; 2]);

/// Sixteen bytes as one 128-bit value, 16-byte aligned.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Wide(u128);

/// Reads the 16 bytes at `p` as one access. It is a 128-bit integer read, not a copy of an
/// array: what holds the words afterwards is split into registers by the compiler, which a
/// value only ever copied whole (from global memory to LDS) would not be.
///
/// # Safety
/// `p` must be readable for 16 bytes, 16-byte aligned.
#[inline(always)]
pub unsafe fn load16(p: *const u8) -> [u32; 4] {
    // SAFETY: as the caller guarantees; any 16 bytes are four valid words.
    unsafe { core::mem::transmute::<u128, [u32; 4]>((*(p as *const Wide)).0) }
}

/// Elements of a 16-bit operand's K tile in a block of [`BLOCK`] rows (of each of its K
/// subtiles in a smaller block: [`half_tile_k`]).
pub const HALF_TILE_K: u32 = 32;

/// Rows of [`SWIZZLED_ROW_BYTES`] an LDS buffer of a 16-bit operand holds, whatever the block:
/// a block of `b` rows holds `TILE_LINES / b` K subtiles of [`HALF_TILE_K`] elements, one
/// after the other.
const TILE_LINES: u32 = BLOCK;

/// Elements of a 16-bit operand's K tile in a block of `block` rows: [`HALF_TILE_K`] per K
/// subtile.
pub const fn half_tile_k(block: u32) -> u32 {
    HALF_TILE_K * (TILE_LINES / block)
}

/// Bytes per LDS row of a swizzled tile ([`swizzled`]): a K tile of 32 16-bit elements or 64
/// byte codes.
pub const SWIZZLED_ROW_BYTES: u32 = 64;

/// The LDS offset of byte `byte` of row `row` in a tile of [`SWIZZLED_ROW_BYTES`]-byte rows
/// without padding, whose 16-byte chunks are XOR-swizzled: chunk `c` of row `r` is stored at
/// chunk `c ^ (((r >> 1) ^ (r >> 3)) & 3)` of the row. A 16-byte access touches 8 banks (a
/// quarter of a 128-byte bank line, which holds two rows), and the LDS serves 8 such lanes at a
/// time; then:
/// - any 8 consecutive rows from a multiple of 8, read at one logical chunk (the fragment reads
///   of every gfx: lanes `l % 16` are rows), fall on 8 distinct bank quarters ((r & 1) picks the
///   half of the line, `(r >> 1) & 3` the chunk);
/// - two whole rows (the K-contiguous stores: 4 lanes a row) fill a bank line;
/// - the rows-contiguous stores (a dword of 2 elements in each of rows `i` and `i + 1`, `i`
///   even, 16 lanes at a time) write those two rows of four 8-row blocks at 4 consecutive
///   pairs of K: the rows fill one half of the bank line each, and `r >> 3` spreads the four
///   blocks over the four chunks of the half line.
///
/// Runs that stay inside a 16-byte chunk keep their bytes in order.
#[inline(always)]
pub const fn swizzled(row: u32, byte: u32) -> u32 {
    (row * SWIZZLED_ROW_BYTES + byte) ^ ((((row >> 1) ^ (row >> 3)) & 3) << 4)
}

/// Writes 16 bytes to a staged tile at `p` as one access.
///
/// # Safety
/// `p` must be inside the tile's LDS buffer with 16 bytes behind it, aligned to 16 bytes.
#[inline(always)]
pub unsafe fn store16(p: *mut u8, words: [u32; 4]) {
    // SAFETY: as the caller guarantees.
    unsafe { *(p as *mut Words16) = Words16(words) };
}

/// 8-element runs each work-item moves per 16-bit tile (128 lines x 32 elements / 8 / 256).
const HALF_RUNS: usize = (TILE_LINES * HALF_TILE_K / 8 / THREADS) as usize;

/// A 16-bit (f16 or bf16) operand of `rows x k` elements (rows of A, or columns of B), stored
/// K-contiguous (`K_CONTIGUOUS`: element `(r, k)` at `base[r * k_total + k]`) or
/// rows-contiguous (at `base[k * rows + r]`). The workgroup stages rows `row0..row0 + ROWS`
/// (128 or 64; a block of 64 stages K tiles of 64 elements, as two K subtiles of 32). The
/// layout is a type parameter so that each layout pair is its own straight-line code (a
/// run-time choice inside the loop costs scalar registers for its conditions).
pub struct HalfOperand<const K_CONTIGUOUS: bool, const ROWS: u32 = BLOCK> {
    /// The matrix's first element.
    pub base: *const u16,
    /// Rows (M for A, N for B).
    pub rows: u32,
    /// K.
    pub k: u32,
    /// The workgroup's first row.
    pub row0: u32,
}

impl<const K_CONTIGUOUS: bool, const ROWS: u32> HalfOperand<K_CONTIGUOUS, ROWS> {
    /// Elements of a K tile.
    const TILE_K: u32 = half_tile_k(ROWS);

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
        // Loads clamped into the matrix, their values discarded outside it: a load under its
        // own condition would take a branch and two exec mask updates per element. The matrix
        // is not empty (a workgroup exists only for m, n >= 1, and fetches only for k >= 1).
        let line = row.min(self.rows - 1) as usize * self.k as usize;
        let element = |i: u32| {
            // SAFETY: a clamped row and K index: inside the matrix.
            let value =
                u32::from(unsafe { *self.base.add(line + (k + i).min(self.k - 1) as usize) });
            if row < self.rows && k + i < self.k {
                value
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
        // Clamped loads, as in k_run.
        let line = k.min(self.k - 1) as usize * self.rows as usize;
        let element = |i: u32| {
            // SAFETY: a clamped K index and row: inside the matrix.
            let value =
                u32::from(unsafe { *self.base.add(line + (row + i).min(self.rows - 1) as usize) });
            if k < self.k && row + i < self.rows {
                value
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
        aligned && self.row0 + ROWS <= self.rows && k0 + Self::TILE_K <= self.k
    }

    /// Run `j` of this work-item in the LDS buffer: `(line, k in line)` of its first element,
    /// lines of [`HALF_TILE_K`] elements ([`Self::in_tile`] says which row and K of the tile).
    /// K-contiguous: 4 work-items cover a line's 32 elements. Rows-contiguous: 4 work-items
    /// cover 32 lines, each group of 64 work-items (a wave64, or two wave32s) its own 32 lines
    /// at every k; a work-item's two runs are the same 8 lines at two consecutive k (`k + j`,
    /// `k` even), so that it holds each line's pair of elements, written as one dword
    /// ([`swizzled`]).
    #[inline(always)]
    fn run_position(&self, j: usize) -> (u32, u32) {
        let t = thread();
        if K_CONTIGUOUS {
            let c = j as u32 * THREADS + t;
            (c / 4, (c % 4) * 8)
        } else {
            let (group, member) = (t / 64, t % 64);
            ((member % 4 + 4 * group) * 8, 2 * (member / 4) + j as u32)
        }
    }

    /// The row and K, in the tile, of element `k` of LDS line `line`: K subtile `line / ROWS`
    /// holds the rows in order.
    #[inline(always)]
    fn in_tile((line, k): (u32, u32)) -> (u32, u32) {
        if ROWS == TILE_LINES {
            (line, k)
        } else {
            (line % ROWS, k + HALF_TILE_K * (line / ROWS))
        }
    }
}

/// Rows between a work-item's consecutive K-contiguous runs (or chunks) of 64-byte rows: a
/// multiple of 32, so that its runs are laid out alike ([`swizzled`]).
const RUN_ROWS: u32 = THREADS / 4;

const _: () = assert!(
    HALF_RUNS == 2,
    "the rows-contiguous store pairs its runs' chunks"
);
const _: () = assert!(RUN_ROWS.is_multiple_of(32));

impl<const K_CONTIGUOUS: bool, const ROWS: u32> Stage for HalfOperand<K_CONTIGUOUS, ROWS> {
    const LDS_BYTES: u32 = TILE_LINES * SWIZZLED_ROW_BYTES;
    const ROWS: u32 = ROWS;
    const K_SUBTILES: u32 = {
        assert!(ROWS == BLOCK || ROWS == BLOCK / 2);
        TILE_LINES / ROWS
    };
    type Held = [[u32; 4]; HALF_RUNS];

    #[inline(always)]
    fn is_full(&self, k_tiles: u32) -> bool {
        k_tiles == 0 || self.is_interior((k_tiles - 1) * Self::TILE_K)
    }

    #[inline(always)]
    unsafe fn fetch_full(&self, tile: u32) -> Self::Held {
        let k0 = tile * Self::TILE_K;
        // SAFETY: every run lies inside the matrix, 16-byte aligned (is_interior holds for
        // this tile, as the caller guarantees).
        core::array::from_fn(|j| unsafe {
            let (r, k) = Self::in_tile(self.run_position(j));
            let (row, k) = (self.row0 + r, k0 + k);
            let at = if K_CONTIGUOUS {
                row as usize * self.k as usize + k as usize
            } else {
                k as usize * self.rows as usize + row as usize
            };
            load16(self.base.add(at) as *const u8)
        })
    }

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        let k0 = tile * Self::TILE_K;
        if self.is_interior(k0) {
            // SAFETY: the tile is inside the matrix (is_interior).
            return unsafe { self.fetch_full(tile) };
        }
        core::array::from_fn(|j| {
            let (r, k) = Self::in_tile(self.run_position(j));
            let (row, k) = (self.row0 + r, k0 + k);
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
        if K_CONTIGUOUS {
            // Run j is 64 j lines below run 0: laid out alike, a constant offset away.
            let (r, k) = self.run_position(0);
            let first = swizzled(r, k * 2);
            for (j, words) in held.iter().enumerate() {
                let at = first + j as u32 * RUN_ROWS * SWIZZLED_ROW_BYTES;
                // SAFETY: line r + 64 j < 128, elements k..k + 8 < 32 (one 16-byte chunk):
                // inside the buffer, 16-byte aligned.
                unsafe { store16(lds.add(at as usize), *words) };
            }
            return;
        }
        // Run j holds element (r + i, k + j) of lines r..r + 8 (r a multiple of 8, k even): the
        // dword of line r + i at elements k, k + 1 is half i % 2 of word i / 2 of both runs. It
        // is at swizzled(r + i, 2 k) = r_line(i) + (2 k ^ ((((i >> 1) ^ (r >> 3)) & 3) << 4)):
        // rows i and i + 1 (i even) share the XOR pattern, 64 bytes apart (one two-address
        // write).
        let (r, k) = self.run_position(0);
        let line = |p: u32| r * SWIZZLED_ROW_BYTES + ((2 * k) ^ (((p ^ (r >> 3)) & 3) << 4));
        let [run0, run1] = held;
        for i in 0..8u32 {
            let (low, high) = (run0[i as usize / 2], run1[i as usize / 2]);
            let pair = if i % 2 == 0 {
                pack_halves::<0>(low, high)
            } else {
                pack_halves::<1>(low, high)
            };
            let at = line(i >> 1) + i * SWIZZLED_ROW_BYTES;
            // SAFETY: line r + i < 128, elements k, k + 1 < 32: inside the buffer, 4-byte aligned.
            unsafe { *(lds.add(at as usize) as *mut u32) = pair };
        }
    }
}

/// A byte-coded operand (FP8 codes, or packed FP6/FP4 codes) of `rows` rows of `row_bytes`
/// bytes each, K-contiguous; K tiles of `32 * CHUNKS` bytes per row, each work-item moving
/// `CHUNKS` 16-byte chunks of a tile. LDS rows ([`CodeOperand::offset`]): 64 bytes swizzled
/// ([`swizzled`]), 96 bytes (MXFP6) with their four 24-byte scale blocks permuted
/// ([`fp6_block_swizzle`]), 128 bytes (MXFP8) padded by 16.
#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
pub struct CodeOperand<const CHUNKS: usize, const ROWS: u32 = BLOCK> {
    /// The first byte of row 0.
    pub base: *const u8,
    /// Rows.
    pub rows: u32,
    /// Bytes per row.
    pub row_bytes: u32,
    /// The workgroup's first row.
    pub row0: u32,
}

/// Bytes of an MXFP6 K tile's row (128 codes).
#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
const FP6_ROW_BYTES: u32 = 96;
/// Bytes of an FP6 scale block (32 codes): what one lane of the scaled MFMA reads.
#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
const FP6_BLOCK_BYTES: u32 = 24;

/// Where the 24-byte blocks of row `row` of an MXFP6 tile go: block `b` at block `b ^
/// fp6_block_swizzle(row)` of the row (rows 96 bytes apart, unpadded). A block is read as 16 + 8
/// bytes (8 then 16 lanes at a time) and written as 16-byte thirds of a block pair (8 lanes:
/// 4 rows); then:
/// - 8 rows from a multiple of 8 at one block (16-byte reads): rows `r` and `r + 4`, whose
///   offsets modulo the 128-byte bank line are equal, get blocks 2 apart (48 bytes), and all 8
///   runs fall on distinct quarter lines shifted by a common 8 bytes;
/// - 16 rows from a multiple of 16 (8-byte reads): the 4 row offsets modulo 128 (0, 96, 64, 32)
///   meet 4 distinct block positions (0, 24, 48, 72 bytes), 16 distinct 8-byte slots;
/// - the stores of 4 consecutive rows' block pairs (48-byte aligned, the pair's blocks swapped
///   when the swizzle is odd) fill a bank line;
/// - rows 16, 32 and 48 apart (a wave's row tiles) differ by `(row >> 4) & 3`: their reads are
///   not a constant distance apart, so they are not fused into two-address reads, which would
///   put rows a multiple of 128 bytes apart in one 8-lane group.
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
#[inline(always)]
pub const fn fp6_block_swizzle(row: u32) -> u32 {
    ((((row >> 2) & 1) << 1) | ((row >> 3) & 1)) ^ ((row >> 4) & 3)
}

#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
impl<const CHUNKS: usize, const ROWS: u32> CodeOperand<CHUNKS, ROWS> {
    /// Bytes of one row's K tile in a block of [`BLOCK`] rows (of each K subtile in a block of
    /// 64, which takes [`Self::K_TILE_BYTES`] per K tile).
    pub const TILE_BYTES: u32 = 32 * CHUNKS as u32;
    /// Bytes of one row's K tile: [`Self::TILE_BYTES`] per K subtile.
    pub const K_TILE_BYTES: u32 = Self::TILE_BYTES * (BLOCK / ROWS);
    /// Bytes per LDS row: the tile's bytes, plus 16 of padding for 128-byte rows (16-byte
    /// aligned, 144 bytes apart: 8 consecutive rows' 16-byte runs on distinct banks).
    pub const PITCH: u32 = if Self::TILE_BYTES <= FP6_ROW_BYTES {
        Self::TILE_BYTES
    } else {
        Self::TILE_BYTES + 16
    };
    /// Bytes within which runs keep their order in LDS: a fragment run must lie in one.
    #[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
    pub const UNIT: u32 = match Self::TILE_BYTES {
        SWIZZLED_ROW_BYTES => 16,
        FP6_ROW_BYTES => FP6_BLOCK_BYTES,
        _ => Self::TILE_BYTES,
    };

    /// The LDS offset of byte `byte` of row `row` of a staged tile (runs that stay in a
    /// [`CodeOperand::UNIT`] stay in order). Rows are laid out alike from every multiple of 64.
    #[inline(always)]
    pub const fn offset(row: u32, byte: u32) -> u32 {
        match Self::TILE_BYTES {
            SWIZZLED_ROW_BYTES => swizzled(row, byte),
            #[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
            FP6_ROW_BYTES => {
                let block = (byte / FP6_BLOCK_BYTES) ^ fp6_block_swizzle(row);
                row * FP6_ROW_BYTES + block * FP6_BLOCK_BYTES + byte % FP6_BLOCK_BYTES
            }
            _ => row * Self::PITCH + byte,
        }
    }

    /// [`CodeOperand::offset`] of byte `byte` of row `16 t + row` (`row < 16`). Swizzled
    /// rows: row tiles two apart (32 rows) are laid out alike, a constant offset apart.
    #[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
    #[inline(always)]
    pub const fn row_tile_offset(t: u32, row: u32, byte: u32) -> u32 {
        if Self::TILE_BYTES == SWIZZLED_ROW_BYTES {
            t / 2 * 32 * Self::PITCH + swizzled(t % 2 * 16 + row, byte)
        } else {
            Self::offset(16 * t + row, byte)
        }
    }

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

    /// Whether K tile `tile` of the workgroup's rows lies inside the matrix with every chunk
    /// 16-byte aligned (uniform across the workgroup).
    #[inline(always)]
    fn is_interior(&self, tile: u32) -> bool {
        self.row_bytes.is_multiple_of(16)
            && self.row0 + ROWS <= self.rows
            && (tile + 1) * Self::K_TILE_BYTES <= self.row_bytes
    }

    /// The row and byte, in the tile, of byte `byte` of LDS line `line`: K subtile
    /// `line / ROWS` holds the rows in order.
    #[inline(always)]
    fn in_tile((line, byte): (u32, u32)) -> (u32, u32) {
        if ROWS == BLOCK {
            (line, byte)
        } else {
            (line % ROWS, byte + Self::TILE_BYTES * (line / ROWS))
        }
    }

    /// Chunk `j` of this work-item: `(line, byte in the line)` ([`Self::in_tile`] says which
    /// row and byte of the tile). MXFP6: two work-items a row, each a pair of blocks (48
    /// bytes); else consecutive work-items take consecutive chunks.
    #[inline(always)]
    fn chunk_position(j: usize) -> (u32, u32) {
        if Self::TILE_BYTES == FP6_ROW_BYTES {
            let t = thread();
            return (t / 2, 2 * FP6_BLOCK_BYTES * (t % 2) + 16 * j as u32);
        }
        let c = j as u32 * THREADS + thread();
        let per_row = Self::TILE_BYTES / 16;
        (c / per_row, (c % per_row) * 16)
    }
}

#[cfg(any(
    iron_gfx = "gfx942",
    iron_gfx = "gfx950",
    iron_gfx = "gfx1201",
    not(target_arch = "amdgpu")
))]
impl<const CHUNKS: usize, const ROWS: u32> Stage for CodeOperand<CHUNKS, ROWS> {
    const LDS_BYTES: u32 = BLOCK * Self::PITCH;
    const ROWS: u32 = ROWS;
    const K_SUBTILES: u32 = {
        assert!(ROWS == BLOCK || (ROWS == BLOCK / 2 && Self::TILE_BYTES == SWIZZLED_ROW_BYTES));
        BLOCK / ROWS
    };
    type Held = [[u32; 4]; CHUNKS];

    #[inline(always)]
    fn is_full(&self, k_tiles: u32) -> bool {
        k_tiles == 0 || self.is_interior(k_tiles - 1)
    }

    #[inline(always)]
    unsafe fn fetch_full(&self, tile: u32) -> Self::Held {
        let first = tile * Self::K_TILE_BYTES;
        // SAFETY: every chunk lies inside the matrix, 16-byte aligned (rows of a multiple of
        // 16 bytes; is_interior holds for this tile, as the caller guarantees).
        core::array::from_fn(|j| unsafe {
            let (r, byte) = Self::in_tile(Self::chunk_position(j));
            let at = (self.row0 + r) as usize * self.row_bytes as usize + (first + byte) as usize;
            load16(self.base.add(at))
        })
    }

    #[inline(always)]
    unsafe fn fetch(&self, tile: u32) -> Self::Held {
        let first = tile * Self::K_TILE_BYTES;
        if self.is_interior(tile) {
            // SAFETY: the tile is inside the matrix (is_interior).
            return unsafe { self.fetch_full(tile) };
        }
        core::array::from_fn(|j| {
            let (r, byte) = Self::in_tile(Self::chunk_position(j));
            // SAFETY: as the caller guarantees.
            unsafe { self.chunk(self.row0 + r, first + byte) }
        })
    }

    #[inline(always)]
    unsafe fn store(&self, held: Self::Held, lds: *mut u8) {
        #[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
        if Self::TILE_BYTES == FP6_ROW_BYTES {
            // The work-item's block pair goes to pair position `h ^ (swizzle >> 1)` of its row,
            // its two blocks swapped when the swizzle is odd.
            let (r, byte) = Self::chunk_position(0);
            let swizzle = fp6_block_swizzle(r);
            let words = held.as_flattened();
            let half = words.len() / 2;
            let pair = (byte / (2 * FP6_BLOCK_BYTES)) ^ (swizzle >> 1);
            let at = r * FP6_ROW_BYTES + pair * 2 * FP6_BLOCK_BYTES;
            for j in 0..CHUNKS {
                let chunk: [u32; 4] = core::array::from_fn(|w| {
                    let w = 4 * j + w;
                    if swizzle & 1 == 1 {
                        words[(w + half) % words.len()]
                    } else {
                        words[w]
                    }
                });
                // SAFETY: row r < 128, a 48-byte aligned block pair of it: inside the buffer,
                // 16-byte aligned.
                unsafe { store16(lds.add((at + 16 * j as u32) as usize), chunk) };
            }
            return;
        }
        // Chunk j is THREADS / per_row rows below chunk 0 (64 for 64-byte rows, 32 for 128):
        // laid out alike, a constant offset away.
        let rows_apart = THREADS / (Self::TILE_BYTES / 16);
        const {
            assert!(
                Self::TILE_BYTES == FP6_ROW_BYTES
                    || (THREADS / (Self::TILE_BYTES / 16)).is_multiple_of(32)
            )
        };
        let (r, byte) = Self::chunk_position(0);
        let first = Self::offset(r, byte);
        for (j, words) in held.iter().enumerate() {
            let at = first + j as u32 * rows_apart * Self::PITCH;
            // SAFETY: row r + rows_apart * j < 128, bytes byte..byte + 16 of its tile (one
            // 16-byte chunk of a swizzled or padded row): inside the buffer, 16-byte aligned.
            unsafe { store16(lds.add(at as usize), *words) };
        }
    }
}

/// The E8M0 block scale code standing for 1: what rows and blocks outside the matrix get (their
/// elements are zero, and a NaN scale would make their products NaN).
pub const SCALE_ONE: u8 = 127;

/// The E8M0 scale codes of a block-scaled operand: `rows x blocks_per_row` codes, row-major
/// (blocks of 32 elements along K), staged 4 blocks (one 128-element K tile) per row: work-item
/// `r < 128` moves row `r`'s 4 codes as one word.
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
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
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub const SCALES_PER_TILE: u32 = 4;

#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
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
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub struct MxOperand<const CHUNKS: usize> {
    /// The codes.
    pub codes: CodeOperand<CHUNKS>,
    /// The scale codes.
    pub scales: ScaleOperand,
}

#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
impl<const CHUNKS: usize> MxOperand<CHUNKS> {
    /// Where the scale codes start in the operand's LDS buffer.
    pub const SCALES_AT: u32 = CodeOperand::<CHUNKS>::LDS_BYTES;
}

#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
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
