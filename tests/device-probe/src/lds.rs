//! Static LDS arrays (`iron_intrinsics::lds::array!`) next to dynamic LDS
//! (`tests/tests/emu_static_lds.rs`).
//!
//! `reverse_blocks(x, y, n)`: every workgroup of 256 work-items reverses its 256-element slice
//! of `x` through a static f32 array, counts the slice's elements with an odd bit pattern in a
//! second (u32) static array, and stages its work-item ids in dynamic LDS (256 u32, given by the
//! launch), so the three must not overlap: `y[i]` is `x` reversed within the slice plus the
//! slice's count, written for every `i < n` (a partial last slice reverses what it has).
use iron_intrinsics::id::{workgroup_id_x, workitem_id_x};
use iron_intrinsics::kernel;
use iron_intrinsics::{
    atomic::{self, Ordering, Scope},
    lds,
    sync::workgroup_barrier,
};

/// Work-items per workgroup of `reverse_blocks`.
pub const BLOCK: u32 = 256;

/// See the module docs.
#[kernel(block = 256, dynamic_lds = |threads, _wave| 4 * threads)]
pub fn reverse_blocks(x: *const f32, y: *mut f32, n: u32) {
    let tile = lds::array!([f32; 256]);
    let counts = lds::array!([u32; 1]);
    let ids = lds::dynamic::<u32>();
    let t = workitem_id_x();
    let start = workgroup_id_x() * BLOCK;
    let len = (n - start).min(BLOCK);
    // SAFETY: t < 256, the size of every array; ids has 256 elements by the launch contract;
    // barriers separate every write from the other work-items' reads.
    unsafe {
        if t == 0 {
            counts.write(0, 0);
        }
        *ids.add(t as usize) = t;
        if t < len {
            tile.write(t as usize, *x.add((start + t) as usize));
        }
        workgroup_barrier();
        if t < len && tile.read(t as usize).to_bits() & 1 == 1 {
            atomic::fetch_add(counts.as_ptr(), 1, Ordering::Relaxed, Scope::Workgroup);
        }
        workgroup_barrier();
        if t < len {
            let mirrored = *ids.add((len - 1 - t) as usize);
            let v = tile.read(mirrored as usize) + counts.read(0) as f32;
            *y.add((start + t) as usize) = v;
        }
    }
}
