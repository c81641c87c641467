//! Attention on RDNA's matrix cores (gfx1100, gfx1201; wave32 and wave64): the forward pass of
//! [`crate::attention`] with both products on `v_wmma_f32_16x16x16_{f16,bf16}`.
//!
//! Kernels `attention_wmma_<t>(q, k, v, o, heads_q, heads_kv, seq_q, seq_kv, head_dim, scale,
//! flags)`, arguments, shapes, mask and arithmetic as in [`crate::attention`]; the
//! probabilities are rounded to `<t>` for the `P V` product (the sum they are divided by stays
//! f32).
//!
//! Launch: workgroups of [`WMMA_WAVES`] waves (128 work-items in wave32, 256 in wave64), each
//! wave [`WMMA_ROWS_PER_WAVE`] query rows; grid `(ceil(seq_q / 64), heads_q, batch)`; dynamic
//! LDS [`wmma_lds_bytes`].
//!
//! Tiling: K tiles of [`WMMA_KEYS`] keys. As on CDNA ([`crate::attention_mfma`]) a wave
//! computes the transposed products `S^T = K Q^T` and `O^T = V^T P^T`, so that each lane's
//! accumulator elements belong to one query row (the column `lane % 16` of every WMMA output):
//! the row's running maximum and its rescaling stay in the lane, and the row statistics combine
//! the lane groups holding the same row. Between the two products the probabilities go
//! through LDS (each wave's 16 x 64 tile, rounded to `<t>`), written in the accumulator layout
//! and read back in the B operand layout, whatever the gfx's layouts are (gfx11 replicates
//! operands across lane groups, gfx12 spreads them). K, Q and the probabilities are staged
//! K-contiguous along the reduced dimension, V transposed. The K and V tiles are read from
//! global memory into registers one tile ahead (`attention_tile::KvAhead`), so that their
//! latency hides behind the current tile's work.
#![cfg(any(not(target_arch = "amdgpu"), iron_matrix = "wmma"))]

use crate::attention::ROW_PAD;
use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::attention::FLAG_CAUSAL,
    crate::attention_tile::{
        KvAhead, Problem, Rows, bf16_probability_word, query_block, stage_rows, stage_transposed,
        unroll,
    },
    crate::dtype::Float,
    iron_intrinsics::fmath::exp2_normal,
    iron_intrinsics::id::{lane_id, wave_id},
    iron_intrinsics::lds,
    iron_intrinsics::matrix::{
        Accumulator, MatrixCore, Mma, WmmaF32_16x16x16Bf16, WmmaF32_16x16x16F16, load_a, load_b,
    },
    iron_intrinsics::sync::{wave_barrier, workgroup_barrier},
    iron_intrinsics::target::WAVE,
    iron_intrinsics::wave::shuffle_xor,
};

/// Waves per workgroup.
pub const WMMA_WAVES: u32 = 4;
/// Query rows per wave (one WMMA tile).
pub const WMMA_ROWS_PER_WAVE: u32 = 16;
/// Query rows per workgroup.
pub const WMMA_BLOCK_ROWS: u32 = WMMA_ROWS_PER_WAVE * WMMA_WAVES;
/// Work-items per workgroup (the launch's, a constant of the wave size).
const WMMA_THREADS: u32 = WMMA_WAVES * WAVE;
/// Keys per staged K and V tile.
pub const WMMA_KEYS: u32 = 64;

/// Dynamic LDS of the WMMA kernels: the K tile and the block's query rows (`64` rows of
/// `head_dim` each, padded by [`ROW_PAD`]), the transposed V tile (`head_dim` rows of
/// [`WMMA_KEYS`], padded) and each wave's probabilities (16 rows of [`WMMA_KEYS`], padded).
pub const fn wmma_lds_bytes(head_dim: u32) -> u32 {
    let key_rows = 2 * head_dim + ROW_PAD;
    let key_columns = 2 * WMMA_KEYS + ROW_PAD;
    (WMMA_KEYS + WMMA_BLOCK_ROWS) * key_rows
        + (head_dim + WMMA_WAVES * WMMA_ROWS_PER_WAVE) * key_columns
}

/// Accumulator elements per lane: `256 / WAVE`.
const SPREAD: usize = (256 / WAVE) as usize;
/// Bytes per row of the transposed V tile and of the probability tiles.
const KEY_PITCH: u32 = 2 * WMMA_KEYS + ROW_PAD;
/// WMMA tiles of 16 keys per K tile.
const KEY_TILES: usize = (WMMA_KEYS / 16) as usize;

/// An input type of the WMMA kernels and its instruction.
trait WmmaInput: Float {
    /// The 16x16x16 WMMA of this type.
    type Core: Mma<Acc = Accumulator<SPREAD>>;
    /// A probability (in `[0, 1]`, or NaN) rounded to this type.
    fn probability(p: f32) -> Self;
}

impl WmmaInput for f16 {
    type Core = WmmaF32_16x16x16F16;
    #[inline(always)]
    fn probability(p: f32) -> Self {
        Self::round_from_f32(p)
    }
}

impl WmmaInput for bf16 {
    type Core = WmmaF32_16x16x16Bf16;
    #[inline(always)]
    fn probability(p: f32) -> Self {
        bf16::from_bits((bf16_probability_word(p) >> 16) as u16)
    }
}

/// Combines `x` over the lane groups holding the same query row (`lane % 16`) with `op`.
/// Wave-wide.
#[inline(always)]
fn across_groups(x: f32, op: fn(f32, f32) -> f32) -> f32 {
    let mut x = op(x, shuffle_xor(x, 16));
    if WAVE == 64 {
        x = op(x, shuffle_xor(x, 32));
    }
    x
}

/// The most chunks per work-item (`ROUNDS = WMMA_KEYS * D / 8 / WMMA_THREADS`) of each K and V
/// tile read one tile ahead: 32 registers held across a tile's work. wave32 with 128 head
/// dimensions (8 chunks, 64 registers) spills with them, and also when all 8 are read before
/// the first is written: there each tile is staged by [`stage_rows`] and [`stage_transposed`],
/// which write each chunk as it arrives.
const AHEAD_ROUNDS: usize = 4;

/// What the key tiles of one workgroup's pass share: the K and V heads, their LDS tiles, the
/// wave's staged queries and probability tile, and this lane.
struct Tiles<T> {
    k: *const T,
    v: *const T,
    k_tile: *mut u8,
    v_tile: *mut u8,
    queries: *const u8,
    probabilities: *mut u8,
    row_pitch: u32,
    /// One past the last key the workgroup visits.
    end: u32,
    /// One past the last key this lane's row sees.
    limit: u32,
    lane: u32,
    scale_log2: f32,
}

/// One lane's running state of the online softmax: its part of the row's output accumulators,
/// the row's maximum score so far, and the sum of this lane's probabilities.
struct RowState<const STEPS: usize> {
    out: [Accumulator<SPREAD>; STEPS],
    max: f32,
    sum: f32,
}

impl<T: WmmaInput> Tiles<T> {
    /// Stages the K and V tile at key `tile` from `fetched` (from global memory beyond
    /// [`AHEAD_ROUNDS`]), reads the next tile into `fetched` (up to it), and folds this one
    /// into `state` (scores, online softmax, `P V`), with `D = 16 STEPS` head dimensions.
    /// Without `CHECKED` every key of the tile lies below every row's limit: the scores take no
    /// mask. Workgroup-wide.
    ///
    /// # Safety
    /// The kernel's contract; keys below `end` lie in K and V; `fetched` holds the tile at
    /// `tile` (up to [`AHEAD_ROUNDS`]); without `CHECKED`, `tile + WMMA_KEYS` is at most every
    /// existing row's limit.
    #[inline(always)]
    unsafe fn step<const D: u32, const STEPS: usize, const ROUNDS: usize, const CHECKED: bool>(
        &self,
        tile: u32,
        fetched: &mut KvAhead<D, WMMA_THREADS, ROUNDS>,
        state: &mut RowState<STEPS>,
    ) {
        type Core<T> = <T as WmmaInput>::Core;
        if ROUNDS > AHEAD_ROUNDS {
            let keys = (tile, WMMA_KEYS, self.end);
            // SAFETY: keys below end lie in K and V (below every row's limit without CHECKED);
            // both tiles fit the dynamic LDS.
            unsafe {
                stage_rows::<T, D, WMMA_THREADS, CHECKED>(
                    self.k,
                    keys,
                    self.k_tile,
                    self.row_pitch,
                );
                stage_transposed::<T, D, WMMA_THREADS, CHECKED>(
                    self.v,
                    keys,
                    self.v_tile,
                    KEY_PITCH,
                );
            }
        } else {
            // SAFETY: both tiles fit the dynamic LDS, which no wave reads until the barrier;
            // keys at or past end are zeroed (without CHECKED, every key lies below end).
            unsafe {
                fetched.write::<CHECKED>(
                    (self.k_tile, self.row_pitch),
                    (self.v_tile, KEY_PITCH),
                    (tile, self.end),
                    |key| key,
                )
            };
        }
        workgroup_barrier();
        if ROUNDS <= AHEAD_ROUNDS {
            // SAFETY: keys below end lie in K and V, as the caller guarantees.
            unsafe { fetched.read((self.k, self.v), tile + WMMA_KEYS, self.end) };
        }
        let mut scores = [Accumulator::<SPREAD>::zero(); KEY_TILES];
        unroll!(s in [0, 1, 2, 3, 4, 5, 6, 7] {
            if s < STEPS {
                // SAFETY: the wave's 16 staged query rows, columns 16 s.., 16-byte aligned.
                let query = unsafe { load_b::<Core<T>>(self.queries.add(s * 32), self.row_pitch) };
                unroll!(kt in [0, 1, 2, 3] {
                    // SAFETY: 16 staged key rows, columns 16 s.., 16-byte aligned rows.
                    let keys = unsafe {
                        load_a::<Core<T>>(self.k_tile.add(kt * 16 * self.row_pitch as usize + s * 32), self.row_pitch)
                    };
                    scores[kt] = Core::<T>::mma(keys, query, scores[kt]);
                });
            }
        });
        let mut values = [[0.0f32; SPREAD]; KEY_TILES];
        let mut tile_max = f32::NEG_INFINITY;
        unroll!(kt in [0, 1, 2, 3] {
            let raw = scores[kt].to_array();
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                if i < SPREAD {
                    let key = tile + kt as u32 * 16 + Core::<T>::d_row(self.lane, i as u32);
                    values[kt][i] = if !CHECKED || key < self.limit {
                        raw[i] * self.scale_log2
                    } else {
                        f32::NEG_INFINITY
                    };
                    tile_max = tile_max.max(values[kt][i]);
                }
            });
        });
        let new_max = state.max.max(across_groups(tile_max, f32::max));
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
        unroll!(kt in [0, 1, 2, 3] {
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                if i < SPREAD {
                    let p = exp2_normal(values[kt][i] - base);
                    tile_sum += p;
                    let key = kt as u32 * 16 + Core::<T>::d_row(self.lane, i as u32);
                    // SAFETY: the wave's probability tile, row `column`, key `key`.
                    unsafe {
                        *(self.probabilities.add((self.lane % 16 * KEY_PITCH + 2 * key) as usize) as *mut T) =
                            T::probability(p);
                    }
                }
            });
        });
        state.sum = state.sum * alpha + tile_sum;
        unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7] {
            if n < STEPS {
                let old = state.out[n].to_array();
                let mut scaled = [0.0f32; SPREAD];
                unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                    if i < SPREAD {
                        scaled[i] = old[i] * alpha;
                    }
                });
                state.out[n] = Accumulator::from_array(scaled);
            }
        });
        wave_barrier();
        unroll!(kt in [0, 1, 2, 3] {
            // SAFETY: the wave's probability tile (written above by this wave), keys 16 kt..,
            // 16-byte aligned rows.
            let p = unsafe { load_b::<Core<T>>(self.probabilities.add(kt * 32), KEY_PITCH) };
            unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7] {
                if n < STEPS {
                    // SAFETY: 16 rows (head dimensions 16 n..) of the transposed V tile, keys
                    // 16 kt.., 16-byte aligned rows.
                    let values = unsafe {
                        load_a::<Core<T>>(self.v_tile.add(n * 16 * KEY_PITCH as usize + kt * 32), KEY_PITCH)
                    };
                    state.out[n] = Core::<T>::mma(values, p, state.out[n]);
                }
            });
        });
        workgroup_barrier();
    }
}

/// The forward pass of this workgroup's block of query rows with `STEPS = D / 16` WMMA steps
/// along the head dimension and `ROUNDS` chunks per work-item of each K and V tile.
/// Workgroup-wide.
///
/// # Safety
/// The kernel's contract (module docs); `q` and `o` point at the block's first row, `k` and `v`
/// at the KV head.
#[inline(always)]
unsafe fn attend<T: WmmaInput, const D: u32, const STEPS: usize, const ROUNDS: usize>(
    (q, k, v, o): (*const T, *const T, *const T, *mut T),
    rows: &Rows,
    problem: &Problem,
) {
    const {
        assert!(STEPS as u32 * 16 == D && STEPS <= 8 && KEY_TILES == 4 && SPREAD <= 8);
        assert!(ROUNDS as u32 * WMMA_THREADS * 8 == WMMA_KEYS * D);
    };
    type Core<T> = <T as WmmaInput>::Core;
    let row_pitch = 2 * D + ROW_PAD;
    let (wave, lane) = (wave_id(), lane_id());
    let k_tile = lds::dynamic::<u8>();
    // SAFETY: the regions follow each other in the launch's dynamic LDS (wmma_lds_bytes).
    let (query_block, v_tile, probabilities) = unsafe {
        let query_block = k_tile.add((WMMA_KEYS * row_pitch) as usize);
        let v_tile = query_block.add((WMMA_BLOCK_ROWS * row_pitch) as usize);
        let probabilities = v_tile.add((D * KEY_PITCH) as usize);
        (
            query_block,
            v_tile,
            probabilities.add((wave * WMMA_ROWS_PER_WAVE * KEY_PITCH) as usize),
        )
    };
    // SAFETY: this wave's rows of the query region.
    let queries =
        unsafe { query_block.add((wave * WMMA_ROWS_PER_WAVE * row_pitch) as usize) } as *const u8;
    let column = lane % 16;
    let row = wave * WMMA_ROWS_PER_WAVE + column;
    let tiles = Tiles {
        k,
        v,
        k_tile,
        v_tile,
        queries,
        probabilities,
        row_pitch,
        end: rows.end,
        limit: rows.limit(row),
        lane,
        scale_log2: problem.scale_log2,
    };
    // The first K and V tile is read while the queries are staged.
    let mut fetched = KvAhead::<D, WMMA_THREADS, ROUNDS>::new();
    if ROUNDS <= AHEAD_ROUNDS {
        // SAFETY: keys below rows.end lie in K and V; the workgroup has WMMA_THREADS
        // work-items.
        unsafe { fetched.read((k, v), rows.begin, rows.end) };
    }
    // SAFETY: the block's valid rows lie in Q; the query region holds WMMA_BLOCK_ROWS rows.
    unsafe {
        stage_rows::<T, D, WMMA_THREADS, true>(
            q,
            (0, WMMA_BLOCK_ROWS, rows.valid),
            query_block,
            row_pitch,
        )
    };
    let mut state = RowState {
        out: [Accumulator::<SPREAD>::zero(); STEPS],
        max: f32::NEG_INFINITY,
        sum: 0.0,
    };
    // Tiles below every row's limit need no bounds check and no mask; the rest (the last
    // partial tile, the causal diagonal) take both.
    let unmasked = rows.begin + (rows.unmasked_end() - rows.begin) / WMMA_KEYS * WMMA_KEYS;
    let mut tile = rows.begin;
    while tile < unmasked {
        // SAFETY: as the caller guarantees; the tile lies below every row's limit.
        unsafe { tiles.step::<D, STEPS, ROUNDS, false>(tile, &mut fetched, &mut state) };
        tile += WMMA_KEYS;
    }
    while tile < rows.end {
        // SAFETY: as the caller guarantees.
        unsafe { tiles.step::<D, STEPS, ROUNDS, true>(tile, &mut fetched, &mut state) };
        tile += WMMA_KEYS;
    }
    let RowState { out, sum, .. } = state;
    let sum = across_groups(sum, |a, b| a + b);
    if row < rows.valid {
        let inverse = if sum > 0.0 { 1.0 / sum } else { 0.0 };
        unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7] {
            if n < STEPS {
                let values = out[n].to_array();
                unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                    if i < SPREAD {
                        let at = row * D + n as u32 * 16 + Core::<T>::d_row(lane, i as u32);
                        // SAFETY: head dimension 16 n + d_row of valid row `row`.
                        unsafe { *o.add(at as usize) = T::round_from_f32(values[i] * inverse) };
                    }
                });
            }
        });
    }
}

/// The forward pass of this workgroup, for the launch's `head_dim`.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "an attention kernel's arguments")]
unsafe fn forward<T: WmmaInput>(
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
            WMMA_BLOCK_ROWS,
        )
    };
    // SAFETY: as the caller guarantees.
    unsafe {
        match head_dim {
            64 => attend::<T, 64, 4, { (WMMA_KEYS * 64 / 8 / WMMA_THREADS) as usize }>(
                buffers, &rows, &problem,
            ),
            128 => attend::<T, 128, 8, { (WMMA_KEYS * 128 / 8 / WMMA_THREADS) as usize }>(
                buffers, &rows, &problem,
            ),
            _ => {}
        }
    }
}

/// Declares the WMMA forward kernel of one element type.
macro_rules! wmma_kernel {
    ($t:ident, $name:ident) => {
        #[doc = concat!("Attention forward pass, ", stringify!($t), ", on the WMMA matrix cores (RDNA); see the module docs.")]
        #[kernel(max_threads = 256)]
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

wmma_kernel!(f16, attention_wmma_f16);
wmma_kernel!(bf16, attention_wmma_bf16);
