//! The host side: the embedded kernels and `saxpy` on any device.

use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use template_kernels::saxpy_f32;

/// The kernels, compiled for every gfx of `build.rs`; a device loads the code object of its own.
pub static KERNELS: &[u8] = iron::include_kernels!();

/// Any error of a launch: a device without a code object for it, a bad size, a fault.
pub type Error = Box<dyn std::error::Error>;

/// The kernels on `device` (the code object of the device's gfx, from [`KERNELS`]).
pub fn load(device: &Device) -> Result<Module, Error> {
    Ok(device.load_module(KERNELS)?)
}

/// `z = alpha * x + y` elementwise on the module's device, with `saxpy_f32`; the buffers must
/// have one length.
pub fn saxpy_into(
    module: &Module,
    alpha: f32,
    x: &DeviceBuffer<f32>,
    y: &DeviceBuffer<f32>,
    z: &mut DeviceBuffer<f32>,
) -> Result<(), Error> {
    if x.len() != y.len() || x.len() != z.len() {
        return Err(format!(
            "saxpy: x, y and z hold {}, {} and {} elements",
            x.len(),
            y.len(),
            z.len()
        )
        .into());
    }
    if x.is_empty() {
        return Ok(());
    }
    let n = u32::try_from(x.len())?;
    // Checked once: the kernel exists in the code object, with these argument types and bounds.
    let kernel = module.kernel(saxpy_f32)?;
    let config = LaunchConfig::for_elements(x.len(), 256);
    // SAFETY: saxpy_f32 reads x[0..n] and y[0..n] and writes z[0..n]; each buffer holds n.
    unsafe {
        module
            .device()
            .default_stream()
            .launch(&kernel, config, (alpha, x, y, z, n))?
    };
    Ok(())
}

/// `alpha * x + y` elementwise, computed on `device`.
pub fn saxpy(device: &Device, alpha: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>, Error> {
    let module = load(device)?;
    let x = DeviceBuffer::from_slice(device, x)?;
    let y = DeviceBuffer::from_slice(device, y)?;
    let mut z = DeviceBuffer::<f32>::alloc(device, x.len())?;
    saxpy_into(&module, alpha, &x, &y, &mut z)?;
    Ok(z.to_vec()?)
}
