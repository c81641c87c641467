//! Seed inputs for every fuzz target, built from scratch (no build output): a hand-made
//! two-kernel code object, its metadata note, plain and compressed bundles around it, and short
//! instruction sequences for each emulated target.

use std::io::Write;

use iron::code_object::{Bundle, TargetId};
use iron_emu::{Target, WaveSize};

use crate::program::Program;

#[path = "../../host/code-object/tests/code_object_common/mod.rs"]
mod hand_made;

/// The fuzz targets, by name, as `cargo fuzz` knows them.
pub const TARGETS: [&str; 6] = [
    "code_object",
    "metadata",
    "bundle",
    "compressed_bundle",
    "decode",
    "execute",
];

/// The seeds of fuzz target `target` as (file name, bytes); empty for an unknown name.
pub fn for_target(target: &str) -> Vec<(String, Vec<u8>)> {
    match target {
        "code_object" => vec![("two_kernels.co".into(), code_object())],
        "metadata" => vec![("two_kernels.msgpack".into(), metadata())],
        "bundle" => vec![("gfx950.bundle".into(), plain_bundle())],
        // The `compressed_bundle` target puts the `CCOB` magic in front of its input.
        "compressed_bundle" => compressed_bundles()
            .into_iter()
            .map(|(name, bytes)| (name, bytes[4..].to_vec()))
            .collect(),
        "decode" | "execute" => programs()
            .into_iter()
            .map(|(name, program)| (name, program.to_input()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The hand-made gfx950 code object with kernels `add` and `scale`.
pub fn code_object() -> Vec<u8> {
    hand_made::ElfBuilder::new(hand_made::sample_kernels()).build()
}

/// The metadata note payload (msgpack) of [`code_object`].
pub fn metadata() -> Vec<u8> {
    let kernels = hand_made::sample_kernels()
        .into_iter()
        .map(|k| k.metadata)
        .collect();
    hand_made::msgpack(&hand_made::root_metadata(kernels))
}

/// An uncompressed bundle: the host entry and [`code_object`] for gfx950.
pub fn plain_bundle() -> Vec<u8> {
    Bundle::for_hip([(TargetId::new("gfx950"), code_object())])
        .expect("two distinct entry ids")
        .write()
}

/// [`plain_bundle`] compressed with zlib (header version 2) and zstd (header version 3).
pub fn compressed_bundles() -> Vec<(String, Vec<u8>)> {
    let inner = plain_bundle();
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    zlib.write_all(&inner)
        .expect("writing to a Vec cannot fail");
    let zlib = zlib.finish().expect("writing to a Vec cannot fail");
    let zstd = ruzstd::encoding::compress_to_vec(
        inner.as_slice(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let v2 = |payload: &[u8]| {
        let mut out = b"CCOB".to_vec();
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
        out.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(payload);
        out
    };
    let v3 = |payload: &[u8]| {
        let mut out = b"CCOB".to_vec();
        out.extend_from_slice(&3u16.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&((32 + payload.len()) as u64).to_le_bytes());
        out.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(payload);
        out
    };
    vec![
        ("zlib_v2.ccob".into(), v2(&zlib)),
        ("zstd_v3.ccob".into(), v3(&zstd)),
    ]
}

/// Short programs for every target: vector arithmetic, a global load and store through the
/// kernarg pointer, LDS traffic, and a branch loop, as the emulator's own tests encode them.
pub fn programs() -> Vec<(String, Program)> {
    let gfx9 = vec![
        0xc006_0002,
        0x0000_0000, // s_load_dwordx2 s[0:1], s[4:5], 0x0
        0xbf8c_c07f, // s_waitcnt lgkmcnt(0)
        0x2402_0082, // v_lshlrev_b32 v1, 2, v0
        0xdc50_8000,
        0x0200_0001, // global_load_dword v2, v1, s[0:1]
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0x0204_0502, // v_add_f32 v2, v2, v2
        0xdc70_8000,
        0x0000_0201, // global_store_dword v1, v2, s[0:1]
        0xd81a_0000,
        0x0000_0201, // ds_write_b32 v1, v2
        0xbf8a_0000, // s_barrier
        0xd86c_0000,
        0x0300_0001, // ds_read_b32 v3, v1
        0xbe82_0080, // s_mov_b32 s2, 0
        0x8102_8102, // s_add_i32 s2, s2, 1
        0xbf02_8402, // s_cmp_lt_i32 s2, 4
        0xbf85_fffd, // s_cbranch_scc1 -3
    ];
    let rdna = vec![
        0xf404_0000,
        0xf800_0000, // s_load_b64 s[0:1], s[0:1], 0x0
        0xbf89_fc07, // s_waitcnt lgkmcnt(0)
        0x3002_0082, // v_lshlrev_b32 v1, 2, v0
        0xdc52_0000,
        0x0200_0001, // global_load_b32 v2, v1, s[0:1]
        0xbf89_03f7, // s_waitcnt vmcnt(0)
        0x0604_0502, // v_add_f32 v2, v2, v2
        0xdc6a_0000,
        0x0000_0201, // global_store_b32 v1, v2, s[0:1]
        0xbe82_0080, // s_mov_b32 s2, 0
        0x8102_8102, // s_add_i32 s2, s2, 1
        0xbf04_8402, // s_cmp_lt_i32 s2, 4
        0xbfa2_fffd, // s_cbranch_scc1 -3
    ];
    // GFX12 encodes memory instructions and waits differently: its seed keeps the ALU and loop.
    let gfx12 = rdna[3..4]
        .iter()
        .chain(&rdna[7..8])
        .chain(&rdna[10..])
        .copied()
        .collect::<Vec<u32>>();
    let mut out = Vec::new();
    for target in Target::ALL {
        let waves: &[WaveSize] = if target.is_rdna() {
            &[WaveSize::Wave32, WaveSize::Wave64]
        } else {
            &[WaveSize::Wave64]
        };
        for &wave in waves {
            let words = match target {
                Target::Gfx1201 => &gfx12,
                Target::Gfx1100 => &rdna,
                _ => &gfx9,
            };
            out.push((
                format!("{target}_{}.bin", wave.lanes()),
                Program {
                    target,
                    wave,
                    words: words.clone(),
                },
            ));
        }
    }
    out
}
