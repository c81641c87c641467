//! `cargo xtask bench`: the criterion benchmarks. With a HIP device, the kernel library on it
//! (`xtask/benches/library.rs`: achieved bandwidth or FLOP/s and the fraction of the device's
//! peak); then, device or not, the host-side benchmarks: the number-format codecs
//! (`device/quant/benches/codecs.rs`), code-object parsing (`host/benches/code_object.rs`) and
//! emulator throughput (`host/emu/benches/throughput.rs`). `--peer triton` runs the peer
//! benchmark instead ([`peer`]): Iron against Triton on the emulator, no GPU needed.

pub mod peer;

use crate::build;
use anyhow::{Result, bail};
use std::path::Path;

/// The gfx the host-side benchmarks build code for when no build is there yet.
const HOST_BENCH_GFX: &str = "gfx950";

/// Runs every benchmark this machine can run; `quick` asks criterion for its short mode.
pub fn run(root: &Path, quick: bool) -> Result<()> {
    let iron_dir = build::target_dir(root).join("iron");
    let bench = |package: &str, name: &str, env: &[(&str, &Path)]| -> Result<()> {
        let mut cargo = build::workspace_cargo(root)?;
        cargo.args(["bench", "-p", package, "--bench", name]);
        if quick {
            cargo.args(["--", "--quick"]);
        }
        for (key, value) in env {
            cargo.env(key, value);
        }
        if !cargo.status()?.success() {
            bail!("the {package} benchmark `{name}` failed");
        }
        Ok(())
    };
    match hip_gfx() {
        Ok((name, gfx)) => {
            eprintln!("HIP device: {name} ({gfx}); building the library for it");
            build::device_crate(root, &build::library_dir(root), &gfx, &iron_dir)?;
            bench("xtask", "library", &[("IRON_ARTIFACTS", &iron_dir)])?;
        }
        Err(reason) => eprintln!(
            "no HIP device ({reason}): the kernel benchmarks need one and do not run here; \
             running the host-side benchmarks only"
        ),
    }
    if !iron_dir.join("kernels.bundle").is_file() {
        eprintln!(
            "no library build in {}: building {HOST_BENCH_GFX}",
            iron_dir.display()
        );
        build::device_crate(root, &build::library_dir(root), HOST_BENCH_GFX, &iron_dir)?;
    }
    let emu_objects = build::target_dir(root).join("iron/bench-emu");
    build_emulator_kernels(root, &emu_objects)?;
    bench("iron-quant", "codecs", &[])?;
    bench("iron", "code_object", &[("IRON_ARTIFACTS", &iron_dir)])?;
    bench(
        "iron-emu",
        "throughput",
        &[("IRON_EMU_TEST_OBJECTS", &emu_objects)],
    )
}

/// The name and gfx of the first HIP device, or why there is none.
fn hip_gfx() -> Result<(String, String), String> {
    let devices = iron::Device::hip_devices().map_err(|e| e.to_string())?;
    let device = devices.first().ok_or("the HIP runtime reports no device")?;
    let properties = device.properties();
    Ok((properties.name.clone(), properties.target.processor.clone()))
}

/// Builds the emulator's Rust test kernels for [`HOST_BENCH_GFX`] as
/// `<out>/rust_kernels_<gfx>.elf`, the file the throughput benchmark runs.
fn build_emulator_kernels(root: &Path, out: &Path) -> Result<()> {
    let built = out.join("rust");
    build::device_crate(
        root,
        &root.join("host/emu/tests/data/rust"),
        HOST_BENCH_GFX,
        &built,
    )?;
    std::fs::copy(
        built.join(HOST_BENCH_GFX).join("kernels.co"),
        out.join(format!("rust_kernels_{HOST_BENCH_GFX}.elf")),
    )?;
    Ok(())
}
