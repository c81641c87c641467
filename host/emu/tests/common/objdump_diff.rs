//! The emulator's disassembly of whole code objects against `llvm-objdump`'s, instruction by
//! instruction inside every function, with the figures per gfx.

use super::{CodeObject, normalize, objdump_wave, read_code_object};
use iron_emu::{KernelDescriptor, Target, WaveSize, gfx9, rdna};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one gfx's code objects gave.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Code objects compared.
    pub objects: usize,
    /// Instructions compared (those inside a function symbol).
    pub instructions: usize,
    /// Instructions whose text differs from llvm-objdump's.
    pub mismatches: usize,
    /// Of those, the ones the emulator could not decode.
    pub undecodable: usize,
}

/// The comparison of a set of code objects.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Per gfx (the ELF's processor).
    pub per_gfx: BTreeMap<&'static str, Tally>,
    /// One line per mismatch: file, function, address, both texts.
    pub mismatches: Vec<String>,
    /// Files that are not code objects of a modelled gfx.
    pub skipped: Vec<String>,
}

impl Comparison {
    /// The per-gfx table, one line each.
    pub fn table(&self) -> String {
        let mut out = String::from("gfx      objects  instructions  mismatches  undecodable\n");
        for (gfx, t) in &self.per_gfx {
            out.push_str(&format!(
                "{gfx:<8} {:>7} {:>13} {:>11} {:>12}\n",
                t.objects, t.instructions, t.mismatches, t.undecodable
            ));
        }
        out
    }

    /// Every instruction compared, all gfx together.
    pub fn instructions(&self) -> usize {
        self.per_gfx.values().map(|t| t.instructions).sum()
    }
}

/// Compares every code object of `paths`, spread over the machine's cores.
pub fn compare(paths: &[PathBuf]) -> Comparison {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = paths.len().div_ceil(threads).max(1);
    let parts: Vec<Comparison> = std::thread::scope(|s| {
        let workers: Vec<_> = paths
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .fold(Comparison::default(), |acc, p| one(acc, p))
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut all = Comparison::default();
    for part in parts {
        for (gfx, t) in part.per_gfx {
            let sum = all.per_gfx.entry(gfx).or_default();
            sum.objects += t.objects;
            sum.instructions += t.instructions;
            sum.mismatches += t.mismatches;
            sum.undecodable += t.undecodable;
        }
        all.mismatches.extend(part.mismatches);
        all.skipped.extend(part.skipped);
    }
    all
}

/// Adds the code object at `path` to `acc`.
fn one(mut acc: Comparison, path: &Path) -> Comparison {
    let Some(co) = read_code_object(path) else {
        acc.skipped.push(format!(
            "{}: not an AMDGPU ELF with a .text",
            path.display()
        ));
        return acc;
    };
    let Some(target) = Target::from_elf_flags(co.e_flags) else {
        acc.skipped.push(format!(
            "{}: target {:#x} is not modelled",
            path.display(),
            co.e_flags & 0xff
        ));
        return acc;
    };
    let words: Vec<u32> = co
        .text
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let wave = wave_size(&co);
    let tally = acc.per_gfx.entry(target.name()).or_default();
    tally.objects += 1;
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
        let (ours, decoded) = match words.get(index..) {
            Some(w) => disassemble(target, wave, w),
            None => ("<outside .text>".into(), false),
        };
        let ours = normalize(&ours);
        tally.instructions += 1;
        if ours != line.text {
            tally.mismatches += 1;
            tally.undecodable += usize::from(!decoded);
            acc.mismatches.push(format!(
                "{} {} {:#x}: llvm `{}` ours `{}`",
                path.display(),
                f.0,
                line.address,
                line.text,
                ours
            ));
        }
    }
    acc
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

/// The emulator's text for the instruction at the start of `words`, and whether it decoded.
fn disassemble(target: Target, wave: WaveSize, words: &[u32]) -> (String, bool) {
    let decoded = if target.is_rdna() {
        rdna::decode(target, wave, words).map(|i| rdna::disassemble(target, &i))
    } else {
        gfx9::decode(target, words).map(|i| gfx9::disassemble(target, &i))
    };
    match decoded {
        Ok(text) => (text, true),
        Err(e) => (format!("<{e}>"), false),
    }
}
