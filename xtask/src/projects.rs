//! Projects that use Iron as a user's would, checked as a user meets them: the template
//! (`examples/template`) and the walkthrough's project (`docs/walkthrough`), each copied outside
//! the repository with its Iron dependencies pointed at this checkout, then built and tested
//! with the toolchain a fresh shell there would use (rustup's default; their build scripts
//! compile the kernels with the pinned nightly whatever that is).

use anyhow::{Context, Result, bail};
use iron_build::outside_command;
use std::path::Path;

/// The projects, relative to the repository's root. Each sits two directories below it, so its
/// crates reach Iron's as `path = "../../../<crate>"`.
pub const PROJECTS: [&str; 2] = ["examples/template", "docs/walkthrough"];

/// What the projects' manifests put before Iron's crates (`path = "../../../host"`): the
/// repository's root as seen from the projects' crates.
const IRON_FROM_PROJECT: &str = "path = \"../../../";

/// Copies the project `project` (one of [`PROJECTS`]) to `<temp>/iron-projects/<name>`, builds
/// it and runs its tests. The projects share one target directory there, kept between runs.
pub fn check(root: &Path, project: &str) -> Result<()> {
    let outside = std::env::temp_dir().join("iron-projects");
    let name = Path::new(project)
        .file_name()
        .context("a project is named by its directory")?;
    let copy = outside.join(name);
    eprintln!("{project}: copied to {} and tested there", copy.display());
    copy_project(&root.join(project), &copy)?;
    std::fs::copy(root.join("Cargo.lock"), copy.join("Cargo.lock"))
        .with_context(|| format!("cannot copy Cargo.lock into {}", copy.display()))?;
    let mut cargo = outside_command("cargo");
    cargo
        .arg("test")
        .current_dir(&copy)
        .env("CARGO_TARGET_DIR", outside.join("target"));
    if !has_default_toolchain() {
        eprintln!(
            "rustup has no default toolchain here: {project}'s host side builds with {}",
            iron_build::TOOLCHAIN
        );
        cargo.env("RUSTUP_TOOLCHAIN", iron_build::TOOLCHAIN);
    }
    let status = cargo.status().context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "{project} failed to build or pass its tests in {} ({status})",
            copy.display()
        );
    }
    Ok(())
}

/// Whether `cargo` outside any `rust-toolchain.toml` finds a toolchain.
fn has_default_toolchain() -> bool {
    outside_command("rustup")
        .arg("default")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Copies the project in `from` to `to` with its Iron paths made absolute, replacing what an
/// earlier run left there.
fn copy_project(from: &Path, to: &Path) -> Result<()> {
    if to.is_dir() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot remove {}", to.display()))?;
    }
    let iron = from
        .ancestors()
        .nth(2)
        .context("a project sits two levels below the repository's root")?
        .canonicalize()?;
    copy_tree(from, to, &iron)
}

fn copy_tree(from: &Path, to: &Path, iron: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let source = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let dest = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&source, &dest, iron)?;
        } else if name == "Cargo.toml" {
            let manifest = std::fs::read_to_string(&source)?;
            std::fs::write(&dest, point_at(&manifest, iron))?;
        } else {
            std::fs::copy(&source, &dest)?;
        }
    }
    Ok(())
}

/// `manifest` with its Iron dependencies' paths made absolute (`iron` is the repository root).
fn point_at(manifest: &str, iron: &Path) -> String {
    manifest.replace(IRON_FROM_PROJECT, &format!("path = \"{}/", iron.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iron_paths_become_absolute_and_others_stay() {
        let manifest = "iron = { path = \"../../../host\" }\nk = { path = \"../kernels\" }\n";
        assert_eq!(
            point_at(manifest, Path::new("/src/iron")),
            "iron = { path = \"/src/iron/host\" }\nk = { path = \"../kernels\" }\n"
        );
    }

    #[test]
    fn the_projects_name_iron_only_through_the_rewritten_prefix() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for project in PROJECTS {
            for manifest in ["Cargo.toml", "kernels/Cargo.toml", "host/Cargo.toml"] {
                let text = std::fs::read_to_string(root.join(project).join(manifest)).unwrap();
                assert!(text.contains("[workspace]") || text.contains(IRON_FROM_PROJECT));
                let rewritten = point_at(&text, Path::new("/iron"));
                assert!(
                    !rewritten.contains("\"../../"),
                    "{project}/{manifest} reaches outside the project other than by \
                     {IRON_FROM_PROJECT}"
                );
            }
        }
    }
}
