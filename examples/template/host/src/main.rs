//! Runs `saxpy` on HIP device 0, or on Iron's emulator (as a gfx950) when there is no GPU, and
//! checks it against the CPU.

use iron::Device;
use iron::emulator::Emulator;
use std::process::ExitCode;

fn main() -> ExitCode {
    let (device, name) = match Device::hip(0) {
        Ok(device) => (device, "HIP device 0".to_string()),
        Err(e) => match Emulator::new("gfx950") {
            Ok(emulator) => (emulator.device(), format!("the emulator (no GPU: {e})")),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let y = vec![1.0f32; x.len()];
    match template_host::saxpy(&device, 2.0, &x, &y) {
        Ok(z) if z.iter().zip(&x).all(|(z, x)| *z == 2.0 * x + 1.0) => {
            println!("saxpy of {} elements on {name}: matches the CPU", z.len());
            ExitCode::SUCCESS
        }
        Ok(_) => {
            eprintln!("error: saxpy on {name} differs from the CPU");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: saxpy on {name}: {e}");
            ExitCode::FAILURE
        }
    }
}
