//! What this build targets: gfx, family, wave size and matrix-core kind, as compile-time
//! constants from the cfgs `cargo xtask build` sets. Kernel code reads these instead of
//! hard-coding 32 or 64.
//!
//! On the host only [`WAVE`] exists, so that kernel bodies type-check there (see its docs).

/// Lanes per wave of this build: 64 on CDNA (gfx9), 32 or 64 on RDNA (gfx11/gfx12).
#[cfg(iron_wave = "32")]
pub const WAVE: u32 = 32;
/// Lanes per wave of this build: 64 on CDNA (gfx9), 32 or 64 on RDNA (gfx11/gfx12).
#[cfg(iron_wave = "64")]
pub const WAVE: u32 = 64;
/// Lanes per wave of this build: 64 on CDNA (gfx9), 32 or 64 on RDNA (gfx11/gfx12).
///
/// On the host, where kernel bodies are type-checked but never run, 64: host code that needs a
/// device's wave size asks the device.
#[cfg(not(target_arch = "amdgpu"))]
pub const WAVE: u32 = 64;

/// The gfx this build targets, e.g. `"gfx950"`.
#[cfg(iron_gfx = "gfx90a")]
pub const GFX: &str = "gfx90a";
/// The gfx this build targets, e.g. `"gfx950"`.
#[cfg(iron_gfx = "gfx942")]
pub const GFX: &str = "gfx942";
/// The gfx this build targets, e.g. `"gfx950"`.
#[cfg(iron_gfx = "gfx950")]
pub const GFX: &str = "gfx950";
/// The gfx this build targets, e.g. `"gfx950"`.
#[cfg(iron_gfx = "gfx1100")]
pub const GFX: &str = "gfx1100";
/// The gfx this build targets, e.g. `"gfx950"`.
#[cfg(iron_gfx = "gfx1201")]
pub const GFX: &str = "gfx1201";

#[cfg(all(
    target_arch = "amdgpu",
    not(all(
        any(iron_wave = "32", iron_wave = "64"),
        any(iron_family = "cdna", iron_family = "rdna"),
        any(iron_matrix = "mfma", iron_matrix = "wmma"),
        any(
            iron_gfx = "gfx90a",
            iron_gfx = "gfx942",
            iron_gfx = "gfx950",
            iron_gfx = "gfx1100",
            iron_gfx = "gfx1201"
        )
    ))
))]
compile_error!(
    "device crates are built by `cargo xtask build --gfx <GFX>`, which sets the target's cfgs \
     (iron_gfx, iron_family, iron_wave, iron_matrix)"
);
