//! Writes every fuzz target's seed inputs to `<dir>/<target>/` (default `corpus`, next to this
//! crate's Cargo.toml), where `cargo fuzz run` looks for them. Fails if a seed program does not
//! run to completion on the emulator: seeds should lead the fuzzer into working code.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    for (name, program) in iron_fuzz::seeds::programs() {
        if let Err(e) = program.execute() {
            eprintln!("error: seed program {name} does not run: {e}");
            return ExitCode::FAILURE;
        }
    }
    for target in iron_fuzz::seeds::TARGETS {
        let target_dir = dir.join(target);
        let written = std::fs::create_dir_all(&target_dir).and_then(|()| {
            iron_fuzz::seeds::for_target(target)
                .into_iter()
                .try_for_each(|(name, bytes)| std::fs::write(target_dir.join(name), bytes))
        });
        if let Err(e) = written {
            eprintln!("error: cannot write seeds to {}: {e}", target_dir.display());
            return ExitCode::FAILURE;
        }
    }
    println!("seeds written to {}", dir.display());
    ExitCode::SUCCESS
}
