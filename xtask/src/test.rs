//! `cargo xtask test`: build every target, then run every test of the workspace with the build's
//! outputs available (the code-object checks and, where a device exists, the kernel runs). Tests
//! named `gpu_*` need an AMD GPU: without one they are skipped, and the summary says why.

use crate::build;
use crate::device_build;
use crate::emu_test_objects;
use crate::gfx::parse_targets;
use crate::toolchain::Tools;
use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

/// Every target the test suite covers: the five gfx at their default wave size, and the RDNA
/// targets in wave64.
pub const TEST_TARGETS: &str = "all,gfx1100:w64,gfx1201:w64";

/// Runs the whole suite.
pub fn run_all(root: &Path) -> Result<()> {
    let targets = parse_targets(TEST_TARGETS, None)?;
    let iron_dir = build::target_dir(root).join("iron");
    build::build(
        root,
        &device_build::library_crate(root),
        &targets,
        &iron_dir,
        false,
    )?;
    let emu_objects = iron_dir.join("emu-tests");
    eprintln!("building the emulator's test kernels");
    emu_test_objects::build_all(root, &emu_objects)?;
    let tools = Tools::locate()?;
    eprintln!("building the stand-in HIP runtime (a test fixture backed by the emulator)");
    let status = Command::new(&tools.cargo)
        .args(["build", "--quiet", "-p", "iron-hip-stand-in"])
        .status()?;
    if !status.success() {
        bail!("building the stand-in HIP runtime failed");
    }
    let stand_in = build::target_dir(root).join("debug/libiron_hip_stand_in.so");
    let no_gpu = missing_gpu_reason();
    eprintln!("running the workspace tests");
    let mut cargo = Command::new(&tools.cargo);
    cargo
        .args([
            "test",
            "--workspace",
            "--no-fail-fast",
            "--",
            "--include-ignored",
        ])
        .env("IRON_ARTIFACTS", &iron_dir)
        .env("IRON_REQUIRE_TOOLS", "1")
        .env("IRON_HIP_STAND_IN", &stand_in)
        .env("IRON_EMU_TEST_OBJECTS", &emu_objects)
        .env("IRON_CODE_OBJECT_DIR", &iron_dir);
    if no_gpu.is_some() {
        cargo.args(["--skip", GPU_TEST_PREFIX]);
    }
    let status = cargo.status()?;
    if let Some(reason) = &no_gpu {
        eprintln!("skipped: the tests named {GPU_TEST_PREFIX}* (they need an AMD GPU: {reason})");
    }
    if !status.success() {
        bail!("tests failed");
    }
    Ok(())
}

/// Tests whose names start with this need a real AMD GPU.
const GPU_TEST_PREFIX: &str = "gpu_";

/// Why the GPU tests cannot run here, or `None` when a HIP device is present.
fn missing_gpu_reason() -> Option<String> {
    match iron::Device::hip_devices() {
        Ok(devices) if !devices.is_empty() => None,
        Ok(_) => Some("the HIP runtime reports no device".into()),
        Err(e) => Some(e.to_string()),
    }
}
