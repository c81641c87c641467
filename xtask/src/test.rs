//! `cargo xtask test`: build every target, then run every test of the workspace with the build's
//! outputs available (the code-object checks and, where a device exists, the kernel runs).

use crate::build;
use crate::device_build;
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
    let tools = Tools::locate()?;
    eprintln!("running the workspace tests");
    let status = Command::new(&tools.cargo)
        .args(["test", "--workspace", "--", "--include-ignored"])
        .env("IRON_ARTIFACTS", &iron_dir)
        .status()?;
    if !status.success() {
        bail!("tests failed");
    }
    Ok(())
}
