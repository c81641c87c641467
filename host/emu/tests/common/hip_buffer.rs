//! The buffer-resource HIP kernels (`tests/data/src/hip_buffer.hip`, built by clang-22) with
//! seeded random data, compared with a host model of the range checks; run per build by
//! `run_hip_buffer.rs`. Outputs are poisoned first.
//!
//! Both families check an untyped load or store dword by dword (a byte or a short as one piece)
//! and an atomic as a whole. RDNA (OOB_SELECT 3 for raw buffers, the guides' table): a piece is
//! in range if soffset + its offset + its size is at most NUM_RECORDS; structured buffers
//! (OOB_SELECT 0) need index < NUM_RECORDS and offset + size <= stride. GFX9: its offset + its
//! size <= NUM_RECORDS with soffset left out, or index < NUM_RECORDS with an index and a stride.
//! NUM_RECORDS of the raw loads and stores ends 6 bytes past a whole number of elements, so that
//! the last lanes in range straddle the end.

use super::variant::Variant;
use super::{Args, Loaded, bytes_of, data, from_bytes, load, read_code_object};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Work-items of every launch: one workgroup, two to four waves.
const THREADS: usize = 128;

fn object(v: &Variant) -> std::path::PathBuf {
    data(&format!("hip_buffer_{}.co", v.name))
}

/// Whether the kernels of `v` were built; says so when they were not.
pub fn built(v: &Variant) -> bool {
    super::variant::built(&object(v))
}

fn poison(k: &mut Loaded, bytes: usize) -> u64 {
    k.upload(&vec![0x5a; bytes])
}

fn random_bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.random()).collect()
}

/// Bytes `p..p + n` (n <= 4) of `b` as a little-endian number.
fn le(b: &[u8], p: usize, n: usize) -> u32 {
    (0..n).fold(0, |v, k| v | u32::from(b[p + k]) << (8 * k))
}

/// Whether the dword piece at offset `at` of a raw access of `bytes` (one piece of `bytes` below
/// a dword) is in range.
fn raw_in_range(v: &Variant, nr: u32, soffset: u32, bytes: usize, at: usize) -> bool {
    let (nr, soffset) = (nr as usize, soffset as usize);
    let end = at + bytes.min(4);
    if v.rdna {
        soffset + end <= nr
    } else {
        end <= nr
    }
}

/// The widths of `raw_loads` and `raw_stores`, region by region.
const WIDTHS: [usize; 6] = [16, 12, 8, 4, 2, 1];

/// NUM_RECORDS of each region: 100 elements and 6 bytes (straddling), plus on RDNA soffset.
fn region_records(v: &Variant, soffset: u32) -> [u32; 6] {
    WIDTHS.map(|w| {
        let n = 100 * w as u32 + 6;
        if v.rdna { n + soffset } else { n }
    })
}

/// Check of the `raw_loads_read_zero_past_num_records` test.
pub fn raw_loads_read_zero_past_num_records(v: &Variant) {
    let gfx = v.name;
    let mut k = load(&object(v));
    let mut rng = StdRng::seed_from_u64(120);
    let soffset = 8u32;
    let src = random_bytes(&mut rng, 6 * 2048 + 64);
    let nr = region_records(v, soffset);
    let psrc = k.upload(&src);
    let pnr = k.upload(&bytes_of(&nr));
    let pout = poison(&mut k, THREADS * 48);
    k.launch(
        "raw_loads",
        &Args::default().ptr(psrc).ptr(pnr).u32(soffset).ptr(pout).0,
        [1, 1, 1],
        [THREADS as u32, 1, 1],
        0,
    )
    .unwrap_or_else(|e| panic!("{gfx}: {e}"));
    let out: Vec<u32> = from_bytes(&k.download(pout, THREADS * 48));
    for t in 0..THREADS {
        let mut want = Vec::new();
        for (r, &w) in WIDTHS.iter().enumerate() {
            let offset = t * w;
            let base = r * 2048 + soffset as usize;
            for d in 0..w.div_ceil(4) {
                let at = offset + 4 * d;
                want.push(if raw_in_range(v, nr[r], soffset, w, at) {
                    le(&src, base + at, w.min(4))
                } else {
                    0
                });
            }
        }
        assert_eq!(&out[t * 12..t * 12 + 12], &want[..], "{gfx} work-item {t}");
    }
}

/// Check of the `raw_stores_drop_what_is_past_num_records` test.
pub fn raw_stores_drop_what_is_past_num_records(v: &Variant) {
    let gfx = v.name;
    let mut k = load(&object(v));
    let mut rng = StdRng::seed_from_u64(121);
    let soffset = 8u32;
    let dst = random_bytes(&mut rng, 6 * 2048 + 64);
    let values: Vec<u32> = (0..THREADS * 4).map(|_| rng.random()).collect();
    let nr = region_records(v, soffset);
    let pdst = k.upload(&dst);
    let pnr = k.upload(&bytes_of(&nr));
    let pval = k.upload(&bytes_of(&values));
    k.launch(
        "raw_stores",
        &Args::default().ptr(pdst).ptr(pnr).u32(soffset).ptr(pval).0,
        [1, 1, 1],
        [THREADS as u32, 1, 1],
        0,
    )
    .unwrap_or_else(|e| panic!("{gfx}: {e}"));
    let got = k.download(pdst, dst.len());
    let mut want = dst.clone();
    for t in 0..THREADS {
        let data: Vec<u8> = bytes_of(&values[t * 4..t * 4 + 4]);
        for (r, &w) in WIDTHS.iter().enumerate() {
            let offset = t * w;
            let base = r * 2048 + soffset as usize;
            // b16 stores the second value's low half, b8 the third's low byte.
            let from = match w {
                2 => 4,
                1 => 8,
                _ => 0,
            };
            for d in 0..w.div_ceil(4) {
                let at = offset + 4 * d;
                if raw_in_range(v, nr[r], soffset, w, at) {
                    for j in 0..w.min(4) {
                        want[base + at + j] = data[from + 4 * d + j];
                    }
                }
            }
        }
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{gfx} byte {i} (region {})", i / 2048);
    }
}

/// The 32-bit atomics of `raw_atomics`, region by region.
const OPS32: [&str; 13] = [
    "add", "sub", "min_i", "max_u", "and", "or", "xor", "swap", "cmpswap", "inc", "dec", "add_f32",
    "add",
];

/// The 64-bit atomics of `raw_atomics`, region by region.
const OPS64: [&str; 4] = ["add", "max_i", "xor", "cmpswap"];

/// Check of the `atomics_return_old_values_and_skip_lanes_out_of_range` test.
pub fn atomics_return_old_values_and_skip_lanes_out_of_range(v: &Variant) {
    let gfx = v.name;
    let mut k = load(&object(v));
    let mut rng = StdRng::seed_from_u64(122);
    let (soffset, nr) = (4u32, 404u32);
    let mut mem = random_bytes(&mut rng, 13 * 512 + 4 * 1024 + 64);
    let mut x: Vec<u32> = (0..THREADS).map(|_| rng.random()).collect();
    let mut y: Vec<u32> = (0..THREADS).map(|_| rng.random()).collect();
    let z: Vec<u32> = (0..THREADS)
        .map(|_| rng.random_range(-1e3f32..1e3).to_bits())
        .collect();
    let slot = |region: usize, t: usize| region * 512 + soffset as usize + 4 * t;
    let slot64 = |region: usize, t: usize| 13 * 512 + region * 1024 + soffset as usize + 8 * t;
    for t in 0..THREADS {
        // inc and dec near their wrap points on a third of the lanes.
        if t % 3 == 0 {
            x[t] = rng.random_range(0..8);
            for r in [9, 10] {
                let small: u32 = rng.random_range(0..8);
                mem[slot(r, t)..slot(r, t) + 4].copy_from_slice(&small.to_le_bytes());
            }
        }
        let f = rng.random_range(-1e3f32..1e3).to_bits();
        mem[slot(11, t)..slot(11, t) + 4].copy_from_slice(&f.to_le_bytes());
        // cmpswap finds its compare value on even lanes.
        if t % 2 == 0 {
            y[t] = le(&mem, slot(8, t), 4);
            let c = u64::from(x[t]) << 32 | u64::from(y[t]);
            mem[slot64(3, t)..slot64(3, t) + 8].copy_from_slice(&c.to_le_bytes());
        }
    }
    let pmem = k.upload(&mem);
    let px = k.upload(&bytes_of(&x));
    let py = k.upload(&bytes_of(&y));
    let pz = k.upload(&bytes_of(&z));
    let old_words = 13 * THREADS + 4 * THREADS * 2;
    let pold = poison(&mut k, old_words * 4);
    k.launch(
        "raw_atomics",
        &Args::default()
            .ptr(pmem)
            .u32(nr)
            .u32(soffset)
            .ptr(px)
            .ptr(py)
            .ptr(pz)
            .ptr(pold)
            .0,
        [1, 1, 1],
        [THREADS as u32, 1, 1],
        0,
    )
    .unwrap_or_else(|e| panic!("{gfx}: {e}"));
    let got = k.download(pmem, mem.len());
    let old: Vec<u32> = from_bytes(&k.download(pold, old_words * 4));
    let mut want = mem.clone();
    for t in 0..THREADS {
        let in32 = raw_in_range(v, nr, soffset, 4, 4 * t);
        for (r, op) in OPS32.iter().enumerate() {
            let p = slot(r, t);
            let before = u64::from(le(&mem, p, 4));
            let operand = if *op == "add_f32" { z[t] } else { x[t] };
            if in32 {
                let new = super::atomic_model::new_value(
                    op,
                    false,
                    before,
                    u64::from(operand),
                    u64::from(y[t]),
                );
                want[p..p + 4].copy_from_slice(&(new as u32).to_le_bytes());
            }
            if r < 12 {
                let returned = if in32 { before as u32 } else { 0 };
                assert_eq!(old[r * THREADS + t], returned, "{gfx} {op} work-item {t}");
            }
        }
        // In or out as a whole: a 64-bit atomic whose second dword is past the end is dropped.
        let in64 =
            raw_in_range(v, nr, soffset, 8, 8 * t) && raw_in_range(v, nr, soffset, 8, 8 * t + 4);
        let w = u64::from(y[t]) << 32 | u64::from(x[t]);
        let c = u64::from(x[t]) << 32 | u64::from(y[t]);
        for (r, op) in OPS64.iter().enumerate() {
            let p = slot64(r, t);
            let before = u64::from(le(&mem, p, 4)) | u64::from(le(&mem, p + 4, 4)) << 32;
            if in64 {
                let new = super::atomic_model::new_value(op, true, before, w, c);
                want[p..p + 8].copy_from_slice(&new.to_le_bytes());
            }
            let returned = if in64 { before } else { 0 };
            let at = 13 * THREADS + (r * THREADS + t) * 2;
            let got = u64::from(old[at]) | u64::from(old[at + 1]) << 32;
            assert_eq!(got, returned, "{gfx} 64-bit {op} work-item {t}");
        }
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{gfx} memory byte {i}");
    }
}

/// Check of the `structured_accesses_check_the_record_index` test.
pub fn structured_accesses_check_the_record_index(v: &Variant) {
    let gfx = v.name;
    let mut k = load(&object(v));
    let mut rng = StdRng::seed_from_u64(123);
    let nr = 100u32;
    let src = random_bytes(&mut rng, (THREADS + 2) * 12);
    let dst = random_bytes(&mut rng, (THREADS + 2) * 12);
    let x: Vec<u32> = (0..THREADS).map(|_| rng.random()).collect();
    let psrc = k.upload(&src);
    let pdst = k.upload(&dst);
    let px = k.upload(&bytes_of(&x));
    let pout = poison(&mut k, THREADS * 12);
    k.launch(
        "struct_access",
        &Args::default()
            .ptr(psrc)
            .ptr(pdst)
            .u32(nr)
            .ptr(px)
            .ptr(pout)
            .0,
        [1, 1, 1],
        [THREADS as u32, 1, 1],
        0,
    )
    .unwrap_or_else(|e| panic!("{gfx}: {e}"));
    let out: Vec<u32> = from_bytes(&k.download(pout, THREADS * 12));
    let got = k.download(pdst, dst.len());
    let mut want_dst = dst.clone();
    let nr = nr as usize;
    for t in 0..THREADS {
        let read = |index: usize, offset: usize| {
            if index < nr {
                le(&src, index * 12 + offset, 4)
            } else {
                0
            }
        };
        let want = [read(t, (t % 3) * 4), read(t + 1, 4), read(t + 1, 8)];
        assert_eq!(&out[t * 3..t * 3 + 3], &want, "{gfx} work-item {t}");
        if t < nr {
            want_dst[t * 12 + 8..t * 12 + 12].copy_from_slice(&x[t].to_le_bytes());
        }
    }
    assert_eq!(got, want_dst, "{gfx} structured stores");
}

/// Check of the `rdna_objects_contain_the_buffer_instructions` test: the emulator's disassembly
/// of the RDNA build names every buffer instruction the kernels are meant to cover.
pub fn rdna_objects_contain_the_buffer_instructions(v: &Variant) {
    let co = read_code_object(&object(v)).expect("code object");
    let target = iron_emu::Target::from_elf_flags(co.e_flags).expect("modelled target");
    let wave = if v.lanes == 64 {
        iron_emu::WaveSize::Wave64
    } else {
        iron_emu::WaveSize::Wave32
    };
    let words: Vec<u32> = from_bytes(&co.text[..co.text.len() / 4 * 4]);
    let mut text = Vec::new();
    let mut at = 0;
    while at < words.len() {
        match iron_emu::rdna::decode(target, wave, &words[at..]) {
            Ok(i) => {
                text.push(iron_emu::disassemble(target, &i));
                at += usize::from(i.len / 4).max(1);
            }
            Err(_) => at += 1,
        }
    }
    let has = |s: &str| text.iter().any(|l| l.starts_with(s));
    let ret = if target == iron_emu::Target::Gfx1201 {
        "th:TH_ATOMIC_RETURN"
    } else {
        "glc"
    };
    let mut wanted = vec![
        "buffer_load_b128 ",
        "buffer_load_b96 ",
        "buffer_load_b64 ",
        "buffer_load_b32 ",
        "buffer_load_u16 ",
        "buffer_load_u8 ",
        "buffer_store_b128 ",
        "buffer_store_b96 ",
        "buffer_store_b64 ",
        "buffer_store_b32 ",
        "buffer_store_b16 ",
        "buffer_store_b8 ",
    ];
    wanted.extend(
        [
            "add_u32",
            "sub_u32",
            "min_i32",
            "max_u32",
            "and_b32",
            "or_b32",
            "xor_b32",
            "swap_b32",
            "cmpswap_b32",
            "inc_u32",
            "dec_u32",
            "add_f32",
            "add_u64",
            "max_i64",
            "xor_b64",
            "cmpswap_b64",
        ]
        .map(|op| -> &'static str { Box::leak(format!("buffer_atomic_{op} ").into_boxed_str()) }),
    );
    for w in wanted {
        assert!(has(w), "{}: no `{w}` in the disassembly", v.name);
    }
    let atomics: Vec<&String> = text
        .iter()
        .filter(|l| l.starts_with("buffer_atomic_"))
        .collect();
    assert!(
        atomics.iter().any(|l| l.contains(ret)) && atomics.iter().any(|l| !l.contains(ret)),
        "{}: atomics with and without {ret}: {atomics:?}",
        v.name
    );
    assert!(
        text.iter()
            .any(|l| l.starts_with("buffer_") && l.contains(" idxen")),
        "{}: no indexed buffer access",
        v.name
    );
}
