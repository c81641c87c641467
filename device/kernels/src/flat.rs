//! How the flat kernels (streaming, elementwise, casts, the sum) spread an array over the grid.
//!
//! An array of `n` elements is cut into chunks of `V` elements (16 bytes on the narrower side of
//! the kernel). Workgroups are [`BLOCK`] work-items, a compile-time constant of every flat kernel,
//! and each owns a span of `BLOCK * chunks` consecutive chunks (`chunks` per work-item, [`CHUNKS`]
//! for the elementwise kernels), wave by wave: a wave's chunks are contiguous and its lanes take
//! neighbouring chunks, so every access of a wave covers one contiguous run, and a lane's next
//! chunk is a fixed distance on, which the access carries as its immediate offset. A workgroup
//! whose span is whole runs without any bounds check and loads all its chunks before it stores
//! any. The one workgroup holding the end of the array takes its elements one at a time
//! (neighbouring lanes, neighbouring elements), on a path that shares no code with the other.
//! There is no loop over the array: the grid must cover it, with at least
//! `n.div_ceil(V * BLOCK * chunks)` workgroups (further ones do nothing).

use crate::dtype::{load, store};
use iron_intrinsics::id::{workgroup_id_x, workitem_id_x};
use iron_intrinsics::target::WAVE;

/// Work-items per workgroup of every flat kernel (a multiple of both wave sizes).
pub const BLOCK: u32 = 256;

/// Chunks each work-item of an elementwise kernel moves.
pub const CHUNKS: u32 = 2;

/// One chunk of `V` elements a work-item moves: where its workgroup's span starts (the same in
/// every lane) and where the chunk lies after that (below `BLOCK * chunks` chunks), so that an
/// address is a uniform base plus a 32-bit offset per lane plus a constant.
#[derive(Clone, Copy)]
pub struct Chunk<const V: usize> {
    workgroup_first: usize,
    lane_first: u32,
    index: u32,
}

impl<const V: usize> Chunk<V> {
    /// This work-item's chunk `index` (below `chunks`) when each work-item owns `chunks` chunks.
    #[inline(always)]
    pub fn of_work_item(chunks: u32, index: u32) -> Self {
        let lane = workitem_id_x();
        Self {
            workgroup_first: (workgroup_id_x() * BLOCK * chunks) as usize,
            lane_first: (lane / WAVE) * (WAVE * chunks) + lane % WAVE,
            index,
        }
    }

    /// The chunk's byte offset from its workgroup's first chunk in an array of `T`.
    #[inline(always)]
    fn offset<T>(self) -> usize {
        let bytes = (V * size_of::<T>()) as u32;
        (self.lane_first * bytes + self.index * (WAVE * bytes)) as usize
    }

    /// The chunk's `V` elements of `p`.
    ///
    /// # Safety
    /// The chunk must lie in the array `p` points to, 16-byte aligned when `V` elements fill
    /// 16-byte words (device allocations are).
    #[inline(always)]
    pub unsafe fn load<T: Copy>(self, p: *const T) -> [T; V] {
        // SAFETY: in bounds and aligned as the caller guarantees.
        unsafe {
            load::<T, V>(
                p.add(self.workgroup_first * V).byte_add(self.offset::<T>()),
                0,
            )
        }
    }

    /// Writes `values` to the chunk's `V` elements of `p`.
    ///
    /// # Safety
    /// As for [`Chunk::load`].
    #[inline(always)]
    pub unsafe fn store<T: Copy>(self, p: *mut T, values: [T; V]) {
        // SAFETY: as for `load`.
        unsafe {
            let at = p.add(self.workgroup_first * V).byte_add(self.offset::<T>());
            store::<T, V>(at, 0, values)
        }
    }
}

/// Elements in the span of a workgroup whose work-items own `chunks` chunks of `V` elements.
#[inline(always)]
const fn span<const V: usize>(chunks: u32) -> u32 {
    BLOCK * chunks * V as u32
}

/// Whether this workgroup's span (`chunks` chunks of `V` per work-item) lies wholly in an
/// `n`-element array.
#[inline(always)]
pub fn span_is_whole<const V: usize>(n: u32, chunks: u32) -> bool {
    workgroup_id_x() < n / span::<V>(chunks)
}

/// In the workgroup whose span (`chunks` chunks of `V` per work-item) holds the end of an
/// `n`-element array, calls `element(i)` for each of the span's elements in the array, one per
/// work-item at a time; in any later workgroup, calls nothing. A workgroup whose span is whole
/// must not call it.
#[inline(always)]
pub fn partial_span<const V: usize>(n: u32, chunks: u32, mut element: impl FnMut(usize)) {
    let span = span::<V>(chunks);
    let whole = n / span;
    // Past the end for every workgroup after the one holding it (whose index may be so large
    // that its first element would not fit in 32 bits).
    let mut i = if workgroup_id_x() == whole {
        whole * span + workitem_id_x()
    } else {
        n
    };
    while i < n {
        element(i as usize);
        if n - i <= BLOCK {
            break;
        }
        i += BLOCK;
    }
}

/// Moves an `n`-element array through `load` and `store`, a whole chunk of `V` elements at a
/// time, [`CHUNKS`] per work-item, spread over the grid as the module describes; the elements
/// of the workgroup holding the end of the array go to `narrow` one at a time instead. `store`
/// may write the arrays `load` reads, chunk for chunk. Flat kernels declare `block = 256`
/// ([`BLOCK`]) and are launched with a grid that covers the array.
#[inline(always)]
pub fn over_chunks<const V: usize, L: Copy>(
    n: u32,
    load: impl Fn(Chunk<V>) -> L,
    store: impl Fn(Chunk<V>, L),
    narrow: impl FnMut(usize),
) {
    if !span_is_whole::<V>(n, CHUNKS) {
        partial_span::<V>(n, CHUNKS, narrow);
        return;
    }
    let at = |index| Chunk::<V>::of_work_item(CHUNKS, index);
    // Written out rather than looped over an array of loaded chunks: a loop with a large body
    // (an FP8 encoder) is not unrolled, and its array then lives in scratch.
    const { assert!(CHUNKS == 2) };
    let (first, second) = (load(at(0)), load(at(1)));
    store(at(0), first);
    store(at(1), second);
}
