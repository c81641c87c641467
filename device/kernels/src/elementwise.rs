//! Streaming kernels over flat arrays: fill, copy, vector add, saxpy.
//!
//! All take the element count `n` (any value, including 0). They move 16 bytes per access (4
//! elements) and the last `n % 4` elements one by one, spread over the grid as [`crate::flat`]
//! describes. Buffers must be 16-byte aligned (device allocations are). Launch: workgroups of
//! 256 work-items (the kernels are compiled for that block), at least
//! `n.div_ceil(4 * 256 * CHUNKS)` of them ([`crate::flat::CHUNKS`]), no dynamic LDS.

use crate::flat::over_chunks;
use iron_intrinsics::kernel;
use iron_intrinsics::math::mul_add;

/// `out[i] = value` for `i < n`: fills any array of 4-byte elements (pass f32 as its bits).
#[kernel(block = 256)]
pub fn fill_u32(out: *mut u32, value: u32, n: u32) {
    over_chunks::<4, _>(
        n,
        |_| [value; 4],
        // SAFETY: a whole chunk of n; out holds n 16-byte-aligned elements.
        |k, values| unsafe { k.store(out, values) },
        // SAFETY: j < n.
        |j| unsafe { *out.add(j) = value },
    );
}

/// `dst[i] = src[i]` for `i < n` 4-byte elements.
#[kernel(block = 256)]
pub fn copy_u32(src: *const u32, dst: *mut u32, n: u32) {
    over_chunks::<4, _>(
        n,
        // SAFETY: a whole chunk of n; both arrays hold n 16-byte-aligned elements.
        |k| unsafe { k.load(src) },
        // SAFETY: as above.
        |k, values| unsafe { k.store(dst, values) },
        // SAFETY: j < n.
        |j| unsafe { *dst.add(j) = *src.add(j) },
    );
}

/// `c[i] = a[i] + b[i]` for `i < n` f32 elements.
#[kernel(block = 256)]
pub fn add_f32(a: *const f32, b: *const f32, c: *mut f32, n: u32) {
    over_chunks::<4, _>(
        n,
        // SAFETY: a whole chunk of n; all arrays hold n 16-byte-aligned elements.
        |k| unsafe { (k.load(a), k.load(b)) },
        // SAFETY: as above.
        |k, (x, y)| unsafe { k.store(c, core::array::from_fn(|l| x[l] + y[l])) },
        // SAFETY: j < n.
        |j| unsafe { *c.add(j) = *a.add(j) + *b.add(j) },
    );
}

/// `y[i] = alpha * x[i] + y[i]` for `i < n` f32 elements, with a fused multiply-add.
#[kernel(block = 256)]
pub fn saxpy_f32(alpha: f32, x: *const f32, y: *mut f32, n: u32) {
    over_chunks::<4, _>(
        n,
        // SAFETY: a whole chunk of n; both arrays hold n 16-byte-aligned elements.
        |k| unsafe { (k.load(x), k.load(y)) },
        // SAFETY: as above.
        |k, (u, v)| unsafe { k.store(y, core::array::from_fn(|l| mul_add(alpha, u[l], v[l]))) },
        // SAFETY: j < n.
        |j| unsafe { *y.add(j) = mul_add(alpha, *x.add(j), *y.add(j)) },
    );
}
