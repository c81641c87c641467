//! The 8-bit float conversions of `tests/data/src/hip_fp8.hip` as clang-22 emits them (SDWA byte
//! and word selects on gfx942/gfx950, VOP3 `byte_sel`/`op_sel` on gfx1201), compared with a host
//! decoder of the formats: FNUZ on gfx942, OCP on gfx950 and gfx1201.
mod common;

use common::variant::{CDNA, RDNA, Variant};
use common::{Args, Loaded, bytes_of, data, from_bytes, load};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An 8-bit float format: exponent bits, bias, and whether it is AMD's FNUZ variant (one NaN at
/// 0x80, no negative zero, no infinity) or OCP's (e4m3: NaN at 0x7f/0xff and no infinity; e5m2:
/// IEEE-style infinities and NaNs).
#[derive(Clone, Copy)]
struct Format {
    exponent_bits: u32,
    bias: i32,
    fnuz: bool,
}

impl Format {
    fn decode(self, byte: u8) -> f32 {
        let mantissa_bits = 7 - self.exponent_bits;
        let sign = if byte & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let e = i32::from(byte >> mantissa_bits) & ((1 << self.exponent_bits) - 1);
        let m = u32::from(byte) & ((1 << mantissa_bits) - 1);
        let e_max = (1 << self.exponent_bits) - 1;
        if self.fnuz && byte == 0x80 {
            return f32::NAN;
        }
        if !self.fnuz {
            if self.exponent_bits == 4 && e == e_max && m == (1 << mantissa_bits) - 1 {
                return f32::NAN;
            }
            if self.exponent_bits == 5 && e == e_max {
                return if m == 0 {
                    sign * f32::INFINITY
                } else {
                    f32::NAN
                };
            }
        }
        let fraction = m as f32 / (1 << mantissa_bits) as f32;
        if e == 0 {
            sign * fraction * 2f32.powi(1 - self.bias)
        } else {
            sign * (1.0 + fraction) * 2f32.powi(e - self.bias)
        }
    }
}

/// The (e4m3, e5m2) formats of a build, or `None` where it has no 8-bit floats.
fn formats(v: &Variant) -> Option<(Format, Format)> {
    let f = |exponent_bits, bias, fnuz| Format {
        exponent_bits,
        bias,
        fnuz,
    };
    match v.name {
        "gfx942" => Some((f(4, 8, true), f(5, 16, true))),
        "gfx950" | "gfx1201" | "gfx1201_w64" => Some((f(4, 7, false), f(5, 15, false))),
        _ => None,
    }
}

fn builds() -> impl Iterator<Item = &'static Variant> {
    CDNA.iter().chain(RDNA.iter()).filter(|v| {
        let object = data(&format!("hip_fp8_{}.co", v.name));
        common::variant::built(&object)
    })
}

/// Runs `kernel(input, output, n)` over `n` work-items in workgroups of 64 with `output` poisoned
/// first; returns the output's `out_len` bytes.
fn run(k: &mut Loaded, kernel: &str, input: &[u8], out_len: usize, n: usize) -> Vec<u8> {
    let pin = k.upload(input);
    let pout = k.upload(&vec![0x5a; out_len]);
    let args = Args::default().ptr(pin).ptr(pout).u32(n as u32).0;
    k.launch(kernel, &args, [n.div_ceil(64) as u32, 1, 1], [64, 1, 1], 0)
        .unwrap();
    k.download(pout, out_len)
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// Random words, the first 1024 holding every byte value at every byte position.
fn words(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let w: u32 = rng.random();
            if i < 1024 {
                let shift = 8 * (i % 4) as u32;
                w & !(0xff << shift) | ((i / 4) as u32) << shift
            } else {
                w
            }
        })
        .collect()
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn byte_selected_conversions_read_the_selected_byte() {
    for v in builds() {
        let mut k = load(&data(&format!("hip_fp8_{}.co", v.name)));
        let n = 1100;
        let x = words(n, 81);
        let y: Vec<f32> = from_bytes(&run(&mut k, "fp8_bytes", &bytes_of(&x), n * 32, n));
        for i in 0..n {
            for s in 0..4 {
                let byte = (x[i] >> (8 * s)) as u8;
                let (e4m3, e5m2) = match formats(v) {
                    Some((a, b)) => (a.decode(byte), b.decode(byte)),
                    None => (0.0, 0.0),
                };
                let (a, b) = (y[8 * i + s], y[8 * i + 4 + s]);
                assert!(
                    same(a, e4m3),
                    "{}: e4m3 byte {s} of {:#010x}: {a} want {e4m3}",
                    v.name,
                    x[i]
                );
                assert!(
                    same(b, e5m2),
                    "{}: e5m2 byte {s} of {:#010x}: {b} want {e5m2}",
                    v.name,
                    x[i]
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn word_selected_conversions_read_and_write_the_selected_word() {
    for v in builds() {
        let mut k = load(&data(&format!("hip_fp8_{}.co", v.name)));
        let n = 1100;
        let x = words(n, 82);
        let y: Vec<f32> = from_bytes(&run(&mut k, "fp8_words", &bytes_of(&x), n * 16, n));
        for i in 0..n {
            for s in 0..4 {
                let want = formats(v).map_or(0.0, |(e4m3, _)| e4m3.decode((x[i] >> (8 * s)) as u8));
                assert!(
                    same(y[4 * i + s], want),
                    "{}: byte {s} of {:#010x}: {} want {want}",
                    v.name,
                    x[i],
                    y[4 * i + s]
                );
            }
        }
        // Packing: values an e4m3 byte holds exactly come back as that byte, in the selected word.
        let Some((e4m3, _)) = formats(v) else {
            continue;
        };
        let bytes: Vec<u8> = words(n, 83)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| {
                if e4m3.decode(b).is_nan() || (b == 0x80) {
                    0x38
                } else {
                    b
                }
            })
            .collect();
        let a: Vec<f32> = bytes.iter().map(|&b| e4m3.decode(b)).collect();
        let out: Vec<u32> = from_bytes(&run(&mut k, "fp8_pack", &bytes_of(&a), n * 4, n));
        for i in 0..n {
            let want = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(
                out[i],
                want,
                "{}: packing {:?}",
                v.name,
                &a[4 * i..4 * i + 4]
            );
        }
    }
}
