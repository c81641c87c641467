//! Code this project did not build: the GPU code objects of Debian's ROCm libraries (rocSPARSE,
//! rocRAND and the HSA runtime's blit kernels), which `cargo xtask test` installs and extracts
//! into `IRON_EMU_CORPUS`. Every instruction inside a function of every modelled gfx must
//! disassemble as `llvm-objdump` prints it, and none may be undecodable.

mod common;

use common::{llvm_tool, objdump_diff};
use std::path::PathBuf;

/// The extracted code objects (`*.co` below `IRON_EMU_CORPUS`).
fn corpus() -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(std::env::var_os("IRON_EMU_CORPUS")?);
    let mut paths = Vec::new();
    let mut pending = vec![dir];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "co") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    Some(paths)
}

#[test]
#[ignore = "needs the extracted ROCm libraries' code objects: run `cargo xtask test`"]
fn rocm_libraries_disassemble_like_llvm_objdump() {
    let (Some(paths), Some(_)) = (corpus(), llvm_tool("llvm-objdump")) else {
        common::skip("IRON_EMU_CORPUS is not set or llvm-objdump is missing");
        return;
    };
    assert!(!paths.is_empty(), "the corpus holds no code objects");
    let comparison = objdump_diff::compare(&paths);
    for m in comparison.mismatches.iter().take(50) {
        eprintln!("{m}");
    }
    eprint!("{}", comparison.table());
    assert!(comparison.skipped.is_empty(), "{:?}", comparison.skipped);
    assert!(
        comparison.instructions() > 1_000_000,
        "a corpus that small was not extracted whole"
    );
    assert!(
        comparison.mismatches.is_empty(),
        "{} instructions differ from llvm-objdump",
        comparison.mismatches.len()
    );
}
