//! The HIP backend. Without an AMD GPU only the no-device path can run: it must end in a clear
//! error. The kernel runs need a GPU and the code objects of `cargo xtask build`: they are
//! `#[ignore]`d, and when run without a GPU they print why they did nothing.

mod device_common;

use device_common::built_bundle;
use iron::{Device, DeviceBuffer, LaunchConfig};
use iron_kernels::{elementwise, reduce};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// HIP device 0, or the reason there is none (printed as the skip reason).
fn gpu() -> Option<Device> {
    match Device::hip(0) {
        Ok(device) => Some(device),
        Err(error) => {
            println!("skipped: {error}");
            None
        }
    }
}

#[test]
fn without_a_gpu_opening_a_hip_device_says_why() {
    let count = match iron::hip::device_count() {
        Ok(count) => count,
        Err(error) => {
            let message = error.to_string();
            assert!(message.starts_with("no AMD GPU found: "), "{message}");
            assert!(
                std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
                "no HIP runtime library here ({message}): `cargo xtask test` needs libamdhip64-5"
            );
            println!("skipped: no HIP runtime library here: {message}");
            return;
        }
    };
    if count > 0 {
        println!("skipped: this machine has {count} AMD GPU(s); the no-device path cannot run");
        return;
    }
    let message = Device::hip(0).unwrap_err().to_string();
    assert!(
        message.starts_with("no AMD GPU found: hipGetDeviceCount returned hipError"),
        "{message}"
    );
    assert!(Device::hip_devices().unwrap().is_empty());
    println!("{message}");
}

#[test]
#[ignore = "needs an AMD GPU"]
fn gpu_hip_device_properties_and_buffers() {
    let Some(device) = gpu() else { return };
    let properties = device.properties();
    println!("{device:?}: {properties:?}");
    assert!(properties.target.processor.starts_with("gfx"));
    assert!(matches!(properties.wave_size, 32 | 64));
    assert!(properties.compute_units > 0);
    assert!(properties.lds_per_workgroup >= 32 * 1024);
    assert!(properties.max_threads_per_block >= 256);
    let mut rng = StdRng::seed_from_u64(0x6869_7062);
    let data: Vec<u32> = (0..100_003).map(|_| rng.random()).collect();
    let mut buffer = DeviceBuffer::from_slice(&device, &data).unwrap();
    assert_eq!(buffer.to_vec().unwrap(), data);
    let stream = device.create_stream().unwrap();
    let other: Vec<u32> = (0..data.len()).map(|_| rng.random()).collect();
    stream.write(&mut buffer, &other).unwrap();
    let mut back = vec![0; data.len()];
    stream.read(&buffer, &mut back).unwrap();
    assert_eq!(back, other);
    buffer.zero().unwrap();
    assert!(buffer.to_vec().unwrap().iter().all(|&w| w == 0));
}

#[test]
#[ignore = "needs an AMD GPU and the code objects of `cargo xtask build` (IRON_ARTIFACTS)"]
fn gpu_hip_runs_the_library_kernels() {
    let Some(device) = gpu() else { return };
    let module = device.load_module(&built_bundle()).unwrap();
    let add = module.kernel(elementwise::add_f32).unwrap();
    let saxpy = module.kernel(elementwise::saxpy_f32).unwrap();
    let sum = module.kernel(reduce::sum_f32).unwrap();
    let stream = device.create_stream().unwrap();
    let mut rng = StdRng::seed_from_u64(0x6869_706b);
    for n in [0usize, 1, 3, 4, 5, 255, 256, 1000, 1 << 20] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
        let mut dy = DeviceBuffer::from_slice(&device, &y).unwrap();
        let mut dz = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
        let config = LaunchConfig::for_elements(n, 256);
        let start = stream.record_event().unwrap();
        // SAFETY: every buffer holds n elements and the kernels touch elements below n.
        unsafe {
            stream
                .launch(&add, config, (&dx, &dy, &mut dz, n as u32))
                .unwrap();
            stream
                .launch(&saxpy, config, (2.5, &dx, &mut dy, n as u32))
                .unwrap();
        }
        let end = stream.record_event().unwrap();
        stream.synchronize().unwrap();
        let z = dz.to_vec().unwrap();
        let y2 = dy.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(z[i], x[i] + y[i], "add_f32 n={n} i={i}");
            assert_eq!(y2[i], 2.5f32.mul_add(x[i], y[i]), "saxpy_f32 n={n} i={i}");
        }
        let groups = config.grid[0] as usize;
        let mut partials = DeviceBuffer::<f32>::zeros(&device, groups).unwrap();
        // SAFETY: x holds n elements, partials one per workgroup of the launch.
        unsafe {
            stream
                .launch(
                    &sum,
                    config.with_dynamic_lds(32),
                    (&dx, &mut partials, n as u32),
                )
                .unwrap();
        }
        let total: f64 = partials
            .to_vec()
            .unwrap()
            .iter()
            .map(|&p| f64::from(p))
            .sum();
        let expected: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert!(
            (total - expected).abs() <= 1e-3 * (n as f64).sqrt().max(1.0),
            "sum n={n}"
        );
        println!(
            "n={n}: add+saxpy in {:?}",
            end.elapsed_since(&start).unwrap()
        );
    }
}
