//! `target/iron/manifest.json`: what a build produced, for the tests and the report to read.

use crate::device_build::BuiltTarget;
use crate::resources::KernelResources;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// The manifest of one build run.
#[derive(Serialize)]
pub struct Manifest {
    /// The bundle file, relative to `target/iron`.
    pub bundle: String,
    /// One entry per target built.
    pub targets: Vec<TargetEntry>,
}

/// One target of the manifest.
#[derive(Serialize)]
pub struct TargetEntry {
    /// The gfx processor name.
    pub gfx: String,
    /// Lanes per wave.
    pub wave: u32,
    /// The code object, relative to `target/iron`.
    pub code_object: String,
    /// Its kernels and their resources.
    pub kernels: Vec<KernelResources>,
}

/// Writes the manifest of `built` into `iron_dir`.
pub fn write(iron_dir: &Path, built: &[(BuiltTarget, Vec<KernelResources>)]) -> Result<Manifest> {
    let manifest = Manifest {
        bundle: "kernels.bundle".into(),
        targets: built
            .iter()
            .map(|(b, rows)| TargetEntry {
                gfx: b.target.gfx.name.into(),
                wave: b.target.wave,
                code_object: format!("{}/kernels.co", b.target.dir_name()),
                kernels: rows.clone(),
            })
            .collect(),
    };
    let path = iron_dir.join("manifest.json");
    std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(manifest)
}
