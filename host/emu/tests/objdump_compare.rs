//! Every kernel of every code object the tests can find is disassembled by the emulator and by
//! `llvm-objdump`; the instruction texts must agree line by line.

mod common;

use common::{CodeObject, all_code_objects, llvm_tool, objdump_wave, read_code_object};
use iron_emu::{KernelDescriptor, Target, WaveSize, gfx9, rdna};

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn kernels_disassemble_like_llvm_objdump() {
    if llvm_tool("llvm-objdump").is_none() {
        common::skip("llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let paths = all_code_objects();
    assert!(!paths.is_empty(), "no code objects found");
    let mut compared = 0usize;
    let mut mismatches = Vec::new();
    for path in &paths {
        let co = read_code_object(path)
            .unwrap_or_else(|| panic!("{}: not an AMDGPU code object", path.display()));
        let Some(target) = Target::from_elf_flags(co.e_flags) else {
            eprintln!(
                "{}: target {:#x} is not modelled: skipped",
                path.display(),
                co.e_flags & 0xff
            );
            continue;
        };
        let words: Vec<u32> = co
            .text
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let wave = wave_size(&co);
        for line in objdump_wave(
            path,
            target.name(),
            target.is_rdna() && wave == WaveSize::Wave64,
        ) {
            let Some(f) = co
                .functions
                .iter()
                .find(|f| line.address >= f.1 && line.address < f.1 + f.2.max(4))
            else {
                continue;
            };
            let index = ((line.address - co.text_address) / 4) as usize;
            let ours = match words.get(index..) {
                Some(w) => disassemble(target, wave, w),
                None => "<outside .text>".into(),
            };
            let ours = common::normalize(&ours);
            compared += 1;
            if ours != line.text {
                mismatches.push(format!(
                    "{} {} {:#x}: llvm `{}` ours `{}`",
                    path.display(),
                    f.0,
                    line.address,
                    line.text,
                    ours
                ));
            }
        }
    }
    let show: usize = std::env::var("EMU_OBJDUMP_SHOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    for m in mismatches.iter().take(show) {
        eprintln!("{m}");
    }
    eprintln!(
        "{} code objects, {compared} instructions, {} differ",
        paths.len(),
        mismatches.len()
    );
    assert!(compared > 0);
    assert!(mismatches.is_empty());
}

/// The wave size of a code object's kernels (RDNA code objects hold wave32 or wave64 kernels).
fn wave_size(co: &CodeObject) -> WaveSize {
    let wave32 = co
        .descriptors
        .iter()
        .filter_map(|(_, d)| KernelDescriptor::from_bytes(d))
        .all(|kd| kd.wave32());
    if wave32 {
        WaveSize::Wave32
    } else {
        WaveSize::Wave64
    }
}

/// The emulator's text for the instruction at the start of `words`.
fn disassemble(target: Target, wave: WaveSize, words: &[u32]) -> String {
    if target.is_rdna() {
        match rdna::decode(target, wave, words) {
            Ok(i) => rdna::disassemble(target, &i),
            Err(e) => format!("<{e}>"),
        }
    } else {
        match gfx9::decode(target, words) {
            Ok(i) => gfx9::disassemble(target, &i),
            Err(e) => format!("<{e}>"),
        }
    }
}
