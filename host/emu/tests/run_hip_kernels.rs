//! The HIP C++ test kernels (`tests/data/src/hip_kernels.hip`, built by clang-22) on every CDNA
//! target, compared with host Rust computations (the checks are in `common/hip_kernels.rs`).
mod common;

use common::hip_kernels;
use common::variant::{CDNA, CDNA_PRELOAD};

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn saxpy_fuses() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::saxpy_fuses(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn reduce_shared_uses_static_lds() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::reduce_shared_uses_static_lds(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn shuffles_follow_dpp_swizzle_and_permute_rules() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::shuffles_follow_dpp_swizzle_and_permute_rules(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn double_math() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::double_math(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn packed_halves() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::packed_halves(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn integer_ops() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::integer_ops(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn float_functions() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::float_functions(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn global_atomics() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::global_atomics(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn lds_atomics_and_return_values() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::lds_atomics_and_return_values(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wide_lds_accesses() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::wide_lds_accesses(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn local_arrays_use_scratch() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::local_arrays_use_scratch(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn three_dimensional_grid() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::three_dimensional_grid(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn wave_votes() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::wave_votes(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn int64_ops() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::int64_ops(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn byte_arithmetic() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::byte_arithmetic(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn packed_f32_math() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::packed_f32_math(v);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn matrix_vector_with_shuffle_reduction() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        hip_kernels::matrix_vector_with_shuffle_reduction(v);
    }
}

/// Runs `saxpy` from `object` (n = 300, 2 workgroups of 256), traced; returns the descriptor, the
/// entry address, the address each wave executed first, every executed address, the counters
/// and the output.
fn traced_saxpy(
    object: &str,
) -> (
    iron_emu::KernelDescriptor,
    u64,
    Vec<u64>,
    Vec<u64>,
    iron_emu::Counters,
    Vec<f32>,
) {
    let mut k = common::load(&common::data(object));
    let n = 300usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 20.0).collect();
    let y: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let px = k.upload(&common::bytes_of(&x));
    let py = k.upload(&common::bytes_of(&y));
    let (_, kd_addr, kd) = k.kernels.iter().find(|e| e.0 == "saxpy").unwrap().clone();
    let mut kernarg = common::Args::default()
        .f32(2.5)
        .ptr(px)
        .ptr(py)
        .u32(n as u32)
        .0;
    kernarg.resize(kernarg.len().max(kd.kernarg_size as usize), 0);
    let entry = kd_addr.wrapping_add(kd.kernel_code_entry_byte_offset as u64);
    let d = iron_emu::Dispatch {
        kernel_name: "saxpy",
        code: k.code,
        entry,
        descriptor: kd,
        kernarg: &kernarg,
        grid: [2, 1, 1],
        workgroup_size: [256, 1, 1],
        dynamic_lds: 0,
        buffers: None,
    };
    let mut first = std::collections::BTreeMap::new();
    let mut all = Vec::new();
    let counters = k
        .gpu
        .dispatch_traced(&d, &mut |e| {
            first.entry((e.workgroup, e.wave)).or_insert(e.pc);
            all.push(e.pc);
        })
        .unwrap();
    let out = common::from_bytes(&k.download(py, n * 4));
    let want: Vec<f32> = (0..n).map(|i| 2.5f32.mul_add(x[i], y[i])).collect();
    assert_eq!(out, want, "{object}");
    (kd, entry, first.into_values().collect(), all, counters, out)
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn preloaded_kernels_start_past_the_compatibility_prologue() {
    use iron_emu::InstructionClass::Smem;
    for (plain, preload) in CDNA.iter().zip(&CDNA_PRELOAD) {
        let (kd, entry, first, all, counters, _) =
            traced_saxpy(&format!("hip_kernels_{}.co", preload.name));
        // The build preloads saxpy's arguments (a, its padding, x, y, n: 7 dwords from dword 0).
        assert_eq!(kd.kernarg_preload & 0x7f, 7, "{}", preload.name);
        assert_eq!(kd.kernarg_preload >> 7, 0, "{}", preload.name);
        assert_eq!(first.len(), 8, "{}", preload.name);
        assert!(
            first.iter().all(|&pc| pc == entry + 256),
            "{}: waves start at {first:x?}, entry {entry:#x}",
            preload.name
        );
        assert!(
            all.iter().all(|&pc| pc >= entry + 256),
            "{}: the prologue ran",
            preload.name
        );
        // The prologue's s_loads are gone: saxpy's remaining body reads no kernarg memory.
        let (plain_kd, plain_entry, plain_first, _, plain_counters, _) =
            traced_saxpy(&format!("hip_kernels_{}.co", plain.name));
        assert_eq!(plain_kd.kernarg_preload, 0, "{}", plain.name);
        assert!(plain_first.iter().all(|&pc| pc == plain_entry));
        assert!(plain_counters.of(Smem) > 0, "{}", plain.name);
        assert_eq!(counters.of(Smem), 0, "{}", preload.name);
    }
}
