//! Vector add: `c = a + b` for a million f32, launched directly from the kernel's typed
//! declaration, then checked against the same sum on the CPU.
//!
//! ```sh
//! cargo xtask build --gfx gfx950          # once: builds the kernel library
//! cargo run -p iron --example vector_add  # on the GPU if there is one, else the emulator
//! ```

mod common;

use std::process::ExitCode;

use common::{ExampleError, Report};
use iron::{Device, DeviceBuffer, LaunchConfig};
use iron_kernels::elementwise::add_f32;
use iron_kernels::flat;

fn main() -> ExitCode {
    common::main(run)
}

/// Adds two vectors on `device` and compares with the CPU.
pub fn run(device: &Device) -> Result<Report, ExampleError> {
    let n: usize = 1 << 20;
    let a = common::test_values(n, 1);
    let b = common::test_values(n, 2);

    // The library's code object for this device's gfx, picked from the build's bundle.
    let library = common::load_library(device)?;
    // `add_f32` is the kernel's typed declaration (`#[kernel]` makes it one on the host):
    // resolving it checks its arguments and launch bounds against the code object, once.
    let add = library.module().kernel(add_f32)?;

    let a_device = DeviceBuffer::from_slice(device, &a)?;
    let b_device = DeviceBuffer::from_slice(device, &b)?;
    let mut c_device = DeviceBuffer::<f32>::zeros(device, n)?;

    // The kernel is compiled for workgroups of `flat::BLOCK` (256) work-items, each moving
    // `flat::CHUNKS` 16-byte chunks of 4 f32 with no loop: the grid must cover the array, and
    // workgroups past its end do nothing.
    let per_workgroup = (flat::BLOCK * flat::CHUNKS * 4) as usize;
    let workgroups = n.div_ceil(per_workgroup).max(1) as u32;
    let config = LaunchConfig::new([workgroups, 1, 1], [flat::BLOCK, 1, 1]);
    let stream = device.default_stream();
    let time = common::timed(&stream, || {
        // SAFETY: add_f32 reads a[0..n], b[0..n] and writes c[0..n]; each buffer holds n.
        unsafe {
            stream.launch(
                &add,
                config,
                (&a_device, &b_device, &mut c_device, n as u32),
            )?
        };
        Ok(())
    })?;

    let c = c_device.to_vec()?;
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| f64::from(x + y)).collect();
    Ok(Report {
        operation: "vector add (add_f32)".into(),
        shape: format!("n = {n}"),
        device: common::describe(device),
        time,
        // An f32 sum is rounded once, the same way on both sides: the results must be equal.
        max_error: common::max_error(c.iter().map(|&v| f64::from(v)), &want),
        tolerance: 0.0,
    })
}
