//! Floating-point operations whose rounding kernels must choose explicitly.

/// `a * b + c` with one rounding (a fused multiply-add, `v_fma_f32`/`v_fmac_f32`).
///
/// Rust never contracts `a * b + c` into an FMA by itself; kernels that want the fused form (one
/// rounding, one instruction) say so with this.
#[inline(always)]
pub fn mul_add(a: f32, b: f32, c: f32) -> f32 {
    crate::arch::float::mul_add(a, b, c)
}
