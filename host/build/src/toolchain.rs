//! The pinned nightly toolchain that compiles device code, and its LLVM tools, found through
//! rustup whatever toolchain runs the caller (a stable build script, the xtask, a test).
//!
//! A build script inherits its own toolchain's `CARGO`, `RUSTC`, `RUSTUP_TOOLCHAIN` and
//! `CARGO_*` variables; a nested cargo that saw them would compile with the wrong rustc and look
//! for the LLVM tools in the wrong sysroot. Every command made here starts from an environment
//! cleared of them ([`Tools::command`]).

use crate::error::{Context, Result, bail};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nightly toolchain device crates are compiled with (the repository's
/// `rust-toolchain.toml` pins the same one).
pub const TOOLCHAIN: &str = "nightly-2026-05-20";

/// The rustup components of [`TOOLCHAIN`] a device build needs: the `core` sources
/// (`-Zbuild-std`) and LLVM's tools (`llvm-dis`, `llc`, `rust-lld`).
pub const COMPONENTS: [&str; 2] = ["rust-src", "llvm-tools"];

/// Paths of the programs a device build runs.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The pinned toolchain's cargo.
    pub cargo: PathBuf,
    /// The pinned toolchain's rustc.
    pub rustc: PathBuf,
    /// LLVM's IR disassembler (bitcode to text).
    pub llvm_dis: PathBuf,
    /// LLVM's static compiler (IR to an AMDGPU object).
    pub llc: PathBuf,
    /// LLVM's optimizer (runs single IR passes on the post-LTO module).
    pub opt: PathBuf,
    /// The linker rustc ships.
    pub rust_lld: PathBuf,
    /// The toolchain's sysroot.
    pub sysroot: PathBuf,
}

impl Tools {
    /// Finds [`TOOLCHAIN`] and its tools through rustup. A missing toolchain or component is
    /// installed (one line says so) unless `RUSTUP_AUTO_INSTALL=0`; then the error names the
    /// command to run.
    pub fn locate() -> Result<Tools> {
        let rustc = match rustup_which("rustc")? {
            Some(rustc) => rustc,
            None => {
                install(
                    &format!("the toolchain {TOOLCHAIN}"),
                    &[
                        "toolchain",
                        "install",
                        TOOLCHAIN,
                        "--profile",
                        "minimal",
                        "--component",
                        &COMPONENTS.join(","),
                    ],
                )?;
                rustup_which("rustc")?.ok_or_else(|| {
                    crate::Error::new(format!(
                        "rustup installed {TOOLCHAIN} but cannot find its rustc"
                    ))
                })?
            }
        };
        let cargo = rustup_which("cargo")?
            .ok_or_else(|| crate::Error::new(format!("the toolchain {TOOLCHAIN} has no cargo")))?;
        let sysroot = PathBuf::from(
            String::from_utf8_lossy(&run(clean(&rustc).args(["--print", "sysroot"]))?).trim(),
        );
        let bin = sysroot
            .join("lib/rustlib")
            .join(host_triple(&rustc)?)
            .join("bin");
        let has_components = || {
            bin.join("llvm-dis").is_file()
                && sysroot
                    .join("lib/rustlib/src/rust/library/core/Cargo.toml")
                    .is_file()
        };
        if !has_components() {
            let mut args = vec!["component", "add", "--toolchain", TOOLCHAIN];
            args.extend(COMPONENTS);
            install(
                &format!("the components {} of {TOOLCHAIN}", COMPONENTS.join(", ")),
                &args,
            )?;
            if !has_components() {
                bail!(
                    "{TOOLCHAIN} still lacks {} after `rustup {}`",
                    COMPONENTS.join(" or "),
                    args.join(" ")
                );
            }
        }
        let tool = |name: &str| -> Result<PathBuf> {
            let path = bin.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                bail!(
                    "`{name}` is missing from {}: reinstall the component with `rustup component \
                     add --toolchain {TOOLCHAIN} llvm-tools`",
                    bin.display()
                )
            }
        };
        Ok(Tools {
            llvm_dis: tool("llvm-dis")?,
            llc: tool("llc")?,
            opt: tool("opt")?,
            rust_lld: tool("rust-lld")?,
            cargo,
            rustc,
            sysroot,
        })
    }

    /// `program` with the caller's toolchain variables cleared and the pinned toolchain chosen.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = clean(program);
        command.env("RUSTC", &self.rustc);
        command
    }

    /// The pinned cargo, as [`Tools::command`] makes it.
    pub fn cargo(&self) -> Command {
        self.command(&self.cargo)
    }
}

/// `program` with an environment cleared of the variables cargo and rustup hand to build
/// scripts and to the programs they run (see [`Tools`]), and with `RUSTUP_TOOLCHAIN` set to
/// [`TOOLCHAIN`].
fn clean(program: impl AsRef<OsStr>) -> Command {
    let mut command = outside_command(program);
    command.env("RUSTUP_TOOLCHAIN", TOOLCHAIN);
    command
}

/// `program` with an environment cleared of the variables cargo and rustup hand to build
/// scripts and to the programs they run: a `cargo` made with it uses the toolchain its directory
/// chooses (`rust-toolchain.toml`, else rustup's default), as it would in a fresh shell.
pub fn outside_command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(inherited) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether an environment variable belongs to the calling build rather than to the user:
/// cargo's and rustc's own (`CARGO`, `CARGO_PKG_*`, `RUSTC`, `RUSTFLAGS`, ...), rustup's
/// toolchain choice, and a build script's `TARGET`, `OUT_DIR` and the like. The user's cargo
/// settings for the network, registries, terminal, incremental cache and debug builds are kept;
/// release settings are not, since device code compiles in the release profile with settings of
/// its own.
fn inherited(name: &str) -> bool {
    const KEPT: [&str; 8] = [
        "CARGO_HOME",
        "CARGO_INCREMENTAL",
        "CARGO_PROFILE_DEV_",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTRIES_",
        "CARGO_REGISTRY_",
        "CARGO_TERM_",
    ];
    const BUILD_SCRIPT: [&str; 7] = [
        "TARGET",
        "HOST",
        "OUT_DIR",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "NUM_JOBS",
    ];
    if name.starts_with("CARGO") {
        return !KEPT.iter().any(|kept| name.starts_with(kept));
    }
    name.starts_with("RUSTC")
        || name.starts_with("RUSTDOC")
        || name.starts_with("RUSTUP_TOOLCHAIN")
        || name.starts_with("__CARGO")
        || name.starts_with("DEP_")
        || name == "RUSTFLAGS"
        || BUILD_SCRIPT.contains(&name)
}

/// The path of `program` in [`TOOLCHAIN`], or `None` when rustup does not have the toolchain.
fn rustup_which(program: &str) -> Result<Option<PathBuf>> {
    let out = clean("rustup")
        .args(["which", "--toolchain", TOOLCHAIN, program])
        .output()
        .map_err(|e| {
            crate::Error::new(format!(
                "device crates compile with the toolchain {TOOLCHAIN}, found through rustup, \
                 and `rustup` cannot run ({e}): install rustup from https://rustup.rs"
            ))
        })?;
    if out.status.success() {
        Ok(Some(PathBuf::from(
            String::from_utf8_lossy(&out.stdout).trim(),
        )))
    } else {
        Ok(None)
    }
}

/// Installs `what` with `rustup <args>`, saying so, unless the user turned rustup's automatic
/// installs off (`RUSTUP_AUTO_INSTALL=0`): then the error names the command.
fn install(what: &str, args: &[&str]) -> Result<()> {
    let command = format!("rustup {}", args.join(" "));
    if std::env::var("RUSTUP_AUTO_INSTALL").is_ok_and(|v| v == "0" || v == "false") {
        bail!(
            "device crates compile with {what}, which is not installed (and \
             RUSTUP_AUTO_INSTALL=0): run `{command}`"
        );
    }
    eprintln!("installing {what} for the device build: {command}");
    let status = clean("rustup")
        .args(args)
        .status()
        .context(|| format!("cannot run `{command}`"))?;
    if !status.success() {
        bail!("`{command}` failed ({status}): run it by hand to see why");
    }
    Ok(())
}

fn host_triple(rustc: &Path) -> Result<String> {
    let out = run(clean(rustc).arg("-vV"))?;
    String::from_utf8_lossy(&out)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| crate::Error::new("`rustc -vV` printed no host triple"))
}

/// Runs `cmd`, failing with its stderr when it exits non-zero.
pub fn run(cmd: &mut Command) -> Result<Vec<u8>> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd.output().context(|| format!("cannot run {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::inherited;

    #[test]
    fn the_calling_builds_variables_are_cleared_and_the_users_kept() {
        for name in [
            "CARGO",
            "CARGO_PKG_NAME",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_MAKEFLAGS",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET",
            "CARGO_PROFILE_RELEASE_LTO",
            "RUSTC",
            "RUSTC_WRAPPER",
            "RUSTDOC",
            "RUSTFLAGS",
            "RUSTUP_TOOLCHAIN",
            "RUSTUP_TOOLCHAIN_SOURCE",
            "OUT_DIR",
            "TARGET",
            "DEP_Z_INCLUDE",
        ] {
            assert!(inherited(name), "{name}");
        }
        for name in [
            "CARGO_HOME",
            "CARGO_NET_OFFLINE",
            "CARGO_HTTP_PROXY",
            "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
            "CARGO_INCREMENTAL",
            "CARGO_PROFILE_DEV_DEBUG",
            "RUSTUP_HOME",
            "RUSTUP_AUTO_INSTALL",
            "PATH",
            "HOME",
            "RUST_BACKTRACE",
        ] {
            assert!(!inherited(name), "{name}");
        }
    }
}
