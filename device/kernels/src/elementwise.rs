//! Streaming kernels over flat arrays: fill, copy, vector add, saxpy.
//!
//! All take the element count `n` (any value, including 0) and work for any grid: each work-item
//! strides over the array by the grid size. The bulk moves 16 bytes per access (4 elements); the
//! last `n % 4` elements are handled one by one. Buffers must be 16-byte aligned (device
//! allocations are). Launch: workgroups of up to 256 work-items, no dynamic LDS.

use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;
use iron_intrinsics::math::mul_add;

/// Four 32-bit words moved as one 16-byte access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Words4([u32; 4]);

/// Four f32 moved as one 16-byte access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F32x4([f32; 4]);

/// Calls `body(i)` for every index `i < count` this work-item owns in a grid-stride loop.
#[inline(always)]
fn grid_stride(count: u32, mut body: impl FnMut(usize)) {
    let stride = grid_size_x();
    let mut i = global_id_x();
    while i < count {
        body(i as usize);
        i += stride;
    }
}

/// Calls `vector(i)` for each 4-element group and `scalar(j)` for each of the `n % 4` trailing
/// elements, spread over the grid.
#[inline(always)]
fn split_vec4(n: u32, vector: impl FnMut(usize), mut scalar: impl FnMut(usize)) {
    let groups = n / 4;
    grid_stride(groups, vector);
    let tail = global_id_x();
    if tail < n % 4 {
        scalar((groups * 4 + tail) as usize);
    }
}

/// `out[i] = value` for `i < n`: fills any array of 4-byte elements (pass f32 as its bits).
#[kernel(max_threads = 256)]
pub fn fill_u32(out: *mut u32, value: u32, n: u32) {
    let out4 = out as *mut Words4;
    split_vec4(
        n,
        // SAFETY: i < n / 4 and out holds n 16-byte-aligned elements.
        |i| unsafe { *out4.add(i) = Words4([value; 4]) },
        // SAFETY: j < n.
        |j| unsafe { *out.add(j) = value },
    );
}

/// `dst[i] = src[i]` for `i < n` 4-byte elements.
#[kernel(max_threads = 256)]
pub fn copy_u32(src: *const u32, dst: *mut u32, n: u32) {
    let (src4, dst4) = (src as *const Words4, dst as *mut Words4);
    split_vec4(
        n,
        // SAFETY: i < n / 4; both arrays hold n 16-byte-aligned elements.
        |i| unsafe { *dst4.add(i) = *src4.add(i) },
        // SAFETY: j < n.
        |j| unsafe { *dst.add(j) = *src.add(j) },
    );
}

/// `c[i] = a[i] + b[i]` for `i < n` f32 elements.
#[kernel(max_threads = 256)]
pub fn add_f32(a: *const f32, b: *const f32, c: *mut f32, n: u32) {
    let (a4, b4, c4) = (a as *const F32x4, b as *const F32x4, c as *mut F32x4);
    split_vec4(
        n,
        |i| {
            // SAFETY: i < n / 4; all arrays hold n 16-byte-aligned elements.
            let (x, y) = unsafe { (*a4.add(i), *b4.add(i)) };
            let sum = F32x4([
                x.0[0] + y.0[0],
                x.0[1] + y.0[1],
                x.0[2] + y.0[2],
                x.0[3] + y.0[3],
            ]);
            // SAFETY: as above.
            unsafe { *c4.add(i) = sum };
        },
        // SAFETY: j < n.
        |j| unsafe { *c.add(j) = *a.add(j) + *b.add(j) },
    );
}

/// `y[i] = alpha * x[i] + y[i]` for `i < n` f32 elements, with a fused multiply-add.
#[kernel(max_threads = 256)]
pub fn saxpy_f32(alpha: f32, x: *const f32, y: *mut f32, n: u32) {
    let (x4, y4) = (x as *const F32x4, y as *mut F32x4);
    split_vec4(
        n,
        |i| {
            // SAFETY: i < n / 4; both arrays hold n 16-byte-aligned elements.
            let (u, v) = unsafe { (*x4.add(i), *y4.add(i)) };
            let r = F32x4([
                mul_add(alpha, u.0[0], v.0[0]),
                mul_add(alpha, u.0[1], v.0[1]),
                mul_add(alpha, u.0[2], v.0[2]),
                mul_add(alpha, u.0[3], v.0[3]),
            ]);
            // SAFETY: as above.
            unsafe { *y4.add(i) = r };
        },
        // SAFETY: j < n.
        |j| unsafe { *y.add(j) = mul_add(alpha, *x.add(j), *y.add(j)) },
    );
}
