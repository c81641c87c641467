//! Runs the walkthrough's kernels on HIP device 0, or on the emulator playing the gfx named on
//! the command line (default gfx950) when there is no GPU, and compares them with the CPU.
//!
//! ```sh
//! cargo run                # HIP device 0, else the emulator as gfx950
//! cargo run -- gfx1100     # the emulator as gfx1100 (wave32)
//! ```

use iron::Device;
use iron::emulator::Emulator;
use std::process::ExitCode;
use walkthrough_host::{Error, load, normalize_rows, normalize_rows_oracle, scale};

fn main() -> ExitCode {
    match run() {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<String, Error> {
    let named = std::env::args().nth(1);
    let (device, name) = match (named, Device::hip(0)) {
        (None, Ok(device)) => (device, "HIP device 0".to_string()),
        (gfx, _) => {
            let gfx = gfx.unwrap_or_else(|| "gfx950".into());
            (
                Emulator::new(&gfx)?.device(),
                format!("the emulator as {gfx}"),
            )
        }
    };
    let module = load(&device)?;
    let (cols, eps) = (1000, 1e-12);
    let x: Vec<f32> = (0..64 * cols)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();

    let halved = scale(&module, 0.5, &x)?;
    if halved.iter().zip(&x).any(|(h, x)| *h != 0.5 * x) {
        return Err(format!("scale_f32 on {name} differs from the CPU").into());
    }
    let y = normalize_rows(&module, &x, cols, 256, eps)?;
    let want = normalize_rows_oracle(&x, cols, eps);
    let error = y
        .iter()
        .zip(&want)
        .map(|(&y, &w)| (f64::from(y) - w).abs())
        .fold(0.0, f64::max);
    // A row's norm is an f32 sum of 1000 squares, then a few roundings: about 1e-8 here.
    if error > 1e-6 {
        return Err(format!("normalize_rows_f32 on {name}: max error {error:.2e}").into());
    }
    Ok(format!(
        "scale_f32 and normalize_rows_f32 on [64, {cols}] f32, on {name}: match the CPU (max error {error:.1e})"
    ))
}
