//! What the examples share: choosing the device, loading the kernel library, timing a launch and
//! reporting how the device's result compares with the CPU's.

use std::error::Error;
use std::fmt;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use iron::emulator::Emulator;
use iron::library::{Library, LibraryError};
use iron::{Device, Stream};

/// The gfx the emulator plays when no GPU is present and none is named on the command line: the
/// CDNA 4 processor, which runs every example (GEMM included).
pub const DEFAULT_EMULATED_GFX: &str = "gfx950";

/// Any error an example can meet; `main` prints it as one line.
pub type ExampleError = Box<dyn Error>;

/// What an example did and how its result compares with the CPU's.
#[derive(Debug, Clone)]
pub struct Report {
    /// The operation and the kernel that ran, e.g. `vector add (add_f32)`.
    pub operation: String,
    /// The problem size, e.g. `n = 1048576`.
    pub shape: String,
    /// The device it ran on, e.g. `Iron emulator (gfx950)`.
    pub device: String,
    /// Wall time of the timed work until its results were complete (on the emulator: the time
    /// the host took to emulate it).
    pub time: Duration,
    /// The largest difference from the CPU result, in the units the example states.
    pub max_error: f64,
    /// The largest difference the example accepts.
    pub tolerance: f64,
}

impl Report {
    /// Whether the device's result is within the tolerance of the CPU's.
    pub fn matched(&self) -> bool {
        self.max_error <= self.tolerance
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.matched() {
            "matches the CPU"
        } else {
            "DIFFERS from the CPU"
        };
        write!(
            f,
            "{}, {}, on {}: {:.2} ms; {verdict} (max error {:.3e}, tolerance {:.1e})",
            self.operation,
            self.shape,
            self.device,
            self.time.as_secs_f64() * 1e3,
            self.max_error,
            self.tolerance
        )
    }
}

/// Runs an example: picks the device from the command line ([`device_from_args`]), runs `body`
/// on it and prints its report, or the error as one line. Fails when the result differs from
/// the CPU's.
pub fn main(body: fn(&Device) -> Result<Report, ExampleError>) -> ExitCode {
    let gfx = std::env::args().nth(1);
    match device_from_args(gfx.as_deref()).and_then(|device| body(&device)) {
        Ok(report) => {
            println!("{report}");
            if report.matched() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The device to run on: the emulator as `gfx` when one is named (`cargo run --example gemm --
/// gfx942`); else HIP device 0 when the HIP runtime finds an AMD GPU; else the emulator as
/// [`DEFAULT_EMULATED_GFX`].
pub fn device_from_args(gfx: Option<&str>) -> Result<Device, ExampleError> {
    if let Some(gfx) = gfx {
        return Ok(Emulator::new(gfx)?.device());
    }
    match Device::hip_devices() {
        Ok(devices) if !devices.is_empty() => Ok(devices[0].clone()),
        _ => Ok(Emulator::new(DEFAULT_EMULATED_GFX)?.device()),
    }
}

/// The device's name and its target id (when the name does not already say it), for the
/// report.
pub fn describe(device: &Device) -> String {
    let properties = device.properties();
    if properties.name.contains(&properties.target.processor) {
        properties.name.clone()
    } else {
        format!("{} ({})", properties.name, properties.target)
    }
}

/// Loads the kernel library the build wrote (`cargo xtask build`), or says in one line how to
/// build it for this device.
pub fn load_library(device: &Device) -> Result<Library, ExampleError> {
    match Library::load_built(device) {
        Err(LibraryError::BundleNotFound { tried }) => Err(format!(
            "the kernel library is not built (no {tried}): run `cargo xtask build --gfx {}` \
             first, or set IRON_ARTIFACTS to the build's output directory",
            device.properties().target.processor
        )
        .into()),
        other => Ok(other?),
    }
}

/// Runs `launch` (which queues work on `stream`), waits for the stream and returns how long it
/// took.
pub fn timed(
    stream: &Stream,
    launch: impl FnOnce() -> Result<(), ExampleError>,
) -> Result<Duration, ExampleError> {
    let start = Instant::now();
    launch()?;
    stream.synchronize()?;
    Ok(start.elapsed())
}

/// The largest `|got - want| / (1 + |want|)`: an absolute error for values below 1 and a
/// relative one above; infinite when a value is NaN where the CPU's is not.
pub fn max_error(got: impl IntoIterator<Item = f64>, want: &[f64]) -> f64 {
    got.into_iter()
        .zip(want)
        .map(|(g, w)| {
            let error = (g - w).abs() / (1.0 + w.abs());
            if error.is_nan() { f64::INFINITY } else { error }
        })
        .fold(0.0, f64::max)
}

/// `n` deterministic values in `[-1, 1)` (a fixed pseudo-random walk), so that each run checks
/// the same inputs.
pub fn test_values(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 8) as f32 / (1 << 23) as f32 - 1.0
        })
        .collect()
}
