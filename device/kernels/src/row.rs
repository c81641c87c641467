//! How row kernels walk a row-major `[rows, cols]` tensor: workgroup `g` takes row `g` (the grid
//! has at least `rows` workgroups; extra ones do nothing), the row cut into chunks of `V`
//! elements, work-item `t` of a workgroup of `W` owning chunks `t, t + W, t + 2W, ...`
//! (neighbouring work-items read neighbouring chunks).
//!
//! One row per workgroup, rather than a loop over rows, keeps the per-chunk addresses of row-shared
//! operands (a norm's weight and bias) from being hoisted out of that loop into registers.
//!
//! `V` is the number of elements in 16 bytes when `cols` is a multiple of it (every row then
//! starts 16-byte aligned, given an aligned buffer) and 1 otherwise, so rows of any length work
//! and the common ones move 16 bytes per access.
//!
//! A work-item's share of a row is read either from memory each time it is visited
//! ([`Streamed`]) or once into registers ([`Resident`], up to [`RESIDENT_ELEMS`] elements per
//! work-item); kernels written against [`RowValues`] run on both.

use crate::dtype::{Float, load_near, widen};
use crate::row_exchange::launched_waves;
use iron_intrinsics::id::{workgroup_id_x, workgroup_size_x, workitem_id_x};
use iron_intrinsics::sync::schedule_fence;
use iron_intrinsics::target::WAVE;

/// Elements of a row each work-item can hold in registers (32 VGPRs).
pub const RESIDENT_ELEMS: usize = 32;

/// The row of `rows` this workgroup handles, if any. Workgroup-uniform.
#[inline(always)]
pub fn this_workgroups_row(rows: u32) -> Option<usize> {
    let row = workgroup_id_x();
    (row < rows).then_some(row as usize)
}

/// The chunks of a row this work-item owns: `first, first + stride, ...` below `chunks`.
#[derive(Clone, Copy)]
pub struct Share {
    first: u32,
    stride: u32,
    chunks: u32,
}

impl Share {
    /// This work-item's share of a row of `chunks` chunks.
    #[inline(always)]
    pub fn of_this_workitem(chunks: u32) -> Self {
        Self {
            first: workitem_id_x(),
            stride: workgroup_size_x(),
            chunks,
        }
    }

    /// Calls `f(chunk)` for each owned chunk, in increasing order.
    #[inline(always)]
    pub fn for_each(self, mut f: impl FnMut(u32)) {
        let mut c = self.first;
        while c < self.chunks {
            f(c);
            c += self.stride;
        }
    }
}

/// A work-item's share of one row, as f32 values in chunks of `V`.
pub trait RowValues<const V: usize> {
    /// Calls `f(chunk, values)` for each chunk of the row this work-item owns, in increasing
    /// order of chunk.
    fn visit(&self, f: impl FnMut(u32, [f32; V]));

    /// The waves of the workgroup that shares the row, for its reductions.
    #[inline(always)]
    fn waves(&self) -> u32 {
        launched_waves()
    }

    /// A row-shared operand (a norm's weight or bias: `cols` elements, one per column) at this
    /// share's chunks: read at once where the share is held in registers, so that its loads are
    /// in flight together, ahead of the row's reductions and of any store (on gfx9 one counter
    /// covers loads and stores, so a load issued behind a store waits for it); else read at
    /// each visit.
    type Along<U: Float>;

    /// `operand` along this share ([`RowValues::Along`]), one of the `K` operands the caller
    /// reads along it (their chunks share the registers).
    ///
    /// # Safety
    /// `operand` must hold one element per column of the row, aligned as the row is.
    unsafe fn along<U: Float, const K: usize>(&self, operand: *const U) -> Self::Along<U>;

    /// As [`RowValues::visit`], with the chunk's values of each operand of `along` too.
    fn visit_along<U: Float, const K: usize>(
        &self,
        along: [Self::Along<U>; K],
        f: impl FnMut(u32, [f32; V], [[f32; V]; K]),
    );
}

/// The [`RowValues`] items of a share whose row-shared operands are read at each visit: an
/// operand along it is its address.
macro_rules! operands_read_at_each_visit {
    () => {
        type Along<U: Float> = *const U;

        #[inline(always)]
        unsafe fn along<U: Float, const K: usize>(&self, operand: *const U) -> *const U {
            operand
        }

        #[inline(always)]
        fn visit_along<U: Float, const K: usize>(
            &self,
            along: [*const U; K],
            mut f: impl FnMut(u32, [f32; V], [[f32; V]; K]),
        ) {
            self.visit(|c, v| {
                // SAFETY: chunk c lies in the row, so in each operand (`RowValues::along`'s
                // contract).
                let operands =
                    core::array::from_fn(|j| widen(unsafe { load_near::<U, V>(along[j], c) }));
                f(c, v, operands);
            });
        }
    };
}

/// A share read from memory at each visit.
pub struct Streamed<T, const V: usize> {
    row: *const T,
    share: Share,
}

impl<T: Float, const V: usize> Streamed<T, V> {
    /// The share `share` of the row starting at `row`.
    ///
    /// # Safety
    /// `row` must hold the `V * share.chunks` elements the share covers (less than 4 GiB),
    /// 16-byte aligned when `V` elements fill 16 bytes.
    #[inline(always)]
    pub unsafe fn new(row: *const T, share: Share) -> Self {
        Self { row, share }
    }
}

impl<T: Float, const V: usize> RowValues<V> for Streamed<T, V> {
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(u32, [f32; V])) {
        self.share.for_each(|c| {
            // SAFETY: c < chunks, inside the row `new`'s caller vouched for.
            f(c, widen(unsafe { load_near::<T, V>(self.row, c) }));
        });
    }

    operands_read_at_each_visit!();
}

/// A share read once into registers: at most [`RESIDENT_ELEMS`] / `V` chunks per work-item.
pub struct Resident<const V: usize> {
    values: [f32; RESIDENT_ELEMS],
    share: Share,
}

impl<const V: usize> Resident<V> {
    /// Chunks a work-item holds.
    const CHUNKS: usize = RESIDENT_ELEMS / V;

    /// Whether a row of `chunks` chunks fits in the registers of the workgroup (the same answer
    /// in every work-item).
    #[inline(always)]
    pub fn fits(chunks: u32) -> bool {
        chunks <= Self::CHUNKS as u32 * workgroup_size_x()
    }

    /// Reads the share `share` of the row starting at `row` (which must [`Self::fits`]).
    ///
    /// # Safety
    /// As for [`Streamed::new`].
    #[inline(always)]
    pub unsafe fn load<T: Float>(row: *const T, share: Share) -> Self {
        let mut values = [0.0; RESIDENT_ELEMS];
        for k in 0..Self::CHUNKS {
            let c = share.first + k as u32 * share.stride;
            if c < share.chunks {
                // SAFETY: c < chunks, inside the row the caller vouched for.
                let chunk = widen(unsafe { load_near::<T, V>(row, c) });
                values[k * V..k * V + V].copy_from_slice(&chunk);
            }
        }
        Self { values, share }
    }

    /// Replaces each owned chunk's values `v` by `f(v)`.
    #[inline(always)]
    pub fn update(&mut self, mut f: impl FnMut([f32; V]) -> [f32; V]) {
        for k in 0..Self::CHUNKS {
            if self.share.first + (k as u32) * self.share.stride < self.share.chunks {
                let new = f(self.chunk(k));
                self.values[k * V..k * V + V].copy_from_slice(&new);
            }
        }
    }

    /// The values of held chunk `k`.
    #[inline(always)]
    fn chunk(&self, k: usize) -> [f32; V] {
        core::array::from_fn(|l| self.values[k * V + l])
    }
}

impl<const V: usize> RowValues<V> for Resident<V> {
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(u32, [f32; V])) {
        for k in 0..Self::CHUNKS {
            let c = self.share.first + k as u32 * self.share.stride;
            if c < self.share.chunks {
                f(c, self.chunk(k));
            }
        }
    }

    operands_read_at_each_visit!();
}

/// A share of exactly `CHUNKS` chunks of `V` elements per work-item, held in registers: the row is
/// `CHUNKS * workgroup_size` chunks, so no chunk is guarded and no register is idle. The chunks
/// are kept as read and widened at each visit (LLVM merges the widenings, so in practice the
/// registers hold them widened, `CHUNKS * V` f32 values).
///
/// `WAVES` is the workgroup's size in waves when the instance fixes it (0: any size, read from
/// the dispatch packet). A fixed size makes the chunks' offsets and the reductions' wave count
/// constants: the addresses become immediate offsets, and a one-wave workgroup reduces without
/// LDS, barrier or branch.
pub struct Held<T, const V: usize, const CHUNKS: usize, const WAVES: u32 = 0> {
    values: [[T; V]; CHUNKS],
    first: u32,
    stride: u32,
}

impl<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32> Held<T, V, CHUNKS, WAVES> {
    /// The workgroup's size in work-items: `WAVES` waves, or as launched when `WAVES` is 0.
    #[inline(always)]
    fn workgroup_size() -> u32 {
        if WAVES == 0 {
            workgroup_size_x()
        } else {
            WAVES * WAVE
        }
    }

    /// Whether the workgroup has the instance's size and a row of `cols` elements is exactly its
    /// `CHUNKS * V * workgroup_size` (the same answer in every work-item).
    #[inline(always)]
    fn covers(cols: u32) -> bool {
        let size = Self::workgroup_size();
        (WAVES == 0 || workgroup_size_x() == size) && cols == (CHUNKS * V) as u32 * size
    }

    /// Reads this work-item's chunks `t, t + W, ..., t + (CHUNKS - 1) * W` of the row starting at
    /// `row` (work-item `t` of a workgroup of `W`).
    ///
    /// # Safety
    /// `row` must hold `CHUNKS * W * V` elements (less than 4 GiB), 16-byte aligned when `V`
    /// elements fill 16 bytes, and the workgroup must have the instance's size.
    #[inline(always)]
    pub unsafe fn load(row: *const T) -> Self {
        let first = workitem_id_x();
        let stride = Self::workgroup_size();
        // SAFETY: chunk first + k * stride < CHUNKS * W, inside the row the caller vouched for.
        let values =
            core::array::from_fn(|k| unsafe { load_near::<T, V>(row, first + k as u32 * stride) });
        Self {
            values,
            first,
            stride,
        }
    }

    /// The row's chunk number of held chunk `k` (`k < CHUNKS`).
    #[inline(always)]
    pub fn chunk(&self, k: usize) -> u32 {
        self.first + k as u32 * self.stride
    }

    /// The values of held chunk `k`, widened to f32.
    #[inline(always)]
    pub fn values(&self, k: usize) -> [f32; V] {
        widen(self.values[k])
    }
}

/// Runs `$body` with `$k` bound to each of the constants `0, 1, ..., $n - 1` in turn (`$n` a
/// constant, at most 32), as straight-line code. LLVM leaves a loop over a large body rolled (the
/// bf16 LayerNorm's output pass at 16 chunks), and a held array indexed in a rolled loop goes to
/// scratch; here every index is a constant from the start.
macro_rules! each_index_below {
    ($n:expr, |$k:ident| $body:expr) => {
        each_index_below!(@ $n, $k, $body;
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@ $n:expr, $k:ident, $body:expr; $($i:literal)*) => {{
        const { assert!($n <= 32) };
        $(
            if $i < $n {
                let $k: usize = $i;
                $body;
            }
        )*
    }};
}

impl<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32> RowValues<V>
    for Held<T, V, CHUNKS, WAVES>
{
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(u32, [f32; V])) {
        each_index_below!(CHUNKS, |k| f(self.chunk(k), self.values(k)));
    }

    #[inline(always)]
    fn waves(&self) -> u32 {
        Self::workgroup_size() / WAVE
    }

    type Along<U: Float> = HeldOperand<U, V, CHUNKS>;

    #[inline(always)]
    unsafe fn along<U: Float, const K: usize>(
        &self,
        operand: *const U,
    ) -> HeldOperand<U, V, CHUNKS> {
        let mut along = HeldOperand {
            operand,
            chunks: [[U::round_from_f32(0.0); V]; CHUNKS],
            read: false,
        };
        if Self::registers_ahead::<U>(K) <= AHEAD_REGISTERS {
            self.read(&mut along, 0, CHUNKS);
            along.read = true;
            // Left alone, llc's scheduler sinks the loads to their uses, past the reductions,
            // to free their registers.
            schedule_fence();
        }
        along
    }

    #[inline(always)]
    fn visit_along<U: Float, const K: usize>(
        &self,
        mut along: [HeldOperand<U, V, CHUNKS>; K],
        mut f: impl FnMut(u32, [f32; V], [[f32; V]; K]),
    ) {
        // Operands not read ahead are read now, in groups of as many chunks as the registers
        // allow, each group before the first store of its visit. The fence keeps llc's
        // scheduler from sinking a group's loads to their uses, two in flight at a time.
        let group = Self::visit_group::<U>(K);
        let mut unread = false;
        each_index_below!(K, |j| unread |= !along[j].read);
        each_index_below!(CHUNKS, |k| {
            if k.is_multiple_of(group) && unread {
                each_index_below!(K, |j| if !along[j].read {
                    self.read(&mut along[j], k, group)
                });
                schedule_fence();
            }
            // Filled operand by operand with constant indices, as the held chunks are: an
            // index that stayed a variable would keep the operands in scratch.
            let mut operands = [[0.0; V]; K];
            each_index_below!(K, |j| operands[j] = widen(along[j].chunks[k]));
            f(self.chunk(k), self.values(k), operands)
        });
    }
}

impl<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32> Held<T, V, CHUNKS, WAVES> {
    /// The registers a work-item needs through the row's reductions to hold the row (widened
    /// to f32, as the reductions use it) and `operands` row-shared operands of type `U` read
    /// ahead of them.
    #[inline(always)]
    const fn registers_ahead<U>(operands: usize) -> usize {
        CHUNKS * V + operands * CHUNKS * V * size_of::<U>() / 4
    }

    /// The registers a work-item needs in the output pass to hold the row and `chunks` chunks of
    /// `operands` row-shared operands of type `U`. The row counts at its stored size when its
    /// widening folds into the arithmetic that uses it (f16: llc keeps it packed and widens in
    /// `v_fma_mix_f32`: on gfx1201 `rmsnorm_f16_c16w1` takes 137 VGPRs reading its whole
    /// weight at once), else widened to f32 (bf16, widened by shifts that llc does once and
    /// keeps: `rmsnorm_bf16_c16w1` takes 185 reading half of it).
    #[inline(always)]
    const fn registers_at_visit<U>(operands: usize, chunks: usize) -> usize {
        let row = if T::WIDENS_INTO_FMA {
            CHUNKS * V * size_of::<T>() / 4
        } else {
            CHUNKS * V
        };
        row + operands * chunks * V * size_of::<U>() / 4
    }

    /// The chunks of `operands` operands of type `U` read together at their visit: all of them,
    /// else half as many, and so on, until they fit [`VISIT_REGISTERS`] with the row (at least
    /// one).
    #[inline(always)]
    const fn visit_group<U>(operands: usize) -> usize {
        let mut group = CHUNKS;
        while group > 1
            && group.is_multiple_of(2)
            && Self::registers_at_visit::<U>(operands, group) > VISIT_REGISTERS
        {
            group /= 2;
        }
        if Self::registers_at_visit::<U>(operands, group) <= VISIT_REGISTERS {
            group
        } else {
            1
        }
    }

    /// Reads `operand`'s held chunks `from .. from + count` along this share.
    #[inline(always)]
    fn read<U: Float>(&self, operand: &mut HeldOperand<U, V, CHUNKS>, from: usize, count: usize) {
        // SAFETY: held chunk k lies in the row, so in the operand (`RowValues::along`'s
        // contract, under which every `HeldOperand` is made).
        each_index_below!(CHUNKS, |k| if k >= from && k < from + count {
            operand.chunks[k] = unsafe { load_near::<U, V>(operand.operand, self.chunk(k)) }
        });
    }
}

/// The most registers a work-item gives its held row and the row-shared operands it reads ahead
/// of the row's reductions ([`Held::registers_ahead`]). At 192 (16 chunks of eight 16-bit
/// values, widened, and one operand) the bf16 RMSNorm spills on gfx942; counting an f16 row
/// packed there (128) spilled 2 VGPRs of `rmsnorm_f16_c16` to AGPRs on gfx942 and gfx950.
const AHEAD_REGISTERS: usize = 128;

/// The most registers a work-item gives its held row and the chunks of the row-shared operands
/// it reads together at their visit. At 192 (16 chunks of eight bf16 values, widened, and 8
/// chunks of two operands) the bf16 LayerNorm spills on gfx1201 once its reads are fenced.
const VISIT_REGISTERS: usize = 160;

/// A row-shared operand along a [`Held`] share ([`RowValues::Along`]): its address and its
/// chunks, read ahead of the row's reductions when the registers allow ([`AHEAD_REGISTERS`]),
/// else at their visit in groups of as many chunks as [`VISIT_REGISTERS`] allows.
pub struct HeldOperand<U, const V: usize, const CHUNKS: usize> {
    operand: *const U,
    chunks: [[U; V]; CHUNKS],
    read: bool,
}

/// This workgroup's row of `x` held in registers (`CHUNKS` chunks of `V` = [`Float::PACK`]
/// elements per work-item, in a workgroup of `WAVES` waves or, for 0, of any size) and the row's
/// index: `None` when the workgroup has no row, has another size than the instance's, or the row
/// is not exactly `CHUNKS * V * workgroup_size` elements. Workgroup-uniform.
#[inline(always)]
pub fn held_row<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    rows: u32,
    cols: u32,
) -> Option<(Held<T, V, CHUNKS, WAVES>, usize)> {
    const { assert!(V == T::PACK) };
    let r = this_workgroups_row(rows)?;
    if !Held::<T, V, CHUNKS, WAVES>::covers(cols) {
        return None;
    }
    // SAFETY: x holds rows * cols elements; row r starts 16-byte aligned (cols is a multiple of
    // V) and holds CHUNKS * V * workgroup_size elements, the workgroup having the instance's size.
    Some((
        unsafe { Held::<T, V, CHUNKS, WAVES>::load(x.add(r * cols as usize)) },
        r,
    ))
}

/// This workgroup's row of `x` held in registers, as [`held_row`], and the start of its row of
/// `y`, a `[rows, cols]` output like `x`.
#[inline(always)]
pub fn held_row_with_output<T: Float, const V: usize, const CHUNKS: usize, const WAVES: u32>(
    x: *const T,
    y: *mut T,
    rows: u32,
    cols: u32,
) -> Option<(Held<T, V, CHUNKS, WAVES>, *mut T)> {
    let (values, r) = held_row::<T, V, CHUNKS, WAVES>(x, rows, cols)?;
    // SAFETY: y holds rows * cols elements, like x, and r < rows.
    Some((values, unsafe { y.add(r * cols as usize) }))
}

/// `v`'s elements combined with `op` pairwise (halves first). Partial results kept per position
/// of a chunk make independent chains instead of one serial chain of dependent operations (on
/// gfx942 each dependent `v_fma_mix_f32` waits a cycle, on RDNA an `s_delay_alu`); this folds
/// them.
#[inline(always)]
pub fn lanes_fold<const V: usize>(v: [f32; V], op: impl Fn(f32, f32) -> f32) -> f32 {
    let mut v = v;
    let mut width = V;
    while width > 1 {
        let half = width / 2;
        for k in 0..half {
            v[k] = op(v[k], v[k + half]);
        }
        if width % 2 == 1 {
            v[0] = op(v[0], v[width - 1]);
        }
        width = half;
    }
    v[0]
}
