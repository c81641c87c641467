//! Offload bundles: write/read round trips, layout checks, compressed bundles, entry selection.

mod code_object_common;

use code_object_common::{ElfBuilder, sample_kernels};
use iron_code_object::{
    BUNDLE_ALIGNMENT, BUNDLE_MAGIC, Bundle, BundleEntryId, CodeObjectError, CompressionMethod,
    HOST_ENTRY_ID, TargetId, code_object_for, is_bundle, parse_compressed_header,
};
use rand::{Rng, SeedableRng};

/// An uncompressed bundle written field by field, independently of `Bundle::write`.
fn raw_bundle(entries: &[(&str, u64, u64)], total_len: usize) -> Vec<u8> {
    let mut out = BUNDLE_MAGIC.to_vec();
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (id, offset, size) in entries {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    out.resize(total_len.max(out.len()), 0xee);
    out
}

fn target(text: &str) -> TargetId {
    TargetId::parse(text).unwrap()
}

#[test]
fn write_lays_out_entries_as_hip_does() {
    let bundle = Bundle::for_hip([
        (target("gfx950"), vec![1u8; 100]),
        (target("gfx942:sramecc+:xnack-"), vec![2u8; 5000]),
    ])
    .unwrap();
    let bytes = bundle.write();
    assert!(bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    assert_eq!(u64::from_le_bytes(bytes[24..32].try_into().unwrap()), 3);
    let mut at = 32;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let field =
            |i: usize| u64::from_le_bytes(bytes[at + 8 * i..at + 8 * i + 8].try_into().unwrap());
        let (offset, size, id_len) = (field(0), field(1), field(2));
        let id = std::str::from_utf8(&bytes[at + 24..at + 24 + id_len as usize])
            .unwrap()
            .to_owned();
        at += 24 + id_len as usize;
        assert_eq!(offset % BUNDLE_ALIGNMENT, 0, "{id} is 4096-aligned");
        seen.push((id, offset, size));
    }
    assert_eq!(seen[0].0, HOST_ENTRY_ID);
    assert_eq!(seen[0].2, 0);
    assert_eq!(seen[1].0, "hipv4-amdgcn-amd-amdhsa--gfx950");
    assert_eq!(seen[2].0, "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-");
    let (o1, s1) = (seen[1].1 as usize, seen[1].2 as usize);
    assert_eq!(&bytes[o1..o1 + s1], &[1u8; 100][..]);
    let (o2, s2) = (seen[2].1 as usize, seen[2].2 as usize);
    assert_eq!(&bytes[o2..o2 + s2], &[2u8; 5000][..]);
    assert_eq!(bytes.len(), o2 + s2);
}

#[test]
fn random_bundles_round_trip() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xb0_0d1e);
    let processors = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"];
    for _ in 0..50 {
        let mut bundle = Bundle::new();
        bundle.push(BundleEntryId::host(), Vec::new()).unwrap();
        for processor in processors {
            if rng.random_bool(0.6) {
                let len = rng.random_range(0..10_000);
                let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                bundle
                    .push(BundleEntryId::hip(&target(processor)), data)
                    .unwrap();
            }
        }
        let bytes = bundle.write();
        assert!(is_bundle(&bytes));
        assert_eq!(Bundle::parse(&bytes).unwrap(), bundle);
    }
}

#[test]
fn reads_a_bundle_written_field_by_field() {
    let bytes = raw_bundle(
        &[
            (HOST_ENTRY_ID, 4096, 0),
            ("hip-amdgcn-amd-amdhsa--gfx942:xnack-", 4096, 16),
        ],
        4112,
    );
    let bundle = Bundle::parse(&bytes).unwrap();
    assert_eq!(bundle.entries().len(), 2);
    let entry = &bundle.entries()[1];
    assert_eq!(entry.id.offload_kind, "hip");
    assert_eq!(entry.id.triple, "amdgcn-amd-amdhsa-");
    assert_eq!(entry.id.target_id, Some(target("gfx942:xnack-")));
    assert_eq!(entry.data, vec![0xee; 16]);
    assert!(!bundle.entries()[0].id.is_amdgpu());
}

#[test]
fn rejects_overlaps_ranges_and_truncation() {
    let overlapping = raw_bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx950", 200, 100),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", 299, 10),
        ],
        400,
    );
    assert_eq!(
        Bundle::parse(&overlapping).unwrap_err(),
        CodeObjectError::OverlappingBundleEntries {
            first: "hipv4-amdgcn-amd-amdhsa--gfx950".into(),
            second: "hipv4-amdgcn-amd-amdhsa--gfx942".into()
        }
    );
    let into_header = raw_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx950", 8, 10)], 400);
    assert!(matches!(
        Bundle::parse(&into_header),
        Err(CodeObjectError::OverlappingBundleEntries { .. })
    ));
    let past_end = raw_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx950", 300, 101)], 400);
    assert_eq!(
        Bundle::parse(&past_end).unwrap_err().to_string(),
        "bundle entry 'hipv4-amdgcn-amd-amdhsa--gfx950' (offset 300, size 101) lies outside the 400-byte bundle"
    );
    let wrapping = raw_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx950", u64::MAX, 2)], 400);
    assert!(matches!(
        Bundle::parse(&wrapping),
        Err(CodeObjectError::BundleEntryOutOfRange { .. })
    ));
    let duplicate = raw_bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx950", 200, 10),
            ("hipv4-amdgcn-amd-amdhsa--gfx950", 210, 10),
        ],
        400,
    );
    assert!(matches!(
        Bundle::parse(&duplicate),
        Err(CodeObjectError::DuplicateBundleEntry(_))
    ));
    let bad_id = raw_bundle(&[("garbage", 200, 10)], 400);
    assert_eq!(
        Bundle::parse(&bad_id).unwrap_err(),
        CodeObjectError::BadBundleEntryId("garbage".into())
    );

    let mut huge_count = BUNDLE_MAGIC.to_vec();
    huge_count.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        Bundle::parse(&huge_count),
        Err(CodeObjectError::Truncated { .. })
    ));
    let mut huge_id = raw_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx950", 200, 10)], 400);
    huge_id[48..56].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    assert!(matches!(
        Bundle::parse(&huge_id),
        Err(CodeObjectError::Truncated { .. })
    ));

    let good = Bundle::for_hip([(target("gfx950"), vec![9u8; 300])])
        .unwrap()
        .write();
    for len in 0..good.len() {
        assert!(
            Bundle::parse(&good[..len]).is_err(),
            "prefix of {len} bytes"
        );
    }
    assert_eq!(
        Bundle::parse(b"\x7fELF").unwrap_err(),
        CodeObjectError::NotBundle
    );
}

#[test]
fn random_mutations_never_panic() {
    let good = Bundle::for_hip([
        (target("gfx950"), vec![9u8; 300]),
        (target("gfx1100"), vec![3u8; 70]),
    ])
    .unwrap()
    .write();
    let mut rng = rand::rngs::StdRng::seed_from_u64(99);
    for _ in 0..5000 {
        let mut bytes = good.clone();
        for _ in 0..rng.random_range(1..=4) {
            let at = rng.random_range(0..200.min(bytes.len()));
            bytes[at] = rng.random();
        }
        let _ = Bundle::parse(&bytes);
    }
}

#[test]
fn entry_ids() {
    let id = BundleEntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx950").unwrap();
    assert_eq!(id.offload_kind, "hipv4");
    assert_eq!(id.target_id, Some(TargetId::new("gfx950")));
    assert!(id.is_amdgpu());
    assert_eq!(id.to_string(), "hipv4-amdgcn-amd-amdhsa--gfx950");
    let host = BundleEntryId::parse(HOST_ENTRY_ID).unwrap();
    assert_eq!(
        (host.offload_kind.as_str(), host.target_id.clone()),
        ("host", None)
    );
    assert_eq!(host, BundleEntryId::host());
    let old = BundleEntryId::parse("hip-amdgcn-amd-amdhsa-gfx906").unwrap();
    assert_eq!(old.target_id, Some(TargetId::new("gfx906")));
    // ROCm 5's bundler (Debian's rocSPARSE, rocRAND) writes the host triple without its
    // environment.
    let rocm5_host = BundleEntryId::parse("host-x86_64-unknown-linux").unwrap();
    assert_eq!(rocm5_host.triple, "x86_64-unknown-linux-");
    assert!(!rocm5_host.is_amdgpu());
    let generic = BundleEntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx11-generic").unwrap();
    assert_eq!(generic.target_id.unwrap().processor, "gfx11-generic");
    for bad in [
        "",
        "hip",
        "hip-amdgcn",
        "hip-amdgcn-amd",
        "hip--amd-amdhsa--gfx950",
        "hip-amdgcn-amd-amdhsa--gfx942:bogus+",
    ] {
        assert!(BundleEntryId::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn selects_the_entry_for_a_device() {
    let bundle = Bundle::for_hip([
        (target("gfx942"), vec![1]),
        (target("gfx942:xnack-"), vec![2]),
        (target("gfx942:xnack+"), vec![3]),
        (target("gfx950"), vec![4]),
    ])
    .unwrap();
    let pick = |device: &str| bundle.select(&target(device)).unwrap().data.clone();
    assert_eq!(
        pick("gfx942:sramecc+:xnack-"),
        vec![2],
        "the exact xnack- entry is preferred"
    );
    assert_eq!(pick("gfx942:xnack+"), vec![3]);
    assert_eq!(pick("gfx950:sramecc+:xnack-"), vec![4]);
    let error = bundle.select(&target("gfx1100")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no code object for gfx1100 in the bundle (it holds: gfx942, gfx942:xnack-, gfx942:xnack+, gfx950)"
    );
    let only_on = Bundle::for_hip([(target("gfx90a:xnack+"), vec![5])]).unwrap();
    assert!(matches!(
        only_on.select(&target("gfx90a:xnack-")),
        Err(CodeObjectError::NoMatchingTarget { .. })
    ));
    let empty = Bundle::for_hip([]).unwrap();
    assert!(
        empty
            .select(&target("gfx950"))
            .unwrap_err()
            .to_string()
            .contains("no device code objects")
    );
}

#[test]
fn code_object_for_takes_bare_objects_and_bundles() {
    let object = ElfBuilder::new(sample_kernels()).build();
    let device = target("gfx950:sramecc+:xnack-");
    assert_eq!(
        code_object_for(&object, &device).unwrap().kernels().len(),
        2
    );
    let error = code_object_for(&object, &target("gfx942")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no code object for gfx942 in the bundle (it holds: gfx950)"
    );
    let bundle = Bundle::for_hip([(target("gfx1100"), vec![0; 10]), (target("gfx950"), object)])
        .unwrap()
        .write();
    assert_eq!(
        code_object_for(&bundle, &device)
            .unwrap()
            .target()
            .processor,
        "gfx950"
    );
}

/// A compressed bundle built by hand from the documented header layout.
fn ccob(version: u16, method: u16, payload: &[u8], uncompressed_len: u64) -> Vec<u8> {
    let mut out = b"CCOB".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&method.to_le_bytes());
    let hash = 0x1234_5678_9abc_def0u64;
    match version {
        1 => {
            out.extend_from_slice(&(uncompressed_len as u32).to_le_bytes());
        }
        2 => {
            out.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
            out.extend_from_slice(&(uncompressed_len as u32).to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&((32 + payload.len()) as u64).to_le_bytes());
            out.extend_from_slice(&uncompressed_len.to_le_bytes());
        }
    }
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

#[test]
fn reads_compressed_bundles_of_every_version_and_method() {
    let inner_bundle = Bundle::for_hip([
        (target("gfx950"), vec![7u8; 3000]),
        (target("gfx1201"), vec![8u8; 9]),
    ])
    .unwrap();
    let inner = inner_bundle.write();
    for version in 1..=3u16 {
        for (method, payload) in [(0u16, zlib(&inner)), (1u16, zstd(&inner))] {
            let bytes = ccob(version, method, &payload, inner.len() as u64);
            assert!(is_bundle(&bytes));
            let header = parse_compressed_header(&bytes).unwrap();
            assert_eq!(header.version, version);
            assert_eq!(
                header.method,
                if method == 0 {
                    CompressionMethod::Zlib
                } else {
                    CompressionMethod::Zstd
                }
            );
            assert_eq!(header.uncompressed_size, inner.len() as u64);
            assert_eq!(header.hash, 0x1234_5678_9abc_def0);
            assert_eq!(
                Bundle::parse(&bytes).unwrap(),
                inner_bundle,
                "v{version} method {method}"
            );
        }
    }
    let mut trailing = ccob(3, 1, &zstd(&inner), inner.len() as u64);
    trailing.extend_from_slice(b"other data after the bundle");
    assert_eq!(
        Bundle::parse(&trailing).unwrap(),
        inner_bundle,
        "the total size bounds the payload"
    );
}

#[test]
fn rejects_bad_compressed_bundles() {
    let inner = Bundle::for_hip([(target("gfx950"), vec![7u8; 300])])
        .unwrap()
        .write();
    let payload = zlib(&inner);
    let len = inner.len() as u64;
    assert_eq!(
        Bundle::parse(&ccob(3, 2, &payload, len)).unwrap_err(),
        CodeObjectError::UnknownCompression(2)
    );
    assert_eq!(
        Bundle::parse(&ccob(4, 0, &payload, len)).unwrap_err(),
        CodeObjectError::UnsupportedBundleVersion(4)
    );
    let wrong_size = Bundle::parse(&ccob(3, 0, &payload, len + 1)).unwrap_err();
    assert!(
        wrong_size.to_string().contains("header says"),
        "{wrong_size}"
    );
    let too_big = Bundle::parse(&ccob(3, 0, &payload, 1 << 40)).unwrap_err();
    assert!(too_big.to_string().contains("limit"), "{too_big}");
    let mut truncated = ccob(3, 0, &payload, len);
    truncated.truncate(truncated.len() - 1);
    assert!(matches!(
        Bundle::parse(&truncated),
        Err(CodeObjectError::Truncated { .. })
    ));
    let mut corrupt = ccob(2, 0, &payload, len);
    corrupt[30] ^= 0xff;
    assert!(Bundle::parse(&corrupt).is_err());
    let not_compressed = ccob(1, 1, b"plain bytes, not a zstd frame", len);
    assert!(matches!(
        Bundle::parse(&not_compressed),
        Err(CodeObjectError::Decompression(_))
    ));
    let nested = ccob(
        1,
        0,
        &zlib(&ccob(1, 0, &payload, len)),
        20 + payload.len() as u64,
    );
    assert!(matches!(
        Bundle::parse(&nested),
        Err(CodeObjectError::Decompression(_))
    ));
    let full = ccob(3, 1, &zstd(&inner), len);
    for cut in 0..full.len() {
        assert!(
            Bundle::parse(&full[..cut]).is_err(),
            "prefix of {cut} bytes"
        );
    }
}
