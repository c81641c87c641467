//! The builds of the test kernels the tests run, and how their waves behave.

/// One build of the test kernels (Rust: `rust_kernels_<name>.elf`, HIP: `hip_kernels_<name>.co`).
pub struct Variant {
    /// Name of the build.
    pub name: &'static str,
    /// Lanes per wave.
    pub lanes: usize,
    /// Lanes a `ds_bpermute`/`ds_permute` lane index wraps around (gfx1100: 32 in both wave
    /// sizes, within the lane's own half of a wave64).
    pub permute_wrap: usize,
    /// An RDNA build (the HIP kernels take their RDNA branches).
    pub rdna: bool,
}

/// The CDNA builds.
pub const CDNA: [Variant; 3] = [
    Variant {
        name: "gfx90a",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
    Variant {
        name: "gfx942",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
    Variant {
        name: "gfx950",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
];

/// The CDNA builds with the first kernel arguments preloaded into user SGPRs
/// (`-mllvm -amdgpu-kernarg-preload-count=16`, `hip_kernels_preload_<gfx>.co`).
pub const CDNA_PRELOAD: [Variant; 3] = [
    Variant {
        name: "preload_gfx90a",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
    Variant {
        name: "preload_gfx942",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
    Variant {
        name: "preload_gfx950",
        lanes: 64,
        permute_wrap: 64,
        rdna: false,
    },
];

/// The RDNA builds, wave32 and wave64.
pub const RDNA: [Variant; 4] = [
    Variant {
        name: "gfx1100",
        lanes: 32,
        permute_wrap: 32,
        rdna: true,
    },
    Variant {
        name: "gfx1201",
        lanes: 32,
        permute_wrap: 32,
        rdna: true,
    },
    Variant {
        name: "gfx1100_w64",
        lanes: 64,
        permute_wrap: 32,
        rdna: true,
    },
    Variant {
        name: "gfx1201_w64",
        lanes: 64,
        permute_wrap: 64,
        rdna: true,
    },
];

/// Whether a test object exists; when it does not, says so (the RDNA builds exist once
/// `cargo xtask test` builds the test kernels for the RDNA targets).
pub fn built(path: &std::path::Path) -> bool {
    let exists = path.exists();
    if !exists {
        super::skip(&format!("{}: not built", path.display()));
    }
    exists
}
