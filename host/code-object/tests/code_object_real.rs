//! Real code objects checked against LLVM's own tools: metadata against
//! `llvm-readobj --notes`, header flags against `--file-headers`, descriptor and code addresses
//! against `--symbols`, descriptor bytes against `llvm-objdump -s`.
//!
//! Objects checked: the gfx950 probe sample when present, every `*.co`/`*.elf` under
//! `IRON_CODE_OBJECT_DIR`, the `*.co` files of `cargo xtask build` under `target/iron`, and a
//! hand-made object from the shared builder. Each test prints what it checked or why it
//! skipped.

mod code_object_common;

use std::collections::BTreeMap;
use std::path::Path;

use code_object_common::{ElfBuilder, llvm_tool, real_code_objects, run_tool, sample_kernels};
use iron_code_object::{Bundle, CodeObject, IsaVersion, KernelArg, KernelMetadata, is_bundle};

/// One YAML map of `llvm-readobj --notes` output: scalar keys, plus the `.args` list.
#[derive(Default, Debug)]
struct YamlKernel {
    fields: BTreeMap<String, String>,
    args: Vec<BTreeMap<String, String>>,
}

/// The metadata document as `llvm-readobj --notes` prints it.
#[derive(Default, Debug)]
struct ReadobjMetadata {
    kernels: Vec<YamlKernel>,
    target: Option<String>,
    version: Vec<u32>,
}

fn key_value(line: &str) -> Option<(String, String)> {
    let line = line.trim_start().trim_start_matches("- ");
    let (key, value) = line.split_once(':')?;
    let value = value.trim().trim_matches('\'').trim_matches('"');
    Some((key.trim().to_owned(), value.to_owned()))
}

fn parse_readobj_notes(text: &str) -> ReadobjMetadata {
    let mut doc = ReadobjMetadata::default();
    let mut in_doc = false;
    let mut section = "";
    // The kernel field whose list the indented items belong to (`.args`, `.language_version`, ...).
    let mut list = String::new();
    for line in text.lines() {
        let trimmed = line.trim_end();
        if trimmed.ends_with("AMDGPU Metadata: ---") {
            in_doc = true;
            continue;
        }
        if !in_doc {
            continue;
        }
        if trimmed == "..." {
            break;
        }
        let indent = trimmed.len() - trimmed.trim_start().len();
        if indent == 0 {
            let (key, value) = key_value(trimmed).expect("top-level key");
            section = match key.as_str() {
                "amdhsa.kernels" => "kernels",
                "amdhsa.version" => "version",
                "amdhsa.target" => {
                    doc.target = Some(value);
                    ""
                }
                _ => "",
            };
            continue;
        }
        match section {
            "version" => doc
                .version
                .push(trimmed.trim().trim_start_matches("- ").parse().unwrap()),
            "kernels" => {
                let starts_item = trimmed.trim_start().starts_with("- ");
                if indent == 2 && starts_item {
                    doc.kernels.push(YamlKernel::default());
                }
                let kernel = doc.kernels.last_mut().expect("a kernel item");
                if indent <= 4 {
                    list = key_value(trimmed).map(|(k, _)| k).unwrap_or_default();
                }
                let in_args = list == ".args";
                if indent == 6 && starts_item && in_args {
                    kernel.args.push(BTreeMap::new());
                }
                let Some((key, value)) = key_value(trimmed) else {
                    continue;
                };
                if key == ".args" || (indent >= 6 && !in_args) {
                    continue;
                }
                if indent >= 6 {
                    kernel
                        .args
                        .last_mut()
                        .expect("an argument item")
                        .insert(key, value);
                } else {
                    kernel.fields.insert(key, value);
                }
            }
            _ => {}
        }
    }
    doc
}

fn check_u32(fields: &BTreeMap<String, String>, key: &str, ours: Option<u32>, context: &str) {
    let theirs = fields.get(key).map(|v| v.parse::<u32>().unwrap());
    assert_eq!(ours, theirs, "{context}: {key}");
}

fn check_arg(ours: &KernelArg, theirs: &BTreeMap<String, String>, context: &str) {
    check_u32(theirs, ".offset", Some(ours.offset), context);
    check_u32(theirs, ".size", Some(ours.size), context);
    assert_eq!(
        Some(ours.value_kind.as_str()),
        theirs.get(".value_kind").map(String::as_str),
        "{context}"
    );
    assert_eq!(
        ours.name.as_deref(),
        theirs.get(".name").map(String::as_str),
        "{context}"
    );
    assert_eq!(
        ours.type_name.as_deref(),
        theirs.get(".type_name").map(String::as_str),
        "{context}"
    );
    assert_eq!(
        ours.address_space.as_ref().map(|a| a.as_str()),
        theirs.get(".address_space").map(String::as_str),
        "{context}"
    );
    assert_eq!(
        ours.actual_access.as_ref().map(|a| a.as_str()),
        theirs.get(".actual_access").map(String::as_str),
        "{context}"
    );
}

fn check_kernel_metadata(ours: &KernelMetadata, theirs: &YamlKernel, context: &str) {
    let f = &theirs.fields;
    assert_eq!(Some(&ours.symbol), f.get(".symbol"), "{context}");
    for (key, value) in [
        (".kernarg_segment_size", ours.kernarg_segment_size),
        (".kernarg_segment_align", ours.kernarg_segment_align),
        (".group_segment_fixed_size", ours.group_segment_fixed_size),
        (
            ".private_segment_fixed_size",
            ours.private_segment_fixed_size,
        ),
        (".wavefront_size", ours.wavefront_size),
        (".sgpr_count", ours.sgpr_count),
        (".vgpr_count", ours.vgpr_count),
        (".max_flat_workgroup_size", ours.max_flat_workgroup_size),
    ] {
        check_u32(f, key, Some(value), context);
    }
    check_u32(f, ".agpr_count", ours.agpr_count, context);
    check_u32(f, ".sgpr_spill_count", ours.sgpr_spill_count, context);
    check_u32(f, ".vgpr_spill_count", ours.vgpr_spill_count, context);
    assert_eq!(
        ours.uses_dynamic_stack.map(|b| b.to_string()),
        f.get(".uses_dynamic_stack").cloned(),
        "{context}"
    );
    assert_eq!(
        ours.args.len(),
        theirs.args.len(),
        "{context}: argument count"
    );
    for (i, (arg, yaml)) in ours.args.iter().zip(&theirs.args).enumerate() {
        check_arg(arg, yaml, &format!("{context} argument {i}"));
    }
}

/// Symbols as `llvm-readobj --symbols` lists them: name -> (value, size).
fn readobj_symbols(text: &str) -> BTreeMap<String, (u64, u64)> {
    let mut symbols = BTreeMap::new();
    let mut name = None;
    let mut value = 0;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("Name: ") {
            name = rest.rsplit_once(" (").map(|(n, _)| n.to_owned());
        } else if let Some(rest) = line.strip_prefix("Value: 0x") {
            value = u64::from_str_radix(rest, 16).unwrap();
        } else if let Some(rest) = line.strip_prefix("Size: ")
            && let Some(name) = name.take()
        {
            symbols.insert(name, (value, rest.parse().unwrap()));
        }
    }
    symbols
}

/// Bytes of `llvm-objdump -s` output, by address.
fn objdump_bytes(text: &str) -> BTreeMap<u64, u8> {
    let mut bytes = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(' ') else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(address) = words.next().and_then(|a| u64::from_str_radix(a, 16).ok()) else {
            continue;
        };
        let mut at = address;
        for word in words.take(4) {
            if word.len() % 2 != 0 || !word.bytes().all(|b| b.is_ascii_hexdigit()) {
                break;
            }
            for pair in word.as_bytes().chunks(2) {
                let byte = u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap();
                bytes.insert(at, byte);
                at += 1;
            }
        }
    }
    bytes
}

/// Checks that do not need LLVM: the kernels' pieces are where they claim to be.
fn check_invariants(object: &CodeObject, context: &str) {
    let text = object.text();
    assert!(!object.kernels().is_empty(), "{context}: no kernels");
    for kernel in object.kernels() {
        let context = format!("{context} kernel {}", kernel.name());
        let start = kernel.entry_address();
        assert!(start >= text.address, "{context}: entry before .text");
        let at = (start - text.address) as usize;
        assert_eq!(
            &text.bytes[at..at + kernel.code().len()],
            kernel.code(),
            "{context}"
        );
        assert_eq!(
            kernel.code().len() % 4,
            0,
            "{context}: code is whole dwords"
        );
        assert!(
            object
                .load_segments()
                .iter()
                .any(|s| s.vaddr <= kernel.descriptor_address()
                    && kernel.descriptor_address() + 64 <= s.vaddr + s.bytes.len() as u64),
            "{context}: descriptor is in a loaded segment"
        );
        let kd = kernel.descriptor();
        let meta = kernel.metadata();
        assert_eq!(
            kd.group_segment_fixed_size, meta.group_segment_fixed_size,
            "{context}"
        );
        assert_eq!(
            kd.private_segment_fixed_size, meta.private_segment_fixed_size,
            "{context}"
        );
        let loaded: u32 = kd.user_sgprs().iter().map(|s| s.count).sum();
        assert!(
            loaded <= kd.rsrc2().user_sgpr_count,
            "{context}: user SGPRs {loaded} > count"
        );
        let unified = object
            .target()
            .isa_version()
            .is_some_and(IsaVersion::has_unified_vector_registers);
        match kernel.accum_offset() {
            Some(offset) => {
                assert!(unified, "{context}");
                let agprs = meta.agpr_count.unwrap_or(0);
                assert!(
                    meta.vgpr_count <= offset + agprs,
                    "{context}: VGPRs beyond accum_offset"
                );
            }
            None => assert!(!unified, "{context}"),
        }
    }
}

/// Compares one code object file with what LLVM's tools say about it.
fn check_against_llvm(path: &Path, object: &CodeObject) {
    let context = path.display().to_string();
    let Some(readobj) = llvm_tool("llvm-readobj") else {
        println!("{context}: llvm-readobj not installed, LLVM comparison skipped");
        return;
    };
    let headers = run_tool(&readobj, &["--file-headers"], path);
    let flags = headers
        .lines()
        .find_map(|l| l.trim().strip_prefix("Flags [ (0x"))
        .and_then(|l| l.strip_suffix(')'))
        .map(|hex| u32::from_str_radix(hex, 16).unwrap())
        .expect("readobj prints the flags");
    let mach = format!(
        "EF_AMDGPU_MACH_AMDGCN_{}",
        object.target().processor.to_uppercase().replace('-', "_")
    );
    assert!(headers.contains(&mach), "{context}: {mach}");
    assert_eq!(
        iron_code_object::TargetId::from_e_flags(flags).unwrap(),
        *object.target()
    );
    let abi = object.version().number() - 2;
    assert!(
        headers.contains(&format!("ABIVersion: {abi}")),
        "{context}: ABI version {abi}"
    );

    let notes = parse_readobj_notes(&run_tool(&readobj, &["--notes"], path));
    assert_eq!(
        notes.version,
        object.metadata_version().to_vec(),
        "{context}"
    );
    assert_eq!(
        notes.target.as_deref(),
        object.metadata_target(),
        "{context}"
    );
    assert_eq!(notes.kernels.len(), object.kernels().len(), "{context}");
    for (kernel, yaml) in object.kernels().iter().zip(&notes.kernels) {
        assert_eq!(
            Some(kernel.name()),
            yaml.fields.get(".name").map(String::as_str)
        );
        check_kernel_metadata(
            kernel.metadata(),
            yaml,
            &format!("{context} kernel {}", kernel.name()),
        );
    }

    let symbols = readobj_symbols(&run_tool(&readobj, &["--symbols", "--dyn-symbols"], path));
    let objdump = llvm_tool("llvm-objdump");
    let dump = objdump
        .as_ref()
        .map(|objdump| objdump_bytes(&run_tool(objdump, &["-s", "-j", ".rodata"], path)));
    for kernel in object.kernels() {
        let (kd_value, kd_size) = symbols[&kernel.metadata().symbol];
        assert_eq!(
            (kd_value, kd_size),
            (kernel.descriptor_address(), 64),
            "{context}"
        );
        let (fn_value, fn_size) = symbols[kernel.name()];
        assert_eq!(
            fn_value,
            kernel.entry_address(),
            "{context}: entry is the function symbol"
        );
        assert_eq!(
            fn_size,
            kernel.code().len() as u64,
            "{context}: code spans the function"
        );
        if let Some(dump) = &dump {
            let written = kernel.descriptor().to_bytes();
            for (i, byte) in written.iter().enumerate() {
                let reserved = (12..16).contains(&i) || (24..44).contains(&i) || i >= 60;
                if !reserved {
                    assert_eq!(
                        dump.get(&(kd_value + i as u64)),
                        Some(byte),
                        "{context}: descriptor byte {i}"
                    );
                }
            }
        }
    }
    println!(
        "{context}: {} kernels of {} (v{}) match llvm-readobj{}",
        object.kernels().len(),
        object.target(),
        object.version().number(),
        if objdump.is_some() {
            " and llvm-objdump"
        } else {
            ""
        }
    );
}

fn code_objects_in(path: &Path) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    if is_bundle(&bytes) {
        let bundle = Bundle::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        bundle
            .entries()
            .iter()
            .filter(|e| e.id.is_amdgpu())
            .map(|e| (format!("{} [{}]", path.display(), e.id), e.data.clone()))
            .collect()
    } else {
        vec![(path.display().to_string(), bytes)]
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn real_code_objects_match_llvm() {
    let paths = real_code_objects();
    assert!(
        !paths.is_empty(),
        "no code objects in IRON_CODE_OBJECT_DIR: run `cargo xtask test`"
    );
    // The objects are checked on every core, each worker taking the next object as it
    // finishes one; a failed check fails the test.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..cores.min(paths.len()) {
            s.spawn(|| {
                while let Some(path) =
                    paths.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    check_real(path);
                }
            });
        }
    });
}

/// Checks every code object of the file at `path` (a bundle holds several).
fn check_real(path: &Path) {
    for (context, bytes) in code_objects_in(path) {
        let object = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{context}: {e}"));
        check_invariants(&object, &context);
        if is_bundle(&std::fs::read(path).unwrap()) {
            println!(
                "{context}: {} kernels of {}",
                object.kernels().len(),
                object.target()
            );
        } else {
            check_against_llvm(path, &object);
        }
    }
}

#[test]
fn hand_made_objects_read_the_same_in_llvm() {
    let Some(_) = llvm_tool("llvm-readobj") else {
        println!("skipped: llvm-readobj not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("iron-handmade-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("handmade.elf");
    let bytes = ElfBuilder::new(sample_kernels()).build();
    std::fs::write(&path, &bytes).unwrap();
    let object = CodeObject::parse(&bytes).unwrap();
    check_invariants(&object, "hand-made object");
    check_against_llvm(&path, &object);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mutated_real_code_objects_never_panic() {
    use rand::{Rng, SeedableRng};
    let path = real_code_objects()
        .into_iter()
        .find(|p| !is_bundle(&std::fs::read(p).unwrap()))
        .expect("no code object in IRON_CODE_OBJECT_DIR: run `cargo xtask test`");
    let original = std::fs::read(&path).unwrap();
    // Every header-sized prefix, then every 61st length up to the whole file.
    let lengths = (0..original.len().min(4096)).chain((4096..original.len()).step_by(61));
    for len in lengths {
        assert!(
            CodeObject::parse(&original[..len]).is_err(),
            "{}: prefix of {len} bytes",
            path.display()
        );
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    let mut accepted = 0;
    for _ in 0..10_000 {
        let mut bytes = original.clone();
        for _ in 0..rng.random_range(1..=6) {
            let at = rng.random_range(0..bytes.len());
            bytes[at] = match rng.random_range(0..3) {
                0 => rng.random(),
                1 => bytes[at] ^ (1 << rng.random_range(0..8)),
                _ => [0x00, 0xff, 0x80][rng.random_range(0..3)],
            };
        }
        accepted += usize::from(CodeObject::parse(&bytes).is_ok());
    }
    println!(
        "{}: {accepted} of 10000 mutated copies still parse",
        path.display()
    );
}
