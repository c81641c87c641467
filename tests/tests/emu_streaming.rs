//! The streaming methods of `iron::library` (fill, copy, saxpy) and the sum reduction on every
//! emulated gfx: seeded inputs with edge values, sizes that are not multiples of the vector
//! width, the wave or the workgroup's span, and exact multiples of a span (no workgroup takes
//! elements one at a time), poisoned outputs with a guard zone that must stay untouched, and the
//! emulator's count of bytes written, which must be exactly the output's size.

mod common;

use common::{
    GUARD, KERNARG_BYTES_PER_WAVE, SIZES, Traffic, assert_written, edgy, library_devices, rng,
    upload,
};
use iron::DeviceBuffer;
use iron_kernels::reduce::elements_per_workgroup;
use iron_tests::oracle::Expected;
use iron_tests::oracle::expected::{F32_ROUNDOFF, gamma};
use rand::Rng;

const POISON: u32 = 0xDEAD_BEEF;

/// A u32 buffer of `n + GUARD` elements, all [`POISON`].
fn poisoned_words(device: &iron::Device, n: usize) -> DeviceBuffer<u32> {
    DeviceBuffer::from_slice(device, &vec![POISON; n + GUARD]).unwrap()
}

/// A random word other than [`POISON`].
fn word(rng: &mut rand::rngs::StdRng) -> u32 {
    loop {
        let w = rng.random();
        if w != POISON {
            return w;
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn fill_writes_exactly_n_words_of_any_4_byte_type() {
    let mut rng = rng(1);
    for d in library_devices() {
        let s = d.device.default_stream();
        for n in SIZES {
            let context = format!("{} fill n={n}", d.gfx);
            let value = word(&mut rng);
            let mut out = poisoned_words(&d.device, n);
            d.library.fill(&s, &mut out, value, n).unwrap();
            let got = out.to_vec().unwrap();
            assert_written(&got, n, &POISON, &context);
            assert!(got[..n].iter().all(|&v| v == value), "{context}");
            if n > 0 {
                assert_eq!(
                    d.last_dispatch("fill_u32").written,
                    4 * n as u64,
                    "{context}"
                );
            }

            let value = f32::from_bits(word(&mut rng));
            let mut floats =
                DeviceBuffer::from_slice(&d.device, &vec![f32::from_bits(POISON); n + GUARD])
                    .unwrap();
            d.library.fill(&s, &mut floats, value, n).unwrap();
            let bits: Vec<u32> = floats
                .to_vec()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_written(&bits, n, &POISON, &context);
            assert!(
                bits[..n].iter().all(|&v| v == value.to_bits()),
                "{context} f32"
            );

            let value = -(word(&mut rng) as i32).abs();
            let mut signed =
                DeviceBuffer::from_slice(&d.device, &vec![POISON as i32; n + GUARD]).unwrap();
            d.library.fill(&s, &mut signed, value, n).unwrap();
            let got = signed.to_vec().unwrap();
            assert_written(&got, n, &(POISON as i32), &context);
            assert!(got[..n].iter().all(|&v| v == value), "{context} i32");
            d.clear_counters();
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn copy_moves_exactly_n_words() {
    let mut rng = rng(2);
    for d in library_devices() {
        let s = d.device.default_stream();
        for n in SIZES {
            let context = format!("{} copy n={n}", d.gfx);
            let src: Vec<u32> = (0..n).map(|_| word(&mut rng)).collect();
            let src_buf = DeviceBuffer::from_slice(&d.device, &src).unwrap();
            let mut dst = poisoned_words(&d.device, n);
            d.library.copy(&s, &src_buf, &mut dst, n).unwrap();
            let got = dst.to_vec().unwrap();
            assert_written(&got, n, &POISON, &context);
            assert_eq!(got[..n], src[..], "{context}");
            if n > 0 {
                let traffic = d.last_dispatch("copy_u32");
                let bytes = 4 * n as u64;
                assert_eq!(traffic.written, bytes, "{context}: bytes written");
                assert!(
                    traffic.read >= bytes
                        && traffic.read <= bytes + traffic.waves * KERNARG_BYTES_PER_WAVE,
                    "{context}: {} bytes read",
                    traffic.read
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn saxpy_matches_the_fused_cpu_result_bit_for_bit() {
    let mut rng = rng(3);
    for d in library_devices() {
        let s = d.device.default_stream();
        for n in SIZES {
            let context = format!("{} saxpy n={n}", d.gfx);
            let x: Vec<f32> = edgy(&mut rng, n, 100.0);
            let mut y: Vec<f32> = edgy(&mut rng, n, 100.0);
            y.extend([f32::from_bits(POISON); GUARD]);
            let alpha = rng.random_range(-4.0f32..4.0);
            let x_buf = upload(&d.device, &x);
            let mut y_buf = upload(&d.device, &y);
            d.library.saxpy(&s, alpha, &x_buf, &mut y_buf, n).unwrap();
            let got = y_buf.to_vec().unwrap();
            for i in 0..n {
                let want = alpha.mul_add(x[i], y[i]);
                assert!(
                    got[i].to_bits() == want.to_bits() || got[i].is_nan() && want.is_nan(),
                    "{context} i={i}: {} vs {want}",
                    got[i]
                );
            }
            assert!(
                got[n..].iter().all(|v| v.to_bits() == POISON),
                "{context}: guard overwritten"
            );
            if n > 0 {
                assert_eq!(
                    d.last_dispatch("saxpy_f32").written,
                    4 * n as u64,
                    "{context}"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn sum_reduces_in_one_launch_per_workgroup_span_fold() {
    let mut rng = rng(4);
    for d in library_devices() {
        let s = d.device.default_stream();
        d.clear_counters();
        for n in [
            0usize, 1, 5, 64, 100, 1000, 4096, 4097, 8192, 8193, 10_007, 12_289, 16_384, 100_003,
        ] {
            let context = format!("{} sum n={n}", d.gfx);
            let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            let x_buf = upload(&d.device, &x);
            let mut total = upload(&d.device, &[f32::from_bits(POISON); 1 + GUARD]);
            d.library.sum(&s, &x_buf, &mut total, n).unwrap();
            let got = total.to_vec().unwrap();
            let bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
            assert_written(&bits, 1, &POISON, &context);
            let value: f64 = x.iter().map(|&v| f64::from(v)).sum();
            let magnitude: f64 = x.iter().map(|&v| f64::from(v).abs()).sum();
            let per_workgroup = elements_per_workgroup(d.wave) as usize;
            let launches: &[&str] = if n <= per_workgroup {
                &["sum_f32"]
            } else {
                &["sum_f32", "sum_f32"]
            };
            // The additions a term passes through in each launch: its work-item's share (at
            // most per_workgroup / 256 one by one in the workgroup holding the end), 8 levels of
            // the workgroup reduction; plus one to spare.
            let depth = (per_workgroup as u64 / 256 + 8) * launches.len() as u64 + 1;
            let want = Expected {
                value,
                error: gamma(depth) * magnitude + F32_ROUNDOFF * value.abs(),
            };
            assert!(
                want.accepts(f64::from(got[0])),
                "{context}: {} vs {want:?}",
                got[0]
            );
            let traffic = d.dispatches(launches);
            assert!(
                traffic[0].read >= 4 * n as u64,
                "{context}: the first pass reads x"
            );
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn sums_beyond_2_24_elements_take_a_third_launch() {
    // One wave64 device (4096 elements per workgroup): 2^24 + 5000 elements make 4098
    // partials, then 2, then the total.
    let d = library_devices()
        .into_iter()
        .find(|d| d.wave == 64)
        .expect("a wave64 build");
    let n = (1usize << 24) + 5000;
    let mut rng = rng(6);
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(0.0f32..1.0)).collect();
    let s = d.device.default_stream();
    let x_buf = upload(&d.device, &x);
    let mut total = upload(&d.device, &[f32::from_bits(POISON); 1 + GUARD]);
    d.clear_counters();
    d.library.sum(&s, &x_buf, &mut total, n).unwrap();
    let got = total.to_vec().unwrap();
    let bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
    assert_written(&bits, 1, &POISON, &d.gfx);
    let traffic = d.dispatches(&["sum_f32", "sum_f32", "sum_f32"]);
    for (pass, partials) in [(1, 4098), (2, 2)] {
        let Traffic {
            read,
            written,
            waves,
        } = traffic[pass];
        assert!(
            read >= 4 * partials && read <= 4 * partials + waves * KERNARG_BYTES_PER_WAVE,
            "{}: pass {pass} reads {partials} partials, not {read} bytes",
            d.gfx
        );
        assert_eq!(
            written,
            4 * partials.div_ceil(4096),
            "{}: pass {pass}",
            d.gfx
        );
    }
    let value: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let want = Expected {
        value,
        error: gamma(24 * 3 + 1) * value + F32_ROUNDOFF * value,
    };
    assert!(
        want.accepts(f64::from(got[0])),
        "{}: {} vs {want:?}",
        d.gfx,
        got[0]
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn sum_bits_depend_on_the_wave_size_alone() {
    let mut rng = rng(5);
    // Magnitudes spread over 2^-20..2^20, so that another order of the additions rounds
    // differently.
    let x: Vec<f32> = (0..100_003)
        .map(|_| rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-20..=20)))
        .collect();
    let mut by_wave: Vec<(u32, u32, String)> = Vec::new();
    for d in library_devices() {
        let s = d.device.default_stream();
        let x_buf = upload(&d.device, &x);
        let mut total = upload(&d.device, &[f32::from_bits(POISON)]);
        d.library.sum(&s, &x_buf, &mut total, x.len()).unwrap();
        let bits = total.to_vec().unwrap()[0].to_bits();
        if let Some((_, first, gfx)) = by_wave.iter().find(|(w, _, _)| *w == d.wave) {
            assert_eq!(bits, *first, "{} and {gfx} (wave{})", d.gfx, d.wave);
        } else {
            by_wave.push((d.wave, bits, d.gfx.clone()));
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn short_buffers_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let mut small = poisoned_words(&d.device, 0);
    let error = d.library.fill(&s, &mut small, 1, 17).unwrap_err();
    assert_eq!(error.to_string(), "fill: out holds 16 elements, n = 17");
    let src = DeviceBuffer::from_slice(&d.device, &[1u32; 8]).unwrap();
    let error = d.library.copy(&s, &src, &mut small, 9).unwrap_err();
    assert_eq!(error.to_string(), "copy: src holds 8 elements, n = 9");
    let x = upload(&d.device, &[1.0f32; 4]);
    let mut total = upload::<f32>(&d.device, &[]);
    let error = d.library.sum(&s, &x, &mut total, 4).unwrap_err();
    assert_eq!(error.to_string(), "sum: total holds 0 elements, needs 1");
    let error = d.library.saxpy(&s, 1.0, &x, &mut total, 2).unwrap_err();
    assert_eq!(error.to_string(), "saxpy: y holds 0 elements, n = 2");
    d.dispatches(&[]);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_loads_from_the_build_and_refuses_other_bytes() {
    use iron::emulator::{Emulator, emulated_targets};
    use iron::library::Library;
    // `cargo xtask test` names the build's outputs in IRON_ARTIFACTS, where `load_built` looks.
    let path = Library::built_bundle_path().unwrap();
    assert!(path.ends_with("kernels.bundle"), "{}", path.display());
    let device = Emulator::new(emulated_targets()[0]).unwrap().device();
    let library = Library::load_built(&device).unwrap();
    assert!(library.device().is_same(&device));
    let mut out = DeviceBuffer::from_slice(&device, &[0u32; 5]).unwrap();
    library
        .fill(&device.default_stream(), &mut out, 7, 5)
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), [7; 5]);
    let error = Library::load(&device, b"not a code object").unwrap_err();
    assert_eq!(error.to_string(), r"not an ELF file (no \x7fELF magic)");
    let other = Emulator::new(emulated_targets()[1]).unwrap().device();
    let mut elsewhere = DeviceBuffer::from_slice(&other, &[0u32; 5]).unwrap();
    let error = library
        .fill(&device.default_stream(), &mut elsewhere, 7, 5)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "argument 1 of fill_u32 belongs to another device than the stream"
    );
}
