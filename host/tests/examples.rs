//! The examples (`host/examples`) stay runnable and true: every example runs on the emulator
//! (and on a GPU when there is one) and must match its CPU result.
//!
//! The runs need the kernel library's device build: `cargo xtask test` makes it and runs these
//! tests.

#![allow(
    clippy::duplicate_mod,
    reason = "each example module brings its own `common`, as each example binary does"
)]

// Each example is compiled here as a module, so that its `run` is called directly; its `main`
// belongs to the example binary and is not called here.
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/gemm.rs"]
mod gemm;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/mxfp4_qgemv.rs"]
mod mxfp4_qgemv;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/rmsnorm.rs"]
mod rmsnorm;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/vector_add.rs"]
mod vector_add;

use iron::Device;
use iron::emulator::Emulator;

/// Runs the example module `$example` on `$device` and fails unless it matches the CPU (each
/// example carries its own copy of `common`, so their reports are different types).
macro_rules! check_example {
    ($device:expr, $example:ident) => {{
        let name = stringify!($example);
        let report = $example::run($device).unwrap_or_else(|e| panic!("example {name}: {e}"));
        println!("{name}: {report}");
        assert!(report.matched(), "example {name}: {report}");
    }};
}

/// Runs every example on `device`.
fn run_examples(device: &Device) {
    check_example!(device, vector_add);
    check_example!(device, rmsnorm);
    check_example!(device, mxfp4_qgemv);
    check_example!(device, gemm);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_example_matches_the_cpu_on_the_emulated_gfx950() {
    run_examples(&Emulator::new("gfx950").unwrap().device());
}

#[test]
#[ignore = "needs an AMD GPU and the device build: run `cargo xtask test`"]
fn gpu_every_example_matches_the_cpu() {
    match Device::hip(0) {
        Ok(device) => run_examples(&device),
        Err(e) => println!("skipped: {e}"),
    }
}
