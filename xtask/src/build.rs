//! `cargo xtask build`: the kernel library, or another device crate, built by `iron-build`;
//! then the resource table.

use anyhow::Result;
use iron_build::{Built, Kernels, Tools};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Cargo's target directory: `CARGO_TARGET_DIR` when set, else `target/` in the workspace.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into)
}

/// The pinned cargo in the workspace's root, writing to [`target_dir`], with the environment
/// `cargo xtask` itself was started with cleared (see [`Tools::command`]).
pub fn workspace_cargo(root: &Path) -> Result<Command> {
    let mut cargo = Tools::locate()?.cargo();
    cargo
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir(root));
    Ok(cargo)
}

/// The kernel library's crate (`device/kernels`).
pub fn library_dir(root: &Path) -> PathBuf {
    root.join("device/kernels")
}

/// Builds the device crate in `dir` for the targets `gfx` (as `--gfx` spells them) into
/// `out_dir`, compiling in the workspace's target directory (so every build shares `core`).
pub fn device_crate(root: &Path, dir: &Path, gfx: &str, out_dir: &Path) -> Result<Built> {
    Ok(Kernels::new(dir)
        .gfx([gfx])
        .target_dir(target_dir(root))
        .out_dir(out_dir)
        .build()?)
}

/// What `cargo xtask build` was asked for.
pub struct Request {
    /// `--gfx`.
    pub gfx: String,
    /// `--wave`.
    pub wave: Option<u32>,
    /// `--kernels`, resolved against the current directory.
    pub kernels: Option<PathBuf>,
    /// `--out-dir`, resolved against the current directory.
    pub out_dir: Option<PathBuf>,
    /// `--verbose`.
    pub verbose: bool,
}

/// Documents `iron-intrinsics` for build target `gfx` (see `iron_build::Kernels::document`);
/// returns its `index.html`.
pub fn document_device(root: &Path, gfx: &str, deny_warnings: bool) -> Result<PathBuf> {
    Ok(Kernels::new(root.join("device/intrinsics"))
        .gfx([gfx])
        .target_dir(target_dir(root))
        .document(deny_warnings)?)
}

/// Runs `cargo xtask build`: the library into `<target dir>/iron`, another crate into
/// `<target dir>/iron/<package>` (never over the library's bundle), unless `--out-dir` says
/// otherwise; then prints the resource table.
pub fn run(root: &Path, request: Request) -> Result<()> {
    let mut kernels = Kernels::new(request.kernels.clone().unwrap_or_else(|| library_dir(root)))
        .gfx([&request.gfx])
        .target_dir(target_dir(root))
        .verbose(request.verbose);
    if let Some(wave) = request.wave {
        kernels = kernels.wave(wave);
    }
    match (&request.out_dir, &request.kernels) {
        (Some(dir), _) => kernels = kernels.out_dir(dir),
        (None, None) => kernels = kernels.out_dir(target_dir(root).join("iron")),
        (None, Some(_)) => {}
    }
    let built = kernels.build()?;
    print!("{}", built.resource_table());
    eprintln!(
        "code objects in {}, bundle {}",
        built.out_dir.display(),
        built.bundle.display()
    );
    Ok(())
}
