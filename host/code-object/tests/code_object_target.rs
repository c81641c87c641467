//! Target ids, processor names and ISA versions.

mod code_object_common;

use code_object_common::{llvm_tool, run_tool};
use iron_code_object::{
    CodeObjectError, CodeObjectVersion, FeatureSetting, IsaVersion, TargetId, known_processors,
    mach_for_processor, processor_for_mach,
};

#[test]
fn iron_targets_have_the_documented_mach_values() {
    let expected = [
        ("gfx90a", 0x3f),
        ("gfx942", 0x4c),
        ("gfx950", 0x4f),
        ("gfx1100", 0x41),
        ("gfx1151", 0x4a),
        ("gfx1201", 0x4e),
        ("gfx1250", 0x49),
    ];
    for (name, mach) in expected {
        assert_eq!(mach_for_processor(name), Some(mach), "{name}");
        assert_eq!(processor_for_mach(mach), Some(name), "{mach:#x}");
    }
    assert_eq!(processor_for_mach(0x40), None);
}

#[test]
fn the_table_has_no_duplicates() {
    let table = known_processors();
    for (i, (mach, name)) in table.iter().enumerate() {
        for (other_mach, other_name) in &table[i + 1..] {
            assert_ne!(mach, other_mach);
            assert_ne!(name, other_name);
        }
    }
}

/// Each table row against what LLVM's own `llvm-readobj` calls that `EF_AMDGPU_MACH`.
#[test]
fn the_table_matches_llvm_readobj() {
    let Some(readobj) = llvm_tool("llvm-readobj") else {
        println!("skipped: llvm-readobj from the pinned toolchain's llvm-tools is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("iron-mach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (mach, name) in known_processors() {
        let mut header = [0u8; 64];
        header[0..4].copy_from_slice(b"\x7fELF");
        header[4..9].copy_from_slice(&[2, 1, 1, 64, 4]);
        header[16..18].copy_from_slice(&3u16.to_le_bytes());
        header[18..20].copy_from_slice(&224u16.to_le_bytes());
        header[20..24].copy_from_slice(&1u32.to_le_bytes());
        header[48..52].copy_from_slice(&mach.to_le_bytes());
        header[52..54].copy_from_slice(&64u16.to_le_bytes());
        header[54..56].copy_from_slice(&56u16.to_le_bytes());
        header[58..60].copy_from_slice(&64u16.to_le_bytes());
        let file = dir.join("header.elf");
        std::fs::write(&file, header).unwrap();
        let out = run_tool(&readobj, &["--file-headers"], &file);
        let llvm_name = format!(
            "EF_AMDGPU_MACH_AMDGCN_{} ({mach:#04X})",
            name.to_uppercase().replace('-', "_")
        )
        .replace("0X", "0x");
        assert!(
            out.contains(&llvm_name),
            "{name}: expected {llvm_name} in\n{out}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn e_flags_features() {
    let cases = [
        (
            0x04f,
            FeatureSetting::Unsupported,
            FeatureSetting::Unsupported,
        ),
        (0x14f, FeatureSetting::Any, FeatureSetting::Unsupported),
        (0x24f, FeatureSetting::Off, FeatureSetting::Unsupported),
        (0x34f, FeatureSetting::On, FeatureSetting::Unsupported),
        (0x44f, FeatureSetting::Unsupported, FeatureSetting::Any),
        (0x84f, FeatureSetting::Unsupported, FeatureSetting::Off),
        (0xc4f, FeatureSetting::Unsupported, FeatureSetting::On),
        (0xa4c, FeatureSetting::Off, FeatureSetting::Off),
    ];
    for (flags, xnack, sramecc) in cases {
        let target = TargetId::from_e_flags(flags).unwrap();
        assert_eq!(
            (target.xnack, target.sramecc),
            (xnack, sramecc),
            "{flags:#x}"
        );
    }
    assert_eq!(
        TargetId::from_e_flags(0xa4c).unwrap().to_string(),
        "gfx942:sramecc-:xnack-"
    );
    assert_eq!(TargetId::from_e_flags(0x54f).unwrap().to_string(), "gfx950");
    assert_eq!(
        TargetId::from_e_flags(0x00).unwrap_err(),
        CodeObjectError::UnknownMachine(0)
    );
}

#[test]
fn parses_and_prints_target_ids() {
    let t = TargetId::parse("gfx942:sramecc+:xnack-").unwrap();
    assert_eq!(t.processor, "gfx942");
    assert_eq!(t.sramecc, FeatureSetting::On);
    assert_eq!(t.xnack, FeatureSetting::Off);
    assert_eq!(t.to_string(), "gfx942:sramecc+:xnack-");
    let t = TargetId::parse("gfx90a:xnack+").unwrap();
    assert_eq!(
        (t.sramecc, t.xnack),
        (FeatureSetting::Any, FeatureSetting::On)
    );
    assert_eq!(
        TargetId::parse("amdgcn-amd-amdhsa--gfx950").unwrap(),
        TargetId::new("gfx950")
    );
    assert_eq!(
        TargetId::parse("amdgcn-amd-amdhsa--gfx9-4-generic:xnack-")
            .unwrap()
            .processor,
        "gfx9-4-generic"
    );
    for bad in [
        "",
        "gfx",
        "sm_90",
        "gfx942:",
        "gfx942:xnack",
        "gfx942:xnack+:xnack-",
        "gfx942:foo+",
        "gfx942 :xnack+",
        "amdgcn-amd-amdhsa",
    ] {
        assert_eq!(
            TargetId::parse(bad).unwrap_err(),
            CodeObjectError::BadTargetId(bad.into())
        );
    }
}

#[test]
fn compatibility_any_matches_either_setting() {
    let any = TargetId::parse("gfx942").unwrap();
    let on = TargetId::parse("gfx942:xnack+").unwrap();
    let off = TargetId::parse("gfx942:xnack-").unwrap();
    let device = TargetId::parse("gfx942:sramecc+:xnack-").unwrap();
    assert!(any.can_run_on(&device));
    assert!(off.can_run_on(&device));
    assert!(!on.can_run_on(&device));
    assert!(on.can_run_on(&any) && off.can_run_on(&any));
    assert!(!TargetId::new("gfx950").can_run_on(&device));
    assert!(off.specificity_for(&device) > any.specificity_for(&device));
    let unsupported = TargetId::from_e_flags(0x41).unwrap();
    assert!(unsupported.can_run_on(&TargetId::new("gfx1100")));
}

#[test]
fn isa_versions() {
    let v = |name| IsaVersion::of(name).unwrap();
    assert_eq!(
        v("gfx90a"),
        IsaVersion {
            major: 9,
            minor: 0,
            stepping: 10
        }
    );
    assert_eq!(
        v("gfx942"),
        IsaVersion {
            major: 9,
            minor: 4,
            stepping: 2
        }
    );
    assert_eq!(
        v("gfx1201"),
        IsaVersion {
            major: 12,
            minor: 0,
            stepping: 1
        }
    );
    assert_eq!(
        v("gfx10-3-generic"),
        IsaVersion {
            major: 10,
            minor: 3,
            stepping: 0
        }
    );
    assert_eq!(
        v("gfx11-generic"),
        IsaVersion {
            major: 11,
            minor: 0,
            stepping: 0
        }
    );
    assert_eq!(IsaVersion::of("gfx9"), None);
    assert_eq!(IsaVersion::of("gfx9zz"), None);
    assert_eq!(IsaVersion::of("sm_90"), None);
    for (name, unified) in [
        ("gfx908", false),
        ("gfx90a", true),
        ("gfx90c", false),
        ("gfx942", true),
        ("gfx950", true),
        ("gfx1100", false),
        ("gfx1201", false),
    ] {
        assert_eq!(v(name).has_unified_vector_registers(), unified, "{name}");
    }
}

#[test]
fn code_object_versions() {
    assert_eq!(CodeObjectVersion::from_abi_version(2).unwrap().number(), 4);
    assert_eq!(CodeObjectVersion::from_abi_version(3).unwrap().number(), 5);
    assert_eq!(CodeObjectVersion::from_abi_version(4).unwrap().number(), 6);
    for old in [0, 1, 5, 255] {
        assert_eq!(
            CodeObjectVersion::from_abi_version(old).unwrap_err(),
            CodeObjectError::UnsupportedVersion(old)
        );
    }
}
