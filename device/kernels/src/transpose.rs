//! Matrix transpose: `dst[c][r] = src[r][c]` for a row-major `[rows, cols]` source and a
//! row-major `[cols, rows]` destination, bit for bit.
//!
//! - `transpose_b32(src, dst, rows, cols)`: any 4-byte element type (u32; f32 and i32 as their
//!   bits);
//! - `transpose_b16(src, dst, rows, cols)`: any 2-byte element type (u16; f16 and bf16 as their
//!   bits).
//!
//! Any shape (with `rows = 0` or `cols = 0` nothing is written); `dst` must not overlap `src`.
//!
//! Tiles: the matrix is cut into square tiles of `T` rows and columns, `T = 8 * V` with `V` the
//! elements in 16 bytes (T = 32 for 4-byte, 64 for 2-byte elements). A workgroup reads a tile
//! with 16-byte loads along source rows (8 work-items per tile row), writes it to LDS, and reads
//! it back by columns to store 16-byte runs along destination rows (each work-item takes `V`
//! consecutive source rows of one LDS word column: one destination row for 4-byte elements, two
//! for 2-byte ones). Accesses are 16 bytes wide when `cols` (loads) or `rows` (stores) is a
//! multiple of `V`, element by element otherwise; tiles at the right and bottom edges are partial.
//!
//! LDS layout: a tile row is 32 words (32 4-byte or 64 2-byte elements) held as 8 chunks of 16
//! bytes, rows packed with no padding; chunk `q` of tile row `r` sits at chunk `q ^ s(r)` of that
//! row, with the swizzle `s(r) = (r / V) ^ (r % V)` (a value below 8). LDS has 32 banks of 4
//! bytes, each serving one distinct word per cycle to a group of lanes (32 for 4-byte accesses, 8
//! for 16-byte ones). A write is one 16-byte access per work-item, and the 8 work-items of a
//! group write the 8 chunks of one tile row: 32 different banks whatever the swizzle. A read is
//! one 4-byte access per element row `p * V + i` (`i < V`), and the 32 work-items of a group take
//! 4 word columns of one chunk `c` and the 8 values of `p`: they hit chunks `c ^ p ^ i`, 8
//! different chunks of 4 words, so 32 different banks. Neither phase has bank conflicts, and
//! every LDS instruction serves one address per work-item (no two-address `ds_read2`/`ds_write2`
//! forms, which move two words per lane).
//!
//! `transpose_blocks_b32` and `transpose_blocks_b16` take matrices whose sides are multiples of 64
//! with one 64 x 64 block per workgroup and no bounds checks or loops (see each kernel).
//!
//! Launch: 1-D workgroups of up to 256 work-items, a multiple of 8 (256 is best: one pass per
//! phase for 4-byte tiles); workgroup `(x, y)` of the grid takes tile column `x` and tile row `y`
//! and strides by the grid, so any grid works (one workgroup per tile, `ceil(cols / T)` by
//! `ceil(rows / T)`, is the natural one). Dynamic LDS: at least 4096 bytes (`transpose_b32`) or 8192
//! bytes (`transpose_b16`), 16-byte aligned. Buffers must be 16-byte aligned (device allocations are).

use iron_intrinsics::kernel;
use {
    crate::dtype::{load, store},
    iron_intrinsics::{
        id::{
            grid_size_y, num_workgroups_x, workgroup_id_x, workgroup_id_y, workgroup_size_x,
            workitem_id_x,
        },
        lds,
        sync::workgroup_barrier,
    },
};

/// Work-items per workgroup of the whole-block kernels (one LDS word column of a tile's chunk
/// row each in the read phase).
pub const BLOCK_THREADS: u32 = 256;
/// Tiles per side of a whole-block kernel's block: 2 x 2 tiles of 32 (4-byte elements), one of
/// 64 (2-byte elements), so that every block is 64 x 64 elements.
pub const BLOCK_SIDE: u32 = 64;
/// Dynamic LDS of `transpose_blocks_b32` (4 tiles of 4096 bytes, each followed by 16 bytes of
/// padding).
pub const BLOCKS_B32_LDS: u32 = 4 * (4096 + 16);
/// Dynamic LDS of `transpose_blocks_b16` (1 tile of 8192 bytes and 16 bytes of padding).
pub const BLOCKS_B16_LDS: u32 = 8192 + 16;

/// Work-items per tile row in the load phase (8 x 16 bytes = a 32-word tile row).
const ITEMS_PER_ROW: u32 = 8;
/// Words in a tile row.
const ROW_WORDS: u32 = 32;
/// Words in a 16-byte chunk.
const CHUNK_WORDS: u32 = 4;

/// 16 bytes of a tile in LDS, aligned so that a chunk moves with one 16-byte LDS access.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct LdsChunk([u32; 4]);

/// The LDS chunk holding chunk `q` of tile row `row`, for tiles of `v`-element chunks.
#[inline(always)]
fn lds_chunk(row: u32, q: u32, v: u32) -> usize {
    let swizzle = (row / v) ^ (row % v);
    (row * ITEMS_PER_ROW + (q ^ swizzle)) as usize
}

/// An element type moved by its bits: 4 or 2 bytes.
trait Element: Copy {
    /// The element's bits.
    fn bits(self) -> u32;
    /// Element `j` of a 4-byte word holding `4 / size` elements, the first in the low bits.
    fn from_word(word: u32, j: usize) -> Self;
}

impl Element for u32 {
    #[inline(always)]
    fn bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_word(word: u32, _j: usize) -> Self {
        word
    }
}

impl Element for u16 {
    #[inline(always)]
    fn bits(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn from_word(word: u32, j: usize) -> Self {
        (word >> (16 * j)) as u16
    }
}

/// The shape of a transpose and the layout of its tiles: `V` elements in 16 bytes, `D` elements
/// in a word.
#[derive(Clone, Copy)]
struct Tiles<E, const V: usize, const D: usize> {
    src: *const E,
    dst: *mut E,
    rows: u32,
    cols: u32,
}

impl<E: Element, const V: usize, const D: usize> Tiles<E, V, D> {
    /// Tile rows and columns (`T`).
    const T: u32 = 8 * V as u32;

    /// The 4 words of source row `row`, columns `col..col + V` (zero beyond the matrix).
    #[inline(always)]
    fn read_chunk(&self, row: u32, col: u32) -> [u32; 4] {
        if row >= self.rows {
            return [0; 4];
        }
        // SAFETY: row < rows; src holds rows * cols elements.
        let src_row = unsafe { self.src.add(row as usize * self.cols as usize) };
        let elements: [E; V] = if self.cols.is_multiple_of(V as u32) {
            if col >= self.cols {
                return [0; 4];
            }
            // SAFETY: col..col + V lies in the row (cols is a multiple of V and col < cols),
            // which starts 16-byte aligned.
            unsafe { load::<E, V>(src_row.add(col as usize), 0) }
        } else {
            core::array::from_fn(|i| {
                let c = col + i as u32;
                // SAFETY: c < cols, inside the row.
                if c < self.cols {
                    unsafe { *src_row.add(c as usize) }
                } else {
                    E::from_word(0, 0)
                }
            })
        };
        core::array::from_fn(|k| {
            (0..D).fold(0, |word, j| {
                word | (elements[k * D + j].bits() << (32 / D as u32 * j as u32))
            })
        })
    }

    /// Writes `V` elements to destination row `row`, columns `col..col + V` (those inside the
    /// matrix).
    #[inline(always)]
    fn write_run(&self, row: u32, col: u32, elements: [E; V]) {
        if row >= self.cols {
            return;
        }
        // SAFETY: row < cols; dst holds cols * rows elements.
        let dst_row = unsafe { self.dst.add(row as usize * self.rows as usize) };
        if self.rows.is_multiple_of(V as u32) {
            if col < self.rows {
                // SAFETY: col..col + V lies in the row (rows is a multiple of V, col < rows),
                // which starts 16-byte aligned.
                unsafe { store::<E, V>(dst_row.add(col as usize), 0, elements) };
            }
        } else {
            for (i, &e) in elements.iter().enumerate() {
                let c = col + i as u32;
                if c < self.rows {
                    // SAFETY: c < rows, inside the row.
                    unsafe { *dst_row.add(c as usize) = e };
                }
            }
        }
    }

    /// Transposes tile (`tile_row`, `tile_col`) through `lds`. Workgroup-wide.
    #[inline(always)]
    fn tile(&self, tile_row: u32, tile_col: u32, lds: *mut LdsChunk) {
        let (first, step) = (workitem_id_x(), workgroup_size_x());
        let (row0, col0) = (tile_row * Self::T, tile_col * Self::T);
        let v = V as u32;
        let mut slot = first;
        while slot < Self::T * ITEMS_PER_ROW {
            let (r, q) = (slot / ITEMS_PER_ROW, slot % ITEMS_PER_ROW);
            let words = self.read_chunk(row0 + r, col0 + q * v);
            // SAFETY: r < T and q < 8: inside the tile's LDS.
            unsafe { *lds.add(lds_chunk(r, q, v)) = LdsChunk(words) };
            slot += step;
        }
        workgroup_barrier();
        let mut slot = first;
        while slot < ROW_WORDS * ITEMS_PER_ROW {
            let (w, p) = (slot / ITEMS_PER_ROW, slot % ITEMS_PER_ROW);
            let words: [u32; V] = core::array::from_fn(|i| {
                let chunk = lds_chunk(p * v + i as u32, w / CHUNK_WORDS, v);
                // SAFETY: p * V + i < T and w / 4 < 8: inside the tile's LDS.
                unsafe { (*lds.add(chunk)).0[(w % CHUNK_WORDS) as usize] }
            });
            for j in 0..D {
                let run: [E; V] = core::array::from_fn(|i| E::from_word(words[i], j));
                self.write_run(col0 + w * D as u32 + j as u32, row0 + p * v, run);
            }
            slot += step;
        }
        workgroup_barrier();
    }

    /// Transposes the `SUB x SUB` tiles of this workgroup's block, tile rows and columns from
    /// `workgroup_id_y() * SUB` and `workgroup_id_x() * SUB`, with a workgroup of exactly
    /// [`BLOCK_THREADS`] work-items and every tile whole (`rows` and `cols` multiples of
    /// `SUB * T`): the loads and LDS writes of every tile (LLVM issues the loads first), one
    /// barrier, then every read and store, with no bounds checks. `lds` holds `SUB * SUB` tiles. Workgroup-wide.
    #[inline(always)]
    fn whole_block<const SUB: usize>(&self, lds: *mut LdsChunk) {
        let t = workitem_id_x();
        let v = V as u32;
        // One chunk of padding after each tile: tiles a multiple of 256 bytes apart would let
        // LLVM pair reads of two tiles into one `ds_read2st64_b32`, whose two addresses per lane
        // then fall in the same bank.
        let tile_chunks = (Self::T * ITEMS_PER_ROW) as usize + 1;
        let origin = |s: usize| {
            let tile_row = workgroup_id_y() * SUB as u32 + (s / SUB) as u32;
            let tile_col = workgroup_id_x() * SUB as u32 + (s % SUB) as u32;
            (tile_row * Self::T, tile_col * Self::T)
        };
        // Load slots per tile: T rows of 8 chunks over the block (1 for 4-byte, 2 for 2-byte
        // elements).
        let loads = V / 4;
        for s in 0..SUB * SUB {
            let (row0, col0) = origin(s);
            for k in 0..loads {
                let slot = t + k as u32 * BLOCK_THREADS;
                let (r, q) = (slot / ITEMS_PER_ROW, slot % ITEMS_PER_ROW);
                // SAFETY: row0 + r < rows and col0 + q * V + V <= cols (whole tiles); src holds
                // rows * cols elements and its rows start 16-byte aligned (cols is a multiple
                // of V).
                let elements: [E; V] = unsafe {
                    load::<E, V>(
                        self.src.add(
                            (row0 + r) as usize * self.cols as usize + (col0 + q * v) as usize,
                        ),
                        0,
                    )
                };
                let words = core::array::from_fn(|w| {
                    (0..D).fold(0, |word, j| {
                        word | (elements[w * D + j].bits() << (32 / D as u32 * j as u32))
                    })
                });
                // SAFETY: tile s of the SUB * SUB tiles lds holds; r < T, q < 8.
                unsafe { *lds.add(s * tile_chunks + lds_chunk(r, q, v)) = LdsChunk(words) };
            }
        }
        workgroup_barrier();
        let (w, p) = (t / ITEMS_PER_ROW, t % ITEMS_PER_ROW);
        for s in 0..SUB * SUB {
            let (row0, col0) = origin(s);
            let column: [u32; V] = core::array::from_fn(|i| {
                let chunk = s * tile_chunks + lds_chunk(p * v + i as u32, w / CHUNK_WORDS, v);
                // SAFETY: p * V + i < T and w / 4 < 8: inside tile s.
                unsafe { (*lds.add(chunk)).0[(w % CHUNK_WORDS) as usize] }
            });
            for j in 0..D {
                let run: [E; V] = core::array::from_fn(|i| E::from_word(column[i], j));
                let dst_row = col0 + w * D as u32 + j as u32;
                // SAFETY: dst_row < cols and row0 + p * V + V <= rows (whole tiles); dst holds
                // cols * rows elements and its rows start 16-byte aligned (rows is a multiple
                // of V).
                unsafe {
                    store::<E, V>(
                        self.dst
                            .add(dst_row as usize * self.rows as usize + (row0 + p * v) as usize),
                        0,
                        run,
                    )
                };
            }
        }
    }

    /// Transposes every tile this workgroup owns.
    #[inline(always)]
    fn run(&self) {
        let lds = lds::dynamic::<LdsChunk>();
        let (tile_rows, tile_cols) = (self.rows.div_ceil(Self::T), self.cols.div_ceil(Self::T));
        // Workgroups are 1-D, so the grid's work-items in y are its workgroups in y (this avoids
        // the 16-bit `workgroup_size_y` field, which gfx12 reads with a vector load).
        let (grid_cols, grid_rows) = (num_workgroups_x(), grid_size_y());
        let mut tile_row = workgroup_id_y();
        while tile_row < tile_rows {
            let mut tile_col = workgroup_id_x();
            while tile_col < tile_cols {
                self.tile(tile_row, tile_col, lds);
                tile_col += grid_cols;
            }
            tile_row += grid_rows;
        }
    }
}

/// Transposes a `[rows, cols]` matrix of 4-byte elements; see the module docs.
#[kernel(max_threads = 256)]
pub fn transpose_b32(src: *const u32, dst: *mut u32, rows: u32, cols: u32) {
    Tiles::<u32, 4, 1> {
        src,
        dst,
        rows,
        cols,
    }
    .run();
}

/// Transposes a `[rows, cols]` matrix of 2-byte elements; see the module docs.
#[kernel(max_threads = 256)]
pub fn transpose_b16(src: *const u16, dst: *mut u16, rows: u32, cols: u32) {
    Tiles::<u16, 8, 2> {
        src,
        dst,
        rows,
        cols,
    }
    .run();
}

/// Transposes a `[rows, cols]` matrix of 4-byte elements whose `rows` and `cols` are multiples of
/// [`BLOCK_SIDE`] (64): workgroup `(x, y)` of a `(cols / 64, rows / 64)` grid takes the 64 x 64
/// block at column `64 x` and row `64 y`, as 2 x 2 tiles of 32, with exactly [`BLOCK_THREADS`]
/// work-items and [`BLOCKS_B32_LDS`] bytes of dynamic LDS; see the module docs.
#[kernel(block = (256, 1, 1))]
pub fn transpose_blocks_b32(src: *const u32, dst: *mut u32, rows: u32, cols: u32) {
    Tiles::<u32, 4, 1> {
        src,
        dst,
        rows,
        cols,
    }
    .whole_block::<2>(lds::dynamic::<LdsChunk>());
}

/// Transposes a `[rows, cols]` matrix of 2-byte elements whose `rows` and `cols` are multiples of
/// [`BLOCK_SIDE`] (64): workgroup `(x, y)` of a `(cols / 64, rows / 64)` grid takes the tile of
/// 64 at column `64 x` and row `64 y`, with exactly [`BLOCK_THREADS`] work-items and
/// [`BLOCKS_B16_LDS`] bytes of dynamic LDS; see the module docs.
#[kernel(block = (256, 1, 1))]
pub fn transpose_blocks_b16(src: *const u16, dst: *mut u16, rows: u32, cols: u32) {
    Tiles::<u16, 8, 2> {
        src,
        dst,
        rows,
        cols,
    }
    .whole_block::<1>(lds::dynamic::<LdsChunk>());
}
