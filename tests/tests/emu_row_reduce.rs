//! The row reductions of `iron::library` (`row_sum`, `row_max`, `row_argmax`) for f32, f16 and
//! bf16 on every emulated gfx, against the oracles: empty, tiny, odd-width (single-element
//! accesses), 16-byte-chunked and long rows; rows holding NaN, infinities, signed zeros and ties;
//! poisoned outputs with a guard zone; and the emulator's counts (the input read once, one value
//! written per row). Rows of `k * PACK * block` elements (whole waves, `k` in 1, 2, 4, 8, 16 for
//! sum and max and 32 for sum) run on the held-row instances `row_<op>_<t>_c<k>`, the sum's on
//! `row_sum_<t>_c<k>w1` when the block is one wave (`k` in 8, 16), the others on the general
//! kernel; every device runs each of them.

mod common;

use common::{
    GUARD, HELD_ROW_SHAPES, HeldRows, KERNARG_BYTES_PER_WAVE, LibraryDevice, ROW_SHAPES, TestFloat,
    assert_floats_written, assert_written, edgy, library_devices, rng, uniform, upload,
};
use iron::DeviceBuffer;
use iron::library::{bf16, f16};
use iron_tests::oracle::row_reduce;
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeSet;

/// Rows for `row_sum`, by row index: finite values; with a NaN; with `+inf`; with both
/// infinities.
fn sum_rows<T: TestFloat>(rng: &mut StdRng, rows: usize, cols: usize) -> Vec<T> {
    let mut x = uniform::<T>(rng, rows * cols, 100.0);
    for (r, row) in x.chunks_mut(cols.max(1)).enumerate().take(rows) {
        let mut put = |value: f32, rng: &mut StdRng| {
            if cols > 0 {
                row[rng.random_range(0..cols)] = T::from_f32(value);
            }
        };
        match r % 4 {
            1 => put(f32::NAN, rng),
            2 => put(f32::INFINITY, rng),
            3 => {
                put(f32::INFINITY, rng);
                put(f32::NEG_INFINITY, rng);
            }
            _ => {}
        }
    }
    x
}

/// Rows for `row_max` and `row_argmax`, by row index: small integers (many ties); edge values
/// (NaN, infinities, signed zeros, subnormals); only `-inf`; only signed zeros.
fn max_rows<T: TestFloat>(rng: &mut StdRng, rows: usize, cols: usize) -> Vec<T> {
    let mut x = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row: Vec<T> = match r % 4 {
            0 => (0..cols)
                .map(|_| T::from_f32(rng.random_range(-20i32..=20) as f32))
                .collect(),
            1 => edgy(rng, cols, 50.0),
            2 => vec![T::from_f32(f32::NEG_INFINITY); cols],
            _ => (0..cols)
                .map(|_| T::from_f32(if rng.random() { 0.0 } else { -0.0 }))
                .collect(),
        };
        x.extend(row);
    }
    x
}

/// Checks the traffic of the last dispatch of a row reduction.
fn check_traffic<T>(d: &LibraryDevice, kernel: &str, rows: usize, cols: usize, context: &str) {
    if rows == 0 {
        d.dispatches(&[]);
        return;
    }
    let traffic = d.last_dispatch(kernel);
    assert_eq!(traffic.written, 4 * rows as u64, "{context}: bytes written");
    let input = (rows * cols * size_of::<T>()) as u64;
    assert!(
        traffic.read >= input && traffic.read <= input + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read for {input} bytes of input",
        traffic.read
    );
}

/// The exact values of row `r`.
fn row_values<T: TestFloat>(x: &[T], r: usize, cols: usize) -> Vec<f64> {
    x[r * cols..(r + 1) * cols]
        .iter()
        .map(|v| v.value())
        .collect()
}

fn check_sum<T: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    rows: usize,
    cols: usize,
) -> String {
    let (kernel, _) = held("row_sum").expected_kernel::<T>(cols, d.wave);
    let context = format!("{} {kernel} {rows}x{cols}", d.gfx);
    let x = sum_rows::<T>(rng, rows, cols);
    let mut out = common::poisoned_floats::<f32>(&d.device, rows);
    d.library
        .row_sum(
            &d.device.default_stream(),
            &upload(&d.device, &x),
            &mut out,
            rows,
            cols,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = out.to_vec().unwrap();
    assert_floats_written(&got, rows, &context);
    for (r, &g) in got[..rows].iter().enumerate() {
        let want = row_reduce::sum(&row_values(&x, r, cols), d.wave);
        assert!(
            want.accepts(f64::from(g)),
            "{context} row {r}: got {g}, want {want:?}"
        );
    }
    check_traffic::<T>(d, &kernel, rows, cols, &context);
    kernel
}

fn check_max<T: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    rows: usize,
    cols: usize,
) -> String {
    let (kernel, _) = held("row_max").expected_kernel::<T>(cols, d.wave);
    let context = format!("{} {kernel} {rows}x{cols}", d.gfx);
    let x = max_rows::<T>(rng, rows, cols);
    let mut out = common::poisoned_floats::<f32>(&d.device, rows);
    d.library
        .row_max(
            &d.device.default_stream(),
            &upload(&d.device, &x),
            &mut out,
            rows,
            cols,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = out.to_vec().unwrap();
    assert_floats_written(&got, rows, &context);
    for (r, &g) in got[..rows].iter().enumerate() {
        let want = row_reduce::max(&row_values(&x, r, cols));
        assert!(
            want.accepts(f64::from(g)),
            "{context} row {r}: got {g}, want {want:?}"
        );
    }
    check_traffic::<T>(d, &kernel, rows, cols, &context);
    kernel
}

fn check_argmax<T: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    rows: usize,
    cols: usize,
) -> String {
    const POISON: u32 = 0xDEAD_BEEF;
    let (kernel, _) = held("row_argmax").expected_kernel::<T>(cols, d.wave);
    let context = format!("{} {kernel} {rows}x{cols}", d.gfx);
    let x = max_rows::<T>(rng, rows, cols);
    let mut out = DeviceBuffer::from_slice(&d.device, &vec![POISON; rows + GUARD]).unwrap();
    d.library
        .row_argmax(
            &d.device.default_stream(),
            &upload(&d.device, &x),
            &mut out,
            rows,
            cols,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = out.to_vec().unwrap();
    assert_written(&got, rows, &POISON, &context);
    for (r, &g) in got[..rows].iter().enumerate() {
        assert_eq!(
            g,
            row_reduce::argmax(&row_values(&x, r, cols)),
            "{context} row {r}"
        );
    }
    check_traffic::<T>(d, &kernel, rows, cols, &context);
    kernel
}

/// The held-row instances of the reduction `base` (`row_sum`, `row_max`, `row_argmax`).
fn held(base: &'static str) -> HeldRows {
    HeldRows {
        base,
        chunks: match base {
            "row_argmax" => &[1, 2, 4, 8],
            "row_max" => &[1, 2, 4, 8, 16],
            _ => &[1, 2, 4, 8, 16, 32],
        },
        one_wave: if base == "row_sum" { &[8, 16] } else { &[] },
        max_block: 512,
    }
}

/// `check` for every row shape and float type on every emulated gfx, each device running every
/// kernel of `base`.
macro_rules! everywhere {
    ($check:ident, $base:expr, $seed:expr) => {{
        let mut rng = rng($seed);
        for d in library_devices() {
            d.clear_counters();
            let mut ran = [(); 3].map(|_| BTreeSet::new());
            for (rows, cols) in ROW_SHAPES.into_iter().chain(HELD_ROW_SHAPES) {
                ran[0].insert($check::<f32>(&d, &mut rng, rows, cols));
                ran[1].insert($check::<f16>(&d, &mut rng, rows, cols));
                ran[2].insert($check::<bf16>(&d, &mut rng, rows, cols));
            }
            held($base).assert_all_ran::<f32>(&d.gfx, &ran[0]);
            held($base).assert_all_ran::<f16>(&d.gfx, &ran[1]);
            held($base).assert_all_ran::<bf16>(&d.gfx, &ran[2]);
        }
    }};
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn row_sum() {
    everywhere!(check_sum, "row_sum", 31);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn row_max() {
    everywhere!(check_max, "row_max", 32);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn row_argmax() {
    everywhere!(check_argmax, "row_argmax", 33);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_that_do_not_fit_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let x = upload(&d.device, &[1.0f32; 100]);
    let mut out = upload(&d.device, &[0.0f32; 4]);
    let error = d.library.row_sum(&s, &x, &mut out, 4, 32).unwrap_err();
    assert_eq!(
        error.to_string(),
        "row_sum: x holds 100 elements, rows * cols = 128"
    );
    let error = d.library.row_max(&s, &x, &mut out, 5, 20).unwrap_err();
    assert_eq!(error.to_string(), "row_max: out holds 4 elements, rows = 5");
    let mut index = DeviceBuffer::from_slice(&d.device, &[0u32; 4]).unwrap();
    let error = d
        .library
        .row_argmax(&s, &x, &mut index, usize::MAX, 2)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("row_argmax: rows * cols = {} * 2 overflows", usize::MAX)
    );
    let wide = usize::MAX / 2;
    let empty = upload::<f32>(&d.device, &[]);
    let error = d
        .library
        .row_sum(&s, &empty, &mut out, 0, wide)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("row_sum: cols = {wide} exceeds the kernel's limit of 4294967295")
    );
    d.dispatches(&[]);
}
