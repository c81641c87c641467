//! The ELF reader on hand-made code objects: values read back, every rejection, and no panic
//! on truncated or randomly mutated input.

mod code_object_common;

use code_object_common::*;
use iron_code_object::{
    ArgValueKind, CodeObject, CodeObjectError, CodeObjectVersion, FeatureSetting,
};
use rand::{Rng, SeedableRng};
use rmpv::Value;

fn sample() -> Vec<u8> {
    ElfBuilder::new(sample_kernels()).build()
}

#[test]
fn reads_back_what_the_builder_wrote() {
    let bytes = sample();
    let object = CodeObject::parse(&bytes).expect("the hand-made object parses");
    assert_eq!(object.target().processor, "gfx950");
    assert_eq!(object.target().xnack, FeatureSetting::Any);
    assert_eq!(object.target().sramecc, FeatureSetting::Any);
    assert_eq!(object.version(), CodeObjectVersion::V5);
    assert_eq!(object.metadata_version(), [1, 2]);
    assert_eq!(object.metadata_target(), Some("amdgcn-amd-amdhsa--gfx950"));
    assert_eq!(object.kernels().len(), 2);

    let specs = sample_kernels();
    let add = object.kernel("add").unwrap();
    assert_eq!(add.code(), specs[0].code.as_slice());
    assert_eq!(
        add.entry_address() % 256,
        0,
        "the builder aligns code to 256"
    );
    assert_eq!(
        add.entry_address() as i64 - add.descriptor_address() as i64,
        add.descriptor().kernel_code_entry_byte_offset
    );
    let text = object.text();
    let at = (add.entry_address() - text.address) as usize;
    assert_eq!(&text.bytes[at..at + add.code().len()], add.code());

    let meta = add.metadata();
    assert_eq!(meta.symbol, "add.kd");
    assert_eq!(meta.kernarg_segment_size, 32);
    assert_eq!(meta.kernarg_segment_align, 8);
    assert_eq!(meta.group_segment_fixed_size, 256);
    assert_eq!(meta.private_segment_fixed_size, 16);
    assert_eq!(meta.wavefront_size, 64);
    assert_eq!(meta.sgpr_count, 18);
    assert_eq!(meta.vgpr_count, 12);
    assert_eq!(meta.agpr_count, Some(4));
    assert_eq!(meta.sgpr_spill_count, Some(0));
    assert_eq!(meta.vgpr_spill_count, Some(1));
    assert_eq!(meta.max_flat_workgroup_size, 256);
    assert_eq!(meta.uses_dynamic_stack, Some(false));
    assert_eq!(meta.reqd_workgroup_size, None);
    assert_eq!(meta.args.len(), 4);
    assert_eq!(meta.args[1].offset, 8);
    assert_eq!(meta.args[1].name.as_deref(), Some("b"));
    assert_eq!(meta.args[1].value_kind, ArgValueKind::GlobalBuffer);
    assert_eq!(meta.args[2].value_kind, ArgValueKind::ByValue);
    assert_eq!(meta.args[3].value_kind, ArgValueKind::HiddenBlockCountX);
    assert_eq!(meta.explicit_args().count(), 3);

    let kd = add.descriptor();
    assert_eq!(kd.kernarg_size, 32);
    assert_eq!(kd.rsrc2().user_sgpr_count, 2);
    assert!(kd.rsrc2().enable_sgpr_workgroup_id_x);
    assert_eq!(
        add.accum_offset(),
        Some(12),
        "rsrc3 ACCUM_OFFSET 2 means (2 + 1) * 4"
    );
    let scale = object.kernel("scale").unwrap();
    assert_eq!(scale.code(), specs[1].code.as_slice());
    assert_eq!(scale.accum_offset(), Some(8));
    assert_eq!(
        object.kernel("nope").unwrap_err(),
        CodeObjectError::NoSuchKernel("nope".into())
    );
}

#[test]
fn load_segments_cover_the_text() {
    let object = CodeObject::parse(&sample()).unwrap();
    let text = object.text();
    let segment = object
        .load_segments()
        .iter()
        .find(|s| s.vaddr <= text.address && text.address < s.vaddr + s.mem_size)
        .expect("a PT_LOAD covers .text");
    let at = (text.address - segment.vaddr) as usize;
    assert_eq!(
        &segment.bytes[at..at + text.bytes.len()],
        text.bytes.as_slice()
    );
    assert_eq!(segment.flags & 1, 1, "the code segment is executable");
}

fn parse_error(builder: &ElfBuilder) -> CodeObjectError {
    CodeObject::parse(&builder.build()).expect_err("the object is rejected")
}

#[test]
fn rejects_other_machines_by_name() {
    let mut builder = ElfBuilder::new(sample_kernels());
    builder.machine = 62;
    let error = parse_error(&builder);
    assert_eq!(error.to_string(), "x86_64: expected an AMDGPU code object");
    builder.machine = 183;
    assert_eq!(
        parse_error(&builder),
        CodeObjectError::WrongMachine("aarch64".into())
    );
    builder.machine = 4242;
    assert!(parse_error(&builder).to_string().contains("4242"));
}

#[test]
fn rejects_wrong_layout_os_abi_type_version_and_processor() {
    let bytes = sample();
    let mut elf32 = bytes.clone();
    elf32[4] = 1;
    assert!(matches!(
        CodeObject::parse(&elf32),
        Err(CodeObjectError::WrongElfLayout(_))
    ));
    let mut big_endian = bytes.clone();
    big_endian[5] = 2;
    assert!(matches!(
        CodeObject::parse(&big_endian),
        Err(CodeObjectError::WrongElfLayout(_))
    ));

    let mut builder = ElfBuilder::new(sample_kernels());
    builder.osabi = 0;
    assert_eq!(parse_error(&builder), CodeObjectError::WrongOsAbi(0));
    builder.osabi = 64;
    builder.abi_version = 1;
    assert_eq!(
        parse_error(&builder),
        CodeObjectError::UnsupportedVersion(1)
    );
    builder.abi_version = 4;
    builder.e_type = 1;
    assert_eq!(parse_error(&builder), CodeObjectError::NotSharedObject(1));
    builder.e_type = 3;
    builder.e_flags = 0x40;
    assert_eq!(parse_error(&builder), CodeObjectError::UnknownMachine(0x40));
    builder.e_flags = 0x41;
    let object = CodeObject::parse(&builder.build()).unwrap();
    assert_eq!(object.target().processor, "gfx1100");
    assert_eq!(object.target().xnack, FeatureSetting::Unsupported);
    assert_eq!(object.version(), CodeObjectVersion::V6);
}

#[test]
fn rejects_non_elf_input() {
    assert_eq!(
        CodeObject::parse(b"").unwrap_err(),
        CodeObjectError::Truncated {
            what: "ELF header",
            needed: 64,
            available: 0,
        }
    );
    assert_eq!(
        CodeObject::parse(b"MZ\x90\x00").unwrap_err(),
        CodeObjectError::NotElf
    );
    assert_eq!(
        CodeObject::parse(b"__CLANG").unwrap_err(),
        CodeObjectError::NotElf
    );
}

#[test]
fn rejects_missing_or_bad_metadata_notes() {
    let mut builder = ElfBuilder::new(sample_kernels());
    builder.note_type = 1;
    assert_eq!(parse_error(&builder), CodeObjectError::MissingMetadata);

    builder.note_type = 32;
    builder.note_payload = Some(vec![0xc1, 0xff, 0x00]);
    assert!(matches!(
        parse_error(&builder),
        CodeObjectError::BadMetadata(_)
    ));
    builder.note_payload = Some(msgpack(&Value::from(7)));
    assert_eq!(
        parse_error(&builder).to_string(),
        "bad AMDGPU metadata note: root is not a map"
    );

    let mut without_vgprs = sample_kernels();
    if let Value::Map(entries) = &mut without_vgprs[0].metadata {
        entries.retain(|(k, _)| k.as_str() != Some(".vgpr_count"));
    }
    let message = parse_error(&ElfBuilder::new(without_vgprs)).to_string();
    assert!(
        message.contains("kernel 'add'") && message.contains(".vgpr_count is missing"),
        "{message}"
    );

    let mut negative = sample_kernels();
    if let Value::Map(entries) = &mut negative[1].metadata {
        for (k, v) in entries.iter_mut() {
            if k.as_str() == Some(".sgpr_count") {
                *v = Value::from(-3);
            }
        }
    }
    let message = parse_error(&ElfBuilder::new(negative)).to_string();
    assert!(
        message.contains(".sgpr_count is not an unsigned 32-bit integer"),
        "{message}"
    );

    let mut nested = vec![0x91u8; 100_000];
    nested.push(0xc0);
    builder.note_payload = Some(nested);
    assert!(matches!(
        parse_error(&builder),
        CodeObjectError::BadMetadata(_)
    ));
}

#[test]
fn rejects_missing_descriptor_symbol() {
    let mut kernels = sample_kernels();
    kernels[1].with_kd_symbol = false;
    assert_eq!(
        parse_error(&ElfBuilder::new(kernels)),
        CodeObjectError::MissingKernelDescriptor {
            kernel: "scale".into(),
            symbol: "scale.kd".into()
        }
    );
}

#[test]
fn rejects_metadata_that_disagrees_with_itself_or_the_descriptor() {
    let mut past_end = sample_kernels();
    past_end[1].metadata = kernel_metadata("scale", 8, 64, vec![arg(4, 8, "by_value", None)]);
    let message = parse_error(&ElfBuilder::new(past_end)).to_string();
    assert!(
        message.contains("ends past the 8-byte kernarg segment"),
        "{message}"
    );

    let mut wave = sample_kernels();
    wave[1].metadata = kernel_metadata("scale", 8, 32, vec![]);
    let message = parse_error(&ElfBuilder::new(wave)).to_string();
    assert!(
        message.contains("descriptor says wave64, metadata says wave32"),
        "{message}"
    );

    let mut odd_wave = sample_kernels();
    odd_wave[1].metadata = kernel_metadata("scale", 8, 48, vec![]);
    assert!(
        parse_error(&ElfBuilder::new(odd_wave))
            .to_string()
            .contains("neither 32 nor 64")
    );

    let mut kernarg = sample_kernels();
    kernarg[0].descriptor[8] = 40;
    let message = parse_error(&ElfBuilder::new(kernarg)).to_string();
    assert!(message.contains("kernarg size 40 differs"), "{message}");
}

#[test]
fn kernels_whose_function_symbols_have_no_size_run_to_the_next_function_or_the_end_of_text() {
    let specs = sample_kernels();
    let mut builder = ElfBuilder::new(specs.clone());
    builder.sized_functions = false;
    let object = CodeObject::parse(&builder.build()).expect("unsized function symbols parse");
    let (add, scale) = (
        object.kernel("add").unwrap(),
        object.kernel("scale").unwrap(),
    );
    assert!(add.code().starts_with(&specs[0].code));
    assert_eq!(
        add.entry_address() + add.code().len() as u64,
        scale.entry_address(),
        "add's code runs to the next function symbol"
    );
    let text = object.text();
    assert!(scale.code().starts_with(&specs[1].code));
    assert_eq!(
        scale.entry_address() + scale.code().len() as u64,
        text.address + text.bytes.len() as u64,
        "the last kernel's code runs to the end of .text"
    );
}

#[test]
fn rejects_entry_points_outside_the_code() {
    let bytes = sample();
    let object = CodeObject::parse(&bytes).unwrap();
    let add = object.kernel("add").unwrap();
    let kd_at = add.descriptor_address() as usize;
    for bad_offset in [i64::MIN, i64::MAX, -(kd_at as i64) - 1, 1 << 40] {
        let mut broken = bytes.clone();
        broken[kd_at + 16..kd_at + 24].copy_from_slice(&bad_offset.to_le_bytes());
        match CodeObject::parse(&broken) {
            Err(CodeObjectError::BadKernel { kernel, .. }) => assert_eq!(kernel, "add"),
            other => panic!("entry offset {bad_offset} gave {other:?}"),
        }
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample();
    for len in 0..bytes.len() {
        assert!(
            CodeObject::parse(&bytes[..len]).is_err(),
            "a {len}-byte prefix of a {}-byte object parsed",
            bytes.len()
        );
    }
}

#[test]
fn random_mutations_never_panic() {
    let original = sample();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x1a0c_0de0);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut bytes = original.clone();
        for _ in 0..rng.random_range(1..=8) {
            let at = rng.random_range(0..bytes.len());
            match rng.random_range(0..4) {
                0 => bytes[at] = rng.random(),
                1 => bytes[at] ^= 1 << rng.random_range(0..8),
                2 => bytes[at] = [0x00, 0xff, 0x7f, 0x80][rng.random_range(0..4)],
                _ => bytes.truncate(at.max(1)),
            }
        }
        if CodeObject::parse(&bytes).is_ok() {
            accepted += 1;
        }
    }
    assert!(
        accepted > 0,
        "some mutations (e.g. in code bytes) leave a valid object"
    );
}

#[test]
fn random_bytes_are_rejected() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for len in [0usize, 1, 4, 63, 64, 65, 200, 4096] {
        for _ in 0..50 {
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            if len >= 4 && rng.random_bool(0.5) {
                bytes[..4].copy_from_slice(b"\x7fELF");
            }
            assert!(CodeObject::parse(&bytes).is_err());
        }
    }
}
