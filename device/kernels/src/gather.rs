//! Embedding lookup: rows of a table gathered by index.
//!
//! `gather_b32(table, indices, out, n, vocab, dim)` for 4-byte elements (f32) and `gather_b16`
//! for 2-byte ones (f16, bf16): `table` is `[vocab, dim]` row-major, `indices` holds `n` u32 row
//! indices, and `out` (`[n, dim]`) receives `out[i] = table[indices[i]]`, copied bit for bit (a
//! gather moves bits, so one kernel per element size serves every type of that size). An index
//! `>= vocab` reads nothing: its output row is filled with zero bits (+0.0 for the float types),
//! so a bad token id cannot fault or leak memory. `out` must not
//! overlap `table` or `indices`. Any `n`, `vocab` and `dim` (with `n = 0` or `dim = 0` nothing is
//! written).
//!
//! Launch (2-D workgroups): work-items with the same `y` in a workgroup copy one row together,
//! each taking the row's 16-byte chunks `x, x + size_x, ...`; workgroup `g` starts at row
//! `g * size_y + y` and strides by `workgroups * size_y` rows, so any grid works. A narrow row
//! wants a small `size_x` and a large `size_y` (e.g. `dim = 64` f16: 8 x 32), a wide one the
//! opposite (e.g. 256 x 1). Workgroups of up to 256 work-items, no dynamic LDS.
//!
//! Index reads: the work-items of a wave that copy the same row read its index once, by one
//! work-item, and share it through a wave broadcast (one 4-byte read per row and wave, not one
//! per work-item).
//!
//! Memory: rows are moved in 16-byte chunks (4 f32 or 8 f16/bf16) when `dim` is a multiple of
//! that (rows then start 16-byte aligned), element by element otherwise. Buffers must be
//! 16-byte aligned (device allocations are).

use crate::dtype::{load, store};
use crate::wave_read::read_once_per_wave;
use iron_intrinsics::id::{
    num_workgroups_x, workgroup_id_x, workgroup_size_x, workgroup_size_y, workitem_id_x,
    workitem_id_y,
};
use iron_intrinsics::kernel;

/// Copies every row this work-item shares in, `V` elements per chunk (`dim` a multiple of `V`).
#[inline(always)]
fn gather_chunked<T: Copy + Default, const V: usize>(
    table: *const T,
    indices: *const u32,
    out: *mut T,
    n: u32,
    vocab: u32,
    dim: u32,
) {
    let chunks = dim / V as u32;
    let rows_per_group = workgroup_size_y();
    let row_stride = num_workgroups_x() * rows_per_group;
    let mut row = workgroup_id_x() * rows_per_group + workitem_id_y();
    while row < n {
        // SAFETY: row < n, the length of indices, for every active work-item.
        let index = unsafe { read_once_per_wave(indices, row) };
        // SAFETY: out holds n rows of dim elements.
        let out_row = unsafe { out.add(row as usize * dim as usize) };
        // SAFETY: index < vocab, and table holds vocab rows of dim elements.
        let table_row =
            (index < vocab).then(|| unsafe { table.add(index as usize * dim as usize) });
        let zero = [T::default(); V];
        let mut chunk = workitem_id_x();
        while chunk < chunks {
            let values = match table_row {
                // SAFETY: chunk < dim / V inside a row of the table; rows start 16-byte aligned
                // when V elements fill 16 bytes (dim is a multiple of V).
                Some(source) => unsafe { load::<T, V>(source, chunk as usize) },
                None => zero,
            };
            // SAFETY: as above, in out.
            unsafe { store::<T, V>(out_row, chunk as usize, values) };
            chunk += workgroup_size_x();
        }
        row += row_stride;
    }
}

/// Gathers with 16-byte chunks when `dim` allows; `PACK` elements fill 16 bytes.
#[inline(always)]
fn gather<T: Copy + Default, const PACK: usize>(
    table: *const T,
    indices: *const u32,
    out: *mut T,
    n: u32,
    vocab: u32,
    dim: u32,
) {
    const { assert!(PACK * size_of::<T>() == 16) };
    if dim.is_multiple_of(PACK as u32) {
        gather_chunked::<T, PACK>(table, indices, out, n, vocab, dim);
    } else {
        gather_chunked::<T, 1>(table, indices, out, n, vocab, dim);
    }
}

/// `out[i] = table[indices[i]]` (zeros for an index `>= vocab`), 4-byte elements (f32, or any
/// 4-byte type by its bits); see the module docs.
#[kernel(max_threads = 256)]
pub fn gather_b32(
    table: *const u32,
    indices: *const u32,
    out: *mut u32,
    n: u32,
    vocab: u32,
    dim: u32,
) {
    gather::<u32, 4>(table, indices, out, n, vocab, dim);
}

/// `out[i] = table[indices[i]]` (zeros for an index `>= vocab`), 2-byte elements (f16, bf16, or
/// any 2-byte type by its bits); see the module docs.
#[kernel(max_threads = 256)]
pub fn gather_b16(
    table: *const u16,
    indices: *const u32,
    out: *mut u16,
    n: u32,
    vocab: u32,
    dim: u32,
) {
    gather::<u16, 8>(table, indices, out, n, vocab, dim);
}
