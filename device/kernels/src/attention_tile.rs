//! What the attention kernels share: the launch's problem (sequence lengths, scale, mask), where
//! a head's rows are, which keys each query row of a workgroup sees, and the cooperative copies
//! that stage K and V tiles (and query rows) from global memory into LDS.

use crate::dtype::{Float, load, store};
use iron_intrinsics::id::{
    workgroup_id_x, workgroup_id_y, workgroup_id_z, workgroup_size_x, workitem_id_x,
};

/// Runs `$body` once for each listed index, `$i` a `usize` constant in each copy: register
/// arrays indexed by `$i` stay in registers (a loop LLVM leaves rolled would index them
/// dynamically and put them in scratch memory).
macro_rules! unroll {
    ($i:ident in [$($n:literal),*] $body:block) => {{
        $({
            let $i: usize = $n;
            $body
        })*
    }};
}
pub(crate) use unroll;

/// A probability `p` rounded to bf16 (nearest, ties to even), in the top half of the word:
/// integer rounding without the NaN select of [`Float::round_from_f32`], which a probability
/// does not need: a NaN probability also makes its row's f32 sum NaN, and so the row's output.
#[cfg(not(iron_gfx = "gfx950"))]
#[inline(always)]
pub fn bf16_probability_word(p: f32) -> u32 {
    let bits = p.to_bits();
    bits.wrapping_add(0x7FFF + ((bits >> 16) & 1))
}

/// `log2(e)`: scores are kept in the log2 domain so that probabilities are `2^x`.
const LOG2_E: f32 = core::f32::consts::LOG2_E;

/// The sizes and options every workgroup of a launch shares.
pub struct Problem {
    /// Query rows per head.
    pub seq_q: u32,
    /// Key and value rows per head.
    pub seq_kv: u32,
    /// The softmax scale times `log2(e)`, rounded once to f32.
    pub scale_log2: f32,
    /// Whether the causal mask applies.
    pub causal: bool,
}

impl Problem {
    /// The problem of a launch's arguments.
    #[inline(always)]
    pub fn new(seq_q: u32, seq_kv: u32, scale: f32, causal: bool) -> Self {
        Problem {
            seq_q,
            seq_kv,
            scale_log2: scale * LOG2_E,
            causal,
        }
    }
}

/// Where one query head's rows and its KV head's rows start, in elements.
pub struct Head {
    q_offset: usize,
    /// The first element of the KV head in K and V.
    pub kv_offset: usize,
    head_dim: usize,
}

impl Head {
    /// Query head `head_q` of batch entry `batch`, with `heads = (heads_q, heads_kv)` and rows of
    /// `head_dim` elements.
    #[inline(always)]
    pub fn of_query_head(
        batch: u32,
        head_q: u32,
        (heads_q, heads_kv): (u32, u32),
        problem: &Problem,
        head_dim: u32,
    ) -> Self {
        let group = heads_q / heads_kv;
        let q_head = batch as usize * heads_q as usize + head_q as usize;
        let kv_head = batch as usize * heads_kv as usize + (head_q / group) as usize;
        Head {
            q_offset: q_head * problem.seq_q as usize * head_dim as usize,
            kv_offset: kv_head * problem.seq_kv as usize * head_dim as usize,
            head_dim: head_dim as usize,
        }
    }

    /// The first element of query row `row` of the head in Q (and O).
    #[inline(always)]
    pub fn q_offset(&self, row: u32) -> usize {
        self.q_offset + row as usize * self.head_dim
    }
}

/// Q, K, V and O.
pub type Buffers<T> = (*const T, *const T, *const T, *mut T);

/// This workgroup's block of `count` query rows (grid x: block, y: query head, z: batch entry):
/// which rows exist and which keys they see, and the buffers advanced to the block's first
/// query row (Q, O) and to its KV head (K, V).
///
/// # Safety
/// The buffers hold the launch's heads of `head_dim` elements per row.
#[inline(always)]
pub unsafe fn query_block<T>(
    (q, k, v, o): Buffers<T>,
    heads: (u32, u32),
    problem: &Problem,
    head_dim: u32,
    count: u32,
) -> (Rows, Buffers<T>) {
    let head = Head::of_query_head(workgroup_id_z(), workgroup_id_y(), heads, problem, head_dim);
    let first = workgroup_id_x() * count;
    // SAFETY: the head's offsets lie in the buffers, as the caller guarantees.
    let buffers = unsafe {
        (
            q.add(head.q_offset(first)),
            k.add(head.kv_offset),
            v.add(head.kv_offset),
            o.add(head.q_offset(first)),
        )
    };
    (Rows::causal(first, count, problem), buffers)
}

/// The query rows of one workgroup and the keys each sees: rows `0..valid` exist; row `r` sees
/// keys `begin..limit(r)`; the workgroup visits keys `begin..end`.
pub struct Rows {
    /// Rows of the block that exist (the others are computed on zeros and not written).
    pub valid: u32,
    /// The first key visited.
    pub begin: u32,
    /// One past the last key visited (the largest `limit`).
    pub end: u32,
    /// With the causal mask: row `r` sees keys below `shift + r`.
    causal_shift: Option<i64>,
}

impl Rows {
    /// Rows `first..first + count` of a head (those below `seq_q` exist), every key visible
    /// unless the problem is causal.
    #[inline(always)]
    pub fn causal(first: u32, count: u32, problem: &Problem) -> Self {
        let valid = problem.seq_q.saturating_sub(first).min(count);
        let shift = i64::from(first) + 1 + i64::from(problem.seq_kv) - i64::from(problem.seq_q);
        let mut rows = Rows {
            valid,
            begin: 0,
            end: problem.seq_kv,
            causal_shift: problem.causal.then_some(shift),
        };
        rows.end = if valid == 0 { 0 } else { rows.limit(valid - 1) };
        rows
    }

    /// `valid` rows that all see keys `begin..end`.
    #[inline(always)]
    pub fn all_keys(valid: u32, begin: u32, end: u32) -> Self {
        Rows {
            valid,
            begin,
            end,
            causal_shift: None,
        }
    }

    /// One past the last key every row sees: below it no key needs a bounds check or a mask (a
    /// row that does not exist is computed on zeros and not written, whatever it sees).
    #[inline(always)]
    pub fn unmasked_end(&self) -> u32 {
        match self.causal_shift {
            Some(_) if self.valid > 0 => self.limit(0),
            _ => self.end,
        }
    }

    /// One past the last key row `row` sees (`begin` for a row that does not exist).
    #[inline(always)]
    pub fn limit(&self, row: u32) -> u32 {
        if row >= self.valid {
            return self.begin;
        }
        match self.causal_shift {
            Some(shift) => {
                (shift + i64::from(row)).clamp(i64::from(self.begin), i64::from(self.end)) as u32
            }
            None => self.end,
        }
    }
}

/// This work-item's share of a workgroup-wide loop over `count` items: `f(i)` for `i = t, t +
/// W, ...` with `t` the work-item and `W` the workgroup size: `BLOCK` when the kernel fixes its
/// workgroup size (then the trip count is a constant, LLVM unrolls the loop and the rounds'
/// global loads are issued before any is waited for), or the launch's for `BLOCK = 0`.
#[inline(always)]
fn share<const BLOCK: u32>(count: u32, mut f: impl FnMut(u32)) {
    let first = workitem_id_x();
    if BLOCK == 0 {
        let mut i = first;
        while i < count {
            f(i);
            i += workgroup_size_x();
        }
    } else {
        for round in 0..count.div_ceil(BLOCK) {
            let i = first + round * BLOCK;
            // With `count` a multiple of the block, every round is whole (`first < BLOCK`).
            if count.is_multiple_of(BLOCK) || i < count {
                f(i);
            }
        }
    }
}

/// Sixteen bytes (eight 16-bit elements) of row `row` of a `[rows, D]` matrix at `src`, chunk
/// `chunk`; zeros when `row >= limit`. The row read is clamped below `limit` and the words
/// masked (no branch: a branch merging two arrays would put them in scratch memory). Without
/// `CHECKED` the caller vouches for `row < limit`, and neither happens.
///
/// # Safety
/// Rows below `limit` must be readable, `limit > 0`; `src` 16-byte aligned; `row < limit`
/// without `CHECKED`.
#[inline(always)]
unsafe fn chunk_or_zero<T: Float, const D: u32, const CHECKED: bool>(
    src: *const T,
    row: u32,
    chunk: u32,
    limit: u32,
) -> [u32; 4] {
    if !CHECKED {
        // SAFETY: row < limit, as the caller vouches: inside a readable row, 16-byte aligned.
        return unsafe { load::<u32, 4>(src as *const u32, (row * (D / 8) + chunk) as usize) };
    }
    // SAFETY: as the caller guarantees.
    zero_past(
        unsafe { clamped_chunk::<T, D>(src, row, chunk, limit) },
        row,
        limit,
    )
}

/// Sixteen bytes of row `min(row, limit - 1)` of a `[rows, D]` matrix at `src`, chunk `chunk`.
///
/// # Safety
/// Rows below `limit` must be readable, `limit > 0`; `src` 16-byte aligned.
#[inline(always)]
unsafe fn clamped_chunk<T, const D: u32>(
    src: *const T,
    row: u32,
    chunk: u32,
    limit: u32,
) -> [u32; 4] {
    let at = (row.min(limit - 1) * (D / 8) + chunk) as usize;
    // SAFETY: inside a row below limit, 16-byte aligned (D is a multiple of 8).
    unsafe { load::<u32, 4>(src as *const u32, at) }
}

/// `words` of row `row`, or zeros when `row >= limit` (a select on the words, no branch).
#[inline(always)]
fn zero_past(words: [u32; 4], row: u32, limit: u32) -> [u32; 4] {
    let mask = if row < limit { u32::MAX } else { 0 };
    words.map(|word| word & mask)
}

/// The row and chunk of item `i` of a tile of `rows` rows of `chunks` chunks, dealt in row
/// order, or `TRANSPOSED` in column order (neighbouring items take neighbouring rows, so that
/// a transposed tile's 2-byte LDS writes land side by side).
#[inline(always)]
fn deal<const TRANSPOSED: bool>(i: u32, rows: u32, chunks: u32) -> (u32, u32) {
    if TRANSPOSED {
        (i % rows, i / rows)
    } else {
        (i / chunks, i % chunks)
    }
}

/// Copies rows `first..first + count` of the `[_, D]` 16-bit matrix at `src` into LDS at `dst`,
/// row `i` at byte `i * pitch`, rows at or past `limit` as zeros (nothing when `limit = 0`).
/// Workgroup-wide (no barrier); `BLOCK` the kernel's fixed workgroup size, or 0 (see [`share`]).
/// Without `CHECKED` every row copied lies below `limit` (no row is clamped or zeroed).
///
/// # Safety
/// Rows below `limit` must be readable, `src` 16-byte aligned; `dst` 16-byte aligned with
/// `count * pitch` bytes of LDS, `pitch` a multiple of 16.
#[inline(always)]
pub unsafe fn stage_rows<T: Float, const D: u32, const BLOCK: u32, const CHECKED: bool>(
    src: *const T,
    (first, count, limit): (u32, u32, u32),
    dst: *mut u8,
    pitch: u32,
) {
    let chunks = D / 8;
    if limit == 0 {
        return;
    }
    share::<BLOCK>(count * chunks, |i| {
        let (row, chunk) = deal::<false>(i, count, chunks);
        // SAFETY: as the caller guarantees.
        unsafe {
            let words = chunk_or_zero::<T, D, CHECKED>(src, first + row, chunk, limit);
            write_chunk::<false>(dst, (row, chunk), pitch, words);
        }
    });
}

/// Copies rows `first..first + count` of the `[_, D]` 16-bit matrix at `src` into LDS at `dst`
/// transposed: element `(i, c)` at byte `c * pitch + 2 * i`, rows at or past `limit` as zeros.
/// Workgroup-wide (no barrier).
///
/// # Safety
/// As for [`stage_rows`], with `D * pitch` bytes of LDS and `pitch` even.
#[cfg(any(not(target_arch = "amdgpu"), iron_matrix = "wmma"))]
#[inline(always)]
pub unsafe fn stage_transposed<T: Float, const D: u32, const BLOCK: u32, const CHECKED: bool>(
    src: *const T,
    (first, count, limit): (u32, u32, u32),
    dst: *mut u8,
    pitch: u32,
) {
    let chunks = D / 8;
    if limit == 0 {
        return;
    }
    share::<BLOCK>(count * chunks, |i| {
        let (row, chunk) = deal::<true>(i, count, chunks);
        // SAFETY: as the caller guarantees.
        unsafe {
            let words = chunk_or_zero::<T, D, CHECKED>(src, first + row, chunk, limit);
            write_chunk::<true>(dst, (row, chunk), pitch, words);
        }
    });
}

/// Writes chunk `chunk` (eight 16-bit elements) of row `row` of a tile to LDS at `dst`: at byte
/// `row * pitch + 16 * chunk`, or `TRANSPOSED`, element `(row, c)` at byte `c * pitch + 2 * row`.
///
/// # Safety
/// The bytes written lie in LDS the caller owns; `dst` and `pitch` 16-byte aligned for rows,
/// even for `TRANSPOSED`.
#[inline(always)]
unsafe fn write_chunk<const TRANSPOSED: bool>(
    dst: *mut u8,
    (row, chunk): (u32, u32),
    pitch: u32,
    words: [u32; 4],
) {
    // SAFETY: inside the caller's LDS, aligned, as the caller guarantees.
    unsafe {
        if !TRANSPOSED {
            store::<u32, 4>(
                dst.add((row * pitch + chunk * 16) as usize) as *mut u32,
                0,
                words,
            );
            return;
        }
        let column = dst.add((chunk * 8 * pitch + 2 * row) as usize) as *mut u16;
        unroll!(w in [0, 1, 2, 3] {
            let pair = column.byte_add(2 * w * pitch as usize);
            *pair = words[w] as u16;
            *pair.byte_add(pitch as usize) = (words[w] >> 16) as u16;
        });
    }
}

/// One work-item's share of a tile of `ROUNDS * BLOCK` sixteen-byte chunks (rows of `D`
/// 16-bit elements) in a workgroup of exactly `BLOCK` work-items, held in registers between its
/// read from global memory and its write to LDS. `TRANSPOSED` says how the tile is written, and
/// so which chunks each work-item takes ([`deal`]). The read clamps rows to the matrix; the
/// write zeros the rows past its end, once the loads have arrived, so that nothing waits for
/// them earlier.
struct Fetched<const D: u32, const BLOCK: u32, const ROUNDS: usize, const TRANSPOSED: bool> {
    words: [[u32; 4]; ROUNDS],
}

impl<const D: u32, const BLOCK: u32, const ROUNDS: usize, const TRANSPOSED: bool>
    Fetched<D, BLOCK, ROUNDS, TRANSPOSED>
{
    /// The row and chunk of this work-item's chunk of round `round`.
    #[inline(always)]
    fn chunk(round: usize) -> (u32, u32) {
        const {
            assert!(D.is_multiple_of(8) && ROUNDS <= 8);
            assert!((ROUNDS as u32 * BLOCK).is_multiple_of(D / 8));
        };
        let rows = ROUNDS as u32 * BLOCK / (D / 8);
        deal::<TRANSPOSED>(workitem_id_x() + round as u32 * BLOCK, rows, D / 8)
    }

    /// Reads this work-item's chunks of rows `first..` of the `[_, D]` 16-bit matrix at `src`,
    /// a row at or past `limit` as row `limit - 1`.
    ///
    /// # Safety
    /// Rows below `limit` must be readable, `limit > 0`, `src` 16-byte aligned; the workgroup
    /// has exactly `BLOCK` work-items.
    #[inline(always)]
    unsafe fn read<T>(&mut self, src: *const T, first: u32, limit: u32) {
        unroll!(round in [0, 1, 2, 3, 4, 5, 6, 7] {
            if round < ROUNDS {
                let (row, chunk) = Self::chunk(round);
                // SAFETY: as the caller guarantees.
                self.words[round] = unsafe { clamped_chunk::<T, D>(src, first + row, chunk, limit) };
            }
        });
    }

    /// Writes the chunks read for rows `first..` to LDS at `dst`, row `i` at position
    /// `place(i)` (see [`write_chunk`]); with `CHECKED`, rows at or past `limit` as zeros.
    ///
    /// # Safety
    /// As for [`write_chunk`], for every position.
    #[inline(always)]
    unsafe fn write<const CHECKED: bool>(
        &self,
        (dst, pitch): (*mut u8, u32),
        (first, limit): (u32, u32),
        place: impl Fn(u32) -> u32,
    ) {
        unroll!(round in [0, 1, 2, 3, 4, 5, 6, 7] {
            if round < ROUNDS {
                let (row, chunk) = Self::chunk(round);
                let words = if CHECKED {
                    zero_past(self.words[round], first + row, limit)
                } else {
                    self.words[round]
                };
                // SAFETY: as the caller guarantees.
                unsafe { write_chunk::<TRANSPOSED>(dst, (place(row), chunk), pitch, words) };
            }
        });
    }
}

/// One work-item's share of a K tile and a V tile of `ROUNDS * BLOCK * 8 / D` keys each, read
/// from global memory one tile ahead of their staging in LDS (K as rows, V transposed): a
/// kernel reads the next tile before working on the current one, so the reads' latency hides
/// behind that work. In a workgroup of exactly `BLOCK` work-items.
pub struct KvAhead<const D: u32, const BLOCK: u32, const ROUNDS: usize> {
    k: Fetched<D, BLOCK, ROUNDS, false>,
    v: Fetched<D, BLOCK, ROUNDS, true>,
}

impl<const D: u32, const BLOCK: u32, const ROUNDS: usize> KvAhead<D, BLOCK, ROUNDS> {
    /// Nothing read yet.
    #[inline(always)]
    pub fn new() -> Self {
        KvAhead {
            k: Fetched {
                words: [[0; 4]; ROUNDS],
            },
            v: Fetched {
                words: [[0; 4]; ROUNDS],
            },
        }
    }

    /// Reads this work-item's share of the K and V tiles at key `tile` of the `[_, D]` 16-bit
    /// matrices `k` and `v`, if the tile starts below `end` (keys from `end` on are zeroed by
    /// [`Self::write`]). Issues the loads; the write waits for them.
    ///
    /// # Safety
    /// Keys below `end` must be readable in both, both 16-byte aligned; the workgroup has
    /// exactly `BLOCK` work-items.
    #[inline(always)]
    pub unsafe fn read<T>(&mut self, (k, v): (*const T, *const T), tile: u32, end: u32) {
        if tile < end {
            // SAFETY: keys below end (> tile) are readable, as the caller guarantees.
            unsafe {
                self.k.read(k, tile, end);
                self.v.read(v, tile, end);
            }
        }
    }

    /// Writes the tiles read for key `tile` to LDS: K's row `i` at byte `i * k_pitch` of
    /// `k_dst`, V's element `(i, c)` at byte `c * v_pitch + 2 v_place(i)` of `v_dst`; with
    /// `CHECKED`, keys at or past `end` as zeros (without, the caller vouches that every key
    /// lies below it). Workgroup-wide with the other work-items' writes (no barrier).
    ///
    /// # Safety
    /// `k_dst` 16-byte aligned with `keys * k_pitch` bytes of LDS, `k_pitch` a multiple of 16;
    /// `v_dst` with `D * v_pitch` bytes, `v_pitch` even; `v_place` a permutation of the keys.
    #[inline(always)]
    pub unsafe fn write<const CHECKED: bool>(
        &self,
        (k_dst, k_pitch): (*mut u8, u32),
        (v_dst, v_pitch): (*mut u8, u32),
        (tile, end): (u32, u32),
        v_place: impl Fn(u32) -> u32,
    ) {
        // SAFETY: as the caller guarantees.
        unsafe {
            self.k
                .write::<CHECKED>((k_dst, k_pitch), (tile, end), |key| key);
            self.v
                .write::<CHECKED>((v_dst, v_pitch), (tile, end), v_place);
        }
    }
}

/// Copies query rows `0..count` of the `[_, D]` matrix at `src` into LDS at `dst` as f32
/// multiplied by `factor`, row `i` at `dst[i * D]`; rows at or past `valid` as zeros.
/// Workgroup-wide (no barrier).
///
/// # Safety
/// Rows below `valid` must be readable, `src` 16-byte aligned; `dst` 16-byte aligned with
/// `count * D` f32 of LDS. Writes nothing when `valid = 0`.
#[inline(always)]
pub unsafe fn stage_queries_f32<T: Float, const D: u32>(
    src: *const T,
    (count, valid): (u32, u32),
    factor: f32,
    dst: *mut f32,
) {
    let chunks = D / 8;
    if valid == 0 {
        return;
    }
    share::<0>(count * chunks, |i| {
        let (row, chunk) = (i / chunks, i % chunks);
        // SAFETY: inside a row below valid (> 0), 16-byte aligned.
        let raw = unsafe { load::<T, 8>(src, (row.min(valid - 1) * chunks + chunk) as usize) };
        let keep = row < valid;
        let values: [f32; 8] = core::array::from_fn(|e| {
            if keep {
                raw[e].into_f32() * factor
            } else {
                0.0
            }
        });
        let at = (row * D + chunk * 8) as usize;
        // SAFETY: inside the LDS the caller gives, 16-byte aligned.
        unsafe {
            store::<f32, 4>(dst.add(at), 0, [values[0], values[1], values[2], values[3]]);
            store::<f32, 4>(
                dst.add(at + 4),
                0,
                [values[4], values[5], values[6], values[7]],
            );
        }
    });
}
