//! The kernels of `tests/data/src/hip_gfx950.hip` (built by clang-22): gfx950's transposing LDS
//! loads through clang's builtins, compared with the host model of `common/transpose.rs`; and a
//! kernel with arguments of mixed sizes, more than the CDNA preload builds can preload into SGPRs,
//! on every CDNA build with and without preloading.
mod common;

use common::transpose::{TRANSPOSE_LOADS, transposed_wave};
use common::variant::{CDNA, CDNA_PRELOAD, Variant};
use common::{bytes_of, data, from_bytes, load};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn object(v: &Variant) -> std::path::PathBuf {
    data(&format!("hip_gfx950_{}.co", v.name))
}

/// Kernarg bytes with each value at its natural alignment, as clang lays out the arguments.
#[derive(Default)]
struct Kernarg(Vec<u8>);

impl Kernarg {
    fn put(mut self, bytes: &[u8]) -> Self {
        while !self.0.len().is_multiple_of(bytes.len()) {
            self.0.push(0);
        }
        self.0.extend_from_slice(bytes);
        self
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn transposing_lds_loads_from_hip_builtins_match_the_model() {
    // The gfx950 build and its preload build (the same kernel body, entered past the prologue).
    for v in [&CDNA[2], &CDNA_PRELOAD[2]] {
        let mut k = load(&object(v));
        let mut rng = StdRng::seed_from_u64(950);
        let lds: Vec<u32> = (0..512).map(|_| rng.random()).collect();
        // Per lane and load (tr4, tr8, tr6, tr16 in the kernel's order), a random byte address
        // aligned to the load's size inside the 2048 bytes; lanes 0 and 1 share one, lane 63
        // reads the last bytes.
        let kernel_order = [0, 1, 3, 2];
        let mut addr = vec![0u32; 256];
        for (k_pos, &model) in kernel_order.iter().enumerate() {
            let bytes = TRANSPOSE_LOADS[model].1;
            let last = (2048 - bytes) / bytes;
            for l in 0..64 {
                addr[4 * l + k_pos] = (bytes * rng.random_range(0..=last)) as u32;
            }
            addr[4 + k_pos] = addr[k_pos];
            addr[4 * 63 + k_pos] = (bytes * last) as u32;
        }
        let pin = k.upload(&bytes_of(&lds));
        let paddr = k.upload(&bytes_of(&addr));
        let pout = k.upload(&[0x5a; 64 * 36]);
        let args = Kernarg::default()
            .put(&pin.to_le_bytes())
            .put(&paddr.to_le_bytes())
            .put(&pout.to_le_bytes())
            .0;
        k.launch("transpose_loads", &args, [1, 1, 1], [64, 1, 1], 0)
            .unwrap();
        let out: Vec<u32> = from_bytes(&k.download(pout, 64 * 36));
        let lds_bytes = bytes_of(&lds);
        // Result dwords per lane: tr4 at 0..2, tr8 at 2..4, tr6 at 4..7, tr16 at 7..9.
        let mut first_dword = 0;
        for (k_pos, &model) in kernel_order.iter().enumerate() {
            let (name, bytes, width) = TRANSPOSE_LOADS[model];
            let addresses: Vec<usize> = (0..64).map(|l| addr[4 * l + k_pos] as usize).collect();
            let want = transposed_wave(&lds_bytes, &addresses, bytes, width);
            for (l, want) in want.iter().enumerate() {
                let got = (0..bytes / 4).fold(0u128, |x, d| {
                    x | u128::from(out[9 * l + first_dword + d]) << (32 * d)
                });
                assert_eq!(got, *want, "{}: {name} lane {l}", v.name);
            }
            first_dword += bytes / 4;
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn mixed_size_arguments_preloaded_and_beyond_the_sgprs() {
    for v in CDNA.iter().chain(&CDNA_PRELOAD) {
        let mut k = load(&object(v));
        let kd = k
            .kernels
            .iter()
            .find(|e| e.0 == "preload_mixed_args")
            .unwrap()
            .2;
        // A preload build preloads whole arguments from dword 0 while they fit in the 16 user
        // SGPRs: on gfx942 and gfx950 (kernarg pointer only) 13 dwords, `a` to `g`, as `h` would
        // not fit; on gfx90a (also the 4-SGPR private segment buffer) 10, `a` to `f`, leaving the
        // pointer `in`. The later arguments come from memory.
        let preloaded = match v.name {
            "preload_gfx90a" => 10,
            "preload_gfx942" | "preload_gfx950" => 13,
            _ => 0,
        };
        assert_eq!(kd.kernarg_preload, preloaded, "{}", v.name);
        let mut rng = StdRng::seed_from_u64(58);
        for round in 0..3 {
            let a: i8 = if round == 0 { -128 } else { rng.random() };
            let b: i16 = if round == 0 { -1 } else { rng.random() };
            let c: i64 = rng.random();
            let d: i32 = rng.random();
            let e: u8 = if round == 0 { 0xff } else { rng.random() };
            let f: f64 = if round == 0 {
                -0.0
            } else {
                rng.random_range(-1e300..1e300)
            };
            let g: u16 = if round == 0 { 0x8000 } else { rng.random() };
            let h: i64 = rng.random();
            let i: i32 = rng.random_range(-1000..1000);
            let j: i32 = rng.random();
            let n = 128usize;
            let input: Vec<i32> = (0..n)
                .map(|_| rng.random_range(-1 << 20..1 << 20))
                .collect();
            let pin = k.upload(&bytes_of(&input));
            let pout = k.upload(&[0x5a; 44]);
            let pout2 = k.upload(&vec![0x5a; n * 4]);
            let args = Kernarg::default()
                .put(&a.to_le_bytes())
                .put(&b.to_le_bytes())
                .put(&c.to_le_bytes())
                .put(&pout.to_le_bytes())
                .put(&d.to_le_bytes())
                .put(&e.to_le_bytes())
                .put(&f.to_le_bytes())
                .put(&pin.to_le_bytes())
                .put(&g.to_le_bytes())
                .put(&h.to_le_bytes())
                .put(&i.to_le_bytes())
                .put(&pout2.to_le_bytes())
                .put(&j.to_le_bytes())
                .0;
            k.launch("preload_mixed_args", &args, [2, 1, 1], [64, 1, 1], 0)
                .unwrap();
            let out: Vec<u32> = from_bytes(&k.download(pout, 44));
            let fb = f.to_bits();
            let want = [
                i32::from(a) as u32,
                i32::from(b) as u32,
                c as u32,
                (c >> 32) as u32,
                d as u32,
                u32::from(e),
                fb as u32,
                (fb >> 32) as u32,
                u32::from(g),
                h as u32,
                (h >> 32) as u32,
            ];
            assert_eq!(out, want, "{} round {round}", v.name);
            let out2: Vec<i32> = from_bytes(&k.download(pout2, n * 4));
            for t in 0..n {
                assert_eq!(
                    out2[t],
                    input[t].wrapping_mul(i).wrapping_add(j),
                    "{} round {round} work-item {t}",
                    v.name
                );
            }
        }
    }
}
