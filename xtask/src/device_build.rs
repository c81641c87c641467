//! Builds one target: the device crate through cargo (release, build-std, LTO) to post-LTO
//! bitcode, then the post-LTO step to `target/iron/<target>/kernels.co`.

use crate::gfx::Target;
use crate::post_lto::{self, DeclaredBounds};
use crate::spec::write_spec;
use crate::toolchain::{Tools, run};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The device crate to build.
#[derive(Debug, Clone)]
pub struct DeviceCrate {
    /// Its `Cargo.toml`.
    pub manifest: PathBuf,
    /// Its package name.
    pub package: String,
}

impl DeviceCrate {
    /// The name of its library target as rustc writes it (dashes become underscores).
    fn lib_name(&self) -> String {
        self.package.replace('-', "_")
    }
}

/// Where the build writes: cargo's target directory and Iron's output folder in it.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Cargo's target directory (shared with the host build).
    pub target_dir: PathBuf,
    /// `<target_dir>/iron`: code objects, bundle, manifest.
    pub iron_dir: PathBuf,
}

/// The result of building one target.
pub struct BuiltTarget {
    /// The target.
    pub target: Target,
    /// Path of its code object.
    pub code_object: PathBuf,
    /// Launch bounds per kernel, as declared in the source.
    pub bounds: BTreeMap<String, DeclaredBounds>,
}

/// The `--cfg` flags that tell device code what it is built for.
fn cfg_flags(target: Target) -> Vec<String> {
    [
        ("iron_gfx", target.gfx.name.to_string()),
        ("iron_family", target.gfx.family_cfg().to_string()),
        ("iron_wave", target.wave.to_string()),
        ("iron_matrix", target.gfx.matrix_cfg().to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| ["--cfg".to_string(), format!("{k}=\"{v}\"")])
    .collect()
}

/// Builds `krate` for `target` into `layout`.
pub fn build_target(
    tools: &Tools,
    krate: &DeviceCrate,
    target: Target,
    layout: &Layout,
    verbose: bool,
) -> Result<BuiltTarget> {
    let spec = write_spec(tools, target, &layout.iron_dir.join("specs"))?;
    let mut cargo = Command::new(&tools.cargo);
    cargo
        .args(["rustc", "--quiet", "--release", "--crate-type", "cdylib"])
        .arg("--manifest-path")
        .arg(&krate.manifest)
        .args(["--package", &krate.package, "--lib"])
        .arg("--target")
        .arg(&spec)
        .arg("--target-dir")
        .arg(&layout.target_dir)
        .args(["-Zbuild-std=core", "-Zjson-target-spec", "--config"])
        .arg(format!(
            "profile.release.package.{}.codegen-units=1",
            krate.package
        ))
        .args(["--", "--emit=llvm-bc"])
        .env("CARGO_ENCODED_RUSTFLAGS", cfg_flags(target).join("\x1f"))
        .env_remove("RUSTFLAGS")
        .stdout(Stdio::inherit());
    if !verbose {
        cargo.stderr(Stdio::piped());
    }
    let out = cargo.output().context("cannot run cargo")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("Cannot select") {
            bail!(
                "{target}: LLVM cannot select an instruction this gfx lacks (an intrinsic used \
                 without a cfg gate?):\n{stderr}"
            );
        }
        bail!("{target}: compiling the device crate failed:\n{stderr}");
    }
    let deps = layout
        .target_dir
        .join(target.triple())
        .join("release")
        .join("deps");
    let bitcode = deps.join(format!("{}.bc", krate.lib_name()));
    let out_dir = layout.iron_dir.join(target.dir_name());
    std::fs::create_dir_all(&out_dir)?;
    let ir = run(Command::new(&tools.llvm_dis)
        .arg(&bitcode)
        .arg("-o")
        .arg("-"))
    .with_context(|| format!("cannot disassemble {}", bitcode.display()))?;
    let ir = String::from_utf8(ir).context("llvm-dis printed non-UTF-8 IR")?;
    let (patched, bounds) = post_lto::apply_launch_bounds(&ir)
        .with_context(|| format!("{target}: applying launch bounds"))?;
    let patched_path = out_dir.join("kernels.ll");
    std::fs::write(&patched_path, patched)?;
    post_lto::compile_and_link(tools, target, &patched_path, &out_dir)
        .with_context(|| format!("{target}: compiling the post-LTO module"))?;
    Ok(BuiltTarget {
        target,
        code_object: out_dir.join("kernels.co"),
        bounds,
    })
}

/// The library crate of the workspace (`device/kernels`).
pub fn library_crate(root: &Path) -> DeviceCrate {
    DeviceCrate {
        manifest: root.join("device/kernels/Cargo.toml"),
        package: "iron-kernels".into(),
    }
}
