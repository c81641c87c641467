//! `cargo xtask report` answers bad input with one clear line and a non-zero exit, before it
//! builds or runs anything.

use std::process::{Command, Output};

fn report(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("report")
        .args(args)
        .output()
        .expect("xtask runs")
}

fn assert_one_line_error(out: &Output, needle: &str) {
    assert!(!out.status.success(), "expected failure");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<_> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line expected, got:\n{stderr}");
    assert!(
        errors[0].contains(needle),
        "`{needle}` not in: {}",
        errors[0]
    );
}

#[test]
fn an_unknown_device_lists_the_known_ones() {
    let out = report(&["--device", "MI400", "--smoke"]);
    assert_one_line_error(&out, "unknown device `MI400`: known devices are MI210");
}

#[test]
fn a_device_of_another_gfx_is_refused() {
    let out = report(&["--device", "rx 9070 xt", "--gfx", "gfx942"]);
    assert_one_line_error(
        &out,
        "RX 9070 XT is a gfx1201 device: --gfx gfx942 does not match",
    );
}

#[test]
fn a_missing_build_names_the_file_and_the_fix() {
    let out = report(&["--gfx", "gfx950", "--smoke", "--artifacts", "/nonexistent"]);
    assert_one_line_error(&out, "/nonexistent/gfx950/kernels.co: build gfx950");
}

#[test]
fn an_unknown_gfx_is_refused() {
    let out = report(&["--gfx", "gfx9999", "--artifacts", "/nonexistent"]);
    assert_one_line_error(&out, "unknown gfx `gfx9999`");
}
