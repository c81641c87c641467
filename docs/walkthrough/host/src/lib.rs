//! The host side of the walkthrough (`docs/walkthrough.md`): loads the walkthrough's kernels,
//! launches them through their typed declarations and checks them against the CPU.
//!
//! ```sh
//! cargo xtask build --kernels docs/walkthrough --gfx gfx950 --out-dir target/iron/walkthrough
//! cargo run -p iron --example walkthrough
//! ```

#[allow(
    dead_code,
    reason = "the walkthrough loads its own kernels, not the library"
)]
mod common;

// The kernel crate is not a dependency of this one (it is not a workspace member), so the host
// reads its kernel files directly: on the host, `#[kernel]` turns each kernel into a typed
// declaration and drops its body.
#[path = "../../docs/walkthrough/src/normalize_rows.rs"]
mod normalize_rows;
#[path = "../../docs/walkthrough/src/scale.rs"]
mod scale;

use std::path::PathBuf;
use std::process::ExitCode;

use common::{ExampleError, Report};
use iron::library::Library;
use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use normalize_rows::normalize_rows_f32;
use scale::scale_f32;

fn main() -> ExitCode {
    common::main(run)
}

/// Where the walkthrough's bundle is: `walkthrough/kernels.bundle` in the directory the
/// library's own build is looked for ([`Library::built_artifacts_dir`]).
pub fn bundle_path() -> PathBuf {
    Library::built_artifacts_dir().join("walkthrough/kernels.bundle")
}

/// Loads the walkthrough's kernels on `device`, or says in one line how to build them.
pub fn load(device: &Device) -> Result<Module, ExampleError> {
    let path = bundle_path();
    let image = std::fs::read(&path).map_err(|e| {
        format!(
            "cannot read {} ({e}): build the walkthrough's kernels with `cargo xtask build \
             --kernels docs/walkthrough --gfx {} --out-dir {}`",
            path.display(),
            device.properties().target.processor,
            path.parent().unwrap_or(&path).display()
        )
    })?;
    Ok(device.load_module(&image)?)
}

/// `a * x` on the module's device, with `scale_f32`.
pub fn scale(module: &Module, a: f32, x: &[f32]) -> Result<Vec<f32>, ExampleError> {
    let device = module.device();
    // The typed kernel: its signature is `fn(f32, *const f32, *mut f32, u32)`, so the launch
    // takes `(f32, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32)` and nothing else.
    let kernel = module.kernel(scale_f32)?;
    let x_device = DeviceBuffer::from_slice(device, x)?;
    let mut y_device = DeviceBuffer::<f32>::alloc(device, x.len())?;
    let n = u32::try_from(x.len())?;
    let config = LaunchConfig::for_elements(x.len(), 256);
    // SAFETY: scale_f32 touches elements 0..n of x and y, and both hold n.
    unsafe {
        device
            .default_stream()
            .launch(&kernel, config, (a, &x_device, &mut y_device, n))?
    };
    Ok(y_device.to_vec()?)
}

/// Every `cols`-long row of `x` scaled to unit length with `normalize_rows_f32`, one workgroup
/// of `block` work-items per row (`block` a multiple of the code object's wave size).
pub fn normalize_rows(
    module: &Module,
    x: &[f32],
    cols: usize,
    block: u32,
    eps: f32,
) -> Result<Vec<f32>, ExampleError> {
    let device = module.device();
    let kernel = module.kernel(normalize_rows_f32)?;
    // The wave size the code object was built for: 64 on CDNA, 32 or 64 on RDNA.
    let wave = kernel.kernel().metadata().wavefront_size;
    if cols == 0 || !x.len().is_multiple_of(cols) || !block.is_multiple_of(wave) {
        return Err(format!(
            "normalize_rows: {} elements are not rows of {cols}, or a block of {block} is not \
             whole waves of {wave}",
            x.len()
        )
        .into());
    }
    let rows = u32::try_from(x.len() / cols)?;
    let x_device = DeviceBuffer::from_slice(device, x)?;
    let mut y_device = DeviceBuffer::<f32>::alloc(device, x.len())?;
    // One f32 of dynamic LDS per wave, for the waves' partial sums.
    let config = LaunchConfig::new([rows, 1, 1], [block, 1, 1]).with_dynamic_lds(4 * block / wave);
    let cols = u32::try_from(cols)?;
    // SAFETY: workgroup r reads x and writes y in row r, inside rows * cols elements, which
    // both buffers hold; the LDS holds one f32 per wave of the whole-wave workgroup.
    unsafe {
        device
            .default_stream()
            .launch(&kernel, config, (&x_device, &mut y_device, cols, eps))?
    };
    Ok(y_device.to_vec()?)
}

/// The CPU's answer for [`normalize_rows`], in f64.
pub fn normalize_rows_oracle(x: &[f32], cols: usize, eps: f32) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let squares: f64 = row.iter().map(|&v| f64::from(v).powi(2)).sum();
            let scale = 1.0 / (f64::from(eps) + squares).sqrt();
            row.iter().map(move |&v| f64::from(v) * scale)
        })
        .collect()
}

/// Runs both walkthrough kernels on `device` and compares with the CPU.
pub fn run(device: &Device) -> Result<Report, ExampleError> {
    let module = load(device)?;
    let (rows, cols, eps) = (64, 1000, 1e-12);
    let x = common::test_values(rows * cols, 9);

    let halved = scale(&module, 0.5, &x)?;
    let exact: Vec<f64> = x.iter().map(|&v| f64::from(v) * 0.5).collect();
    let scale_error = common::max_error(halved.iter().map(|&v| f64::from(v)), &exact);

    let stream = device.default_stream();
    let mut y = Vec::new();
    let time = common::timed(&stream, || {
        y = normalize_rows(&module, &x, cols, 256, eps)?;
        Ok(())
    })?;
    let want = normalize_rows_oracle(&x, cols, eps);
    let normalize_error = common::max_error(y.iter().map(|&v| f64::from(v)), &want);
    Ok(Report {
        operation: "walkthrough (scale_f32, normalize_rows_f32)".into(),
        shape: format!("[{rows}, {cols}] f32"),
        device: common::describe(device),
        time,
        // Halving is exact; a row's norm is an f32 sum of 1000 squares, then a few roundings
        // (about 1e-8 here).
        max_error: scale_error.max(normalize_error),
        tolerance: 1e-6,
    })
}
