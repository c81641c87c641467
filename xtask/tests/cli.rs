//! `cargo xtask build` answers bad input with one clear line and a non-zero exit.

mod common;

use common::{assert_one_line_error, scratch_dir, xtask};
use std::process::Output;

/// `cargo xtask build --gfx gfx950` of the device crate `tests/fixtures/<name>`, into a scratch
/// directory.
fn build_fixture(name: &str) -> Output {
    let fixture = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let out_dir = scratch_dir("build", name);
    let out = xtask(&[
        "build",
        "--gfx",
        "gfx950",
        "--kernels",
        &fixture,
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&out_dir);
    out
}

#[test]
fn unknown_gfx_is_one_clear_line() {
    let out = xtask(&["build", "--gfx", "gfx9999"]);
    assert_one_line_error(
        &out,
        &["unknown gfx `gfx9999`: supported targets are gfx90a"],
    );
}

#[test]
fn wave32_on_cdna_is_one_clear_line() {
    let out = xtask(&["build", "--gfx", "gfx942", "--wave", "32"]);
    assert_one_line_error(&out, &["gfx942 is wave64 only"]);
}

#[test]
fn kernels_dir_without_a_crate_is_one_clear_line() {
    let out = xtask(&["build", "--gfx", "gfx950", "--kernels", "/nonexistent"]);
    assert_one_line_error(&out, &["has no Cargo.toml"]);
}

#[test]
#[ignore = "builds device code: run `cargo xtask test`"]
fn a_kernel_that_spills_fails_the_build() {
    let out = build_fixture("spill");
    assert_one_line_error(
        &out,
        &["kernel `private_histogram` on gfx950 (wave64) uses"],
    );
}

#[test]
#[ignore = "builds device code: run `cargo xtask test`"]
fn a_kernel_that_does_not_compile_fails_with_the_first_error() {
    let out = build_fixture("type-error");
    assert_one_line_error(
        &out,
        &["compiling type-error-fixture for gfx950 (wave64) failed:"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The first error as rustc rendered it, with its place in the source; the second counted.
    assert!(
        stderr.contains("error[E0308]: mismatched types"),
        "{stderr}"
    );
    assert!(stderr.contains("src/lib.rs:11:22"), "{stderr}");
    assert!(
        stderr.contains("let first: u64 = \"not a number\";"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("let second"),
        "only the first error: {stderr}"
    );
    assert!(stderr.contains("more error(s) follow it"), "{stderr}");
}

#[test]
#[ignore = "builds device code: run `cargo xtask test`"]
fn a_device_warning_shows_once_naming_its_crate() {
    let fixture = format!("{}/tests/fixtures/warning", env!("CARGO_MANIFEST_DIR"));
    let out_dir = scratch_dir("build", "warning");
    let out = xtask(&[
        "build",
        "--gfx",
        "gfx950,gfx1100",
        "--kernels",
        &fixture,
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&out_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Both targets warn; the build shows it once, with the crate it is in and where.
    let warning = "warning: unused variable: `forgotten` (in `warning-fixture`, GPU build)";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.contains("src/lib.rs:10:9"), "{stderr}");
}

#[test]
#[ignore = "builds device code: run `cargo xtask test`"]
fn another_crate_builds_beside_the_library_not_over_it() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/walkthrough/kernels");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        std::path::PathBuf::from,
    );
    let library = target.join("iron/kernels.bundle");
    let modified = |path: &std::path::Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let library_before = modified(&library);
    let out = xtask(&["build", "--gfx", "gfx950", "--kernels", fixture]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        modified(&library),
        library_before,
        "the library's bundle was rewritten"
    );
    let bundle = target.join("iron/walkthrough-kernels/kernels.bundle");
    assert!(bundle.is_file(), "no {}: {stderr}", bundle.display());
    assert!(
        stderr.contains("walkthrough-kernels/kernels.bundle"),
        "{stderr}"
    );
}
