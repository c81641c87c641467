//! The casts of `iron::library` on every emulated gfx: f32 to and from f16 and bf16
//! (`Library::cast`) and f32, f16 or bf16 to the four FP8 formats (`Library::cast_to_fp8`),
//! each output code compared with the oracle's exact code. Inputs mix random bit patterns (NaN
//! payloads, infinities, subnormals of every kind), values around the output's overflow and
//! underflow, and exact midpoints between neighbouring output codes (ties to even); outputs are
//! poisoned with a guard zone, and the emulator must count exactly the output's bytes written.

mod common;

use common::{
    GUARD, KERNARG_BYTES_PER_WAVE, LibraryDevice, SIZES, TestFloat, assert_floats_written,
    library_devices, poisoned_floats, rng, upload,
};
use iron::DeviceBuffer;
use iron::library::{CastTo, Fp8Format, bf16, f16};
use iron_tests::oracle::cast::{cast, cast_matches};
use iron_tests::oracle::{Format, Overflow};
use rand::Rng;
use rand::rngs::StdRng;

/// The oracle's format of an FP8 encoding.
fn fp8_format(format: Fp8Format) -> Format {
    match format {
        Fp8Format::E4M3Fn => Format::E4m3fn,
        Fp8Format::E5M2 => Format::E5m2,
        Fp8Format::E4M3Fnuz => Format::E4m3fnuz,
        Fp8Format::E5M2Fnuz => Format::E5m2fnuz,
    }
}

/// The kernel of a cast to FP8, e.g. `cast_bf16_to_fp8_e4m3fnuz`.
fn fp8_kernel<T: TestFloat>(format: Fp8Format) -> String {
    let from = common::kernel_name::<T>("cast");
    let to = match format {
        Fp8Format::E4M3Fn => "e4m3fn",
        Fp8Format::E5M2 => "e5m2",
        Fp8Format::E4M3Fnuz => "e4m3fnuz",
        Fp8Format::E5M2Fnuz => "e5m2fnuz",
    };
    format!("{from}_to_fp8_{to}")
}

/// `n` inputs of format `I` for a cast to `to`: a quarter each of random bit patterns, values
/// up to 1.5 times `to`'s largest, values around `to`'s smallest normal, and midpoints between
/// two neighbouring codes of `to`.
fn cast_inputs<I: TestFloat>(rng: &mut StdRng, n: usize, to: Format) -> Vec<I> {
    let from = I::FORMAT;
    let mask = if from.bits() == 32 { u32::MAX } else { 0xFFFF };
    let smallest_normal = to.min_subnormal() * f64::from(1u32 << to.mantissa_bits());
    (0..n)
        .map(|i| {
            let value = match i % 4 {
                0 => return I::from_bits(rng.random::<u32>() & mask),
                1 => rng.random_range(-1.5..1.5) * to.max_finite(),
                2 => rng.random_range(-4.0..4.0) * smallest_normal,
                _ => {
                    let code = rng.random_range(0..(1u64 << to.bits())) as u32;
                    let (a, b) = (to.decode(code), to.decode(code + 1));
                    if a.is_finite() && b.is_finite() {
                        (a + b) / 2.0
                    } else {
                        a
                    }
                }
            };
            I::from_bits(from.encode(value, Overflow::Special))
        })
        .collect()
}

/// `cast::<I, O>` over `n` elements, every code checked against the oracle.
fn check_cast<I: TestFloat + CastTo<O>, O: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    kernel: &str,
    n: usize,
) {
    let context = format!("{} {kernel} n={n}", d.gfx);
    let x = cast_inputs::<I>(rng, n, O::FORMAT);
    let x_buf = upload(&d.device, &x);
    let mut y = poisoned_floats::<O>(&d.device, n);
    d.library
        .cast(&d.device.default_stream(), &x_buf, &mut y, n)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = y.to_vec().unwrap();
    assert_floats_written(&got, n, &context);
    for i in 0..n {
        let want = cast(I::FORMAT, O::FORMAT, x[i].bits());
        assert!(
            cast_matches(O::FORMAT, want, got[i].bits()),
            "{context} i={i}: {:#x} gave {:#x}, want {want:#x}",
            x[i].bits(),
            got[i].bits()
        );
    }
    check_traffic(d, kernel, n, size_of::<I>(), size_of::<O>(), &context);
}

/// Checks the bytes the last dispatch read and wrote (none for `n = 0`).
fn check_traffic(
    d: &LibraryDevice,
    kernel: &str,
    n: usize,
    in_size: usize,
    out_size: usize,
    context: &str,
) {
    if n == 0 {
        d.dispatches(&[]);
        return;
    }
    let traffic = d.last_dispatch(kernel);
    assert_eq!(
        traffic.written,
        (n * out_size) as u64,
        "{context}: bytes written"
    );
    let input = (n * in_size) as u64;
    assert!(
        traffic.read >= input && traffic.read <= input + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read for {input} bytes of input",
        traffic.read
    );
}

/// The FP8 codes `cast_to_fp8` writes for `x` into a buffer poisoned with `poison`, with the
/// guard checked.
fn run_fp8<T: TestFloat>(
    d: &LibraryDevice,
    x: &DeviceBuffer<T>,
    format: Fp8Format,
    n: usize,
    poison: u8,
    context: &str,
) -> Vec<u8> {
    let mut y = DeviceBuffer::from_slice(&d.device, &vec![poison; n + GUARD]).unwrap();
    d.library
        .cast_to_fp8(&d.device.default_stream(), x, &mut y, format, n)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = y.to_vec().unwrap();
    assert!(
        got[n..].iter().all(|&v| v == poison),
        "{context}: guard overwritten"
    );
    got
}

/// `cast_to_fp8::<T>` over `n` elements, every code checked against the oracle. When some
/// code equals the poison, the cast runs again under another poison: equal codes then show
/// that each element was written.
fn check_fp8<T: TestFloat>(d: &LibraryDevice, rng: &mut StdRng, format: Fp8Format, n: usize) {
    let kernel = fp8_kernel::<T>(format);
    let context = format!("{} {kernel} n={n}", d.gfx);
    let to = fp8_format(format);
    let x = cast_inputs::<T>(rng, n, to);
    let want: Vec<u8> = x
        .iter()
        .map(|v| cast(T::FORMAT, to, v.bits()) as u8)
        .collect();
    let x_buf = upload(&d.device, &x);
    let (first, second) = (0xA5, 0x5A);
    let got = run_fp8(d, &x_buf, format, n, first, &context);
    for i in 0..n {
        assert_eq!(
            got[i],
            want[i],
            "{context} i={i}: input {:#x} ({:e})",
            x[i].bits(),
            x[i].value()
        );
    }
    check_traffic(d, &kernel, n, size_of::<T>(), 1, &context);
    if want.contains(&first) {
        let again = run_fp8(d, &x_buf, format, n, second, &context);
        assert_eq!(again[..n], want[..], "{context} (second poison)");
        d.clear_counters();
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn f32_to_and_from_16_bit_floats() {
    let mut rng = rng(21);
    for d in library_devices() {
        d.clear_counters();
        for n in SIZES {
            check_cast::<f32, f16>(&d, &mut rng, "cast_f32_to_f16", n);
            check_cast::<f16, f32>(&d, &mut rng, "cast_f16_to_f32", n);
            check_cast::<f32, bf16>(&d, &mut rng, "cast_f32_to_bf16", n);
            check_cast::<bf16, f32>(&d, &mut rng, "cast_bf16_to_f32", n);
        }
    }
}

/// Every float type to `format`.
fn fp8_everywhere(format: Fp8Format, seed: u64) {
    let mut rng = rng(seed);
    for d in library_devices() {
        d.clear_counters();
        for n in SIZES {
            check_fp8::<f32>(&d, &mut rng, format, n);
            check_fp8::<f16>(&d, &mut rng, format, n);
            check_fp8::<bf16>(&d, &mut rng, format, n);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn to_fp8_e4m3fn() {
    fp8_everywhere(Fp8Format::E4M3Fn, 22);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn to_fp8_e5m2() {
    fp8_everywhere(Fp8Format::E5M2, 23);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn to_fp8_e4m3fnuz() {
    fp8_everywhere(Fp8Format::E4M3Fnuz, 24);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn to_fp8_e5m2fnuz() {
    fp8_everywhere(Fp8Format::E5M2Fnuz, 25);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn short_buffers_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let x = upload(&d.device, &[1.0f32; 20]);
    let mut y = upload(&d.device, &[f16::ZERO; 19]);
    let error = d.library.cast(&s, &x, &mut y, 20).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cast f32 to f16: y holds 19 elements, n = 20"
    );
    let mut codes = DeviceBuffer::from_slice(&d.device, &[0u8; 30]).unwrap();
    let error = d
        .library
        .cast_to_fp8(&s, &x, &mut codes, Fp8Format::E5M2, 21)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cast_to_fp8: x holds 20 elements, n = 21"
    );
    d.dispatches(&[]);
}
