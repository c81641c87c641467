//! `cargo xtask bench --peer triton`: Iron against Triton's AMD backend on the same work.
//!
//! For each gfx it compiles Triton equivalents of Iron's library operations offline
//! (`kernels.py`, in a venv with a pinned Triton made on first use, [`triton_env`]), with
//! Triton's default configuration and autotune-style variants; runs Iron's operation and every
//! Triton configuration on the emulator on the same seeded inputs ([`run`]), checks every output
//! against a CPU reference ([`oracle`]) and compares what the emulator counted and what the code
//! objects say ([`table`]). It writes `target/iron/peer/peer.md` and `peer.json` and prints the
//! Markdown. A wrong output on either side is shown in the table and fails the command.

mod oracle;
mod run;
mod table;
mod triton_env;
mod workloads;

use crate::build;
use crate::report::kernels::Scope;
use crate::report::{LoadedLibrary, load_library};
use anyhow::{Context, Result, bail};
use iron::library::GemmTile;
use iron_build::parse_targets;
use std::path::{Path, PathBuf};
use std::time::Instant;
use table::{Comparison, Results};
use workloads::{Dtype, Op, Prepared};

/// The gfx the benchmark covers unless told otherwise.
pub const DEFAULT_GFX: &str = "gfx942,gfx950,gfx1100";

/// What `cargo xtask bench --peer triton` was asked for.
pub struct Options {
    /// `--gfx`: the targets, as for `build`.
    pub gfx: String,
    /// `--smoke`: tiny shapes, the defaults only (the test suite's run).
    pub smoke: bool,
    /// `--large`: GEMM at 1024^3 too (both B layouts).
    pub large: bool,
    /// `--artifacts`: use the library build in this directory instead of building.
    pub artifacts: Option<PathBuf>,
    /// `--only`: keep the workloads whose label contains this text.
    pub only: Option<String>,
}

/// The workloads at the requested shapes.
fn ops(options: &Options) -> Vec<Op> {
    let (n, rows, cols, side, square, tokens, heads, seq) = if options.smoke {
        (1 << 14, 4, 512, 128, 128, 4, 1, 128)
    } else {
        (1 << 20, 64, 4096, 256, 1024, 256, 8, 256)
    };
    let mut ops = vec![
        Op::Add { n },
        Op::Cast {
            from: Dtype::F32,
            to: Dtype::F16,
            n,
        },
        Op::Cast {
            from: Dtype::F16,
            to: Dtype::F32,
            n,
        },
        Op::Cast {
            from: Dtype::F32,
            to: Dtype::Bf16,
            n,
        },
        Op::Sum { n },
        Op::RowSum { rows, cols },
        Op::Transpose {
            rows: square,
            cols: square,
        },
        Op::Rope {
            tokens,
            heads: 32,
            head_dim: 128,
        },
        Op::Softmax {
            dtype: Dtype::F16,
            rows,
            cols,
        },
        Op::Softmax {
            dtype: Dtype::F32,
            rows,
            cols,
        },
        Op::RmsNorm { rows, cols },
        Op::LayerNorm { rows, cols },
    ];
    for dtype in [Dtype::F16, Dtype::Bf16] {
        for b_col_major in [false, true] {
            ops.push(Op::Gemm {
                dtype,
                side,
                b_col_major,
            });
        }
    }
    for fnuz in [true, false] {
        ops.push(Op::GemmFp8 { side, fnuz });
    }
    for causal in [false, true] {
        ops.push(Op::Attention {
            heads,
            seq,
            head_dim: 64,
            causal,
        });
    }
    if options.large {
        for b_col_major in [false, true] {
            ops.push(Op::Gemm {
                dtype: Dtype::F16,
                side: 1024,
                b_col_major,
            });
        }
    }
    ops
}

/// Runs the peer benchmark.
pub fn run(root: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let targets = parse_targets(&options.gfx, None)?;
    let artifacts = match &options.artifacts {
        Some(dir) => dir.clone(),
        None => {
            let dir = build::target_dir(root).join("iron");
            build::device_crate(root, &build::library_dir(root), &options.gfx, &dir)?;
            dir
        }
    };
    let peer_dir = build::target_dir(root).join("iron/peer");
    let triton = triton_env::prepare(&peer_dir)?;
    let script = root.join("xtask/src/bench/peer/kernels.py");
    let mut all_ops = ops(options);
    if let Some(only) = &options.only {
        all_ops.retain(|op| op.label().contains(only.as_str()));
        if all_ops.is_empty() {
            bail!(
                "--only {only:?}: no workload's label contains it (labels look like \"softmax f16 64x4096\")"
            );
        }
    }
    let mut results = Results {
        triton_version: String::new(),
        fp_fusion: triton_env::FP_FUSION.into(),
        size: shapes(options),
        comparisons: Vec::new(),
    };
    for target in &targets {
        let label = target.dir_name();
        let gfx_started = Instant::now();
        let ops: Vec<Op> = all_ops
            .iter()
            .copied()
            .filter(|op| op.runs_on(target.gfx.name))
            .collect();
        let mut requests: Vec<serde_json::Value> = ops.iter().map(|op| op.request()).collect();
        if options.smoke {
            for r in &mut requests {
                r["default_only"] = true.into();
            }
        }
        eprintln!("peer: {target}: compiling the Triton kernels");
        let manifest = triton.compile(
            &script,
            target.gfx.name,
            target.wave,
            &requests,
            &peer_dir.join("triton").join(&label),
        )?;
        results.triton_version = manifest.triton_version.clone();
        let LoadedLibrary {
            processor,
            statics,
            emulator,
            library,
        } = load_library(&artifacts, *target)?;
        let bench = run::Bench {
            emulator: &emulator,
            device: library.device().clone(),
            scope: Scope {
                label: &label,
                processor: &processor,
                devices: &[],
                timed: &[],
            },
            timing: timing_devices(target.gfx.name),
        };
        for op in &ops {
            let id = op.id();
            let mut prepared = Prepared::new(library.device(), *op)?;
            eprintln!("peer: {label}: {} on Iron", op.label());
            let default = ("iron", GemmTile::Auto);
            let mut iron = vec![bench.iron(&library, &statics, &mut prepared, default)?];
            let other = op
                .gemm_shape()
                .and_then(|shape| op.other_iron_tile(library.auto_gemm_tile(shape)));
            if let Some(other) = other {
                eprintln!("peer: {label}: {} on Iron ({})", op.label(), other.0);
                iron.push(bench.iron(&library, &statics, &mut prepared, other)?);
            }
            let mut triton_sides = Vec::new();
            for compiled in manifest.kernels.iter().filter(|k| k.workload == id) {
                eprintln!(
                    "peer: {label}: {} on Triton {}",
                    op.label(),
                    compiled.config
                );
                triton_sides.push(bench.triton(compiled, &mut prepared)?);
            }
            results.comparisons.push(Comparison {
                gfx: label.clone(),
                workload: op.label(),
                iron,
                triton: triton_sides,
            });
        }
        eprintln!(
            "peer: {label} done in {:.0} s",
            gfx_started.elapsed().as_secs_f64()
        );
    }

    let md = table::render(&results);
    let md_path = peer_dir.join("peer.md");
    std::fs::write(&md_path, &md).with_context(|| format!("cannot write {}", md_path.display()))?;
    let json_path = peer_dir.join("peer.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&results)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    println!("{md}");
    eprintln!(
        "peer: {} and {} in {:.0} s",
        md_path.display(),
        json_path.display(),
        started.elapsed().as_secs_f64()
    );
    let wrong: Vec<String> = results
        .comparisons
        .iter()
        .flat_map(|c| {
            c.mismatches().map(move |s| {
                format!(
                    "{} {} {}: {}",
                    c.gfx,
                    c.workload,
                    s.config,
                    s.mismatch.as_deref().unwrap_or_default()
                )
            })
        })
        .collect();
    if !wrong.is_empty() {
        bail!(
            "outputs differ from the reference:\n  {}",
            wrong.join("\n  ")
        );
    }
    Ok(())
}

/// The shapes, as the table's header says them.
/// The devices `gfx`'s comparisons estimate their time on: every one the timing model has.
fn timing_devices(gfx: &str) -> Vec<&'static iron_emu::timing::Device> {
    iron_emu::Target::from_name(gfx)
        .map(|t| iron_emu::timing::Device::of_target(t).collect())
        .unwrap_or_default()
}

fn shapes(options: &Options) -> String {
    if options.smoke {
        "smoke: add, casts, sum 16384; rows 4x512; transpose 128^2; RoPE 4 tokens; GEMM 128^3; \
         attention 1x128x64; Triton defaults only"
            .into()
    } else {
        format!(
            "add, casts, sum 2^20; rows 64x4096; transpose 1024^2; RoPE 256 tokens x 32 heads x \
             128; GEMM 256^3{}; attention 8 heads x 256 x 64",
            if options.large {
                " and 1024^3 (f16)"
            } else {
                ""
            }
        )
    }
}
