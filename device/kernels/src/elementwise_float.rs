//! Elementwise arithmetic and activations over f32, f16 and bf16: add, mul, fma, scale, relu,
//! silu, gelu (tanh form). One kernel per operation and type, e.g. `silu_bf16`; `add_f32` is
//! [`crate::elementwise::add_f32`].
//!
//! Every kernel computes in f32 and rounds once to the output type (to nearest even). Arguments:
//! input pointers, the output pointer, then the element count `n` (any value, including 0); `scale`
//! takes its f32 factor first, as `saxpy_f32` does. An output may be one of the inputs (same
//! pointer); other overlaps are not allowed.
//!
//! Memory: 16 bytes per access (4 f32 or 8 f16/bf16), then the last `n % 4` (f32) or `n % 8`
//! (f16/bf16) elements one by one, spread over the grid as [`crate::flat`] describes; buffers must
//! be 16-byte aligned (device allocations are).
//!
//! Launch: workgroups of 256 work-items (the kernels are compiled for that block), at least
//! `n.div_ceil(PACK * 256 * CHUNKS)` of them ([`crate::flat::CHUNKS`]), no dynamic LDS.
//!
//! Activations (x in f32): `relu(x) = x < 0 ? 0 : x` (NaN stays NaN); `silu(x) = x / (1 + e^-x)`;
//! `gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, evaluated as
//! `x / (1 + e^(-2 u))` with `u` the tanh argument (the same function, without cancellation).
//! `e^x` is `iron_intrinsics::fmath::exp` (within 2 ulp); divisions are correctly rounded.
//! `silu(-inf)` and `gelu(-inf)` are NaN (`-inf / inf`), as `x * sigmoid(x)` gives in f32.

use crate::dtype::{Float, narrow, widen};
use crate::dtype::{bf16, f16};
use crate::flat::over_chunks;
use iron_intrinsics::fmath::exp;
use iron_intrinsics::kernel;
use iron_intrinsics::math::mul_add;

/// `y[i] = f(x[i])` for `i < n`, in f32; `V` is [`Float::PACK`] (a const argument, as Rust
/// cannot yet derive it from `T` there).
#[inline(always)]
fn map1<T: Float, const V: usize>(x: *const T, y: *mut T, n: u32, f: impl Fn(f32) -> f32) {
    const { assert!(V == T::PACK) };
    over_chunks::<V, _>(
        n,
        // SAFETY: a whole chunk of n; both buffers hold n 16-byte-aligned elements.
        |k| unsafe { k.load(x) },
        // SAFETY: as above.
        |k, u| unsafe { k.store(y, narrow(widen(u).map(&f))) },
        // SAFETY: i < n.
        |i| unsafe { *y.add(i) = T::round_from_f32(f((*x.add(i)).into_f32())) },
    );
}

/// `c[i] = f(a[i], b[i])` for `i < n`, in f32; `V` is [`Float::PACK`].
#[inline(always)]
fn map2<T: Float, const V: usize>(
    a: *const T,
    b: *const T,
    c: *mut T,
    n: u32,
    f: impl Fn(f32, f32) -> f32,
) {
    const { assert!(V == T::PACK) };
    over_chunks::<V, _>(
        n,
        // SAFETY: a whole chunk of n; all buffers hold n 16-byte-aligned elements.
        |k| unsafe { (k.load(a), k.load(b)) },
        |k, (u, v)| {
            let (u, v) = (widen(u), widen(v));
            let r: [f32; V] = core::array::from_fn(|l| f(u[l], v[l]));
            // SAFETY: as above.
            unsafe { k.store(c, narrow(r)) };
        },
        // SAFETY: i < n.
        |i| unsafe {
            *c.add(i) = T::round_from_f32(f((*a.add(i)).into_f32(), (*b.add(i)).into_f32()))
        },
    );
}

/// `d[i] = f(a[i], b[i], c[i])` for `i < n`, in f32; `V` is [`Float::PACK`].
#[inline(always)]
fn map3<T: Float, const V: usize>(
    a: *const T,
    b: *const T,
    c: *const T,
    d: *mut T,
    n: u32,
    f: impl Fn(f32, f32, f32) -> f32,
) {
    const { assert!(V == T::PACK) };
    over_chunks::<V, _>(
        n,
        // SAFETY: a whole chunk of n; all buffers hold n 16-byte-aligned elements.
        |k| unsafe { (k.load(a), k.load(b), k.load(c)) },
        |k, (u, v, w)| {
            let (u, v, w) = (widen(u), widen(v), widen(w));
            let r: [f32; V] = core::array::from_fn(|l| f(u[l], v[l], w[l]));
            // SAFETY: as above.
            unsafe { k.store(d, narrow(r)) };
        },
        |i| {
            // SAFETY: i < n.
            let (u, v, w) = unsafe {
                (
                    (*a.add(i)).into_f32(),
                    (*b.add(i)).into_f32(),
                    (*c.add(i)).into_f32(),
                )
            };
            // SAFETY: i < n.
            unsafe { *d.add(i) = T::round_from_f32(f(u, v, w)) };
        },
    );
}

/// `max(x, 0)`, keeping NaN.
#[inline(always)]
fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// `x * sigmoid(x)`.
#[inline(always)]
fn silu(x: f32) -> f32 {
    x / (1.0 + exp(-x))
}

/// `sqrt(2 / pi)`.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;

/// GELU, tanh form: `0.5 x (1 + tanh(u)) = x * sigmoid(2 u)`, `u = sqrt(2/pi) (x + 0.044715 x^3)`.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let u = SQRT_2_OVER_PI * x * mul_add(0.044_715 * x, x, 1.0);
    x / (1.0 + exp(-2.0 * u))
}

/// `c = a + b`, f16.
#[kernel(block = 256)]
pub fn add_f16(a: *const f16, b: *const f16, c: *mut f16, n: u32) {
    map2::<f16, 8>(a, b, c, n, |x, y| x + y);
}

/// `c = a + b`, bf16.
#[kernel(block = 256)]
pub fn add_bf16(a: *const bf16, b: *const bf16, c: *mut bf16, n: u32) {
    map2::<bf16, 8>(a, b, c, n, |x, y| x + y);
}

/// `c = a * b`, f32.
#[kernel(block = 256)]
pub fn mul_f32(a: *const f32, b: *const f32, c: *mut f32, n: u32) {
    map2::<f32, 4>(a, b, c, n, |x, y| x * y);
}

/// `c = a * b`, f16.
#[kernel(block = 256)]
pub fn mul_f16(a: *const f16, b: *const f16, c: *mut f16, n: u32) {
    map2::<f16, 8>(a, b, c, n, |x, y| x * y);
}

/// `c = a * b`, bf16.
#[kernel(block = 256)]
pub fn mul_bf16(a: *const bf16, b: *const bf16, c: *mut bf16, n: u32) {
    map2::<bf16, 8>(a, b, c, n, |x, y| x * y);
}

/// `d = a * b + c` with one f32 rounding (fused), f32.
#[kernel(block = 256)]
pub fn fma_f32(a: *const f32, b: *const f32, c: *const f32, d: *mut f32, n: u32) {
    map3::<f32, 4>(a, b, c, d, n, mul_add);
}

/// `d = a * b + c`, fused in f32, then rounded to f16.
#[kernel(block = 256)]
pub fn fma_f16(a: *const f16, b: *const f16, c: *const f16, d: *mut f16, n: u32) {
    map3::<f16, 8>(a, b, c, d, n, mul_add);
}

/// `d = a * b + c`, fused in f32, then rounded to bf16.
#[kernel(block = 256)]
pub fn fma_bf16(a: *const bf16, b: *const bf16, c: *const bf16, d: *mut bf16, n: u32) {
    map3::<bf16, 8>(a, b, c, d, n, mul_add);
}

/// `y = alpha * x`, f32.
#[kernel(block = 256)]
pub fn scale_f32(alpha: f32, x: *const f32, y: *mut f32, n: u32) {
    map1::<f32, 4>(x, y, n, |v| alpha * v);
}

/// `y = alpha * x` (alpha in f32), f16.
#[kernel(block = 256)]
pub fn scale_f16(alpha: f32, x: *const f16, y: *mut f16, n: u32) {
    map1::<f16, 8>(x, y, n, |v| alpha * v);
}

/// `y = alpha * x` (alpha in f32), bf16.
#[kernel(block = 256)]
pub fn scale_bf16(alpha: f32, x: *const bf16, y: *mut bf16, n: u32) {
    map1::<bf16, 8>(x, y, n, |v| alpha * v);
}

/// `y = relu(x)`, f32.
#[kernel(block = 256)]
pub fn relu_f32(x: *const f32, y: *mut f32, n: u32) {
    map1::<f32, 4>(x, y, n, relu);
}

/// `y = relu(x)`, f16.
#[kernel(block = 256)]
pub fn relu_f16(x: *const f16, y: *mut f16, n: u32) {
    map1::<f16, 8>(x, y, n, relu);
}

/// `y = relu(x)`, bf16.
#[kernel(block = 256)]
pub fn relu_bf16(x: *const bf16, y: *mut bf16, n: u32) {
    map1::<bf16, 8>(x, y, n, relu);
}

/// `y = silu(x)`, f32.
#[kernel(block = 256)]
pub fn silu_f32(x: *const f32, y: *mut f32, n: u32) {
    map1::<f32, 4>(x, y, n, silu);
}

/// `y = silu(x)`, f16.
#[kernel(block = 256)]
pub fn silu_f16(x: *const f16, y: *mut f16, n: u32) {
    map1::<f16, 8>(x, y, n, silu);
}

/// `y = silu(x)`, bf16.
#[kernel(block = 256)]
pub fn silu_bf16(x: *const bf16, y: *mut bf16, n: u32) {
    map1::<bf16, 8>(x, y, n, silu);
}

/// `y = gelu(x)` (tanh form), f32.
#[kernel(block = 256)]
pub fn gelu_f32(x: *const f32, y: *mut f32, n: u32) {
    map1::<f32, 4>(x, y, n, gelu);
}

/// `y = gelu(x)` (tanh form), f16.
#[kernel(block = 256)]
pub fn gelu_f16(x: *const f16, y: *mut f16, n: u32) {
    map1::<f16, 8>(x, y, n, gelu);
}

/// `y = gelu(x)` (tanh form), bf16.
#[kernel(block = 256)]
pub fn gelu_bf16(x: *const bf16, y: *mut bf16, n: u32) {
    map1::<bf16, 8>(x, y, n, gelu);
}
