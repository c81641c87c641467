//! The host side of the walkthrough (`docs/walkthrough.md`): the embedded kernels, launched
//! through their typed declarations, and the CPU's answers to check them against.

use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use iron_intrinsics::half::f16;
use iron_intrinsics::launch::KernelDecl;
use walkthrough_kernels::normalize_rows::normalize_rows_f32;
use walkthrough_kernels::report::report_nonfinite as report_nonfinite_kernel;
use walkthrough_kernels::scale::{scale_f16, scale_f32};

/// The kernels, compiled by `build.rs` for every gfx; a device loads the code object of its own.
pub static KERNELS: &[u8] = iron::include_kernels!();

/// Any error of a launch: a device without a code object for it, a bad size, a fault.
pub type Error = Box<dyn std::error::Error>;

/// The kernels on `device`: the module holds the code object of the device's gfx.
pub fn load(device: &Device) -> Result<Module, Error> {
    Ok(device.load_module(KERNELS)?)
}

/// An element type of `scale`: its instance of the generic kernel.
pub trait Element: bytemuck::Pod {
    /// `scale_f32` or `scale_f16`.
    const SCALE: KernelDecl<fn(f32, *const Self, *mut Self, u32)>;
}

impl Element for f32 {
    const SCALE: KernelDecl<fn(f32, *const f32, *mut f32, u32)> = scale_f32;
}

impl Element for f16 {
    const SCALE: KernelDecl<fn(f32, *const f16, *mut f16, u32)> = scale_f16;
}

/// `a * x` on the module's device, with the instance of `scale` for `T`.
pub fn scale<T: Element>(module: &Module, a: f32, x: &[T]) -> Result<Vec<T>, Error> {
    let device = module.device();
    // The typed kernel: for f32 its signature is `fn(f32, *const f32, *mut f32, u32)`, so the
    // launch takes `(f32, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32)` and nothing else.
    let kernel = module.kernel(T::SCALE)?;
    let x_device = DeviceBuffer::from_slice(device, x)?;
    let mut y_device = DeviceBuffer::<T>::alloc(device, x.len())?;
    let n = u32::try_from(x.len())?;
    let config = LaunchConfig::for_elements(x.len(), 256);
    // SAFETY: scale touches elements 0..n of x and y, and both hold n.
    unsafe {
        device
            .default_stream()
            .launch(&kernel, config, (a, &x_device, &mut y_device, n))?
    };
    Ok(y_device.to_vec()?)
}

/// Every `cols`-long row of `x` scaled to unit length with `normalize_rows_f32`, one workgroup
/// of `block` work-items per row (`block` a multiple of the code object's wave size, which the
/// launch checks).
pub fn normalize_rows(
    module: &Module,
    x: &[f32],
    cols: usize,
    block: u32,
    eps: f32,
) -> Result<Vec<f32>, Error> {
    let device = module.device();
    let kernel = module.kernel(normalize_rows_f32)?;
    if cols == 0 || !x.len().is_multiple_of(cols) {
        return Err(format!(
            "normalize_rows: {} elements are not rows of {cols}",
            x.len()
        )
        .into());
    }
    let rows = u32::try_from(x.len() / cols)?;
    let x_device = DeviceBuffer::from_slice(device, x)?;
    let mut y_device = DeviceBuffer::<f32>::alloc(device, x.len())?;
    let config = LaunchConfig::new([rows, 1, 1], [block, 1, 1]);
    let cols = u32::try_from(cols)?;
    // SAFETY: workgroup r reads x and writes y in row r, inside rows * cols elements, which
    // both buffers hold.
    unsafe {
        device
            .default_stream()
            .launch(&kernel, config, (&x_device, &mut y_device, cols, eps))?
    };
    Ok(y_device.to_vec()?)
}

/// Launches `report_nonfinite` on `x`, which prints `x[i] = value` for each element that is
/// not finite: the HIP runtime prints it to stdout after the kernel, and so does the emulator
/// unless `Emulator::set_print_sink` sends it elsewhere.
pub fn report_nonfinite(module: &Module, x: &[f32]) -> Result<(), Error> {
    let device = module.device();
    let kernel = module.kernel(report_nonfinite_kernel)?;
    let x_device = DeviceBuffer::from_slice(device, x)?;
    let n = u32::try_from(x.len())?;
    let stream = device.default_stream();
    // SAFETY: the kernel reads elements 0..n of x, which holds n.
    unsafe {
        stream.launch(
            &kernel,
            LaunchConfig::for_elements(x.len(), 256),
            (&x_device, n),
        )?
    };
    stream.synchronize()?;
    Ok(())
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
