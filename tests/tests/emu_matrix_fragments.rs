//! The matrix-core fragment layouts of `iron_intrinsics::matrix`, end to end on the emulator:
//! every kernel of the `tests/matrix-probe` fixture (one per instruction type: CDNA's f16/bf16,
//! FP8/BF8 and gfx950's block-scaled FP8/FP6/FP4 MFMAs with mixed formats; RDNA's f16/bf16 WMMAs
//! in wave32 and wave64 and gfx1201's FP8/BF8 WMMAs) computes one tile `D = A B` from seeded
//! random operands stored as its `load_a`/`load_b` expect, and every element of D (poisoned with
//! NaN first) is compared with an f64 matmul of the decoded operands.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/matrix-probe/<build>/
//! kernels.co` (`<build>` a gfx, or `<gfx>-w64` for a wave64 RDNA build), so this test is
//! ignored under plain `cargo test`.

use iron::DeviceBuffer;
use iron::emulator::Emulator;
use iron::launch::LaunchArg;
use iron::library::quant::half_float::{
    bf16_bits_from_f32, bf16_bits_to_f32, f16_bits_from_f32, f16_bits_to_f32,
};
use iron::library::quant::pack::{pack_codes, packed_len};
use iron::library::quant::{
    E2M1, E2M3, E3M2, E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz, E8M0, ElementFormat,
};
use iron::{Device, LaunchConfig};
use iron_tests::fixtures;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// The CDNA builds of the fixture.
const CDNA_BUILDS: [&str; 3] = ["gfx90a", "gfx942", "gfx950"];

/// The RDNA builds of the fixture, in both wave sizes.
const RDNA_BUILDS: [&str; 4] = ["gfx1100", "gfx1201", "gfx1100-w64", "gfx1201-w64"];

/// Operand scales' E8M0 codes are drawn from `ONE - SCALE_SPREAD ..= ONE + SCALE_SPREAD`.
const SCALE_SPREAD: u8 = 6;

/// Random operands per kernel (different seeds).
const TRIALS: u64 = 3;

/// An operand's element format. `Fp8` and `Bf8` are the gfx's own FP8 encodings: FNUZ on
/// gfx942, OCP on gfx950 and gfx1201.
#[derive(Clone, Copy, Debug)]
enum Element {
    F16,
    Bf16,
    Fp8,
    Bf8,
    Fp8E4M3,
    Fp8E5M2,
    Fp6E2M3,
    Fp6E3M2,
    Fp4E2M1,
}

impl Element {
    /// Bits per element in memory.
    fn bits(self) -> u32 {
        match self {
            Element::F16 | Element::Bf16 => 16,
            Element::Fp8 | Element::Bf8 | Element::Fp8E4M3 | Element::Fp8E5M2 => 8,
            Element::Fp6E2M3 | Element::Fp6E3M2 => 6,
            Element::Fp4E2M1 => 4,
        }
    }

    /// The value of `code` on `gfx`.
    fn decode(self, gfx: &str, code: u16) -> f64 {
        let byte = code as u8;
        let value = match (self, gfx) {
            (Element::F16, _) => f16_bits_to_f32(code),
            (Element::Bf16, _) => bf16_bits_to_f32(code),
            (Element::Fp8, "gfx942") => E4M3Fnuz::decode_to_f32(byte),
            (Element::Bf8, "gfx942") => E5M2Fnuz::decode_to_f32(byte),
            (Element::Fp8 | Element::Fp8E4M3, _) => E4M3Fn::decode_to_f32(byte),
            (Element::Bf8 | Element::Fp8E5M2, _) => E5M2::decode_to_f32(byte),
            (Element::Fp6E2M3, _) => E2M3::decode_to_f32(byte),
            (Element::Fp6E3M2, _) => E3M2::decode_to_f32(byte),
            (Element::Fp4E2M1, _) => E2M1::decode_to_f32(byte),
        };
        f64::from(value)
    }

    /// A random code with a finite value: f16/bf16 values uniform in `[-2, 2]`, any finite code
    /// of the narrower formats (subnormals and both zeros included).
    fn random_code(self, gfx: &str, rng: &mut StdRng) -> u16 {
        match self {
            Element::F16 => f16_bits_from_f32(rng.random_range(-2.0..=2.0)),
            Element::Bf16 => bf16_bits_from_f32(rng.random_range(-2.0..=2.0)),
            _ => loop {
                let code = rng.random_range(0..1u16 << self.bits());
                if self.decode(gfx, code).is_finite() {
                    break code;
                }
            },
        }
    }
}

/// One probe kernel: its name, tile shape, operand formats and the builds that have it.
struct Probe {
    name: &'static str,
    /// `M = N`.
    m: usize,
    k: usize,
    a: Element,
    b: Element,
    /// Block-scaled (E8M0 scales per 32 K elements).
    scaled: bool,
    targets: &'static [&'static str],
}

/// Every CDNA build.
const ALL: &[&str] = &["gfx90a", "gfx942", "gfx950"];
/// CDNA builds with the FP8 instructions.
const FP8: &[&str] = &["gfx942", "gfx950"];
/// gfx950 only.
const CDNA4: &[&str] = &["gfx950"];
/// Every RDNA build.
const RDNA: &[&str] = &RDNA_BUILDS;
/// gfx1201's builds (the FP8 WMMAs).
const RDNA4: &[&str] = &["gfx1201", "gfx1201-w64"];

/// A plain probe on `targets`.
const fn plain(
    name: &'static str,
    (m, k): (usize, usize),
    (a, b): (Element, Element),
    targets: &'static [&'static str],
) -> Probe {
    Probe {
        name,
        m,
        k,
        a,
        b,
        scaled: false,
        targets,
    }
}

/// A block-scaled probe (gfx950).
const fn scaled(name: &'static str, shape: (usize, usize), formats: (Element, Element)) -> Probe {
    Probe {
        scaled: true,
        ..plain(name, shape, formats, CDNA4)
    }
}

/// The fixture's kernels.
const PROBES: [Probe; 18] = {
    use Element::*;
    [
        plain("p16x16x16f16", (16, 16), (F16, F16), ALL),
        plain("p16x16x16bf16", (16, 16), (Bf16, Bf16), ALL),
        plain("p32x32x8f16", (32, 8), (F16, F16), ALL),
        plain("p32x32x8bf16", (32, 8), (Bf16, Bf16), ALL),
        plain("p16x16x32f16", (16, 32), (F16, F16), CDNA4),
        plain("p16x16x32bf16", (16, 32), (Bf16, Bf16), CDNA4),
        plain("p32x32x16f16", (32, 16), (F16, F16), CDNA4),
        plain("p32x32x16bf16", (32, 16), (Bf16, Bf16), CDNA4),
        plain("p16x16x32fp8bf8", (16, 32), (Fp8, Bf8), FP8),
        plain("p32x32x16bf8fp8", (32, 16), (Bf8, Fp8), FP8),
        scaled("s16x16x128fp8fp4", (16, 128), (Fp8E4M3, Fp4E2M1)),
        scaled("s16x16x128fp6bf8", (16, 128), (Fp6E2M3, Fp8E5M2)),
        scaled("s32x32x64fp4fp6", (32, 64), (Fp4E2M1, Fp6E3M2)),
        scaled("s32x32x64fp8fp8", (32, 64), (Fp8E4M3, Fp8E4M3)),
        plain("w16x16x16f16", (16, 16), (F16, F16), RDNA),
        plain("w16x16x16bf16", (16, 16), (Bf16, Bf16), RDNA),
        plain("w16x16x16fp8fp8", (16, 16), (Fp8, Fp8), RDNA4),
        plain("w16x16x16bf8fp8", (16, 16), (Bf8, Fp8), RDNA4),
    ]
};

/// `lines` runs of `k` codes (rows of A, columns of B), each packed K-contiguous: the probes'
/// leading dimension is `k * bits / 8` bytes.
fn pack_lines(element: Element, k: usize, codes: &[u16]) -> Vec<u8> {
    let bits = element.bits();
    if bits == 16 {
        return codes.iter().flat_map(|c| c.to_le_bytes()).collect();
    }
    let line_bytes = packed_len(bits, k);
    let mut out = vec![0u8; line_bytes * (codes.len() / k)];
    for (line, run) in out.chunks_mut(line_bytes).zip(codes.chunks(k)) {
        let narrow: Vec<u8> = run.iter().map(|&c| c as u8).collect();
        pack_codes(bits, &narrow, line);
    }
    out
}

/// Random scale codes, `k / 32` per line (all 1.0 for unscaled probes, which ignore them).
fn scale_codes(probe: &Probe, rng: &mut StdRng) -> Vec<u8> {
    let count = probe.m * probe.k / 32;
    (0..count)
        .map(|_| {
            if probe.scaled {
                rng.random_range(E8M0::ONE - SCALE_SPREAD..=E8M0::ONE + SCALE_SPREAD)
            } else {
                E8M0::ONE
            }
        })
        .collect()
}

/// The value of E8M0 code `code`.
fn scale_value(code: u8) -> f64 {
    2f64.powi(E8M0::to_exponent(code))
}

/// One trial's operands: codes of A (`[m][k]`) and of B stored by column (`[n][k]`), and the
/// scale codes of each row of A and column of B (`[line][k / 32]`).
struct Operands {
    a: Vec<u16>,
    b: Vec<u16>,
    a_scales: Vec<u8>,
    b_scales: Vec<u8>,
}

impl Operands {
    fn random(probe: &Probe, gfx: &str, rng: &mut StdRng) -> Operands {
        let n = probe.m * probe.k;
        Operands {
            a: (0..n).map(|_| probe.a.random_code(gfx, rng)).collect(),
            b: (0..n).map(|_| probe.b.random_code(gfx, rng)).collect(),
            a_scales: scale_codes(probe, rng),
            b_scales: scale_codes(probe, rng),
        }
    }

    /// `D[r][c]` in f64 and `sum_k |A[r][k] B[k][c]|` (scales applied), row-major `[m][n]`.
    fn reference(&self, probe: &Probe, gfx: &str) -> (Vec<f64>, Vec<f64>) {
        let (m, k) = (probe.m, probe.k);
        let blocks = k / 32;
        let a = |r: usize, i: usize| {
            probe.a.decode(gfx, self.a[r * k + i]) * scale_value(self.a_scales[r * blocks + i / 32])
        };
        let b = |i: usize, c: usize| {
            probe.b.decode(gfx, self.b[c * k + i]) * scale_value(self.b_scales[c * blocks + i / 32])
        };
        let mut d = vec![0.0; m * m];
        let mut magnitude = vec![0.0; m * m];
        for r in 0..m {
            for c in 0..m {
                for i in 0..k {
                    let product = a(r, i) * b(i, c);
                    d[r * m + c] += product;
                    magnitude[r * m + c] += product.abs();
                }
            }
        }
        (d, magnitude)
    }
}

/// Runs `probe` once on `device` (one wave of `wave` lanes) and returns D (`[m][m]` row-major).
fn run_probe(
    (device, wave): (&Device, u32),
    module: &iron::Module,
    probe: &Probe,
    operands: &Operands,
) -> Vec<f32> {
    let kernel = module.kernel_by_name(probe.name).unwrap();
    let upload = |bytes: &[u8]| DeviceBuffer::<u8>::from_slice(device, bytes).unwrap();
    let a = upload(&pack_lines(probe.a, probe.k, &operands.a));
    let b = upload(&pack_lines(probe.b, probe.k, &operands.b));
    let a_scales = upload(&operands.a_scales);
    let b_scales = upload(&operands.b_scales);
    let d = DeviceBuffer::<f32>::from_slice(device, &vec![f32::NAN; probe.m * probe.m]).unwrap();
    let buffer = |address| LaunchArg::Buffer { address, device };
    let mut args = vec![buffer(a.address()), buffer(b.address())];
    if probe.scaled {
        args.extend([buffer(a_scales.address()), buffer(b_scales.address())]);
    }
    args.push(buffer(d.address()));
    let stream = device.default_stream();
    // SAFETY: the buffers hold whole tiles (and scale arrays) of the kernel's shape, and the
    // emulator checks every access against its allocations.
    unsafe {
        stream
            .launch_untyped(&kernel, LaunchConfig::new([1, 1, 1], [wave, 1, 1]), &args)
            .unwrap()
    };
    stream.synchronize().unwrap();
    d.to_vec().unwrap()
}

/// Compares D with the f64 reference: f32 accumulation of `k` products stays within
/// `1e-5 * sum |a b|`.
fn check(probe: &Probe, gfx: &str, trial: u64, got: &[f32], operands: &Operands) {
    let (want, magnitude) = operands.reference(probe, gfx);
    for (i, (&g, (&w, &mag))) in got.iter().zip(want.iter().zip(&magnitude)).enumerate() {
        let error = (f64::from(g) - w).abs();
        assert!(
            error <= 1e-5 * mag + 1e-30,
            "{gfx} {} trial {trial}: D[{}][{}] = {g:e}, want {w:e} (sum |a b| {mag:e})",
            probe.name,
            i / probe.m,
            i % probe.m,
        );
    }
}

/// Runs every probe of build `build` (`<gfx>` or `<gfx>-w64`) on the emulator, checking the
/// build holds exactly the probes listed for it.
fn check_build(build: &str) {
    let gfx = build.split('-').next().unwrap_or(build);
    let emulator = Emulator::new(gfx).unwrap();
    let device = emulator.device();
    let module = device
        .load_module(&fixtures::code_object("matrix-probe", build))
        .unwrap();
    let wave = module.code_object().kernels()[0].metadata().wavefront_size;
    let present: BTreeSet<String> = module
        .kernels()
        .iter()
        .map(|k| k.name().to_owned())
        .collect();
    let expected: BTreeSet<String> = PROBES
        .iter()
        .filter(|p| p.targets.contains(&build))
        .map(|p| p.name.to_owned())
        .collect();
    assert_eq!(present, expected, "{build}: the fixture's kernels");
    for (index, probe) in PROBES.iter().enumerate() {
        if !probe.targets.contains(&build) {
            continue;
        }
        for trial in 0..TRIALS {
            let mut rng = StdRng::seed_from_u64(0x3fa9_0000 + 16 * index as u64 + trial);
            let operands = Operands::random(probe, gfx, &mut rng);
            let got = run_probe((&device, wave), &module, probe, &operands);
            check(probe, build, trial, &got, &operands);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_mfma_fragment_probe_matches_an_f64_matmul() {
    for build in CDNA_BUILDS {
        check_build(build);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_wmma_fragment_probe_matches_an_f64_matmul_in_both_wave_sizes() {
    for build in RDNA_BUILDS {
        check_build(build);
    }
}
