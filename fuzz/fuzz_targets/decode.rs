//! The emulator's decoders and disassemblers on arbitrary instruction words, for every GFX9 and
//! RDNA target (byte 0 picks the target and wave size).
#![no_main]

use iron_fuzz::program::Program;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(program) = Program::from_input(data) {
        program.decode_all();
    }
});
