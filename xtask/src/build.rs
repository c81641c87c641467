//! `cargo xtask build`: every requested target, then the bundle, the manifest and the resource
//! table.

use crate::device_build::{self, BuiltTarget, DeviceCrate, Layout};
use crate::gfx::Target;
use crate::manifest::{self, Manifest};
use crate::resources::{self, KernelResources};
use crate::toolchain::{Tools, run};
use anyhow::{Context, Result, bail};
use iron::code_object::{Bundle, CodeObject};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Cargo's target directory: `CARGO_TARGET_DIR` when set, else `target/` in the workspace.
pub fn target_dir(root: &Path) -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into)
}

/// Builds `krate` for `targets`, writes every output and prints the resource table.
pub fn build(
    root: &Path,
    krate: &DeviceCrate,
    targets: &[Target],
    out_dir: &Path,
    verbose: bool,
) -> Result<Manifest> {
    let tools = Tools::locate()?;
    let layout = Layout {
        target_dir: target_dir(root),
        iron_dir: std::path::absolute(out_dir)?,
    };
    let started = Instant::now();
    let mut built = Vec::new();
    for (i, &target) in targets.iter().enumerate() {
        let t0 = Instant::now();
        eprintln!(
            "[{}/{}] {target}: compiling {}",
            i + 1,
            targets.len(),
            krate.package
        );
        let target_build = device_build::build_target(&tools, krate, target, &layout, verbose)?;
        let rows = resources::collect(&target_build)?;
        eprintln!(
            "[{}/{}] {target}: {} kernels in {:.1} s",
            i + 1,
            targets.len(),
            rows.len(),
            t0.elapsed().as_secs_f64()
        );
        built.push((target_build, rows));
    }
    check_scratch(&built)?;
    let bundle_path = layout.iron_dir.join("kernels.bundle");
    write_bundle(&built, &bundle_path)?;
    let manifest = manifest::write(&layout.iron_dir, &built)?;
    print_table(&built);
    eprintln!(
        "built {} target(s) in {:.1} s: code objects in {}, bundle {}",
        built.len(),
        started.elapsed().as_secs_f64(),
        layout.iron_dir.display(),
        bundle_path.display()
    );
    Ok(manifest)
}

/// Fails when a kernel uses scratch without declaring `allow_scratch`.
fn check_scratch(built: &[(BuiltTarget, Vec<KernelResources>)]) -> Result<()> {
    for (target_build, rows) in built {
        for row in rows {
            if row.scratch_bytes > 0 && !row.allow_scratch {
                bail!(
                    "kernel `{}` on {} uses {} bytes of scratch per work-item (register spills or \
                     stack): lower its register pressure or max_threads, or declare \
                     #[kernel(..., allow_scratch)]",
                    row.name,
                    target_build.target,
                    row.scratch_bytes
                );
            }
        }
    }
    Ok(())
}

/// Writes the offload bundle of this run's code objects: one entry per gfx (a gfx built for both
/// wave sizes contributes its default-wave build).
fn write_bundle(built: &[(BuiltTarget, Vec<KernelResources>)], path: &Path) -> Result<()> {
    let mut entries = Vec::new();
    let mut gfx_done: Vec<&str> = Vec::new();
    let mut ordered: Vec<&BuiltTarget> = built.iter().map(|(b, _)| b).collect();
    ordered.sort_by_key(|b| b.target.wave != b.target.gfx.default_wave());
    for b in ordered {
        if gfx_done.contains(&b.target.gfx.name) {
            eprintln!(
                "note: the bundle holds {}'s default-wave build; its wave{} build is in {}",
                b.target.gfx.name,
                b.target.wave,
                b.code_object.display()
            );
            continue;
        }
        gfx_done.push(b.target.gfx.name);
        let bytes = std::fs::read(&b.code_object)?;
        let target_id = CodeObject::parse(&bytes)?.target().clone();
        entries.push((target_id, bytes));
    }
    let bundle = Bundle::for_hip(entries).context("cannot assemble the offload bundle")?;
    std::fs::write(path, bundle.write()).with_context(|| format!("cannot write {}", path.display()))
}

fn print_table(built: &[(BuiltTarget, Vec<KernelResources>)]) {
    println!(
        "{:<24} {:<12} {:>5} {:>5} {:>5} {:>7} {:>8} {:>10} {:>7} {:>8}",
        "kernel", "target", "VGPR", "AGPR", "SGPR", "LDS", "scratch", "occupancy", "code", "max_wg"
    );
    for (target_build, rows) in built {
        for r in rows {
            println!(
                "{:<24} {:<12} {:>5} {:>5} {:>5} {:>7} {:>8} {:>10} {:>7} {:>8}",
                r.name,
                target_build.target.dir_name(),
                r.vgpr,
                r.agpr,
                r.sgpr,
                r.lds_bytes,
                r.scratch_bytes,
                format!("{}/{} {}", r.occupancy, r.max_waves, r.occupancy_limit),
                r.code_bytes,
                r.max_flat_workgroup_size
            );
        }
    }
}

/// A device crate outside the workspace, named by its directory.
pub fn external_crate(dir: &Path) -> Result<DeviceCrate> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        bail!(
            "{} has no Cargo.toml: --kernels takes a crate directory",
            dir.display()
        );
    }
    let tools = Tools::locate()?;
    let meta = run(Command::new(&tools.cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest))?;
    let meta: serde_json::Value = serde_json::from_slice(&meta)?;
    let package = meta["packages"][0]["name"]
        .as_str()
        .context("cargo metadata names no package")?
        .to_string();
    Ok(DeviceCrate {
        manifest: manifest.canonicalize()?,
        package,
    })
}
