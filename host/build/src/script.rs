//! What a build differs in when it runs inside a cargo build script: paths relative to the
//! package, outputs in `OUT_DIR`, and the `cargo::` directives that make cargo rerun it and
//! hand the bundle to the crate being built.

use std::path::{Path, PathBuf};

/// The environment cargo gives a build script.
#[derive(Debug, Clone)]
pub struct BuildScript {
    /// `CARGO_MANIFEST_DIR`: the package whose build script this is.
    pub manifest_dir: PathBuf,
    /// `OUT_DIR`: where the script may write.
    pub out_dir: PathBuf,
}

/// The variable that names the device build's cargo target directory, over the default.
pub const TARGET_DIR_ENV: &str = "IRON_DEVICE_TARGET_DIR";

/// The variable the host crate reads (through `iron::include_kernels!()`) to find the bundle
/// of the last device crate its build script built.
pub const BUNDLE_ENV: &str = "IRON_KERNELS";

impl BuildScript {
    /// The build script's environment, when this process is one (cargo sets `OUT_DIR` and
    /// `TARGET` for build scripts only).
    pub fn detect() -> Option<BuildScript> {
        let out_dir = std::env::var_os("OUT_DIR")?;
        std::env::var_os("TARGET")?;
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
        Some(BuildScript {
            manifest_dir: manifest_dir.into(),
            out_dir: out_dir.into(),
        })
    }

    /// The default cargo target directory of the device build: `iron-device` beside the host
    /// build's profile directories (`OUT_DIR` is `<target>/<profile>/build/<pkg>-<hash>/out`),
    /// so that it survives changes of the build script's hash and is shared by every package
    /// and profile of the workspace. It must not be the host build's own directory: the running
    /// cargo holds its lock.
    pub fn default_target_dir(&self) -> PathBuf {
        let profile_dir = self.out_dir.ancestors().nth(3).filter(|_| {
            self.out_dir.ancestors().nth(2).and_then(Path::file_name) == Some("build".as_ref())
        });
        match profile_dir.and_then(Path::parent) {
            Some(target) => target.join("iron-device"),
            None => self.out_dir.join("iron-device"),
        }
    }

    /// Tells cargo to rerun the build script when one of `files` or the variables the device
    /// build reads change.
    pub fn rerun_if_changed<'a>(&self, files: impl IntoIterator<Item = &'a Path>) {
        for file in files {
            println!("cargo::rerun-if-changed={}", file.display());
        }
        println!("cargo::rerun-if-env-changed={TARGET_DIR_ENV}");
    }

    /// Hands the bundle's path to the crate being built, as `env!("IRON_KERNELS")`.
    pub fn export_bundle(&self, bundle: &Path) {
        println!("cargo::rustc-env={BUNDLE_ENV}={}", bundle.display());
    }

    /// Shows a device compiler warning in cargo's output.
    pub fn warn(&self, warning: &str) {
        for line in warning.lines() {
            println!("cargo::warning={line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(out_dir: &str) -> BuildScript {
        BuildScript {
            manifest_dir: "/w/host".into(),
            out_dir: out_dir.into(),
        }
    }

    #[test]
    fn the_device_target_dir_sits_beside_the_profiles() {
        assert_eq!(
            script("/w/target/debug/build/host-0123abcd/out").default_target_dir(),
            PathBuf::from("/w/target/iron-device")
        );
        assert_eq!(
            script("/w/target/x86_64-unknown-linux-gnu/release/build/host-9/out")
                .default_target_dir(),
            PathBuf::from("/w/target/x86_64-unknown-linux-gnu/iron-device")
        );
        assert_eq!(
            script("/elsewhere/out").default_target_dir(),
            PathBuf::from("/elsewhere/out/iron-device")
        );
    }
}
