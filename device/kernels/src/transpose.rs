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
//! LDS layout, in 4-byte words: a tile row is 32 words (32 4-byte or 64 2-byte elements), stored
//! with a pitch of 33 words, and rows 32..64 (2-byte tiles only) start 4 words further. With
//! LDS's 32 banks of 4 bytes (gfx9; a bank conflict is two work-items of the same 32 reading
//! different words of one bank), the pitch of 33 puts the 4 rows x 8 word groups of a write
//! instruction and the 8 rows x 4 columns of a read instruction on 32 different banks; the shift
//! of 4 does the same for 2-byte tiles, whose reads span rows `r` and `r + 32`. So neither phase
//! has bank conflicts (two work-items reading two halves of one word share it).
//!
//! Launch: 1-D workgroups of up to 256 work-items, a multiple of 8 (256 is best: one pass per
//! phase for 4-byte tiles); workgroup `(x, y)` of the grid takes tile column `x` and tile row `y`
//! and strides by the grid, so any grid works (one workgroup per tile, `ceil(cols / T)` by
//! `ceil(rows / T)`, is the natural one). Dynamic LDS: 4224 bytes (`transpose_b32`) or 8464 bytes
//! (`transpose_b16`). Buffers must be 16-byte aligned (device allocations are).

use iron_intrinsics::kernel;
#[cfg(target_arch = "amdgpu")]
use {
    crate::dtype::{load, store},
    iron_intrinsics::{
        id::{
            num_workgroups_x, num_workgroups_y, workgroup_id_x, workgroup_id_y, workgroup_size_x,
            workitem_id_x,
        },
        lds,
        sync::workgroup_barrier,
    },
};

/// Work-items per tile row in the load phase (8 x 16 bytes = a 32-word tile row).
#[cfg(target_arch = "amdgpu")]
const ITEMS_PER_ROW: u32 = 8;
/// Words in a tile row.
#[cfg(target_arch = "amdgpu")]
const ROW_WORDS: u32 = 32;
/// LDS words from one tile row to the next: one word of padding.
#[cfg(target_arch = "amdgpu")]
const PITCH: u32 = ROW_WORDS + 1;
/// Extra LDS words before tile rows 32..64.
#[cfg(target_arch = "amdgpu")]
const UPPER_HALF_SHIFT: u32 = 4;

/// The LDS word of tile row `row`, word column `word`.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn lds_word(row: u32, word: u32) -> usize {
    (row * PITCH + (row / ROW_WORDS) * UPPER_HALF_SHIFT + word) as usize
}

/// An element type moved by its bits: 4 or 2 bytes.
#[cfg(target_arch = "amdgpu")]
trait Element: Copy {
    /// The element's bits.
    fn bits(self) -> u32;
    /// Element `j` of a 4-byte word holding `4 / size` elements, the first in the low bits.
    fn from_word(word: u32, j: usize) -> Self;
}

#[cfg(target_arch = "amdgpu")]
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

#[cfg(target_arch = "amdgpu")]
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
#[cfg(target_arch = "amdgpu")]
#[derive(Clone, Copy)]
struct Tiles<E, const V: usize, const D: usize> {
    src: *const E,
    dst: *mut E,
    rows: u32,
    cols: u32,
}

#[cfg(target_arch = "amdgpu")]
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
    fn tile(&self, tile_row: u32, tile_col: u32, lds: *mut u32) {
        let (first, step) = (workitem_id_x(), workgroup_size_x());
        let (row0, col0) = (tile_row * Self::T, tile_col * Self::T);
        let mut slot = first;
        while slot < Self::T * ITEMS_PER_ROW {
            let (r, q) = (slot / ITEMS_PER_ROW, slot % ITEMS_PER_ROW);
            let words = self.read_chunk(row0 + r, col0 + q * V as u32);
            for (k, &word) in words.iter().enumerate() {
                // SAFETY: r < T and 4q + k < 32: inside the tile's LDS.
                unsafe { *lds.add(lds_word(r, 4 * q + k as u32)) = word };
            }
            slot += step;
        }
        workgroup_barrier();
        let mut slot = first;
        while slot < ROW_WORDS * ITEMS_PER_ROW {
            let (w, p) = (slot / ITEMS_PER_ROW, slot % ITEMS_PER_ROW);
            // SAFETY: p * V + i < T and w < 32: inside the tile's LDS.
            let words: [u32; V] =
                core::array::from_fn(|i| unsafe { *lds.add(lds_word(p * V as u32 + i as u32, w)) });
            for j in 0..D {
                let run: [E; V] = core::array::from_fn(|i| E::from_word(words[i], j));
                self.write_run(col0 + w * D as u32 + j as u32, row0 + p * V as u32, run);
            }
            slot += step;
        }
        workgroup_barrier();
    }

    /// Transposes every tile this workgroup owns.
    #[inline(always)]
    fn run(&self) {
        let lds = lds::dynamic::<u32>();
        let (tile_rows, tile_cols) = (self.rows.div_ceil(Self::T), self.cols.div_ceil(Self::T));
        let mut tile_row = workgroup_id_y();
        while tile_row < tile_rows {
            let mut tile_col = workgroup_id_x();
            while tile_col < tile_cols {
                self.tile(tile_row, tile_col, lds);
                tile_col += num_workgroups_x();
            }
            tile_row += num_workgroups_y();
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
