//! Softmax of `iron::library` for f32, f16 and bf16 on every emulated gfx, against the oracle's
//! per-element bounds: rows of every shape class (odd widths, 16-byte chunks, rows held in
//! registers and rows streamed twice), rows whose exponentials would overflow without the
//! maximum's shift, rows holding `-inf` (which gives 0), a NaN or `+inf` (NaN everywhere) or
//! only `-inf` (NaN everywhere); poisoned outputs with a guard zone; and the emulator's counts:
//! a row that fits is read once, a longer one twice.

mod common;

use common::{
    KERNARG_BYTES_PER_WAVE, LibraryDevice, RESIDENT_COLS, ROW_SHAPES, TestFloat,
    assert_floats_written, kernel_name, library_devices, poisoned_floats, rng, uniform, upload,
};
use iron::library::{bf16, f16};
use iron_tests::oracle::softmax;
use rand::Rng;
use rand::rngs::StdRng;

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

fn check<T: TestFloat>(d: &LibraryDevice, rng: &mut StdRng, (rows, cols): (usize, usize)) {
    let kernel = kernel_name::<T>("softmax");
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
        return;
    }
    let traffic = d.last_dispatch(&kernel);
    let bytes = (rows * cols * size_of::<T>()) as u64;
    assert_eq!(traffic.written, bytes, "{context}: bytes written");
    let passes = if cols <= RESIDENT_COLS { 1 } else { 2 };
    let least = bytes * passes;
    assert!(
        traffic.read >= least && traffic.read <= least + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read, {passes} pass(es) over x make {least}",
        traffic.read
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn softmax() {
    let mut rng = rng(51);
    for d in library_devices() {
        d.clear_counters();
        for shape in ROW_SHAPES {
            check::<f32>(&d, &mut rng, shape);
            check::<f16>(&d, &mut rng, shape);
            check::<bf16>(&d, &mut rng, shape);
        }
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
