//! GEMM on the matrix cores: `C = A B` with f16 operands and f32 results
//! (`Library::gemm`), checked against the same product in f64 on the CPU. On gfx950 it runs on
//! the `v_mfma_f32_16x16x32_f16` matrix instruction; `iron::library`'s GEMM documentation lists
//! the path of every gfx.
//!
//! ```sh
//! cargo xtask build --gfx gfx950    # once: builds the kernel library
//! cargo run -p iron --example gemm  # on the GPU if there is one, else the emulator
//! ```

mod common;

use std::process::ExitCode;

use common::{ExampleError, Report};
use iron::library::{Epilogue, GemmShape, Layout, f16};
use iron::{Device, DeviceBuffer};

fn main() -> ExitCode {
    common::main(run)
}

/// Multiplies two f16 matrices on `device` and compares with the CPU.
pub fn run(device: &Device) -> Result<Report, ExampleError> {
    let shape = GemmShape {
        m: 256,
        n: 192,
        k: 512,
    };
    let GemmShape { m, n, k } = shape;
    // A is [m, k] row-major; B is [k, n] stored column-major (each column of B contiguous, as a
    // weight matrix kept as [n, k] rows is).
    let a: Vec<f16> = common::test_values(m * k, 7)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let b: Vec<f16> = common::test_values(k * n, 8)
        .into_iter()
        .map(f16::from_f32)
        .collect();

    let library = common::load_library(device)?;
    let a_device = DeviceBuffer::from_slice(device, &a)?;
    let b_device = DeviceBuffer::from_slice(device, &b)?;
    let mut c_device = DeviceBuffer::<f32>::alloc(device, m * n)?;

    let stream = device.default_stream();
    let time = common::timed(&stream, || {
        // Epilogue::default() is C = 1 * A B + 0 * C with no bias; C is row-major [m, n].
        let a = (&a_device, Layout::RowMajor);
        let b = (&b_device, Layout::ColMajor);
        library.gemm(&stream, a, b, &mut c_device, shape, Epilogue::default())?;
        Ok(())
    })?;
    let c = c_device.to_vec()?;

    // C[i][j] = sum over p of A[i][p] * B[p][j], with B[p][j] at b[j * k + p] (column-major).
    let mut want = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let row = &a[i * k..(i + 1) * k];
            let column = &b[j * k..(j + 1) * k];
            want[i * n + j] = row
                .iter()
                .zip(column)
                .map(|(x, y)| x.to_f64() * y.to_f64())
                .sum();
        }
    }
    Ok(Report {
        operation: "GEMM (gemm_f16_f32_rc)".into(),
        shape: format!("m = {m}, n = {n}, k = {k}, A row-major, B column-major"),
        device: common::describe(device),
        time,
        // Products of f16 values are exact in f32; only the f32 sums of 512 terms round (about
        // 1e-6 here).
        max_error: common::max_error(c.iter().map(|&v| f64::from(v)), &want),
        tolerance: 2e-5,
    })
}
