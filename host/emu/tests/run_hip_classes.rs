//! The instruction-class HIP kernels (`tests/data/src/hip_classes.hip`, built by clang-22) on every
//! build: CDNA (also with kernel arguments preloaded) and RDNA in wave32 and wave64, compared with
//! host computations, and each object checked for the instructions its kernels are there for (the
//! checks are in `common/hip_classes.rs`).
mod common;

use common::hip_classes::{self, Build};

/// Runs `check` on every build; each build's name goes to the test's output first, so that a
/// failed launch (whose error names the kernel only) shows which build it was.
fn each(check: fn(&Build)) {
    for b in hip_classes::builds() {
        eprintln!("build {}", b.name());
        check(&b);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn fmaak_and_fmamk_f32() {
    each(hip_classes::fmak_f32);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn fmaak_and_fmamk_f16() {
    each(hip_classes::fmak_f16);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn dpp_row_broadcast() {
    each(hip_classes::row_broadcast);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn buffer_loads_into_lds() {
    each(hip_classes::buffer_lds);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn global_loads_into_lds() {
    each(hip_classes::global_lds);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn fma_mix_with_constants() {
    each(hip_classes::fma_mix);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn packed_f16_with_inline_constants() {
    each(hip_classes::pk_f16_consts);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wave_index_within_the_workgroup() {
    each(hip_classes::wave_partials);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn flat_pointers_into_lds_and_scratch() {
    each(hip_classes::flat_apertures);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn scalar_float_on_kernel_arguments() {
    each(hip_classes::scalar_float);
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn objects_hold_the_targeted_instructions() {
    for b in hip_classes::builds() {
        for line in hip_classes::emits(&b) {
            println!("{line}");
        }
    }
}
