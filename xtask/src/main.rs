//! `cargo xtask`: Iron's build, test and inspection commands.
//!
//! - `cargo xtask build --gfx <LIST> [--wave 32|64] [--kernels <CRATE_DIR>]`: builds the device
//!   kernels for each target (through `iron-build`), writes `target/iron/<target>/kernels.co`,
//!   `target/iron/kernels.bundle` and `target/iron/manifest.json` (another crate's under
//!   `target/iron/<package>/`), and prints a resource table.
//! - `cargo xtask test`: builds every target and runs every test of the workspace, the code-object
//!   checks included.
//! - `cargo xtask emu run <CODE_OBJECT> --kernel <NAME> --grid .. --block .. [--arg ..]`: runs
//!   one kernel of any code object on the emulator.
//! - `cargo xtask report [--gfx <LIST>] [--device <NAME>] [--smoke] [--strict] [--update-budget]`:
//!   the performance report (static resources, emulated traffic, roofline bounds, the
//!   instruction budget) under `target/iron/report/`.
//! - `cargo xtask bench [--quick]`: the criterion benchmarks: the kernel library on a HIP device
//!   when there is one, and the host-side benchmarks. `cargo xtask bench --peer triton [--gfx
//!   <LIST>] [--smoke] [--large] [--only <TEXT>]`: Iron against Triton on the emulator, under
//!   `target/iron/peer/`.
//! - `cargo xtask bindgen-hip`: regenerates the committed HIP runtime bindings.
//! - `cargo xtask doc-device [--gfx <LIST>]`: documents `iron-intrinsics` as the GPU sees it
//!   (its GPU-only modules), under `target/iron-device-doc/<target>/doc/`.
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    reason = "the command-line arguments' doc comments are their help text, written for a terminal"
)]

mod bench;
mod build;
mod emu_args;
mod emu_run;
mod emu_test_objects;
mod hip_bindgen;
mod packaging;
mod prerequisites;
mod projects;
mod report;
mod rocm_corpus;
mod test;

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

/// A peer compiler `cargo xtask bench --peer` compares Iron with.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Peer {
    /// Triton's AMD backend (a pinned `triton` from PyPI).
    Triton,
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
        /// Build this device crate instead of the kernel library (into
        /// `<target dir>/iron/<package>` unless --out-dir says otherwise).
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
    /// Run kernels on the emulator.
    Emu {
        #[command(subcommand)]
        command: EmuCmd,
    },
    /// Report every library kernel's resources, emulated memory traffic and roofline bounds.
    Report {
        /// Targets, as for `build` (default: all, or the device's gfx with --device).
        #[arg(long, value_name = "LIST")]
        gfx: Option<String>,
        /// Estimate for this device only (e.g. MI300X, "RX 7900 XTX").
        #[arg(long, value_name = "NAME")]
        device: Option<String>,
        /// Small shapes: a quick check for CI.
        #[arg(long)]
        smoke: bool,
        /// Use the build in this directory instead of building first.
        #[arg(long, value_name = "DIR")]
        artifacts: Option<PathBuf>,
        /// Fail when a kernel misses a target without a known exception, or an operation could
        /// not run (the outputs are written first).
        #[arg(long)]
        strict: bool,
        /// Write this report's wave-instructions per run as the instruction budget
        /// (xtask/src/report/instruction_budget.json) instead of judging the runs against it.
        #[arg(long)]
        update_budget: bool,
    },
    /// Run the criterion benchmarks: the kernel library on a HIP device, and the host side.
    /// With `--peer triton`: Iron against Triton's AMD backend on the emulator instead (no GPU
    /// needed; installs a pinned Triton in a venv under target/iron/peer on first use).
    Bench {
        /// Criterion's short mode (fewer, shorter samples).
        #[arg(long)]
        quick: bool,
        /// Compare with a peer compiler instead: Triton equivalents of the library's
        /// operations compiled offline per gfx, both sides run on the emulator at the same
        /// shapes and checked against a CPU reference; writes target/iron/peer/peer.md and
        /// peer.json.
        #[arg(long, value_name = "PEER")]
        peer: Option<Peer>,
        /// With --peer: the targets, as for `build`.
        #[arg(long, value_name = "LIST", default_value = bench::peer::DEFAULT_GFX, requires = "peer")]
        gfx: String,
        /// With --peer: tiny shapes and Triton's default configurations only (the test suite's
        /// run).
        #[arg(long, requires = "peer")]
        smoke: bool,
        /// With --peer: GEMM at 1024^3 too.
        #[arg(long, requires = "peer")]
        large: bool,
        /// With --peer: use the library build in this directory instead of building first.
        #[arg(long, value_name = "DIR", requires = "peer")]
        artifacts: Option<PathBuf>,
        /// With --peer: only the workloads whose label contains this text (e.g. `softmax`,
        /// `gemm f16`).
        #[arg(long, value_name = "TEXT", requires = "peer")]
        only: Option<String>,
    },
    /// Regenerate host/hip-runtime-sys's bindings from the HIP C headers (needs the Debian
    /// packages libamdhip64-dev and libclang-dev).
    BindgenHip,
    /// Document the device vocabulary (iron-intrinsics) as the GPU sees it: its GPU-only
    /// modules (ids, waves, LDS, atomics, matrix fragments, print), for each gfx given.
    DocDevice {
        /// Targets, as for `build`.
        #[arg(long, value_name = "LIST", default_value = "gfx950,gfx1100")]
        gfx: String,
    },
}

#[derive(Subcommand)]
enum EmuCmd {
    /// Run one kernel of a code object or offload bundle (Iron's or any other compiler's).
    Run {
        /// The code object or offload bundle.
        code_object: PathBuf,
        /// The kernel's name.
        #[arg(long)]
        kernel: String,
        /// Workgroups, as hipModuleLaunchKernel counts them: X[,Y[,Z]].
        #[arg(long, value_name = "X[,Y[,Z]]")]
        grid: String,
        /// Work-items per workgroup: X[,Y[,Z]].
        #[arg(long, value_name = "X[,Y[,Z]]")]
        block: String,
        /// Dynamic LDS bytes.
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        lds: u32,
        /// The gfx to emulate (picks the bundle entry; one entry needs none).
        #[arg(long)]
        gfx: Option<String>,
        /// Where buffer argument I (buf: or ptr:) is written back, as arg<I>.bin.
        #[arg(long, value_name = "DIR", default_value = ".")]
        out_dir: PathBuf,
        /// Print the profiler counters.
        #[arg(long)]
        stats: bool,
        /// Print every executed instruction with its wave and PC.
        #[arg(long)]
        trace: bool,
        /// Stop after this many wave-instructions (default 2e9): a kernel that does not finish
        /// then reports where each of its waves stood.
        #[arg(long, value_name = "WAVE_INSTRUCTIONS")]
        budget: Option<u64>,
        /// How waves interleave: `random:SEED` (every workgroup that fits resident, waves
        /// picked by a generator with this seed), `random` (the default seed) or `in-order`
        /// (one workgroup at a time, in id order).
        #[arg(long, value_name = "SCHEDULE")]
        schedule: Option<iron_emu::Schedule>,
        /// Compute units (CDNA) or WGPs (RDNA) of the emulated device (default: the target's
        /// largest product), which decide how many workgroups are resident at once.
        #[arg(long, value_name = "N")]
        compute_units: Option<u32>,
        /// Estimate the dispatch's time on a device with the emulator's cycle model (it then runs
        /// on one host thread) and print it with where the waves waited.
        #[arg(long)]
        timing: bool,
        /// The device to estimate for (`MI300X`, `MI355X`, `RX 7900 XTX`, ...; case and spaces
        /// ignored); default: the gfx's first. Implies --timing.
        #[arg(long, value_name = "NAME")]
        device: Option<String>,
        /// Host threads that run the dispatch (default: one per core; a traced run uses one).
        /// With one, a `random` schedule repeats exactly.
        #[arg(long, value_name = "N")]
        threads: Option<u32>,
        /// Sanitizer checks: `all` (the default), `none`, or a comma-separated list of `race`
        /// (an LDS race between two waves of a workgroup, or a global memory race between two
        /// waves with no barrier or release and acquire ordering them, is an error naming both;
        /// `lds-race` and `global-race` pick one), `sync`
        /// (waves of a workgroup waiting at different barriers is an error naming their PCs)
        /// `init` (a read of LDS, scratch or device memory never written is an error) and
        /// `wait` (a register used before the wait for the load that writes it is an error),
        /// `buffers` (an access to a buffer no pointer argument points into is an error) and
        /// `wgp` (in WGP mode, a read of another wave's global store without release and
        /// acquire is an error).
        #[arg(long, value_name = "CHECKS")]
        check: Option<iron_emu::Checks>,
        /// A kernel argument, in order, checked against the kernel's metadata (kind and size):
        /// buf:<PATH> (a pointer to a buffer holding the file), ptr:<PATH> (that buffer's address
        /// as an 8-byte integer: intptr_t, uintptr_t, size_t), u8:<N>, i8:<N>, u16:<N>, i16:<N>,
        /// u32:<N>, i32:<N>, u64:<N>, i64:<N> (decimal or 0x hex), bool:<true|false|1|0>,
        /// f32:<X>, f64:<X>, bytes:<HEX> (raw bytes in memory order, two hex digits each, e.g. a
        /// struct by value with its padding).
        #[arg(long = "arg", value_name = "SPEC")]
        args: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    let result: Result<()> = (|| {
        let cwd = std::env::current_dir()?;
        let root = workspace_root();
        std::env::set_current_dir(&root)?;
        match cli.command {
            Cmd::Build {
                gfx,
                wave,
                kernels,
                out_dir,
                verbose,
            } => build::run(
                &root,
                build::Request {
                    gfx,
                    wave,
                    kernels: kernels.map(|dir| cwd.join(dir)),
                    out_dir: out_dir.map(|dir| cwd.join(dir)),
                    verbose,
                },
            ),
            Cmd::Test => test::run_all(&root),
            Cmd::BindgenHip => hip_bindgen::run(&root),
            Cmd::DocDevice { gfx } => {
                for gfx in gfx.split(',') {
                    let index = build::document_device(&root, gfx, false)?;
                    println!("{gfx}: {}", index.display());
                }
                Ok(())
            }
            Cmd::Bench {
                peer: Some(Peer::Triton),
                gfx,
                smoke,
                large,
                artifacts,
                only,
                ..
            } => bench::peer::run(
                &root,
                &bench::peer::Options {
                    gfx,
                    smoke,
                    large,
                    artifacts: artifacts.map(|a| cwd.join(a)),
                    only,
                },
            ),
            Cmd::Bench { quick, .. } => bench::run(&root, quick),
            Cmd::Report {
                gfx,
                device,
                smoke,
                artifacts,
                strict,
                update_budget,
            } => report::run(
                &root,
                &report::Options {
                    gfx,
                    device,
                    smoke,
                    artifacts: artifacts.map(|a| cwd.join(a)),
                    strict,
                    update_budget,
                },
            ),
            Cmd::Emu {
                command:
                    EmuCmd::Run {
                        code_object,
                        kernel,
                        grid,
                        block,
                        lds,
                        gfx,
                        out_dir,
                        stats,
                        trace,
                        budget,
                        schedule,
                        compute_units,
                        timing,
                        device,
                        threads,
                        check,
                        args,
                    },
            } => emu_run::run(&emu_run::RunRequest {
                code_object: cwd.join(code_object),
                kernel,
                grid,
                block,
                lds,
                gfx,
                out_dir: cwd.join(out_dir),
                stats,
                trace,
                budget,
                schedule,
                compute_units,
                timing: (timing || device.is_some()).then_some(device),
                threads,
                checks: check,
                args: args
                    .iter()
                    .map(|a| emu_args::resolve_path(a, &cwd))
                    .collect(),
            }),
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
