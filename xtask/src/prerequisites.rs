//! The programs and libraries outside the Rust toolchain that xtask commands need, checked before
//! anything is built: each missing one is installed when this machine allows it (as root, or
//! with password-less sudo, through apt-get; cargo tools through `cargo install`), with one line
//! saying what and why; otherwise the command stops at once, naming what to run.

use anyhow::{Result, bail};
use iron_build::outside_command;
use std::path::Path;
use std::process::{Command, Stdio};

/// Something a command needs.
pub struct Prerequisite {
    /// What it is, for the messages.
    pub name: &'static str,
    /// Why the command needs it.
    pub why: &'static str,
    /// Whether this machine has it.
    pub present: fn() -> bool,
    /// How to install it.
    pub install: Install,
}

/// How a prerequisite is installed.
pub enum Install {
    /// Debian packages (apt-get).
    Apt(&'static [&'static str]),
    /// A cargo tool at a pinned version (`cargo install --locked`).
    Cargo {
        /// The crate.
        krate: &'static str,
        /// Its version.
        version: &'static str,
    },
}

/// clang-22 and lld-22: the emulator's tests compile HIP C++ kernels, code Iron did not build.
pub const CLANG: Prerequisite = Prerequisite {
    name: "clang-22 and lld-22",
    why: "the emulator's tests compile HIP C++ kernels with them",
    present: || runs("clang-22", "--version") && runs("ld.lld-22", "--version"),
    install: Install::Apt(&["clang-22", "lld-22"]),
};

/// A HIP runtime library: the host's HIP path is tested against it (it reports no device here).
pub const HIP_RUNTIME: Prerequisite = Prerequisite {
    name: "a HIP runtime (libamdhip64)",
    why: "the tests load it through the host's HIP path, as on a ROCm machine",
    present: hip_runtime_present,
    install: Install::Apt(&["libamdhip64-5"]),
};

/// cargo-fuzz: the suite ends with a short run of every fuzz target.
pub const CARGO_FUZZ: Prerequisite = Prerequisite {
    name: "cargo-fuzz",
    why: "the test suite ends with a short run of every fuzz target",
    present: || runs("cargo", "fuzz --version"),
    install: Install::Cargo {
        krate: "cargo-fuzz",
        version: "0.13.2",
    },
};

/// The HIP C headers and libclang: `cargo xtask bindgen-hip` generates the HIP bindings from them.
pub const HIP_HEADERS: Prerequisite = Prerequisite {
    name: "the HIP headers and libclang",
    why: "bindgen reads the HIP headers with libclang",
    present: || {
        Path::new("/usr/include/hip/hip_runtime_api.h").is_file()
            && (dir_has("/usr/lib/x86_64-linux-gnu", "libclang") || dir_has("/usr/lib", "libclang"))
    },
    install: Install::Apt(&["libamdhip64-dev", "libclang-dev"]),
};

/// Whether `program args` runs and succeeds.
fn runs(program: &str, args: &str) -> bool {
    outside_command(program)
        .args(args.split_whitespace())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether `dir` holds a shared library whose name starts with `prefix`.
fn dir_has(dir: &str, prefix: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix) && n.contains(".so"))
        })
    })
}

/// Whether one of the HIP runtime libraries the host would try can be found: a named file, or
/// a soname in the dynamic linker's cache. (Loading it here would pin the answer for the rest of
/// the process.)
fn hip_runtime_present() -> bool {
    let cache = Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    hip_runtime_sys::library_candidates_from_env()
        .iter()
        .any(|candidate| match candidate.to_str() {
            Some(soname) if !soname.contains('/') => cache.contains(soname),
            _ => candidate.is_file(),
        })
}

/// Makes sure every prerequisite is present: installs the missing ones where possible, else
/// fails naming the commands to run.
pub fn ensure(prerequisites: &[&Prerequisite]) -> Result<()> {
    let missing: Vec<&Prerequisite> = prerequisites
        .iter()
        .copied()
        .filter(|p| !(p.present)())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let apt: Vec<&str> = missing
        .iter()
        .filter_map(|p| match p.install {
            Install::Apt(packages) => Some(packages),
            Install::Cargo { .. } => None,
        })
        .flatten()
        .copied()
        .collect();
    if !apt.is_empty() {
        install_apt(&missing, &apt)?;
    }
    for p in &missing {
        if let Install::Cargo { krate, version } = p.install {
            let command = format!("cargo install {krate} --locked --version {version}");
            eprintln!("installing {} ({}): {command}", p.name, p.why);
            // With the pinned toolchain, the one this machine is known to have.
            let ok = outside_command("cargo")
                .env("RUSTUP_TOOLCHAIN", iron_build::TOOLCHAIN)
                .args(["install", krate, "--locked", "--version", version])
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                bail!("installing {} failed: run `{command}`", p.name);
            }
        }
    }
    if let Some(p) = missing.iter().find(|p| !(p.present)()) {
        bail!(
            "{} is still missing after its installation ({})",
            p.name,
            p.why
        );
    }
    Ok(())
}

/// Installs Debian packages with apt-get, as root or through password-less sudo; fails with the
/// command when neither is possible.
fn install_apt(missing: &[&Prerequisite], packages: &[&str]) -> Result<()> {
    let command = format!("apt-get install -y {}", packages.join(" "));
    let why: Vec<String> = missing
        .iter()
        .filter(|p| matches!(p.install, Install::Apt(_)))
        .map(|p| format!("{} ({})", p.name, p.why))
        .collect();
    let sudo = if is_root() {
        None
    } else if runs("sudo", "-n true") {
        Some("sudo")
    } else {
        bail!(
            "missing: {}; install with `sudo {command}` (Debian/Ubuntu; elsewhere, the same \
             tools from your distribution), then run this command again",
            why.join(", ")
        );
    };
    if !runs("apt-get", "--version") {
        bail!(
            "missing: {}; this machine has no apt-get: install the equivalent of the Debian \
             packages {} and run this command again",
            why.join(", "),
            packages.join(" ")
        );
    }
    let apt = |args: &[&str]| -> Result<()> {
        let mut cmd = match sudo {
            Some(sudo) => {
                let mut cmd = Command::new(sudo);
                cmd.arg("-n").arg("apt-get");
                cmd
            }
            None => Command::new("apt-get"),
        };
        let out = cmd
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()?;
        if !out.status.success() {
            bail!(
                "`apt-get {}` failed ({}): {}; run `{}{command}` by hand to see why",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', "; "),
                sudo.map_or(String::new(), |s| format!("{s} "))
            );
        }
        Ok(())
    };
    eprintln!(
        "installing {} with apt-get: {}",
        packages.join(" "),
        why.join(", ")
    );
    apt(&["update", "-qq"])?;
    let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
    args.extend(packages);
    apt(&args)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
