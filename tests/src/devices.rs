//! The devices the kernel tests run on: an emulator per emulated gfx the build produced, each with
//! the library's bundle loaded.

use crate::Artifacts;
use iron::emulator::{Emulator, emulated_targets};
use iron::{Device, Module};

/// One emulated GPU with the kernel library loaded.
pub struct TestDevice {
    /// The gfx it emulates.
    pub gfx: String,
    /// The emulator (for counters and budgets).
    pub emulator: Emulator,
    /// The emulator as a device.
    pub device: Device,
    /// The library's code object for this gfx.
    pub module: Module,
    /// The wave size the code object was built for.
    pub wave: u32,
}

/// Every emulated target of the build with the library loaded: each emulated gfx with its
/// default wave size, from the bundle (named by its gfx), and each extra wave-size build from its
/// own code object (named `<gfx>-w<wave>`, as the build's output directory). Panics (with the
/// reason) when the build's outputs are missing: run through `cargo xtask test`.
pub fn emulated_devices() -> Vec<TestDevice> {
    emulated_devices_of(None)
}

/// [`emulated_devices`] with `compute_units` compute units (CDNA) or WGPs (RDNA) each instead of
/// their product's: launches the library sizes by the device (grid-stride kernels capped per
/// compute unit) then take fewer workgroups, whose work-items loop.
pub fn emulated_devices_with_compute_units(compute_units: u32) -> Vec<TestDevice> {
    emulated_devices_of(Some(compute_units))
}

/// [`emulated_devices`], with `compute_units` per device where given.
fn emulated_devices_of(compute_units: Option<u32>) -> Vec<TestDevice> {
    let artifacts = Artifacts::load();
    let bundle = std::fs::read(artifacts.dir.join("kernels.bundle")).expect("kernels.bundle");
    let mut devices = Vec::new();
    for gfx in emulated_targets() {
        let builds: Vec<_> = artifacts.targets.iter().filter(|t| t.gfx == gfx).collect();
        let Some(default_wave) = builds.iter().map(|t| t.wave).min() else {
            continue;
        };
        for target in builds {
            let emulator = Emulator::new(gfx).expect("an emulated gfx");
            if let Some(compute_units) = compute_units {
                emulator.set_compute_units(compute_units);
            }
            let device = emulator.device();
            let default = target.wave == default_wave;
            let image = if default {
                bundle.clone()
            } else {
                std::fs::read(&target.code_object)
                    .unwrap_or_else(|e| panic!("{}: {e}", target.code_object.display()))
            };
            let name = if default {
                gfx.to_string()
            } else {
                format!("{gfx}-w{}", target.wave)
            };
            let module = device
                .load_module(&image)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            devices.push(TestDevice {
                gfx: name,
                emulator,
                device,
                module,
                wave: target.wave,
            });
        }
    }
    assert!(!devices.is_empty(), "the build holds no emulated gfx");
    devices
}
