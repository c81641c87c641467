//! The emulator's disassembly of whole code objects against `llvm-objdump`'s, instruction by
//! instruction inside every function, with the figures per gfx.

use super::{CodeObject, normalize, objdump_each, read_code_object};
use iron_emu::{KernelDescriptor, Target, WaveSize, gfx9, rdna};
use std::collections::{BTreeMap, HashMap};
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
    // Each worker takes the next code object as it finishes one: their sizes differ widely.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let parts: Vec<Comparison> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(paths.len()).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut acc = Comparison::default();
                    let mut seen = Seen::new();
                    while let Some(p) =
                        paths.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        acc = one(acc, p, &mut seen);
                    }
                    acc
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

/// What each encoding compared so far gave, per gfx and wave size (wave64 `true`): `None` if
/// both sides agree, else the emulator's text and whether it decoded.
type Seen = HashMap<(&'static str, bool), HashMap<String, Option<(String, bool)>>>;

/// Adds the code object at `path` to `acc`.
fn one(mut acc: Comparison, path: &Path, seen: &mut Seen) -> Comparison {
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
    // reach[k]: how far the functions up to k reach.
    let reach: Vec<u64> = co
        .functions
        .iter()
        .scan(0, |end, f| {
            *end = (*end).max(f.1 + f.2.max(4));
            Some(*end)
        })
        .collect();
    let wave64 = wave == WaveSize::Wave64;
    let seen = seen.entry((target.name(), wave64)).or_default();
    let features: &[&str] = if target.is_rdna() && wave64 {
        &["+wavefrontsize64"]
    } else {
        &[]
    };
    objdump_each(path, target.name(), features, |line| {
        // The functions are sorted by address: only those starting at or before the line can
        // hold it, and none does when all of them end before it.
        let starts_before = co.functions.partition_point(|f| f.1 <= line.address);
        if starts_before == 0 || reach[starts_before - 1] <= line.address {
            return;
        }
        let Some(f) = co.functions[..starts_before]
            .iter()
            .rev()
            .find(|f| line.address < f.1 + f.2.max(4))
        else {
            return;
        };
        tally.instructions += 1;
        // The same bytes disassemble alike on both sides: each encoding is compared once per
        // gfx and wave size, and a mismatch is reported wherever it occurs.
        let outcome = match seen.get(line.encoding) {
            Some(outcome) => outcome.clone(),
            None => {
                let index = ((line.address - co.text_address) / 4) as usize;
                let (ours, decoded) = match words.get(index..) {
                    Some(w) => disassemble(target, wave, w),
                    None => ("<outside .text>".into(), false),
                };
                let ours = normalize(&ours);
                let outcome = (ours != normalize(line.text)).then_some((ours, decoded));
                seen.insert(line.encoding.to_string(), outcome.clone());
                outcome
            }
        };
        if let Some((ours, decoded)) = outcome {
            tally.mismatches += 1;
            tally.undecodable += usize::from(!decoded);
            acc.mismatches.push(format!(
                "{} {} {:#x}: llvm `{}` ours `{}`",
                path.display(),
                f.0,
                line.address,
                normalize(line.text),
                ours
            ));
        }
    });
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
