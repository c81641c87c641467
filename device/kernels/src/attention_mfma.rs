//! Attention on CDNA's matrix cores (gfx90a, gfx942, gfx950): the forward pass of
//! [`crate::attention`] with both products on `v_mfma_f32_32x32x8_{f16,bf16}`, except the
//! scores on gfx950, which take its `v_mfma_f32_32x32x16_{f16,bf16}` (same output layout, half
//! the instructions).
//!
//! Kernels `attention_mfma_<t>(q, k, v, o, heads_q, heads_kv, seq_q, seq_kv, head_dim, scale,
//! flags)`, arguments, shapes, mask and arithmetic as in [`crate::attention`]; the
//! probabilities are rounded to `<t>` for the `P V` product (the sum they are divided by stays
//! f32). On gfx90a the 16-bit MFMAs flush subnormal inputs to zero.
//!
//! Launch: workgroups of exactly [`MFMA_THREADS`] (4 waves), each wave [`MFMA_ROWS_PER_WAVE`]
//! query rows; grid `(ceil(seq_q / MFMA_BLOCK_ROWS), heads_q, batch)`; dynamic LDS
//! [`mfma_lds_bytes`].
//!
//! Tiling: K tiles of [`MFMA_KEYS`] keys. A wave computes the transposed scores `S^T = K Q^T`
//! (32 keys x 32 rows per MFMA, Q's fragments held in registers for the whole pass), so that
//! each lane's accumulator elements (four runs of 4 keys of one query row) are exactly its B
//! fragments of the transposed output product `O^T = V^T P^T`, one per 8 keys: the
//! probabilities go from accumulator to operand without moving between lanes, and each lane's
//! output elements and row statistics belong to one query row, shared with one other lane.
//! 32-row MFMAs give a workgroup 128 query rows, so each staged K and V tile serves twice the
//! rows that 16-row ones would, at the same matrix instructions per row.
//!
//! LDS: K is staged row-major (the A operand, K-contiguous along the head dimension), V
//! transposed (`V^T`, K-contiguous along the keys). Every operand read is one 16-byte read per
//! lane, for two 32x32x8 steps (or one 32x32x16): an MFMA may take its K elements in any order
//! that A and B share, so along the head dimension lane group `g` takes elements `16 m + 8 g
//! ..` of each block of 16 for both operands, and along the keys, where B comes from the score
//! accumulators, V's tile stores keys with bits 2 and 3 swapped (`v_position`) so that the
//! 8 keys a lane needs lie side by side. Rows 16 bytes longer than their data keep the 16-byte
//! reads free of bank conflicts.
//!
//! The K and V tiles are read from global memory into registers one tile ahead
//! (`attention_tile::KvAhead`), so that their latency hides behind the current tile's work.
#![cfg(any(not(target_arch = "amdgpu"), iron_matrix = "mfma"))]

use crate::attention::ROW_PAD;
use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::attention::FLAG_CAUSAL,
    crate::attention_tile::{KvAhead, Problem, Rows, query_block, stage_rows, unroll},
    crate::dtype::{Float, load},
    iron_intrinsics::fmath::exp2_normal,
    iron_intrinsics::id::{lane_id, wave_id},
    iron_intrinsics::lds,
    iron_intrinsics::math::mul_add,
    iron_intrinsics::matrix::{
        Accumulator, Bf16Fragment, F16Fragment, MfmaF32_32x32x8Bf16, MfmaF32_32x32x8F16, Mma,
    },
    iron_intrinsics::sync::workgroup_barrier,
    iron_intrinsics::wave::shuffle_xor,
};

/// Work-items per workgroup of the matrix-core kernels (exactly this many).
pub const MFMA_THREADS: u32 = 256;
/// Query rows per wave (one MFMA tile).
pub const MFMA_ROWS_PER_WAVE: u32 = 32;
/// Query rows per workgroup.
pub const MFMA_BLOCK_ROWS: u32 = MFMA_ROWS_PER_WAVE * MFMA_THREADS / 64;
/// Keys per staged K and V tile.
pub const MFMA_KEYS: u32 = 64;

/// Dynamic LDS of the matrix-core kernels: the K tile (`MFMA_KEYS` rows of `head_dim`, padded by
/// 16 bytes) and the transposed V tile (`head_dim` rows of `MFMA_KEYS`, padded by 16 bytes),
/// or the block's query rows staged at the start, whichever is larger.
pub const fn mfma_lds_bytes(head_dim: u32) -> u32 {
    let tiles = MFMA_KEYS * (2 * head_dim + ROW_PAD) + head_dim * V_PITCH;
    let queries = MFMA_BLOCK_ROWS * (2 * head_dim + ROW_PAD);
    if tiles > queries { tiles } else { queries }
}

/// Bytes per row of the transposed V tile.
const V_PITCH: u32 = 2 * MFMA_KEYS + ROW_PAD;
/// MFMA tiles of 32 keys per K tile.
const KEY_TILES: usize = (MFMA_KEYS / 32) as usize;
/// Elements along K of one 16-byte operand read per lane (two lane groups of 8).
const BLOCK: u32 = 16;
/// `P V` MFMA steps of 8 keys per K tile.
const PV_STEPS: usize = (MFMA_KEYS / 8) as usize;

/// Where key `key` of a tile lies in a row of the transposed V tile: bits 2 and 3 swapped, so
/// that lane group `g`'s keys `16 m + 8 j + 4 g + i` (`j`, `i` < 4... of steps `2 m` and `2 m +
/// 1`) are the 8 consecutive positions `16 m + 8 g ..`.
#[inline(always)]
fn v_position(key: u32) -> u32 {
    (key & !0b1100) | ((key >> 1) & 0b100) | ((key << 1) & 0b1000)
}

/// An input type of the matrix-core kernels: its MFMAs and how words and probabilities become
/// operands.
trait MfmaInput: Float {
    /// Four elements of this type, an operand of [`MfmaInput::Core`].
    type Fragment: Copy;
    /// The 32x32x8 MFMA of this type (the `P V` product: its accumulator layout of `S^T`, taken
    /// four elements at a time, is its B operand layout).
    type Core: Mma<A = Self::Fragment, B = Self::Fragment, Acc = Accumulator<16>>;
    /// Four elements (two words) as an operand.
    fn fragment(words: [u32; 2]) -> Self::Fragment;
    /// Four probabilities (consecutive keys) rounded to this type, as an operand.
    fn probabilities(p: [f32; 4]) -> Self::Fragment;
    /// `acc + K Q^T` over one block of 16 head dimensions, from each lane's 16 bytes of the key
    /// row and of the query row (elements `8 g ..` of the block): gfx950's 32x32x16 once, else
    /// the 32x32x8 on each half.
    fn score_block(keys: [u32; 4], queries: [u32; 4], acc: Accumulator<16>) -> Accumulator<16>;
}

/// The 16-bit halves of `W` words, low half first.
#[inline(always)]
fn halves<const W: usize, const N: usize>(words: [u32; W]) -> [u16; N] {
    const { assert!(N == 2 * W) };
    core::array::from_fn(|i| (words[i / 2] >> (16 * (i % 2))) as u16)
}

/// Declares [`MfmaInput`] for one element type.
macro_rules! mfma_input {
    ($t:ident, $fragment:ident, $core:ident, $wide:ident, $pair:path) => {
        impl MfmaInput for $t {
            type Fragment = $fragment<4>;
            type Core = $core;
            #[inline(always)]
            fn fragment(words: [u32; 2]) -> $fragment<4> {
                $fragment::from_bits(halves(words))
            }
            #[inline(always)]
            fn probabilities(p: [f32; 4]) -> $fragment<4> {
                Self::fragment([$pair(p[0], p[1]), $pair(p[2], p[3])])
            }
            #[inline(always)]
            fn score_block(
                keys: [u32; 4],
                queries: [u32; 4],
                acc: Accumulator<16>,
            ) -> Accumulator<16> {
                #[cfg(iron_gfx = "gfx950")]
                {
                    let wide = |words: [u32; 4]| $fragment::<8>::from_bits(halves(words));
                    iron_intrinsics::matrix::$wide::mma(wide(keys), wide(queries), acc)
                }
                #[cfg(not(iron_gfx = "gfx950"))]
                {
                    let half = |words: [u32; 4], h: usize| {
                        Self::fragment([words[2 * h], words[2 * h + 1]])
                    };
                    let acc = $core::mma(half(keys, 0), half(queries, 0), acc);
                    $core::mma(half(keys, 1), half(queries, 1), acc)
                }
            }
        }
    };
}

mfma_input!(
    f16,
    F16Fragment,
    MfmaF32_32x32x8F16,
    MfmaF32_32x32x16F16,
    iron_intrinsics::half::f32_pair_to_f16
);
mfma_input!(
    bf16,
    Bf16Fragment,
    MfmaF32_32x32x8Bf16,
    MfmaF32_32x32x16Bf16,
    bf16_probabilities
);

/// Two probabilities rounded to bf16 (`a` in bits 0..16, `b` in 16..32), nearest and ties to
/// even: gfx950's `v_cvt_pk_bf16_f32`, elsewhere
/// [`crate::attention_tile::bf16_probability_word`]'s integer rounding.
#[inline(always)]
fn bf16_probabilities(a: f32, b: f32) -> u32 {
    #[cfg(iron_gfx = "gfx950")]
    {
        iron_intrinsics::half::f32_pair_to_bf16(a, b)
    }
    #[cfg(not(iron_gfx = "gfx950"))]
    {
        use crate::attention_tile::bf16_probability_word as word;
        iron_intrinsics::half::pack_halves::<1>(word(a), word(b))
    }
}

/// The maximum of `x` over the two lanes holding the same query row (`lane % 32`). Wave-wide.
#[inline(always)]
fn row_max(x: f32) -> f32 {
    x.max(shuffle_xor(x, 32))
}

/// The sum of `x` over the two lanes holding the same query row. Wave-wide.
#[inline(always)]
fn row_sum(x: f32) -> f32 {
    x + shuffle_xor(x, 32)
}

/// The forward pass of this workgroup's block of query rows with `D` head dimensions: `OUT =
/// D / 32` output MFMA tiles, `BLOCKS = D / 16` blocks of the head dimension and `ROUNDS`
/// chunks per work-item of each K and V tile. Workgroup-wide.
///
/// # Safety
/// The kernel's contract (module docs); `q` and `o` point at the block's first row, `k` and `v`
/// at the KV head.
#[inline(always)]
unsafe fn attend<
    T: MfmaInput,
    const D: u32,
    const OUT: usize,
    const BLOCKS: usize,
    const ROUNDS: usize,
>(
    (q, k, v, o): (*const T, *const T, *const T, *mut T),
    rows: &Rows,
    problem: &Problem,
) {
    const {
        assert!(OUT as u32 * 32 == D && OUT <= 4 && BLOCKS as u32 * BLOCK == D && BLOCKS <= 8);
        assert!(KEY_TILES == 2 && ROUNDS as u32 * MFMA_THREADS * 8 == MFMA_KEYS * D);
    };
    let k_pitch = 2 * D + ROW_PAD;
    let k_tile = lds::dynamic::<u8>();
    // SAFETY: the transposed V tile follows the K tile in the launch's dynamic LDS.
    let v_tile = unsafe { k_tile.add((MFMA_KEYS * k_pitch) as usize) };
    let (wave, lane) = (wave_id(), lane_id());
    let row = wave * MFMA_ROWS_PER_WAVE + lane % 32;
    let group = lane / 32;
    // Scores are kept as `K Q^T` and scaled inside the exponent's fma: with the queries' signs
    // flipped for a negative scale, the scale is positive and a row's largest scaled score is
    // its largest score, scaled. 0 becomes the least normal scale, which leaves every
    // probability 2^0 = 1 as 0 would, and a masked score -inf.
    let flip = if problem.scale_log2 < 0.0 {
        0x8000_8000
    } else {
        0
    };
    let scale_log2 = problem.scale_log2.abs().max(f32::MIN_POSITIVE);
    let tiles = Tiles {
        k,
        v,
        k_tile,
        v_tile,
        k_pitch,
        end: rows.end,
        limit: rows.limit(row),
        operand_at: (lane % 32) * k_pitch + 16 * group,
        v_operand_at: (lane % 32) * V_PITCH + 16 * group,
        group,
        scale_log2,
    };
    // The first K and V tile is read while the queries are staged.
    let mut fetched = KvAhead::<D, MFMA_THREADS, ROUNDS>::new();
    // SAFETY: keys below rows.end lie in K and V; the workgroup has MFMA_THREADS work-items.
    unsafe { fetched.read((k, v), rows.begin, rows.end) };
    // SAFETY: the block's valid rows lie in Q; the dynamic LDS holds MFMA_BLOCK_ROWS rows.
    unsafe {
        stage_rows::<T, D, MFMA_THREADS, true>(q, (0, MFMA_BLOCK_ROWS, rows.valid), k_tile, k_pitch)
    };
    workgroup_barrier();
    let mut queries = [[0u32; 4]; BLOCKS];
    unroll!(b in [0, 1, 2, 3, 4, 5, 6, 7] {
        if b < BLOCKS {
            // SAFETY: the wave's 32 staged query rows, 16-byte aligned.
            let words = unsafe {
                let at = wave * MFMA_ROWS_PER_WAVE * k_pitch + tiles.operand_at + 32 * b as u32;
                load::<u32, 4>(k_tile.add(at as usize) as *const u32, 0)
            };
            queries[b] = words.map(|w| w ^ flip);
        }
    });
    workgroup_barrier();
    let mut state = RowState {
        out: [Accumulator::<16>::zero(); OUT],
        max: f32::NEG_INFINITY,
        sum: 0.0,
    };
    // Tiles below every row's limit need no bounds check and no mask; the rest (the last
    // partial tile, the causal diagonal) take both.
    let unmasked = rows.begin + (rows.unmasked_end() - rows.begin) / MFMA_KEYS * MFMA_KEYS;
    let mut tile = rows.begin;
    while tile < unmasked {
        // SAFETY: as the caller guarantees; the tile lies below every row's limit.
        unsafe {
            tiles.step::<D, OUT, BLOCKS, ROUNDS, false>(tile, &mut fetched, &queries, &mut state)
        };
        tile += MFMA_KEYS;
    }
    while tile < rows.end {
        // SAFETY: as the caller guarantees.
        unsafe {
            tiles.step::<D, OUT, BLOCKS, ROUNDS, true>(tile, &mut fetched, &queries, &mut state)
        };
        tile += MFMA_KEYS;
    }
    let RowState { out, sum, .. } = state;
    let sum = row_sum(sum);
    if row < rows.valid {
        let inverse = if sum > 0.0 { 1.0 / sum } else { 0.0 };
        unroll!(n in [0, 1, 2, 3] {
            if n < OUT {
                let v = out[n].to_array();
                unroll!(j in [0, 1, 2, 3] {
                    let values = [
                        T::round_from_f32(v[4 * j] * inverse),
                        T::round_from_f32(v[4 * j + 1] * inverse),
                        T::round_from_f32(v[4 * j + 2] * inverse),
                        T::round_from_f32(v[4 * j + 3] * inverse),
                    ];
                    let at = (row * D) as usize + n * 32 + 8 * j + 4 * group as usize;
                    // SAFETY: head dimensions 32 n + 8 j + 4 group .. + 4 of valid row `row`,
                    // 8-byte aligned.
                    unsafe { *(o.add(at) as *mut Words2<T>) = Words2(values) };
                });
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
    /// This lane's byte offset of its operand reads in a tile of rows (K, and the queries):
    /// row `lane % 32`, elements `8 group ..` of the first block.
    operand_at: u32,
    /// This lane's byte offset of its operand reads in the transposed V tile.
    v_operand_at: u32,
    /// Which four keys of each 8 this lane's accumulator elements hold.
    group: u32,
    /// The softmax scale times `log2(e)`, made positive (the queries carry its sign).
    scale_log2: f32,
}

/// One lane's running state of the online softmax: its row's output accumulators, the row's
/// maximum scaled score so far, and the sum of this lane's probabilities.
struct RowState<const OUT: usize> {
    out: [Accumulator<16>; OUT],
    max: f32,
    sum: f32,
}

impl<T: MfmaInput> Tiles<T> {
    /// Stages the K and V tile at key `tile` from `fetched`, reads the next tile into
    /// `fetched`, and folds this one into `state` (scores, online softmax, `P V`), with `D = 32
    /// OUT = 16 BLOCKS` head dimensions. Without `CHECKED` every key of the tile lies below
    /// every row's limit: the scores take no mask. Workgroup-wide.
    ///
    /// # Safety
    /// The kernel's contract; keys below `end` lie in K and V; `fetched` holds the tile at
    /// `tile`; without `CHECKED`, `tile + MFMA_KEYS` is at most every existing row's limit.
    #[inline(always)]
    unsafe fn step<
        const D: u32,
        const OUT: usize,
        const BLOCKS: usize,
        const ROUNDS: usize,
        const CHECKED: bool,
    >(
        &self,
        tile: u32,
        fetched: &mut KvAhead<D, MFMA_THREADS, ROUNDS>,
        queries: &[[u32; 4]; BLOCKS],
        state: &mut RowState<OUT>,
    ) {
        // SAFETY: both tiles fit the dynamic LDS, which no wave reads until the barrier; keys
        // at or past end are zeroed (without CHECKED, every key lies below end).
        unsafe {
            fetched.write::<CHECKED>(
                (self.k_tile, self.k_pitch),
                (self.v_tile, V_PITCH),
                (tile, self.end),
                v_position,
            )
        };
        workgroup_barrier();
        // SAFETY: keys below end lie in K and V, as the caller guarantees.
        unsafe { fetched.read((self.k, self.v), tile + MFMA_KEYS, self.end) };
        let mut scores = [[0.0f32; 16]; KEY_TILES];
        let mut tile_max = f32::NEG_INFINITY;
        unroll!(kt in [0, 1] {
            let mut acc = Accumulator::<16>::zero();
            unroll!(b in [0, 1, 2, 3, 4, 5, 6, 7] {
                if b < BLOCKS {
                    // SAFETY: 32 staged key rows, 16-byte aligned reads inside them.
                    let keys = unsafe {
                        let at = kt as u32 * 32 * self.k_pitch + self.operand_at + 32 * b as u32;
                        load::<u32, 4>(self.k_tile.add(at as usize) as *const u32, 0)
                    };
                    acc = T::score_block(keys, queries[b], acc);
                }
            });
            let first_key = tile + kt as u32 * 32 + 4 * self.group;
            let raw = acc.to_array();
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                let key = first_key + (8 * (i / 4) + i % 4) as u32;
                scores[kt][i] = if !CHECKED || key < self.limit {
                    raw[i]
                } else {
                    f32::NEG_INFINITY
                };
                tile_max = tile_max.max(scores[kt][i]);
            });
        });
        let new_max = state.max.max(row_max(tile_max) * self.scale_log2);
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
        let mut probabilities = [T::probabilities([0.0; 4]); PV_STEPS];
        unroll!(kt in [0, 1] {
            unroll!(j in [0, 1, 2, 3] {
                let mut p = [0.0f32; 4];
                unroll!(i in [0, 1, 2, 3] {
                    p[i] = exp2_normal(mul_add(scores[kt][4 * j + i], self.scale_log2, -base));
                    tile_sum += p[i];
                });
                probabilities[4 * kt + j] = T::probabilities(p);
            });
        });
        state.sum = state.sum * alpha + tile_sum;
        unroll!(n in [0, 1, 2, 3] {
            if n < OUT {
                let mut acc = Accumulator::from_array(state.out[n].to_array().map(|x| x * alpha));
                unroll!(m in [0, 1, 2, 3] {
                    // SAFETY: 32 rows (head dimensions 32 n..) of the transposed V tile, keys
                    // 16 m.., 16-byte aligned.
                    let values = unsafe {
                        let at = n as u32 * 32 * V_PITCH + self.v_operand_at + 32 * m as u32;
                        load::<u32, 4>(self.v_tile.add(at as usize) as *const u32, 0)
                    };
                    acc = T::Core::mma(T::fragment([values[0], values[1]]), probabilities[2 * m], acc);
                    acc = T::Core::mma(T::fragment([values[2], values[3]]), probabilities[2 * m + 1], acc);
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
            64 => attend::<T, 64, 2, 4, 2>(buffers, &rows, &problem),
            128 => attend::<T, 128, 4, 8, 4>(buffers, &rows, &problem),
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
