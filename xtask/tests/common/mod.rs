//! What the command-line tests share: running the xtask binary, judging its one-line errors,
//! scratch directories and the device build's code object.

#![allow(dead_code, reason = "each test file uses part of these helpers")]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the xtask binary with `args`.
pub fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("xtask runs")
}

/// Asserts that `out` is a failure with exactly one `error:` line holding every needle, and no
/// panic.
pub fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure, got:\n{stderr}");
    assert!(!stderr.contains("panicked"), "panicked:\n{stderr}");
    let errors: Vec<_> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line expected, got:\n{stderr}");
    for needle in needles {
        assert!(
            errors[0].contains(needle),
            "`{needle}` not in: {}",
            errors[0]
        );
    }
}

/// A fresh scratch directory for one test, named `iron-<suite>-<name>-<pid>`.
pub fn scratch_dir(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iron-{suite}-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The library's gfx950 code object from `cargo xtask test`'s build (`IRON_ARTIFACTS`).
pub fn library_code_object() -> PathBuf {
    let dir = std::env::var_os("IRON_ARTIFACTS").expect("IRON_ARTIFACTS: run `cargo xtask test`");
    PathBuf::from(dir).join("gfx950/kernels.co")
}

/// The emulator's test kernel `<file>` in `IRON_EMU_TEST_OBJECTS` (built by `cargo xtask test`
/// from `host/emu/tests/data/src`), or `None` after saying why the test is skipped. Under
/// `cargo xtask test` (`IRON_REQUIRE_TOOLS` set) every object is built, so there its absence
/// fails the test.
pub fn emu_test_object(file: &str) -> Option<PathBuf> {
    let path = std::env::var_os("IRON_EMU_TEST_OBJECTS").map(|dir| PathBuf::from(dir).join(file));
    match path {
        Some(path) if path.is_file() => Some(path),
        _ => {
            let reason = format!(
                "{file} is not in IRON_EMU_TEST_OBJECTS (`cargo xtask test` builds it from \
                 host/emu/tests/data/src)"
            );
            assert!(
                std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
                "{reason}: it must exist under `cargo xtask test`"
            );
            eprintln!("skipped: {reason}");
            None
        }
    }
}
