//! Attention (flash attention's forward pass): `O = softmax(scale * Q K^T + mask) V` per head,
//! f16 or bf16 in and out, f32 arithmetic, the softmax computed online (one pass over K and V
//! with a running maximum and sum, never materializing the score matrix).
//!
//! Shapes (row-major, contiguous): `Q` and `O` `[batch, heads_q, seq_q, head_dim]`, `K` and `V`
//! `[batch, heads_kv, seq_kv, head_dim]`; `head_dim` 64 or 128; grouped queries: `heads_q` a
//! multiple of `heads_kv`, query head `h` reading KV head `h / (heads_q / heads_kv)`.
//!
//! Mask: with [`FLAG_CAUSAL`], query `i` sees keys `j <= i + seq_kv - seq_q` (aligned to the
//! bottom right: the last query sees every key, as when `seq_q` new tokens follow `seq_kv -
//! seq_q` cached ones); without it every key. A query that sees no key (causal with
//! `seq_q > seq_kv`, or `seq_kv = 0`) gets a zero output row.
//!
//! Arithmetic: scores `s = (q . k) * scale * log2(e)` (dot products in f32, `scale * log2(e)`
//! rounded once to f32), probabilities `2^(s - m)` with the running row maximum `m`, rescaled
//! by `2^(m_old - m_new)` when it grows, the output divided once by the sum of the
//! probabilities and rounded once to the output type (nearest even). The scalar kernels keep
//! the probabilities in f32; the matrix-core kernels ([`crate::attention_mfma`] on CDNA,
//! [`crate::attention_wmma`] on RDNA) round them to the input type before the `P V` product
//! (the sum divided by stays f32).
//!
//! Kernels:
//! - `attention_<t>(q, k, v, o, heads_q, heads_kv, seq_q, seq_kv, head_dim, scale, flags)`:
//!   every gfx, scalar f32 arithmetic. Workgroups of [`SCALAR_WAVES`] waves, each wave
//!   [`SCALAR_ROWS_PER_WAVE`] query rows; K and V tiles of `WAVE` keys (one per lane for the
//!   scores) staged in LDS. Grid `(ceil(seq_q / rows), heads_q, batch)` with
//!   `rows = SCALAR_WAVES * SCALAR_ROWS_PER_WAVE`; dynamic LDS [`scalar_lds_bytes`].
//! - `attention_decode_<t>(q, k, v, partial, heads_q, heads_kv, seq_kv, head_dim, scale,
//!   split_len)`: `seq_q = 1`, the KV sequence cut into splits of `split_len` keys (a multiple
//!   of the wave size), one workgroup of one wave per split and per [`SCALAR_ROWS_PER_WAVE`]
//!   query heads of a KV head's group. Grid `(splits, heads_kv * ceil(group /
//!   SCALAR_ROWS_PER_WAVE), batch)` with `splits = ceil(seq_kv / split_len)`, `group =
//!   heads_q / heads_kv`; dynamic LDS `scalar_lds_bytes(head_dim, WAVE, 1)`. Writes, for query
//!   row `r = b * heads_q + h` and split `s` (slot `r * splits + s`), the unnormalized output
//!   at `partial[slot * head_dim ..]` and `(m, l)` (maximum and sum, log2 domain) at
//!   `partial[rows * splits * head_dim + 2 * slot]` (`rows = batch * heads_q`):
//!   [`decode_partial_len`] elements in all.
//! - `attention_combine_<t>(partial, o, rows, splits, head_dim)`: combines the splits of each
//!   query row (`O = sum_s 2^(m_s - M) o_s / sum_s 2^(m_s - M) l_s`, `M = max m_s`). Grid
//!   `(rows, 1, 1)`, workgroups of whole waves up to 256 work-items (one wave reads the splits'
//!   statistics once), no LDS.
//!
//! Every kernel takes any `seq_q`, `seq_kv` (tails masked, loads past the end replaced by
//! zeros) and `batch`; element offsets within a head must stay below 2^32 (`seq * head_dim`),
//! and buffers 16-byte aligned. A NaN or infinity in Q or K gives NaN in the rows it reaches.

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::attention_scalar::{Rows, attend, write_partial, write_rows},
    crate::attention_tile::{Head, Problem, query_block},
    crate::dtype::Float,
    iron_intrinsics::id::{
        num_workgroups_x, workgroup_id_x, workgroup_id_y, workgroup_id_z, workgroup_size_x,
        workitem_id_x,
    },
    iron_intrinsics::target::WAVE,
};

/// Flag: causal mask, aligned to the bottom right (see the module docs).
pub const FLAG_CAUSAL: u32 = 1;
/// Waves per workgroup of `attention_<t>`.
pub const SCALAR_WAVES: u32 = 4;
/// Query rows each wave of the scalar kernels computes.
pub const SCALAR_ROWS_PER_WAVE: u32 = 4;
/// Bytes of padding after each staged K or V row (keeps 16-byte LDS reads free of bank
/// conflicts).
pub const ROW_PAD: u32 = 16;

/// Dynamic LDS of the scalar kernels with `waves` waves of `wave` lanes: K and V tiles of
/// `wave` rows of `head_dim` 16-bit elements (padded by [`ROW_PAD`]), the workgroup's query
/// rows in f32, and each wave's probabilities of one tile in f32.
pub const fn scalar_lds_bytes(head_dim: u32, wave: u32, waves: u32) -> u32 {
    let rows = waves * SCALAR_ROWS_PER_WAVE;
    2 * wave * (2 * head_dim + ROW_PAD) + rows * head_dim * 4 + rows * wave * 4
}

/// f32 elements of the decode kernels' `partial` buffer for `rows = batch * heads_q` query rows
/// cut into `splits` splits: the unnormalized outputs, then a maximum and a sum per row and
/// split.
pub const fn decode_partial_len(rows: usize, splits: usize, head_dim: usize) -> usize {
    rows * splits * (head_dim + 2)
}

/// Output columns each lane of the scalar kernels owns for rows of `head_dim`.
const fn columns_per_lane(head_dim: u32) -> usize {
    (head_dim / WAVE) as usize
}

/// The forward pass of this workgroup's query rows, `CPL = head_dim / WAVE` columns per lane.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
unsafe fn forward_in<T: Float, const D: u32, const CPL: usize>(
    (q, k, v, o): (*const T, *const T, *const T, *mut T),
    heads: (u32, u32),
    problem: &Problem,
) {
    let rows_per_block = SCALAR_ROWS_PER_WAVE * (workgroup_size_x() / WAVE);
    // SAFETY: the buffers hold the launch's heads, as the caller guarantees.
    let (rows, (q, k, v, o)) =
        unsafe { query_block((q, k, v, o), heads, problem, D, rows_per_block) };
    // SAFETY: as the caller guarantees.
    let state = unsafe { attend::<T, D, CPL>(q, k, v, &rows, problem) };
    // SAFETY: the block's rows below `rows.valid` lie in O.
    unsafe { write_rows::<T, D, CPL>(&state, o, &rows) };
}

/// [`forward_in`] for the `head_dim` of the launch (64 or 128; other values write nothing).
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "an attention kernel's arguments")]
unsafe fn forward<T: Float>(
    buffers: (*const T, *const T, *const T, *mut T),
    heads_q: u32,
    heads_kv: u32,
    seq_q: u32,
    seq_kv: u32,
    head_dim: u32,
    scale: f32,
    flags: u32,
) {
    let problem = Problem::new(seq_q, seq_kv, scale, flags & FLAG_CAUSAL != 0);
    let heads = (heads_q, heads_kv);
    // SAFETY: as the caller guarantees.
    unsafe {
        match head_dim {
            64 => forward_in::<T, 64, { columns_per_lane(64) }>(buffers, heads, &problem),
            128 => forward_in::<T, 128, { columns_per_lane(128) }>(buffers, heads, &problem),
            _ => {}
        }
    }
}

/// One split of the decode pass, `CPL = head_dim / WAVE` columns per lane.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
unsafe fn decode_in<T: Float, const D: u32, const CPL: usize>(
    (q, k, v, partial): (*const T, *const T, *const T, *mut f32),
    (heads_q, heads_kv): (u32, u32),
    split_len: u32,
    problem: &Problem,
) {
    let group = heads_q / heads_kv;
    let blocks_per_group = group.div_ceil(SCALAR_ROWS_PER_WAVE);
    let (batch, y) = (workgroup_id_z(), workgroup_id_y());
    let (kv_head, block) = (y / blocks_per_group, y % blocks_per_group);
    let first_head = kv_head * group + block * SCALAR_ROWS_PER_WAVE;
    let split = workgroup_id_x();
    let begin = split * split_len;
    let end = problem.seq_kv.min(begin + split_len);
    let rows = Rows::all_keys(
        (group - block * SCALAR_ROWS_PER_WAVE).min(SCALAR_ROWS_PER_WAVE),
        begin,
        end,
    );
    let head = Head::of_query_head(batch, first_head, (heads_q, heads_kv), problem, D);
    // SAFETY: the heads' offsets lie in the buffers, as the caller guarantees (seq_q = 1: the
    // group's query heads are consecutive rows of Q).
    let (q, k, v) = unsafe {
        (
            q.add(head.q_offset(0)),
            k.add(head.kv_offset),
            v.add(head.kv_offset),
        )
    };
    // SAFETY: as the caller guarantees.
    let state = unsafe { attend::<T, D, CPL>(q, k, v, &rows, problem) };
    let first_row = batch * heads_q + first_head;
    let query_rows = num_rows(heads_q);
    // SAFETY: the partial buffer holds every row and split (module docs).
    unsafe {
        write_partial::<D, CPL>(
            &state,
            partial,
            (first_row, query_rows),
            (split, num_workgroups_x()),
            &rows,
        )
    };
}

/// Query rows of a decode launch: `batch * heads_q`.
#[inline(always)]
fn num_rows(heads_q: u32) -> u32 {
    use iron_intrinsics::id::{grid_size_z, workgroup_size_z};
    grid_size_z() / workgroup_size_z() * heads_q
}

/// [`decode_in`] for the `head_dim` of the launch.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "an attention kernel's arguments")]
unsafe fn decode<T: Float>(
    buffers: (*const T, *const T, *const T, *mut f32),
    heads_q: u32,
    heads_kv: u32,
    seq_kv: u32,
    head_dim: u32,
    scale: f32,
    split_len: u32,
) {
    let problem = Problem::new(1, seq_kv, scale, false);
    let heads = (heads_q, heads_kv);
    // SAFETY: as the caller guarantees.
    unsafe {
        match head_dim {
            64 => decode_in::<T, 64, { columns_per_lane(64) }>(buffers, heads, split_len, &problem),
            128 => {
                decode_in::<T, 128, { columns_per_lane(128) }>(buffers, heads, split_len, &problem)
            }
            _ => {}
        }
    }
}

/// Combines the splits of this workgroup's query row. Each split's statistics are read by one
/// lane of each wave (lane `s % WAVE` reads split `s`'s, once when there are at most [`WAVE`]
/// splits) and reach the other lanes through the wave (its weight by `v_readlane`), so the
/// partial outputs are the only per-lane reads; one wave per row reads them once.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
unsafe fn combine<T: Float>(partial: *const f32, o: *mut T, rows: u32, splits: u32, head_dim: u32) {
    use iron_intrinsics::fmath::exp2_normal;
    use iron_intrinsics::id::lane_id;
    use iron_intrinsics::wave::{any, read_lane, reduce_max, reduce_sum};
    let row = workgroup_id_x();
    if row >= rows {
        return;
    }
    // Split `s0 + lane`'s (maximum, sum), or `idle` past the last split.
    let lane_stats = |s0: u32, idle: (f32, f32)| {
        let s = s0 + lane_id();
        if s >= splits {
            return idle;
        }
        let at = rows as usize * splits as usize * head_dim as usize
            + 2 * (row as usize * splits as usize + s as usize);
        // SAFETY: inside the statistics part of the partial buffer.
        unsafe { (*partial.add(at), *partial.add(at + 1)) }
    };
    let idle = (f32::NEG_INFINITY, 0.0);
    let first = lane_stats(0, idle);
    let stats_from = |s0: u32| if s0 == 0 { first } else { lane_stats(s0, idle) };
    let mut max = f32::NEG_INFINITY;
    for s0 in (0..splits).step_by(WAVE as usize) {
        max = max.max(reduce_max(stats_from(s0).0));
    }
    let base = if max == f32::NEG_INFINITY { 0.0 } else { max };
    let mut sum = 0.0;
    for s0 in (0..splits).step_by(WAVE as usize) {
        let (m, l) = stats_from(s0);
        sum += reduce_sum(l * exp2_normal(m - base));
    }
    let inverse = if sum > 0.0 { 1.0 / sum } else { 0.0 };
    // Every lane of the wave stays in the loop while any has a column (the weights come from
    // other lanes); lanes past the last column only help.
    let mut c = workitem_id_x();
    while any(c < head_dim) {
        let mut value = 0.0;
        for s0 in (0..splits).step_by(WAVE as usize) {
            let weights = exp2_normal(stats_from(s0).0 - base);
            for j in 0..WAVE.min(splits - s0) {
                let weight = read_lane(weights, j);
                if c < head_dim {
                    let at = (row as usize * splits as usize + (s0 + j) as usize)
                        * head_dim as usize
                        + c as usize;
                    // SAFETY: inside the outputs part of the partial buffer.
                    value =
                        iron_intrinsics::math::mul_add(unsafe { *partial.add(at) }, weight, value);
                }
            }
        }
        if c < head_dim {
            // SAFETY: O holds rows * head_dim elements.
            unsafe {
                *o.add(row as usize * head_dim as usize + c as usize) =
                    T::round_from_f32(value * inverse)
            };
        }
        c += workgroup_size_x();
    }
}

/// Declares the scalar forward, decode and combine kernels of one element type.
macro_rules! attention_kernels {
    ($t:ident, $forward:ident, $decode:ident, $combine:ident) => {
        #[doc = concat!("Attention forward pass, ", stringify!($t), ", scalar (every gfx); see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $forward(
            q: *const $t,
            k: *const $t,
            v: *const $t,
            o: *mut $t,
            heads_q: u32,
            heads_kv: u32,
            seq_q: u32,
            seq_kv: u32,
            head_dim: u32,
            scale: f32,
            flags: u32,
        ) {
            // SAFETY: the launch follows the module's contract.
            unsafe {
                forward::<$t>(
                    (q, k, v, o),
                    heads_q,
                    heads_kv,
                    seq_q,
                    seq_kv,
                    head_dim,
                    scale,
                    flags,
                )
            };
        }

        #[doc = concat!("Attention decode split (`seq_q = 1`), ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 64)]
        pub fn $decode(
            q: *const $t,
            k: *const $t,
            v: *const $t,
            partial: *mut f32,
            heads_q: u32,
            heads_kv: u32,
            seq_kv: u32,
            head_dim: u32,
            scale: f32,
            split_len: u32,
        ) {
            // SAFETY: the launch follows the module's contract.
            unsafe {
                decode::<$t>(
                    (q, k, v, partial),
                    heads_q,
                    heads_kv,
                    seq_kv,
                    head_dim,
                    scale,
                    split_len,
                )
            };
        }

        #[doc = concat!("Combines the decode splits into ", stringify!($t), " outputs; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $combine(partial: *const f32, o: *mut $t, rows: u32, splits: u32, head_dim: u32) {
            // SAFETY: the launch follows the module's contract.
            unsafe { combine::<$t>(partial, o, rows, splits, head_dim) };
        }
    };
}

attention_kernels!(
    f16,
    attention_f16,
    attention_decode_f16,
    attention_combine_f16
);
attention_kernels!(
    bf16,
    attention_bf16,
    attention_decode_bf16,
    attention_combine_bf16
);
