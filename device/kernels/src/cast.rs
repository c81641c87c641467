//! Type conversions of flat arrays: f32 to and from f16 and bf16, and f32, f16 or bf16 to the
//! four FP8 formats (OCP E4M3/E5M2 and the FNUZ variants gfx942 uses).
//!
//! Kernels are named `cast_<from>_to_<to>` and take `(x: *const From, y: *mut To, n: u32)`, any
//! `n` (including 0). Every conversion rounds to nearest, ties to even:
//! - f32 to f16/bf16: overflow gives infinity, NaN stays NaN (quiet, same sign); f16 and bf16
//!   to f32 are exact.
//! - to FP8: saturating, through `iron-quant`'s encoders
//!   ([`iron_quant::ElementFormat::encode_from_f32_saturating`], the one source of truth the host
//!   packer uses too): finite overflow and infinities become `±MAX` (448 for E4M3FN, 57344 for
//!   E5M2 and E5M2FNUZ, 240 for E4M3FNUZ); NaN becomes the format's NaN (S.1111.111, S.11111.10,
//!   or 0x80 for FNUZ); FNUZ formats have no -0 (a negative value rounding to zero gives 0x00).
//!   f16 and bf16 inputs are widened to f32 first (exactly), so they round once.
//!
//! Memory: chunks of elements that fill 16 bytes on the narrower side (8 elements between f32 and
//! 16-bit types, 16 elements into FP8), moved with 16-byte loads and stores, then the last `n % 8`
//! or `n % 16` elements one by one, spread over the grid as [`crate::flat`] describes; buffers
//! must be 16-byte aligned.
//!
//! Launch: workgroups of 256 work-items (the kernels are compiled for that block), at least
//! `n.div_ceil(V * 256 * CHUNKS)` of them for `V` elements per chunk
//! ([`crate::flat::CHUNKS`]), no dynamic LDS.

use crate::dtype::{Float, narrow_in_pairs};
use crate::dtype::{bf16, f16};
use crate::flat::over_chunks;
use iron_intrinsics::kernel;
use iron_quant::{E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, ElementFormat};

/// `y[i] = f(x[i])` for `i < n`, `V` elements per chunk: `chunk` converts a chunk, `f` one
/// element.
#[inline(always)]
fn convert<I: Copy, O: Copy, const V: usize>(
    x: *const I,
    y: *mut O,
    n: u32,
    chunk: impl Fn([I; V]) -> [O; V],
    f: impl Fn(I) -> O,
) {
    over_chunks::<V, _>(
        n,
        // SAFETY: a whole chunk of n; both buffers hold n 16-byte-aligned elements.
        |k| unsafe { k.load(x) },
        // SAFETY: as above.
        |k, v| unsafe { k.store(y, chunk(v)) },
        // SAFETY: i < n.
        |i| unsafe { *y.add(i) = f(*x.add(i)) },
    );
}

/// [`convert`] one element at a time.
#[inline(always)]
fn convert_each<I: Copy, O: Copy, const V: usize>(
    x: *const I,
    y: *mut O,
    n: u32,
    f: impl Fn(I) -> O,
) {
    convert::<I, O, V>(x, y, n, |v| v.map(&f), &f);
}

/// f32, f16 or bf16 to the FP8 format `F`, saturating; 16 elements per chunk.
#[inline(always)]
fn to_fp8<T: Float, F: ElementFormat>(x: *const T, y: *mut u8, n: u32) {
    convert_each::<T, u8, 16>(x, y, n, |v| F::encode_from_f32_saturating(v.into_f32()));
}

/// f32 to f16.
#[kernel(block = 256)]
pub fn cast_f32_to_f16(x: *const f32, y: *mut f16, n: u32) {
    convert::<f32, f16, 8>(x, y, n, narrow_in_pairs, Float::round_from_f32);
}

/// f16 to f32 (exact).
#[kernel(block = 256)]
pub fn cast_f16_to_f32(x: *const f16, y: *mut f32, n: u32) {
    convert_each::<f16, f32, 8>(x, y, n, Float::into_f32);
}

/// f32 to bf16.
#[kernel(block = 256)]
pub fn cast_f32_to_bf16(x: *const f32, y: *mut bf16, n: u32) {
    convert::<f32, bf16, 8>(x, y, n, narrow_in_pairs, Float::round_from_f32);
}

/// bf16 to f32 (exact).
#[kernel(block = 256)]
pub fn cast_bf16_to_f32(x: *const bf16, y: *mut f32, n: u32) {
    convert_each::<bf16, f32, 8>(x, y, n, Float::into_f32);
}

/// f32 to FP8 E4M3FN (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_f32_to_fp8_e4m3fn(x: *const f32, y: *mut u8, n: u32) {
    to_fp8::<f32, E4M3Fn>(x, y, n);
}

/// f32 to FP8 E5M2 (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_f32_to_fp8_e5m2(x: *const f32, y: *mut u8, n: u32) {
    to_fp8::<f32, E5M2>(x, y, n);
}

/// f32 to FP8 E4M3FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_f32_to_fp8_e4m3fnuz(x: *const f32, y: *mut u8, n: u32) {
    to_fp8::<f32, E4M3Fnuz>(x, y, n);
}

/// f32 to FP8 E5M2FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_f32_to_fp8_e5m2fnuz(x: *const f32, y: *mut u8, n: u32) {
    to_fp8::<f32, E5M2Fnuz>(x, y, n);
}

/// f16 to FP8 E4M3FN (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_f16_to_fp8_e4m3fn(x: *const f16, y: *mut u8, n: u32) {
    to_fp8::<f16, E4M3Fn>(x, y, n);
}

/// f16 to FP8 E5M2 (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_f16_to_fp8_e5m2(x: *const f16, y: *mut u8, n: u32) {
    to_fp8::<f16, E5M2>(x, y, n);
}

/// f16 to FP8 E4M3FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_f16_to_fp8_e4m3fnuz(x: *const f16, y: *mut u8, n: u32) {
    to_fp8::<f16, E4M3Fnuz>(x, y, n);
}

/// f16 to FP8 E5M2FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_f16_to_fp8_e5m2fnuz(x: *const f16, y: *mut u8, n: u32) {
    to_fp8::<f16, E5M2Fnuz>(x, y, n);
}

/// bf16 to FP8 E4M3FN (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_bf16_to_fp8_e4m3fn(x: *const bf16, y: *mut u8, n: u32) {
    to_fp8::<bf16, E4M3Fn>(x, y, n);
}

/// bf16 to FP8 E5M2 (OCP), saturating.
#[kernel(block = 256)]
pub fn cast_bf16_to_fp8_e5m2(x: *const bf16, y: *mut u8, n: u32) {
    to_fp8::<bf16, E5M2>(x, y, n);
}

/// bf16 to FP8 E4M3FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_bf16_to_fp8_e4m3fnuz(x: *const bf16, y: *mut u8, n: u32) {
    to_fp8::<bf16, E4M3Fnuz>(x, y, n);
}

/// bf16 to FP8 E5M2FNUZ, saturating.
#[kernel(block = 256)]
pub fn cast_bf16_to_fp8_e5m2fnuz(x: *const bf16, y: *mut u8, n: u32) {
    to_fp8::<bf16, E5M2Fnuz>(x, y, n);
}
