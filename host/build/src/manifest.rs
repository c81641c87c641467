//! `manifest.json`: what a build produced, for tests and reports to read.

use crate::BuiltTarget;
use crate::error::{Context, Result};
use crate::resources::KernelResources;
use serde::Serialize;
use std::path::Path;

/// The manifest of one build.
#[derive(Serialize)]
struct Manifest<'a> {
    /// The bundle file, relative to the manifest's directory.
    bundle: &'a str,
    /// One entry per target built.
    targets: Vec<TargetEntry<'a>>,
}

/// One target of the manifest.
#[derive(Serialize)]
struct TargetEntry<'a> {
    /// The gfx processor name.
    gfx: &'a str,
    /// Lanes per wave.
    wave: u32,
    /// The code object, relative to the manifest's directory.
    code_object: String,
    /// Its kernels and their resources.
    kernels: &'a [KernelResources],
}

/// Writes the manifest of `built` (whose bundle is `bundle`) into `out_dir`.
pub fn write(out_dir: &Path, bundle: &str, built: &[BuiltTarget]) -> Result<()> {
    let manifest = Manifest {
        bundle,
        targets: built
            .iter()
            .map(|b| TargetEntry {
                gfx: b.target.gfx.name,
                wave: b.target.wave,
                code_object: format!("{}/kernels.co", b.target.dir_name()),
                kernels: &b.kernels,
            })
            .collect(),
    };
    let path = out_dir.join("manifest.json");
    let text =
        serde_json::to_string_pretty(&manifest).context(|| "cannot print the manifest".into())?;
    std::fs::write(&path, text + "\n").context(|| format!("cannot write {}", path.display()))
}
