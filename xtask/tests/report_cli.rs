//! `cargo xtask report` answers bad input with one clear line and a non-zero exit, before it
//! builds or runs anything.

mod common;

use common::{assert_one_line_error, xtask};
use std::process::Output;

fn report(args: &[&str]) -> Output {
    xtask(&[&["report"], args].concat())
}

#[test]
fn an_unknown_device_lists_the_known_ones() {
    let out = report(&["--device", "MI400", "--smoke"]);
    assert_one_line_error(&out, &["unknown device `MI400`: known devices are MI210"]);
}

#[test]
fn a_device_of_another_gfx_is_refused() {
    let out = report(&["--device", "rx 9070 xt", "--gfx", "gfx942"]);
    assert_one_line_error(
        &out,
        &["RX 9070 XT is a gfx1201 device: --gfx gfx942 does not match"],
    );
}

#[test]
fn a_missing_build_names_the_file_and_the_fix() {
    let out = report(&["--gfx", "gfx950", "--smoke", "--artifacts", "/nonexistent"]);
    assert_one_line_error(&out, &["/nonexistent/gfx950/kernels.co: build gfx950"]);
}

#[test]
fn an_unknown_gfx_is_refused() {
    let out = report(&["--gfx", "gfx9999", "--artifacts", "/nonexistent"]);
    assert_one_line_error(&out, &["unknown gfx `gfx9999`"]);
}
