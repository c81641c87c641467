//! The test fixtures `cargo xtask test` builds for every emulated build (`tests/matrix-probe`,
//! `tests/device-probe`), loaded as the tests run them.

use std::path::PathBuf;

use iron::emulator::Emulator;
use iron::{Device, Module};

/// Every build of a fixture: CDNA, and RDNA in wave32 and in wave64 (`<gfx>-w64`).
pub const EMULATED_BUILDS: [&str; 7] = [
    "gfx90a",
    "gfx942",
    "gfx950",
    "gfx1100",
    "gfx1201",
    "gfx1100-w64",
    "gfx1201-w64",
];

/// The code object of fixture `fixture` (a directory of `tests/`) for build `build`:
/// `$IRON_EMU_TEST_OBJECTS/<fixture>/<build>/kernels.co`.
pub fn code_object(fixture: &str, build: &str) -> Vec<u8> {
    let dir = std::env::var_os("IRON_EMU_TEST_OBJECTS").unwrap_or_else(|| {
        panic!("IRON_EMU_TEST_OBJECTS is not set: `cargo xtask test` builds tests/{fixture} there")
    });
    let path = PathBuf::from(dir).join(format!("{fixture}/{build}/kernels.co"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// An emulator of `build`'s gfx with fixture `fixture`'s code object for `build` loaded.
pub fn load(fixture: &str, build: &str) -> (Device, Module) {
    let gfx = build.split('-').next().unwrap_or(build);
    let device = Emulator::new(gfx).unwrap().device();
    let module = device.load_module(&code_object(fixture, build)).unwrap();
    (device, module)
}
