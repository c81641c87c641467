//! Clang offload bundles: several code objects (one per target) in one file, the form
//! `hipModuleLoadData` accepts besides a bare code object.
//!
//! Uncompressed layout (clang `OffloadBundler.cpp`, "BinaryFileHandler"), little-endian: the
//! 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry count, then per entry a u64 offset,
//! a u64 size, a u64 id length and the id bytes (no NUL). Entry data follows, each entry's
//! offset aligned to 4096 when HIP writes it. Entry ids read
//! `<offload kind>-<arch>-<vendor>-<os>-<environment>[-<target id>]`, e.g.
//! `hipv4-amdgcn-amd-amdhsa--gfx950` and the empty host entry
//! `host-x86_64-unknown-linux-gnu-`.

use std::fmt;

use super::compressed::{self, COMPRESSED_BUNDLE_MAGIC};
use super::error::{CodeObjectError, Result};
use super::target::TargetId;

/// Magic of an uncompressed offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Id of the (empty) host entry HIP expects in every bundle.
pub const HOST_ENTRY_ID: &str = "host-x86_64-unknown-linux-gnu-";
/// Alignment of entry data written by [`Bundle::write`], as HIP's bundler uses.
pub const BUNDLE_ALIGNMENT: u64 = 4096;
/// Bytes of the fixed entry-table fields (offset, size, id length) per entry.
const ENTRY_FIELDS_SIZE: u64 = 24;

/// A parsed bundle entry id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BundleEntryId {
    text: String,
    /// Offload kind: `host`, `hip`, `hipv4`, `openmp`, ...
    pub offload_kind: String,
    /// Target triple, e.g. `amdgcn-amd-amdhsa-` (with its empty environment).
    pub triple: String,
    /// Device target id, absent for host entries.
    pub target_id: Option<TargetId>,
}

impl BundleEntryId {
    /// Parses `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]`; an older three-part triple
    /// followed directly by a `gfx` target id (`hip-amdgcn-amd-amdhsa-gfx906`), and a triple
    /// without its environment (`host-x86_64-unknown-linux`, as ROCm 5's bundler writes the
    /// host entry), are accepted too.
    pub fn parse(text: &str) -> Result<BundleEntryId> {
        let bad = || CodeObjectError::BadBundleEntryId(text.to_owned());
        let parts: Vec<&str> = text.splitn(6, '-').collect();
        if parts.len() < 4 || parts[..4].iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        let (environment, target) = match parts.as_slice() {
            [_, _, _, _, env, target] => (*env, Some(*target)),
            [_, _, _, _, last] if last.starts_with("gfx") => ("", Some(*last)),
            [_, _, _, _, env] => (*env, None),
            [_, _, _, _] => ("", None),
            _ => return Err(bad()),
        };
        let target_id = match target.filter(|t| !t.is_empty()) {
            Some(target) => Some(TargetId::parse(target).map_err(|_| bad())?),
            None => None,
        };
        Ok(BundleEntryId {
            text: text.to_owned(),
            offload_kind: parts[0].to_owned(),
            triple: format!("{}-{}-{}-{environment}", parts[1], parts[2], parts[3]),
            target_id,
        })
    }

    /// The id of the empty host entry.
    pub fn host() -> BundleEntryId {
        BundleEntryId {
            text: HOST_ENTRY_ID.to_owned(),
            offload_kind: "host".to_owned(),
            triple: "x86_64-unknown-linux-gnu".to_owned(),
            target_id: None,
        }
    }

    /// The id HIP gives a code object for `target`: `hipv4-amdgcn-amd-amdhsa--<target>`.
    pub fn hip(target: &TargetId) -> BundleEntryId {
        BundleEntryId {
            text: format!("hipv4-amdgcn-amd-amdhsa--{target}"),
            offload_kind: "hipv4".to_owned(),
            triple: "amdgcn-amd-amdhsa-".to_owned(),
            target_id: Some(target.clone()),
        }
    }

    /// The id exactly as stored in the bundle.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether this entry holds an AMDGPU code object.
    pub fn is_amdgpu(&self) -> bool {
        self.triple.starts_with("amdgcn-") && self.target_id.is_some()
    }
}

impl fmt::Display for BundleEntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One entry: its id and its bytes (empty for the host entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry {
    /// Entry id.
    pub id: BundleEntryId,
    /// Entry bytes.
    pub data: Vec<u8>,
}

/// An offload bundle held in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bundle {
    entries: Vec<BundleEntry>,
}

/// Whether `bytes` starts like an offload bundle, compressed or not.
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_BUNDLE_MAGIC)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, len: u64, what: &'static str) -> Result<&'a [u8]> {
        let available = (self.bytes.len() - self.at) as u64;
        if len > available {
            return Err(CodeObjectError::Truncated {
                what,
                needed: (self.at as u64).saturating_add(len),
                available: self.bytes.len() as u64,
            });
        }
        let start = self.at;
        self.at += len as usize;
        Ok(&self.bytes[start..self.at])
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(word))
    }
}

impl Bundle {
    /// An empty bundle.
    pub fn new() -> Bundle {
        Bundle::default()
    }

    /// The bundle HIP builds: the empty host entry, then one `hipv4` entry per code object.
    pub fn for_hip<I>(code_objects: I) -> Result<Bundle>
    where
        I: IntoIterator<Item = (TargetId, Vec<u8>)>,
    {
        let mut bundle = Bundle::new();
        bundle.push(BundleEntryId::host(), Vec::new())?;
        for (target, data) in code_objects {
            bundle.push(BundleEntryId::hip(&target), data)?;
        }
        Ok(bundle)
    }

    /// Appends an entry; ids must be unique.
    pub fn push(&mut self, id: BundleEntryId, data: Vec<u8>) -> Result<()> {
        if self.entries.iter().any(|e| e.id.as_str() == id.as_str()) {
            return Err(CodeObjectError::DuplicateBundleEntry(id.to_string()));
        }
        self.entries.push(BundleEntry { id, data });
        Ok(())
    }

    /// The entries, in bundle order.
    pub fn entries(&self) -> &[BundleEntry] {
        &self.entries
    }

    /// Reads an uncompressed or `CCOB`-compressed bundle, checking that every entry lies
    /// inside the bundle, after the entry table, and apart from every other entry.
    pub fn parse(bytes: &[u8]) -> Result<Bundle> {
        if bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
            let inner = compressed::decompress(bytes)?;
            if inner.starts_with(COMPRESSED_BUNDLE_MAGIC) {
                return Err(CodeObjectError::Decompression(
                    "a compressed bundle holds another compressed bundle".into(),
                ));
            }
            return Bundle::parse(&inner);
        }
        let magic_len = bytes.len().min(BUNDLE_MAGIC.len());
        if magic_len == 0 || bytes[..magic_len] != BUNDLE_MAGIC[..magic_len] {
            return Err(CodeObjectError::NotBundle);
        }
        let mut cursor = Cursor { bytes, at: 0 };
        cursor.take(BUNDLE_MAGIC.len() as u64, "bundle magic")?;
        let count = cursor.u64("bundle entry count")?;
        let room = (bytes.len() - cursor.at) as u64 / ENTRY_FIELDS_SIZE;
        if count > room {
            return Err(CodeObjectError::Truncated {
                what: "bundle entry table",
                needed: count
                    .saturating_mul(ENTRY_FIELDS_SIZE)
                    .saturating_add(cursor.at as u64),
                available: bytes.len() as u64,
            });
        }
        let mut table = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let offset = cursor.u64("bundle entry table")?;
            let size = cursor.u64("bundle entry table")?;
            let id_len = cursor.u64("bundle entry table")?;
            let id = cursor.take(id_len, "bundle entry id")?;
            let id = std::str::from_utf8(id).map_err(|_| {
                CodeObjectError::BadBundleEntryId(String::from_utf8_lossy(id).into_owned())
            })?;
            table.push((BundleEntryId::parse(id)?, offset, size));
        }
        let table_end = cursor.at as u64;
        check_layout(&table, table_end, bytes.len() as u64)?;

        let mut bundle = Bundle::new();
        for (id, offset, size) in table {
            let data = bytes[offset as usize..(offset + size) as usize].to_vec();
            bundle.push(id, data)?;
        }
        Ok(bundle)
    }

    /// Serialises the bundle in the uncompressed format, entry data aligned to
    /// [`BUNDLE_ALIGNMENT`].
    pub fn write(&self) -> Vec<u8> {
        let table_len: u64 = self
            .entries
            .iter()
            .map(|e| ENTRY_FIELDS_SIZE + e.id.as_str().len() as u64)
            .sum();
        let mut cursor = BUNDLE_MAGIC.len() as u64 + 8 + table_len;
        let mut offsets = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            cursor = cursor.next_multiple_of(BUNDLE_ALIGNMENT);
            offsets.push(cursor);
            cursor += entry.data.len() as u64;
        }
        let mut out = Vec::with_capacity(cursor as usize);
        out.extend_from_slice(BUNDLE_MAGIC);
        out.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        for (entry, offset) in self.entries.iter().zip(&offsets) {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&(entry.data.len() as u64).to_le_bytes());
            out.extend_from_slice(&(entry.id.as_str().len() as u64).to_le_bytes());
            out.extend_from_slice(entry.id.as_str().as_bytes());
        }
        for (entry, offset) in self.entries.iter().zip(&offsets) {
            if !entry.data.is_empty() {
                out.resize(*offset as usize, 0);
                out.extend_from_slice(&entry.data);
            }
        }
        // Empty entries at the end still get an offset inside the file.
        out.resize(out.len().max(cursor as usize), 0);
        out
    }

    /// The AMDGPU entry to load on a device with target id `device`: same processor,
    /// compatible `sramecc`/`xnack` settings, the most specific one when several fit.
    pub fn select(&self, device: &TargetId) -> Result<&BundleEntry> {
        let device_entries = || {
            self.entries
                .iter()
                .filter_map(|e| e.id.target_id.as_ref().map(|t| (e, t)))
                .filter(|(e, _)| e.id.is_amdgpu())
        };
        device_entries()
            .filter(|(_, target)| target.can_run_on(device))
            .max_by_key(|(_, target)| target.specificity_for(device))
            .map(|(entry, _)| entry)
            .ok_or_else(|| {
                let held: Vec<String> = device_entries().map(|(_, t)| t.to_string()).collect();
                CodeObjectError::NoMatchingTarget {
                    wanted: device.to_string(),
                    available: if held.is_empty() {
                        "no device code objects".to_owned()
                    } else {
                        held.join(", ")
                    },
                }
            })
    }
}

/// Checks entry ranges against the bundle length, the entry table and each other.
fn check_layout(table: &[(BundleEntryId, u64, u64)], table_end: u64, len: u64) -> Result<()> {
    let mut ranges = Vec::with_capacity(table.len());
    for (id, offset, size) in table {
        let end = offset
            .checked_add(*size)
            .filter(|end| *end <= len)
            .ok_or_else(|| CodeObjectError::BundleEntryOutOfRange {
                id: id.to_string(),
                offset: *offset,
                size: *size,
                len,
            })?;
        if *size == 0 {
            continue;
        }
        if *offset < table_end {
            return Err(CodeObjectError::OverlappingBundleEntries {
                first: "bundle header".to_owned(),
                second: id.to_string(),
            });
        }
        ranges.push((*offset, end, id));
    }
    ranges.sort_by_key(|(start, _, _)| *start);
    for pair in ranges.windows(2) {
        let (_, first_end, first) = pair[0];
        let (second_start, _, second) = pair[1];
        if second_start < first_end {
            return Err(CodeObjectError::OverlappingBundleEntries {
                first: first.to_string(),
                second: second.to_string(),
            });
        }
    }
    Ok(())
}
