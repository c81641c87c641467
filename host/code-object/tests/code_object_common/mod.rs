//! Shared helpers of the code-object tests: a hand-made AMDGPU ELF builder, the LLVM tools of
//! the pinned toolchain, and discovery of real code objects on this machine.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rmpv::Value;

pub const EM_AMDGPU: u16 = 224;
pub const ET_DYN: u16 = 3;
pub const GFX950_FLAGS: u32 = 0x4f | 0x100 | 0x400;

/// One kernel of a hand-made code object.
#[derive(Clone)]
pub struct KernelSpec {
    pub name: String,
    pub code: Vec<u8>,
    /// The 64 descriptor bytes; the entry offset (bytes 16..24) is filled in by the builder.
    pub descriptor: [u8; 64],
    /// The kernel's metadata map.
    pub metadata: Value,
    /// Whether the `<name>.kd` symbol is emitted.
    pub with_kd_symbol: bool,
}

/// A descriptor with the given words, for gfx9-style wave64 kernels.
pub fn descriptor_bytes(
    group: u32,
    private: u32,
    kernarg: u32,
    rsrc1: u32,
    rsrc2: u32,
    rsrc3: u32,
    properties: u16,
) -> [u8; 64] {
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&group.to_le_bytes());
    kd[4..8].copy_from_slice(&private.to_le_bytes());
    kd[8..12].copy_from_slice(&kernarg.to_le_bytes());
    kd[44..48].copy_from_slice(&rsrc3.to_le_bytes());
    kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&properties.to_le_bytes());
    kd
}

fn s(text: &str) -> Value {
    Value::from(text)
}

/// A kernel metadata map with the required keys.
pub fn kernel_metadata(name: &str, kernarg_size: u32, wave: u32, args: Vec<Value>) -> Value {
    Value::Map(vec![
        (s(".name"), s(name)),
        (s(".symbol"), s(&format!("{name}.kd"))),
        (s(".args"), Value::Array(args)),
        (s(".kernarg_segment_size"), Value::from(kernarg_size)),
        (s(".kernarg_segment_align"), Value::from(8)),
        (s(".group_segment_fixed_size"), Value::from(256)),
        (s(".private_segment_fixed_size"), Value::from(16)),
        (s(".wavefront_size"), Value::from(wave)),
        (s(".sgpr_count"), Value::from(18)),
        (s(".vgpr_count"), Value::from(12)),
        (s(".agpr_count"), Value::from(4)),
        (s(".sgpr_spill_count"), Value::from(0)),
        (s(".vgpr_spill_count"), Value::from(1)),
        (s(".max_flat_workgroup_size"), Value::from(256)),
        (s(".uses_dynamic_stack"), Value::from(false)),
    ])
}

/// A kernel argument map.
pub fn arg(offset: u32, size: u32, kind: &str, name: Option<&str>) -> Value {
    let mut entries = vec![
        (s(".offset"), Value::from(offset)),
        (s(".size"), Value::from(size)),
        (s(".value_kind"), s(kind)),
    ];
    if let Some(name) = name {
        entries.push((s(".name"), s(name)));
        entries.push((s(".address_space"), s("global")));
    }
    Value::Map(entries)
}

/// The root metadata map around `kernels`.
pub fn root_metadata(kernels: Vec<Value>) -> Value {
    Value::Map(vec![
        (
            s("amdhsa.version"),
            Value::Array(vec![Value::from(1), Value::from(2)]),
        ),
        (s("amdhsa.target"), s("amdgcn-amd-amdhsa--gfx950")),
        (s("amdhsa.kernels"), Value::Array(kernels)),
    ])
}

/// msgpack bytes of a value.
pub fn msgpack(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).expect("encoding to a Vec cannot fail");
    out
}

/// Builds a linked-looking AMDGPU code object: ELF header, PT_LOAD + PT_NOTE, and sections
/// .note, .rodata (descriptors), .text (code), .symtab, .strtab, .shstrtab. Every section is
/// loaded at an address equal to its file offset.
pub struct ElfBuilder {
    pub machine: u16,
    pub e_type: u16,
    pub osabi: u8,
    pub abi_version: u8,
    pub e_flags: u32,
    pub kernels: Vec<KernelSpec>,
    /// Overrides the note payload (the metadata built from the kernels otherwise).
    pub note_payload: Option<Vec<u8>>,
    pub note_type: u32,
    /// Whether the kernels' function symbols carry their code's size (assembly written
    /// without `.size` leaves it 0).
    pub sized_functions: bool,
}

impl ElfBuilder {
    pub fn new(kernels: Vec<KernelSpec>) -> ElfBuilder {
        ElfBuilder {
            machine: EM_AMDGPU,
            e_type: ET_DYN,
            osabi: 64,
            abi_version: 3,
            e_flags: GFX950_FLAGS,
            kernels,
            note_payload: None,
            note_type: 32,
            sized_functions: true,
        }
    }

    pub fn build(&self) -> Vec<u8> {
        let payload = self.note_payload.clone().unwrap_or_else(|| {
            msgpack(&root_metadata(
                self.kernels.iter().map(|k| k.metadata.clone()).collect(),
            ))
        });
        let mut out = vec![0u8; 64 + 2 * 56];

        let note_off = align(&mut out, 4);
        out.extend_from_slice(&7u32.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.note_type.to_le_bytes());
        out.extend_from_slice(b"AMDGPU\0\0");
        out.extend_from_slice(&payload);
        align(&mut out, 4);
        let note_size = out.len() - note_off;

        let rodata_off = align(&mut out, 64);
        out.resize(rodata_off + 64 * self.kernels.len(), 0);
        let rodata_size = out.len() - rodata_off;

        let text_off = align(&mut out, 256);
        let mut entries = Vec::new();
        for kernel in &self.kernels {
            let at = align(&mut out, 256);
            entries.push(at);
            out.extend_from_slice(&kernel.code);
        }
        let text_size = out.len() - text_off;
        for (i, (kernel, entry)) in self.kernels.iter().zip(&entries).enumerate() {
            let kd_at = rodata_off + 64 * i;
            let mut kd = kernel.descriptor;
            kd[16..24].copy_from_slice(&(*entry as i64 - kd_at as i64).to_le_bytes());
            out[kd_at..kd_at + 64].copy_from_slice(&kd);
        }
        let load_end = out.len();

        let mut strtab = vec![0u8];
        let mut symbols = vec![[0u8; 24]];
        for (i, (kernel, entry)) in self.kernels.iter().zip(&entries).enumerate() {
            let name_at = strtab.len() as u32;
            strtab.extend_from_slice(kernel.name.as_bytes());
            strtab.push(0);
            let size = if self.sized_functions {
                kernel.code.len() as u64
            } else {
                0
            };
            symbols.push(symbol(name_at, 0x12, 3, *entry as u64, size));
            if kernel.with_kd_symbol {
                let kd_name = strtab.len() as u32;
                strtab.extend_from_slice(format!("{}.kd", kernel.name).as_bytes());
                strtab.push(0);
                symbols.push(symbol(kd_name, 0x11, 2, (rodata_off + 64 * i) as u64, 64));
            }
        }
        let symtab_off = align(&mut out, 8);
        for sym in &symbols {
            out.extend_from_slice(sym);
        }
        let strtab_off = out.len();
        out.extend_from_slice(&strtab);
        let mut shstrtab = vec![0u8];
        let mut names = Vec::new();
        for name in [
            ".note",
            ".rodata",
            ".text",
            ".symtab",
            ".strtab",
            ".shstrtab",
        ] {
            names.push(shstrtab.len() as u32);
            shstrtab.extend_from_slice(name.as_bytes());
            shstrtab.push(0);
        }
        let shstrtab_off = out.len();
        out.extend_from_slice(&shstrtab);

        let shoff = align(&mut out, 8);
        let sections = [
            SectionSpec::default(),
            SectionSpec::alloc(names[0], 7, 2, note_off, note_size, 4),
            SectionSpec::alloc(names[1], 1, 2, rodata_off, rodata_size, 64),
            SectionSpec::alloc(names[2], 1, 6, text_off, text_size, 256),
            SectionSpec {
                name: names[3],
                kind: 2,
                offset: symtab_off,
                size: symbols.len() * 24,
                link: 5,
                info: 1,
                alignment: 8,
                entry_size: 24,
                ..SectionSpec::default()
            },
            SectionSpec::plain(names[4], 3, strtab_off, strtab.len()),
            SectionSpec::plain(names[5], 3, shstrtab_off, shstrtab.len()),
        ];
        for section in &sections {
            out.extend_from_slice(&section.encode());
        }

        let mut header = [0u8; 64];
        header[0..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[6] = 1;
        header[7] = self.osabi;
        header[8] = self.abi_version;
        header[16..18].copy_from_slice(&self.e_type.to_le_bytes());
        header[18..20].copy_from_slice(&self.machine.to_le_bytes());
        header[20..24].copy_from_slice(&1u32.to_le_bytes());
        header[32..40].copy_from_slice(&64u64.to_le_bytes());
        header[40..48].copy_from_slice(&(shoff as u64).to_le_bytes());
        header[48..52].copy_from_slice(&self.e_flags.to_le_bytes());
        header[52..54].copy_from_slice(&64u16.to_le_bytes());
        header[54..56].copy_from_slice(&56u16.to_le_bytes());
        header[56..58].copy_from_slice(&2u16.to_le_bytes());
        header[58..60].copy_from_slice(&64u16.to_le_bytes());
        header[60..62].copy_from_slice(&(sections.len() as u16).to_le_bytes());
        header[62..64].copy_from_slice(&6u16.to_le_bytes());
        out[0..64].copy_from_slice(&header);
        out[64..120].copy_from_slice(&program_header(1, 5, 0, load_end, 0x1000));
        out[120..176].copy_from_slice(&program_header(4, 4, note_off, note_size, 4));
        out
    }
}

/// One section header.
#[derive(Default)]
struct SectionSpec {
    name: u32,
    kind: u32,
    flags: u64,
    address: usize,
    offset: usize,
    size: usize,
    link: u32,
    info: u32,
    alignment: u64,
    entry_size: u64,
}

impl SectionSpec {
    /// An allocated section, loaded at an address equal to its file offset.
    fn alloc(name: u32, kind: u32, flags: u64, offset: usize, size: usize, alignment: u64) -> Self {
        SectionSpec {
            name,
            kind,
            flags,
            address: offset,
            offset,
            size,
            alignment,
            ..SectionSpec::default()
        }
    }

    /// A section that is not loaded.
    fn plain(name: u32, kind: u32, offset: usize, size: usize) -> Self {
        SectionSpec {
            name,
            kind,
            offset,
            size,
            alignment: 1,
            ..SectionSpec::default()
        }
    }

    fn encode(&self) -> [u8; 64] {
        let mut bytes = [0u8; 64];
        bytes[0..4].copy_from_slice(&self.name.to_le_bytes());
        bytes[4..8].copy_from_slice(&self.kind.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.flags.to_le_bytes());
        bytes[16..24].copy_from_slice(&(self.address as u64).to_le_bytes());
        bytes[24..32].copy_from_slice(&(self.offset as u64).to_le_bytes());
        bytes[32..40].copy_from_slice(&(self.size as u64).to_le_bytes());
        bytes[40..44].copy_from_slice(&self.link.to_le_bytes());
        bytes[44..48].copy_from_slice(&self.info.to_le_bytes());
        bytes[48..56].copy_from_slice(&self.alignment.to_le_bytes());
        bytes[56..64].copy_from_slice(&self.entry_size.to_le_bytes());
        bytes
    }
}

fn program_header(kind: u32, flags: u32, offset: usize, size: usize, alignment: u64) -> [u8; 56] {
    let mut ph = [0u8; 56];
    ph[0..4].copy_from_slice(&kind.to_le_bytes());
    ph[4..8].copy_from_slice(&flags.to_le_bytes());
    ph[8..16].copy_from_slice(&(offset as u64).to_le_bytes());
    ph[16..24].copy_from_slice(&(offset as u64).to_le_bytes());
    ph[24..32].copy_from_slice(&(offset as u64).to_le_bytes());
    ph[32..40].copy_from_slice(&(size as u64).to_le_bytes());
    ph[40..48].copy_from_slice(&(size as u64).to_le_bytes());
    ph[48..56].copy_from_slice(&alignment.to_le_bytes());
    ph
}

fn symbol(name: u32, info: u8, shndx: u16, value: u64, size: u64) -> [u8; 24] {
    let mut sym = [0u8; 24];
    sym[0..4].copy_from_slice(&name.to_le_bytes());
    sym[4] = info;
    sym[6..8].copy_from_slice(&shndx.to_le_bytes());
    sym[8..16].copy_from_slice(&value.to_le_bytes());
    sym[16..24].copy_from_slice(&size.to_le_bytes());
    sym
}

fn align(out: &mut Vec<u8>, alignment: usize) -> usize {
    let len = out.len().next_multiple_of(alignment);
    out.resize(len, 0);
    len
}

/// The two-kernel object most tests start from: `add` (wave64, 3 args) and `scale`.
pub fn sample_kernels() -> Vec<KernelSpec> {
    let add_args = vec![
        arg(0, 8, "global_buffer", Some("a")),
        arg(8, 8, "global_buffer", Some("b")),
        arg(16, 4, "by_value", None),
        arg(24, 8, "hidden_block_count_x", None),
    ];
    vec![
        KernelSpec {
            name: "add".into(),
            code: vec![0x00, 0x00, 0x81, 0xbf, 0x01, 0x02, 0x03, 0x04],
            descriptor: descriptor_bytes(256, 16, 32, 0x00af_0081, 0x0000_0084, 2, 0x0008),
            metadata: kernel_metadata("add", 32, 64, add_args),
            with_kd_symbol: true,
        },
        KernelSpec {
            name: "scale".into(),
            code: (0u8..44).collect(),
            descriptor: descriptor_bytes(256, 16, 8, 0x00af_0040, 0x0000_0390, 1, 0x000b),
            metadata: kernel_metadata("scale", 8, 64, vec![arg(0, 8, "global_buffer", Some("x"))]),
            with_kd_symbol: true,
        },
    ]
}

/// The directory of the pinned toolchain's LLVM tools, if they are installed.
pub fn llvm_tool(name: &str) -> Option<PathBuf> {
    let tool = find_llvm_tool(name);
    assert!(
        tool.is_some() || std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
        "{name} from the pinned toolchain's llvm-tools is missing: `cargo xtask test` needs it"
    );
    tool
}

fn find_llvm_tool(name: &str) -> Option<PathBuf> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let sysroot = String::from_utf8(sysroot.stdout).ok()?;
    let tool = Path::new(sysroot.trim())
        .join("lib/rustlib/x86_64-unknown-linux-gnu/bin")
        .join(name);
    tool.exists().then_some(tool)
}

/// Runs an LLVM tool and returns its standard output.
pub fn run_tool(tool: &Path, args: &[&str], file: &Path) -> String {
    let output = Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .expect("the LLVM tool runs");
    assert!(
        output.status.success(),
        "{} failed on {}",
        tool.display(),
        file.display()
    );
    String::from_utf8(output.stdout).expect("tool output is UTF-8")
}

/// Real code objects available here: the gfx950 probe sample, everything under
/// `IRON_CODE_OBJECT_DIR`, and the `*.co` and `*.bundle` files `cargo xtask build` leaves in
/// `target/iron`.
pub fn real_code_objects() -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(dir) = std::env::var("IRON_CODE_OBJECT_DIR") {
        collect(Path::new(&dir), &["co", "elf"], &mut found);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = ["co", "bundle"];
    // The workspace's `target/iron`, whichever crate of the workspace compiles this module.
    for dir in manifest.ancestors() {
        collect(&dir.join("target/iron"), &built, &mut found);
    }
    if let Ok(target_dir) = std::env::var("CARGO_TARGET_DIR") {
        collect(&Path::new(&target_dir).join("iron"), &built, &mut found);
        collect(
            &Path::new(&target_dir).join("../target/iron"),
            &built,
            &mut found,
        );
    }
    found.sort();
    found.dedup();
    found
}

fn collect(dir: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, extensions, found);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e))
        {
            found.push(path.canonicalize().unwrap_or(path));
        }
    }
}
