//! `cargo xtask emu run` on code objects Iron did not build (HIP C++ compiled by clang-22) and on
//! Iron's own, and its answers to bad input: one clear line and a non-zero exit, never a panic.

mod common;

use common::{assert_one_line_error, library_code_object, xtask};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch_dir(name: &str) -> PathBuf {
    common::scratch_dir("emu-run", name)
}

/// Compiles `tests/hip/<name>.hip` for `gfx` with clang-22, as a HIP user would.
fn compile_hip(name: &str, gfx: &str, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let source = root.join("tests/hip").join(format!("{name}.hip"));
    let out = dir.join(format!("{name}-{gfx}.co"));
    let status = Command::new("clang-22")
        .args([
            "-x",
            "hip",
            &format!("--offload-arch={gfx}"),
            "-nogpulib",
            "-nogpuinc",
        ])
        .args(["--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c"])
        .arg("-I")
        .arg(root.join("tests/hip"))
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang-22 is installed (Debian package clang-22; .ci/run installs it)");
    assert!(status.success(), "clang-22 failed on {}", source.display());
    out
}

fn write_f32(path: &Path, values: &[f32]) {
    std::fs::write(
        path,
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn read_u32(path: &Path) -> Vec<u32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Deterministic inputs without an RNG crate: a small LCG.
fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

#[test]
#[ignore = "needs clang-22: run `cargo xtask test`"]
fn a_clang_built_hip_kernel_runs_and_is_right_on_every_cdna_target() {
    for gfx in ["gfx90a", "gfx942", "gfx950"] {
        let dir = scratch_dir(gfx);
        let co = compile_hip("block_reduce", gfx, &dir);
        let (n, groups, block) = (1000usize, 3usize, 192usize);
        let x = inputs(n, 7);
        write_f32(&dir.join("x.bin"), &x);
        write_f32(&dir.join("sums.bin"), &vec![f32::NAN; groups]);
        write_f32(&dir.join("total.bin"), &[0.0]);
        std::fs::write(dir.join("counts.bin"), vec![0xffu8; 4 * groups * block]).unwrap();
        let arg = |f: &str| format!("buf:{}", dir.join(f).display());
        let out = xtask(&[
            "emu",
            "run",
            co.to_str().unwrap(),
            "--kernel",
            "block_reduce",
            "--grid",
            &groups.to_string(),
            "--block",
            &block.to_string(),
            "--arg",
            &arg("x.bin"),
            "--arg",
            &arg("sums.bin"),
            "--arg",
            &arg("total.bin"),
            "--arg",
            &arg("counts.bin"),
            "--arg",
            &format!("u32:{n}"),
            "--out-dir",
            dir.to_str().unwrap(),
            "--stats",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{gfx}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("block_reduce: 3 workgroups, 9 waves"),
            "{gfx}: {stdout}"
        );

        // Each work-item sums the grid-stride slice starting at its global index.
        let stride = groups * block;
        let sums = read_f32(&dir.join("arg1.bin"));
        for (g, &got) in sums.iter().enumerate() {
            let want: f64 = (g * block..(g + 1) * block)
                .flat_map(|i| (i..n).step_by(stride))
                .map(|j| f64::from(x[j]))
                .sum();
            assert!(
                (f64::from(got) - want).abs() < 1e-3,
                "{gfx} block {g}: {got} vs {want}"
            );
        }
        let total = read_f32(&dir.join("arg2.bin"))[0];
        let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert!(
            (f64::from(total) - want).abs() < 1e-3,
            "{gfx} total: {total} vs {want}"
        );
        let counts = read_u32(&dir.join("arg3.bin"));
        for (i, &c) in counts.iter().enumerate() {
            let k = (i % block) as u32 % 7;
            assert_eq!(c, k * (k + 1) / 2, "{gfx} counts[{i}]");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn bad_input_is_one_clear_line() {
    let dir = scratch_dir("bad");
    let co = library_code_object();
    let co = co.to_str().unwrap();
    let junk = dir.join("junk.co");
    std::fs::write(&junk, b"definitely not an ELF file").unwrap();
    let a = dir.join("a.bin");
    write_f32(&a, &[1.0; 8]);
    let a = format!("buf:{}", a.display());
    let run = |extra: &[&str]| {
        let mut args = vec!["emu", "run"];
        args.extend_from_slice(extra);
        xtask(&args)
    };
    let add = ["--kernel", "add_f32", "--grid", "1", "--block", "64"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "/nonexistent.co",
                "--kernel",
                "k",
                "--grid",
                "1",
                "--block",
                "1",
            ],
            "cannot read",
        ),
        (
            vec![
                junk.to_str().unwrap(),
                "--kernel",
                "k",
                "--grid",
                "1",
                "--block",
                "1",
            ],
            "ELF",
        ),
        (
            vec![co, "--kernel", "nope", "--grid", "1", "--block", "64"],
            "nope",
        ),
        (
            [&[co][..], &add, &["--arg", &a]].concat(),
            "takes 4 arguments, got 1",
        ),
        (
            [
                &[co][..],
                &add,
                &["--arg", "u32:1", "--arg", &a, "--arg", &a, "--arg", "u32:8"],
            ]
            .concat(),
            "buffer",
        ),
        (
            [
                &[co][..],
                &["--kernel", "add_f32", "--grid", "1", "--block", "512"],
            ]
            .concat(),
            "512",
        ),
        (
            [&[co][..], &add, &["--arg", "u16:3"]].concat(),
            "unknown kind `u16`",
        ),
        (
            [
                &[co][..],
                &["--kernel", "add_f32", "--grid", "0", "--block", "64"],
            ]
            .concat(),
            "at least 1",
        ),
        (
            [
                &[co][..],
                &add,
                &["--arg", &a, "--arg", &a, "--arg", &a, "--arg", "u32:100000"],
            ]
            .concat(),
            "fault",
        ),
    ];
    for (args, needle) in cases {
        assert_one_line_error(&run(&args), &[needle]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn an_iron_kernel_runs_and_traces() {
    let dir = scratch_dir("trace");
    let n = 37usize;
    let a = inputs(n, 1);
    let b = inputs(n, 2);
    write_f32(&dir.join("a.bin"), &a);
    write_f32(&dir.join("b.bin"), &b);
    write_f32(&dir.join("c.bin"), &vec![f32::NAN; n]);
    let arg = |f: &str| format!("buf:{}", dir.join(f).display());
    let out = xtask(&[
        "emu",
        "run",
        library_code_object().to_str().unwrap(),
        "--kernel",
        "add_f32",
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        &arg("a.bin"),
        "--arg",
        &arg("b.bin"),
        "--arg",
        &arg("c.bin"),
        "--arg",
        &format!("u32:{n}"),
        "--out-dir",
        dir.to_str().unwrap(),
        "--trace",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = read_f32(&dir.join("arg2.bin"));
    for i in 0..n {
        assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "c[{i}]");
    }
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(
        trace
            .lines()
            .any(|l| l.contains("wave 0 pc") && l.contains("s_endpgm")),
        "{trace}"
    );
    assert!(
        trace.lines().any(|l| l.contains("global_load_dwordx4")),
        "{trace}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
