//! The HIP C++ test kernels (`tests/data/src/hip_kernels.hip`, built by clang-22) on gfx1100 and
//! gfx1201, in wave32 and wave64, compared with host Rust computations (the checks are in
//! `common/hip_kernels.rs`).
mod common;

use common::hip_kernels;
use common::variant::RDNA;

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn saxpy_fuses() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::saxpy_fuses(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn reduce_shared_uses_static_lds() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::reduce_shared_uses_static_lds(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn shuffles_follow_dpp_swizzle_and_permute_rules() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::shuffles_follow_dpp_swizzle_and_permute_rules(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn double_math() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::double_math(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn packed_halves() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::packed_halves(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn integer_ops() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::integer_ops(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn float_functions() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::float_functions(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn global_atomics() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::global_atomics(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn lds_atomics_and_return_values() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::lds_atomics_and_return_values(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wide_lds_accesses() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::wide_lds_accesses(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn local_arrays_use_scratch() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::local_arrays_use_scratch(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn three_dimensional_grid() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::three_dimensional_grid(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wave_votes() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::wave_votes(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn int64_ops() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::int64_ops(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn byte_arithmetic() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::byte_arithmetic(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn packed_f32_math() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::packed_f32_math(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn matrix_vector_with_shuffle_reduction() {
    for v in RDNA.iter().filter(|v| hip_kernels::built(v)) {
        hip_kernels::matrix_vector_with_shuffle_reduction(v);
    }
}
