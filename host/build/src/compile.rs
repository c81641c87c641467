//! Compiles a device crate for one target: cargo (release, build-std, LTO) to post-LTO bitcode,
//! then the post-LTO step to `<out>/<target>/kernels.co`.

use crate::error::{Context, Error, Result, bail};
use crate::post_lto::{self, DeclaredBounds};
use crate::scratch::{self, ScratchCause};
use crate::spec::write_spec;
use crate::target::Target;
use crate::toolchain::{Tools, run};
use crate::{atomics, conversions, fences, opt, panics, printf, static_lds};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A device crate: a `no_std` library whose kernels are marked `#[kernel]`.
#[derive(Debug, Clone)]
pub struct DeviceCrate {
    /// Its `Cargo.toml`.
    pub manifest: PathBuf,
    /// Its package name.
    pub package: String,
    /// The name of its library target as rustc writes it (`my_kernels`).
    pub lib_name: String,
    /// The target directory of the workspace it belongs to.
    pub workspace_target_dir: PathBuf,
}

impl DeviceCrate {
    /// The crate in `dir`, as cargo describes it.
    pub fn at(tools: &Tools, dir: &Path) -> Result<DeviceCrate> {
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            bail!(
                "{} has no Cargo.toml: a device crate is named by its directory",
                dir.display()
            );
        }
        let manifest = manifest
            .canonicalize()
            .context(|| format!("cannot resolve {}", manifest.display()))?;
        let out = run(tools
            .cargo()
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .arg("--manifest-path")
            .arg(&manifest))?;
        let meta: serde_json::Value = serde_json::from_slice(&out)
            .context(|| "cargo metadata printed unreadable JSON".into())?;
        let package = meta["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| {
                p["manifest_path"]
                    .as_str()
                    .and_then(|m| Path::new(m).canonicalize().ok())
                    .as_deref()
                    == Some(manifest.as_path())
            })
            .ok_or_else(|| {
                Error::new(format!(
                    "{} defines no package (a workspace root?): name the device crate's own \
                     directory",
                    manifest.display()
                ))
            })?;
        let lib_name = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k.as_str().is_some_and(is_lib)))
            })
            .and_then(|t| t["name"].as_str())
            .map(|name| name.replace('-', "_"))
            .ok_or_else(|| {
                Error::new(format!(
                    "{} has no library target: kernels live in a crate's lib.rs",
                    manifest.display()
                ))
            })?;
        Ok(DeviceCrate {
            package: package["name"].as_str().unwrap_or_default().to_string(),
            lib_name,
            workspace_target_dir: meta["target_directory"]
                .as_str()
                .map(PathBuf::from)
                .unwrap_or_else(|| dir.join("target")),
            manifest,
        })
    }
}

fn is_lib(kind: &str) -> bool {
    matches!(kind, "lib" | "rlib" | "cdylib" | "dylib" | "staticlib")
}

/// Where a build reads and writes.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The directory under which each target compiles in a cargo target directory of its own
    /// (`iron-device/<triple>`): cargo runs one build at a time in a target directory, and
    /// the targets compile at once.
    pub target_dir: PathBuf,
    /// Where the code objects, bundle and manifest go.
    pub out_dir: PathBuf,
}

/// One target compiled.
pub struct CompiledTarget {
    /// The target.
    pub target: Target,
    /// Its code object.
    pub code_object: PathBuf,
    /// Launch bounds per kernel, as declared in the source.
    pub bounds: BTreeMap<String, DeclaredBounds>,
    /// The source files the compilation read (cargo's dep-info): what a rebuild depends on.
    pub sources: Vec<PathBuf>,
    /// The compiler's warnings, rendered, each naming the crate it is in.
    pub warnings: Vec<String>,
    /// Per kernel with a local in memory, the likely cause should it use scratch.
    pub scratch_causes: BTreeMap<String, ScratchCause>,
}

/// The `--cfg` flags that tell device code what it is built for.
pub(crate) fn cfg_flags(target: Target) -> Vec<String> {
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

/// Compiles `krate` for `target` into `layout`.
pub fn compile(
    tools: &Tools,
    krate: &DeviceCrate,
    target: Target,
    layout: &Layout,
    verbose: bool,
) -> Result<CompiledTarget> {
    let spec = write_spec(tools, target, &layout.target_dir.join("iron-specs"))?;
    let cargo_dir = layout.target_dir.join("iron-device").join(target.triple());
    let mut cargo = tools.cargo();
    cargo
        .args(["rustc", "--quiet", "--release", "--crate-type", "cdylib"])
        .args(["--message-format", "json"])
        .arg("--manifest-path")
        .arg(&krate.manifest)
        .args(["--package", &krate.package, "--lib"])
        .arg("--target")
        .arg(&spec)
        .arg("--target-dir")
        .arg(&cargo_dir)
        .args(["-Zbuild-std=core", "-Zjson-target-spec", "--config"])
        .arg(format!(
            "profile.release.package.{}.codegen-units=1",
            krate.package
        ))
        .args(["--", "--emit=llvm-bc"])
        .env("CARGO_ENCODED_RUSTFLAGS", cfg_flags(target).join("\x1f"))
        .stdout(Stdio::piped());
    if !verbose {
        cargo.stderr(Stdio::piped());
    }
    let out = cargo
        .output()
        .context(|| format!("cannot run {}", tools.cargo.display()))?;
    let diagnostics = Diagnostics::read(&String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        return Err(compile_error(
            krate,
            target,
            &diagnostics,
            &String::from_utf8_lossy(&out.stderr),
        ));
    }
    let release = cargo_dir.join(target.triple()).join("release");
    let bitcode = release.join("deps").join(format!("{}.bc", krate.lib_name));
    let sources = dep_info(&release.join(format!("{}.d", krate.lib_name)));
    let out_dir = layout.out_dir.join(target.dir_name());
    std::fs::create_dir_all(&out_dir).context(|| format!("cannot create {}", out_dir.display()))?;
    let ir = run(tools
        .command(&tools.llvm_dis)
        .arg(&bitcode)
        .arg("-o")
        .arg("-"))?;
    let ir = String::from_utf8(ir).context(|| "llvm-dis printed non-UTF-8 IR".into())?;
    let (patched, bounds) =
        post_lto::apply_launch_bounds(&ir).map_err(|e| Error::new(format!("{target}: {e}")))?;
    let patched = fences::apply_fences(&patched)
        .and_then(|ir| atomics::apply_atomics(&ir))
        .and_then(|ir| static_lds::apply_static_lds(&ir))
        .and_then(|ir| printf::apply_printf(&ir))
        .and_then(|ir| panics::apply_panics(&ir))
        .and_then(|ir| conversions::apply_conversions(&ir))
        .and_then(|ir| {
            let (ir, inline) = opt::mark_always_inline(&ir);
            opt::run_passes(tools, ir, inline, &out_dir)
        })
        .map_err(|e| Error::new(format!("{target}: {e}")))?;
    post_lto::compile_and_link(tools, target, &patched, &out_dir)
        .map_err(|e| Error::new(format!("{target}: compiling the post-LTO module: {e}")))?;
    Ok(CompiledTarget {
        target,
        code_object: out_dir.join("kernels.co"),
        bounds,
        sources,
        warnings: diagnostics.warnings,
        scratch_causes: scratch::causes(&patched),
    })
}

/// What the compiler said, from cargo's JSON messages.
#[derive(Debug, Default, PartialEq)]
struct Diagnostics {
    errors: Vec<String>,
    warnings: Vec<String>,
}

impl Diagnostics {
    /// Reads cargo's `--message-format json` output (other lines are ignored).
    fn read(stdout: &str) -> Diagnostics {
        let mut diagnostics = Diagnostics::default();
        for line in stdout.lines() {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if message["reason"] != "compiler-message" {
                continue;
            }
            let Some(rendered) = message["message"]["rendered"].as_str() else {
                continue;
            };
            let rendered = rendered.trim_end().to_string();
            match message["message"]["level"].as_str() {
                Some("error" | "error: internal compiler error") => {
                    diagnostics.errors.push(rendered);
                }
                Some("warning") => diagnostics
                    .warnings
                    .push(attributed(&rendered, package_name(&message))),
                _ => {}
            }
        }
        diagnostics
    }
}

/// The name of the package a cargo message is about: from its `package_id`
/// (`path+file:///k#my-kernels@0.1.0`, or the older `my-kernels 0.1.0 (path+file:///k)`), else
/// its target's name.
fn package_name(message: &serde_json::Value) -> Option<&str> {
    let from_id = message["package_id"]
        .as_str()
        .and_then(|id| match id.rsplit_once('#') {
            Some((_, tail)) => tail.split('@').next(),
            None => id.split(' ').next(),
        });
    from_id
        .filter(|name| !name.is_empty())
        .or_else(|| message["target"]["name"].as_str())
}

/// A rendered warning whose first line says which crate's GPU build it comes from (the paths it
/// shows are relative to that crate's workspace).
fn attributed(rendered: &str, package: Option<&str>) -> String {
    let Some(package) = package else {
        return rendered.to_string();
    };
    let (first, rest) = rendered.split_once('\n').unwrap_or((rendered, ""));
    let mut out = format!("{first} (in `{package}`, GPU build)");
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

/// The error of a failed compilation: the compiler's first error as it rendered it, else what
/// cargo printed (a manifest error, LLVM's own failure).
fn compile_error(
    krate: &DeviceCrate,
    target: Target,
    diagnostics: &Diagnostics,
    stderr: &str,
) -> Error {
    let head = format!("compiling {} for {target} failed", krate.package);
    if stderr.contains("Cannot select") {
        return Error::new(format!(
            "{head}: LLVM cannot select an instruction this gfx lacks (an intrinsic used without \
             a cfg gate?):\n{}",
            stderr.trim_end()
        ));
    }
    match diagnostics.errors.split_first() {
        Some((first, rest)) => {
            let more = match rest.len() {
                0 => String::new(),
                n => format!("\n({n} more error(s) follow it; fix this one first)"),
            };
            Error::new(format!("{head}:\n{first}{more}"))
        }
        None => Error::new(format!("{head}:\n{}", stderr.trim_end())),
    }
}

/// The files a cargo dep-info file (`<lib>.d` beside the artifact) lists: the crate's sources
/// and those of its path dependencies. An unreadable file lists nothing.
fn dep_info(path: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Some((_, deps)) = text.lines().next().and_then(|line| line.split_once(": ")) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => {
                if !current.is_empty() {
                    files.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        files.push(PathBuf::from(current));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_is_taken_from_cargos_messages() {
        let stdout = [
            r#"{"reason":"compiler-artifact","target":{"name":"core"}}"#,
            r#"{"reason":"compiler-message","package_id":"path+file:///k#my-kernels@0.1.0","message":{"level":"warning","rendered":"warning: unused variable: `x`\n --> src/lib.rs:3:9\n"}}"#,
            r#"{"reason":"compiler-message","package_id":"iron-intrinsics 0.1.0 (path+file:///i)","message":{"level":"warning","rendered":"warning: unused import\n"}}"#,
            r#"{"reason":"compiler-message","target":{"name":"other"},"message":{"level":"warning","rendered":"warning: w\n"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"error","rendered":"error[E0308]: mismatched types\n --> src/lib.rs:3:18\n"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"error","rendered":"error: aborting due to 1 previous error\n"}}"#,
            "not json",
        ]
        .join("\n");
        let d = Diagnostics::read(&stdout);
        assert_eq!(
            d.warnings,
            [
                "warning: unused variable: `x` (in `my-kernels`, GPU build)\n --> src/lib.rs:3:9",
                "warning: unused import (in `iron-intrinsics`, GPU build)",
                "warning: w (in `other`, GPU build)",
            ]
        );
        assert_eq!(d.errors.len(), 2);
        let krate = DeviceCrate {
            manifest: "/k/Cargo.toml".into(),
            package: "my-kernels".into(),
            lib_name: "my_kernels".into(),
            workspace_target_dir: "/k/target".into(),
        };
        let target = crate::target::parse_targets("gfx950", None).unwrap()[0];
        let e = compile_error(&krate, target, &d, "").to_string();
        assert!(
            e.starts_with(
                "compiling my-kernels for gfx950 (wave64) failed:\nerror[E0308]: mismatched types\n --> src/lib.rs:3:18"
            ),
            "{e}"
        );
        assert!(
            e.ends_with("(1 more error(s) follow it; fix this one first)"),
            "{e}"
        );
        let e = compile_error(
            &krate,
            target,
            &Diagnostics::default(),
            "error: no matching package\n",
        )
        .to_string();
        assert!(e.ends_with("failed:\nerror: no matching package"), "{e}");
    }

    #[test]
    fn dep_info_lists_every_file_with_escaped_spaces() {
        let dir = std::env::temp_dir().join(format!("iron-build-depinfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.d");
        std::fs::write(
            &path,
            "/t/k.elf: /src/lib.rs /my\\ dir/a.rs /x/b.rs\n\n/src/lib.rs:\n",
        )
        .unwrap();
        let files = dep_info(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            files,
            [
                PathBuf::from("/src/lib.rs"),
                PathBuf::from("/my dir/a.rs"),
                PathBuf::from("/x/b.rs")
            ]
        );
        assert!(dep_info(Path::new("/nonexistent.d")).is_empty());
    }
}
