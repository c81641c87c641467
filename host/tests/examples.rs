//! The examples (`host/examples`) and the walkthrough (`docs/walkthrough.md`) stay runnable and
//! true: every example runs on the emulator (and on a GPU when there is one) and must match its
//! CPU result; the walkthrough's kernels are checked against their oracle on every emulated
//! target they were built for; and every code block of the walkthrough must be a verbatim copy
//! of the source file it names.
//!
//! The runs need the device builds (the kernel library, and the walkthrough's kernels in
//! `$IRON_ARTIFACTS/walkthrough`): `cargo xtask test` makes them and runs these tests.

#![allow(
    clippy::duplicate_mod,
    reason = "each example module brings its own `common`, as each example binary does"
)]

// Each example is compiled here as a module, so that its `run` is called directly; its `main`
// belongs to the example binary and is not called here.
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/gemm.rs"]
mod gemm;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/mxfp4_qgemv.rs"]
mod mxfp4_qgemv;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/rmsnorm.rs"]
mod rmsnorm;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/vector_add.rs"]
mod vector_add;
#[allow(
    dead_code,
    reason = "the example binary's `main` and its unused helpers"
)]
#[path = "../examples/walkthrough.rs"]
mod walkthrough;

use std::path::{Path, PathBuf};

use iron::emulator::{Emulator, emulated_targets};
use iron::{Device, Module};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Runs the example module `$example` on `$device` and fails unless it matches the CPU (each
/// example carries its own copy of `common`, so their reports are different types).
macro_rules! check_example {
    ($device:expr, $example:ident) => {{
        let name = stringify!($example);
        let report = $example::run($device).unwrap_or_else(|e| panic!("example {name}: {e}"));
        println!("{name}: {report}");
        assert!(report.matched(), "example {name}: {report}");
    }};
}

/// Runs every example on `device`.
fn run_examples(device: &Device) {
    check_example!(device, vector_add);
    check_example!(device, rmsnorm);
    check_example!(device, mxfp4_qgemv);
    check_example!(device, gemm);
    check_example!(device, walkthrough);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_example_matches_the_cpu_on_the_emulated_gfx950() {
    run_examples(&Emulator::new("gfx950").unwrap().device());
}

#[test]
#[ignore = "needs an AMD GPU and the device build: run `cargo xtask test`"]
fn gpu_every_example_matches_the_cpu() {
    match Device::hip(0) {
        Ok(device) => run_examples(&device),
        Err(e) => println!("skipped: {e}"),
    }
}

/// Every emulated build of the walkthrough's kernels (`$IRON_ARTIFACTS/walkthrough/<gfx>` and
/// `<gfx>-w64`), each loaded on an emulator of its gfx, with the build's name.
fn walkthrough_modules() -> Vec<(String, Module)> {
    let bundle = walkthrough::bundle_path();
    let dir = bundle.parent().expect("the bundle is in a directory");
    let mut modules = Vec::new();
    for gfx in emulated_targets() {
        for build in [gfx.to_string(), format!("{gfx}-w64")] {
            let Ok(image) = std::fs::read(dir.join(&build).join("kernels.co")) else {
                continue;
            };
            let device = Emulator::new(gfx).unwrap().device();
            let module = device
                .load_module(&image)
                .unwrap_or_else(|e| panic!("{build}: {e}"));
            modules.push((build, module));
        }
    }
    assert!(
        !modules.is_empty(),
        "no build of the walkthrough's kernels in {}: `cargo xtask test` builds them",
        dir.display()
    );
    modules
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn normalize_rows_matches_its_oracle_on_every_target() {
    let mut rng = StdRng::seed_from_u64(0x1a0b);
    let eps = 1e-12;
    for (build, module) in walkthrough_modules() {
        let wave = module.kernels()[0].metadata().wavefront_size;
        // One column; rows shorter than a wave; not a multiple of any workgroup; longer ones.
        for (rows, cols) in [(3, 1), (5, 37), (4, 1000), (2, 4099)] {
            for block in [wave, 256, 1024] {
                let mut x: Vec<f32> = (0..rows * cols)
                    .map(|_| rng.random_range(-4.0..4.0))
                    .collect();
                // A row of zeros: eps keeps it finite, and it stays zero.
                x[..cols].fill(0.0);
                let got = walkthrough::normalize_rows(&module, &x, cols, block, eps)
                    .unwrap_or_else(|e| panic!("{build}: {e}"));
                let want = walkthrough::normalize_rows_oracle(&x, cols, eps);
                // The f32 roundings behind each result: a work-item's cols / block squares, at
                // most log2(64) = 6 levels of the wave's tree, the block / wave partials added
                // in turn, then sqrt, divide and multiply; each within f32::EPSILON / 2.
                let steps = cols.div_ceil(block as usize) + 6 + (block / wave) as usize + 3;
                let tolerance = steps as f64 * f64::from(f32::EPSILON);
                for (i, (&got, &want)) in got.iter().zip(&want).enumerate() {
                    let error = (f64::from(got) - want).abs();
                    assert!(
                        error <= tolerance,
                        "{build} [{rows}, {cols}] block {block}: y[{i}] = {got}, want {want}"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scale_matches_its_oracle_on_every_target() {
    let mut rng = StdRng::seed_from_u64(0x5ca1e);
    for (build, module) in walkthrough_modules() {
        for n in [1, 255, 256, 257, 10_000] {
            let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
            let a = rng.random_range(-3.0..3.0f32);
            let got = walkthrough::scale(&module, a, &x).unwrap_or_else(|e| panic!("{build}: {e}"));
            // One f32 multiplication: the device must round exactly as the CPU does.
            let want: Vec<f32> = x.iter().map(|v| a * v).collect();
            assert_eq!(got, want, "{build}: n = {n}");
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_walkthrough_kernels_keep_their_declared_resources() {
    for (build, module) in walkthrough_modules() {
        for (name, max_threads) in [("scale_f32", 256), ("normalize_rows_f32", 1024)] {
            let metadata = module.kernel_by_name(name).unwrap().metadata().clone();
            assert_eq!(
                metadata.max_flat_workgroup_size, max_threads,
                "{build} {name}"
            );
            assert_eq!(
                metadata.private_segment_fixed_size, 0,
                "{build} {name}: scratch"
            );
            assert_eq!(
                metadata.group_segment_fixed_size, 0,
                "{build} {name}: static LDS"
            );
        }
        let x = [1.0f32; 8];
        let error = walkthrough::normalize_rows(&module, &x, 8, 2048, 0.0).unwrap_err();
        assert_eq!(
            error.to_string(),
            "block of 2048 exceeds normalize_rows_f32's declared maximum of 1024",
            "{build}"
        );
    }
}

/// The fenced code blocks of a Markdown text: each block's info string (what follows the
/// opening fence) and its lines, with a final newline.
fn fenced_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

/// The file a block names with `file=<path>` in its info string, relative to the workspace.
fn named_file(info: &str) -> Option<&str> {
    info.split_whitespace()
        .find_map(|word| word.strip_prefix("file="))
}

#[test]
fn walkthrough_code_blocks_are_copies_of_their_source_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let markdown = std::fs::read_to_string(root.join("docs/walkthrough.md")).unwrap();
    let mut checked = 0;
    for (info, text) in fenced_blocks(&markdown) {
        let language = info.split_whitespace().next().unwrap_or("");
        let Some(file) = named_file(&info) else {
            assert!(
                !matches!(language, "rust" | "toml"),
                "a {language} block names no file=<path>:\n{text}"
            );
            continue;
        };
        let path: PathBuf = root.join(file);
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            source.contains(&text),
            "this block of docs/walkthrough.md is not a verbatim part of {file}:\n{text}"
        );
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} blocks name their source file");
}

#[test]
fn the_block_check_finds_blocks_and_their_files() {
    let markdown = "text\n```rust file=a.rs\nfn a() {}\n```\n```sh\ncargo run\n```\n";
    let blocks = fenced_blocks(markdown);
    assert_eq!(
        blocks,
        [
            ("rust file=a.rs".to_string(), "fn a() {}\n".to_string()),
            ("sh".to_string(), "cargo run\n".to_string())
        ]
    );
    assert_eq!(named_file(&blocks[0].0), Some("a.rs"));
    assert_eq!(named_file(&blocks[1].0), None);
}
