//! Custom rustc target specifications, one per build target: the built-in `amdgcn-amd-amdhsa`
//! spec with its processor (and wave64 feature) filled in, so that one cargo target directory
//! holds every gfx side by side.

use crate::error::{Context, Result};
use crate::target::Target;
use crate::toolchain::{Tools, run};
use std::path::{Path, PathBuf};

/// Writes the JSON spec of `target` into `dir` (only when its content changes, so cargo does not
/// rebuild `core` needlessly) and returns its path.
pub fn write_spec(tools: &Tools, target: Target, dir: &Path) -> Result<PathBuf> {
    let base = run(tools.command(&tools.rustc).args([
        "-Z",
        "unstable-options",
        "--print",
        "target-spec-json",
        "--target",
        "amdgcn-amd-amdhsa",
    ]))?;
    let mut spec: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&base)
        .context(|| "rustc printed an unreadable target spec".into())?;
    spec.remove("need-explicit-cpu");
    spec.insert("cpu".into(), target.gfx.name.into());
    if target.wave == 64 && target.gfx.default_wave() == 32 {
        spec.insert("features".into(), "+wavefrontsize64".into());
    }
    let text =
        serde_json::to_string_pretty(&spec).context(|| "cannot print a target spec".into())? + "\n";
    std::fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{}.json", target.triple()));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, text).context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(path)
}
