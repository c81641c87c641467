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
}

/// Every emulated gfx of the build, with the library bundle loaded. Panics (with the reason)
/// when the build's outputs are missing: run through `cargo xtask test`.
pub fn emulated_devices() -> Vec<TestDevice> {
    let artifacts = Artifacts::load();
    let bundle = std::fs::read(artifacts.dir.join("kernels.bundle")).expect("kernels.bundle");
    let mut devices = Vec::new();
    for gfx in emulated_targets() {
        if !artifacts.targets.iter().any(|t| t.gfx == gfx) {
            continue;
        }
        let emulator = Emulator::new(gfx).expect("an emulated gfx");
        let device = emulator.device();
        let module = device
            .load_module(&bundle)
            .unwrap_or_else(|e| panic!("{gfx}: {e}"));
        devices.push(TestDevice {
            gfx: gfx.to_string(),
            emulator,
            device,
            module,
        });
    }
    assert!(!devices.is_empty(), "the build holds no emulated gfx");
    devices
}
