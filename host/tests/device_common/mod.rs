//! Shared helpers of the device tests: a fake backend that keeps memory in host vectors and
//! records everything it is asked to do, hand-made code objects with chosen metadata, and the
//! built code objects of `cargo xtask build` when `IRON_ARTIFACTS` names them.
#![allow(dead_code)]

#[path = "../../code-object/tests/code_object_common/mod.rs"]
pub mod code_object_common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use code_object_common::{ElfBuilder, KernelSpec, arg, descriptor_bytes, kernel_metadata};
use iron::Device;
use iron::code_object::TargetId;
use iron::device::{
    Backend, BackendError, DeviceAddress, DeviceProperties, EventHandle, KernelLaunch,
    ModuleHandle, StreamHandle,
};
use rmpv::Value;

/// A launch as the fake backend received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedLaunch {
    pub module: ModuleHandle,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_lds: u32,
    pub kernarg: Vec<u8>,
    pub kernarg_align: u32,
    pub explicit_size: usize,
    pub stream: StreamHandle,
}

/// What the fake backend holds and has been asked.
#[derive(Default)]
pub struct FakeState {
    next_address: u64,
    next_handle: u64,
    /// Ticks once per launch; events record it, in milliseconds.
    clock_ms: u64,
    /// Live allocations: start address to contents.
    pub memory: BTreeMap<u64, Vec<u8>>,
    pub freed: Vec<u64>,
    /// Loaded modules and the bytes they were loaded from.
    pub modules: BTreeMap<u64, Vec<u8>>,
    pub unloaded: Vec<ModuleHandle>,
    pub streams: Vec<StreamHandle>,
    pub destroyed_streams: Vec<StreamHandle>,
    pub events: BTreeMap<u64, u64>,
    pub destroyed_events: Vec<EventHandle>,
    pub launches: Vec<RecordedLaunch>,
    pub synchronized_streams: Vec<StreamHandle>,
}

impl FakeState {
    fn range(
        &mut self,
        operation: &'static str,
        address: u64,
        len: u64,
    ) -> Result<&mut [u8], BackendError> {
        let bad = BackendError::BadAddress {
            operation,
            address,
            len,
        };
        let (&start, bytes) = self
            .memory
            .range_mut(..=address)
            .next_back()
            .ok_or(bad.clone())?;
        let from = (address - start) as usize;
        let to = from.checked_add(len as usize).ok_or(bad.clone())?;
        bytes.get_mut(from..to).ok_or(bad)
    }

    fn handle(&mut self) -> u64 {
        self.next_handle += 1;
        self.next_handle
    }
}

/// A backend that keeps device memory in host vectors and records every request.
pub struct FakeBackend {
    pub properties: DeviceProperties,
    state: Mutex<FakeState>,
}

impl FakeBackend {
    pub fn new(properties: DeviceProperties) -> FakeBackend {
        FakeBackend {
            properties,
            state: Mutex::new(FakeState {
                next_address: 0x7f00_0000_0000,
                ..FakeState::default()
            }),
        }
    }

    pub fn state(&self) -> MutexGuard<'_, FakeState> {
        self.state.lock().unwrap()
    }
}

impl Backend for FakeBackend {
    fn properties(&self) -> Result<DeviceProperties, BackendError> {
        Ok(self.properties.clone())
    }

    fn alloc(&self, bytes: u64) -> Result<DeviceAddress, BackendError> {
        assert!(bytes > 0, "the owning layer never allocates 0 bytes");
        if bytes > self.properties.global_memory {
            return Err(BackendError::OutOfMemory { bytes });
        }
        let mut state = self.state();
        let address = state.next_address;
        state.next_address = (address + bytes).next_multiple_of(256);
        // Garbage, not zeros: nothing may rely on fresh memory being zero.
        state.memory.insert(address, vec![0xa5; bytes as usize]);
        Ok(address)
    }

    fn free(&self, address: DeviceAddress) -> Result<(), BackendError> {
        let mut state = self.state();
        state
            .memory
            .remove(&address)
            .ok_or(BackendError::BadAddress {
                operation: "free",
                address,
                len: 0,
            })?;
        state.freed.push(address);
        Ok(())
    }

    fn write(&self, dst: DeviceAddress, src: &[u8]) -> Result<(), BackendError> {
        self.state()
            .range("write", dst, src.len() as u64)?
            .copy_from_slice(src);
        Ok(())
    }

    fn read(&self, src: DeviceAddress, dst: &mut [u8]) -> Result<(), BackendError> {
        dst.copy_from_slice(self.state().range("read", src, dst.len() as u64)?);
        Ok(())
    }

    fn fill(&self, dst: DeviceAddress, value: u8, len: u64) -> Result<(), BackendError> {
        self.state().range("fill", dst, len)?.fill(value);
        Ok(())
    }

    unsafe fn write_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.check_stream(stream)?;
        self.write(dst, src)
    }

    unsafe fn read_async(
        &self,
        stream: StreamHandle,
        src: DeviceAddress,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.check_stream(stream)?;
        self.read(src, dst)
    }

    fn fill_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        value: u8,
        len: u64,
    ) -> Result<(), BackendError> {
        self.check_stream(stream)?;
        self.fill(dst, value, len)
    }

    fn load_module(&self, code_object: &[u8]) -> Result<ModuleHandle, BackendError> {
        let mut state = self.state();
        let handle = state.handle();
        state.modules.insert(handle, code_object.to_vec());
        Ok(ModuleHandle(handle))
    }

    fn unload_module(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let mut state = self.state();
        state
            .modules
            .remove(&module.0)
            .ok_or(BackendError::BadHandle {
                operation: "unload_module",
                what: "module",
                handle: module.0,
            })?;
        state.unloaded.push(module);
        Ok(())
    }

    unsafe fn launch(&self, launch: &KernelLaunch<'_>) -> Result<(), BackendError> {
        self.check_stream(launch.stream)?;
        let mut state = self.state();
        if !state.modules.contains_key(&launch.module.0) {
            return Err(BackendError::BadHandle {
                operation: "launch",
                what: "module",
                handle: launch.module.0,
            });
        }
        state.clock_ms += 1;
        state.launches.push(RecordedLaunch {
            module: launch.module,
            kernel: launch.kernel.to_owned(),
            grid: launch.grid,
            block: launch.block,
            dynamic_lds: launch.dynamic_lds,
            kernarg: launch.kernarg.to_vec(),
            kernarg_align: launch.kernarg_align,
            explicit_size: launch.explicit_size,
            stream: launch.stream,
        });
        Ok(())
    }

    fn create_stream(&self) -> Result<StreamHandle, BackendError> {
        let mut state = self.state();
        let handle = StreamHandle(state.handle());
        state.streams.push(handle);
        Ok(handle)
    }

    fn synchronize_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.check_stream(stream)?;
        self.state().synchronized_streams.push(stream);
        Ok(())
    }

    fn destroy_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.check_stream(stream)?;
        let mut state = self.state();
        state.streams.retain(|s| *s != stream);
        state.destroyed_streams.push(stream);
        Ok(())
    }

    fn record_event(&self, stream: StreamHandle) -> Result<EventHandle, BackendError> {
        self.check_stream(stream)?;
        let mut state = self.state();
        let handle = state.handle();
        let now = state.clock_ms;
        state.events.insert(handle, now);
        Ok(EventHandle(handle))
    }

    fn event_elapsed(
        &self,
        start: EventHandle,
        end: EventHandle,
    ) -> Result<Duration, BackendError> {
        let state = self.state();
        let time = |event: EventHandle| {
            state
                .events
                .get(&event.0)
                .copied()
                .ok_or(BackendError::BadHandle {
                    operation: "event_elapsed",
                    what: "event",
                    handle: event.0,
                })
        };
        Ok(Duration::from_millis(time(end)? - time(start)?))
    }

    fn destroy_event(&self, event: EventHandle) -> Result<(), BackendError> {
        let mut state = self.state();
        state.events.remove(&event.0);
        state.destroyed_events.push(event);
        Ok(())
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
}

impl FakeBackend {
    fn check_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        if stream == StreamHandle::DEFAULT || self.state().streams.contains(&stream) {
            Ok(())
        } else {
            Err(BackendError::BadHandle {
                operation: "stream",
                what: "stream",
                handle: stream.0,
            })
        }
    }
}

/// Properties of a fake device with target id `target`: 64 KiB of LDS per workgroup, 1024
/// work-items per workgroup, 1 GiB of memory.
pub fn fake_properties(target: &str) -> DeviceProperties {
    let target = TargetId::parse(target).unwrap();
    let wave_size = if target.processor.starts_with("gfx1") {
        32
    } else {
        64
    };
    DeviceProperties {
        name: format!("fake {target}"),
        target,
        wave_size,
        compute_units: 4,
        lds_per_workgroup: 65536,
        max_threads_per_block: 1024,
        global_memory: 1 << 30,
    }
}

/// A device over a fresh fake backend, and the backend to inspect.
pub fn fake_device(target: &str) -> (Device, Arc<FakeBackend>) {
    let backend = Arc::new(FakeBackend::new(fake_properties(target)));
    let device = Device::from_backend(backend.clone()).unwrap();
    (device, backend)
}

/// Sets (or adds) one key of a kernel metadata map.
pub fn with_field(mut metadata: Value, key: &str, value: Value) -> Value {
    let Value::Map(entries) = &mut metadata else {
        panic!("kernel metadata is a map");
    };
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some((_, slot)) => *slot = value,
        None => entries.push((Value::from(key), value)),
    }
    metadata
}

/// The hidden arguments of a code object v5 kernel, after explicit arguments ending at `base`:
/// (offset, size, kind), as LLVM lays them out (AMDGPUUsage, "Code Object V5 Metadata").
pub fn v5_hidden_args(base: u32) -> Vec<(u32, u32, &'static str)> {
    [
        (0, 4, "hidden_block_count_x"),
        (4, 4, "hidden_block_count_y"),
        (8, 4, "hidden_block_count_z"),
        (12, 2, "hidden_group_size_x"),
        (14, 2, "hidden_group_size_y"),
        (16, 2, "hidden_group_size_z"),
        (18, 2, "hidden_remainder_x"),
        (20, 2, "hidden_remainder_y"),
        (22, 2, "hidden_remainder_z"),
        (40, 8, "hidden_global_offset_x"),
        (48, 8, "hidden_global_offset_y"),
        (56, 8, "hidden_global_offset_z"),
        (64, 2, "hidden_grid_dims"),
        (72, 8, "hidden_printf_buffer"),
        (80, 8, "hidden_hostcall_buffer"),
        (88, 8, "hidden_multigrid_sync_arg"),
        (96, 8, "hidden_heap_v1"),
        (104, 8, "hidden_default_queue"),
        (112, 8, "hidden_completion_action"),
        (120, 4, "hidden_dynamic_lds_size"),
        (192, 4, "hidden_private_base"),
        (196, 4, "hidden_shared_base"),
        (200, 8, "hidden_queue_ptr"),
    ]
    .into_iter()
    .map(|(offset, size, kind)| (base + offset, size, kind))
    .collect()
}

/// A hand-made kernel compiled for workgroups of 256 work-items, as the library's flat kernels
/// are (`#[kernel(block = 256)]`, `.reqd_workgroup_size` [256, 1, 1]); otherwise as
/// [`kernel_spec`] with a maximum of 256.
pub fn flat_kernel_spec(
    name: &str,
    explicit: &[(u32, u32, &str, &str)],
    hidden: bool,
) -> KernelSpec {
    let mut spec = kernel_spec(name, explicit, hidden, 256);
    spec.metadata = with_field(
        spec.metadata,
        ".reqd_workgroup_size",
        Value::Array(vec![256.into(), 1.into(), 1.into()]),
    );
    spec
}

/// One hand-made kernel: `explicit` arguments as (offset, size, kind, name), optionally the v5
/// hidden arguments after them (from offset 32), `max_threads` as its maximum workgroup and
/// 256 bytes of static LDS.
pub fn kernel_spec(
    name: &str,
    explicit: &[(u32, u32, &str, &str)],
    hidden: bool,
    max_threads: u32,
) -> KernelSpec {
    let mut args: Vec<Value> = explicit
        .iter()
        .map(|&(offset, size, kind, arg_name)| arg(offset, size, kind, Some(arg_name)))
        .collect();
    let explicit_end = explicit.iter().map(|a| a.0 + a.1).max().unwrap_or(0);
    let kernarg_size = if hidden {
        args.extend(
            v5_hidden_args(32)
                .into_iter()
                .map(|(offset, size, kind)| arg(offset, size, kind, None)),
        );
        32 + 256
    } else {
        explicit_end
    };
    let metadata = with_field(
        kernel_metadata(name, kernarg_size, 64, args),
        ".max_flat_workgroup_size",
        Value::from(max_threads),
    );
    KernelSpec {
        name: name.to_owned(),
        code: vec![0x00, 0x00, 0x81, 0xbf],
        descriptor: descriptor_bytes(256, 16, kernarg_size, 0x00af_0081, 0x0000_0084, 2, 0x0008),
        metadata,
        with_kd_symbol: true,
    }
}

/// The explicit arguments of the library's `add_f32`: `a, b: *const f32, c: *mut f32, n: u32`.
pub const ADD_F32_ARGS: &[(u32, u32, &str, &str)] = &[
    (0, 8, "global_buffer", "a"),
    (8, 8, "global_buffer", "b"),
    (16, 8, "global_buffer", "c"),
    (24, 4, "by_value", "n"),
];

/// A gfx950 code object holding `kernels`.
pub fn code_object(kernels: Vec<KernelSpec>) -> Vec<u8> {
    ElfBuilder::new(kernels).build()
}

/// The directory of `cargo xtask build` outputs that `IRON_ARTIFACTS` names; panics with what
/// to do when it is not set (the tests that call it are `#[ignore]`d under plain `cargo test`).
pub fn artifacts() -> PathBuf {
    let dir = std::env::var_os("IRON_ARTIFACTS").expect(
        "IRON_ARTIFACTS is not set: run `cargo xtask test`, or `cargo xtask build` and set \
         IRON_ARTIFACTS to its output directory",
    );
    PathBuf::from(dir)
}

/// Every `<gfx>/kernels.co` under the artifacts directory, with its directory name.
pub fn built_code_objects() -> Vec<(String, Vec<u8>)> {
    let dir = artifacts();
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .flatten()
        .filter_map(|entry| {
            let bytes = std::fs::read(entry.path().join("kernels.co")).ok()?;
            Some((entry.file_name().to_string_lossy().into_owned(), bytes))
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no <gfx>/kernels.co under {}",
        dir.display()
    );
    found
}

/// The bundle of the artifacts directory.
pub fn built_bundle() -> Vec<u8> {
    let path = artifacts().join("kernels.bundle");
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
