//! Softmax of `iron::library` for f32, f16 and bf16 on every emulated gfx, against the oracle's
//! per-element bounds: rows of every shape class (odd widths, 16-byte chunks, rows held in
//! registers and rows streamed twice), rows whose exponentials would overflow without the
//! maximum's shift, rows holding `-inf` (which gives 0), a NaN or `+inf` (NaN everywhere) or
//! only `-inf` (NaN everywhere); poisoned outputs with a guard zone; and the emulator's counts:
//! a row that fits is read once, a longer one twice. Rows of `k * PACK * block` elements (whole
//! waves, `k` in 1, 2, 4) run on the held-row instances `softmax_<t>_c<k>`, the others on the
//! general kernel; every device runs each of them.

mod common;

use common::{
    HELD_ROW_SHAPES, HeldRows, KERNARG_BYTES_PER_WAVE, LibraryDevice, RESIDENT_COLS, ROW_SHAPES,
    TestFloat, assert_floats_written, library_devices, poisoned_floats, rng, uniform, upload,
};
use iron::library::{bf16, f16};
use iron_tests::oracle::softmax;
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeSet;

/// Rows by row index: uniform in [-10, 10]; in [60, 100] (e^x overflows f32 without the
/// shift); with `-inf` mixed in; with one NaN; with one `+inf`; only `-inf`.
fn softmax_rows<T: TestFloat>(rng: &mut StdRng, rows: usize, cols: usize) -> Vec<T> {
    let mut x = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let mut row: Vec<T> = match r % 6 {
            1 => (0..cols)
                .map(|_| T::from_f32(rng.random_range(60.0f32..100.0)))
                .collect(),
            5 => vec![T::from_f32(f32::NEG_INFINITY); cols],
            _ => uniform(rng, cols, 10.0),
        };
        match r % 6 {
            2 => {
                for v in row.iter_mut().step_by(3) {
                    *v = T::from_f32(f32::NEG_INFINITY);
                }
            }
            3 | 4 if cols > 0 => {
                let special = if r % 6 == 3 { f32::NAN } else { f32::INFINITY };
                row[rng.random_range(0..cols)] = T::from_f32(special);
            }
            _ => {}
        }
        x.extend(row);
    }
    x
}

/// The held-row instances `softmax_<t>_c<k>`.
const HELD: HeldRows = HeldRows {
    base: "softmax",
    chunks: &[1, 2, 4],
    one_wave: &[],
    max_block: 1024,
};

/// Checks one shape; returns the kernel that ran.
fn check<T: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    (rows, cols): (usize, usize),
) -> String {
    let (kernel, held) = HELD.expected_kernel::<T>(cols, d.wave);
    let context = format!("{} {kernel} {rows}x{cols}", d.gfx);
    let x = softmax_rows::<T>(rng, rows, cols);
    let mut y = poisoned_floats::<T>(&d.device, rows * cols);
    d.library
        .softmax(
            &d.device.default_stream(),
            &upload(&d.device, &x),
            &mut y,
            rows,
            cols,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = y.to_vec().unwrap();
    assert_floats_written(&got, rows * cols, &context);
    for r in 0..rows {
        let row: Vec<f64> = x[r * cols..(r + 1) * cols]
            .iter()
            .map(|v| v.value())
            .collect();
        for (j, want) in softmax::softmax(&row, T::FORMAT, d.wave).iter().enumerate() {
            let value = got[r * cols + j].value();
            assert!(
                want.accepts(value),
                "{context} row {r} col {j}: x = {}, got {value:e}, want {want:?}",
                row[j]
            );
        }
    }
    if rows * cols == 0 {
        d.dispatches(&[]);
        return kernel;
    }
    let traffic = d.last_dispatch(&kernel);
    let bytes = (rows * cols * size_of::<T>()) as u64;
    assert_eq!(traffic.written, bytes, "{context}: bytes written");
    let passes = if held || cols <= RESIDENT_COLS { 1 } else { 2 };
    let least = bytes * passes;
    assert!(
        traffic.read >= least && traffic.read <= least + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read, {passes} pass(es) over x make {least}",
        traffic.read
    );
    kernel
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn softmax() {
    let mut rng = rng(51);
    for d in library_devices() {
        d.clear_counters();
        let mut ran = [(); 3].map(|_| BTreeSet::new());
        for shape in ROW_SHAPES.into_iter().chain(HELD_ROW_SHAPES) {
            ran[0].insert(check::<f32>(&d, &mut rng, shape));
            ran[1].insert(check::<f16>(&d, &mut rng, shape));
            ran[2].insert(check::<bf16>(&d, &mut rng, shape));
        }
        HELD.assert_all_ran::<f32>(&d.gfx, &ran[0]);
        HELD.assert_all_ran::<f16>(&d.gfx, &ran[1]);
        HELD.assert_all_ran::<bf16>(&d.gfx, &ran[2]);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_that_do_not_fit_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let x = upload(&d.device, &[0.5f32; 60]);
    let mut y = upload(&d.device, &[0.0f32; 64]);
    let error = d.library.softmax(&s, &x, &mut y, 8, 8).unwrap_err();
    assert_eq!(
        error.to_string(),
        "softmax: x holds 60 elements, rows * cols = 64"
    );
    let error = d.library.softmax(&s, &x, &mut y, 5, 13).unwrap_err();
    assert_eq!(
        error.to_string(),
        "softmax: x holds 60 elements, rows * cols = 65"
    );
    d.library.softmax(&s, &x, &mut y, 6, 10).unwrap();
    let got = y.to_vec().unwrap();
    assert!(
        got[..60].iter().all(|&v| (v - 0.1).abs() < 1e-7),
        "uniform rows: {got:?}"
    );
    assert!(
        got[60..].iter().all(|&v| v == 0.0),
        "past the shape: untouched"
    );
    d.dispatches(&["softmax_f32"]);
}
