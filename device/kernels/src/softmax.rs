//! Softmax over the rows of a row-major `[rows, cols]` tensor, f32, f16 or bf16 in and out, with
//! f32 arithmetic: `y[r][j] = e^(x[r][j] - m_r) / sum_k e^(x[r][k] - m_r)`, `m_r` the row maximum
//! (numerically stable: every exponent is at most 0).
//!
//! Kernels `softmax_<t>(x, y, rows, cols)`; `y` may be `x`, other overlaps are not allowed; any
//! `rows` and `cols` (with `cols = 0` nothing is written).
//!
//! Two algorithms, chosen per launch:
//! - a row of up to `32 * workgroup_size` elements is read once into registers: row maximum,
//!   exponentials kept in place and summed, then scaled by the reciprocal of the sum;
//! - a longer row is read twice: an online pass keeps each work-item's running maximum `m` and
//!   its sum `s` of `e^(x - m)`, rescaling `s` by `e^(m_old - m_new)` when the maximum grows; the
//!   workgroup combines the pairs (`M = max m`, `S = sum s e^(m - M)`), and a second pass writes
//!   `e^(x - M) / S`.
//!
//! Special values: a row holding a NaN or `+inf`, or only `-inf`, gives NaN everywhere (as the
//! formula does); `-inf` elements of other rows give 0. `e^(x - m)` is
//! `iron_intrinsics::fmath::exp_via_exp2` (`2^((x - m) log2 e)`, within `|x - m| + 1` ulp: the
//! rounding of `x - m` already costs `|x - m|` ulp, and the outputs carry it either way).
//!
//! Accesses are 16 bytes wide when `cols` is a multiple of 4 (f32) or 8 (f16/bf16), one element
//! wide otherwise. Buffers must be 16-byte aligned; a row must be shorter than 4 GiB.
//!
//! Launch: one 1-D workgroup per row (workgroup `g` takes row `g`: a grid of at least `rows`
//! workgroups); workgroup size a multiple of the wave size, up to 1024; dynamic LDS of
//! `4 * workgroup_size / WAVE` bytes (128 bytes covers every size and target).

use crate::dtype::{bf16, f16};
use crate::{
    dtype::{Float, narrow, store_near},
    row::{
        Held, Resident, RowValues, Share, Streamed, held_row_with_output, lanes_fold,
        this_workgroups_row,
    },
    row_exchange::{max_once, sum_once},
};
use iron_intrinsics::kernel;
use iron_intrinsics::{fmath::exp_via_exp2, id::workgroup_size_x, lds, math::mul_add, workgroup};

/// The sum of `x` over the workgroup, in every work-item. Workgroup-wide.
#[inline(always)]
fn workgroup_sum(x: f32) -> f32 {
    // SAFETY: the kernel's dynamic LDS holds one f32 per wave (its declared `dynamic_lds`).
    unsafe { workgroup::reduce_sum(x, lds::dynamic::<f32>(), workgroup_size_x()) }
}

/// The maximum of `x` over the workgroup (NaN ignored), in every work-item. Workgroup-wide.
#[inline(always)]
fn workgroup_max(x: f32) -> f32 {
    // SAFETY: the kernel's dynamic LDS holds one f32 per wave (its declared `dynamic_lds`).
    unsafe { workgroup::reduce_max(x, lds::dynamic::<f32>(), workgroup_size_x()) }
}

/// `e^(from - to)`: the factor that rebases a sum of `e^(x - from)` onto `e^(x - to)`; 1 when the
/// two are equal (so also for two equal infinities).
#[inline(always)]
fn rebase(from: f32, to: f32) -> f32 {
    if from == to {
        1.0
    } else {
        exp_via_exp2(from - to)
    }
}

/// Softmax of a row held in registers; writes `y_row`.
#[inline(always)]
fn softmax_resident<T: Float, const V: usize>(mut values: Resident<V>, y_row: *mut T) {
    let mut max = f32::NEG_INFINITY;
    values.visit(|_, v| {
        for x in v {
            max = max.max(x);
        }
    });
    let max = workgroup_max(max);
    let mut sum = 0.0;
    values.update(|v| {
        v.map(|x| {
            let e = exp_via_exp2(x - max);
            sum += e;
            e
        })
    });
    let inverse = 1.0 / workgroup_sum(sum);
    values.visit(|c, e| {
        // SAFETY: chunk c lies in the row.
        unsafe { store_near::<T, V>(y_row, c, narrow(e.map(|e| e * inverse))) };
    });
}

/// Softmax of a row read twice from memory (online maximum and sum); writes `y_row`.
#[inline(always)]
fn softmax_online<T: Float, const V: usize>(values: &Streamed<T, V>, y_row: *mut T) {
    let (mut max, mut sum) = (f32::NEG_INFINITY, 0.0);
    values.visit(|_, v| {
        let new_max = v.iter().fold(max, |m, &x| m.max(x));
        let mut chunk_sum = 0.0;
        for x in v {
            // -inf adds nothing, also while the maximum is still -inf (where x - max is NaN).
            chunk_sum += if x == f32::NEG_INFINITY {
                0.0
            } else {
                exp_via_exp2(x - new_max)
            };
        }
        sum = mul_add(sum, rebase(max, new_max), chunk_sum);
        max = new_max;
    });
    let row_max = workgroup_max(max);
    let inverse = 1.0 / workgroup_sum(sum * rebase(max, row_max));
    values.visit(|c, v| {
        // SAFETY: chunk c lies in the row.
        unsafe {
            store_near::<T, V>(
                y_row,
                c,
                narrow(v.map(|x| exp_via_exp2(x - row_max) * inverse)),
            )
        };
    });
}

/// Softmax of this workgroup's row, `V` elements per chunk (`cols` a multiple of `V`).
#[inline(always)]
fn softmax_chunked<T: Float, const V: usize>(x: *const T, y: *mut T, rows: u32, cols: u32) {
    let Some(r) = this_workgroups_row(rows) else {
        return;
    };
    let chunks = cols / V as u32;
    let share = Share::of_this_workitem(chunks);
    // SAFETY: x and y hold rows * cols elements; row r starts 16-byte aligned when V elements
    // fill 16 bytes, since cols is then a multiple of V.
    let (x_row, y_row) = unsafe { (x.add(r * cols as usize), y.add(r * cols as usize)) };
    if Resident::<V>::fits(chunks) {
        // SAFETY: as above.
        softmax_resident::<T, V>(unsafe { Resident::<V>::load(x_row, share) }, y_row);
    } else {
        // SAFETY: as above.
        softmax_online::<T, V>(&unsafe { Streamed::<T, V>::new(x_row, share) }, y_row);
    }
}

/// Softmax; `PACK` is [`Float::PACK`], spelled out by each kernel as a const argument.
#[inline(always)]
fn softmax<T: Float, const PACK: usize>(x: *const T, y: *mut T, rows: u32, cols: u32) {
    const { assert!(PACK == T::PACK) };
    if cols == 0 {
        return;
    }
    if cols.is_multiple_of(PACK as u32) {
        softmax_chunked::<T, PACK>(x, y, rows, cols);
    } else {
        softmax_chunked::<T, 1>(x, y, rows, cols);
    }
}

/// Softmax of each row, f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn softmax_f32(x: *const f32, y: *mut f32, rows: u32, cols: u32) {
    softmax::<f32, 4>(x, y, rows, cols);
}

/// Softmax of each row, f16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn softmax_f16(x: *const f16, y: *mut f16, rows: u32, cols: u32) {
    softmax::<f16, 8>(x, y, rows, cols);
}

/// Softmax of each row, bf16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn softmax_bf16(x: *const bf16, y: *mut bf16, rows: u32, cols: u32) {
    softmax::<bf16, 8>(x, y, rows, cols);
}

/// Softmax of a row held in registers, `CHUNKS` chunks of `V` per work-item: the maximum, then the
/// exponentials kept in registers and summed (in `V` independent chains), then scaled by the
/// reciprocal of the sum; writes `y_row`. One workgroup reduction each for the maximum and the sum.
#[inline(always)]
fn softmax_held_row<T: Float, const V: usize, const CHUNKS: usize>(
    values: &Held<T, V, CHUNKS>,
    y_row: *mut T,
) {
    let mut lane_max = [f32::NEG_INFINITY; V];
    for k in 0..CHUNKS {
        let v = values.values(k);
        for l in 0..V {
            lane_max[l] = lane_max[l].max(v[l]);
        }
    }
    let max = max_once(lanes_fold(lane_max, f32::max), 0, values.waves());
    // -0 is the exact identity of addition: the first exponentials' additions fold away.
    let mut sums = [-0.0f32; V];
    let mut exps = [[0.0f32; V]; CHUNKS];
    for (k, chunk) in exps.iter_mut().enumerate() {
        let v = values.values(k);
        for l in 0..V {
            chunk[l] = exp_via_exp2(v[l] - max);
            sums[l] += chunk[l];
        }
    }
    let inverse = 1.0 / sum_once(lanes_fold(sums, |a, b| a + b), 1, values.waves());
    for (k, e) in exps.iter().enumerate() {
        // SAFETY: held chunk k lies in the row.
        unsafe { store_near::<T, V>(y_row, values.chunk(k), narrow(e.map(|e| e * inverse))) };
    }
}

/// Softmax of rows of exactly `CHUNKS * V * workgroup_size` elements, each work-item holding
/// `CHUNKS` chunks of `V` (`V` = [`Float::PACK`]) in registers; the library launches it for such
/// rows (rows of other lengths are left unwritten). Otherwise as `softmax_<t>`, with dynamic LDS
/// of `8 * workgroup_size / WAVE` bytes. Up to 4 chunks: with 8, LLVM unrolls the loop over the
/// exponentials too late for their array to leave scratch memory.
#[kernel(
    max_threads = 1024,
    whole_waves,
    dynamic_lds = |threads, wave| 8 * threads / wave,
    instances = [
        softmax_f32_c1<f32, 4, 1>, softmax_f32_c2<f32, 4, 2>,
        softmax_f32_c4<f32, 4, 4>,
        softmax_f16_c1<f16, 8, 1>, softmax_f16_c2<f16, 8, 2>,
        softmax_f16_c4<f16, 8, 4>,
        softmax_bf16_c1<bf16, 8, 1>, softmax_bf16_c2<bf16, 8, 2>,
        softmax_bf16_c4<bf16, 8, 4>,
    ]
)]
pub fn softmax_held<T: Float, const V: usize, const CHUNKS: usize>(
    x: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
) {
    if let Some((values, y_row)) = held_row_with_output::<T, V, CHUNKS, 0>(x, y, rows, cols) {
        softmax_held_row::<T, V, CHUNKS>(&values, y_row);
    }
}
