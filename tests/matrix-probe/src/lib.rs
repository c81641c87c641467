//! Matrix-core fragment probes: one single-wave kernel per matrix-core instruction type of
//! `iron_intrinsics::matrix` (CDNA's MFMAs, RDNA's WMMAs), each computing one tile `D = A B`
//! through `load_a`, `load_b`, the instruction and `store_d`. A test fixture, not a library:
//! `cargo xtask test` builds it for the emulated targets and `tests/tests/emu_matrix_fragments.rs`
//! runs every kernel on the emulator against an f64 matmul, which checks the documented lane
//! layouts end to end.
//!
//! Every kernel takes its tiles K-contiguous and dense: A `M x K` as rows of `K` codes, B `K x N`
//! as columns of `K` codes (leading dimension `K * bits / 8` bytes), D `M x N` f32 row-major. The
//! scaled kernels also take E8M0 scale codes, `K / 32` per row of A (`sa[row * K / 32 + block]`)
//! and per column of B (`sb[col * K / 32 + block]`). Each kernel exists only where its instruction
//! does (kernel names say shape and operand formats, A first).
#![no_std]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]
use iron_intrinsics::kernel;
use iron_intrinsics::matrix::*;

/// One plain matrix instruction `I` on dense K-contiguous tiles, stored to a dense row-major D.
///
/// # Safety
/// `a`, `b` and `d` must hold whole tiles of `I`'s shape, 16-byte aligned.
#[inline(always)]
unsafe fn run<I: Mma>(a: *const u8, b: *const u8, d: *mut f32) {
    // SAFETY: the tiles are whole and aligned, as the caller guarantees.
    unsafe {
        let fa = load_a::<I>(a, I::K * I::A_BITS / 8);
        let fb = load_b::<I>(b, I::K * I::B_BITS / 8);
        let acc = I::mma(fa, fb, <I::Acc as Accumulate>::zero());
        store_d::<I>(acc, d, I::N);
    }
}

/// One block-scaled MFMA of `I`: as [`run`], each lane passing the scale codes of its A row's and
/// B column's block ([`scale_block`]).
///
/// # Safety
/// As for [`run`], and `sa` (`sb`) must hold `K / 32` codes per row of A (column of B).
#[cfg(any(iron_gfx = "gfx950", not(target_arch = "amdgpu")))]
#[inline(always)]
unsafe fn run_scaled<I: ScaledMma>(
    a: *const u8,
    b: *const u8,
    sa: *const u8,
    sb: *const u8,
    d: *mut f32,
) {
    // SAFETY: the tiles and scale arrays are whole and aligned, as the caller guarantees.
    unsafe {
        let lane = iron_intrinsics::id::lane_id();
        let fa = load_a::<I>(a, I::K * I::A_BITS / 8);
        let fb = load_b::<I>(b, I::K * I::B_BITS / 8);
        let blocks = I::K / 32;
        let s_a = *sa.add((a_row::<I>(lane) * blocks + scale_block::<I>(lane)) as usize);
        let s_b = *sb.add((b_col::<I>(lane) * blocks + scale_block::<I>(lane)) as usize);
        let acc = I::mma(fa, fb, <I::Acc as Accumulate>::zero(), s_a, s_b);
        store_d::<I>(acc, d, I::N);
    }
}

/// Declares a plain probe kernel `$name` for instruction `$ty`, built where `$cfg` holds.
macro_rules! probe {
    ($(#[doc = $doc:literal])* $name:ident, $cfg:meta, $ty:ty) => {
        $(#[doc = $doc])*
        #[cfg(any(not(target_arch = "amdgpu"), $cfg))]
        #[kernel(max_threads = 64)]
        pub fn $name(a: *const u8, b: *const u8, d: *mut f32) {
            // SAFETY: the host passes whole, aligned tiles of the instruction's shape.
            unsafe { run::<$ty>(a, b, d) }
        }
    };
}

/// Declares a block-scaled probe kernel `$name` for instruction `$ty` (gfx950 only).
macro_rules! probe_scaled {
    ($(#[doc = $doc:literal])* $name:ident, $ty:ty) => {
        $(#[doc = $doc])*
        #[cfg(any(not(target_arch = "amdgpu"), iron_gfx = "gfx950"))]
        #[kernel(max_threads = 64)]
        pub fn $name(a: *const u8, b: *const u8, sa: *const u8, sb: *const u8, d: *mut f32) {
            // SAFETY: the host passes whole, aligned tiles and scale arrays.
            unsafe { run_scaled::<$ty>(a, b, sa, sb, d) }
        }
    };
}

probe!(
    /// `v_mfma_f32_16x16x16_f16`: f16 A 16x16, B 16x16 (gfx90a, gfx942, gfx950).
    p16x16x16f16, iron_matrix = "mfma", MfmaF32_16x16x16F16
);
probe!(
    /// `v_mfma_f32_16x16x16_bf16`: bf16 A 16x16, B 16x16 (gfx90a, gfx942, gfx950).
    p16x16x16bf16, iron_matrix = "mfma", MfmaF32_16x16x16Bf16
);
probe!(
    /// `v_mfma_f32_32x32x8_f16`: f16 A 32x8, B 8x32 (gfx90a, gfx942, gfx950).
    p32x32x8f16, iron_matrix = "mfma", MfmaF32_32x32x8F16
);
probe!(
    /// `v_mfma_f32_32x32x8_bf16`: bf16 A 32x8, B 8x32 (gfx90a, gfx942, gfx950).
    p32x32x8bf16, iron_matrix = "mfma", MfmaF32_32x32x8Bf16
);
probe!(
    /// `v_mfma_f32_16x16x32_f16`: f16 A 16x32, B 32x16 (gfx950).
    p16x16x32f16, iron_gfx = "gfx950", MfmaF32_16x16x32F16
);
probe!(
    /// `v_mfma_f32_16x16x32_bf16`: bf16 A 16x32, B 32x16 (gfx950).
    p16x16x32bf16, iron_gfx = "gfx950", MfmaF32_16x16x32Bf16
);
probe!(
    /// `v_mfma_f32_32x32x16_f16`: f16 A 32x16, B 16x32 (gfx950).
    p32x32x16f16, iron_gfx = "gfx950", MfmaF32_32x32x16F16
);
probe!(
    /// `v_mfma_f32_32x32x16_bf16`: bf16 A 32x16, B 16x32 (gfx950).
    p32x32x16bf16, iron_gfx = "gfx950", MfmaF32_32x32x16Bf16
);
probe!(
    /// `v_mfma_f32_16x16x32_fp8_bf8`: FP8 (E4M3) A 16x32, BF8 (E5M2) B 32x16; FNUZ encodings on
    /// gfx942, OCP on gfx950.
    p16x16x32fp8bf8,
    any(iron_gfx = "gfx942", iron_gfx = "gfx950"),
    MfmaF32_16x16x32F8<Fp8, Bf8>
);
probe!(
    /// `v_mfma_f32_32x32x16_bf8_fp8`: BF8 (E5M2) A 32x16, FP8 (E4M3) B 16x32; FNUZ encodings on
    /// gfx942, OCP on gfx950.
    p32x32x16bf8fp8,
    any(iron_gfx = "gfx942", iron_gfx = "gfx950"),
    MfmaF32_32x32x16F8<Bf8, Fp8>
);
probe_scaled!(
    /// `v_mfma_scale_f32_16x16x128_f8f6f4`: FP8 E4M3 A 16x128, FP4 E2M1 B 128x16 (gfx950).
    s16x16x128fp8fp4, MfmaScaleF32_16x16x128F8F6F4<Fp8E4M3, Fp4E2M1>
);
probe_scaled!(
    /// `v_mfma_scale_f32_16x16x128_f8f6f4`: FP6 E2M3 A 16x128, FP8 E5M2 B 128x16 (gfx950).
    s16x16x128fp6bf8, MfmaScaleF32_16x16x128F8F6F4<Fp6E2M3, Fp8E5M2>
);
probe_scaled!(
    /// `v_mfma_scale_f32_32x32x64_f8f6f4`: FP4 E2M1 A 32x64, FP6 E3M2 B 64x32 (gfx950).
    s32x32x64fp4fp6, MfmaScaleF32_32x32x64F8F6F4<Fp4E2M1, Fp6E3M2>
);
probe_scaled!(
    /// `v_mfma_scale_f32_32x32x64_f8f6f4`: FP8 E4M3 A and B, 32x64 and 64x32 (gfx950).
    s32x32x64fp8fp8, MfmaScaleF32_32x32x64F8F6F4<Fp8E4M3, Fp8E4M3>
);
probe!(
    /// `v_wmma_f32_16x16x16_f16`: f16 A 16x16, B 16x16 (gfx1100, gfx1201, either wave size).
    w16x16x16f16, iron_matrix = "wmma", WmmaF32_16x16x16F16
);
probe!(
    /// `v_wmma_f32_16x16x16_bf16`: bf16 A 16x16, B 16x16 (gfx1100, gfx1201, either wave size).
    w16x16x16bf16, iron_matrix = "wmma", WmmaF32_16x16x16Bf16
);
probe!(
    /// `v_wmma_f32_16x16x16_fp8_fp8`: OCP E4M3 A and B, 16x16 (gfx1201).
    w16x16x16fp8fp8, iron_gfx = "gfx1201", WmmaF32_16x16x16F8<Fp8, Fp8>
);
probe!(
    /// `v_wmma_f32_16x16x16_bf8_fp8`: OCP E5M2 A, E4M3 B, 16x16 (gfx1201).
    w16x16x16bf8fp8, iron_gfx = "gfx1201", WmmaF32_16x16x16F8<Bf8, Fp8>
);
