//! `cargo xtask build` answers bad input with one clear line and a non-zero exit.

mod common;

use common::{assert_one_line_error, xtask};

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
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spill");
    let out_dir = std::env::temp_dir().join(format!("iron-spill-{}", std::process::id()));
    let out = xtask(&[
        "build",
        "--gfx",
        "gfx950",
        "--kernels",
        fixture,
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert_one_line_error(
        &out,
        &["kernel `private_histogram` on gfx950 (wave64) uses"],
    );
}
