//! RMSNorm of a batch of rows through the library (`Library::rmsnorm`), which picks the launch
//! geometry and checks every buffer against the shape, then the same norm in f64 on the CPU.
//!
//! ```sh
//! cargo xtask build --gfx gfx950       # once: builds the kernel library
//! cargo run -p iron --example rmsnorm  # on the GPU if there is one, else the emulator
//! ```

mod common;

use std::process::ExitCode;

use common::{ExampleError, Report};
use iron::{Device, DeviceBuffer};

fn main() -> ExitCode {
    common::main(run)
}

/// Normalizes `rows` rows of `cols` on `device` and compares with the CPU.
pub fn run(device: &Device) -> Result<Report, ExampleError> {
    let (rows, cols) = (32, 4096);
    let eps = 1e-6f32;
    let x = common::test_values(rows * cols, 3);
    let weight: Vec<f32> = common::test_values(cols, 4)
        .iter()
        .map(|w| 1.0 + w)
        .collect();

    let library = common::load_library(device)?;
    let x_device = DeviceBuffer::from_slice(device, &x)?;
    let weight_device = DeviceBuffer::from_slice(device, &weight)?;
    let mut y_device = DeviceBuffer::<f32>::alloc(device, rows * cols)?;

    let stream = device.default_stream();
    let time = common::timed(&stream, || {
        // One workgroup per row; a wrong shape or a short buffer is an error, not a fault.
        library.rmsnorm(
            &stream,
            &x_device,
            &weight_device,
            eps,
            &mut y_device,
            rows,
            cols,
        )?;
        Ok(())
    })?;
    let y = y_device.to_vec()?;

    // The CPU's answer, in f64: y = x / sqrt(mean(x^2) + eps) * weight, row by row.
    let mut want = Vec::with_capacity(rows * cols);
    for row in x.chunks(cols) {
        let mean_square = row.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / cols as f64;
        let inverse_rms = 1.0 / (mean_square + f64::from(eps)).sqrt();
        want.extend(
            row.iter()
                .zip(&weight)
                .map(|(&v, &w)| f64::from(v) * inverse_rms * f64::from(w)),
        );
    }
    Ok(Report {
        operation: "RMSNorm (rmsnorm_f32)".into(),
        shape: format!("[{rows}, {cols}] f32"),
        device: common::describe(device),
        time,
        // The sum of 4096 squares in f32, then a few roundings: about 1e-7 here.
        max_error: common::max_error(y.iter().map(|&v| f64::from(v)), &want),
        tolerance: 2e-6,
    })
}
