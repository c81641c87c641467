//! How many bytes an image passed by pointer alone spans.
//!
//! `hipModuleLoadData` receives no size, so the size is read from the image's own headers, as a
//! runtime must: an ELF file ends with the last of its headers, section contents and segment
//! contents; an offload bundle with the last of its entry table and entries; a compressed
//! bundle (`CCOB`, header versions 2 and 3) records its total size. Version 1 compressed
//! bundles record none and are refused.

use iron::code_object::{BUNDLE_MAGIC, COMPRESSED_BUNDLE_MAGIC, parse_compressed_header};

/// Largest image accepted, so that a corrupt header cannot make the loader read without bound.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const ELF_HEADER_SIZE: u64 = 64;
const PROGRAM_HEADER_SIZE: u64 = 56;
const SECTION_HEADER_SIZE: u64 = 64;
/// `SHT_NOBITS`: a section that occupies no bytes of the file.
const SHT_NOBITS: u32 = 8;
/// Most entries a bundle's table may list, and longest entry id, before it is taken as corrupt.
const MAX_BUNDLE_ENTRIES: u64 = 1 << 16;
const MAX_BUNDLE_ID_BYTES: u64 = 4096;

/// Reads `len` bytes at `offset` of the image; `None` when they are not there.
type Peek<'a> = dyn Fn(u64, u64) -> Option<&'a [u8]> + 'a;

/// A little-endian unsigned field of `len` bytes at `offset`.
fn field(peek: &Peek<'_>, offset: u64, len: u64) -> Result<u64, String> {
    let bytes = peek(offset, len).ok_or_else(|| format!("the image ends before byte {offset}"))?;
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    Ok(u64::from_le_bytes(word))
}

/// `a + b * c`, or an error naming `what` when it overflows or passes [`MAX_IMAGE_BYTES`].
fn table_end(what: &str, start: u64, count: u64, entry: u64) -> Result<u64, String> {
    count
        .checked_mul(entry)
        .and_then(|len| start.checked_add(len))
        .filter(|&end| end <= MAX_IMAGE_BYTES)
        .ok_or_else(|| format!("the {what} lies beyond {MAX_IMAGE_BYTES} bytes"))
}

/// The extent of an ELF64 little-endian file: its headers, tables, sections and segments.
fn elf_extent(peek: &Peek<'_>) -> Result<u64, String> {
    let ident = peek(0, 6).ok_or("the image ends inside the ELF identification")?;
    if ident[4] != 2 || ident[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".to_owned());
    }
    let phoff = field(peek, 0x20, 8)?;
    let shoff = field(peek, 0x28, 8)?;
    let phentsize = field(peek, 0x36, 2)?;
    let phnum = field(peek, 0x38, 2)?;
    let shentsize = field(peek, 0x3a, 2)?;
    let mut shnum = field(peek, 0x3c, 2)?;
    let mut end = ELF_HEADER_SIZE;
    if phnum > 0 {
        if phentsize < PROGRAM_HEADER_SIZE {
            return Err(format!("program header entries of {phentsize} bytes"));
        }
        end = end.max(table_end("program header table", phoff, phnum, phentsize)?);
        for index in 0..phnum {
            let header = phoff + index * phentsize;
            let offset = field(peek, header + 0x08, 8)?;
            let size = field(peek, header + 0x20, 8)?;
            end = end.max(table_end("segment", offset, 1, size)?);
        }
    }
    if shoff != 0 {
        if shentsize < SECTION_HEADER_SIZE {
            return Err(format!("section header entries of {shentsize} bytes"));
        }
        if shnum == 0 {
            // More sections than `e_shnum` holds: the count is section 0's `sh_size`.
            shnum = field(peek, shoff + 0x20, 8)?;
        }
        end = end.max(table_end("section header table", shoff, shnum, shentsize)?);
        for index in 0..shnum {
            let header = shoff + index * shentsize;
            if field(peek, header + 0x04, 4)? == u64::from(SHT_NOBITS) {
                continue;
            }
            let offset = field(peek, header + 0x18, 8)?;
            let size = field(peek, header + 0x20, 8)?;
            end = end.max(table_end("section", offset, 1, size)?);
        }
    }
    Ok(end)
}

/// The extent of an uncompressed offload bundle: its entry table and every entry.
fn bundle_extent(peek: &Peek<'_>) -> Result<u64, String> {
    let magic_len = BUNDLE_MAGIC.len() as u64;
    let count = field(peek, magic_len, 8)?;
    if count > MAX_BUNDLE_ENTRIES {
        return Err(format!("a bundle entry table of {count} entries"));
    }
    let mut cursor = magic_len + 8;
    let mut end = cursor;
    for _ in 0..count {
        let offset = field(peek, cursor, 8)?;
        let size = field(peek, cursor + 8, 8)?;
        let id_len = field(peek, cursor + 16, 8)?;
        if id_len > MAX_BUNDLE_ID_BYTES {
            return Err(format!("a bundle entry id of {id_len} bytes"));
        }
        cursor = table_end("bundle entry table", cursor + 24, 1, id_len)?;
        end = end
            .max(cursor)
            .max(table_end("bundle entry", offset, 1, size)?);
    }
    Ok(end)
}

/// The extent of a compressed bundle: the total size its header records.
fn compressed_extent(peek: &Peek<'_>) -> Result<u64, String> {
    let header_len = match field(peek, 4, 2)? {
        1 => return Err("a version 1 compressed bundle does not record its size".to_owned()),
        2 => 24,
        3 => 32,
        version => return Err(format!("compressed bundle version {version}")),
    };
    let header = peek(0, header_len).ok_or("the image ends inside the compressed header")?;
    let header = parse_compressed_header(header).map_err(|error| error.to_string())?;
    let total = header.total_size.unwrap_or(0);
    if total < header_len || total > MAX_IMAGE_BYTES {
        return Err(format!("a compressed bundle of {total} bytes"));
    }
    Ok(total)
}

/// The number of bytes the image `peek` reads spans, from its headers.
pub fn extent(peek: &Peek<'_>) -> Result<u64, String> {
    let magic = peek(0, 4).ok_or("the image is shorter than 4 bytes")?;
    if magic == ELF_MAGIC {
        elf_extent(peek)
    } else if magic == COMPRESSED_BUNDLE_MAGIC {
        compressed_extent(peek)
    } else if peek(0, BUNDLE_MAGIC.len() as u64) == Some(BUNDLE_MAGIC) {
        bundle_extent(peek)
    } else {
        Err("neither a code object (ELF) nor an offload bundle".to_owned())
    }
}

/// The image at `image`, its length read from its headers.
///
/// # Safety
/// `image` points to a complete code object or bundle, whose headers describe bytes that are all
/// readable for as long as the returned slice is used.
pub unsafe fn image_at<'a>(image: *const u8) -> Result<&'a [u8], String> {
    let peek = move |offset: u64, len: u64| -> Option<&'a [u8]> {
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= MAX_IMAGE_BYTES)?;
        // SAFETY: the bytes lie inside the image, whose headers describe them (the extent
        // calculation only reads where earlier fields point), as the caller guarantees.
        Some(unsafe {
            std::slice::from_raw_parts(image.add(offset as usize), (end - offset) as usize)
        })
    };
    let len = extent(&peek)?;
    // SAFETY: `len` bytes is the extent the image's headers describe, readable as the caller
    // guarantees.
    Ok(unsafe { std::slice::from_raw_parts(image, len as usize) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iron::code_object::{Bundle, TargetId};

    fn extent_of(bytes: &[u8]) -> Result<u64, String> {
        let peek = |offset: u64, len: u64| {
            let start = usize::try_from(offset).ok()?;
            bytes.get(start..start.checked_add(usize::try_from(len).ok()?)?)
        };
        extent(&peek)
    }

    /// An ELF64 header with the given tables, followed by zeros up to `len`.
    fn elf(len: usize, phoff: u64, phnum: u16, shoff: u64, shnum: u16) -> Vec<u8> {
        let mut bytes = vec![0u8; len];
        bytes[..4].copy_from_slice(ELF_MAGIC);
        bytes[4] = 2;
        bytes[5] = 1;
        bytes[0x20..0x28].copy_from_slice(&phoff.to_le_bytes());
        bytes[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        bytes[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        bytes[0x38..0x3a].copy_from_slice(&phnum.to_le_bytes());
        bytes[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        bytes[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        bytes
    }

    fn set_section(bytes: &mut [u8], header: usize, kind: u32, offset: u64, size: u64) {
        bytes[header + 4..header + 8].copy_from_slice(&kind.to_le_bytes());
        bytes[header + 0x18..header + 0x20].copy_from_slice(&offset.to_le_bytes());
        bytes[header + 0x20..header + 0x28].copy_from_slice(&size.to_le_bytes());
    }

    #[test]
    fn an_elf_file_ends_with_its_last_table_or_section() {
        // Section table at 0x100 (2 entries, ends 0x180); a section's bytes run to 0x300.
        let mut bytes = elf(0x300, 0, 0, 0x100, 2);
        set_section(&mut bytes, 0x140, 1, 0x200, 0x100);
        assert_eq!(extent_of(&bytes), Ok(0x300));
        // A NOBITS section occupies no file bytes, however large.
        set_section(&mut bytes, 0x140, SHT_NOBITS, 0x200, 0x10_0000);
        assert_eq!(extent_of(&bytes), Ok(0x180));
        // A program header whose segment runs further.
        let mut bytes = elf(0x400, 0x40, 1, 0, 0);
        bytes[0x48..0x50].copy_from_slice(&0x380u64.to_le_bytes());
        bytes[0x60..0x68].copy_from_slice(&0x80u64.to_le_bytes());
        assert_eq!(extent_of(&bytes), Ok(0x400));
    }

    #[test]
    fn corrupt_elf_headers_are_refused_without_reading_past_the_input() {
        let bytes = elf(0x100, 0, 0, 0x80, 4);
        assert!(extent_of(&bytes).is_err(), "the table runs past the input");
        let mut huge = elf(0x200, 0, 0, 0x100, 1);
        set_section(&mut huge, 0x100, 1, 0x10, MAX_IMAGE_BYTES);
        assert!(extent_of(&huge).unwrap_err().contains("beyond"));
        let mut wrong_class = elf(0x80, 0, 0, 0, 0);
        wrong_class[4] = 1;
        assert!(extent_of(&wrong_class).is_err());
        assert!(extent_of(b"\x7fEL").is_err());
        assert!(extent_of(b"not an image at all").is_err());
    }

    #[test]
    fn a_bundle_ends_with_its_last_entry() {
        let gfx = |name: &str| TargetId::parse(name).unwrap();
        let bundle = Bundle::for_hip([
            (gfx("gfx90a"), vec![1u8; 1000]),
            (gfx("gfx950"), vec![2u8; 3]),
        ])
        .unwrap()
        .write();
        assert_eq!(extent_of(&bundle), Ok(bundle.len() as u64));
        let mut padded = bundle.clone();
        padded.extend_from_slice(&[0xee; 100]);
        assert_eq!(extent_of(&padded), Ok(bundle.len() as u64));
        // The table alone tells the extent: the entries' bytes are not read.
        assert_eq!(
            extent_of(&bundle[..bundle.len() / 2]),
            Ok(bundle.len() as u64)
        );
        assert!(extent_of(&bundle[..40]).is_err());
    }

    #[test]
    fn compressed_bundles_report_their_recorded_size() {
        let mut version3 = b"CCOB".to_vec();
        version3.extend_from_slice(&3u16.to_le_bytes());
        version3.extend_from_slice(&1u16.to_le_bytes());
        version3.extend_from_slice(&4096u64.to_le_bytes());
        version3.extend_from_slice(&8192u64.to_le_bytes());
        version3.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(extent_of(&version3), Ok(4096));
        let mut version1 = version3.clone();
        version1[4..6].copy_from_slice(&1u16.to_le_bytes());
        assert!(extent_of(&version1).unwrap_err().contains("version 1"));
        let mut too_small = version3;
        too_small[8..16].copy_from_slice(&5u64.to_le_bytes());
        assert!(extent_of(&too_small).is_err());
    }
}
