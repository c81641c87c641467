//! The ELF layer: header checks, notes, symbols and address-to-bytes lookups, over the
//! `object` crate's bounds-checked low-level ELF reader.

use object::LittleEndian;
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader, SectionTable, Sym};

use super::error::{CodeObjectError, Result};
use super::target::CodeObjectVersion;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const ELF_HEADER_SIZE: usize = 64;
/// Indices into `e_ident`.
const EI_CLASS: usize = 4;
const EI_DATA: usize = 5;
const EI_OSABI: usize = 7;
const EI_ABIVERSION: usize = 8;
const OSABI_AMDGPU_HSA: u8 = 64;
/// Owner name of AMDGPU notes.
const NOTE_OWNER_AMDGPU: &[u8] = b"AMDGPU";
/// `NT_AMDGPU_METADATA`: the msgpack metadata note (code object v3+).
const NT_AMDGPU_METADATA: u32 = 32;

/// A validated AMDGPU ELF image, borrowed from the caller's bytes.
pub(super) struct ElfImage<'a> {
    data: &'a [u8],
    header: &'a FileHeader64<LittleEndian>,
    sections: SectionTable<'a, FileHeader64<LittleEndian>>,
    /// Code object version from `EI_ABIVERSION`.
    pub version: CodeObjectVersion,
    /// The ELF `e_flags` word.
    pub e_flags: u32,
}

/// A function or object symbol.
pub(super) struct ElfSymbol<'a> {
    pub name: &'a [u8],
    pub value: u64,
    pub size: u64,
    pub is_function: bool,
}

/// A dynamic relocation: at `offset` (a virtual address), write what `kind` computes from the
/// load base, the symbol's value and the addend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relocation {
    /// The virtual address to patch.
    pub offset: u64,
    /// The relocation type (`R_AMDGPU_*`).
    pub kind: u32,
    /// The value of the relocation's symbol (0 when it names none).
    pub symbol_value: u64,
    /// The addend.
    pub addend: i64,
}

impl Relocation {
    /// The 64-bit value a loader writes at `offset` when the code object is placed at `base`,
    /// or `None` for a relocation type other than [`R_AMDGPU_ABS64`] and
    /// [`R_AMDGPU_RELATIVE64`] (the two the linker emits into a code object's data and its
    /// global offset table).
    pub fn value_at(&self, base: u64) -> Option<u64> {
        match self.kind {
            R_AMDGPU_ABS64 => Some(
                base.wrapping_add(self.symbol_value)
                    .wrapping_add_signed(self.addend),
            ),
            R_AMDGPU_RELATIVE64 => Some(base.wrapping_add_signed(self.addend)),
            _ => None,
        }
    }
}

/// `R_AMDGPU_ABS64` (LLVM's `ELFRelocs/AMDGPU.def`): base + symbol + addend, 64 bits.
pub const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_RELATIVE64`: base + addend, 64 bits.
pub const R_AMDGPU_RELATIVE64: u32 = 13;

/// One `PT_LOAD` segment: what a loader copies to `vaddr`, zero-filled up to `mem_size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSegment {
    /// Virtual address of the first byte.
    pub vaddr: u64,
    /// Bytes the segment occupies in memory (at least `bytes.len()`; the rest is zero).
    pub mem_size: u64,
    /// Bytes stored in the file.
    pub bytes: Vec<u8>,
    /// `PF_X` (1), `PF_W` (2), `PF_R` (4) flags.
    pub flags: u32,
}

fn malformed(error: object::read::Error) -> CodeObjectError {
    CodeObjectError::MalformedElf(error.to_string())
}

fn machine_name(machine: u16) -> String {
    match machine {
        elf::EM_386 => "x86 (i386)".into(),
        elf::EM_X86_64 => "x86_64".into(),
        elf::EM_ARM => "arm".into(),
        elf::EM_AARCH64 => "aarch64".into(),
        elf::EM_PPC64 => "ppc64".into(),
        elf::EM_RISCV => "riscv".into(),
        elf::EM_CUDA => "NVIDIA CUDA".into(),
        other => format!("ELF machine {other}"),
    }
}

/// Checks the identification bytes and the fields this reader depends on, in an order that
/// gives the most useful message first (not ELF, then layout, then machine).
fn check_identification(data: &[u8]) -> Result<()> {
    let magic_len = data.len().min(ELF_MAGIC.len());
    if data[..magic_len] != ELF_MAGIC[..magic_len] {
        return Err(CodeObjectError::NotElf);
    }
    if data.len() < ELF_HEADER_SIZE {
        return Err(CodeObjectError::Truncated {
            what: "ELF header",
            needed: ELF_HEADER_SIZE as u64,
            available: data.len() as u64,
        });
    }
    match data[EI_CLASS] {
        elf::ELFCLASS64 => {}
        elf::ELFCLASS32 => return Err(CodeObjectError::WrongElfLayout("32-bit ELF")),
        _ => return Err(CodeObjectError::WrongElfLayout("invalid ELF class")),
    }
    if data[EI_DATA] != elf::ELFDATA2LSB {
        return Err(CodeObjectError::WrongElfLayout(
            "big-endian or invalid byte order",
        ));
    }
    let machine = u16::from_le_bytes([data[18], data[19]]);
    if machine != elf::EM_AMDGPU {
        return Err(CodeObjectError::WrongMachine(machine_name(machine)));
    }
    if data[EI_OSABI] != OSABI_AMDGPU_HSA {
        return Err(CodeObjectError::WrongOsAbi(data[EI_OSABI]));
    }
    Ok(())
}

impl<'a> ElfImage<'a> {
    /// Validates `data` as a linked AMDGPU HSA code object and opens its section table.
    pub fn open(data: &'a [u8]) -> Result<ElfImage<'a>> {
        check_identification(data)?;
        let version = CodeObjectVersion::from_abi_version(data[EI_ABIVERSION])?;
        let header = FileHeader64::<LittleEndian>::parse(data).map_err(malformed)?;
        let endian = LittleEndian;
        let e_type = header.e_type(endian);
        if e_type != elf::ET_DYN {
            return Err(CodeObjectError::NotSharedObject(e_type));
        }
        let sections = header.sections(endian, data).map_err(malformed)?;
        Ok(ElfImage {
            data,
            header,
            sections,
            version,
            e_flags: header.e_flags(endian),
        })
    }

    /// The payload of the `NT_AMDGPU_METADATA` note, from a note section or else a note
    /// segment.
    pub fn metadata_note(&self) -> Result<&'a [u8]> {
        let endian = LittleEndian;
        for section in self.sections.iter() {
            if let Some(notes) = section.notes(endian, self.data).map_err(malformed)?
                && let Some(desc) = find_metadata(notes)?
            {
                return Ok(desc);
            }
        }
        for segment in self
            .header
            .program_headers(endian, self.data)
            .map_err(malformed)?
        {
            if let Some(notes) = segment.notes(endian, self.data).map_err(malformed)?
                && let Some(desc) = find_metadata(notes)?
            {
                return Ok(desc);
            }
        }
        Err(CodeObjectError::MissingMetadata)
    }

    /// Function and object symbols from `.symtab`, or `.dynsym` when the image is stripped.
    pub fn symbols(&self) -> Result<Vec<ElfSymbol<'a>>> {
        let endian = LittleEndian;
        let mut table = self
            .sections
            .symbols(endian, self.data, elf::SHT_SYMTAB)
            .map_err(malformed)?;
        if table.is_empty() {
            table = self
                .sections
                .symbols(endian, self.data, elf::SHT_DYNSYM)
                .map_err(malformed)?;
        }
        let strings = table.strings();
        let mut out = Vec::new();
        for symbol in table.iter() {
            let kind = symbol.st_type();
            if kind != elf::STT_FUNC && kind != elf::STT_OBJECT {
                continue;
            }
            out.push(ElfSymbol {
                name: symbol.name(endian, strings).map_err(malformed)?,
                value: symbol.st_value(endian),
                size: symbol.st_size(endian),
                is_function: kind == elf::STT_FUNC,
            });
        }
        Ok(out)
    }

    /// The dynamic relocations (`SHT_RELA` sections linked to the dynamic symbol table) a
    /// loader applies, each with the value of its symbol (0 for none).
    pub fn relocations(&self) -> Result<Vec<Relocation>> {
        let endian = LittleEndian;
        let mut out = Vec::new();
        for section in self.sections.iter() {
            if section.sh_type(endian) != elf::SHT_RELA {
                continue;
            }
            let Some((entries, link)) = section.rela(endian, self.data).map_err(malformed)? else {
                continue;
            };
            let symbols = self
                .sections
                .symbol_table_by_index(endian, self.data, link)
                .map_err(malformed)?;
            for entry in entries {
                let index = entry.r_sym(endian, false);
                let symbol_value = if index == 0 {
                    0
                } else {
                    symbols
                        .symbol(object::SymbolIndex(index as usize))
                        .map_err(malformed)?
                        .st_value(endian)
                };
                out.push(Relocation {
                    offset: entry.r_offset(endian),
                    kind: entry.r_type(endian, false),
                    symbol_value,
                    addend: entry.r_addend(endian),
                });
            }
        }
        Ok(out)
    }

    /// The file bytes that are loaded at `[address, address + len)`, when one allocated,
    /// file-backed section holds all of them.
    pub fn bytes_at(&self, address: u64, len: u64) -> Option<&'a [u8]> {
        let endian = LittleEndian;
        let end = address.checked_add(len)?;
        self.sections.iter().find_map(|section| {
            let start = section.sh_addr(endian);
            let size = section.sh_size(endian);
            let allocated = section.sh_flags(endian) & u64::from(elf::SHF_ALLOC) != 0;
            if !allocated || section.sh_type(endian) == elf::SHT_NOBITS {
                return None;
            }
            if address < start || end > start.checked_add(size)? {
                return None;
            }
            let bytes = section.data(endian, self.data).ok()?;
            let from = usize::try_from(address - start).ok()?;
            let to = usize::try_from(end - start).ok()?;
            bytes.get(from..to)
        })
    }

    /// The end address of the allocated, file-backed section that holds `address`.
    pub fn section_end(&self, address: u64) -> Option<u64> {
        let endian = LittleEndian;
        self.sections.iter().find_map(|section| {
            let start = section.sh_addr(endian);
            let end = start.checked_add(section.sh_size(endian))?;
            let allocated = section.sh_flags(endian) & u64::from(elf::SHF_ALLOC) != 0;
            let backed = section.sh_type(endian) != elf::SHT_NOBITS;
            (allocated && backed && (start..end).contains(&address)).then_some(end)
        })
    }

    /// The `.text` section's load address and bytes.
    pub fn text(&self) -> Result<(u64, &'a [u8])> {
        let endian = LittleEndian;
        let (_, section) = self
            .sections
            .section_by_name(endian, b".text")
            .ok_or(CodeObjectError::MissingText)?;
        if section.sh_type(endian) == elf::SHT_NOBITS {
            return Err(CodeObjectError::MissingText);
        }
        let bytes = section.data(endian, self.data).map_err(malformed)?;
        Ok((section.sh_addr(endian), bytes))
    }

    /// Every `PT_LOAD` segment, copied.
    pub fn load_segments(&self) -> Result<Vec<LoadSegment>> {
        let endian = LittleEndian;
        let mut out = Vec::new();
        for segment in self
            .header
            .program_headers(endian, self.data)
            .map_err(malformed)?
        {
            if segment.p_type(endian) != elf::PT_LOAD {
                continue;
            }
            let bytes = segment.data(endian, self.data).map_err(|()| {
                CodeObjectError::MalformedElf("PT_LOAD segment lies outside the file".into())
            })?;
            let mem_size = segment.p_memsz(endian);
            if (bytes.len() as u64) > mem_size {
                return Err(CodeObjectError::MalformedElf(
                    "PT_LOAD segment has more file bytes than memory bytes".into(),
                ));
            }
            out.push(LoadSegment {
                vaddr: segment.p_vaddr(endian),
                mem_size,
                bytes: bytes.to_vec(),
                flags: segment.p_flags(endian),
            });
        }
        Ok(out)
    }
}

fn find_metadata<'a>(
    mut notes: object::read::elf::NoteIterator<'a, FileHeader64<LittleEndian>>,
) -> Result<Option<&'a [u8]>> {
    while let Some(note) = notes
        .next()
        .map_err(|e| CodeObjectError::BadMetadata(format!("malformed note: {e}")))?
    {
        if note.name() == NOTE_OWNER_AMDGPU && note.n_type(LittleEndian) == NT_AMDGPU_METADATA {
            return Ok(Some(note.desc()));
        }
    }
    Ok(None)
}
