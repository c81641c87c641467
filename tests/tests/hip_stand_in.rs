//! The host's real HIP path, end to end, against the HIP stand-in (`tests/hip-stand-in`): a
//! shared library exporting the HIP runtime functions Iron loads, backed by the emulator.
//!
//! Every test opens `Device::hip(0)` with `IRON_HIP_LIBRARY` pointing at the stand-in, so the
//! library loading, `hipInit`, the property queries, copies, module loading, kernarg packing
//! through `extra` and launches all run through `iron::hip` as on a GPU. The stand-in is found
//! through `IRON_HIP_STAND_IN` (set by `cargo xtask test`), else next to this test's target
//! directory; the tests fail, with instructions, when it is missing. It emulates the gfx
//! `IRON_EMU_GFX` names (default gfx950); one test re-runs the kernel test for the others.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

use iron::code_object::Bundle;
use iron::emulator::{Emulator, emulated_targets};
use iron::launch::LaunchArg;
use iron::{BackendError, Device, DeviceBuffer, DeviceError, LaunchConfig, Module};
use iron_kernels::{elementwise, reduce};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The environment variable naming the stand-in library file.
const STAND_IN_ENV: &str = "IRON_HIP_STAND_IN";
/// The environment variable the host's loader takes the HIP library from.
const HIP_LIBRARY_ENV: &str = "IRON_HIP_LIBRARY";
/// The environment variable choosing the stand-in's gfx.
const GFX_ENV: &str = "IRON_EMU_GFX";

const POISON: u32 = 0xDEAD_BEEF;
const GUARD: usize = 16;
const SIZES: [usize; 10] = [0, 1, 3, 4, 5, 63, 65, 257, 1000, 4099];

/// The stand-in library: `$IRON_HIP_STAND_IN`, else `<target>/<profile>/libiron_hip_stand_in.so`
/// beside this test executable (`<target>/<profile>/deps/hip_stand_in-<hash>`).
fn stand_in_library() -> PathBuf {
    if let Some(path) = std::env::var_os(STAND_IN_ENV).filter(|path| !path.is_empty()) {
        return PathBuf::from(path);
    }
    let executable = std::env::current_exe().expect("the test executable's path");
    let profile_dir = executable
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lies in <target>/<profile>/deps");
    let file = format!(
        "{}iron_hip_stand_in{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    profile_dir.join(file)
}

/// The gfx the stand-in emulates in this process.
fn stand_in_gfx() -> String {
    std::env::var(GFX_ENV)
        .ok()
        .filter(|gfx| !gfx.is_empty())
        .unwrap_or_else(|| "gfx950".to_owned())
}

/// HIP device 0 of the stand-in; panics with instructions when the library is missing.
fn stand_in_device() -> Device {
    static POINT_AT_STAND_IN: Once = Once::new();
    POINT_AT_STAND_IN.call_once(|| {
        let library = stand_in_library();
        assert!(
            library.is_file(),
            "the HIP stand-in library {} does not exist: build it with \
             `cargo build -p iron-hip-stand-in` (or run `cargo xtask test`), or set {STAND_IN_ENV} \
             to its path",
            library.display()
        );
        // SAFETY: this runs once, before any test of this binary reads the environment or loads
        // a library (every test passes through here first, and the others wait on the `Once`),
        // so no other thread reads the environment while it changes.
        unsafe { std::env::set_var(HIP_LIBRARY_ENV, &library) };
    });
    Device::hip(0).unwrap_or_else(|error| panic!("the stand-in opens as HIP device 0: {error}"))
}

/// The library bundle of the device build.
fn library_bundle() -> Vec<u8> {
    let dir = std::env::var_os("IRON_ARTIFACTS")
        .expect("IRON_ARTIFACTS is not set: run these tests with `cargo xtask test`");
    std::fs::read(Path::new(&dir).join("kernels.bundle")).expect("kernels.bundle")
}

/// The stand-in device with the library bundle loaded.
fn device_with_library() -> (Device, Module) {
    let device = stand_in_device();
    let module = device
        .load_module(&library_bundle())
        .unwrap_or_else(|error| panic!("{}: {error}", stand_in_gfx()));
    (device, module)
}

/// The launch shapes each size is tried with: one work-item per 4 elements (more workgroups than
/// the array needs, the later ones doing nothing), and the least grid covering the array (2048
/// elements per workgroup of 256).
fn configs(n: usize) -> [LaunchConfig; 2] {
    [
        LaunchConfig::for_elements(n.div_ceil(4).max(1), 256),
        LaunchConfig::new([n.div_ceil(2048).max(1) as u32, 1, 1], [256, 1, 1]),
    ]
}

#[test]
fn the_stand_in_is_hip_device_zero_with_the_emulators_properties() {
    let device = stand_in_device();
    let gfx = stand_in_gfx();
    let properties = device.properties();
    let emulated = Emulator::new(&gfx).unwrap().device().properties().clone();
    assert_eq!(properties.name, format!("Iron emulator ({gfx})"));
    assert_eq!(
        properties.target.to_string(),
        format!("{gfx}:sramecc+:xnack-")
    );
    assert_eq!(properties.target.processor, gfx);
    assert_eq!(properties.wave_size, emulated.wave_size);
    assert_eq!(properties.compute_units, emulated.compute_units);
    assert_eq!(properties.lds_per_workgroup, emulated.lds_per_workgroup);
    assert_eq!(
        properties.max_threads_per_block,
        emulated.max_threads_per_block
    );
    assert_eq!(properties.global_memory, emulated.global_memory);
    assert_eq!(iron::hip::device_count().unwrap(), 1);
    assert_eq!(Device::hip_devices().unwrap().len(), 1);
    let missing = Device::hip(1).unwrap_err().to_string();
    assert!(missing.contains("does not exist"), "{missing}");
}

#[test]
fn buffers_round_trip_through_hip_copies() {
    let device = stand_in_device();
    let mut rng = StdRng::seed_from_u64(0x6869_7073);
    for len in [1usize, 5, 64, 1000, 100_003] {
        let data: Vec<u32> = (0..len).map(|_| rng.random()).collect();
        let mut buffer = DeviceBuffer::from_slice(&device, &data).unwrap();
        assert_eq!(buffer.to_vec().unwrap(), data, "{len}");
        let stream = device.create_stream().unwrap();
        let other: Vec<u32> = (0..len).map(|_| rng.random()).collect();
        stream.write(&mut buffer, &other).unwrap();
        let mut back = vec![0; len];
        stream.read(&buffer, &mut back).unwrap();
        assert_eq!(back, other, "{len}");
        stream.zero(&mut buffer).unwrap();
        stream.synchronize().unwrap();
        assert!(buffer.to_vec().unwrap().iter().all(|&word| word == 0));
        let zeros = DeviceBuffer::<f32>::zeros(&device, len).unwrap();
        assert!(zeros.to_vec().unwrap().iter().all(|&x| x == 0.0));
    }
    let empty = DeviceBuffer::<u32>::from_slice(&device, &[]).unwrap();
    assert!(empty.to_vec().unwrap().is_empty());
    let wrong_length = DeviceBuffer::<u32>::zeros(&device, 4)
        .unwrap()
        .copy_from_slice(&[1, 2]);
    assert!(matches!(
        wrong_length,
        Err(DeviceError::LengthMismatch { .. })
    ));
    device.synchronize().unwrap();
}

#[test]
fn events_time_work_on_a_stream() {
    let device = stand_in_device();
    let stream = device.create_stream().unwrap();
    let start = stream.record_event().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let end = stream.record_event().unwrap();
    let elapsed = end.elapsed_since(&start).unwrap();
    assert!(elapsed.as_secs_f64() >= 0.019, "{elapsed:?}");
    assert!(elapsed.as_secs_f64() < 10.0, "{elapsed:?}");
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn kernels_match_the_cpu() {
    let (device, module) = device_with_library();
    let add = module.kernel(elementwise::add_f32).unwrap();
    let saxpy = module.kernel(elementwise::saxpy_f32).unwrap();
    let sum = module.kernel(reduce::sum_f32).unwrap();
    let stream = device.create_stream().unwrap();
    let mut rng = StdRng::seed_from_u64(0x5354_414e_4449);
    for n in SIZES {
        for config in configs(n) {
            let a: Vec<f32> = (0..n).map(|_| rng.random_range(-100.0f32..100.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.random_range(-100.0f32..100.0)).collect();
            let poison = vec![f32::from_bits(POISON); n + GUARD];
            let da = DeviceBuffer::from_slice(&device, &a).unwrap();
            let db = DeviceBuffer::from_slice(&device, &b).unwrap();
            let mut dc = DeviceBuffer::from_slice(&device, &poison).unwrap();
            // SAFETY: add_f32 touches elements 0..n of buffers holding at least n.
            unsafe { stream.launch(&add, config, (&da, &db, &mut dc, n as u32)) }.unwrap();
            let c = dc.to_vec().unwrap();
            for i in 0..n {
                assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "add n={n} i={i}");
            }
            assert!(
                c[n..].iter().all(|v| v.to_bits() == POISON),
                "add overran n={n}"
            );

            let alpha = rng.random_range(-4.0f32..4.0);
            let mut dy = DeviceBuffer::from_slice(&device, &b).unwrap();
            // SAFETY: saxpy_f32 touches elements 0..n of buffers holding n.
            unsafe { stream.launch(&saxpy, config, (alpha, &da, &mut dy, n as u32)) }.unwrap();
            let y = dy.to_vec().unwrap();
            for i in 0..n {
                let want = alpha.mul_add(a[i], b[i]);
                assert_eq!(y[i].to_bits(), want.to_bits(), "saxpy n={n} i={i}");
            }
        }
        // Two passes of the sum: its dynamic LDS size travels as a hidden argument.
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
        let wave = sum.kernel().metadata().wavefront_size;
        let groups = n
            .div_ceil(reduce::elements_per_workgroup(wave) as usize)
            .max(1);
        let mut partials = DeviceBuffer::from_slice(&device, &vec![f32::NAN; groups]).unwrap();
        let groups = groups as u32;
        let mut total = DeviceBuffer::from_slice(&device, &[f32::NAN]).unwrap();
        let many = LaunchConfig::new([groups, 1, 1], [256, 1, 1]).with_dynamic_lds(32);
        let one = LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_dynamic_lds(32);
        // SAFETY: sum_f32 reads x[0..n] and writes partials[0..groups], then reads those and
        // writes total[0].
        unsafe {
            stream
                .launch(&sum, many, (&dx, &mut partials, n as u32))
                .unwrap();
            stream
                .launch(&sum, one, (&partials, &mut total, groups))
                .unwrap();
        }
        let got = f64::from(total.to_vec().unwrap()[0]);
        let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
        let bound = x.iter().map(|&v| f64::from(v).abs()).sum::<f64>() * 1e-6 + 1e-7;
        assert!((got - want).abs() <= bound, "sum n={n}: {got} vs {want}");
    }
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn every_emulated_gfx_runs_the_kernels() {
    let library = stand_in_library();
    let here = stand_in_gfx();
    for gfx in emulated_targets().into_iter().filter(|gfx| *gfx != here) {
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "kernels_match_the_cpu", "--include-ignored"])
            .env(GFX_ENV, gfx)
            .env(STAND_IN_ENV, &library)
            .output()
            .expect("the test executable runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{gfx}: {}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn a_too_large_block_is_refused_by_the_host() {
    let (device, module) = device_with_library();
    let add = module.kernel(elementwise::add_f32).unwrap();
    let n = 64;
    let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n]).unwrap();
    let mut c = DeviceBuffer::from_slice(&device, &vec![f32::from_bits(POISON); n]).unwrap();
    for block in [[512, 1, 1], [2048, 1, 1], [16, 16, 2]] {
        let config = LaunchConfig::new([1, 1, 1], block);
        // SAFETY: refused before it runs; it would touch elements 0..n of buffers holding n.
        let refused = unsafe {
            device
                .default_stream()
                .launch(&add, config, (&a, &a, &mut c, n as u32))
        };
        assert!(
            matches!(refused, Err(DeviceError::Launch(_))),
            "{block:?}: {refused:?}"
        );
    }
    assert!(c.to_vec().unwrap().iter().all(|v| v.to_bits() == POISON));
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn a_bundle_without_the_devices_gfx_is_refused_with_the_hosts_error() {
    let device = stand_in_device();
    let gfx = stand_in_gfx();
    let bundle = Bundle::parse(&library_bundle()).unwrap();
    let mut others = Bundle::new();
    for entry in bundle.entries() {
        if entry
            .id
            .target_id
            .as_ref()
            .is_none_or(|target| target.processor != gfx)
        {
            others.push(entry.id.clone(), entry.data.clone()).unwrap();
        }
    }
    let error = device.load_module(&others.write()).unwrap_err();
    assert!(
        matches!(error, DeviceError::NoCodeObjectForDevice { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("cargo xtask build --gfx {gfx}")),
        "{message}"
    );
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn a_kernel_fault_surfaces_as_an_error_and_the_device_stays_usable() {
    let (device, module) = device_with_library();
    let add = module.kernel(elementwise::add_f32).unwrap();
    let n = 64usize;
    let b = DeviceBuffer::from_slice(&device, &vec![2.0f32; n]).unwrap();
    let mut c = DeviceBuffer::from_slice(&device, &vec![0.0f32; n]).unwrap();
    let count = (n as u32).to_le_bytes();
    let args = [
        LaunchArg::Buffer {
            address: 0x10,
            device: &device,
        },
        LaunchArg::Buffer {
            address: b.address(),
            device: &device,
        },
        LaunchArg::Buffer {
            address: c.address(),
            device: &device,
        },
        LaunchArg::value(&count),
    ];
    let config = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
    let stream = device.default_stream();
    // SAFETY: the first pointer is bogus on purpose: the emulator behind the stand-in reports
    // the access as a fault and never touches host memory.
    let fault = unsafe { stream.launch_untyped(add.kernel(), config, &args) }.unwrap_err();
    match &fault {
        DeviceError::Backend(BackendError::KernelFault { kernel, detail, .. }) => {
            assert_eq!(kernel, "add_f32");
            assert!(detail.contains("hipErrorIllegalAddress"), "{detail}");
        }
        other => panic!("expected a kernel fault (illegal address), got {other:?}"),
    }
    // SAFETY: add_f32 touches elements 0..n of buffers holding n.
    unsafe { stream.launch(&add, config, (&b, &b, &mut c, n as u32)) }.unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![4.0f32; n]);
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn a_panic_reaches_the_hip_launch_error_through_the_modules_panic_record() {
    let device = stand_in_device();
    let build = stand_in_gfx();
    let module = device
        .load_module(&iron_tests::fixtures::code_object("device-probe", &build))
        .unwrap();
    let kernel = module.kernel_by_name("checked_divide").unwrap();
    let mut rng = StdRng::seed_from_u64(0x41_9a1c);
    let n = 300usize;
    let at = rng.random_range(0..n);
    let mut x: Vec<u32> = (0..n).map(|_| rng.random_range(8..1000)).collect();
    x[at] = 7;
    let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
    let y = DeviceBuffer::from_slice(&device, &vec![POISON; n]).unwrap();
    let count = (n as u32).to_le_bytes();
    let args = [
        LaunchArg::Buffer {
            address: dx.address(),
            device: &device,
        },
        LaunchArg::Buffer {
            address: y.address(),
            device: &device,
        },
        LaunchArg::value(&count),
    ];
    let config = LaunchConfig::new([2, 1, 1], [256, 1, 1]);
    let stream = device.default_stream();
    // SAFETY: x and y hold n elements; the kernel reads and writes elements 0..n.
    let fault = unsafe { stream.launch_untyped(&kernel, config, &args) }.unwrap_err();
    let text = fault.to_string();
    match fault {
        DeviceError::Backend(BackendError::KernelFault {
            kernel,
            panic: Some(panic),
            ..
        }) => {
            assert_eq!(kernel, "checked_divide");
            assert_eq!(
                panic.message.as_deref(),
                Some("seven is not a divisor here")
            );
            assert_eq!(panic.workgroup, [at as u32 / 256, 0, 0]);
            assert_eq!(panic.wave * 64 + panic.lane, at as u32 % 256, "{text}");
            assert!(panic.file.ends_with("src/panic.rs"), "{text}");
        }
        other => panic!("expected a kernel fault with a panic record, got {other:?}"),
    }
    assert!(text.contains("seven is not a divisor here"), "{text}");
    x[at] = 8;
    let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
    let args = [
        LaunchArg::Buffer {
            address: dx.address(),
            device: &device,
        },
        LaunchArg::Buffer {
            address: y.address(),
            device: &device,
        },
        LaunchArg::value(&count),
    ];
    // SAFETY: as above.
    unsafe { stream.launch_untyped(&kernel, config, &args) }.unwrap();
    let want: Vec<u32> = x.iter().map(|v| 1000 / v).collect();
    assert_eq!(y.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs the device build: run cargo xtask test"]
fn a_panics_values_and_strings_reach_the_hip_launch_error() {
    let device = stand_in_device();
    let build = stand_in_gfx();
    let module = device
        .load_module(&iron_tests::fixtures::code_object("device-probe", &build))
        .unwrap();
    let mut rng = StdRng::seed_from_u64(0x41_9a1d);
    let n = 300usize;
    let at = rng.random_range(0..n);
    // `lookup` reads x[x[i]] (a bounds check with its index and length); `flagged` panics with
    // integer, bool and string arguments for u32::MAX, whose texts the host reads back through
    // the runtime's copies.
    let index = n as u32 + rng.random_range(0..1000);
    for (kernel, value, message) in [
        (
            "lookup",
            index,
            format!("index out of bounds: the len is {n} but the index is {index}"),
        ),
        (
            "flagged",
            u32::MAX,
            format!(
                "x[{at}] = 0xffffffff in wave {} lane {}: true (all ones)",
                at % 256 / 64,
                at % 64
            ),
        ),
    ] {
        let kernel_handle = module.kernel_by_name(kernel).unwrap();
        let mut x: Vec<u32> = (0..n).map(|_| rng.random_range(0..n as u32)).collect();
        x[at] = value;
        let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
        let y = DeviceBuffer::from_slice(&device, &vec![POISON; n]).unwrap();
        let count = (n as u32).to_le_bytes();
        let args = [
            LaunchArg::Buffer {
                address: dx.address(),
                device: &device,
            },
            LaunchArg::Buffer {
                address: y.address(),
                device: &device,
            },
            LaunchArg::value(&count),
        ];
        let config = LaunchConfig::new([2, 1, 1], [256, 1, 1]);
        // SAFETY: x and y hold n elements; the kernel reads and writes elements 0..n.
        let fault = unsafe {
            device
                .default_stream()
                .launch_untyped(&kernel_handle, config, &args)
        }
        .unwrap_err();
        let text = fault.to_string();
        match fault {
            DeviceError::Backend(BackendError::KernelFault {
                panic: Some(panic), ..
            }) => {
                assert_eq!(panic.message.as_deref(), Some(message.as_str()), "{text}");
                assert_eq!(panic.workgroup, [at as u32 / 256, 0, 0]);
                assert_eq!(panic.wave * 64 + panic.lane, at as u32 % 256, "{text}");
            }
            other => panic!("{kernel}: expected a kernel fault with a panic record, got {other:?}"),
        }
        assert!(text.contains(&format!(": {message}; ")), "{text}");
    }
}
