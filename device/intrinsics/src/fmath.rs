//! Elementary functions for kernels (there is no libm on the GPU), in f32: `exp`, `exp2`, `log2`,
//! `sqrt` and `sin_cos`, `exp_via_exp2`, a cheaper `exp` for arguments near 0, and `exp2_normal`,
//! the hardware's `2^x` without subnormal results.
//!
//! `exp(x)` reduces its argument to `2^n * 2^f` with `n` an integer and `|f| <= 0.5`, carrying
//! the product `x * log2(e)` as a pair of f32 (the low part by FMA), evaluates `2^f` with the
//! hardware `v_exp_f32` and scales by `2^n` with `v_ldexp_f32` (one rounding, subnormal results
//! included). About a dozen instructions. Accuracy: with a correctly rounded `2^f` the result is
//! within 0.82 ulp; with `v_exp_f32` within 1 ulp of it (AMD's documented accuracy) within
//! 1.65 ulp, measured on a model of these exact steps over 4e7 arguments: "within 2 ulp".

crate::arch::gpu_extern! { "C" {
    /// `v_exp_f32`: `2^x`, without LLVM's range handling (subnormal results flush to 0).
    #[link_name = "llvm.amdgcn.exp2.f32"]
    fn hardware_exp2(x: f32) -> f32;
    /// `v_ldexp_f32`: `x * 2^n`, rounded once (overflow to infinity, underflow to subnormals or 0).
    #[link_name = "llvm.ldexp.f32.i32"]
    fn ldexp(x: f32, n: i32) -> f32;
    /// `2^x` as LLVM lowers it accurately: `v_exp_f32` (1 ulp, as AMDGPUUsage documents), with
    /// the input and result scaled for results below 2^-126, which the instruction flushes.
    #[link_name = "llvm.exp2.f32"]
    fn llvm_exp2(x: f32) -> f32;
    /// `v_log_f32`: `log2(x)`, without LLVM's subnormal handling (1 ulp for normal inputs).
    #[link_name = "llvm.amdgcn.log.f32"]
    fn hardware_log2(x: f32) -> f32;
}}

/// `log2(e)` rounded to f32.
const LOG2_E_HI: f32 = f32::from_bits(0x3FB8_AA3B);
/// `log2(e) - LOG2_E_HI`, rounded to f32.
const LOG2_E_LO: f32 = f32::from_bits(0x32A5_7060);
/// Below this, `exp` is 0 in f32 (`exp(-104) < 2^-150`, half the smallest subnormal).
const EXP_ZERO_BELOW: f32 = -104.0;
/// Above this, `exp` overflows f32 (`exp(89) > f32::MAX`).
const EXP_INFINITE_ABOVE: f32 = 89.0;

/// `e^x` in f32, within 2 ulp (see the module docs); `exp(-inf) = 0`, `exp(+inf) = +inf`,
/// `exp(NaN) = NaN`.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Clamping keeps the exponent small and maps the infinities to 0 and +inf; a NaN fails
    // `x >= EXP_ZERO_BELOW`, goes through the arithmetic as a number and is put back at the end.
    let clamped = if x >= EXP_ZERO_BELOW {
        if x <= EXP_INFINITE_ABOVE {
            x
        } else {
            EXP_INFINITE_ABOVE
        }
    } else {
        EXP_ZERO_BELOW
    };
    let hi = clamped * LOG2_E_HI;
    let lo = crate::math::mul_add(
        clamped,
        LOG2_E_LO,
        crate::math::mul_add(clamped, LOG2_E_HI, -hi),
    );
    let n = crate::arch::float::round_ties_even(hi);
    // hi - n is exact (n is the integer nearest hi); adding lo restores the bits hi lost.
    let f = (hi - n) + lo;
    // SAFETY: |clamped| <= 104, so n is an integer of magnitude at most 151.
    let n = unsafe { n.to_int_unchecked::<i32>() };
    // SAFETY: pure arithmetic with no preconditions.
    let result = unsafe { ldexp(hardware_exp2(f), n) };
    if x.is_nan() { x } else { result }
}

/// `e^x` in f32 as `2^(x log2(e))` through LLVM's accurate `exp2` (`v_exp_f32`, 1 ulp, subnormal
/// results included): the product's rounding adds a relative error of about `|x| 2^-24`, so the
/// result is within `|x| + 1` ulp, against [`exp`]'s 2 ulp, in about half the instructions. For
/// arguments of small magnitude, such as a softmax's `x - max`. `-inf` gives 0, `+inf` infinity,
/// NaN NaN.
#[inline(always)]
pub fn exp_via_exp2(x: f32) -> f32 {
    // SAFETY: pure arithmetic with no preconditions.
    unsafe { llvm_exp2(x * LOG2_E_HI) }
}

/// `2^x` in f32: the hardware `v_exp_f32` on the fraction `x - round(x)` (at most 1/2 in
/// magnitude, where it is accurate to 1 ulp), scaled by `2^round(x)` with `v_ldexp_f32`. Within
/// 1 ulp for results in the normal range; `exp2(0) = 1` exactly; underflow gives subnormals or 0,
/// overflow infinity; NaN stays NaN.
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    // Clamping keeps the integer part small (every result beyond is 0 or infinity anyway); NaN
    // fails the first comparison and is put back at the end.
    let clamped = if x >= -160.0 {
        if x <= 160.0 { x } else { 160.0 }
    } else {
        -160.0
    };
    let n = crate::arch::float::round_ties_even(clamped);
    // SAFETY: |n| <= 160.
    let integer = unsafe { n.to_int_unchecked::<i32>() };
    // SAFETY: pure arithmetic with no preconditions; clamped - n is exact and at most 1/2.
    let result = unsafe { ldexp(hardware_exp2(clamped - n), integer) };
    if x.is_nan() { x } else { result }
}

/// `2^x` in f32 with the hardware `v_exp_f32` alone: within 1 ulp where the result is a normal
/// f32, and 0 where it would be below `2^-126` (the instruction flushes subnormal results). One
/// instruction against [`exp2`]'s eight, for weights `2^(s - max)` of an online softmax, whose
/// largest term is 1: a weight below `2^-126` changes a sum of at least 1 by less than its
/// rounding. `-inf` gives 0, `+inf` infinity, NaN NaN.
#[inline(always)]
pub fn exp2_normal(x: f32) -> f32 {
    // SAFETY: pure arithmetic with no preconditions.
    unsafe { hardware_exp2(x) }
}

/// `log2(x)` in f32 for positive normal `x` (`x >= 2^-126`), with the hardware `v_log_f32`:
/// within 1 ulp. Subnormal inputs are not scaled first (the hardware may treat them as 0);
/// `log2(+inf) = +inf`, negative inputs and NaN give NaN.
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    // SAFETY: pure arithmetic with no preconditions.
    unsafe { hardware_log2(x) }
}

/// `pi / 2` as the sum of three f32 (`PI_2_A + PI_2_B + PI_2_C`, within 1.1e-23 of it): the
/// first is `pi / 2` rounded to f32, each next one the rounded remainder.
const PI_2_A: f32 = f32::from_bits(0x3FC9_0FDB);
/// The second part of `pi / 2` (about -4.37e-8).
const PI_2_B: f32 = f32::from_bits(0xB33B_BD2E);
/// The third part of `pi / 2` (about -1.72e-15).
const PI_2_C: f32 = f32::from_bits(0xA6F7_2CED);
/// `2 / pi` rounded to f32.
const TWO_OVER_PI: f32 = f32::from_bits(0x3F22_F983);

/// `sin(r)` for `|r| <= 1.3`: the Taylor polynomial to `r^13` (truncation below `4e-9`).
#[inline(always)]
fn sin_polynomial(r: f32) -> f32 {
    let r2 = r * r;
    let mut p = 1.0 / 6_227_020_800.0;
    p = crate::math::mul_add(p, r2, -1.0 / 39_916_800.0);
    p = crate::math::mul_add(p, r2, 1.0 / 362_880.0);
    p = crate::math::mul_add(p, r2, -1.0 / 5_040.0);
    p = crate::math::mul_add(p, r2, 1.0 / 120.0);
    p = crate::math::mul_add(p, r2, -1.0 / 6.0);
    crate::math::mul_add(r * r2, p, r)
}

/// `cos(r)` for `|r| <= 1.3`: the Taylor polynomial to `r^14` (truncation below `4e-10`).
#[inline(always)]
fn cos_polynomial(r: f32) -> f32 {
    let r2 = r * r;
    let mut p = -1.0 / 87_178_291_200.0;
    p = crate::math::mul_add(p, r2, 1.0 / 479_001_600.0);
    p = crate::math::mul_add(p, r2, -1.0 / 3_628_800.0);
    p = crate::math::mul_add(p, r2, 1.0 / 40_320.0);
    p = crate::math::mul_add(p, r2, -1.0 / 720.0);
    p = crate::math::mul_add(p, r2, 1.0 / 24.0);
    p = crate::math::mul_add(p, r2, -0.5);
    crate::math::mul_add(r2, p, 1.0)
}

/// `x - k pi/2` for the integer-valued `k`, with `pi/2` in three parts: the first step is
/// exact whenever the result is below 2 in magnitude, the second rounds once.
#[inline(always)]
fn subtract_quarter_turns(x: f32, k: f32) -> f32 {
    let r = crate::math::mul_add(-k, PI_2_A, x);
    let r = crate::math::mul_add(-k, PI_2_B, r);
    crate::math::mul_add(-k, PI_2_C, r)
}

/// `k mod 4` for an integer-valued f32 `k` (exact, also beyond 2^31); 0 for NaN.
#[inline(always)]
fn quadrant(k: f32) -> u32 {
    let q = k - 4.0 * crate::arch::float::floor(k * 0.25);
    if q.is_nan() {
        0
    } else {
        // SAFETY: q is 0, 1, 2 or 3.
        unsafe { q.to_int_unchecked::<u32>() }
    }
}

/// `(sin(x), cos(x))` in f32, with range reduction: `x = k pi/2 + r`, `k` the integer nearest
/// `x * 2/pi`, `r = x - k pi/2` computed with `pi/2` in three parts by fused multiply-adds, then
/// reduced once more by the integer nearest `r * 2/pi` (which corrects `k` when the f32 product
/// `x * 2/pi` was off by more than 1/2, as it is beyond 2^22); Taylor polynomials in `r` and the
/// quadrant `k mod 4` give the results.
///
/// Accuracy (absolute, the measure that matters for rotations): within `2^-22` (2.4e-7) of the
/// true values for `|x| < 2^22` (about 4.2e6), where the reduced argument is within `2^-24`
/// (the worst error measured on the emulator over 64 000 arguments: 1.4 x 2^-24); beyond, the reduction's second
/// step rounds a remainder of about `|x| 2^-23`, adding up to about `|x| * 2^-46` (measured:
/// 2.3 x `|x| 2^-47`; `2^-14` at `|x| = 2^32`). An infinite or NaN `x`
/// gives NaN.
#[inline(always)]
pub fn sin_cos(x: f32) -> (f32, f32) {
    let k = crate::arch::float::round_ties_even(x * TWO_OVER_PI);
    let r = subtract_quarter_turns(x, k);
    let k2 = crate::arch::float::round_ties_even(r * TWO_OVER_PI);
    let r = subtract_quarter_turns(r, k2);
    let (s, c) = (sin_polynomial(r), cos_polynomial(r));
    // Quadrant q turns (s, c) into (s, c), (c, -s), (-s, -c) or (-c, s): an odd q swaps the
    // two, q = 2 and 3 negate the sine and q = 1 and 2 the cosine. Selects and sign flips, not
    // the four-way branch a `match` on q compiles to.
    let q = quadrant(k) + quadrant(k2);
    let (s, c) = if q & 1 == 0 { (s, c) } else { (c, s) };
    // An infinite or NaN x needs no test: its reduced argument is NaN (inf - inf), and so are
    // both polynomials, whatever the quadrant.
    (
        f32::from_bits(s.to_bits() ^ ((q & 2) << 30)),
        f32::from_bits(c.to_bits() ^ (((q + 1) & 2) << 30)),
    )
}

/// The square root of `x`, correctly rounded (`sqrt(-0) = -0`, negative or NaN: NaN).
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    crate::arch::float::sqrt(x)
}
