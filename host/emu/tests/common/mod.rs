//! Test support: LLVM tools of the pinned toolchain, and reading code objects with the `object` crate.
#![allow(dead_code)]

pub mod atomic_model;
pub mod hip_buffer;
pub mod hip_classes;
pub mod hip_kernels;
pub mod objdump_diff;
pub mod random_instruction;
pub mod rust_kernels;
pub mod transpose;
pub mod variant;

use object::{Object, ObjectSection, ObjectSymbol};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reports that a test cannot run here because a tool or test object is missing. Under
/// `cargo xtask test` (`IRON_REQUIRE_TOOLS` set) every tool is installed and every object built, so
/// there the absence is a failure, not a skip.
pub fn skip(reason: &str) {
    assert!(
        std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
        "{reason}: `cargo xtask test` provides it"
    );
    eprintln!("{reason}: skipped");
}

/// Path of an LLVM tool shipped with the toolchain's `llvm-tools` component.
pub fn llvm_tool(name: &str) -> Option<PathBuf> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8(out.stdout).ok()?;
    let p = Path::new(sysroot.trim())
        .join("lib/rustlib/x86_64-unknown-linux-gnu/bin")
        .join(name);
    p.exists().then_some(p)
}

/// One line of `llvm-objdump -d` output: address and instruction text (comment removed, whitespace
/// normalised).
#[derive(Debug, Clone)]
pub struct ObjdumpLine {
    pub address: u64,
    pub text: String,
}

/// One instruction line of `llvm-objdump -d` as it prints it.
pub struct RawLine<'a> {
    pub address: u64,
    /// The instruction, its comment removed (not normalised).
    pub text: &'a str,
    /// Its bytes, as the comment prints them (a literal included).
    pub encoding: &'a str,
}

/// Normalises an instruction's text: comments removed, runs of whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let t = text.split("//").next().unwrap_or("");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs `llvm-objdump -d --mcpu=<gfx>` on `path`; returns every instruction line.
pub fn objdump(path: &Path, gfx: &str) -> Vec<ObjdumpLine> {
    objdump_wave(path, gfx, false)
}

/// Runs `llvm-objdump -d --mcpu=<gfx>` on `path`, for wave64 code with
/// `--mattr=+wavefrontsize64`; returns every instruction line.
pub fn objdump_wave(path: &Path, gfx: &str, wave64: bool) -> Vec<ObjdumpLine> {
    let features: &[&str] = if wave64 { &["+wavefrontsize64"] } else { &[] };
    objdump_features(path, gfx, features)
}

/// Runs `llvm-objdump -d --mcpu=<gfx>` on `path` with the target `features` (`--mattr`);
/// returns every instruction line.
pub fn objdump_features(path: &Path, gfx: &str, features: &[&str]) -> Vec<ObjdumpLine> {
    let mut lines = Vec::new();
    objdump_each(path, gfx, features, |line| {
        lines.push(ObjdumpLine {
            address: line.address,
            text: normalize(line.text),
        })
    });
    lines
}

/// Runs `llvm-objdump -d --mcpu=<gfx>` on `path` with the target `features` (`--mattr`) and
/// hands `each` every instruction line. The tool writes to a file, not a pipe: piping the
/// hundreds of megabytes a large code object disassembles to took twice as long.
pub fn objdump_each(path: &Path, gfx: &str, features: &[&str], mut each: impl FnMut(RawLine<'_>)) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let tool = llvm_tool("llvm-objdump").expect("llvm-objdump from the toolchain's llvm-tools");
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let listing = std::env::temp_dir().join(format!("iron-objdump-{}-{run}.s", std::process::id()));
    let file = std::fs::File::create(&listing).expect("create llvm-objdump's listing");
    let mut cmd = Command::new(tool);
    cmd.arg("-d").arg(format!("--mcpu={gfx}"));
    if !features.is_empty() {
        cmd.arg(format!("--mattr={}", features.join(",")));
    }
    // What the tool printed counts even when it stops early: it crashes on some random words
    // (`disasm_fuzz.rs`), after the lines before them.
    cmd.arg(path)
        .stdout(file)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run llvm-objdump");
    let bytes = std::fs::read(&listing).expect("read llvm-objdump's listing");
    let _ = std::fs::remove_file(&listing);
    let text = String::from_utf8_lossy(&bytes);
    for line in text.lines() {
        if let Some(raw) = line.strip_prefix('\t').and_then(parse_line) {
            each(raw);
        }
    }
}

/// An instruction line of `llvm-objdump -d` (its leading tab removed): `text // address: bytes`.
fn parse_line(line: &str) -> Option<RawLine<'_>> {
    let (text, comment) = line.split_once("//")?;
    let (address, encoding) = comment.trim().split_once(':')?;
    Some(RawLine {
        address: u64::from_str_radix(address.trim(), 16).ok()?,
        text,
        encoding: encoding.trim(),
    })
}

/// A code object's executable text and kernels.
pub struct CodeObject {
    pub path: PathBuf,
    pub e_flags: u32,
    pub text: Vec<u8>,
    pub text_address: u64,
    /// (name, address, size) of each function symbol in `.text`.
    pub functions: Vec<(String, u64, u64)>,
    /// (kernel name, descriptor bytes) of each `<name>.kd` symbol.
    pub descriptors: Vec<(String, Vec<u8>)>,
}

/// Reads a code object (an AMDGPU ELF).
pub fn read_code_object(path: &Path) -> Option<CodeObject> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let e_flags = match file.flags() {
        object::FileFlags::Elf { e_flags, .. } => e_flags,
        _ => return None,
    };
    let text = file.section_by_name(".text")?;
    let text_address = text.address();
    let text_bytes = text.data().ok()?.to_vec();
    let mut functions = Vec::new();
    let mut descriptors = Vec::new();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if sym.kind() == object::SymbolKind::Text && sym.section_index() == Some(text.index()) {
            functions.push((name.to_string(), sym.address(), sym.size()));
        }
        let section = sym
            .section_index()
            .and_then(|i| file.section_by_index(i).ok());
        if let (Some(kernel), Some(sec)) = (name.strip_suffix(".kd"), section) {
            let off = (sym.address() - sec.address()) as usize;
            if let Some(d) = sec.data().ok().and_then(|b| b.get(off..off + 64)) {
                descriptors.push((kernel.to_string(), d.to_vec()));
            }
        }
    }
    functions.sort_by_key(|f| f.1);
    Some(CodeObject {
        path: path.to_path_buf(),
        e_flags,
        text: text_bytes,
        text_address,
        functions,
        descriptors,
    })
}

/// The folder `cargo xtask test` builds the emulator's test kernels into (`IRON_EMU_TEST_OBJECTS`):
/// `rust_kernels_<gfx>.elf` from `tests/data/rust`, `hip_kernels_<gfx>.co` from
/// `tests/data/src/hip_kernels.hip` (clang-22), `mfma_scale_gfx950.co` from
/// `tests/data/src/mfma_scale.ll` (llc).
pub fn test_objects_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("IRON_EMU_TEST_OBJECTS").expect(
        "IRON_EMU_TEST_OBJECTS is not set: these tests run under `cargo xtask test`, which builds \
         the emulator's test kernels",
    ))
}

/// Every code object the tests can find, each once: the test kernels, the library build output
/// (`IRON_CODE_OBJECT_DIR`, searched recursively for `*.co`) but for the ROCm corpus extracted
/// below it (`IRON_EMU_CORPUS`, which `corpus.rs` compares), and `EMU_EXTRA_CODE_OBJECTS`
/// (colon-separated files).
pub fn all_code_objects() -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(&test_objects_dir(), &mut out, &["co", "elf"]);
    if let Ok(dir) = std::env::var("IRON_CODE_OBJECT_DIR") {
        collect(Path::new(&dir), &mut out, &["co"]);
    }
    if let Some(corpus) = std::env::var_os("IRON_EMU_CORPUS") {
        out.retain(|p| !p.starts_with(&corpus));
    }
    if let Ok(list) = std::env::var("EMU_EXTRA_CODE_OBJECTS") {
        out.extend(list.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    out.sort();
    out.dedup();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, exts: &[&str]) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out, exts);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
}

/// Assembles raw instruction words into an ELF with `llc` (module-level `.long` directives), so that
/// `llvm-objdump` can disassemble them. Each entry is placed at a 16-byte slot padded with `s_nop 0`.
pub fn words_to_elf(gfx: &str, slots: &[Vec<u32>], dir: &Path) -> PathBuf {
    let mut ir = String::from(
        "target triple = \"amdgcn-amd-amdhsa\"\nmodule asm \".text\"\nmodule asm \"probe:\"\n",
    );
    for words in slots {
        let mut padded = words.clone();
        padded.resize(SLOT_DWORDS, 0xBF80_0000);
        let list: Vec<String> = padded.iter().map(|w| format!("{w:#010x}")).collect();
        ir.push_str(&format!("module asm \".long {}\"\n", list.join(", ")));
    }
    let ll = dir.join(format!("probe_{gfx}.ll"));
    let obj = dir.join(format!("probe_{gfx}.o"));
    std::fs::write(&ll, ir).expect("write IR");
    let llc = llvm_tool("llc").expect("llc from the toolchain's llvm-tools");
    let st = Command::new(llc)
        .args([
            "-mtriple=amdgcn-amd-amdhsa",
            &format!("-mcpu={gfx}"),
            "-filetype=obj",
        ])
        .arg(&ll)
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("run llc");
    assert!(st.success(), "llc failed");
    obj
}

/// Dwords per slot in [`words_to_elf`].
pub const SLOT_DWORDS: usize = 6;

/// A code object loaded into an emulated GPU the way a driver would: every loadable segment copied
/// into one device allocation (so code-relative data works), its dynamic relocations applied,
/// the text registered as code.
pub struct Loaded {
    pub gpu: iron_emu::Gpu,
    pub code: iron_emu::CodeId,
    pub image_base: u64,
    /// (kernel name, descriptor address, descriptor).
    pub kernels: Vec<(String, u64, iron_emu::KernelDescriptor)>,
}

/// Loads the code object at `path` into a fresh GPU of its target.
pub fn load(path: &Path) -> Loaded {
    let data = std::fs::read(path).expect("read code object");
    let file = object::File::parse(&*data).expect("parse ELF");
    let co = read_code_object(path).expect("code object");
    let parsed = iron_code_object::CodeObject::parse(&data).expect("code object");
    let target = iron_emu::Target::from_elf_flags(co.e_flags).expect("modelled target");
    let mut gpu = iron_emu::Gpu::new(target);
    let segments = parsed.load_segments();
    let end = segments
        .iter()
        .map(|s| s.vaddr + s.mem_size)
        .max()
        .unwrap_or(0);
    let image_base = gpu
        .memory_mut()
        .alloc(end.max(1), 4096)
        .expect("image allocation");
    for seg in segments {
        // The file's bytes, then zeros up to the segment's memory size (.bss).
        let mut bytes = seg.bytes.clone();
        bytes.resize(bytes.len().max(seg.mem_size as usize), 0);
        gpu.memory_mut()
            .write(image_base + seg.vaddr, &bytes)
            .expect("copy segment");
    }
    for relocation in parsed.relocations() {
        let value = relocation
            .value_at(image_base)
            .unwrap_or_else(|| panic!("relocation type {} is not applied", relocation.kind));
        gpu.memory_mut()
            .write(image_base + relocation.offset, &value.to_le_bytes())
            .expect("apply relocation");
    }
    let code = gpu.load_code(&co.text, image_base + co.text_address);
    let mut kernels = Vec::new();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if let Some(k) = name.strip_suffix(".kd") {
            let addr = image_base + sym.address();
            let bytes = gpu.memory().read_vec(addr, 64).expect("descriptor");
            let kd = iron_emu::KernelDescriptor::from_bytes(&bytes).expect("descriptor");
            kernels.push((k.to_string(), addr, kd));
        }
    }
    Loaded {
        gpu,
        code,
        image_base,
        kernels,
    }
}

impl Loaded {
    /// Launches kernel `name` with explicit kernarg bytes (zero-padded to the descriptor's size).
    pub fn launch(
        &mut self,
        name: &str,
        args: &[u8],
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> Result<iron_emu::Counters, iron_emu::EmuError> {
        let (_, kd_addr, kd) = self
            .kernels
            .iter()
            .find(|k| k.0 == name)
            .unwrap_or_else(|| panic!("no kernel {name}"))
            .clone();
        let mut kernarg = args.to_vec();
        kernarg.resize(kernarg.len().max(kd.kernarg_size as usize), 0);
        let d = iron_emu::Dispatch {
            kernel_name: name,
            code: self.code,
            entry: kd_addr.wrapping_add(kd.kernel_code_entry_byte_offset as u64),
            descriptor: kd,
            kernarg: &kernarg,
            grid,
            workgroup_size: block,
            dynamic_lds,
            buffers: None,
        };
        self.gpu.dispatch(&d)
    }

    /// Allocates a device buffer holding `bytes`.
    pub fn upload(&mut self, bytes: &[u8]) -> u64 {
        let a = self
            .gpu
            .memory_mut()
            .alloc(bytes.len().max(1) as u64, 256)
            .expect("alloc");
        self.gpu.memory_mut().write(a, bytes).expect("write");
        a
    }

    /// Reads `len` bytes of device memory.
    pub fn download(&self, address: u64, len: usize) -> Vec<u8> {
        self.gpu
            .memory()
            .read_vec(address, len as u64)
            .expect("read")
    }
}

/// Kernarg bytes built field by field at natural alignment.
#[derive(Default)]
pub struct Args(pub Vec<u8>);

impl Args {
    pub fn ptr(mut self, p: u64) -> Self {
        self.align(8);
        self.0.extend_from_slice(&p.to_le_bytes());
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.align(4);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.align(8);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32(mut self, v: f32) -> Self {
        self.align(4);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn align(&mut self, a: usize) {
        while !self.0.len().is_multiple_of(a) {
            self.0.push(0);
        }
    }
}

/// Path of one of the test kernels' code objects.
pub fn data(name: &str) -> PathBuf {
    test_objects_dir().join(name)
}

/// Bytes of a slice of plain values.
pub fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: `T: Copy` plain data read as bytes; the slice is valid for its whole length.
    unsafe {
        std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)).to_vec()
    }
}

/// Values of type `T` from bytes (length must be a multiple of the size of `T`).
pub fn from_bytes<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    let mut out = vec![T::default(); n];
    // SAFETY: `out` holds `n` values, exactly `n * size_of::<T>()` bytes, and `T` is plain data.
    unsafe {
        std::ptr::copy_nonoverlapping(
            b.as_ptr(),
            out.as_mut_ptr().cast::<u8>(),
            n * std::mem::size_of::<T>(),
        )
    };
    out
}

/// Assembles instruction lines for `gfx` with `llc` (inline asm in an otherwise empty kernel) and
/// returns the machine code of the kernel body (the inline asm, then `s_endpgm`). `None` if `llc` is
/// not installed; panics if it rejects the assembly.
pub fn assemble(gfx: &str, lines: &[&str]) -> Option<Vec<u8>> {
    assemble_with(gfx, &[], lines)
}

/// [`assemble`] with target features (`-mattr`), e.g. `+wavefrontsize64` for wave64 code on a
/// target whose default is wave32.
pub fn assemble_with(gfx: &str, features: &[&str], lines: &[&str]) -> Option<Vec<u8>> {
    let llc = llvm_tool("llc")?;
    let dir =
        std::env::temp_dir().join(format!("iron-emu-asm-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).ok()?;
    let mut ir =
        String::from("target triple = \"amdgcn-amd-amdhsa\"\ndefine amdgpu_kernel void @k() {\n");
    for l in lines {
        ir.push_str(&format!(
            "  call void asm sideeffect \"{}\", \"\"()\n",
            l.replace('"', "\\22")
        ));
    }
    ir.push_str("  ret void\n}\n");
    let ll = dir.join("k.ll");
    let obj = dir.join("k.o");
    std::fs::write(&ll, ir).ok()?;
    let mut cmd = Command::new(llc);
    cmd.args([
        "-mtriple=amdgcn-amd-amdhsa",
        &format!("-mcpu={gfx}"),
        "-filetype=obj",
    ]);
    if !features.is_empty() {
        cmd.arg(format!("-mattr={}", features.join(",")));
    }
    let st = cmd.arg(&ll).arg("-o").arg(&obj).status().ok()?;
    assert!(
        st.success(),
        "llc rejected the assembly for {gfx}: {lines:?}"
    );
    let data = std::fs::read(&obj).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let text = file.section_by_name(".text")?.data().ok()?.to_vec();
    let _ = std::fs::remove_dir_all(&dir);
    Some(text)
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A hand-made kernel: assembled code and a descriptor asking for a kernarg pointer in s[0:1],
/// the workgroup ids x, y, z in s2-s4 (gfx1201: TTMP9 and TTMP7) and work-item ids x/y/z.
pub struct AsmKernel {
    pub gpu: iron_emu::Gpu,
    pub code: iron_emu::CodeId,
    pub entry: u64,
    pub descriptor: iron_emu::KernelDescriptor,
}

impl AsmKernel {
    /// Assembles `lines` for `gfx` (`None` if `llc` is unavailable).
    pub fn new(gfx: &str, lines: &[&str]) -> Option<AsmKernel> {
        AsmKernel::with_features(gfx, gfx.starts_with("gfx9"), &[], lines)
    }

    /// Assembles `lines` for `gfx` as wave64 or wave32 code (the descriptor says which), with
    /// further target features.
    pub fn with_features(
        gfx: &str,
        wave64: bool,
        features: &[&str],
        lines: &[&str],
    ) -> Option<AsmKernel> {
        let mut features = features.to_vec();
        if wave64 && !gfx.starts_with("gfx9") {
            features.push("+wavefrontsize64");
        }
        let text = assemble_with(gfx, &features, lines)?;
        let target = iron_emu::Target::from_name(gfx)?;
        let mut gpu = iron_emu::Gpu::new(target);
        let entry = gpu.memory_mut().alloc(text.len() as u64, 4096).ok()?;
        gpu.memory_mut().write(entry, &text).ok()?;
        let code = gpu.load_code(&text, entry);
        let descriptor = iron_emu::KernelDescriptor {
            kernarg_size: 64,
            compute_pgm_rsrc1: 3 << 16 | 3 << 18 | 1 << 21 | 1 << 23,
            // user SGPRs: 2 (kernarg pointer); workgroup id x; work-item ids x, y, z.
            compute_pgm_rsrc2: 2 << 1 | 1 << 7 | 1 << 8 | 1 << 9 | 2 << 11,
            kernel_code_properties: 1 << 3 | u16::from(!wave64) << 10,
            ..Default::default()
        };
        Some(AsmKernel {
            gpu,
            code,
            entry,
            descriptor,
        })
    }

    /// Runs the kernel once over `grid` workgroups of `block` work-items.
    pub fn run(
        &mut self,
        kernarg: &[u8],
        grid: [u32; 3],
        block: [u32; 3],
    ) -> Result<iron_emu::Counters, iron_emu::EmuError> {
        let d = iron_emu::Dispatch {
            kernel_name: "asm",
            code: self.code,
            entry: self.entry,
            descriptor: self.descriptor,
            kernarg,
            grid,
            workgroup_size: block,
            dynamic_lds: 0,
            buffers: None,
        };
        self.gpu.dispatch(&d)
    }
}

/// Assembles each of `lines` alone for `gfx` (with `features`), decodes it with `decode` (its
/// length in bytes and its text, or why it does not decode) and compares the text with what
/// `llvm-objdump` prints for the same words with the same features. Returns how many were
/// compared and the mismatches.
pub fn compare_hand_written(
    gfx: &str,
    features: &[&str],
    lines: &[String],
    decode: impl Fn(&[u32]) -> Result<(usize, String), String>,
) -> (usize, Vec<String>) {
    let mut slots = Vec::new();
    for line in lines {
        let words = assemble_words(gfx, features, line);
        let (len, _) =
            decode(&words).unwrap_or_else(|e| panic!("{gfx}: `{line}` does not decode: {e}"));
        slots.push(words[..len / 4].to_vec());
    }
    compare_words(gfx, features, &slots, decode)
}

/// The instruction words `line` assembles to for `gfx` (with `features`).
pub fn assemble_words(gfx: &str, features: &[&str], line: &str) -> Vec<u32> {
    assemble_with(gfx, features, &[line])
        .unwrap_or_else(|| panic!("{gfx}: `{line}` does not assemble"))
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Decodes each instruction of `slots` with `decode` and compares its text with what
/// `llvm-objdump` prints for the same words with the target `features`. Returns how many were
/// compared and the mismatches.
pub fn compare_words(
    gfx: &str,
    features: &[&str],
    slots: &[Vec<u32>],
    decode: impl Fn(&[u32]) -> Result<(usize, String), String>,
) -> (usize, Vec<String>) {
    let dir = std::env::temp_dir().join(format!(
        "iron-emu-hand-written-{gfx}-{}-{}",
        std::process::id(),
        unique()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let elf = words_to_elf(gfx, slots, &dir);
    let llvm: std::collections::HashMap<u64, String> = objdump_features(&elf, gfx, features)
        .into_iter()
        .map(|l| (l.address, l.text))
        .collect();
    let mut mismatches = Vec::new();
    for (k, words) in slots.iter().enumerate() {
        let want = llvm
            .get(&((k * SLOT_DWORDS * 4) as u64))
            .map_or("<no instruction at this address>", String::as_str);
        let ours = match decode(words) {
            Ok((_, text)) => normalize(&text),
            Err(e) => format!("<{e}>"),
        };
        if ours != want {
            mismatches.push(format!(
                "{gfx} {features:?} {words:08x?}: llvm `{want}` ours `{ours}`"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (slots.len(), mismatches)
}

/// Runs the last-block reduction `kernel` (`last_block_sum` or `last_block_sum_scoped` of the
/// Rust test kernels, or the HIP one) over `input.len() / 16` chunks of 16, with its fences or
/// without: the sum, or the error.
pub fn last_block(
    k: &mut Loaded,
    kernel: &str,
    input: &[u32],
    fenced: bool,
) -> Result<u32, iron_emu::EmuError> {
    let chunks = (input.len() / 16) as u32;
    let pin = k.upload(&bytes_of(input));
    let partial = k.upload(&vec![0xa5; 4 * chunks as usize]);
    let done = k.upload(&[0; 4]);
    let out = k.upload(&[0xee; 4]);
    let args = Args::default()
        .ptr(pin)
        .ptr(partial)
        .ptr(done)
        .ptr(out)
        .u32(chunks)
        .u32(u32::from(fenced));
    k.launch(kernel, &args.0, [chunks, 1, 1], [64, 1, 1], 0)?;
    Ok(from_bytes::<u32>(&k.download(out, 4))[0])
}
