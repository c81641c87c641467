//! Iron's public crates as packages: `cargo package` (which builds each package from its
//! `.crate` contents, resolving Iron's own crates from the packages beside it) must pass, and no
//! package may carry tests, test data or benchmarks. Nothing is published.

use anyhow::{Result, bail};

/// The crates a user depends on, in the order they depend on each other.
pub const PUBLIC_CRATES: [&str; 9] = [
    "iron-macros",
    "iron-intrinsics",
    "iron-quant",
    "iron-kernels",
    "hip-runtime-sys",
    "iron-code-object",
    "iron-emu",
    "iron",
    "iron-build",
];

/// Packages and verifies every public crate.
pub fn check(root: &std::path::Path) -> Result<()> {
    eprintln!(
        "packaging the public crates (cargo package: {})",
        PUBLIC_CRATES.join(", ")
    );
    // The verification builds Iron's crates as registry packages, which cargo never rebuilds at
    // the same version: an earlier run's build would stand in for today's sources. So it gets
    // a target directory of its own, emptied first.
    let target_dir = crate::build::target_dir(root).join("packaging");
    if target_dir.is_dir() {
        std::fs::remove_dir_all(&target_dir)?;
    }
    let selected: Vec<String> = PUBLIC_CRATES
        .iter()
        .map(|c| format!("--package={c}"))
        .collect();
    let list = crate::build::workspace_cargo(root)?
        .args(["package", "--list", "--allow-dirty", "--quiet"])
        .args(&selected)
        .output()?;
    if !list.status.success() {
        bail!(
            "cargo package --list failed:\n{}",
            String::from_utf8_lossy(&list.stderr).trim_end()
        );
    }
    let listing = String::from_utf8_lossy(&list.stdout);
    if let Some(file) = listing
        .lines()
        .find(|f| f.starts_with("tests/") || f.starts_with("benches/"))
    {
        bail!("a package would carry {file}: narrow its crate's `include` list");
    }
    let status = crate::build::workspace_cargo(root)?
        .env("CARGO_TARGET_DIR", &target_dir)
        .args(["package", "--allow-dirty", "--quiet"])
        .args(&selected)
        .status()?;
    if !status.success() {
        bail!("cargo package failed for the public crates (its output is above)");
    }
    Ok(())
}
