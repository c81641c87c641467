//! Attention on CDNA's matrix cores (gfx90a, gfx942, gfx950): the forward pass of
//! [`crate::attention`] with both products on `v_mfma_f32_16x16x16_{f16,bf16}`, except the
//! scores on gfx950, which take its `v_mfma_f32_16x16x32_{f16,bf16}` (same output layout, half
//! the instructions).
//!
//! Kernels `attention_mfma_<t>(q, k, v, o, heads_q, heads_kv, seq_q, seq_kv, head_dim, scale,
//! flags)`, arguments, shapes, mask and arithmetic as in [`crate::attention`]; the
//! probabilities are rounded to `<t>` for the `P V` product (the sum they are divided by stays
//! f32). On gfx90a the 16-bit MFMAs flush subnormal inputs to zero.
//!
//! Launch: workgroups of exactly [`MFMA_THREADS`] (4 waves), each wave [`MFMA_ROWS_PER_WAVE`]
//! query rows; grid `(ceil(seq_q / 64), heads_q, batch)`; dynamic LDS [`mfma_lds_bytes`].
//!
//! Tiling: K tiles of [`MFMA_KEYS`] keys. A wave computes the transposed scores `S^T = K Q^T`
//! (16 keys x 16 rows per MFMA, Q's fragments held in registers for the whole pass), so that
//! each lane's accumulator elements (4 keys of one query row) are exactly its B fragment of the
//! transposed output product `O^T = V^T P^T`: the probabilities go from accumulator to operand
//! without moving between lanes, and each lane's output elements and row statistics belong to
//! one query row. K is staged row-major (the A operand, K-contiguous along the head dimension),
//! V transposed (`V^T`, K-contiguous along the keys).
#![cfg(any(not(target_arch = "amdgpu"), iron_matrix = "mfma"))]

use crate::attention::ROW_PAD;
use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::attention::FLAG_CAUSAL,
    crate::attention_tile::{Problem, Rows, query_block, stage_rows, stage_transposed, unroll},
    crate::dtype::Float,
    iron_intrinsics::fmath::exp2_normal,
    iron_intrinsics::id::{lane_id, wave_id},
    iron_intrinsics::lds,
    iron_intrinsics::matrix::{
        Accumulator, Bf16Fragment, F16Fragment, MatrixCore, MfmaF32_16x16x16Bf16,
        MfmaF32_16x16x16F16, Mma, load_a, load_b,
    },
    iron_intrinsics::sync::workgroup_barrier,
    iron_intrinsics::wave::shuffle_xor,
};

/// Work-items per workgroup of the matrix-core kernels (exactly this many).
pub const MFMA_THREADS: u32 = 256;
/// Query rows per wave (one MFMA tile).
pub const MFMA_ROWS_PER_WAVE: u32 = 16;
/// Query rows per workgroup.
pub const MFMA_BLOCK_ROWS: u32 = MFMA_ROWS_PER_WAVE * MFMA_THREADS / 64;
/// Keys per staged K and V tile.
pub const MFMA_KEYS: u32 = 64;

/// Dynamic LDS of the matrix-core kernels: the K tile (`MFMA_KEYS` rows of `head_dim`, padded by
/// 16 bytes; it first holds the block's query rows) and the transposed V tile (`head_dim` rows
/// of `MFMA_KEYS`, padded by 16 bytes).
pub const fn mfma_lds_bytes(head_dim: u32) -> u32 {
    MFMA_KEYS * (2 * head_dim + ROW_PAD) + head_dim * (2 * MFMA_KEYS + ROW_PAD)
}

/// Bytes per row of the transposed V tile.
const V_PITCH: u32 = 2 * MFMA_KEYS + ROW_PAD;
/// MFMA tiles of 16 keys per K tile.
const KEY_TILES: usize = (MFMA_KEYS / 16) as usize;

/// Elements per lane of the score MFMA's operands.
#[cfg(iron_gfx = "gfx950")]
const SCORE_ELEMENTS: usize = 8;
/// Elements per lane of the score MFMA's operands.
#[cfg(not(iron_gfx = "gfx950"))]
const SCORE_ELEMENTS: usize = 4;

/// An input type of the matrix-core kernels: its MFMAs and how probabilities become operands.
trait MfmaInput: Float {
    /// The 16x16x16 MFMA of this type (the `P V` product: its accumulator layout of `S^T` is
    /// its B operand layout).
    type Core: Mma<Acc = Accumulator<4>>;
    /// The MFMA of the scores `S^T = K Q^T` (reducing over the head dimension): gfx950's
    /// 16x16x32, else the 16x16x16.
    type ScoreCore: Mma<Acc = Accumulator<4>>;
    /// Four probabilities (consecutive keys) rounded to this type, as a B fragment.
    fn fragment(p: [f32; 4]) -> <Self::Core as MatrixCore>::B;
    /// A B fragment of zeros of the score MFMA.
    fn score_zero() -> <Self::ScoreCore as MatrixCore>::B;
}

impl MfmaInput for f16 {
    type Core = MfmaF32_16x16x16F16;
    #[cfg(iron_gfx = "gfx950")]
    type ScoreCore = iron_intrinsics::matrix::MfmaF32_16x16x32F16;
    #[cfg(not(iron_gfx = "gfx950"))]
    type ScoreCore = MfmaF32_16x16x16F16;
    #[inline(always)]
    fn fragment(p: [f32; 4]) -> F16Fragment<4> {
        F16Fragment::from_bits(p.map(iron_intrinsics::half::f32_to_f16))
    }
    #[inline(always)]
    fn score_zero() -> F16Fragment<SCORE_ELEMENTS> {
        F16Fragment::from_bits([0; SCORE_ELEMENTS])
    }
}

impl MfmaInput for bf16 {
    type Core = MfmaF32_16x16x16Bf16;
    #[cfg(iron_gfx = "gfx950")]
    type ScoreCore = iron_intrinsics::matrix::MfmaF32_16x16x32Bf16;
    #[cfg(not(iron_gfx = "gfx950"))]
    type ScoreCore = MfmaF32_16x16x16Bf16;
    #[inline(always)]
    fn fragment(p: [f32; 4]) -> Bf16Fragment<4> {
        Bf16Fragment::from_bits(p.map(iron_intrinsics::half::f32_to_bf16))
    }
    #[inline(always)]
    fn score_zero() -> Bf16Fragment<SCORE_ELEMENTS> {
        Bf16Fragment::from_bits([0; SCORE_ELEMENTS])
    }
}

/// The maximum of `x` over the four lanes holding the same query row (`lane % 16`). Wave-wide.
#[inline(always)]
fn row_max(x: f32) -> f32 {
    let x = x.max(shuffle_xor(x, 16));
    x.max(shuffle_xor(x, 32))
}

/// The sum of `x` over the four lanes holding the same query row. Wave-wide.
#[inline(always)]
fn row_sum(x: f32) -> f32 {
    let x = x + shuffle_xor(x, 16);
    x + shuffle_xor(x, 32)
}

/// The forward pass of this workgroup's block of query rows with `STEPS = D / 16` MFMA steps
/// along the head dimension. Workgroup-wide.
///
/// # Safety
/// The kernel's contract (module docs); `q` and `o` point at the block's first row, `k` and `v`
/// at the KV head.
#[inline(always)]
unsafe fn attend<T: MfmaInput, const D: u32, const STEPS: usize>(
    (q, k, v, o): (*const T, *const T, *const T, *mut T),
    rows: &Rows,
    problem: &Problem,
) {
    const { assert!(STEPS as u32 * 16 == D && STEPS <= 8 && KEY_TILES == 4) };
    type Score<T> = <T as MfmaInput>::ScoreCore;
    let score_steps = (D / <Score<T> as MatrixCore>::K) as usize;
    let score_step_bytes = (<Score<T> as MatrixCore>::K * 2) as usize;
    let k_pitch = 2 * D + ROW_PAD;
    let k_tile = lds::dynamic::<u8>();
    // SAFETY: the transposed V tile follows the K tile in the launch's dynamic LDS.
    let v_tile = unsafe { k_tile.add((MFMA_KEYS * k_pitch) as usize) };
    let (wave, lane) = (wave_id(), lane_id());
    // SAFETY: the block's valid rows lie in Q; the K tile holds MFMA_BLOCK_ROWS rows.
    unsafe {
        stage_rows::<T, D, MFMA_THREADS, true>(q, (0, MFMA_BLOCK_ROWS, rows.valid), k_tile, k_pitch)
    };
    workgroup_barrier();
    let mut queries = [T::score_zero(); STEPS];
    unroll!(s in [0, 1, 2, 3, 4, 5, 6, 7] {
        if s < score_steps {
            // SAFETY: the wave's 16 staged query rows, columns 16 s.., 16-byte aligned rows.
            queries[s] = unsafe {
                let rows = k_tile.add((wave * MFMA_ROWS_PER_WAVE * k_pitch) as usize);
                load_b::<Score<T>>(rows.add(s * score_step_bytes), k_pitch)
            };
        }
    });
    workgroup_barrier();
    let row = wave * MFMA_ROWS_PER_WAVE + lane % 16;
    let tiles = Tiles {
        k,
        v,
        k_tile,
        v_tile,
        k_pitch,
        end: rows.end,
        limit: rows.limit(row),
        group: lane / 16,
        scale_log2: problem.scale_log2,
    };
    let mut state = RowState {
        out: [Accumulator::<4>::zero(); STEPS],
        max: f32::NEG_INFINITY,
        sum: 0.0,
    };
    // Tiles below every row's limit need no bounds check and no mask; the rest (the last
    // partial tile, the causal diagonal) take both.
    let unmasked = rows.begin + (rows.unmasked_end() - rows.begin) / MFMA_KEYS * MFMA_KEYS;
    let mut tile = rows.begin;
    while tile < unmasked {
        // SAFETY: as the caller guarantees; the tile lies below every row's limit.
        unsafe { tiles.step::<D, STEPS, false>(tile, &queries, &mut state) };
        tile += MFMA_KEYS;
    }
    while tile < rows.end {
        // SAFETY: as the caller guarantees.
        unsafe { tiles.step::<D, STEPS, true>(tile, &queries, &mut state) };
        tile += MFMA_KEYS;
    }
    let RowState { out, sum, .. } = state;
    let sum = row_sum(sum);
    if row < rows.valid {
        let inverse = if sum > 0.0 { 1.0 / sum } else { 0.0 };
        unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7] {
            if n < STEPS {
                let v = out[n].to_array();
                let values = [
                    T::round_from_f32(v[0] * inverse),
                    T::round_from_f32(v[1] * inverse),
                    T::round_from_f32(v[2] * inverse),
                    T::round_from_f32(v[3] * inverse),
                ];
                let at = (row * D) as usize + n * 16 + 4 * tiles.group as usize;
                // SAFETY: head dimensions 16 n + 4 group .. + 4 of valid row `row`, 8-byte
                // aligned.
                unsafe { *(o.add(at) as *mut Words2<T>) = Words2(values) };
            }
        });
    }
}

/// What the key tiles of one workgroup's pass share: the K and V heads, their LDS tiles, and
/// this lane's query row.
struct Tiles<T> {
    k: *const T,
    v: *const T,
    k_tile: *mut u8,
    v_tile: *mut u8,
    k_pitch: u32,
    /// One past the last key the workgroup visits.
    end: u32,
    /// One past the last key this lane's row sees.
    limit: u32,
    /// Which four keys of each 16 this lane's accumulator elements hold.
    group: u32,
    scale_log2: f32,
}

/// One lane's running state of the online softmax: its row's output accumulators, the row's
/// maximum score so far, and the sum of this lane's probabilities.
struct RowState<const STEPS: usize> {
    out: [Accumulator<4>; STEPS],
    max: f32,
    sum: f32,
}

impl<T: MfmaInput> Tiles<T> {
    /// Stages the K and V tile at key `tile` and folds it into `state` (scores, online softmax,
    /// `P V`), with `D = 16 STEPS` head dimensions. Without `CHECKED` every key of the tile lies
    /// below every row's limit: the staging checks no bounds and the scores take no mask.
    /// Workgroup-wide.
    ///
    /// # Safety
    /// The kernel's contract; keys below `end` lie in K and V; without `CHECKED`, `tile +
    /// MFMA_KEYS` is at most every existing row's limit.
    #[inline(always)]
    unsafe fn step<const D: u32, const STEPS: usize, const CHECKED: bool>(
        &self,
        tile: u32,
        queries: &[<T::ScoreCore as MatrixCore>::B; STEPS],
        state: &mut RowState<STEPS>,
    ) {
        type Core<T> = <T as MfmaInput>::Core;
        type Score<T> = <T as MfmaInput>::ScoreCore;
        let score_steps = (D / <Score<T> as MatrixCore>::K) as usize;
        let score_step_bytes = (<Score<T> as MatrixCore>::K * 2) as usize;
        let keys = (tile, MFMA_KEYS, self.end);
        // SAFETY: keys below end lie in K and V (below every row's limit without CHECKED); both
        // tiles fit the dynamic LDS.
        unsafe {
            stage_rows::<T, D, MFMA_THREADS, CHECKED>(self.k, keys, self.k_tile, self.k_pitch);
            stage_transposed::<T, D, MFMA_THREADS, CHECKED>(self.v, keys, self.v_tile, V_PITCH);
        }
        workgroup_barrier();
        let mut scores = [[0.0f32; 4]; KEY_TILES];
        let mut tile_max = f32::NEG_INFINITY;
        unroll!(kt in [0, 1, 2, 3] {
            let mut acc = Accumulator::<4>::zero();
            unroll!(s in [0, 1, 2, 3, 4, 5, 6, 7] {
                if s < score_steps {
                    // SAFETY: 16 staged key rows, one score step of columns, 16-byte aligned
                    // rows.
                    let keys = unsafe {
                        let at = kt * 16 * self.k_pitch as usize + s * score_step_bytes;
                        load_a::<Score<T>>(self.k_tile.add(at), self.k_pitch)
                    };
                    acc = Score::<T>::mma(keys, queries[s], acc);
                }
            });
            let first_key = tile + kt as u32 * 16 + 4 * self.group;
            let raw = acc.to_array();
            unroll!(i in [0, 1, 2, 3] {
                scores[kt][i] = if !CHECKED || first_key + (i as u32) < self.limit {
                    raw[i] * self.scale_log2
                } else {
                    f32::NEG_INFINITY
                };
                tile_max = tile_max.max(scores[kt][i]);
            });
        });
        let new_max = state.max.max(row_max(tile_max));
        // Until the row has seen a key its maximum is -inf: shift by 0 then, so that every
        // probability and factor is 2^-inf = 0 rather than NaN.
        let base = if new_max == f32::NEG_INFINITY {
            0.0
        } else {
            new_max
        };
        let alpha = exp2_normal(state.max - base);
        state.max = new_max;
        let mut tile_sum = 0.0;
        let mut probabilities = [T::fragment([0.0; 4]); KEY_TILES];
        unroll!(kt in [0, 1, 2, 3] {
            let mut p = [0.0f32; 4];
            unroll!(i in [0, 1, 2, 3] {
                p[i] = exp2_normal(scores[kt][i] - base);
                tile_sum += p[i];
            });
            probabilities[kt] = T::fragment(p);
        });
        state.sum = state.sum * alpha + tile_sum;
        unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7] {
            if n < STEPS {
                let old = state.out[n].to_array();
                let mut acc = Accumulator::from_array([
                    old[0] * alpha,
                    old[1] * alpha,
                    old[2] * alpha,
                    old[3] * alpha,
                ]);
                unroll!(kt in [0, 1, 2, 3] {
                    // SAFETY: 16 rows (head dimensions 16 n..) of the transposed V tile, keys
                    // 16 kt.., 16-byte aligned rows.
                    let values = unsafe {
                        load_a::<Core<T>>(self.v_tile.add(n * 16 * V_PITCH as usize + kt * 32), V_PITCH)
                    };
                    acc = Core::<T>::mma(values, probabilities[kt], acc);
                });
                state.out[n] = acc;
            }
        });
        workgroup_barrier();
    }
}

/// Four 16-bit elements written as one 8-byte access.
#[repr(C, align(8))]
struct Words2<T>([T; 4]);

/// The forward pass of this workgroup, for the launch's `head_dim`.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "an attention kernel's arguments")]
unsafe fn forward<T: MfmaInput>(
    (q, k, v, o): (*const T, *const T, *const T, *mut T),
    heads_q: u32,
    heads_kv: u32,
    seq_q: u32,
    seq_kv: u32,
    head_dim: u32,
    scale: f32,
    flags: u32,
) {
    let problem = Problem::new(seq_q, seq_kv, scale, flags & FLAG_CAUSAL != 0);
    // SAFETY: the buffers hold the launch's heads, as the caller guarantees.
    let (rows, buffers) = unsafe {
        query_block(
            (q, k, v, o),
            (heads_q, heads_kv),
            &problem,
            head_dim,
            MFMA_BLOCK_ROWS,
        )
    };
    // SAFETY: as the caller guarantees.
    unsafe {
        match head_dim {
            64 => attend::<T, 64, 4>(buffers, &rows, &problem),
            128 => attend::<T, 128, 8>(buffers, &rows, &problem),
            _ => {}
        }
    }
}

/// Declares the matrix-core forward kernel of one element type.
macro_rules! mfma_kernel {
    ($t:ident, $name:ident) => {
        #[doc = concat!("Attention forward pass, ", stringify!($t), ", on the MFMA matrix cores (CDNA); see the module docs.")]
        #[kernel(block = 256)]
        pub fn $name(
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
    };
}

mfma_kernel!(f16, attention_mfma_f16);
mfma_kernel!(bf16, attention_mfma_bf16);
