//! The scalar attention core every gfx runs: a workgroup of waves shares K and V tiles of `WAVE`
//! keys staged in LDS; each wave owns [`ROWS`] query rows (held in LDS as f32, pre-scaled).
//!
//! Per tile and wave: lane `l` computes the scores of key `l` against the wave's rows (the
//! query row read by every lane at once: an LDS broadcast), the wave takes each row's maximum,
//! updates the running maximum and writes the probabilities to LDS; then lane `l` owns output
//! columns `l * CPL .. (l + 1) * CPL` and adds `p_j v_j` over the tile's keys. Sums of
//! probabilities stay per lane until the end (they share the row's rescaling factor).

use crate::attention::{ROW_PAD, SCALAR_ROWS_PER_WAVE};
use crate::attention_tile::{Problem, stage_queries_f32, stage_rows, unroll};
use crate::dtype::{Float, load};
use iron_intrinsics::fmath::exp2_normal;
use iron_intrinsics::id::{lane_id, wave_id, workgroup_size_x};
use iron_intrinsics::lds;
use iron_intrinsics::math::mul_add;
use iron_intrinsics::sync::workgroup_barrier;
use iron_intrinsics::target::WAVE;
use iron_intrinsics::wave;

pub use crate::attention_tile::Rows;

/// Query rows per wave.
const ROWS: usize = SCALAR_ROWS_PER_WAVE as usize;

/// What a wave holds after the last tile: per row, this lane's output columns (unnormalized),
/// the running maximum (log2 domain) and the sum of the probabilities (over the wave).
pub struct RowState<const CPL: usize> {
    o: [[f32; CPL]; ROWS],
    max: [f32; ROWS],
    sum: [f32; ROWS],
}

/// Eight bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Align8<A>(A);

/// Four bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(4))]
struct Align4<A>(A);

/// `N` 16-bit elements at `p` (1, 2 or 4) as one access.
///
/// # Safety
/// `p` must be readable for `N` elements and aligned to their size.
#[inline(always)]
unsafe fn read_columns<T: Copy, const N: usize>(p: *const T) -> [T; N] {
    // SAFETY: as the caller guarantees; the wrappers have the size of [T; N] when their
    // alignment is that size.
    unsafe {
        match N * size_of::<T>() {
            8 => (*(p as *const Align8<[T; N]>)).0,
            4 => (*(p as *const Align4<[T; N]>)).0,
            _ => *(p as *const [T; N]),
        }
    }
}

/// Writes `N` 16-bit elements to `p` (1, 2 or 4) as one access.
///
/// # Safety
/// As for [`read_columns`], writable.
#[inline(always)]
unsafe fn write_columns<T: Copy, const N: usize>(p: *mut T, values: [T; N]) {
    // SAFETY: as in `read_columns`.
    unsafe {
        match N * size_of::<T>() {
            8 => *(p as *mut Align8<[T; N]>) = Align8(values),
            4 => *(p as *mut Align4<[T; N]>) = Align4(values),
            _ => *(p as *mut [T; N]) = values,
        }
    }
}

/// The scores of this lane's key (row `lane` of the staged K tile at `k_tile`) against the
/// wave's rows of `queries` (f32, pre-scaled).
///
/// # Safety
/// `k_tile` and `queries` must hold the staged tile and rows.
#[inline(always)]
unsafe fn scores<T: Float, const D: u32>(k_tile: *const u8, queries: *const f32) -> [f32; ROWS] {
    let key = k_tile.wrapping_add((lane_id() * (2 * D + ROW_PAD)) as usize) as *const T;
    let mut s = [0.0f32; ROWS];
    for c in 0..(D / 8) as usize {
        // SAFETY: chunk c of the lane's staged key row, 16-byte aligned.
        let k = unsafe { load::<T, 8>(key, c) };
        unroll!(r in [0, 1, 2, 3] {
            // SAFETY: chunk c of query row r, 16-byte aligned.
            let q = unsafe { load::<f32, 8>(queries.add(r * D as usize), c) };
            unroll!(e in [0, 1, 2, 3, 4, 5, 6, 7] {
                s[r] = mul_add(q[e], k[e].into_f32(), s[r]);
            });
        });
    }
    s
}

/// The online-softmax pass of the wave's rows over keys `rows.begin..rows.end` of the K and V
/// heads at `k` and `v`, queries at `q` (rows of `D`). Workgroup-wide.
///
/// # Safety
/// `q` must hold the block's valid rows, `k` and `v` the keys below `rows.end`, all 16-byte
/// aligned; the launch gives [`crate::attention::scalar_lds_bytes`] of dynamic LDS.
#[inline(always)]
pub unsafe fn attend<T: Float, const D: u32, const CPL: usize>(
    q: *const T,
    k: *const T,
    v: *const T,
    rows: &Rows,
    problem: &Problem,
) -> RowState<CPL> {
    const { assert!(CPL as u32 * WAVE == D && CPL <= 4 && ROWS == 4) };
    let pitch = 2 * D + ROW_PAD;
    let block_rows = ROWS as u32 * (workgroup_size_x() / WAVE);
    let (wave, lane) = (wave_id(), lane_id());
    let k_tile = lds::dynamic::<u8>();
    // SAFETY: the regions below lie in the launch's dynamic LDS (scalar_lds_bytes).
    let (v_tile, queries, probabilities) = unsafe {
        let v_tile = k_tile.add((WAVE * pitch) as usize);
        let queries = v_tile.add((WAVE * pitch) as usize) as *mut f32;
        let probabilities = queries.add((block_rows * D) as usize);
        (v_tile, queries, probabilities)
    };
    // SAFETY: as the caller guarantees.
    unsafe { stage_queries_f32::<T, D>(q, (block_rows, rows.valid), problem.scale_log2, queries) };
    let first_row = wave * ROWS as u32;
    // SAFETY: inside the regions above.
    let (my_queries, my_probabilities) = unsafe {
        (
            queries.add((first_row * D) as usize) as *const f32,
            probabilities.add((first_row * WAVE) as usize),
        )
    };
    let mut limits = [0u32; ROWS];
    unroll!(r in [0, 1, 2, 3] {
        limits[r] = rows.limit(first_row + r as u32);
    });
    let mut state = RowState {
        o: [[0.0; CPL]; ROWS],
        max: [f32::NEG_INFINITY; ROWS],
        sum: [0.0; ROWS],
    };
    let mut tile = rows.begin;
    while tile < rows.end {
        // SAFETY: as the caller guarantees.
        unsafe {
            stage_rows::<T, D, 0, true>(k, (tile, WAVE, rows.end), k_tile, pitch);
            stage_rows::<T, D, 0, true>(v, (tile, WAVE, rows.end), v_tile, pitch);
        }
        workgroup_barrier();
        // SAFETY: the tile and the queries are staged.
        let s = unsafe { scores::<T, D>(k_tile, my_queries) };
        let key = tile + lane;
        let mut alpha = [0.0f32; ROWS];
        unroll!(r in [0, 1, 2, 3] {
            let s = if key < limits[r] { s[r] } else { f32::NEG_INFINITY };
            let max = state.max[r].max(wave::reduce_max(s));
            // Until a row has seen a key its maximum is -inf: shift by 0 then, so that every
            // probability and factor is 2^-inf = 0 rather than NaN.
            let base = if max == f32::NEG_INFINITY { 0.0 } else { max };
            let p = exp2_normal(s - base);
            alpha[r] = exp2_normal(state.max[r] - base);
            state.sum[r] = mul_add(state.sum[r], alpha[r], p);
            state.max[r] = max;
            // SAFETY: this wave's probability row r, lane `lane`.
            unsafe { *my_probabilities.add(r * WAVE as usize + lane as usize) = p };
            unroll!(e in [0, 1, 2, 3] {
                if e < CPL {
                    state.o[r][e] *= alpha[r];
                }
            });
        });
        let keys = (rows.end - tile).min(WAVE).next_multiple_of(4);
        let column = lane as usize * CPL;
        for j in (0..keys).step_by(4) {
            let mut p = [[0.0f32; 4]; ROWS];
            unroll!(r in [0, 1, 2, 3] {
                // SAFETY: probabilities j..j + 4 of row r, 16-byte aligned.
                p[r] = unsafe {
                    load::<f32, 4>(my_probabilities.add(r * WAVE as usize + j as usize), 0)
                };
            });
            unroll!(jj in [0, 1, 2, 3] {
                // SAFETY: the lane's columns of staged value row j + jj.
                let values = unsafe {
                    let row = v_tile.add(((j + jj as u32) * pitch) as usize) as *const T;
                    read_columns::<T, CPL>(row.add(column))
                };
                unroll!(r in [0, 1, 2, 3] {
                    unroll!(e in [0, 1, 2, 3] {
                        if e < CPL {
                            state.o[r][e] = mul_add(p[r][jj], values[e].into_f32(), state.o[r][e]);
                        }
                    });
                });
            });
        }
        workgroup_barrier();
        tile += WAVE;
    }
    unroll!(r in [0, 1, 2, 3] {
        state.sum[r] = wave::reduce_sum(state.sum[r]);
    });
    state
}

/// Writes the wave's valid rows of the block, normalized and rounded, to `o` (the block's
/// first row, rows of `D`); a row that saw no key gets zeros.
///
/// # Safety
/// `o` must hold the block's valid rows.
#[inline(always)]
pub unsafe fn write_rows<T: Float, const D: u32, const CPL: usize>(
    state: &RowState<CPL>,
    o: *mut T,
    rows: &Rows,
) {
    let first_row = wave_id() * ROWS as u32;
    unroll!(r in [0, 1, 2, 3] {
        let row = first_row + r as u32;
        if row < rows.valid {
            let inverse = if state.sum[r] > 0.0 {
                1.0 / state.sum[r]
            } else {
                0.0
            };
            let mut values = [T::round_from_f32(0.0); CPL];
            unroll!(e in [0, 1, 2, 3] {
                if e < CPL {
                    values[e] = T::round_from_f32(state.o[r][e] * inverse);
                }
            });
            let at = (row * D + lane_id() * CPL as u32) as usize;
            // SAFETY: inside valid row `row`, aligned to the CPL elements' size.
            unsafe { write_columns::<T, CPL>(o.add(at), values) };
        }
    });
}

/// Writes the wave's valid rows unnormalized, with their maximum and sum, as split `split` of
/// `splits` for query rows `first_row..` of `total_rows` (the decode kernels' `partial`
/// layout).
///
/// # Safety
/// `partial` must hold [`crate::attention::decode_partial_len`] elements.
#[inline(always)]
pub unsafe fn write_partial<const D: u32, const CPL: usize>(
    state: &RowState<CPL>,
    partial: *mut f32,
    (first_row, total_rows): (u32, u32),
    (split, splits): (u32, u32),
    rows: &Rows,
) {
    let first = wave_id() * ROWS as u32;
    unroll!(r in [0, 1, 2, 3] {
        let row = first + r as u32;
        if row < rows.valid {
            let slot = (first_row + row) as usize * splits as usize + split as usize;
            let at = slot * D as usize + (lane_id() as usize) * CPL;
            unroll!(e in [0, 1, 2, 3] {
                if e < CPL {
                    // SAFETY: the slot's outputs lie in the partial buffer.
                    unsafe { *partial.add(at + e) = state.o[r][e] };
                }
            });
            if lane_id() == 0 {
                let stats = total_rows as usize * splits as usize * D as usize + 2 * slot;
                // SAFETY: the slot's statistics lie in the partial buffer.
                unsafe {
                    *partial.add(stats) = state.max[r];
                    *partial.add(stats + 1) = state.sum[r];
                }
            }
        }
    });
}
