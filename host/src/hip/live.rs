//! What a HIP backend handed out and has not released: allocations, streams, events, modules.
//!
//! The HIP runtime trusts the pointers and handles it is given (an unknown stream can crash
//! ROCm 7), so the backend checks every address range and handle against this record first:
//! the [`Backend`](crate::device::Backend) trait promises an error, never undefined behaviour,
//! for values it did not hand out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use crate::device::{BackendError, EventHandle, ModuleHandle, StreamHandle};

/// A loaded module: the code object bytes the runtime was given (kept alive while loaded, in
/// 8-byte aligned storage) and the kernels looked up in it so far.
pub(super) struct LoadedModule {
    /// The code object, padded to whole words.
    pub image: Vec<u64>,
    /// Kernel name to `hipFunction_t` (as its exposed address).
    pub functions: Mutex<HashMap<String, usize>>,
}

impl LoadedModule {
    /// Copies `code_object` into word-aligned storage.
    pub fn new(code_object: &[u8]) -> LoadedModule {
        let mut image = vec![0u64; code_object.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut image)[..code_object.len()]
            .copy_from_slice(code_object);
        LoadedModule {
            image,
            functions: Mutex::new(HashMap::new()),
        }
    }
}

/// The live objects of one backend.
#[derive(Default)]
pub(super) struct Live {
    /// Start address to size in bytes.
    allocations: BTreeMap<u64, u64>,
    streams: HashSet<u64>,
    events: HashSet<u64>,
    modules: HashMap<u64, LoadedModule>,
}

impl Live {
    /// Records an allocation.
    pub fn add_allocation(&mut self, address: u64, bytes: u64) {
        self.allocations.insert(address, bytes);
    }

    /// Forgets the allocation starting at `address`.
    pub fn remove_allocation(&mut self, address: u64) -> Result<(), BackendError> {
        self.allocations
            .remove(&address)
            .map(|_| ())
            .ok_or(BackendError::BadAddress {
                operation: "free",
                address,
                len: 0,
            })
    }

    /// Checks that `address..address + len` lies inside one live allocation.
    pub fn check_range(
        &self,
        operation: &'static str,
        address: u64,
        len: u64,
    ) -> Result<(), BackendError> {
        let inside =
            self.allocations
                .range(..=address)
                .next_back()
                .is_some_and(|(&start, &size)| {
                    address
                        .checked_add(len)
                        .is_some_and(|end| end <= start + size)
                });
        if inside {
            Ok(())
        } else {
            Err(BackendError::BadAddress {
                operation,
                address,
                len,
            })
        }
    }

    /// Records a stream.
    pub fn add_stream(&mut self, stream: StreamHandle) {
        self.streams.insert(stream.0);
    }

    /// Forgets a stream.
    pub fn remove_stream(&mut self, stream: StreamHandle) -> Result<(), BackendError> {
        if stream != StreamHandle::DEFAULT && self.streams.remove(&stream.0) {
            Ok(())
        } else {
            Err(bad_handle("destroy_stream", "stream", stream.0))
        }
    }

    /// Checks that `stream` is the default stream or a live one.
    pub fn check_stream(
        &self,
        operation: &'static str,
        stream: StreamHandle,
    ) -> Result<(), BackendError> {
        if stream == StreamHandle::DEFAULT || self.streams.contains(&stream.0) {
            Ok(())
        } else {
            Err(bad_handle(operation, "stream", stream.0))
        }
    }

    /// Records an event.
    pub fn add_event(&mut self, event: EventHandle) {
        self.events.insert(event.0);
    }

    /// Forgets an event.
    pub fn remove_event(&mut self, event: EventHandle) -> Result<(), BackendError> {
        if self.events.remove(&event.0) {
            Ok(())
        } else {
            Err(bad_handle("destroy_event", "event", event.0))
        }
    }

    /// Checks that `event` is live.
    pub fn check_event(
        &self,
        operation: &'static str,
        event: EventHandle,
    ) -> Result<(), BackendError> {
        if self.events.contains(&event.0) {
            Ok(())
        } else {
            Err(bad_handle(operation, "event", event.0))
        }
    }

    /// Records a module.
    pub fn add_module(&mut self, module: ModuleHandle, loaded: LoadedModule) {
        self.modules.insert(module.0, loaded);
    }

    /// Forgets a module, handing back what it kept alive.
    pub fn remove_module(&mut self, module: ModuleHandle) -> Result<LoadedModule, BackendError> {
        self.modules
            .remove(&module.0)
            .ok_or_else(|| bad_handle("unload_module", "module", module.0))
    }

    /// A live module.
    pub fn module(
        &self,
        operation: &'static str,
        module: ModuleHandle,
    ) -> Result<&LoadedModule, BackendError> {
        self.modules
            .get(&module.0)
            .ok_or_else(|| bad_handle(operation, "module", module.0))
    }
}

fn bad_handle(operation: &'static str, what: &'static str, handle: u64) -> BackendError {
    BackendError::BadHandle {
        operation,
        what,
        handle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_must_lie_inside_one_allocation() {
        let mut live = Live::default();
        live.add_allocation(0x1000, 0x100);
        live.add_allocation(0x1100, 0x100);
        assert!(live.check_range("read", 0x1000, 0x100).is_ok());
        assert!(live.check_range("read", 0x10ff, 1).is_ok());
        assert!(live.check_range("read", 0x1100, 0x100).is_ok());
        // Spans two allocations, starts before the first, ends past the last, overflows.
        assert!(live.check_range("read", 0x10ff, 2).is_err());
        assert!(live.check_range("read", 0xfff, 1).is_err());
        assert!(live.check_range("read", 0x11ff, 2).is_err());
        assert!(live.check_range("read", u64::MAX, 2).is_err());
        live.remove_allocation(0x1000).unwrap();
        assert!(live.check_range("read", 0x1000, 1).is_err());
        assert!(live.remove_allocation(0x1000).is_err());
    }

    #[test]
    fn handles_are_checked_and_the_default_stream_is_never_destroyed() {
        let mut live = Live::default();
        assert!(live.check_stream("sync", StreamHandle::DEFAULT).is_ok());
        assert!(live.remove_stream(StreamHandle::DEFAULT).is_err());
        assert!(live.check_stream("sync", StreamHandle(7)).is_err());
        live.add_stream(StreamHandle(7));
        assert!(live.check_stream("sync", StreamHandle(7)).is_ok());
        live.remove_stream(StreamHandle(7)).unwrap();
        assert!(live.check_stream("sync", StreamHandle(7)).is_err());
        assert!(live.check_event("elapsed", EventHandle(3)).is_err());
        live.add_event(EventHandle(3));
        assert!(live.check_event("elapsed", EventHandle(3)).is_ok());
        live.remove_event(EventHandle(3)).unwrap();
        assert!(live.remove_event(EventHandle(3)).is_err());
    }

    #[test]
    fn module_images_are_kept_word_aligned_and_intact() {
        let bytes: Vec<u8> = (0..29u8).collect();
        let module = LoadedModule::new(&bytes);
        assert_eq!(module.image.len(), 4);
        assert_eq!(module.image.as_ptr().align_offset(8), 0);
        assert_eq!(
            &bytemuck::cast_slice::<u64, u8>(&module.image)[..29],
            &bytes[..]
        );
    }
}
