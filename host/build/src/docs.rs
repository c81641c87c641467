//! Documenting a device crate as the GPU sees it: `cargo doc` for one build target, with the
//! target's cfgs, so that the items compiled for `target_arch = "amdgpu"` alone (in
//! `iron_intrinsics`: ids, waves, LDS, atomics, barriers, math, matrix fragments, print) are
//! documented, which a host `cargo doc` cannot show.

use crate::compile::{DeviceCrate, cfg_flags};
use crate::error::{Context, Result, bail};
use crate::spec::write_spec;
use crate::target::Target;
use crate::toolchain::Tools;
use std::path::{Path, PathBuf};

/// Runs `cargo doc` on `krate` for `target` in `target_dir`; `deny_warnings` makes rustdoc's
/// warnings errors. Returns the crate's documentation index.
pub fn document(
    tools: &Tools,
    krate: &DeviceCrate,
    target: Target,
    target_dir: &Path,
    deny_warnings: bool,
) -> Result<PathBuf> {
    let spec = write_spec(tools, target, &target_dir.join("iron-specs"))?;
    let doc_dir = target_dir.join("iron-device-doc");
    let mut rustdoc_flags = cfg_flags(target);
    if deny_warnings {
        rustdoc_flags.extend(["-D".to_string(), "warnings".to_string()]);
    }
    let status = tools
        .cargo()
        .args(["doc", "--quiet", "--release", "--no-deps"])
        .arg("--manifest-path")
        .arg(&krate.manifest)
        .args(["--package", &krate.package, "--lib"])
        .arg("--target")
        .arg(&spec)
        .arg("--target-dir")
        .arg(&doc_dir)
        .args(["-Zbuild-std=core", "-Zjson-target-spec"])
        .env("CARGO_ENCODED_RUSTFLAGS", cfg_flags(target).join("\x1f"))
        .env("CARGO_ENCODED_RUSTDOCFLAGS", rustdoc_flags.join("\x1f"))
        .status()
        .context(|| format!("cannot run {}", tools.cargo.display()))?;
    if !status.success() {
        bail!(
            "documenting {} for {target} failed{}",
            krate.package,
            if deny_warnings {
                " (rustdoc's warnings are errors here: fix the doc comments it names)"
            } else {
                ""
            }
        );
    }
    Ok(doc_dir
        .join(target.triple())
        .join("doc")
        .join(krate.lib_name.as_str())
        .join("index.html"))
}
