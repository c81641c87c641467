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
    // The verification builds Iron's crates as packages of a temporary local registry, which
    // cargo extracts under `$CARGO_HOME/registry/src/` in a directory named after the
    // registry's path, and never extracts again while that directory exists: with the same
    // path every run, an earlier run's sources (kept in a cached cargo home) would stand in for
    // today's. So every run packages under a path of its own and removes what it extracted.
    let packaging_root = crate::build::target_dir(root).join("packaging");
    if packaging_root.is_dir() {
        std::fs::remove_dir_all(&packaging_root)?;
    }
    let target_dir = packaging_root.join(run_id());
    let extracted = ExtractedSources::new();
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
    extracted.remove_new();
    if !status.success() {
        bail!("cargo package failed for the public crates (its output is above)");
    }
    Ok(())
}

/// A name no earlier run used: the process id and the time.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// The source directories of local registries that cargo extracted during this check.
struct ExtractedSources {
    /// `$CARGO_HOME/registry/src`, when it can be found.
    dir: Option<std::path::PathBuf>,
    /// Its entries before the check.
    before: std::collections::HashSet<std::ffi::OsString>,
}

impl ExtractedSources {
    /// Notes what `$CARGO_HOME/registry/src` holds now.
    fn new() -> Self {
        let dir = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
            .map(|home| home.join("registry").join("src"));
        Self::in_dir(dir)
    }

    /// Notes what `dir` holds now.
    fn in_dir(dir: Option<std::path::PathBuf>) -> Self {
        let before = dir.as_deref().map(entries).unwrap_or_default();
        Self { dir, before }
    }

    /// Removes the local-registry directories (cargo names them `-<hash>`) that appeared
    /// since [`ExtractedSources::new`]; a failure to remove one is reported, not fatal.
    fn remove_new(&self) {
        let Some(dir) = &self.dir else { return };
        for name in entries(dir) {
            if self.before.contains(&name) || !name.to_string_lossy().starts_with('-') {
                continue;
            }
            let path = dir.join(&name);
            if let Err(e) = std::fs::remove_dir_all(&path) {
                eprintln!("warning: could not remove {}: {e}", path.display());
            }
        }
    }
}

/// The names in a directory (none if it cannot be read).
fn entries(dir: &std::path::Path) -> std::collections::HashSet<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_registry_sources_extracted_during_the_check_are_removed() {
        let src = std::env::temp_dir().join(format!("iron-packaging-{}", run_id()));
        for old in ["-0123456789abcdef", "index.crates.io-1949cf8c6b5b557f"] {
            std::fs::create_dir_all(src.join(old).join("iron-emu-0.1.0")).unwrap();
        }
        let extracted = ExtractedSources::in_dir(Some(src.clone()));
        for new in ["-fedcba9876543210", "index.example.org-0000000000000000"] {
            std::fs::create_dir_all(src.join(new).join("iron-emu-0.1.0")).unwrap();
        }
        extracted.remove_new();
        let mut left: Vec<String> = entries(&src)
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        left.sort();
        std::fs::remove_dir_all(&src).unwrap();
        assert_eq!(
            left,
            [
                "-0123456789abcdef",
                "index.crates.io-1949cf8c6b5b557f",
                "index.example.org-0000000000000000"
            ]
        );
    }

    #[test]
    fn every_run_packages_under_a_new_path() {
        assert_ne!(run_id(), run_id());
    }
}
