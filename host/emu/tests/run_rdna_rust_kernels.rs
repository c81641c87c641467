//! The Rust test kernels (`tests/data/rust`) on gfx1100 and gfx1201, in wave32 and wave64, with
//! seeded random inputs, compared with the same computation in host Rust (the checks are in
//! `common/rust_kernels.rs`).
mod common;

use common::rust_kernels;
use common::variant::RDNA;

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn fmath_matches_host_within_tolerance() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::fmath_matches_host_within_tolerance(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn dmath_divides_and_roots_in_double() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::dmath_divides_and_roots_in_double(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn loop_sum_hashes_strided_values() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::loop_sum_hashes_strided_values(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn atomics_accumulate_every_lane() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::atomics_accumulate_every_lane(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn lds_reduce_sums_each_workgroup() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::lds_reduce_sums_each_workgroup(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wave_ops_permute_and_vote() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::wave_ops_permute_and_vote(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wave_library_shuffles_and_reduces() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::wave_library_shuffles_and_reduces(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn i64_and_u32_division_match_rust() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::i64_and_u32_division_match_rust(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn half_math_rounds_like_f16() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::half_math_rounds_like_f16(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn conversions_saturate_like_rust() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::conversions_saturate_like_rust(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn slices_are_bounds_checked() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::slices_are_bounds_checked(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn grid2d_uses_two_dimensional_ids() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::grid2d_uses_two_dimensional_ids(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn dispatch_packet_and_ids_are_visible() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::dispatch_packet_and_ids_are_visible(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn byte_loads_sign_and_zero_extend() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::byte_loads_sign_and_zero_extend(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn stack_arrays_live_in_scratch() {
    for v in RDNA.iter().filter(|v| rust_kernels::built(v)) {
        rust_kernels::stack_arrays_live_in_scratch(v);
    }
}
