//! `cargo xtask`: Iron's build, test and inspection commands.
//!
//! - `cargo xtask build --gfx <LIST> [--wave 32|64] [--kernels <CRATE_DIR>]`: builds the device
//!   kernels for each target, writes `target/iron/<target>/kernels.co`, `target/iron/kernels.bundle`
//!   and `target/iron/manifest.json`, and prints a resource table.
//! - `cargo xtask test`: builds every target and runs every test of the workspace, the code-object
//!   checks included.
//! - `cargo xtask bindgen-hip`: regenerates the committed HIP runtime bindings.

mod build;
mod device_build;
mod gfx;
mod hip_bindgen;
mod manifest;
mod post_lto;
mod resources;
mod spec;
mod test;
mod toolchain;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, test and inspect Iron's device code"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the kernels for one or more gfx targets.
    Build {
        /// Targets: gfx90a, gfx942, gfx950, gfx1100, gfx1201, a comma list, or `all`. An entry
        /// may carry a wave size: `gfx1100:w64`.
        #[arg(long, value_name = "LIST")]
        gfx: String,
        /// Wave size for RDNA targets without their own suffix (CDNA is always 64).
        #[arg(long, value_name = "32|64")]
        wave: Option<u32>,
        /// Build this device crate instead of the kernel library.
        #[arg(long, value_name = "CRATE_DIR")]
        kernels: Option<PathBuf>,
        /// Write the code objects, bundle and manifest here instead of `<target dir>/iron`.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Show the compiler's full output.
        #[arg(long)]
        verbose: bool,
    },
    /// Build every target and run every test.
    Test,
    /// Regenerate host/hip-runtime-sys's bindings from the HIP C headers (needs the Debian
    /// packages libamdhip64-dev and libclang-dev).
    BindgenHip,
}

fn main() {
    let cli = Cli::parse();
    let result: Result<()> = (|| {
        let root = workspace_root();
        std::env::set_current_dir(&root)?;
        match cli.command {
            Cmd::Build {
                gfx,
                wave,
                kernels,
                out_dir,
                verbose,
            } => {
                let targets = gfx::parse_targets(&gfx, wave)?;
                let krate = match kernels {
                    Some(dir) => build::external_crate(&dir)?,
                    None => device_build::library_crate(&root),
                };
                let out_dir = out_dir.unwrap_or_else(|| build::target_dir(&root).join("iron"));
                build::build(&root, &krate, &targets, &out_dir, verbose).map(drop)
            }
            Cmd::Test => test::run_all(&root),
            Cmd::BindgenHip => hip_bindgen::run(&root),
        }
    })();
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}
