//! Shared helpers of Iron's integration tests: where the build's outputs are and how to read the
//! build manifest.

pub mod devices;
pub mod fixtures;
pub mod oracle;

use std::path::PathBuf;

/// One kernel row of `target/iron/manifest.json`.
#[derive(Debug, Clone)]
pub struct ManifestKernel {
    /// Kernel name.
    pub name: String,
    /// Max work-items declared with `#[kernel]`.
    pub declared_max_threads: u32,
    /// Whether scratch is allowed.
    pub allow_scratch: bool,
}

/// One target of the manifest.
#[derive(Debug, Clone)]
pub struct ManifestTarget {
    /// gfx name.
    pub gfx: String,
    /// Wave size built.
    pub wave: u32,
    /// Absolute path of the code object.
    pub code_object: PathBuf,
    /// Its kernels.
    pub kernels: Vec<ManifestKernel>,
}

/// The build outputs `cargo xtask test` hands the tests.
pub struct Artifacts {
    /// `target/iron`.
    pub dir: PathBuf,
    /// Every target of the manifest.
    pub targets: Vec<ManifestTarget>,
}

impl Artifacts {
    /// Reads the build manifest from the directory `cargo xtask test` names in `IRON_ARTIFACTS`.
    ///
    /// Panics with instructions when the variable is not set: the tests using this are
    /// `#[ignore]`d under plain `cargo test` and run by `cargo xtask test`.
    pub fn load() -> Artifacts {
        let dir = PathBuf::from(
            std::env::var_os("IRON_ARTIFACTS")
                .expect("IRON_ARTIFACTS is not set: run these tests with `cargo xtask test`"),
        );
        let text = std::fs::read_to_string(dir.join("manifest.json"))
            .expect("cannot read manifest.json: run `cargo xtask test`");
        let json: serde_json::Value = serde_json::from_str(&text).expect("manifest is JSON");
        let targets = json["targets"]
            .as_array()
            .expect("manifest lists targets")
            .iter()
            .map(|t| ManifestTarget {
                gfx: t["gfx"].as_str().expect("gfx").to_string(),
                wave: t["wave"].as_u64().expect("wave") as u32,
                code_object: dir.join(t["code_object"].as_str().expect("code_object")),
                kernels: t["kernels"]
                    .as_array()
                    .expect("kernels")
                    .iter()
                    .map(|k| ManifestKernel {
                        name: k["name"].as_str().expect("name").to_string(),
                        declared_max_threads: k["declared_max_threads"].as_u64().expect("bounds")
                            as u32,
                        allow_scratch: k["allow_scratch"].as_bool().expect("allow_scratch"),
                    })
                    .collect(),
            })
            .collect();
        Artifacts { dir, targets }
    }
}
