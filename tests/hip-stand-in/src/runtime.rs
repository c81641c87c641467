//! The process-wide runtime: the emulated device, made on first use, and the tables of what
//! the library handed out (allocations, modules and functions, streams and events).

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use hip_runtime_sys::HipError;
use iron::Device;
use iron::code_object::TargetId;
use iron::emulator::{Emulator, emulated_targets};

use crate::memory::Allocations;
use crate::module::Modules;
use crate::stream::Queues;

/// The environment variable naming the gfx to emulate.
pub const GFX_ENV: &str = "IRON_EMU_GFX";

/// The gfx emulated when `IRON_EMU_GFX` is unset or empty.
pub const DEFAULT_GFX: &str = "gfx950";

/// The one device and the tables of live objects.
pub struct Runtime {
    /// The emulated gfx, e.g. `gfx950`.
    pub gfx: &'static str,
    /// The target id the device reports (`gcnArchName`), e.g. `gfx950:sramecc+:xnack-`: code
    /// objects are picked for it.
    pub target: TargetId,
    /// The emulator, for draining its per-dispatch counters.
    pub emulator: Emulator,
    /// The emulator as an `iron` device: every operation goes through its backend.
    pub device: Device,
    tables: Mutex<Tables>,
}

/// What the library handed out and has not released.
#[derive(Default)]
pub struct Tables {
    /// Device allocations.
    pub allocations: Allocations,
    /// Loaded modules and the functions looked up in them.
    pub modules: Modules,
    /// Streams and events.
    pub queues: Queues,
    handles_made: u64,
}

impl Tables {
    /// A handle value never handed out before: non-null, 16-byte spaced like real pointers.
    pub fn new_handle(&mut self) -> u64 {
        self.handles_made += 1;
        self.handles_made * 16
    }
}

/// The target id a device of `gfx` reports: the features set as on Instinct GPUs (SRAM ECC on,
/// XNACK off), so that code objects built for any setting, or for these, are chosen.
pub fn reported_target(gfx: &str) -> String {
    format!("{gfx}:sramecc+:xnack-")
}

/// The emulated gfx a value of `IRON_EMU_GFX` selects: [`DEFAULT_GFX`] when unset or empty.
fn emulated_gfx(value: Option<&str>) -> Result<&'static str, String> {
    let wanted = value
        .filter(|value| !value.is_empty())
        .unwrap_or(DEFAULT_GFX);
    emulated_targets()
        .into_iter()
        .find(|gfx| *gfx == wanted)
        .ok_or_else(|| {
            format!(
                "{GFX_ENV}={wanted} is not an emulated gfx (the emulator runs {})",
                emulated_targets().join(", ")
            )
        })
}

impl Runtime {
    /// The runtime for the gfx `IRON_EMU_GFX` names, or why there is none.
    fn from_env() -> Result<Runtime, String> {
        let gfx = emulated_gfx(std::env::var(GFX_ENV).ok().as_deref())?;
        let target = TargetId::parse(&reported_target(gfx)).map_err(|error| error.to_string())?;
        let emulator = Emulator::new(gfx).map_err(|error| error.to_string())?;
        let device = emulator.device();
        Ok(Runtime {
            gfx,
            target,
            emulator,
            device,
            tables: Mutex::new(Tables::default()),
        })
    }

    /// The tables, locked. A panic while they were locked leaves them usable: every change is
    /// one insert or remove.
    pub fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The runtime, made on first use; `hipErrorNoDevice` when `IRON_EMU_GFX` names no emulated
/// gfx (said once on stderr).
pub fn runtime() -> Result<&'static Runtime, HipError> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| match Runtime::from_env() {
            Ok(runtime) => Some(runtime),
            Err(reason) => {
                eprintln!("hip-stand-in: no device: {reason}");
                None
            }
        })
        .as_ref()
        .ok_or(HipError::NO_DEVICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gfx_defaults_to_gfx950_and_must_be_emulated() {
        assert_eq!(emulated_gfx(None), Ok("gfx950"));
        assert_eq!(emulated_gfx(Some("")), Ok("gfx950"));
        for gfx in ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"] {
            assert_eq!(emulated_gfx(Some(gfx)), Ok(gfx));
        }
        for wrong in ["gfx1030", "gfx950:sramecc+", "GFX950", "950"] {
            let message = emulated_gfx(Some(wrong)).unwrap_err();
            assert!(
                message.contains(wrong) && message.contains("gfx90a"),
                "{message}"
            );
        }
    }

    #[test]
    fn handles_are_distinct_and_non_null() {
        let mut tables = Tables::default();
        let handles: Vec<u64> = (0..100).map(|_| tables.new_handle()).collect();
        assert!(
            handles
                .iter()
                .all(|&handle| handle != 0 && handle % 16 == 0)
        );
        assert!(handles.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
