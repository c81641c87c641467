//! Random instruction words of every encoding and opcode, disassembled by the emulator and by
//! `llvm-objdump`; the texts must agree wherever LLVM accepts the word.

mod common;

use common::random_instruction::instruction;
use common::{SLOT_DWORDS, llvm_tool, normalize, objdump, words_to_elf};
use iron_emu::Target;
use iron_emu::gfx9::{Encoding, OpcodeTables, decode, disassemble};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[test]
fn random_words_disassemble_like_llvm() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let per_op: usize = std::env::var("EMU_FUZZ_PER_OP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let dir = std::env::temp_dir().join(format!("iron-emu-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut mismatches = Vec::new();
    let mut compared = 0usize;
    for target in Target::ALL.into_iter().filter(|t| !t.is_rdna()) {
        let mut rng = StdRng::seed_from_u64(0x1badc0de ^ target as u64);
        let tables = OpcodeTables::for_target(target).unwrap();
        let mut slots = Vec::new();
        for enc in Encoding::ALL {
            for (num, op) in tables.slots(enc) {
                for _ in 0..per_op {
                    let w = instruction(&mut rng, enc, num, op);
                    if !w.is_empty() {
                        slots.push(w);
                    }
                }
            }
        }
        let elf = words_to_elf(target.name(), &slots, &dir);
        let lines = objdump(&elf, target.name());
        let by_addr: std::collections::HashMap<u64, String> =
            lines.into_iter().map(|l| (l.address, l.text)).collect();
        for (k, words) in slots.iter().enumerate() {
            let Some(llvm) = by_addr.get(&((k * SLOT_DWORDS * 4) as u64)) else {
                continue;
            };
            // LLVM prints a branch to the start of the probe symbol by name.
            if llvm.starts_with(".long")
                || llvm.contains("/*")
                || llvm.contains("<unknown>")
                || llvm.ends_with(" probe")
            {
                continue;
            }
            let mut padded = words.clone();
            padded.resize(SLOT_DWORDS, 0xBF80_0000);
            let ours = match decode(target, &padded) {
                Ok(i) => normalize(&disassemble(target, &i)),
                Err(e) => format!("<{e}>"),
            };
            compared += 1;
            if &ours != llvm {
                let hexw: Vec<String> = words.iter().map(|w| format!("{w:08X}")).collect();
                mismatches.push(format!(
                    "{target} {}\n   llvm: {llvm}\n   ours: {ours}",
                    hexw.join(" ")
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let show: usize = std::env::var("EMU_FUZZ_SHOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(80);
    for m in mismatches.iter().take(show) {
        eprintln!("{m}");
    }
    eprintln!(
        "{} of {compared} random instructions differ from llvm-objdump",
        mismatches.len()
    );
    assert!(compared > 1000, "too few instructions compared");
    assert!(mismatches.is_empty());
}
