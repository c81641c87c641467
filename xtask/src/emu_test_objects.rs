//! The emulator's test kernels, built from source for every emulated target (CDNA, and RDNA in
//! wave32 and wave64) before the tests run: Rust kernels (`host/emu/tests/data/rust`), HIP C++
//! kernels compiled by clang-22 (every `host/emu/tests/data/src/*.hip`; on CDNA also with kernel
//! arguments preloaded into SGPRs), an MFMA probe in
//! LLVM IR (`host/emu/tests/data/src/mfma_scale.ll`), the MFMA and WMMA fragment probes of
//! `iron_intrinsics::matrix` (`tests/matrix-probe`) and the probes of the rest of the device
//! vocabulary (`tests/device-probe`).

use crate::build;
use anyhow::{Context, Result};
use iron_build::{Tools, parse_targets};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every build the emulator runs: CDNA, and RDNA in both wave sizes.
const EMULATED: &str = "gfx90a,gfx942,gfx950,gfx1100,gfx1201,gfx1100:w64,gfx1201:w64";

/// Builds every test kernel into `out` (`rust_kernels_<gfx>[_w64].elf`,
/// `<hip source>_<gfx>[_w64].co`, on CDNA `<hip source>_preload_<gfx>.co`,
/// `mfma_scale_gfx950.co`, `matrix-probe/<build>/kernels.co`, `device-probe/<build>/kernels.co`).
pub fn build_all(root: &Path, out: &Path) -> Result<()> {
    let data = root.join("host/emu/tests/data");
    std::fs::create_dir_all(out)?;
    let rust_out = out.join("rust");
    build::device_crate(root, &data.join("rust"), EMULATED, &rust_out)?;
    for probe in ["matrix-probe", "device-probe"] {
        build::device_crate(
            root,
            &root.join("tests").join(probe),
            EMULATED,
            &out.join(probe),
        )?;
    }
    let emulated = parse_targets(EMULATED, None)?;
    for target in emulated {
        let gfx = target.gfx.name;
        let wave64 = target.wave != target.gfx.default_wave();
        let suffix = if wave64 { "_w64" } else { "" };
        std::fs::copy(
            rust_out.join(target.dir_name()).join("kernels.co"),
            out.join(format!("rust_kernels_{gfx}{suffix}.elf")),
        )?;
        for source in hip_sources(&data.join("src"))? {
            let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("hip");
            compile_hip(
                &source,
                gfx,
                wave64,
                &[],
                &out.join(format!("{stem}_{gfx}{suffix}.co")),
            )?;
            if target.gfx.family_cfg() == "cdna" {
                compile_hip(
                    &source,
                    gfx,
                    wave64,
                    &["-mllvm", "-amdgpu-kernarg-preload-count=16"],
                    &out.join(format!("{stem}_preload_{gfx}.co")),
                )?;
            }
        }
    }
    let tools = Tools::locate()?;
    let object = out.join("mfma_scale_gfx950.o");
    iron_build::run(
        tools
            .command(&tools.llc)
            .args([
                "-O3",
                "-mcpu=gfx950",
                "-filetype=obj",
                "--amdhsa-code-object-version=5",
            ])
            .arg(data.join("src/mfma_scale.ll"))
            .arg("-o")
            .arg(&object),
    )?;
    iron_build::run(
        tools
            .command(&tools.rust_lld)
            .args(["-flavor", "gnu", "-shared"])
            .arg(&object)
            .arg("-o")
            .arg(out.join("mfma_scale_gfx950.co")),
    )?;
    std::fs::remove_file(object)?;
    Ok(())
}

/// The HIP C++ sources of the test kernels (`*.hip`), in name order.
fn hip_sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "hip") {
            sources.push(path);
        }
    }
    sources.sort();
    Ok(sources)
}

/// Compiles one HIP source for one target with clang-22 (`extra`: further compiler flags).
fn compile_hip(source: &Path, gfx: &str, wave64: bool, extra: &[&str], out: &Path) -> Result<()> {
    let mut clang = Command::new("clang-22");
    if wave64 {
        clang.arg("-mwavefrontsize64");
    }
    iron_build::run(
        clang
            .args([
                "-x",
                "hip",
                &format!("--offload-arch={gfx}"),
                "-nogpulib",
                "-nogpuinc",
            ])
            .args(["--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c"])
            .args(extra)
            .arg(source)
            .arg("-o")
            .arg(out),
    )
    .with_context(|| {
        format!(
            "compiling {} with clang-22 (Debian's clang-22 and lld-22)",
            source.display()
        )
    })
    .map(drop)
}
