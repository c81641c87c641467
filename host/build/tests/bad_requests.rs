//! Requests `Kernels::build` refuses, each with one line saying what to change, before anything
//! compiles.

use iron_build::Kernels;
use std::path::Path;

fn error_of(kernels: Kernels) -> String {
    let error = kernels.build().expect_err("the request is refused");
    let text = error.to_string();
    assert_eq!(
        format!("{error:?}"),
        text,
        "Debug prints the message as it is"
    );
    assert!(!text.contains('\n'), "one line: {text}");
    text
}

#[test]
fn a_build_without_targets_names_how_to_give_them() {
    let e = error_of(Kernels::new("kernels"));
    assert!(e.starts_with("no gfx target given"), "{e}");
}

#[test]
fn an_unknown_gfx_or_wave_lists_what_exists() {
    let e = error_of(Kernels::new("kernels").gfx(["gfx950", "gfx9999"]));
    assert!(
        e.contains("unknown gfx `gfx9999`: supported targets are gfx90a"),
        "{e}"
    );
    let e = error_of(Kernels::new("kernels").gfx(["gfx942:w32"]));
    assert!(e.contains("gfx942 is wave64 only"), "{e}");
    let e = error_of(Kernels::new("kernels").gfx(["gfx1100"]).wave(16));
    assert!(e.contains("wave size 16 does not exist"), "{e}");
}

#[test]
fn a_directory_that_is_not_a_device_crate_is_named() {
    let e = error_of(Kernels::new("/nonexistent/kernels").gfx(["gfx950"]));
    assert!(e.contains("/nonexistent/kernels has no Cargo.toml"), "{e}");
    // A workspace's root, not one of its crates.
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/template");
    let e = error_of(Kernels::new(template).gfx(["gfx950"]));
    assert!(e.contains("defines no package (a workspace root?)"), "{e}");
}
