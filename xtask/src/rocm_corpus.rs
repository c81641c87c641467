//! A standing corpus of GPU code this project did not build: the code objects inside Debian's
//! ROCm libraries (rocSPARSE and rocRAND hold clang offload bundles in `.hip_fatbin`; the HSA
//! runtime embeds its blit kernels as bare code objects). `cargo xtask test` extracts those of
//! every gfx the emulator models, and `host/emu/tests/corpus.rs` compares their disassembly with
//! llvm-objdump's.

use crate::prerequisites::{Install, Prerequisite};
use anyhow::{Context, Result};
use iron::code_object::{BUNDLE_MAGIC, Bundle, CodeObject};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The libraries, as Debian installs them.
const LIBRARIES: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/librocsparse.so.0",
    "/usr/lib/x86_64-linux-gnu/librocrand.so.1",
    "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1",
];

/// Debian's ROCm libraries whose GPU code the corpus holds.
pub const ROCM_LIBRARIES: Prerequisite = Prerequisite {
    name: "Debian's rocSPARSE, rocRAND and HSA runtime",
    why: "the emulator's disassembly is checked on the GPU code inside them, code Iron did not build",
    present: || LIBRARIES.iter().all(|l| Path::new(l).exists()),
    install: Install::Apt(&["librocsparse0", "librocrand1", "libhsa-runtime64-1"]),
};

/// The start of a bare AMDGPU HSA code object: ELF64, little-endian, version 1, OS/ABI 64.
const AMDGPU_ELF: [u8; 8] = [0x7f, b'E', b'L', b'F', 2, 1, 1, 64];

/// ELF machine number of AMDGPU.
const EM_AMDGPU: u16 = 224;

/// Extracts every code object of a modelled gfx into `out/<library>/`, replacing what an earlier
/// run left there, and prints what it found.
pub fn extract(out: &Path) -> Result<()> {
    if out.is_dir() {
        std::fs::remove_dir_all(out).with_context(|| format!("cannot remove {}", out.display()))?;
    }
    let started = std::time::Instant::now();
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    let mut other: BTreeMap<String, usize> = BTreeMap::new();
    for library in LIBRARIES {
        let path = std::fs::canonicalize(library)
            .with_context(|| format!("cannot find {library} (Debian package of the corpus)"))?;
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let dir = out.join(&name);
        std::fs::create_dir_all(&dir)?;
        let mut file = File::open(&path)?;
        let mut n = 0;
        each_code_object(&mut file, 64 << 20, |bytes| {
            // Images that are not code objects (the HSA runtime's legacy finalizer objects
            // have no .text) are left out.
            let Ok(code_object) = CodeObject::parse(&bytes) else {
                return Ok(());
            };
            let target = code_object.target().to_string();
            let processor = &code_object.target().processor;
            if iron_emu::Target::from_name(processor).is_none() {
                *other.entry(processor.clone()).or_default() += 1;
                return Ok(());
            }
            let file_name = format!("{n:04}.{}.co", target.replace(':', "_"));
            std::fs::write(dir.join(file_name), &bytes)?;
            *kept.entry(target).or_default() += 1;
            n += 1;
            Ok(())
        })?;
    }
    let list = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    eprintln!(
        "ROCm corpus: {} code objects of modelled gfx ({}) in {:.1} s; other gfx skipped: {}",
        kept.values().sum::<usize>(),
        list(&kept),
        started.elapsed().as_secs_f64(),
        list(&other)
    );
    Ok(())
}

/// What starts at an offset of a library.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Image {
    /// A clang offload bundle.
    Bundle,
    /// A bare AMDGPU code object.
    Elf,
}

/// Calls `f` with every code object image in `file`: each bundle's entries, and the bare
/// AMDGPU ELF images outside bundles (a bundle's entries are ELF images too, seen once).
fn each_code_object(
    file: &mut File,
    chunk: usize,
    mut f: impl FnMut(Vec<u8>) -> Result<()>,
) -> Result<()> {
    let mut covered = 0;
    for (offset, kind) in find_images(file, chunk)? {
        if offset < covered {
            continue;
        }
        match kind {
            Image::Bundle => {
                let (entries, end) = bundle_entries(file, offset)?;
                covered = offset + end;
                for entry in entries {
                    f(entry)?;
                }
            }
            Image::Elf => {
                if let Some(image) = bare_code_object(file, offset)? {
                    f(image)?;
                }
            }
        }
    }
    Ok(())
}

/// The offsets of every offload bundle and AMDGPU ELF image in `file`, read `chunk` bytes at a
/// time (the libraries are up to 1.3 GB).
fn find_images(file: &mut File, chunk: usize) -> Result<Vec<(u64, Image)>> {
    let overlap = BUNDLE_MAGIC.len().max(AMDGPU_ELF.len()) - 1;
    let mut found = Vec::new();
    let mut buf = vec![0u8; chunk + overlap];
    let mut kept = 0;
    let mut base = 0u64;
    file.seek(SeekFrom::Start(0))?;
    loop {
        let n = file.read(&mut buf[kept..])?;
        if n == 0 {
            break;
        }
        let len = kept + n;
        for at in 0..len.saturating_sub(overlap) {
            let window = &buf[at..len];
            if window.starts_with(BUNDLE_MAGIC) {
                found.push((base + at as u64, Image::Bundle));
            } else if window.starts_with(&AMDGPU_ELF)
                && window.get(18..20) == Some(&EM_AMDGPU.to_le_bytes())
            {
                found.push((base + at as u64, Image::Elf));
            }
        }
        let consumed = len.saturating_sub(overlap);
        buf.copy_within(consumed..len, 0);
        kept = len - consumed;
        base += consumed as u64;
    }
    Ok(found)
}

/// `len` bytes of `file` from `offset` (fewer at its end).
fn read_at(file: &mut File, offset: u64, len: u64) -> Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The entries of the bundle at `offset`, and how far it reaches (its entry table says).
fn bundle_entries(file: &mut File, offset: u64) -> Result<(Vec<Vec<u8>>, u64)> {
    let head = read_at(file, offset, 1 << 16)?;
    let u64_at = |b: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let count = u64_at(&head, BUNDLE_MAGIC.len()).unwrap_or(0);
    let mut at = BUNDLE_MAGIC.len() + 8;
    let mut end = 0u64;
    for _ in 0..count {
        let (Some(entry_offset), Some(size), Some(id_len)) = (
            u64_at(&head, at),
            u64_at(&head, at + 8),
            u64_at(&head, at + 16),
        ) else {
            return Ok((Vec::new(), 0));
        };
        end = end.max(entry_offset.saturating_add(size));
        at += 24 + id_len as usize;
    }
    let end = end.max(at as u64);
    let bytes = read_at(file, offset, end)?;
    let entries = Bundle::parse(&bytes)
        .map(|b| b.entries().iter().map(|e| e.data.clone()).collect())
        .unwrap_or_default();
    Ok((entries, end))
}

/// The bare code object at `offset`: its section header table ends it.
fn bare_code_object(file: &mut File, offset: u64) -> Result<Option<Vec<u8>>> {
    let header = read_at(file, offset, 64)?;
    let (Some(shoff), Some(shentsize), Some(shnum)) =
        (header.get(40..48), header.get(58..60), header.get(60..62))
    else {
        return Ok(None);
    };
    let shoff = u64::from_le_bytes(shoff.try_into()?);
    let table = u64::from(u16::from_le_bytes(shentsize.try_into()?))
        * u64::from(u16::from_le_bytes(shnum.try_into()?));
    Ok(Some(read_at(file, offset, shoff + table)?))
}

/// Where `cargo xtask test` extracts the corpus.
pub fn dir(iron_dir: &Path) -> PathBuf {
    iron_dir.join("rocm-corpus")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_found_across_chunk_boundaries_and_read_whole() {
        // A bare code object's header (section table at 0x100, 2 entries of 64 bytes), junk, a
        // bundle of two entries, and an ELF of another machine.
        let mut elf = vec![0u8; 0x180];
        elf[..8].copy_from_slice(&AMDGPU_ELF);
        elf[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        elf[40..48].copy_from_slice(&0x100u64.to_le_bytes());
        elf[58..60].copy_from_slice(&64u16.to_le_bytes());
        elf[60..62].copy_from_slice(&2u16.to_le_bytes());
        // The bundle's second entry is an ELF image too: it must come out once.
        let mut bundle = Bundle::new();
        let id = |t: &str| iron::code_object::BundleEntryId::parse(t).unwrap();
        bundle
            .push(id("hipv4-amdgcn-amd-amdhsa--gfx90a"), vec![7; 100])
            .unwrap();
        bundle
            .push(id("hipv4-amdgcn-amd-amdhsa--gfx942"), elf.clone())
            .unwrap();
        let mut other = AMDGPU_ELF.to_vec();
        other.extend([0; 20]);
        other[18] = 62;
        let mut file_bytes = vec![0x55u8; 1000];
        let elf_at = file_bytes.len() as u64;
        file_bytes.extend(&elf);
        file_bytes.extend([0xaa; 333]);
        let bundle_at = file_bytes.len() as u64;
        file_bytes.extend(bundle.write());
        file_bytes.extend(&other);
        file_bytes.extend([0; 50]);
        let path = std::env::temp_dir().join(format!("iron-corpus-scan-{}", std::process::id()));
        std::fs::write(&path, &file_bytes).unwrap();
        let mut file = File::open(&path).unwrap();
        for chunk in [7, 64, 1 << 20] {
            let found = find_images(&mut file, chunk).unwrap();
            assert_eq!(found.len(), 3, "chunk {chunk}: {found:?}");
            assert_eq!(
                found[..2],
                [(elf_at, Image::Elf), (bundle_at, Image::Bundle)]
            );
            let mut images = Vec::new();
            each_code_object(&mut file, chunk, |image| {
                images.push(image);
                Ok(())
            })
            .unwrap();
            assert_eq!(
                images,
                [elf.clone(), vec![7u8; 100], elf.clone()],
                "chunk {chunk}"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }
}
