//! The panic handler of every Iron code object: a failed bounds check, assertion or `panic!`
//! records where it happened in the code object's panic record, then traps the wave
//! (`s_trap 2`), which a device reports as a kernel fault and the host completes with the
//! record. (`s_sethalt` would let LLVM delete the checks; `s_endpgm` would end the wave
//! silently.)
//!
//! The record is the global `iron_panic` (the host finds it by name, on the emulator and
//! through `hipModuleGetGlobal`): the first lane to panic in a dispatch claims it and writes
//! the workgroup, wave, lane, file, line, column and the message when it is a constant (a
//! message with arguments would need `core::fmt` on the device, whose indirect calls and
//! stack would cost every kernel with a bounds check its registers; the record says it was
//! left out). Not the printf buffer: a kernel with a printf buffer is one the HIP runtime
//! waits for after every launch, and every kernel with a bounds check can panic.

use crate::atomic::{self, Ordering, Scope};
use crate::id;

/// Words of the panic record.
pub const RECORD_WORDS: usize = 16;

/// The record's state word: nothing recorded.
const EMPTY: u32 = 0;
/// A lane is writing it.
const WRITING: u32 = 1;
/// Complete: the host may read it.
const COMPLETE: u32 = 2;

/// Flag word bit: the message had arguments and is not recorded.
const FORMATTED: u32 = 1;

/// The panic record, laid out as the host reads it (little-endian words): state, workgroup
/// x, y, z, wave, lane, line, column, file address (2 words), file length, message address
/// (2 words), message length, flags, and one unused word.
#[unsafe(export_name = "iron_panic")]
static mut RECORD: [u32; RECORD_WORDS] = [0; RECORD_WORDS];

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    record(info);
    core::intrinsics::abort()
}

/// Writes the record if no lane of the dispatch has yet.
#[inline(always)]
fn record(info: &core::panic::PanicInfo<'_>) {
    let record = (&raw mut RECORD).cast::<u32>();
    // SAFETY: the record is a static of RECORD_WORDS aligned words; the state word is only
    // updated atomically, and only the lane that moved it from EMPTY writes the others.
    unsafe {
        if atomic::compare_exchange(
            record,
            EMPTY,
            WRITING,
            Ordering::Relaxed,
            Ordering::Relaxed,
            Scope::Agent,
        )
        .is_err()
        {
            return;
        }
        let (file, line, column) = info
            .location()
            .map_or(("", 0, 0), |l| (l.file(), l.line(), l.column()));
        let message = info.message().as_str();
        let text = message.unwrap_or("");
        let words = [
            id::workgroup_id_x(),
            id::workgroup_id_y(),
            id::workgroup_id_z(),
            id::wave_id(),
            id::lane_id(),
            line,
            column,
            file.as_ptr().addr() as u32,
            (file.as_ptr().addr() as u64 >> 32) as u32,
            file.len() as u32,
            text.as_ptr().addr() as u32,
            (text.as_ptr().addr() as u64 >> 32) as u32,
            text.len() as u32,
            if message.is_none() { FORMATTED } else { 0 },
        ];
        // Plain stores, ordered before the state word by the release: a volatile store each
        // would be a separate flat store with a wait, and more registers at every panic site.
        record.add(1).cast::<[u32; 14]>().write(words);
        atomic::store(record, COMPLETE, Ordering::Release, Scope::Agent);
    }
}
