//! Quantized GEMV: weights quantized to MXFP4 on the host (`iron_quant`), then `y = W x` on the
//! device with the weights read as 4-bit codes (`Library::qgemv`), checked against the same
//! product of the decoded weights on the CPU.
//!
//! ```sh
//! cargo xtask build --gfx gfx950           # once: builds the kernel library
//! cargo run -p iron --example mxfp4_qgemv  # on the GPU if there is one, else the emulator
//! ```

mod common;

use std::process::ExitCode;

use common::{ExampleError, Report};
use iron::library::DeviceQuantizedTensor;
use iron::library::quant::MxFp4;
use iron::library::quant::host::QuantizedTensor;
use iron::{Device, DeviceBuffer};

fn main() -> ExitCode {
    common::main(run)
}

/// Quantizes a weight matrix, multiplies a few vectors by it on `device` and compares with the
/// CPU.
pub fn run(device: &Device) -> Result<Report, ExampleError> {
    // W is [m, k]; x holds `batch` vectors of k (at most 8), y gets `batch` vectors of m.
    let (m, k, batch) = (256, 2048, 4);
    let w = common::test_values(m * k, 5);
    let x = common::test_values(batch * k, 6);

    // MXFP4: blocks of 32 values along each row share one power-of-two scale (E8M0), each value
    // a 4-bit E2M1 code; k must be a multiple of 32.
    let w_quantized = QuantizedTensor::<MxFp4>::quantize(&w, m, k)?;

    let library = common::load_library(device)?;
    let w_device = DeviceQuantizedTensor::upload(device, &w_quantized)?;
    let x_device = DeviceBuffer::from_slice(device, &x)?;
    let mut y_device = DeviceBuffer::<f32>::alloc(device, batch * m)?;

    let stream = device.default_stream();
    let time = common::timed(&stream, || {
        // One wave per row of W, which is read once for the whole batch.
        library.qgemv(&stream, &w_device, &x_device, &mut y_device, batch)?;
        Ok(())
    })?;
    let y = y_device.to_vec()?;

    // The CPU multiplies the weights the device saw: the quantized ones, decoded back to f32.
    let w_decoded = w_quantized.dequantize();
    let mut want = Vec::with_capacity(batch * m);
    for vector in x.chunks(k) {
        for row in w_decoded.chunks(k) {
            let dot: f64 = row
                .iter()
                .zip(vector)
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            want.push(dot);
        }
    }
    Ok(Report {
        operation: "MXFP4 GEMV (qgemv_mxfp4_f32_f32)".into(),
        shape: format!("W [{m}, {k}] MXFP4, x [{batch}, {k}] f32"),
        device: common::describe(device),
        time,
        // Dot products of 2048 terms summed in f32: a few 1e-6 here.
        max_error: common::max_error(y.iter().map(|&v| f64::from(v)), &want),
        tolerance: 2e-5,
    })
}
