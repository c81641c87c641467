//! Threads and resources: which host types cross threads, many launches from several threads at
//! once, every device allocation (and module, stream, event) released on drop, and a device
//! that stays usable after a failed launch.
//!
//! | type | Send | Sync | why |
//! | --- | --- | --- | --- |
//! | `Device` | yes | yes | a shared `Arc` of a `Backend: Send + Sync` |
//! | `DeviceBuffer<T>` | yes | yes | a device and an address; host access goes through `&`/`&mut` |
//! | `Module`, `Kernel`, `TypedKernel<F>` | yes | yes | immutable once loaded |
//! | `Stream`, `Event` | yes | yes | handles; the backend serialises what needs it |
//! | `Emulator` | yes | yes | the emulated GPU sits behind a mutex |
//! | `Library` | yes | yes | a module and resolved kernels |

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use iron::code_object::CodeObject;
use iron::device::{DeviceAddress, EventHandle, KernelLaunch, ModuleHandle, StreamHandle};
use iron::emulator::Emulator;
use iron::launch::{KernelSignature, LaunchArg};
use iron::library::Library;
use iron::{
    Backend, BackendError, Device, DeviceBuffer, DeviceError, DeviceProperties, Event, Kernel,
    LaunchConfig, Module, Stream, TypedKernel,
};
use iron_intrinsics::launch::KernelDecl;
use iron_kernels::elementwise::add_f32;
use iron_tests::Artifacts;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Compiles only if `T` is `Send + Sync`.
fn assert_send_sync<T: Send + Sync>() {}

/// Compiles only if the typed kernels of `F`'s signature are `Send + Sync`.
fn typed_kernel_is_send_sync<F: KernelSignature + Send + Sync>(_: KernelDecl<F>) {
    assert_send_sync::<TypedKernel<F>>();
}

#[test]
fn the_host_types_are_send_and_sync() {
    assert_send_sync::<Device>();
    assert_send_sync::<DeviceBuffer<f32>>();
    assert_send_sync::<DeviceBuffer<u8>>();
    assert_send_sync::<Module>();
    assert_send_sync::<Kernel>();
    typed_kernel_is_send_sync(add_f32);
    assert_send_sync::<Stream>();
    assert_send_sync::<Event>();
    assert_send_sync::<Emulator>();
    assert_send_sync::<Library>();
    assert_send_sync::<CodeObject>();
    assert_send_sync::<DeviceError>();
}

/// The library's gfx950 code object from the device build.
fn gfx950_code_object() -> Vec<u8> {
    let artifacts = Artifacts::load();
    let target = artifacts
        .targets
        .iter()
        .filter(|t| t.gfx == "gfx950")
        .min_by_key(|t| t.wave)
        .expect("the device build holds gfx950");
    std::fs::read(&target.code_object).expect("the gfx950 code object")
}

/// The emulator's backend with a record of what is alive: allocations, modules, streams,
/// events. Every call goes to the emulator unchanged.
struct CountingBackend {
    inner: Device,
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    allocations: HashSet<DeviceAddress>,
    modules: HashSet<u64>,
    streams: HashSet<u64>,
    events: HashSet<u64>,
    /// Allocations ever made, to show the test exercised something.
    allocated: usize,
}

impl CountingBackend {
    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap()
    }
}

impl Backend for CountingBackend {
    fn properties(&self) -> Result<DeviceProperties, BackendError> {
        Ok(self.inner.properties().clone())
    }
    fn alloc(&self, bytes: u64) -> Result<DeviceAddress, BackendError> {
        let address = self.inner.backend().alloc(bytes)?;
        let mut live = self.live();
        live.allocations.insert(address);
        live.allocated += 1;
        Ok(address)
    }
    fn free(&self, address: DeviceAddress) -> Result<(), BackendError> {
        assert!(self.live().allocations.remove(&address), "double free");
        self.inner.backend().free(address)
    }
    fn write(&self, dst: DeviceAddress, src: &[u8]) -> Result<(), BackendError> {
        self.inner.backend().write(dst, src)
    }
    fn read(&self, src: DeviceAddress, dst: &mut [u8]) -> Result<(), BackendError> {
        self.inner.backend().read(src, dst)
    }
    fn fill(&self, dst: DeviceAddress, value: u8, len: u64) -> Result<(), BackendError> {
        self.inner.backend().fill(dst, value, len)
    }
    unsafe fn write_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        src: &[u8],
    ) -> Result<(), BackendError> {
        // SAFETY: the caller's guarantee is passed on unchanged.
        unsafe { self.inner.backend().write_async(stream, dst, src) }
    }
    unsafe fn read_async(
        &self,
        stream: StreamHandle,
        src: DeviceAddress,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        // SAFETY: the caller's guarantee is passed on unchanged.
        unsafe { self.inner.backend().read_async(stream, src, dst) }
    }
    fn fill_async(
        &self,
        stream: StreamHandle,
        dst: DeviceAddress,
        value: u8,
        len: u64,
    ) -> Result<(), BackendError> {
        self.inner.backend().fill_async(stream, dst, value, len)
    }
    fn load_module(&self, code_object: &[u8]) -> Result<ModuleHandle, BackendError> {
        let module = self.inner.backend().load_module(code_object)?;
        self.live().modules.insert(module.0);
        Ok(module)
    }
    fn unload_module(&self, module: ModuleHandle) -> Result<(), BackendError> {
        assert!(self.live().modules.remove(&module.0), "double unload");
        self.inner.backend().unload_module(module)
    }
    unsafe fn launch(&self, launch: &KernelLaunch<'_>) -> Result<(), BackendError> {
        // SAFETY: the caller's guarantee is passed on unchanged.
        unsafe { self.inner.backend().launch(launch) }
    }
    fn create_stream(&self) -> Result<StreamHandle, BackendError> {
        let stream = self.inner.backend().create_stream()?;
        self.live().streams.insert(stream.0);
        Ok(stream)
    }
    fn synchronize_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.inner.backend().synchronize_stream(stream)
    }
    fn destroy_stream(&self, stream: StreamHandle) -> Result<(), BackendError> {
        assert!(self.live().streams.remove(&stream.0), "double destroy");
        self.inner.backend().destroy_stream(stream)
    }
    fn record_event(&self, stream: StreamHandle) -> Result<EventHandle, BackendError> {
        let event = self.inner.backend().record_event(stream)?;
        self.live().events.insert(event.0);
        Ok(event)
    }
    fn event_elapsed(
        &self,
        start: EventHandle,
        end: EventHandle,
    ) -> Result<Duration, BackendError> {
        self.inner.backend().event_elapsed(start, end)
    }
    fn destroy_event(&self, event: EventHandle) -> Result<(), BackendError> {
        assert!(self.live().events.remove(&event.0), "double destroy");
        self.inner.backend().destroy_event(event)
    }
    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.backend().synchronize()
    }
}

/// A gfx950 emulator behind a [`CountingBackend`], as a device.
fn counted_device() -> (Emulator, Arc<CountingBackend>, Device) {
    let emulator = Emulator::new("gfx950").unwrap();
    let counting = Arc::new(CountingBackend {
        inner: emulator.device(),
        live: Mutex::new(Live::default()),
    });
    let device = Device::from_backend(counting.clone()).unwrap();
    (emulator, counting, device)
}

/// Launches `add_f32` once on `n` seeded elements with its own stream and buffers, and checks
/// every result.
fn add_once(device: &Device, add: &Kernel, rng: &mut StdRng) {
    let n = rng.random_range(1..2000usize);
    let a: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
    let stream = device.create_stream().unwrap();
    let da = DeviceBuffer::from_slice(device, &a).unwrap();
    let db = DeviceBuffer::from_slice(device, &b).unwrap();
    let dc = DeviceBuffer::<f32>::alloc(device, n).unwrap();
    let start = stream.record_event().unwrap();
    let config = LaunchConfig::for_elements(n.div_ceil(4), 256);
    let buffer = |b: &DeviceBuffer<f32>| LaunchArg::Buffer {
        address: b.address(),
        device,
    };
    let count = (n as u32).to_le_bytes();
    let args = [
        buffer(&da),
        buffer(&db),
        buffer(&dc),
        LaunchArg::value(&count),
    ];
    // SAFETY: add_f32 touches elements 0..n of buffers holding n.
    unsafe { stream.launch_untyped(add, config, &args) }.unwrap();
    let end = stream.record_event().unwrap();
    end.elapsed_since(&start).unwrap();
    let mut c = vec![0.0f32; n];
    stream.read(&dc, &mut c).unwrap();
    for (i, ((x, y), z)) in a.iter().zip(&b).zip(&c).enumerate() {
        assert_eq!((x + y).to_bits(), z.to_bits(), "element {i} of {n}");
    }
}

/// A launch of `add_f32` through an address outside every buffer: it must fail as a kernel
/// fault.
fn faulting_launch(device: &Device, add: &Kernel) {
    let b = DeviceBuffer::from_slice(device, &[1.0f32; 64]).unwrap();
    let count = 64u32.to_le_bytes();
    let bogus = LaunchArg::Buffer {
        address: 0x10,
        device,
    };
    let real = LaunchArg::Buffer {
        address: b.address(),
        device,
    };
    let args = [bogus, real, real, LaunchArg::value(&count)];
    let config = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
    // SAFETY: the emulator checks every access: the bogus address ends in a fault value.
    let error = unsafe { device.default_stream().launch_untyped(add, config, &args) }.unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::Backend(BackendError::KernelFault { .. })
        ),
        "{error:?}"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn many_threads_launch_at_once_and_every_result_is_right() {
    const THREADS: u64 = 4;
    const LAUNCHES: usize = 50;
    let (_emulator, counting, device) = counted_device();
    let module = device.load_module(&gfx950_code_object()).unwrap();
    let add = module.kernel(add_f32).unwrap().kernel().clone();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (device, add) = (device.clone(), add.clone());
            scope.spawn(move || {
                let mut rng = StdRng::seed_from_u64(0xc0c0 + thread);
                for launch in 0..LAUNCHES {
                    // Every tenth launch of the last thread faults; the others carry on.
                    if thread == THREADS - 1 && launch % 10 == 0 {
                        faulting_launch(&device, &add);
                    }
                    add_once(&device, &add, &mut rng);
                }
            });
        }
    });
    drop((add, module, device));
    let live = counting.live();
    assert!(live.allocated >= 3 * THREADS as usize * LAUNCHES);
    assert_eq!(
        (
            live.allocations.len(),
            live.modules.len(),
            live.streams.len(),
            live.events.len()
        ),
        (0, 0, 0, 0),
        "everything is released once dropped"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_shared_library_serves_several_threads_and_frees_everything() {
    let (_emulator, counting, device) = counted_device();
    let library = Library::load(&device, &gfx950_code_object()).unwrap();
    std::thread::scope(|scope| {
        for thread in 0..3u64 {
            let (library, device) = (&library, device.clone());
            scope.spawn(move || {
                let mut rng = StdRng::seed_from_u64(0x11b + thread);
                let stream = device.create_stream().unwrap();
                for _ in 0..10 {
                    let (rows, cols) = (rng.random_range(1..6), rng.random_range(1..300));
                    let x: Vec<f32> = (0..rows * cols)
                        .map(|_| rng.random_range(-4.0..4.0))
                        .collect();
                    let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
                    let mut sums = DeviceBuffer::<f32>::zeros(&device, rows).unwrap();
                    library
                        .row_sum(&stream, &dx, &mut sums, rows, cols)
                        .unwrap();
                    let got = sums.to_vec().unwrap();
                    for (row, got) in got.iter().enumerate() {
                        let want: f64 = x[row * cols..][..cols].iter().map(|&v| f64::from(v)).sum();
                        let bound = 1e-5
                            * x[row * cols..][..cols]
                                .iter()
                                .map(|v| f64::from(v.abs()))
                                .sum::<f64>()
                            + 1e-6;
                        assert!(
                            (f64::from(*got) - want).abs() <= bound,
                            "row {row}: {got} vs {want}"
                        );
                    }
                }
            });
        }
    });
    assert!(counting.live().allocated > 0);
    drop((library, device));
    let live = counting.live();
    assert!(
        live.allocations.is_empty(),
        "{} allocations leaked",
        live.allocations.len()
    );
    assert!(live.modules.is_empty() && live.streams.is_empty() && live.events.is_empty());
}

#[test]
fn buffers_streams_and_events_are_released_on_drop_even_after_errors() {
    let (_emulator, counting, device) = counted_device();
    let mut rng = StdRng::seed_from_u64(0xd50);
    for _ in 0..100 {
        let n = rng.random_range(0..5000usize);
        let mut buffer = DeviceBuffer::<u32>::zeros(&device, n).unwrap();
        // A copy of the wrong length fails and leaves the buffer owned.
        assert!(buffer.copy_from_slice(&vec![1; n + 1]).is_err());
        let stream = device.create_stream().unwrap();
        let _event = stream.record_event().unwrap();
        if rng.random_bool(0.5) {
            drop(stream);
            drop(buffer);
        }
    }
    assert!(DeviceBuffer::<u64>::alloc(&device, usize::MAX / 2).is_err());
    let live = counting.live();
    assert!(live.allocated > 50);
    assert!(
        live.allocations.is_empty(),
        "{} allocations leaked",
        live.allocations.len()
    );
    assert!(live.streams.is_empty() && live.events.is_empty());
}
