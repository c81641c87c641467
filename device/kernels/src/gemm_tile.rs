//! The tiled matrix-core GEMM every GEMM kernel shares: a workgroup of 256 work-items computes a
//! block of `B x B` elements of `C`, `B` being [`BLOCK`] (128) or 64 (the 16-bit GEMM's
//! `_64` kernels). Its waves form a grid of 2 rows: 4 waves of 64 lanes (CDNA, RDNA wave64) each
//! take a quarter (64 x 64 of a block of 128), 8 waves of 32 lanes (RDNA wave32) each an eighth
//! (64 x 32), as tiles of a 16 x 16 or 32 x 32 matrix instruction (MFMA or WMMA; [`repeats_m`] x
//! [`repeats_n`] of them); the K dimension is walked in tiles staged through LDS,
//! double-buffered. A block of 64 stages K tiles twice as deep in the same bytes, as two K
//! subtiles ([`Stage::K_SUBTILES`]) that the step multiplies one after the other.
//!
//! What varies per kernel is behind two traits: a [`Stage`] moves one operand's K tile from
//! global memory into LDS (its block's rows, K-contiguous, in the layout its [`Step`] reads), and a
//! [`Step`] runs the matrix instructions over one staged K tile. The main loop, [`gemm`], has
//! two forms, chosen once per workgroup. When every K tile of both operands lies inside the
//! matrices ([`Stage::is_full`]), the loads take no checks ([`Stage::fetch_full`]) and the loop
//! selects nothing per tile: at tile `t` it issues the global loads of tile `t + 2` on CDNA
//! (`t + 1` on RDNA: `AHEAD`), computes tile `t` from LDS while they are in flight, then writes
//! tile `t + 1` into the other LDS buffer (two tiles per iteration, so that the LDS buffers'
//! offsets are constants; tile 0 before the loop, so that its matrix instructions start from
//! constant zeros).
//! Otherwise (edge tiles, and stages without unchecked loads such as the decoding ones) each
//! iteration writes tile `t` (loaded during tile `t - 1`) into its buffer, starts loading tile
//! `t + 1`, then computes tile `t`; writing before computing keeps what a decoding stage
//! computes for its writes out of the registers the step's fragments need, and each operand is
//! written at one place in the code. Either way one barrier per tile separates the two uses of
//! a buffer.
//!
//! The epilogue ([`Output`]) writes `C = alpha * (A B) + beta * C + bias` for the elements inside
//! `M x N`, reading `C` only when `beta != 0`; it checks the bounds once per block (on RDNA a
//! block across `C`'s edge reads and writes `C` through buffer accesses that the hardware drops
//! outside `C`, [`EdgeBuffer`], with no branch per element). Where the matrix
//! instruction's accumulators hold runs of rows of D, the step multiplies `B^T A^T` instead
//! ([`Step::TRANSPOSED`]): each lane then holds runs of 4 consecutive columns of `C`, written
//! with one 16-byte (f32) or 8-byte (16-bit) access each when the block lies inside `C`.

use crate::dtype::Float;
use crate::gemm::{BLOCK, FLAG_BIAS, THREADS};
use crate::gemm_stage::{SWIZZLED_ROW_BYTES, Words8, Words16, swizzled};
use iron_intrinsics::buffer::{Buffer, OUTSIDE};
use iron_intrinsics::id::{lane_id, wave_id, workgroup_id_x, workgroup_id_y, workitem_id_x};
use iron_intrinsics::lds;
use iron_intrinsics::math::mul_add;
use iron_intrinsics::matrix::{Accumulate, Fragment, MatrixCore, d_col};
use iron_intrinsics::sync::{schedule_fence, workgroup_barrier};
use iron_intrinsics::target::WAVE;

/// Runs `$body` for every `($tm, $tn)` of a list of constant index pairs that lies inside the
/// wave tile of instruction `$core` in a block of `$block` (the test is a constant), each in
/// its own block.
macro_rules! for_pairs {
    ($core:ty, $block:tt; $tm:ident $tn:ident $body:expr; $($i:literal $j:literal),*) => {{
        $(if $i < $crate::gemm_tile::repeats_m::<$core, $block>()
            && $j < $crate::gemm_tile::repeats_n::<$core, $block>()
        {
            let ($tm, $tn): (usize, usize) = ($i, $j);
            $body;
        })*
    }};
}
pub(crate) use for_pairs;

/// Runs `$body` for every tile `($tm, $tn)` of instruction `$core` in a wave tile of a block of
/// `$block` ([`repeats_m`] x [`repeats_n`]), written out with constant indices: the accumulators
/// stay in registers (a loop LLVM does not unroll, or a closure it does not inline, would put them
/// in scratch memory).
#[cfg(any(iron_wave = "64", not(target_arch = "amdgpu")))]
macro_rules! each_tile {
    ($core:ty, $block:tt, |$tm:ident, $tn:ident| $body:expr) => {{
        const { assert!($crate::gemm_tile::REPEATS_M == 4 && $crate::gemm_tile::REPEATS_N == 4) };
        $crate::gemm_tile::for_pairs!($core, $block; $tm $tn $body;
            0 0, 0 1, 0 2, 0 3, 1 0, 1 1, 1 2, 1 3, 2 0, 2 1, 2 2, 2 3, 3 0, 3 1, 3 2, 3 3)
    }};
}
/// Runs `$body` for every tile `($tm, $tn)` of instruction `$core` in a wave tile (see the
/// wave64 definition).
#[cfg(iron_wave = "32")]
macro_rules! each_tile {
    ($core:ty, $block:tt, |$tm:ident, $tn:ident| $body:expr) => {{
        const { assert!($crate::gemm_tile::REPEATS_M == 4 && $crate::gemm_tile::REPEATS_N == 2) };
        $crate::gemm_tile::for_pairs!($core, $block; $tm $tn $body;
            0 0, 0 1, 1 0, 1 1, 2 0, 2 1, 3 0, 3 1)
    }};
}
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub(crate) use each_tile;

/// `[$value for $t in $indices]` (`$t: u32`), written out as [`each_tile`] is.
macro_rules! per_index {
    (|$t:ident| $value:expr; $($i:literal),*) => {
        [$({
            let $t: u32 = $i;
            $value
        }),*]
    };
}
pub(crate) use per_index;

/// `[$value for $t in $indices]` (`$t: u32`) for the indices below `$count`; the entries
/// past it repeat entry 0 (the compiler merges them, and nothing reads them).
macro_rules! per_index_below {
    ($count:expr, |$t:ident| $value:expr; $($i:literal),*) => {
        [$({
            let $t: u32 = if $i < $count { $i } else { 0 };
            $value
        }),*]
    };
}
pub(crate) use per_index_below;

/// `[$value for $t in 0..repeats_m::<$core, $block>()]`: one fragment per tile row of a wave
/// tile ([`REPEATS_M`] entries, those past the instruction's repeats unused).
macro_rules! per_row {
    ($core:ty, $block:tt, |$t:ident| $value:expr) => {{
        const { assert!($crate::gemm_tile::REPEATS_M == 4) };
        $crate::gemm_tile::per_index_below!(
            $crate::gemm_tile::repeats_m::<$core, $block>() as u32, |$t| $value; 0, 1, 2, 3)
    }};
}
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub(crate) use per_row;

/// `[$value for $t in 0..repeats_n::<$core, $block>()]`: one fragment per tile column of a
/// wave tile ([`REPEATS_N`] entries, those past the instruction's repeats unused).
#[cfg(any(iron_wave = "64", not(target_arch = "amdgpu")))]
macro_rules! per_col {
    ($core:ty, $block:tt, |$t:ident| $value:expr) => {{
        const { assert!($crate::gemm_tile::REPEATS_N == 4) };
        $crate::gemm_tile::per_index_below!(
            $crate::gemm_tile::repeats_n::<$core, $block>() as u32, |$t| $value; 0, 1, 2, 3)
    }};
}
/// `[$value for $t in 0..repeats_n::<$core, $block>()]` (see the wave64 definition).
#[cfg(iron_wave = "32")]
macro_rules! per_col {
    ($core:ty, $block:tt, |$t:ident| $value:expr) => {{
        const { assert!($crate::gemm_tile::REPEATS_N == 2) };
        $crate::gemm_tile::per_index_below!(
            $crate::gemm_tile::repeats_n::<$core, $block>() as u32, |$t| $value; 0, 1)
    }};
}
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
pub(crate) use per_col;

/// Waves per workgroup: 4 of 64 lanes or 8 of 32.
const WAVES: u32 = THREADS / WAVE;
/// Waves per row of the workgroup's wave grid (which has 2 rows).
const WAVE_GRID_COLS: u32 = WAVES / 2;

/// Rows of `C` per wave in a block of `block` rows and columns.
pub const fn wave_rows(block: u32) -> u32 {
    block / 2
}

/// Columns of `C` per wave in a block of `block` rows and columns.
pub const fn wave_cols(block: u32) -> u32 {
    block / WAVE_GRID_COLS
}

/// Rows (and columns) of the smallest matrix-instruction tile a GEMM step uses (16 x 16; CDNA
/// also has 32 x 32).
const MIN_MMA_TILE: u32 = 16;
/// The most matrix-instruction tiles per wave tile column (rows of tiles): those of a 16 x 16
/// instruction in a block of [`BLOCK`].
pub const REPEATS_M: usize = (wave_rows(BLOCK) / MIN_MMA_TILE) as usize;
/// The most matrix-instruction tiles per wave tile row (columns of tiles).
pub const REPEATS_N: usize = (wave_cols(BLOCK) / MIN_MMA_TILE) as usize;

/// Tiles of instruction `I` per wave tile column in a block of `B`.
#[inline(always)]
pub const fn repeats_m<I: MatrixCore, const B: u32>() -> usize {
    (wave_rows(B) / I::M) as usize
}

/// Tiles of instruction `I` per wave tile row in a block of `B`.
#[inline(always)]
pub const fn repeats_n<I: MatrixCore, const B: u32>() -> usize {
    (wave_cols(B) / I::N) as usize
}

/// The accumulators of one wave, `[row][column]` of instruction tiles: [`repeats_m`] x
/// [`repeats_n`] of them in use (all of them for a 16 x 16 instruction in a block of
/// [`BLOCK`]; the others are never touched, and take no registers).
pub type Accumulators<I> = [[<I as MatrixCore>::Acc; REPEATS_N]; REPEATS_M];

/// This work-item's index in the workgroup (`0..THREADS`).
#[inline(always)]
pub fn thread() -> u32 {
    workitem_id_x()
}

/// The first row and column of `C` this workgroup computes in blocks of `B` rows and columns:
/// workgroup `(x, y)` takes column block `x` and row block `y`.
#[inline(always)]
pub fn block_origin<const B: u32>() -> (u32, u32) {
    (workgroup_id_y() * B, workgroup_id_x() * B)
}

/// One operand's journey from global memory to LDS, one K tile at a time.
pub trait Stage {
    /// Bytes one LDS buffer of this operand takes.
    const LDS_BYTES: u32;
    /// Rows the workgroup stages (and computes): the block's side.
    const ROWS: u32 = BLOCK;
    /// Parts of a K tile the LDS buffer holds one after the other, each staged and read as a
    /// K tile of [`Self::ROWS`] rows would be alone: a block of 64 rows stages a K tile twice
    /// as deep as a block of 128, in the same bytes.
    const K_SUBTILES: u32 = 1;
    /// What a work-item holds of a tile between its global loads and its LDS writes.
    type Held: Copy;

    /// This work-item's share of K tile `tile` of the workgroup's rows, zero outside the
    /// matrix. Called by every work-item.
    ///
    /// # Safety
    /// The operand's pointers must hold the matrix the stage describes.
    unsafe fn fetch(&self, tile: u32) -> Self::Held;

    /// Whether every one of the first `k_tiles` K tiles of the workgroup's rows lies inside the
    /// matrix as [`Stage::fetch_full`] needs (uniform across the workgroup).
    fn is_full(&self, _k_tiles: u32) -> bool {
        false
    }

    /// [`Stage::fetch`] of a tile that lies inside the matrix, without checks.
    ///
    /// # Safety
    /// As for [`Stage::fetch`], and [`Stage::is_full`] must hold for a count of tiles above
    /// `tile`.
    unsafe fn fetch_full(&self, tile: u32) -> Self::Held {
        // SAFETY: as the caller guarantees.
        unsafe { self.fetch(tile) }
    }

    /// Writes a share fetched by this work-item into the LDS buffer at `lds`.
    ///
    /// # Safety
    /// `lds` must be 16-byte aligned with `LDS_BYTES` bytes of dynamic LDS behind it.
    unsafe fn store(&self, held: Self::Held, lds: *mut u8);
}

/// The matrix instructions over one staged K tile.
pub trait Step {
    /// The instruction (16 x 16 or 32 x 32).
    type Core: MatrixCore;
    /// Whether the accumulators hold their tiles transposed: the step multiplies `B^T A^T`, so
    /// element `i` of lane `l` is at row [`d_col`]`(l)` and column `d_row(l, i)` of its tile.
    const TRANSPOSED: bool = false;

    /// Adds the products of the K tile staged at `a` (A's `B` rows) and `b` (B's `B` columns)
    /// to the accumulators of the wave tile whose first row and column in the block (of `B`
    /// rows and columns) are `wave_row` and `wave_col`. Wave-wide.
    ///
    /// # Safety
    /// `a` and `b` must hold a tile staged as this step reads it.
    unsafe fn step<const B: u32>(
        acc: &mut Accumulators<Self::Core>,
        a: *const u8,
        b: *const u8,
        wave_row: u32,
        wave_col: u32,
    );
}

/// Where and how the result is written: `C = alpha * acc + beta * C + bias`, `C` row-major
/// `[m, n]`, `bias` (when `has_bias`) `n` f32.
pub struct Output<O> {
    /// `C`.
    pub c: *mut O,
    /// The bias, read only when `has_bias`.
    pub bias: *const f32,
    /// Whether to add the bias.
    pub has_bias: bool,
    /// The factor of `A B`.
    pub alpha: f32,
    /// The factor of the old `C` (0: `C` is not read).
    pub beta: f32,
    /// Rows of `C`.
    pub m: u32,
    /// Columns of `C`.
    pub n: u32,
}

impl<O: Float> Output<O> {
    /// The output of a kernel's arguments; `flags` says whether there is a bias.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "a GEMM's epilogue operands")]
    pub fn new(
        c: *mut O,
        bias: *const f32,
        alpha: f32,
        beta: f32,
        m: u32,
        n: u32,
        flags: u32,
    ) -> Self {
        Output {
            c,
            bias,
            has_bias: flags & FLAG_BIAS != 0,
            alpha,
            beta,
            m,
            n,
        }
    }

    /// Writes this wave's accumulators (of step `S`) of the workgroup's tile of `C` (see
    /// [`Output::write`]).
    ///
    /// # Safety
    /// As for [`Output::write`].
    #[inline(always)]
    pub unsafe fn write_block<S: Step, const B: u32>(&self, acc: &Accumulators<S::Core>) {
        let (row0, col0) = block_origin::<B>();
        let (wave_row, wave_col) = wave_origin::<B>();
        // SAFETY: as the caller guarantees.
        unsafe { self.write::<S, B>(acc, row0, col0, wave_row, wave_col) };
    }

    /// Writes this wave's accumulators (of step `S`, in a block of `B` rows and columns):
    /// element `(r, c)` of the block tile is
    /// `C[row0 + r][col0 + c]`, written when inside `m x n`. The value of each element is
    /// computed once, whatever the block's path: `alpha * acc`, `beta * C` and the bias added
    /// (each only when asked), rounded to `O`; only the reads of `C` and the bias and the final
    /// stores differ between paths. The bounds are checked once per block: where the
    /// accumulators hold runs of 4 consecutive columns ([`Step::TRANSPOSED`] with runs of rows
    /// of D), a block inside `C` whose rows are a multiple of 4 elements reads and writes each
    /// run with one access (16 bytes of f32, 8 of 16-bit values); another block inside `C`
    /// writes element by element without checks, and a block across `C`'s edge checks each
    /// element (reading the bias at columns clamped into it without a check; `C`'s elements
    /// are read under the same check as their stores, since a clamped position may name an
    /// element another wave writes), or where [`EDGE_THROUGH_BUFFER`] reads and writes them
    /// through an [`EdgeBuffer`], with no branch.
    ///
    /// # Safety
    /// `c` must hold `m * n` elements and `bias` (when used) `n`, 16-byte aligned; `row0 < m`,
    /// and `B * n * size_of::<O>()` at most `2^31` (see [`EdgeBuffer`]).
    #[inline(always)]
    #[allow(
        clippy::needless_range_loop,
        reason = "indexed with the unrolled loops' constants, the arrays stay in registers"
    )]
    unsafe fn write<S: Step, const B: u32>(
        &self,
        acc: &Accumulators<S::Core>,
        row0: u32,
        col0: u32,
        wave_row: u32,
        wave_col: u32,
    ) {
        let interior = row0 + B <= self.m && col0 + B <= self.n;
        let runs = S::TRANSPOSED && <S::Core as MatrixCore>::D_RUN.is_multiple_of(RUN);
        let wide = runs && interior && self.n.is_multiple_of(RUN);
        let (row0, col0) = (row0 + wave_row, col0 + wave_col);
        let tile = const {
            assert!(<S::Core as MatrixCore>::M == <S::Core as MatrixCore>::N);
            <S::Core as MatrixCore>::M
        };
        let len = const {
            assert!(<<S::Core as MatrixCore>::Acc as Accumulate>::LEN <= MAX_ACC);
            <<S::Core as MatrixCore>::Acc as Accumulate>::LEN
        };
        let lane = lane_id();
        // Where element `i` of tile `(tm, tn)` of this lane lies in C.
        let position = |tm: usize, tn: usize, i: usize| {
            let (r, c) = (S::Core::d_row(lane, i as u32), d_col::<S::Core>(lane));
            let (r, c) = if S::TRANSPOSED { (c, r) } else { (r, c) };
            (row0 + tm as u32 * tile + r, col0 + tn as u32 * tile + c)
        };
        // The index in C of a position.
        let index = |(row, col): (u32, u32)| row as usize * self.n as usize + col as usize;
        let mut values = [[[0.0f32; MAX_ACC]; REPEATS_N]; REPEATS_M];
        each_tile!(S::Core, B, |tm, tn| {
            for i in 0..len {
                values[tm][tn][i] = self.alpha * acc[tm][tn].element(i);
            }
        });
        // Each choice below is made once for all tiles: inside `each_tile!` it cost scalar
        // instructions and a branch per tile.
        if self.beta != 0.0 && wide {
            each_tile!(S::Core, B, |tm, tn| {
                for run in 0..len / RUN as usize {
                    let first = run * RUN as usize;
                    let at = index(position(tm, tn, first));
                    // SAFETY: the run is inside C, aligned to its size (n and col are multiples
                    // of RUN, C is 16-byte aligned).
                    let old = unsafe { read_run(self.c.add(at)) };
                    for q in 0..RUN as usize {
                        let value = &mut values[tm][tn][first + q];
                        *value = mul_add(self.beta, old[q], *value);
                    }
                }
            });
        } else if self.beta != 0.0 && EDGE_THROUGH_BUFFER {
            let edge = EdgeBuffer::new(self, row0 - wave_row, B);
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    // SAFETY: an element of C, or 0 outside.
                    let old = unsafe { edge.read(position(tm, tn, i)) };
                    let value = &mut values[tm][tn][i];
                    *value = mul_add(self.beta, old, *value);
                }
                // Each tile's reads used before the next tile's are issued: all at once, they
                // held 64 more VGPRs (occupancy 2 instead of 3 on gfx942).
                schedule_fence();
            });
        } else if self.beta != 0.0 {
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    let (row, col) = position(tm, tn, i);
                    // Not clamped: another wave may write the element a clamped position names.
                    if interior || (row < self.m && col < self.n) {
                        let at = index((row, col));
                        // SAFETY: inside C.
                        let old = unsafe { *self.c.add(at) };
                        let value = &mut values[tm][tn][i];
                        *value = mul_add(self.beta, old.into_f32(), *value);
                    }
                }
            });
        }
        if self.has_bias && wide {
            each_tile!(S::Core, B, |tm, tn| {
                for run in 0..len / RUN as usize {
                    let first = run * RUN as usize;
                    let (_, col) = position(tm, tn, first);
                    // SAFETY: columns col..col + RUN < n of the bias, 16-byte aligned as above.
                    let bias = unsafe { (*(self.bias.add(col as usize) as *const Words16)).0 };
                    for q in 0..RUN as usize {
                        values[tm][tn][first + q] += f32::from_bits(bias[q]);
                    }
                }
            });
        } else if self.has_bias {
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    let (_, col) = position(tm, tn, i);
                    // SAFETY: a column clamped into the bias.
                    values[tm][tn][i] += unsafe { *self.bias.add(col.min(self.n - 1) as usize) };
                }
            });
        }
        let mut rounded = [[[O::round_from_f32(0.0); MAX_ACC]; REPEATS_N]; REPEATS_M];
        each_tile!(S::Core, B, |tm, tn| {
            for pair in 0..len / 2 {
                let (first, values) = (2 * pair, &values[tm][tn]);
                let [even, odd] = O::round_pair_from_f32(values[first], values[first + 1]);
                rounded[tm][tn][first] = even;
                rounded[tm][tn][first + 1] = odd;
            }
        });
        if wide {
            each_tile!(S::Core, B, |tm, tn| {
                for run in 0..len / RUN as usize {
                    let first = run * RUN as usize;
                    let at = index(position(tm, tn, first));
                    let run: [O; RUN as usize] =
                        core::array::from_fn(|q| rounded[tm][tn][first + q]);
                    // SAFETY: as for the read above.
                    unsafe { write_run(self.c.add(at), run) };
                }
            });
        } else if interior {
            // Apart from the checked stores: with the test merged in, every element took an
            // exec mask update and a branch (gfx11, whose accumulators hold no runs).
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    let at = index(position(tm, tn, i));
                    // SAFETY: the block is inside C.
                    unsafe { *self.c.add(at) = rounded[tm][tn][i] };
                }
            });
        } else if EDGE_THROUGH_BUFFER {
            let edge = EdgeBuffer::new(self, row0 - wave_row, B);
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    // SAFETY: an element of C; dropped outside.
                    unsafe { edge.write(position(tm, tn, i), rounded[tm][tn][i]) };
                }
            });
        } else {
            each_tile!(S::Core, B, |tm, tn| {
                for i in 0..len {
                    let (row, col) = position(tm, tn, i);
                    if row < self.m && col < self.n {
                        let at = index((row, col));
                        // SAFETY: inside C.
                        unsafe { *self.c.add(at) = rounded[tm][tn][i] };
                    }
                }
            });
        }
    }
}

/// Whether an edge block reads and writes `C` through an [`EdgeBuffer`] rather than with a test
/// and a branch per element ([`Output::write`]): on RDNA. There the branches put the gfx1201
/// bf16-output and FP8 GEMMs at 33-39 KB of code (each also takes `s_wait_alu` and
/// `s_delay_alu`); the buffer takes 6-7 KB off every RDNA GEMM and 0-2 % off its wave-
/// instructions. On CDNA it took 3-6 KB off too, but the f16- and f32-output GEMMs executed 3-9 %
/// more wave-instructions in interior blocks (register copies around the epilogue), so CDNA
/// keeps the branches.
const EDGE_THROUGH_BUFFER: bool = cfg!(iron_family = "rdna");

/// An edge block's rows of `C` (as far as `C` goes) as a range-checked [`Buffer`]: a row past
/// `m` lies past its end, and a column past `n` takes the offset [`OUTSIDE`], so the hardware
/// drops the stores of elements outside `C` and reads them as 0, without a branch. Byte offsets
/// inside the block must stay below `2^31`: `rows * n * size_of::<O>() <= 2^31` for a block of
/// `rows` rows (the host library refuses a larger `n`).
#[derive(Clone, Copy)]
struct EdgeBuffer<O> {
    /// The block's rows.
    rows: Buffer,
    /// The block's first row.
    row0: u32,
    /// Columns of `C`.
    n: u32,
    /// Bytes per row of `C`.
    row_bytes: u32,
    /// The element type.
    element: core::marker::PhantomData<O>,
}

impl<O: Float> EdgeBuffer<O> {
    /// The rows of the block of `rows` rows whose first row is `row0 < m`.
    #[inline(always)]
    fn new(out: &Output<O>, row0: u32, rows: u32) -> Self {
        let row_bytes = out.n * size_of::<O>() as u32;
        let base = out.c.wrapping_add(row0 as usize * out.n as usize);
        EdgeBuffer {
            rows: Buffer::new(base, (out.m - row0).min(rows) * row_bytes),
            row0,
            n: out.n,
            row_bytes,
            element: core::marker::PhantomData,
        }
    }

    /// The byte offset of the element at `(row, col)` (row at least `row0`).
    #[inline(always)]
    fn offset(&self, (row, col): (u32, u32)) -> u32 {
        if col < self.n {
            (row - self.row0) * self.row_bytes + col * size_of::<O>() as u32
        } else {
            OUTSIDE
        }
    }

    /// The element at `(row, col)` as f32, 0 outside `C`.
    ///
    /// # Safety
    /// `C` must be readable.
    #[inline(always)]
    unsafe fn read(&self, at: (u32, u32)) -> f32 {
        let offset = self.offset(at);
        // SAFETY (both): as the caller guarantees; `O` has the size of the access.
        let value: O = if size_of::<O>() == 4 {
            unsafe { core::mem::transmute_copy(&self.rows.load_u32(offset)) }
        } else {
            unsafe { core::mem::transmute_copy(&self.rows.load_u16(offset)) }
        };
        value.into_f32()
    }

    /// Writes `value` at `(row, col)`, dropped outside `C`.
    ///
    /// # Safety
    /// `C` must be writable.
    #[inline(always)]
    unsafe fn write(&self, at: (u32, u32), value: O) {
        const { assert!(size_of::<O>() == 4 || size_of::<O>() == 2) };
        let offset = self.offset(at);
        // SAFETY (both): as the caller guarantees; `O` has the size of the access.
        if size_of::<O>() == 4 {
            unsafe {
                self.rows
                    .store_u32(offset, core::mem::transmute_copy(&value))
            };
        } else {
            unsafe {
                self.rows
                    .store_u16(offset, core::mem::transmute_copy(&value))
            };
        }
    }
}

/// Elements of a lane's accumulator of one instruction tile, at most (32 x 32 in wave64).
const MAX_ACC: usize = 16;

/// Consecutive columns of `C` an epilogue access covers ([`Output::write`]).
const RUN: u32 = 4;

/// Reads the [`RUN`] elements at `p` as one access.
///
/// # Safety
/// `p` must hold [`RUN`] elements, aligned to their size.
#[inline(always)]
unsafe fn read_run<O: Float>(p: *const O) -> [f32; RUN as usize] {
    const { assert!(size_of::<O>() == 4 || size_of::<O>() == 2) };
    // SAFETY (both): as the caller guarantees; the runs are 16 or 8 bytes.
    let values: [O; RUN as usize] = if size_of::<O>() == 4 {
        unsafe { core::mem::transmute_copy(&*(p as *const Words16)) }
    } else {
        unsafe { core::mem::transmute_copy(&*(p as *const Words8)) }
    };
    let mut old = [0.0; RUN as usize];
    for (q, old) in old.iter_mut().enumerate() {
        *old = values[q].into_f32();
    }
    old
}

/// Writes `values` to the [`RUN`] elements at `p` as one access.
///
/// # Safety
/// As for [`read_run`], writable.
#[inline(always)]
unsafe fn write_run<O: Float>(p: *mut O, values: [O; RUN as usize]) {
    // SAFETY (both): as the caller guarantees; the runs are 16 or 8 bytes.
    if size_of::<O>() == 4 {
        unsafe { *(p as *mut Words16) = core::mem::transmute_copy(&values) };
    } else {
        unsafe { *(p as *mut Words8) = core::mem::transmute_copy(&values) };
    }
}

/// Runs the GEMM of this workgroup's block of `B` x `B` elements of `C` over `k_tiles` K tiles:
/// stages A and B through LDS with `a` and `b` (which stage `B` rows each), accumulates with `S`
/// ([`product`]), and writes `out` ([`Output::write_block`]). Workgroup-wide; the workgroup is
/// `(workgroup_id_x, workgroup_id_y)` = (column block, row block) of `C`.
///
/// Dynamic LDS: `2 * (SA::LDS_BYTES + SB::LDS_BYTES)` bytes.
///
/// # Safety
/// The stages' and the output's pointers must hold the matrices they describe, and the
/// launch must give the dynamic LDS above, with workgroups of [`THREADS`](crate::gemm::THREADS)
/// work-items.
#[inline(always)]
pub unsafe fn gemm<SA: Stage, SB: Stage, S: Step, O: Float, const B: u32>(
    a: &SA,
    b: &SB,
    k_tiles: u32,
    out: &Output<O>,
) {
    const {
        assert!(SA::ROWS == B && SB::ROWS == B && SA::K_SUBTILES == SB::K_SUBTILES);
        assert!(SA::K_SUBTILES == 1 || SA::K_SUBTILES == 2);
        assert!(wave_rows(B).is_multiple_of(32) && wave_cols(B).is_multiple_of(16));
        assert!(wave_rows(B) <= wave_rows(BLOCK) && wave_cols(B) <= wave_cols(BLOCK));
    };
    // SAFETY: as the caller guarantees.
    unsafe {
        let acc = product::<SA, SB, S, B>(a, b, k_tiles);
        out.write_block::<S, B>(&acc);
    }
}

/// The first row and column, within the workgroup's block of `B` rows and columns, of this
/// wave's tile.
#[inline(always)]
fn wave_origin<const B: u32>() -> (u32, u32) {
    let wave = wave_id();
    (
        (wave / WAVE_GRID_COLS) * wave_rows(B),
        (wave % WAVE_GRID_COLS) * wave_cols(B),
    )
}

/// This wave's accumulators of the workgroup's tile of `A B` over `k_tiles` K tiles, staged
/// through LDS with `a` and `b` and multiplied with `S` (see [`gemm`]). When both stages say
/// every tile is inside their matrices ([`Stage::is_full`]) the loop fetches without checks
/// ([`Stage::fetch_full`]); else every tile goes through [`Stage::fetch`].
///
/// # Safety
/// As for [`gemm`].
#[inline(always)]
unsafe fn product<SA: Stage, SB: Stage, S: Step, const B: u32>(
    a: &SA,
    b: &SB,
    k_tiles: u32,
) -> Accumulators<S::Core> {
    let (wave_row, wave_col) = wave_origin::<B>();
    let full = a.is_full(k_tiles) && b.is_full(k_tiles);
    // SAFETY: as the caller guarantees; the unchecked loop only when every tile is inside.
    unsafe {
        if full {
            accumulate::<SA, SB, S, B, true>(a, b, k_tiles, wave_row, wave_col)
        } else {
            accumulate::<SA, SB, S, B, false>(a, b, k_tiles, wave_row, wave_col)
        }
    }
}

/// The main loop of [`product`]: the wave tile's accumulators over `k_tiles` K tiles, fetched
/// with [`Stage::fetch_full`] when `FULL`, else with [`Stage::fetch`].
///
/// # Safety
/// As for [`gemm`]; when `FULL`, [`Stage::is_full`] must hold for both stages.
#[inline(always)]
unsafe fn accumulate<SA: Stage, SB: Stage, S: Step, const B: u32, const FULL: bool>(
    a: &SA,
    b: &SB,
    k_tiles: u32,
    wave_row: u32,
    wave_col: u32,
) -> Accumulators<S::Core> {
    let stage_bytes = SA::LDS_BYTES + SB::LDS_BYTES;
    let lds = lds::dynamic::<u8>();
    // SAFETY: both buffers lie in the dynamic LDS the launch gives.
    let buffer = |t: u32| unsafe { lds.add(((t % 2) * stage_bytes) as usize) };
    let mut acc: Accumulators<S::Core> =
        [[<<S::Core as MatrixCore>::Acc as Accumulate>::zero(); REPEATS_N]; REPEATS_M];
    if k_tiles == 0 {
        return acc;
    }
    // SAFETY: buffer t (of two) holds the tile staged and published by the last barrier, its
    // K subtiles one after the other in each operand's bytes.
    let step = |acc: &mut Accumulators<S::Core>, t: u32| unsafe {
        let staged = buffer(t);
        let (a, b) = (staged, staged.add(SA::LDS_BYTES as usize));
        S::step::<B>(acc, a, b, wave_row, wave_col);
        if SA::K_SUBTILES == 2 {
            let (a, b) = (
                a.add((SA::LDS_BYTES / 2) as usize),
                b.add((SB::LDS_BYTES / 2) as usize),
            );
            S::step::<B>(acc, a, b, wave_row, wave_col);
        }
    };
    if FULL {
        // SAFETY (every fetch): as the caller guarantees (every tile lies inside both
        // matrices).
        let fetch_both = |t: u32| unsafe { (fetch::<SA, FULL>(a, t), fetch::<SB, FULL>(b, t)) };
        let first = fetch_both(0);
        // The tile written to LDS after the next tile's matrix instructions: loaded in the
        // prologue and one tile before its write when loading two tiles ahead.
        let mut next = if AHEAD == 2 && k_tiles > 1 {
            fetch_both(1)
        } else {
            first
        };
        // SAFETY: buffer 0 holds both operands' LDS bytes, unused yet.
        unsafe {
            a.store(first.0, buffer(0));
            b.store(first.1, buffer(0).add(SA::LDS_BYTES as usize));
        }
        workgroup_barrier();
        if k_tiles == 1 {
            step(&mut acc, 0);
            return acc;
        }
        // Tile t (in buffer `$parity`) computed, then tile t + 1 written to the other buffer.
        // `$parity` is `t % 2`, written as a constant where it is one, so that the buffers'
        // offsets are constants too.
        macro_rules! tile_then_next {
            ($parity:expr) => {{
                let parity: u32 = $parity;
                step(&mut acc, parity);
                // SAFETY: the other buffer's last readers (tile t - 1) passed the barrier that
                // ended their iteration.
                unsafe {
                    let staging = buffer(parity + 1);
                    a.store(next.0, staging);
                    b.store(next.1, staging.add(SA::LDS_BYTES as usize));
                }
                workgroup_barrier();
            }};
        }
        // [`tile_then_next`] with tile t + AHEAD's loads (`$ahead`) issued first, in flight
        // during its matrix instructions.
        macro_rules! tile_ahead {
            ($parity:expr, $ahead:expr) => {{
                let ahead = $ahead;
                // One tile ahead, the tile loaded now is the one written after the step.
                if AHEAD == 1 {
                    next = ahead;
                }
                keep_loads_ahead();
                tile_then_next!($parity);
                next = ahead;
            }};
        }
        // Tile 0 outside the loop: its matrix instructions start from constant zeros, so no
        // register is set to zero before them.
        tile_ahead!(
            0,
            if k_tiles > AHEAD {
                fetch_both(AHEAD)
            } else {
                next
            }
        );
        let mut t = 1;
        // The loop's body has no conditions, two tiles per iteration (the LDS buffers' offsets
        // are constants): every tile in it has a tile AHEAD tiles on to load (a test per tile
        // cost a compare and a branch, 5 % of gfx942's wave-instructions).
        while t + AHEAD + 1 < k_tiles {
            tile_ahead!(1, fetch_both(t + AHEAD));
            tile_ahead!(0, fetch_both(t + AHEAD + 1));
            t += 2;
        }
        if t + AHEAD < k_tiles {
            tile_ahead!(1, fetch_both(t + AHEAD));
            t += 1;
        }
        if AHEAD == 2 && t + 1 < k_tiles {
            tile_then_next!(t % 2);
            t += 1;
        }
        step(&mut acc, t % 2);
        return acc;
    }
    // Edge tiles (and stages without unchecked loads: the decoding ones): tile t + 1's global
    // loads are issued before tile t's matrix instructions and written to LDS at the top of the
    // next iteration, so that what a stage computes for its writes is never live beside the
    // fragments. Each operand is written at one place (a decoding stage's write holds a decoder
    // per format).
    // SAFETY: tile 0 of both matrices, as the caller guarantees.
    let mut held = unsafe { (a.fetch(0), b.fetch(0)) };
    for t in 0..k_tiles {
        // SAFETY: buffer t's last readers (tile t - 2) passed the barrier before tile t - 1.
        unsafe {
            let staging = buffer(t);
            a.store(held.0, staging);
            b.store(held.1, staging.add(SA::LDS_BYTES as usize));
        }
        workgroup_barrier();
        if t + 1 < k_tiles {
            // SAFETY: as the caller guarantees.
            held = unsafe { (a.fetch(t + 1), b.fetch(t + 1)) };
        }
        keep_loads_ahead();
        step(&mut acc, t);
    }
    acc
}

/// How many K tiles ahead the full-tile loop loads: on CDNA two, so that each load has two tiles'
/// matrix instructions to arrive in (gfx942 `gemm_f16_f32_rr`: 8.10 -> 6.68 us modelled at
/// 256^3, 63.2 -> 46.9 us at 2048^3; `rc` 6.20 -> 6.04 and 46.4 -> 42.6); on RDNA one, where two
/// cost 5-23 % at 256^3 (gained 6-25 % at 2048^3) and put 1 KB more code into kernels already
/// near 32 KB.
const AHEAD: u32 = if cfg!(iron_matrix = "mfma") { 2 } else { 1 };

/// Keeps the global loads just issued ahead of the tile's matrix instructions that follow. On
/// CDNA the scheduler otherwise sank them to their LDS writes, each load then waited on at once
/// (gfx942: 6.6 -> 11.9 us modelled at 256^3); on RDNA its own order is better (gfx1201: 4.1
/// us, 5.3 with the fence), so there it does nothing.
#[inline(always)]
fn keep_loads_ahead() {
    if cfg!(iron_matrix = "mfma") {
        schedule_fence();
    }
}

/// An operand's share of K tile `tile`, fetched with [`Stage::fetch_full`] when `FULL`, else
/// with [`Stage::fetch`].
///
/// # Safety
/// As for [`Stage::fetch`]; when `FULL`, as for [`Stage::fetch_full`].
#[inline(always)]
unsafe fn fetch<T: Stage, const FULL: bool>(stage: &T, tile: u32) -> T::Held {
    // SAFETY: as the caller guarantees.
    unsafe {
        if FULL {
            stage.fetch_full(tile)
        } else {
            stage.fetch(tile)
        }
    }
}

/// Up to 32 bytes of one lane's chunks of a staged row, from which its fragments are taken.
/// Each chunk is one 128-bit value, read as one access (word arrays would be read word by word
/// and left to the compiler to merge, which it does not always do).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct Span([u128; 2]);

/// A 16-byte chunk of a staged row as one 16-byte aligned value (one `ds_read_b128`, whose
/// offset field reaches every row tile of a wave).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk(u128);

/// The instructions of a plain (unscaled) 16 x 16 or 32 x 32 matrix instruction `I` over a K tile of
/// `TILE_K` elements staged in swizzled 64-byte rows ([`swizzled`]).
///
/// A lane reads whole 16-byte chunks of its fragments' rows (one conflict-free access each) and
/// feeds their bytes to the tile's K steps: with `F` the bytes of a lane's fragment and `G` the
/// lane groups of a K step (lanes whose fragments start at the same K), lane group `g` takes
/// chunks `g, g + G, ..` of each row, in order, `F` bytes per K step. A and B are read alike, so
/// every K step multiplies matching elements, and the steps together take every K of the tile
/// once: the tile's product, its terms summed in another order than K's when `F < 16`.
pub struct PlainStep<I, const TILE_K: u32>(core::marker::PhantomData<I>);

impl<I: iron_intrinsics::matrix::Mma, const TILE_K: u32> PlainStep<I, TILE_K> {
    /// Bytes of a lane's fragment (A's and B's alike).
    pub(crate) const FRAGMENT: u32 = <I::A as Fragment>::BYTES;
    /// Bytes of a row's K step.
    const STEP_BYTES: u32 = I::K * I::A_BITS / 8;
    /// Lane groups of a K step.
    pub(crate) const GROUPS: u32 = Self::STEP_BYTES / Self::FRAGMENT;
    /// Bytes of a lane's span: the chunks read at once, which feed whole K steps.
    pub(crate) const SPAN: u32 = if Self::FRAGMENT > 16 {
        Self::FRAGMENT
    } else {
        16
    };

    /// This lane's span `span` of row tile `t` (rows `16 t..16 t + 16`) of a tile at `tile`
    /// whose rows are laid out alike from every multiple of 32; `group` is the lane's group.
    ///
    /// # Safety
    /// `tile` must hold the staged rows.
    #[inline(always)]
    pub(crate) unsafe fn span(tile: *const u8, t: u32, group: u32, span: u32) -> Span {
        // Rows 32 apart are laid out alike: row tiles starting in different sets of 32 rows are
        // a constant offset apart.
        let first = t * I::M;
        let pair = first / 32 * 32 * SWIZZLED_ROW_BYTES;
        let row = first % 32 + lane_id() % I::M;
        let chunk = |j: u32| {
            let c = group + Self::GROUPS * (span * Self::SPAN / 16 + j);
            let at = pair + swizzled(row, 16 * c);
            // SAFETY: a 16-byte chunk of a staged row, 16-byte aligned.
            unsafe { (*(tile.add(at as usize) as *const Chunk)).0 }
        };
        if Self::SPAN == 32 {
            Span([chunk(0), chunk(1)])
        } else {
            Span([chunk(0), 0])
        }
    }

    /// The fragment of K step `step` (counted within its span) in `span`.
    #[inline(always)]
    pub(crate) fn fragment<T: Fragment>(span: &Span, step: u32) -> T {
        let bytes = core::ptr::from_ref(span).cast::<u8>();
        // SAFETY: the fragment's bytes lie in the span, aligned as Fragment::read needs (the
        // span is 16-byte aligned and fragments are at multiples of their size).
        unsafe { T::read(bytes.add((step * Self::FRAGMENT) as usize), 1, 0) }
    }
}

impl<I: iron_intrinsics::matrix::Mma, const TILE_K: u32> Step for PlainStep<I, TILE_K> {
    type Core = I;
    /// Transposed where that gives the epilogue runs of consecutive columns (A's and B's lane
    /// layouts mirror each other, so swapping the operands only swaps the roles of the rows).
    const TRANSPOSED: bool = I::D_RUN.is_multiple_of(RUN);

    #[inline(always)]
    unsafe fn step<const B: u32>(
        acc: &mut Accumulators<I>,
        a: *const u8,
        b: *const u8,
        wave_row: u32,
        wave_col: u32,
    ) {
        // Whether one span's fragments take more than 32 registers (gfx11's WMMA fragments hold
        // whole rows): then each span's fragments are loaded within it, so that the compiler
        // does not load every span's fragments at once or ahead of other work.
        let fenced =
            const { Self::SPAN as usize * (repeats_m::<I, B>() + repeats_n::<I, B>()) > 128 };
        const {
            assert!(TILE_K * I::A_BITS / 8 == SWIZZLED_ROW_BYTES && I::A_BITS == I::B_BITS);
            assert!(<I::A as Fragment>::BYTES == <I::B as Fragment>::BYTES);
            assert!(I::A_RUNS == 1 && I::B_RUNS == 1);
            assert!(I::M == I::N && (I::M == 16 || I::M == 32));
            assert!(Self::STEP_BYTES.is_multiple_of(Self::FRAGMENT));
            assert!(SWIZZLED_ROW_BYTES.is_multiple_of(Self::GROUPS * Self::SPAN));
            assert!(wave_rows(B).is_multiple_of(32) && wave_cols(B).is_multiple_of(16));
            assert!(repeats_m::<I, B>() >= 1 && repeats_n::<I, B>() >= 1);
        };
        let lane = lane_id();
        // Transposed, A's rows are the instruction's B operand and B's its A operand.
        let (k_a, k_b) = if Self::TRANSPOSED {
            (I::b_k(lane, 0), I::a_k(lane, 0))
        } else {
            (I::a_k(lane, 0), I::b_k(lane, 0))
        };
        let group_a = k_a * I::A_BITS / 8 / Self::FRAGMENT;
        let group_b = k_b * I::B_BITS / 8 / Self::FRAGMENT;
        // Rows 32 apart are laid out alike, so a wave tile starting at a multiple of 32 reads
        // from its first row as a block's first wave would. A wave tile 16 columns wide (wave32
        // in a block of 64) may start 16 rows into a set of 32: it reads from the set's first
        // row, its row tiles counted from there.
        let whole_sets = const { wave_cols(B).is_multiple_of(32) };
        let first_col_tile = if whole_sets { 0 } else { wave_col % 32 / I::N };
        // SAFETY: the wave's rows lie in the staged tiles.
        let (a, b) = unsafe {
            (
                a.add((wave_row * SWIZZLED_ROW_BYTES) as usize),
                b.add(((wave_col - first_col_tile * I::N) * SWIZZLED_ROW_BYTES) as usize),
            )
        };
        let spans = const {
            let spans = SWIZZLED_ROW_BYTES / (Self::GROUPS * Self::SPAN);
            assert!(spans == 1 || spans == 2);
            spans
        };
        // Each span written out: as a loop of two, LLVM left it rolled on gfx1100 once the step
        // was generic over the block (12-27 % more wave-instructions).
        macro_rules! one_span {
            ($span:literal) => {
                if $span < spans {
                    let span: u32 = $span;
                    if fenced {
                        schedule_fence();
                    }
                    // SAFETY: every chunk lies in the staged tile, as the stages wrote it.
                    let sa = per_row!(I, B, |t| unsafe { Self::span(a, t, group_a, span) });
                    // SAFETY: as above.
                    let sb = per_col!(I, B, |t| unsafe {
                        Self::span(b, first_col_tile + t, group_b, span)
                    });
                    for step in 0..Self::SPAN / Self::FRAGMENT {
                        if Self::TRANSPOSED {
                            let fa =
                                per_row!(I, B, |t| Self::fragment::<I::B>(&sa[t as usize], step));
                            let fb =
                                per_col!(I, B, |t| Self::fragment::<I::A>(&sb[t as usize], step));
                            each_tile!(I, B, |tm, tn| acc[tm][tn] =
                                I::mma(fb[tn], fa[tm], acc[tm][tn]));
                        } else {
                            let fa =
                                per_row!(I, B, |t| Self::fragment::<I::A>(&sa[t as usize], step));
                            let fb =
                                per_col!(I, B, |t| Self::fragment::<I::B>(&sb[t as usize], step));
                            each_tile!(I, B, |tm, tn| acc[tm][tn] =
                                I::mma(fa[tm], fb[tn], acc[tm][tn]));
                        }
                    }
                }
            };
        }
        one_span!(0);
        one_span!(1);
    }
}
