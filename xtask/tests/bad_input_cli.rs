//! The bad-input catalogue of the command line, in one place: `cargo xtask emu run` and
//! `cargo xtask build` answer every kind of bad input with a non-zero exit and exactly one
//! `error:` line naming the problem, never a panic. The Rust API's catalogue is
//! `tests/tests/bad_input.rs`.

mod common;

use common::{library_code_object, xtask};
use std::path::{Path, PathBuf};

use iron::code_object::CodeObject;

/// Asserts that `args` fail with one `error:` line holding every needle, and no panic.
fn assert_one_line_error(args: &[&str], needles: &[&str]) {
    common::assert_one_line_error(&xtask(args), needles);
}

/// A fresh scratch directory for one test.
fn scratch_dir(name: &str) -> PathBuf {
    common::scratch_dir("bad-cli", name)
}

/// `emu run <file> --kernel add_f32 --grid 1 --block 256` followed by `extra`.
fn emu_run(file: &Path, extra: &[&str], needles: &[&str]) {
    let mut args = vec!["emu", "run", file.to_str().unwrap(), "--kernel", "add_f32"];
    if !extra.contains(&"--grid") {
        args.extend(["--grid", "1"]);
    }
    if !extra.contains(&"--block") {
        args.extend(["--block", "256"]);
    }
    args.extend_from_slice(extra);
    assert_one_line_error(&args, needles);
}

#[test]
fn unreadable_random_and_foreign_files_are_one_clear_line() {
    let dir = scratch_dir("files");
    let random = dir.join("random.co");
    let bytes: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&random, bytes).unwrap();
    let empty = dir.join("empty.co");
    std::fs::write(&empty, b"").unwrap();
    emu_run(Path::new("/nonexistent/kernels.co"), &[], &["cannot read"]);
    emu_run(&dir, &[], &["cannot read"]);
    emu_run(&random, &[], &["not an ELF file"]);
    emu_run(&empty, &[], &["truncated ELF header"]);
    // The xtask executable: an ELF file for the host, not for a GPU.
    emu_run(
        Path::new(env!("CARGO_BIN_EXE_xtask")),
        &[],
        &["expected an AMDGPU code object"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_build_requests_are_one_clear_line() {
    assert_one_line_error(
        &["build", "--gfx", "gfx9999"],
        &["unknown gfx `gfx9999`", "supported targets are"],
    );
    assert_one_line_error(
        &["build", "--gfx", "gfx942", "--wave", "32"],
        &["gfx942 is wave64 only"],
    );
    assert_one_line_error(
        &["build", "--gfx", "gfx950", "--kernels", "/nonexistent"],
        &["has no Cargo.toml"],
    );
}

/// Writes `f32` values as a buffer file; returns its `buf:` argument.
fn buffer_arg(path: &Path, len: usize) -> String {
    let bytes: Vec<u8> = (0..len).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
    format!("buf:{}", path.display())
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn bad_code_objects_kernels_and_targets_are_one_clear_line() {
    let dir = scratch_dir("objects");
    let co = library_code_object();
    let image = std::fs::read(&co).unwrap();
    let truncated = dir.join("truncated.co");
    std::fs::write(&truncated, &image[..image.len() / 3]).unwrap();
    emu_run(&truncated, &[], &[]);
    emu_run(
        &co,
        &["--gfx", "gfx1100"],
        &["holds code for gfx950, not gfx1100"],
    );
    emu_run(&co, &["--gfx", "gfx9999"], &["gfx9999"]);
    assert_one_line_error(
        &[
            "emu",
            "run",
            co.to_str().unwrap(),
            "--kernel",
            "add_f33",
            "--grid",
            "1",
            "--block",
            "64",
        ],
        &["no kernel add_f33", "add_f32"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn bad_arguments_and_geometry_are_one_clear_line() {
    let dir = scratch_dir("args");
    let co = library_code_object();
    let a = buffer_arg(&dir.join("a.bin"), 64);
    let full = |n: &'static str| -> Vec<String> {
        vec![
            "--arg".into(),
            a.clone(),
            "--arg".into(),
            a.clone(),
            "--arg".into(),
            a.clone(),
            "--arg".into(),
            n.into(),
        ]
    };
    let cases: Vec<(Vec<String>, &[&str])> = vec![
        (
            vec!["--arg".into(), a.clone()],
            &["takes 4 arguments, got 1"],
        ),
        (
            full("u64:64"),
            &["argument 4 (n) of add_f32 is 4 bytes", "u64 passes 8 bytes"],
        ),
        (
            vec![
                "--arg".into(),
                "u32:1".into(),
                "--arg".into(),
                a.clone(),
                "--arg".into(),
                a.clone(),
                "--arg".into(),
                "u32:64".into(),
            ],
            &["argument 1 of add_f32 is a pointer", "global_buffer"],
        ),
        (full("u16:64"), &["u16 passes 2 bytes"]),
        (full("u128:64"), &["unknown kind `u128`"]),
        (full("64"), &["has no kind"]),
        (
            [full("u32:64"), vec!["--block".into(), "2048".into()]].concat(),
            &["2048"],
        ),
        (
            [full("u32:64"), vec!["--grid".into(), "0".into()]].concat(),
            &["at least 1"],
        ),
        (
            [full("u32:64"), vec!["--lds".into(), "1000000".into()]].concat(),
            &["bytes per workgroup"],
        ),
    ];
    for (extra, needles) in cases {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        emu_run(&co, &extra, needles);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `image` with the first instruction of `add_f32` replaced by `word`.
fn with_add_f32_starting(image: &[u8], word: u32) -> Vec<u8> {
    let code_object = CodeObject::parse(image).unwrap();
    let code = code_object.kernel("add_f32").unwrap().code();
    let probe = &code[..code.len().min(64)];
    let at = image
        .windows(probe.len())
        .position(|w| w == probe)
        .expect("the kernel's code lies in the file");
    let mut patched = image.to_vec();
    patched[at..at + 4].copy_from_slice(&word.to_le_bytes());
    patched
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn device_faults_are_one_clear_line() {
    let dir = scratch_dir("faults");
    let co = library_code_object();
    let a = buffer_arg(&dir.join("a.bin"), 64);
    let out_dir = dir.to_str().unwrap();
    let args = |n: &'static str| -> Vec<String> {
        [
            "--out-dir",
            out_dir,
            "--arg",
            &a,
            "--arg",
            &a,
            "--arg",
            &a,
            "--arg",
            n,
        ]
        .map(String::from)
        .to_vec()
    };
    // Reading 100000 elements of 64-element buffers.
    let extra = args("u32:100000");
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    emu_run(&co, &extra, &["memory fault", "outside every live buffer"]);
    // s_trap 2 as the kernel's first instruction.
    let trapping = dir.join("trap.co");
    std::fs::write(
        &trapping,
        with_add_f32_starting(&std::fs::read(&co).unwrap(), 0xbf92_0002),
    )
    .unwrap();
    let extra = args("u32:64");
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    emu_run(&trapping, &extra, &["s_trap 2", "device-side abort"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
