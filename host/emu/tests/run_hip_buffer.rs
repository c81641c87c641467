//! The buffer-resource HIP kernels (`tests/data/src/hip_buffer.hip`, built by clang-22) on every
//! build: gfx90a, gfx942 and gfx950 (also with preloaded kernel arguments), and gfx1100 and
//! gfx1201 in wave32 and wave64, compared with host models (the checks are in
//! `common/hip_buffer.rs`).
mod common;

use common::hip_buffer;
use common::variant::{CDNA, CDNA_PRELOAD, RDNA, Variant};

/// Every build the buffer kernels run on.
fn variants() -> impl Iterator<Item = &'static Variant> {
    CDNA.iter()
        .chain(CDNA_PRELOAD.iter())
        .chain(RDNA.iter())
        .filter(|v| hip_buffer::built(v))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn raw_loads_read_zero_past_num_records() {
    for v in variants() {
        hip_buffer::raw_loads_read_zero_past_num_records(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn raw_stores_drop_what_is_past_num_records() {
    for v in variants() {
        hip_buffer::raw_stores_drop_what_is_past_num_records(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn atomics_return_old_values_and_skip_lanes_out_of_range() {
    for v in variants() {
        hip_buffer::atomics_return_old_values_and_skip_lanes_out_of_range(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn structured_accesses_check_the_record_index() {
    for v in variants() {
        hip_buffer::structured_accesses_check_the_record_index(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn rdna_objects_contain_the_buffer_instructions() {
    for v in RDNA.iter().filter(|v| hip_buffer::built(v)) {
        hip_buffer::rdna_objects_contain_the_buffer_instructions(v);
    }
}
