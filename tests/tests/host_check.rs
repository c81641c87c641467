//! Kernel bodies type-check on the host: `cargo check` of a kernel crate (no GPU build) reports
//! the errors in its kernels' bodies and in its generic kernels' instances, and passes on the
//! device probes, which use the whole vocabulary (every matrix instruction type, `print!`,
//! static LDS, atomics, wave operations, f16 and bf16).

use std::path::{Path, PathBuf};
use std::process::Output;

/// `cargo check` of the crate at `tests/<name>` (its own workspace), with the tests' target
/// directory.
fn check(name: &str) -> Output {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(name)
        .join("Cargo.toml");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-check");
    std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["check", "--quiet", "--color", "never", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        .output()
        .expect("cargo runs")
}

#[test]
fn errors_in_kernel_bodies_and_instances_fail_the_host_check() {
    let out = check("host-check-errors");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the check passed:\n{stderr}");
    // The body's type error, where it is.
    assert!(
        stderr.contains("error[E0308]: mismatched types"),
        "{stderr}"
    );
    assert!(stderr.contains("src/lib.rs:13:22"), "{stderr}");
    // The instance whose argument lacks the generic kernel's bound.
    assert!(stderr.contains("error[E0277]"), "{stderr}");
    assert!(
        stderr.contains("the trait bound `u8: WaveNum` is not satisfied"),
        "{stderr}"
    );
    // Nothing else: the valid instance and the vocabulary itself are fine.
    assert_eq!(stderr.matches("error[").count(), 2, "{stderr}");
}

#[test]
fn the_device_probes_pass_the_host_check_without_warnings() {
    for probe in ["device-probe", "matrix-probe"] {
        let out = check(probe);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{probe}:\n{stderr}");
        assert!(!stderr.contains("warning"), "{probe}:\n{stderr}");
    }
}
