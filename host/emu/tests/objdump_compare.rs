//! Every kernel of every code object the tests can find is disassembled by the emulator and by
//! `llvm-objdump`; the instruction texts must agree line by line.

mod common;

use common::{all_code_objects, llvm_tool, objdump_diff};

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn kernels_disassemble_like_llvm_objdump() {
    if llvm_tool("llvm-objdump").is_none() {
        common::skip("llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let paths = all_code_objects();
    assert!(!paths.is_empty(), "no code objects found");
    let comparison = objdump_diff::compare(&paths);
    let show: usize = std::env::var("EMU_OBJDUMP_SHOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    for m in comparison.mismatches.iter().take(show) {
        eprintln!("{m}");
    }
    for s in &comparison.skipped {
        eprintln!("skipped: {s}");
    }
    eprint!("{}", comparison.table());
    assert!(comparison.instructions() > 0);
    assert!(comparison.mismatches.is_empty());
}
