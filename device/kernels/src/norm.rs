//! Row normalizations of a row-major `[rows, cols]` tensor, f32, f16 or bf16 in and out (weight
//! and bias in the same type), with f32 accumulation:
//! - `rmsnorm_<t>(x, weight, y, rows, cols, eps)`:
//!   `y = x / sqrt(mean(x^2) + eps) * weight`;
//! - `layernorm_<t>(x, weight, bias, y, rows, cols, eps)`:
//!   `y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias`, with the biased variance
//!   `mean((x - mean(x))^2)` (two passes over the row, no cancellation).
//!
//! `weight` and `bias` hold `cols` elements and apply to every row. `y` may be `x`; other overlaps
//! are not allowed. Any `rows` and `cols` (with `cols = 0` nothing is written).
//!
//! A row of up to `32 * workgroup_size` elements is read once into registers; a longer row is read
//! again for each pass (rmsnorm: twice, layernorm: three times).
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
        Resident, RowValues, Share, Streamed, held_row_with_output, lanes_fold, this_workgroups_row,
    },
    row_exchange::sum_once,
};
use iron_intrinsics::kernel;
use iron_intrinsics::{fmath::sqrt, id::workgroup_size_x, lds, math::mul_add, workgroup};

/// The sum of `x` over the workgroup, in every work-item (`_slot` unused: the LDS is free again
/// on return). Workgroup-wide.
#[inline(always)]
fn workgroup_sum(x: f32, _slot: u32) -> f32 {
    // SAFETY: the kernel's dynamic LDS holds one f32 per wave (its declared `dynamic_lds`).
    unsafe { workgroup::reduce_sum(x, lds::dynamic::<f32>(), workgroup_size_x()) }
}

/// Calls `resident(values, row)` or `streamed(values, row)` for this workgroup's row, with the
/// row's values resident in registers when they fit; `V` elements per chunk.
#[inline(always)]
fn with_row_values<T: Float, const V: usize>(
    x: *const T,
    rows: u32,
    cols: u32,
    resident: impl FnOnce(&Resident<V>, usize),
    streamed: impl FnOnce(&Streamed<T, V>, usize),
) {
    let Some(r) = this_workgroups_row(rows) else {
        return;
    };
    let share = Share::of_this_workitem(cols / V as u32);
    // SAFETY: x holds rows * cols elements; row r starts 16-byte aligned when V elements fill 16
    // bytes, since cols is then a multiple of V.
    let row = unsafe { x.add(r * cols as usize) };
    if Resident::<V>::fits(cols / V as u32) {
        // SAFETY: as above.
        resident(&unsafe { Resident::<V>::load(row, share) }, r);
    } else {
        // SAFETY: as above.
        streamed(&unsafe { Streamed::<T, V>::new(row, share) }, r);
    }
}

/// RMSNorm of one row whose values this work-item sees through `values`; writes `y_row`. The sum
/// of squares runs in `A` independent chains (`A` divides `V`; 1 in the general kernels, whose
/// run-time loops over chunks keep an array of partial sums in memory).
#[inline(always)]
fn rmsnorm_row<T: Float, const V: usize, const A: usize>(
    values: &impl RowValues<V>,
    weight: *const T,
    y_row: *mut T,
    cols: u32,
    eps: f32,
    sum: impl Fn(f32, u32) -> f32,
) {
    // SAFETY: weight holds cols elements, aligned as the row.
    let weight = unsafe { values.along::<T, 1>(weight) };
    // -0 is the exact identity of addition: the first chunk's additions fold away.
    let mut squares = [-0.0; A];
    values.visit(|_, v| {
        for (l, x) in v.into_iter().enumerate() {
            squares[l % A] = mul_add(x, x, squares[l % A]);
        }
    });
    let scale = 1.0 / sqrt(sum(lanes_fold(squares, |a, b| a + b), 0) / cols as f32 + eps);
    // For f16, x * scale written as fma(x, scale, -0): exact (-0 is the identity of addition),
    // and llc folds the widening of x into the fma (one v_fma_mix_f32) where it would widen and
    // multiply in two. The -0 is computed (scale is never negative: the minimum keeps a NaN or
    // an infinity from reaching the product), so that LLVM does not turn the fma back into the
    // multiply. Other types keep the multiply (on RDNA it pairs into dual-issue instructions).
    let negative_zero = -0.0 * scale.min(f32::MAX);
    let scaled = |x: f32| {
        if T::WIDENS_INTO_FMA {
            mul_add(x, scale, negative_zero)
        } else {
            x * scale
        }
    };
    values.visit_along([weight], |c, v, [w]| {
        let out: [f32; V] = core::array::from_fn(|l| scaled(v[l]) * w[l]);
        // SAFETY: chunk c lies in the row (cols elements, as y_row).
        unsafe { store_near::<T, V>(y_row, c, narrow(out)) };
    });
}

/// LayerNorm of one row whose values this work-item sees through `values`; writes `y_row`; sums in
/// `A` chains as for [`rmsnorm_row`].
#[inline(always)]
fn layernorm_row<T: Float, const V: usize, const A: usize>(
    values: &impl RowValues<V>,
    weight: *const T,
    bias: *const T,
    y_row: *mut T,
    cols: u32,
    eps: f32,
    sum: impl Fn(f32, u32) -> f32,
) {
    // SAFETY: weight and bias hold cols elements each, aligned as the row.
    let (weight, bias) = unsafe { (values.along::<T, 2>(weight), values.along::<T, 2>(bias)) };
    // -0 is the exact identity of addition (as in `rmsnorm_row`).
    let mut total = [-0.0; A];
    values.visit(|_, v| {
        for (l, x) in v.into_iter().enumerate() {
            total[l % A] += x;
        }
    });
    let mean = sum(lanes_fold(total, |a, b| a + b), 0) / cols as f32;
    let mut squares = [-0.0; A];
    values.visit(|_, v| {
        for (l, x) in v.into_iter().enumerate() {
            squares[l % A] = mul_add(x - mean, x - mean, squares[l % A]);
        }
    });
    let scale = 1.0 / sqrt(sum(lanes_fold(squares, |a, b| a + b), 1) / cols as f32 + eps);
    values.visit_along([weight, bias], |c, v, [w, b]| {
        let out: [f32; V] = core::array::from_fn(|l| mul_add((v[l] - mean) * scale, w[l], b[l]));
        // SAFETY: chunk c lies in the row (cols elements, as y_row).
        unsafe { store_near::<T, V>(y_row, c, narrow(out)) };
    });
}

/// RMSNorm over all rows, `V` elements per chunk (`cols` a multiple of `V`).
#[inline(always)]
fn rmsnorm_chunked<T: Float, const V: usize>(
    x: *const T,
    weight: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    // SAFETY (both closures): y holds rows * cols elements, like x.
    let y_row = |r: usize| unsafe { y.add(r * cols as usize) };
    with_row_values::<T, V>(
        x,
        rows,
        cols,
        |values, r| rmsnorm_row::<T, V, 1>(values, weight, y_row(r), cols, eps, workgroup_sum),
        |values, r| rmsnorm_row::<T, V, 1>(values, weight, y_row(r), cols, eps, workgroup_sum),
    );
}

/// LayerNorm over all rows, `V` elements per chunk (`cols` a multiple of `V`).
#[inline(always)]
fn layernorm_chunked<T: Float, const V: usize>(
    x: *const T,
    weight: *const T,
    bias: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    // SAFETY (both closures): y holds rows * cols elements, like x.
    let y_row = |r: usize| unsafe { y.add(r * cols as usize) };
    with_row_values::<T, V>(
        x,
        rows,
        cols,
        |values, r| {
            layernorm_row::<T, V, 1>(values, weight, bias, y_row(r), cols, eps, workgroup_sum)
        },
        |values, r| {
            layernorm_row::<T, V, 1>(values, weight, bias, y_row(r), cols, eps, workgroup_sum)
        },
    );
}

/// RMSNorm; `PACK` is [`Float::PACK`], spelled out by each kernel as a const argument.
#[inline(always)]
fn rmsnorm<T: Float, const PACK: usize>(
    x: *const T,
    weight: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    const { assert!(PACK == T::PACK) };
    if cols == 0 {
        return;
    }
    if cols.is_multiple_of(PACK as u32) {
        rmsnorm_chunked::<T, PACK>(x, weight, y, rows, cols, eps);
    } else {
        rmsnorm_chunked::<T, 1>(x, weight, y, rows, cols, eps);
    }
}

/// LayerNorm; `PACK` is [`Float::PACK`], spelled out by each kernel as a const argument.
#[inline(always)]
fn layernorm<T: Float, const PACK: usize>(
    x: *const T,
    weight: *const T,
    bias: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    const { assert!(PACK == T::PACK) };
    if cols == 0 {
        return;
    }
    if cols.is_multiple_of(PACK as u32) {
        layernorm_chunked::<T, PACK>(x, weight, bias, y, rows, cols, eps);
    } else {
        layernorm_chunked::<T, 1>(x, weight, bias, y, rows, cols, eps);
    }
}

/// RMSNorm of each row, f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn rmsnorm_f32(x: *const f32, weight: *const f32, y: *mut f32, rows: u32, cols: u32, eps: f32) {
    rmsnorm::<f32, 4>(x, weight, y, rows, cols, eps);
}

/// RMSNorm of each row, f16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn rmsnorm_f16(x: *const f16, weight: *const f16, y: *mut f16, rows: u32, cols: u32, eps: f32) {
    rmsnorm::<f16, 8>(x, weight, y, rows, cols, eps);
}

/// RMSNorm of each row, bf16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn rmsnorm_bf16(
    x: *const bf16,
    weight: *const bf16,
    y: *mut bf16,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    rmsnorm::<bf16, 8>(x, weight, y, rows, cols, eps);
}

/// LayerNorm of each row, f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn layernorm_f32(
    x: *const f32,
    weight: *const f32,
    bias: *const f32,
    y: *mut f32,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    layernorm::<f32, 4>(x, weight, bias, y, rows, cols, eps);
}

/// LayerNorm of each row, f16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn layernorm_f16(
    x: *const f16,
    weight: *const f16,
    bias: *const f16,
    y: *mut f16,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    layernorm::<f16, 8>(x, weight, bias, y, rows, cols, eps);
}

/// LayerNorm of each row, bf16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn layernorm_bf16(
    x: *const bf16,
    weight: *const bf16,
    bias: *const bf16,
    y: *mut bf16,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    layernorm::<bf16, 8>(x, weight, bias, y, rows, cols, eps);
}

/// RMSNorm of rows of exactly `CHUNKS * V * workgroup_size` elements, each work-item holding
/// `CHUNKS` chunks of `V` (`V` = [`Float::PACK`]) in registers; the library launches it for
/// such rows (rows of other lengths are left unwritten). Workgroups of up to 512 work-items: at
/// 1024 LLVM gets 128 VGPRs per work-item, and the 8-chunk bf16 LayerNorm spills on gfx942. The
/// `_c<k>w1` instances run in a workgroup of exactly one wave (any other size leaves the rows
/// unwritten): constant chunk offsets, and a reduction without LDS or barrier.
/// Otherwise as `rmsnorm_<t>`.
#[kernel(
    max_threads = 512,
    whole_waves,
    dynamic_lds = |threads, wave| 4 * threads / wave,
    instances = [
        rmsnorm_f32_c1<f32, 4, 1, 0>, rmsnorm_f32_c2<f32, 4, 2, 0>,
        rmsnorm_f32_c4<f32, 4, 4, 0>, rmsnorm_f32_c8<f32, 4, 8, 0>,
        rmsnorm_f32_c16<f32, 4, 16, 0>,
        rmsnorm_f32_c4w1<f32, 4, 4, 1>, rmsnorm_f32_c8w1<f32, 4, 8, 1>,
        rmsnorm_f32_c16w1<f32, 4, 16, 1>,
        rmsnorm_f16_c1<f16, 8, 1, 0>, rmsnorm_f16_c2<f16, 8, 2, 0>,
        rmsnorm_f16_c4<f16, 8, 4, 0>, rmsnorm_f16_c8<f16, 8, 8, 0>,
        rmsnorm_f16_c16<f16, 8, 16, 0>,
        rmsnorm_f16_c4w1<f16, 8, 4, 1>, rmsnorm_f16_c8w1<f16, 8, 8, 1>,
        rmsnorm_f16_c16w1<f16, 8, 16, 1>,
        rmsnorm_bf16_c1<bf16, 8, 1, 0>, rmsnorm_bf16_c2<bf16, 8, 2, 0>,
        rmsnorm_bf16_c4<bf16, 8, 4, 0>, rmsnorm_bf16_c8<bf16, 8, 8, 0>,
        rmsnorm_bf16_c16<bf16, 8, 16, 0>,
        rmsnorm_bf16_c4w1<bf16, 8, 4, 1>, rmsnorm_bf16_c8w1<bf16, 8, 8, 1>,
        rmsnorm_bf16_c16w1<bf16, 8, 16, 1>,
    ]
)]
pub fn rmsnorm_held<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    weight: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    if let Some((values, y_row)) = held_row_with_output::<T, V, CHUNKS, WAVES>(x, y, rows, cols) {
        let sum = |partial, slot| sum_once(partial, slot, values.waves());
        rmsnorm_row::<T, V, V>(&values, weight, y_row, cols, eps, sum);
    }
}

/// LayerNorm of rows of exactly `CHUNKS * V * workgroup_size` elements, as [`rmsnorm_held`];
/// otherwise as `layernorm_<t>`, with dynamic LDS of `8 * workgroup_size / WAVE` bytes.
#[kernel(
    max_threads = 512,
    whole_waves,
    dynamic_lds = |threads, wave| 8 * threads / wave,
    instances = [
        layernorm_f32_c1<f32, 4, 1, 0>, layernorm_f32_c2<f32, 4, 2, 0>,
        layernorm_f32_c4<f32, 4, 4, 0>, layernorm_f32_c8<f32, 4, 8, 0>,
        layernorm_f32_c16<f32, 4, 16, 0>,
        layernorm_f32_c4w1<f32, 4, 4, 1>, layernorm_f32_c8w1<f32, 4, 8, 1>,
        layernorm_f32_c16w1<f32, 4, 16, 1>,
        layernorm_f16_c1<f16, 8, 1, 0>, layernorm_f16_c2<f16, 8, 2, 0>,
        layernorm_f16_c4<f16, 8, 4, 0>, layernorm_f16_c8<f16, 8, 8, 0>,
        layernorm_f16_c16<f16, 8, 16, 0>,
        layernorm_f16_c4w1<f16, 8, 4, 1>, layernorm_f16_c8w1<f16, 8, 8, 1>,
        layernorm_f16_c16w1<f16, 8, 16, 1>,
        layernorm_bf16_c1<bf16, 8, 1, 0>, layernorm_bf16_c2<bf16, 8, 2, 0>,
        layernorm_bf16_c4<bf16, 8, 4, 0>, layernorm_bf16_c8<bf16, 8, 8, 0>,
        layernorm_bf16_c16<bf16, 8, 16, 0>,
        layernorm_bf16_c4w1<bf16, 8, 4, 1>, layernorm_bf16_c8w1<bf16, 8, 8, 1>,
        layernorm_bf16_c16w1<bf16, 8, 16, 1>,
    ]
)]
pub fn layernorm_held<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    weight: *const T,
    bias: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    if let Some((values, y_row)) = held_row_with_output::<T, V, CHUNKS, WAVES>(x, y, rows, cols) {
        let sum = |partial, slot| sum_once(partial, slot, values.waves());
        layernorm_row::<T, V, V>(&values, weight, bias, y_row, cols, eps, sum);
    }
}
