//! The elementwise methods of `iron::library` (add, mul, fma, scale, relu, silu, gelu) for f32,
//! f16 and bf16 on every emulated gfx, against the oracles' per-element bounds: seeded inputs
//! with NaN, infinities, subnormals, signed zeros and values near overflow; sizes around the
//! wave, the 16-byte chunk and the workgroup; poisoned outputs with a guard zone; and the
//! emulator's count of bytes written, which must be exactly the output's size.

mod common;

use common::{
    KERNARG_BYTES_PER_WAVE, LibraryDevice, SIZES, TestFloat, assert_floats_written, edgy,
    kernel_name, library_devices, poisoned_floats, rng, upload,
};
use iron::library::{bf16, f16};
use iron_tests::oracle::{Expected, elementwise};
use rand::Rng;
use rand::rngs::StdRng;

/// The operations under test.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Mul,
    Fma,
    Scale,
    Relu,
    Silu,
    Gelu,
}

impl Op {
    /// The kernel's base name.
    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Fma => "fma",
            Op::Scale => "scale",
            Op::Relu => "relu",
            Op::Silu => "silu",
            Op::Gelu => "gelu",
        }
    }

    /// Number of array inputs.
    fn inputs(self) -> usize {
        match self {
            Op::Add | Op::Mul => 2,
            Op::Fma => 3,
            Op::Scale | Op::Relu | Op::Silu | Op::Gelu => 1,
        }
    }

    /// The range of the uniform inputs (activations are interesting near 0).
    fn range(self) -> f32 {
        match self {
            Op::Silu | Op::Gelu => 12.0,
            _ => 200.0,
        }
    }

    /// What element `i` must be, from the inputs' exact values.
    fn expected(self, alpha: f64, x: &[f64], out: iron_tests::oracle::Format) -> Expected {
        match self {
            Op::Add => elementwise::add(x[0], x[1], out),
            Op::Mul => elementwise::mul(x[0], x[1], out),
            Op::Fma => elementwise::fma(x[0], x[1], x[2], out),
            Op::Scale => elementwise::scale(alpha, x[0], out),
            Op::Relu => elementwise::relu(x[0], out),
            Op::Silu => elementwise::silu(x[0], out),
            Op::Gelu => elementwise::gelu(x[0], out),
        }
    }
}

/// Runs `op` on `n` elements of `T` through the library and checks every element, the guard
/// and the bytes written.
fn check<T: TestFloat>(d: &LibraryDevice, rng: &mut StdRng, op: Op, n: usize) {
    let context = format!("{} {} n={n}", d.gfx, kernel_name::<T>(op.name()));
    let inputs: Vec<Vec<T>> = (0..op.inputs())
        .map(|_| edgy::<T>(rng, n, op.range()))
        .collect();
    let buffers: Vec<_> = inputs.iter().map(|x| upload(&d.device, x)).collect();
    let mut out = poisoned_floats::<T>(&d.device, n);
    let alpha: f32 = rng.random_range(-4.0..4.0);
    let (l, s) = (&d.library, &d.device.default_stream());
    match op {
        Op::Add => l.add(s, &buffers[0], &buffers[1], &mut out, n),
        Op::Mul => l.mul(s, &buffers[0], &buffers[1], &mut out, n),
        Op::Fma => l.fma(s, &buffers[0], &buffers[1], &buffers[2], &mut out, n),
        Op::Scale => l.scale(s, alpha, &buffers[0], &mut out, n),
        Op::Relu => l.relu(s, &buffers[0], &mut out, n),
        Op::Silu => l.silu(s, &buffers[0], &mut out, n),
        Op::Gelu => l.gelu(s, &buffers[0], &mut out, n),
    }
    .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = out.to_vec().unwrap();
    assert_floats_written(&got, n, &context);
    for i in 0..n {
        let x: Vec<f64> = inputs.iter().map(|input| input[i].value()).collect();
        let want = op.expected(f64::from(alpha), &x, T::FORMAT);
        let value = got[i].value();
        assert!(
            want.accepts(value),
            "{context} i={i}: inputs {x:?} alpha {alpha}: got {value:e} ({:#x}), want {want:?}",
            got[i].bits()
        );
    }
    if n == 0 {
        d.dispatches(&[]);
        return;
    }
    let traffic = d.last_dispatch(&kernel_name::<T>(op.name()));
    let bytes = (n * size_of::<T>()) as u64;
    assert_eq!(traffic.written, bytes, "{context}: bytes written");
    let inputs_bytes = bytes * op.inputs() as u64;
    assert!(
        traffic.read >= inputs_bytes
            && traffic.read <= inputs_bytes + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {} bytes read for {inputs_bytes} bytes of inputs",
        traffic.read
    );
}

/// Every size and float type of `op` on every emulated gfx.
fn check_everywhere(op: Op, seed: u64) {
    let mut rng = rng(seed);
    for d in library_devices() {
        d.clear_counters();
        for n in SIZES {
            check::<f32>(&d, &mut rng, op, n);
            check::<f16>(&d, &mut rng, op, n);
            check::<bf16>(&d, &mut rng, op, n);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn add() {
    check_everywhere(Op::Add, 11);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mul() {
    check_everywhere(Op::Mul, 12);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn fma() {
    check_everywhere(Op::Fma, 13);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scale() {
    check_everywhere(Op::Scale, 14);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn relu() {
    check_everywhere(Op::Relu, 15);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn silu() {
    check_everywhere(Op::Silu, 16);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn gelu() {
    check_everywhere(Op::Gelu, 17);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn short_buffers_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let a = upload(&d.device, &[1.0f32; 10]);
    let b = upload(&d.device, &[1.0f32; 12]);
    let mut out = upload(&d.device, &[0.0f32; 16]);
    let error = d.library.add(&s, &a, &b, &mut out, 12).unwrap_err();
    assert_eq!(error.to_string(), "add: a holds 10 elements, n = 12");
    let error = d.library.gelu(&s, &b, &mut out, 40).unwrap_err();
    assert_eq!(error.to_string(), "gelu: x holds 12 elements, n = 40");
    let mut small = upload(&d.device, &[0.0f32; 3]);
    let error = d.library.scale(&s, 2.0, &b, &mut small, 12).unwrap_err();
    assert_eq!(error.to_string(), "scale: out holds 3 elements, n = 12");
    d.dispatches(&[]);
}
