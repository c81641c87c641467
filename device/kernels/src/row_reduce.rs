//! Reductions of each row of a row-major `[rows, cols]` tensor (f32, f16 or bf16) to one value:
//! `row_sum_<t>`, `row_max_<t>` (f32 out) and `row_argmax_<t>` (u32 out), with arguments
//! `(x, out, rows, cols)`; `out` holds `rows` elements. Any `rows` and `cols`.
//!
//! - sum: f32 accumulation (each work-item sums its chunks lane by lane, then the lanes, then the
//!   workgroup combines); a NaN or opposite infinities give NaN; an empty row gives 0.
//! - max: exact; NaN counts as larger than every number, so a row holding a NaN gives NaN (as
//!   `torch.max` and `numpy.max` do); an empty row gives `-inf`.
//! - argmax: the index of the first maximal element, in the same order (a NaN is maximal, so the
//!   first NaN wins; -0 and +0 are equal); an empty row gives `u32::MAX`.
//!
//! max and argmax compare integer keys (the f32 bits mapped to an unsigned order) with the vocabulary's u32 reductions: the
//! workgroup finds the largest key, then the smallest index holding it.
//!
//! Accesses are 16 bytes wide when `cols` is a multiple of 4 (f32) or 8 (f16/bf16), one element
//! wide otherwise. Buffers must be 16-byte aligned; a row must be shorter than 4 GiB.
//!
//! Launch: one 1-D workgroup per row (workgroup `g` takes row `g`: a grid of at least `rows`
//! workgroups); workgroup size a multiple of the wave size, up to 1024 (a single wave suits short
//! rows); dynamic LDS of `4 * workgroup_size / WAVE` bytes for sum and max, twice that for argmax
//! (256 bytes covers every size and target).
//!
//! `row_<op>_<t>_c<k>` (`k` in 1, 2, 4, 8, 16 for sum and max, and 32 for sum) take rows of exactly
//! `k * PACK * workgroup_size` elements (`PACK` = 4 for f32, 8 for f16/bf16), each work-item
//! holding `k` chunks of `PACK` in registers: no loop and no unused chunk. `row_sum_<t>_c<k>w1`
//! (`k` in 8, 16) do the same in a workgroup of exactly one wave, which reduces without LDS; other
//! workgroup sizes leave their rows unwritten. The library launches them for such rows. Their
//! workgroups have up to 512 work-items: at 1024 LLVM gets 128 VGPRs per work-item, and the bf16
//! instances holding 64 or 128 elements spill on gfx942.

use crate::dtype::{bf16, f16};
use crate::{
    dtype::Float,
    row::{RowValues, Share, Streamed, held_row, lanes_fold, this_workgroups_row},
    row_exchange::{max_once, min_once, sum_once},
};
use iron_intrinsics::id::workitem_id_x;
use iron_intrinsics::kernel;

/// A u32 whose unsigned order is the order of the f32 values, NaN (any) above `+inf`, `-0` just
/// below `+0`.
#[inline(always)]
fn order_key(x: f32) -> u32 {
    let bits = x.to_bits();
    // All ones for a negative x (the key is !bits), the sign bit alone otherwise (bits | sign),
    // and a select for NaN: written as branches, LLVM kept an exec-masked branch per element
    // wherever it did not flatten them.
    let flip = ((bits as i32 >> 31) as u32) | 0x8000_0000;
    core::hint::select_unpredictable(x.is_nan(), u32::MAX, bits ^ flip)
}

/// The f32 of an [`order_key`] (`u32::MAX` gives a NaN).
#[inline(always)]
fn from_order_key(key: u32) -> f32 {
    f32::from_bits(if key >> 31 == 1 {
        key & 0x7FFF_FFFF
    } else {
        !key
    })
}

/// [`order_key`] with the two zeros equal, for argmax ties.
#[inline(always)]
fn argmax_key(x: f32) -> u32 {
    // Adding +0 turns -0 into +0 and leaves every other value's order as it was.
    order_key(x + 0.0)
}

/// A reduction of a row to one value.
trait Reduction {
    /// The result's type.
    type Out: Copy;
    /// The result for the row whose values this work-item sees through `values`, in every
    /// work-item, exchanged through the dynamic LDS's slots ([`crate::row_exchange`]): slot 0,
    /// and slot 1 for argmax. Workgroup-wide.
    fn reduce<const V: usize>(values: &impl RowValues<V>) -> Self::Out;
}

/// The row's sum, in f32.
struct Sum;

impl Reduction for Sum {
    type Out = f32;
    #[inline(always)]
    fn reduce<const V: usize>(values: &impl RowValues<V>) -> f32 {
        // -0 is the exact identity of addition (`-0 + x` is `x` for every x, so the first chunk's
        // additions fold away); the final `+ 0` keeps a row of zeros (or an empty row) at +0.
        let mut lanes = [-0.0f32; V];
        values.visit(|_, v| {
            for l in 0..V {
                lanes[l] += v[l];
            }
        });
        sum_once(lanes_fold(lanes, |a, b| a + b), 0, values.waves()) + 0.0
    }
}

/// The row's maximum.
struct Max;

impl Reduction for Max {
    type Out = f32;
    #[inline(always)]
    fn reduce<const V: usize>(values: &impl RowValues<V>) -> f32 {
        let mut best = order_key(f32::NEG_INFINITY);
        values.visit(|_, v| {
            for x in v {
                best = best.max(order_key(x));
            }
        });
        from_order_key(max_once(best, 0, values.waves()))
    }
}

/// The index of the row's first maximal element.
struct Argmax;

impl Reduction for Argmax {
    type Out = u32;
    #[inline(always)]
    fn reduce<const V: usize>(values: &impl RowValues<V>) -> u32 {
        // Key 0 lies below every element's key, so the first element always replaces it.
        let (mut best, mut index) = (0, u32::MAX);
        values.visit(|c, v| {
            for (l, x) in v.into_iter().enumerate() {
                let key = argmax_key(x);
                if key > best {
                    best = key;
                    index = c * V as u32 + l as u32;
                }
            }
        });
        let row_best = max_once(best, 0, values.waves());
        let candidate = if best == row_best { index } else { u32::MAX };
        min_once(candidate, 1, values.waves())
    }
}

/// Reduces this workgroup's row with `R` and stores the result at `out[row]` from work-item 0;
/// `V` elements per chunk (`cols` a multiple of `V`).
#[inline(always)]
fn reduce_row<T: Float, R: Reduction, const V: usize>(
    x: *const T,
    out: *mut R::Out,
    rows: u32,
    cols: u32,
) {
    let Some(r) = this_workgroups_row(rows) else {
        return;
    };
    // SAFETY: x holds rows * cols elements; row r starts 16-byte aligned when V elements fill 16
    // bytes, since cols is then a multiple of V.
    let values = unsafe {
        Streamed::<T, V>::new(
            x.add(r * cols as usize),
            Share::of_this_workitem(cols / V as u32),
        )
    };
    let result = R::reduce(&values);
    if workitem_id_x() == 0 {
        // SAFETY: out holds rows elements and r < rows.
        unsafe { *out.add(r) = result };
    }
}

/// Reduces every row with `R`: 16-byte chunks when `cols` is a multiple of `PACK` (that is,
/// [`Float::PACK`], spelled out by each kernel as a const argument), single elements otherwise.
#[inline(always)]
fn reduce_rows<T: Float, R: Reduction, const PACK: usize>(
    x: *const T,
    out: *mut R::Out,
    rows: u32,
    cols: u32,
) {
    const { assert!(PACK == T::PACK) };
    if cols.is_multiple_of(PACK as u32) {
        reduce_row::<T, R, PACK>(x, out, rows, cols);
    } else {
        reduce_row::<T, R, 1>(x, out, rows, cols);
    }
}

/// Sum of each row of f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_sum_f32(x: *const f32, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<f32, Sum, 4>(x, out, rows, cols);
}

/// Sum of each row of f16, in f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_sum_f16(x: *const f16, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<f16, Sum, 8>(x, out, rows, cols);
}

/// Sum of each row of bf16, in f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_sum_bf16(x: *const bf16, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<bf16, Sum, 8>(x, out, rows, cols);
}

/// Maximum of each row of f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_max_f32(x: *const f32, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<f32, Max, 4>(x, out, rows, cols);
}

/// Maximum of each row of f16, as f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_max_f16(x: *const f16, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<f16, Max, 8>(x, out, rows, cols);
}

/// Maximum of each row of bf16, as f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 4 * threads / wave)]
pub fn row_max_bf16(x: *const bf16, out: *mut f32, rows: u32, cols: u32) {
    reduce_rows::<bf16, Max, 8>(x, out, rows, cols);
}

/// Index of the first maximum of each row of f32; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 8 * threads / wave)]
pub fn row_argmax_f32(x: *const f32, out: *mut u32, rows: u32, cols: u32) {
    reduce_rows::<f32, Argmax, 4>(x, out, rows, cols);
}

/// Index of the first maximum of each row of f16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 8 * threads / wave)]
pub fn row_argmax_f16(x: *const f16, out: *mut u32, rows: u32, cols: u32) {
    reduce_rows::<f16, Argmax, 8>(x, out, rows, cols);
}

/// Index of the first maximum of each row of bf16; see the module docs.
#[kernel(max_threads = 1024, whole_waves, dynamic_lds = |threads, wave| 8 * threads / wave)]
pub fn row_argmax_bf16(x: *const bf16, out: *mut u32, rows: u32, cols: u32) {
    reduce_rows::<bf16, Argmax, 8>(x, out, rows, cols);
}

/// Reduces this workgroup's row, held in registers (`CHUNKS` chunks of `V` per work-item), with
/// `R`, and stores the result at `out[row]` from work-item 0; rows of another length are left
/// unwritten.
#[inline(always)]
fn reduce_held<T: Float, R: Reduction, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    out: *mut R::Out,
    rows: u32,
    cols: u32,
) {
    let Some((values, r)) = held_row::<T, V, CHUNKS, WAVES>(x, rows, cols) else {
        return;
    };
    let result = R::reduce(&values);
    if workitem_id_x() == 0 {
        // SAFETY: out holds rows elements and r < rows.
        unsafe { *out.add(r) = result };
    }
}

/// Sum of each row of exactly `CHUNKS * V * workgroup_size` elements, in f32; see the module docs.
#[kernel(
    max_threads = 512,
    whole_waves,
    dynamic_lds = |threads, wave| 4 * threads / wave,
    instances = [
        row_sum_f32_c1<f32, 4, 1, 0>, row_sum_f32_c2<f32, 4, 2, 0>,
        row_sum_f32_c4<f32, 4, 4, 0>, row_sum_f32_c8<f32, 4, 8, 0>,
        row_sum_f32_c16<f32, 4, 16, 0>, row_sum_f32_c32<f32, 4, 32, 0>,
        row_sum_f32_c8w1<f32, 4, 8, 1>, row_sum_f32_c16w1<f32, 4, 16, 1>,
        row_sum_f16_c1<f16, 8, 1, 0>, row_sum_f16_c2<f16, 8, 2, 0>,
        row_sum_f16_c4<f16, 8, 4, 0>, row_sum_f16_c8<f16, 8, 8, 0>,
        row_sum_f16_c16<f16, 8, 16, 0>, row_sum_f16_c32<f16, 8, 32, 0>,
        row_sum_f16_c8w1<f16, 8, 8, 1>, row_sum_f16_c16w1<f16, 8, 16, 1>,
        row_sum_bf16_c1<bf16, 8, 1, 0>, row_sum_bf16_c2<bf16, 8, 2, 0>,
        row_sum_bf16_c4<bf16, 8, 4, 0>, row_sum_bf16_c8<bf16, 8, 8, 0>,
        row_sum_bf16_c16<bf16, 8, 16, 0>, row_sum_bf16_c32<bf16, 8, 32, 0>,
        row_sum_bf16_c8w1<bf16, 8, 8, 1>, row_sum_bf16_c16w1<bf16, 8, 16, 1>,
    ]
)]
pub fn row_sum_held<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    out: *mut f32,
    rows: u32,
    cols: u32,
) {
    reduce_held::<T, Sum, V, CHUNKS, WAVES>(x, out, rows, cols);
}

/// Maximum of each row of exactly `CHUNKS * V * workgroup_size` elements, as f32; see the module
/// docs.
#[kernel(
    max_threads = 512,
    whole_waves,
    dynamic_lds = |threads, wave| 4 * threads / wave,
    instances = [
        row_max_f32_c1<f32, 4, 1>, row_max_f32_c2<f32, 4, 2>,
        row_max_f32_c4<f32, 4, 4>, row_max_f32_c8<f32, 4, 8>,
        row_max_f32_c16<f32, 4, 16>,
        row_max_f16_c1<f16, 8, 1>, row_max_f16_c2<f16, 8, 2>,
        row_max_f16_c4<f16, 8, 4>, row_max_f16_c8<f16, 8, 8>,
        row_max_f16_c16<f16, 8, 16>,
        row_max_bf16_c1<bf16, 8, 1>, row_max_bf16_c2<bf16, 8, 2>,
        row_max_bf16_c4<bf16, 8, 4>, row_max_bf16_c8<bf16, 8, 8>,
        row_max_bf16_c16<bf16, 8, 16>,
    ]
)]
pub fn row_max_held<T: Float, const V: usize, const CHUNKS: usize>(
    x: *const T,
    out: *mut f32,
    rows: u32,
    cols: u32,
) {
    reduce_held::<T, Max, V, CHUNKS, 0>(x, out, rows, cols);
}

/// Index of the first maximum of each row of exactly `CHUNKS * V * workgroup_size` elements; see
/// the module docs. No 16-chunk instances (LLVM keeps their keys in an array indexed at run time).
#[kernel(
    max_threads = 512,
    whole_waves,
    dynamic_lds = |threads, wave| 8 * threads / wave,
    instances = [
        row_argmax_f32_c1<f32, 4, 1>, row_argmax_f32_c2<f32, 4, 2>,
        row_argmax_f32_c4<f32, 4, 4>, row_argmax_f32_c8<f32, 4, 8>,
        row_argmax_f16_c1<f16, 8, 1>, row_argmax_f16_c2<f16, 8, 2>,
        row_argmax_f16_c4<f16, 8, 4>, row_argmax_f16_c8<f16, 8, 8>,
        row_argmax_bf16_c1<bf16, 8, 1>, row_argmax_bf16_c2<bf16, 8, 2>,
        row_argmax_bf16_c4<bf16, 8, 4>, row_argmax_bf16_c8<bf16, 8, 8>,
    ]
)]
pub fn row_argmax_held<T: Float, const V: usize, const CHUNKS: usize>(
    x: *const T,
    out: *mut u32,
    rows: u32,
    cols: u32,
) {
    reduce_held::<T, Argmax, V, CHUNKS, 0>(x, out, rows, cols);
}
