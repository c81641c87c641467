//! Checks on the code objects `cargo xtask build` produced: the right machine per gfx, wave size,
//! declared launch bounds, zero scratch, code object v5, and a well-formed bundle.
//!
//! These need the build's outputs, so they are ignored under plain `cargo test` and run by
//! `cargo xtask test`.

use iron::code_object::{Bundle, CodeObject, TargetId};
use iron_tests::Artifacts;

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_code_object_targets_its_gfx_with_its_wave_size() {
    let artifacts = Artifacts::load();
    assert!(
        artifacts.targets.len() >= 5,
        "the test build covers every gfx"
    );
    for t in &artifacts.targets {
        let bytes = std::fs::read(&t.code_object).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        assert_eq!(co.target().processor, t.gfx, "{}: e_flags machine", t.gfx);
        assert_eq!(co.version().number(), 5, "{}: code object v5", t.gfx);
        let expected_wave = if t.gfx.starts_with("gfx9") {
            64
        } else {
            t.wave
        };
        assert_eq!(t.wave, expected_wave, "{}: CDNA is wave64", t.gfx);
        assert!(!co.kernels().is_empty(), "{}: no kernels", t.gfx);
        for k in co.kernels() {
            assert_eq!(
                k.metadata().wavefront_size,
                t.wave,
                "{} {}",
                t.gfx,
                k.name()
            );
            assert_eq!(
                k.wave_size(),
                t.wave,
                "{} {}: descriptor wave32 bit",
                t.gfx,
                k.name()
            );
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_kernel_has_its_declared_bounds_and_no_scratch() {
    let artifacts = Artifacts::load();
    for t in &artifacts.targets {
        let bytes = std::fs::read(&t.code_object).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        assert_eq!(co.kernels().len(), t.kernels.len(), "{}", t.gfx);
        for row in &t.kernels {
            let k = co.kernel(&row.name).unwrap();
            let meta = k.metadata();
            assert!(row.declared_max_threads > 0, "{} {}", t.gfx, row.name);
            assert_eq!(
                meta.max_flat_workgroup_size, row.declared_max_threads,
                "{} {}: .max_flat_workgroup_size",
                t.gfx, row.name
            );
            if !row.allow_scratch {
                assert_eq!(meta.private_segment_fixed_size, 0, "{} {}", t.gfx, row.name);
                assert_eq!(
                    meta.vgpr_spill_count.unwrap_or(0),
                    0,
                    "{} {}",
                    t.gfx,
                    row.name
                );
                assert_eq!(
                    meta.sgpr_spill_count.unwrap_or(0),
                    0,
                    "{} {}",
                    t.gfx,
                    row.name
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn host_declarations_match_the_code_objects() {
    use iron_kernels::{elementwise, reduce};
    let artifacts = Artifacts::load();
    let decls = [
        (elementwise::fill_u32.name, elementwise::fill_u32.bounds),
        (elementwise::copy_u32.name, elementwise::copy_u32.bounds),
        (elementwise::add_f32.name, elementwise::add_f32.bounds),
        (elementwise::saxpy_f32.name, elementwise::saxpy_f32.bounds),
        (reduce::sum_f32.name, reduce::sum_f32.bounds),
    ];
    for t in &artifacts.targets {
        let bytes = std::fs::read(&t.code_object).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        for (name, bounds) in decls {
            let k = co.kernel(name).unwrap_or_else(|e| panic!("{}: {e}", t.gfx));
            assert_eq!(
                k.metadata().max_flat_workgroup_size,
                bounds.max_threads,
                "{name}"
            );
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_bundle_holds_every_gfx_and_selects_by_target() {
    let artifacts = Artifacts::load();
    let bytes = std::fs::read(artifacts.dir.join("kernels.bundle")).unwrap();
    let bundle = Bundle::parse(&bytes).unwrap();
    for t in &artifacts.targets {
        let entry = bundle.select(&TargetId::new(&t.gfx)).unwrap();
        let co = CodeObject::parse(&entry.data).unwrap();
        assert_eq!(co.target().processor, t.gfx);
        if t.wave == if t.gfx.starts_with("gfx9") { 64 } else { 32 } {
            assert_eq!(
                entry.data,
                std::fs::read(&t.code_object).unwrap(),
                "{}",
                t.gfx
            );
        }
    }
    let missing = bundle
        .select(&TargetId::new("gfx1030"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("gfx1030"), "{missing}");
}

/// On gfx1100 and gfx1201 a workgroup in WGP mode spans two CUs, each with its own L0 cache: a
/// workgroup barrier makes global memory visible across it only with the acquire that
/// invalidates L0 (`buffer_gl0_inv`, gfx12 `global_inv scope:SCOPE_SE`) after the barrier and
/// before the next memory access (LLVM AMDGPUUsage, the GFX10+ memory model). Every barrier of
/// every RDNA kernel is checked.
#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn rdna_workgroup_barriers_invalidate_l0_before_the_next_memory_access() {
    use iron_emu::{Target, WaveSize, rdna};
    let artifacts = Artifacts::load();
    let mut barriers = 0;
    for t in artifacts
        .targets
        .iter()
        .filter(|t| t.gfx.starts_with("gfx1"))
    {
        let target = Target::from_name(&t.gfx).unwrap();
        let wave = if t.wave == 64 {
            WaveSize::Wave64
        } else {
            WaveSize::Wave32
        };
        let (barrier, invalidate) = if target == Target::Gfx1201 {
            ("s_barrier_wait", "global_inv scope:SCOPE_SE")
        } else {
            ("s_barrier", "buffer_gl0_inv")
        };
        let bytes = std::fs::read(&t.code_object).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        // COMPUTE_PGM_RSRC1 bit 29: WGP_MODE.
        assert!(
            co.kernels()
                .iter()
                .all(|k| k.descriptor().compute_pgm_rsrc1 >> 29 & 1 == 1),
            "{}: the check assumes WGP mode",
            t.gfx
        );
        for k in co.kernels() {
            let words: Vec<u32> = k
                .code()
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let mut texts = Vec::new();
            let mut at = 0;
            while at < words.len() {
                let Ok(i) = rdna::decode(target, wave, &words[at..]) else {
                    break;
                };
                texts.push(rdna::disassemble(target, &i));
                at += usize::from(i.len) / 4;
            }
            for (n, text) in texts.iter().enumerate() {
                if text.split_whitespace().next() != Some(barrier) {
                    continue;
                }
                barriers += 1;
                let next = texts[n + 1..]
                    .iter()
                    .find(|s| {
                        s.starts_with(invalidate)
                            || ["global_", "flat_", "buffer_", "scratch_", "ds_", "s_branch"]
                                .iter()
                                .chain(&["s_cbranch", "s_endpgm"])
                                .any(|p| s.starts_with(p))
                    })
                    .map_or("the end of the kernel", String::as_str);
                assert!(
                    next.starts_with(invalidate),
                    "{} {}: `{text}` (instruction {n}) is followed by `{next}` before `{invalidate}`",
                    t.gfx,
                    k.name()
                );
            }
        }
    }
    assert!(barriers > 100, "{barriers} barriers found");
}
