//! The emulator's executor on arbitrary instruction streams placed in a valid kernel, under an
//! instruction budget: every run ends in a result or an error value, never a panic or a hang.
#![no_main]

use iron_fuzz::program::Program;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(program) = Program::from_input(data)
        && let Err(e) = program.execute()
    {
        assert!(!e.to_string().is_empty());
    }
});
