//! The programs a device build runs: cargo, and the LLVM tools of the pinned toolchain's
//! `llvm-tools` component.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Paths of the tools the build uses.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The cargo of the running toolchain.
    pub cargo: PathBuf,
    /// The rustc of the running toolchain.
    pub rustc: PathBuf,
    /// LLVM's IR disassembler (bitcode to text).
    pub llvm_dis: PathBuf,
    /// LLVM's static compiler (IR to AMDGPU object).
    pub llc: PathBuf,
    /// The linker rustc ships.
    pub rust_lld: PathBuf,
}

impl Tools {
    /// Finds the tools of the toolchain `rust-toolchain.toml` pins.
    pub fn locate() -> Result<Tools> {
        let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
        let rustc = std::env::var_os("RUSTC").map_or_else(|| PathBuf::from("rustc"), PathBuf::from);
        let out = Command::new(&rustc)
            .args(["--print", "sysroot"])
            .output()
            .with_context(|| format!("cannot run `{}`: is rustup installed?", rustc.display()))?;
        if !out.status.success() {
            bail!(
                "`rustc --print sysroot` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let bin = sysroot
            .join("lib/rustlib")
            .join(host_triple(&rustc)?)
            .join("bin");
        let tool = |name: &str| -> Result<PathBuf> {
            let path = bin.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                bail!(
                    "`{name}` is missing from {}: install the component with \
                     `rustup component add llvm-tools`",
                    bin.display()
                )
            }
        };
        Ok(Tools {
            llvm_dis: tool("llvm-dis")?,
            llc: tool("llc")?,
            rust_lld: tool("rust-lld")?,
            cargo,
            rustc,
        })
    }
}

fn host_triple(rustc: &Path) -> Result<String> {
    let out = Command::new(rustc).arg("-vV").output()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("`rustc -vV` printed no host triple")
}

/// Runs `cmd`, failing with its stderr when it exits non-zero.
pub fn run(cmd: &mut Command) -> Result<Vec<u8>> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{:?} failed ({}):\n{}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(out.stdout)
}
