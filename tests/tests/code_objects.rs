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
