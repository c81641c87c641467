//! RMSNorm and LayerNorm of `iron::library` for f32, f16 and bf16 on every emulated gfx, against
//! the oracles' per-element bounds: rows of every shape class (odd widths, 16-byte chunks, rows
//! held in registers and rows too long for them), rows with a large mean (LayerNorm's two-pass
//! variance), rows holding zeros, subnormals, a NaN or an infinity; poisoned outputs with a guard
//! zone; and the emulator's counts: a row that fits is read once, a longer one once per pass.
//! Rows of `k * PACK * block` elements (whole waves of at most 512, `k` in 1, 2, 4, 8, 16) run on
//! the held-row instances `<norm>_<t>_c<k>`, or `<norm>_<t>_c<k>w1` when the block is one wave (`k`
//! in 4, 8, 16), the others on the general kernel: [`HELD_ROW_SHAPES`] picks each instance on
//! each wave size, and every device runs them all.

mod common;

use common::{
    HELD_ROW_SHAPES, HeldRows, KERNARG_BYTES_PER_WAVE, LibraryDevice, RESIDENT_COLS, ROW_SHAPES,
    TestFloat, assert_floats_written, library_devices, poisoned_floats, rng, uniform, upload,
};
use iron::library::{bf16, f16};
use iron_tests::oracle::norm;
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeSet;

/// The two norms.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Norm {
    Rms,
    Layer,
}

impl Norm {
    fn name(self) -> &'static str {
        match self {
            Norm::Rms => "rmsnorm",
            Norm::Layer => "layernorm",
        }
    }

    /// The held-row instances.
    fn held(self) -> HeldRows {
        HeldRows {
            base: self.name(),
            chunks: &[1, 2, 4, 8, 16],
            one_wave: &[4, 8, 16],
            max_block: 512,
        }
    }

    /// Passes over a row too long for the registers.
    fn streamed_passes(self) -> u64 {
        match self {
            Norm::Rms => 2,
            Norm::Layer => 3,
        }
    }
}

/// Rows by row index: uniform; shifted by 1000 (a large mean); zeros and subnormals mixed in;
/// one NaN; one infinity.
fn norm_rows<T: TestFloat>(rng: &mut StdRng, rows: usize, cols: usize) -> Vec<T> {
    let tiny = T::FORMAT.min_subnormal() as f32;
    let mut x = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let mut row: Vec<T> = match r % 5 {
            1 => (0..cols)
                .map(|_| T::from_f32(1000.0 + rng.random_range(-4.0f32..4.0)))
                .collect(),
            2 => (0..cols)
                .map(|i| match i % 3 {
                    0 => T::from_f32(0.0),
                    1 => T::from_f32(-7.0 * tiny),
                    _ => T::from_f32(rng.random_range(-3.0f32..3.0)),
                })
                .collect(),
            _ => uniform(rng, cols, 10.0),
        };
        if cols > 0 && r % 5 >= 3 {
            let special = if r % 5 == 3 { f32::NAN } else { f32::INFINITY };
            row[rng.random_range(0..cols)] = T::from_f32(special);
        }
        x.extend(row);
    }
    x
}

fn check<T: TestFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    kind: Norm,
    (rows, cols): (usize, usize),
) -> String {
    let (kernel, held) = kind.held().expected_kernel::<T>(cols, d.wave);
    let context = format!("{} {kernel} {rows}x{cols}", d.gfx);
    let eps = 1e-5f32;
    let x = norm_rows::<T>(rng, rows, cols);
    let weight = uniform::<T>(rng, cols, 2.0);
    let bias = uniform::<T>(rng, cols, 1.0);
    let (x_buf, w_buf, b_buf) = (
        upload(&d.device, &x),
        upload(&d.device, &weight),
        upload(&d.device, &bias),
    );
    let mut y = poisoned_floats::<T>(&d.device, rows * cols);
    let s = d.device.default_stream();
    match kind {
        Norm::Rms => d
            .library
            .rmsnorm(&s, &x_buf, &w_buf, eps, &mut y, rows, cols),
        Norm::Layer => d
            .library
            .layernorm(&s, &x_buf, &w_buf, &b_buf, eps, &mut y, rows, cols),
    }
    .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = y.to_vec().unwrap();
    assert_floats_written(&got, rows * cols, &context);
    let values = |v: &[T]| -> Vec<f64> { v.iter().map(|e| e.value()).collect() };
    let (w, b) = (values(&weight), values(&bias));
    for r in 0..rows {
        let row = values(&x[r * cols..(r + 1) * cols]);
        let want = match kind {
            Norm::Rms => norm::rmsnorm(&row, &w, f64::from(eps), T::FORMAT, d.wave),
            Norm::Layer => norm::layernorm(&row, &w, &b, f64::from(eps), T::FORMAT, d.wave),
        };
        for (j, want) in want.iter().enumerate() {
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
    let row_bytes = (rows * cols * size_of::<T>()) as u64;
    assert_eq!(traffic.written, row_bytes, "{context}: bytes written");
    let passes = if held || cols <= RESIDENT_COLS {
        1
    } else {
        kind.streamed_passes()
    };
    let operands = if kind == Norm::Rms { 1 } else { 2 };
    let least = row_bytes * (passes + operands);
    assert!(
        traffic.read >= least && traffic.read <= least + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read, {passes} pass(es) over x and one over the row operands make {least}",
        traffic.read
    );
    kernel
}

fn everywhere(kind: Norm, seed: u64) {
    let mut rng = rng(seed);
    for d in library_devices() {
        d.clear_counters();
        let mut ran = [(); 3].map(|_| BTreeSet::new());
        for shape in ROW_SHAPES.into_iter().chain(HELD_ROW_SHAPES) {
            ran[0].insert(check::<f32>(&d, &mut rng, kind, shape));
            ran[1].insert(check::<f16>(&d, &mut rng, kind, shape));
            ran[2].insert(check::<bf16>(&d, &mut rng, kind, shape));
        }
        kind.held().assert_all_ran::<f32>(&d.gfx, &ran[0]);
        kind.held().assert_all_ran::<f16>(&d.gfx, &ran[1]);
        kind.held().assert_all_ran::<bf16>(&d.gfx, &ran[2]);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn rmsnorm() {
    everywhere(Norm::Rms, 41);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn layernorm() {
    everywhere(Norm::Layer, 42);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_that_do_not_fit_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let x = upload(&d.device, &[bf16::ONE; 100]);
    let w = upload(&d.device, &[bf16::ONE; 32]);
    let mut y = upload(&d.device, &[bf16::ZERO; 128]);
    let error = d
        .library
        .rmsnorm(&s, &x, &w, 1e-6, &mut y, 4, 32)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rmsnorm: x holds 100 elements, rows * cols = 128"
    );
    let error = d
        .library
        .layernorm(&s, &x, &w, &w, 1e-6, &mut y, 2, 50)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "layernorm: weight holds 32 elements, cols = 50"
    );
    let mut short = upload(&d.device, &[bf16::ZERO; 10]);
    let error = d
        .library
        .rmsnorm(&s, &x, &w, 1e-6, &mut short, 1, 32)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rmsnorm: y holds 10 elements, rows * cols = 32"
    );
    let f16_x = upload(&d.device, &[f16::ONE; 4]);
    let mut f16_y = upload(&d.device, &[f16::ZERO; 4]);
    d.library
        .rmsnorm(
            &s,
            &f16_x,
            &upload(&d.device, &[f16::ONE; 2]),
            0.0,
            &mut f16_y,
            2,
            2,
        )
        .unwrap();
    assert_eq!(
        f16_y.to_vec().unwrap(),
        [f16::ONE; 4],
        "a constant row normalizes to the weight"
    );
    d.dispatches(&["rmsnorm_f16"]);
}
