//! The panic handler of every Iron code object: a failed bounds check or assertion traps the wave
//! (`s_trap 2`), which a device reports as a kernel fault. (`s_sethalt` would let LLVM delete the
//! checks; `s_endpgm` would end the wave silently.)

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::intrinsics::abort()
}
