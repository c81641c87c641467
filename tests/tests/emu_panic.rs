//! Panic messages on every emulated build, from `tests/device-probe`'s `panic` module: a failed
//! bounds check, a failed `assert!` and a division by zero in one chosen work-item make the
//! launch fail with a [`DevicePanic`] naming the file, line and column of the check, the
//! work-item's workgroup, wave and lane, and the message when it is a constant; the error's
//! `Display` says the same, and the module runs correctly again afterwards. Seeded random
//! inputs and positions, sizes that are not a multiple of the wave or the workgroup.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/device-probe/<build>/
//! kernels.co`, so this test is ignored under plain `cargo test`.

use iron::device::BackendError;
use iron::device_panic::DevicePanic;
use iron::launch::LaunchArg;
use iron::{Device, DeviceBuffer, DeviceError, LaunchConfig, Module};
use iron_tests::fixtures::{self, EMULATED_BUILDS as BUILDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Work-items per workgroup.
const BLOCK: u32 = 256;

/// The probe's source, to find the checks' lines and columns in.
const SOURCE: &str = include_str!("../device-probe/src/panic.rs");

/// The 1-based line and column where `needle` starts in the probe's source.
fn position(needle: &str) -> (u32, u32) {
    SOURCE
        .lines()
        .enumerate()
        .find_map(|(i, line)| line.find(needle).map(|c| (i as u32 + 1, c as u32 + 1)))
        .unwrap_or_else(|| panic!("{needle} is not in the probe"))
}

/// The wave size of `build`'s code object (`-w64`: RDNA in wave64).
fn wave(build: &str, device: &Device) -> u32 {
    if build.ends_with("-w64") {
        64
    } else {
        device.properties().wave_size
    }
}

/// Runs `kernel(x, y, n)` and returns `y`, or the launch's error.
fn run(device: &Device, module: &Module, kernel: &str, x: &[u32]) -> Result<Vec<u32>, DeviceError> {
    let n = x.len() as u32;
    let kernel = module.kernel_by_name(kernel).unwrap();
    let dx = DeviceBuffer::from_slice(device, x).unwrap();
    let y = DeviceBuffer::from_slice(device, &vec![0xdead_beefu32; x.len()]).unwrap();
    let args = [
        LaunchArg::Buffer {
            address: dx.address(),
            device,
        },
        LaunchArg::Buffer {
            address: y.address(),
            device,
        },
        LaunchArg::value(&n.to_le_bytes()),
    ];
    let config = LaunchConfig::new([n.div_ceil(BLOCK), 1, 1], [BLOCK, 1, 1]);
    let stream = device.default_stream();
    // SAFETY: x and y hold n elements.
    unsafe { stream.launch_untyped(&kernel, config, &args) }?;
    stream.synchronize()?;
    Ok(y.to_vec().unwrap())
}

/// The panic of a launch that must have panicked, with its error's text.
fn panic_of(result: Result<Vec<u32>, DeviceError>, what: &str) -> (DevicePanic, String) {
    match result {
        Err(error @ DeviceError::Backend(BackendError::KernelFault { .. })) => {
            let text = error.to_string();
            let DeviceError::Backend(BackendError::KernelFault { panic, .. }) = error else {
                unreachable!()
            };
            (
                *panic.unwrap_or_else(|| panic!("{what}: no panic record in {text}")),
                text,
            )
        }
        other => panic!("{what}: expected a kernel fault, got {other:?}"),
    }
}

/// Checks that `panic` names work-item `at` and the check at `(line, column)`.
fn check_site(panic: &DevicePanic, what: &str, at: u32, wave: u32, (line, column): (u32, u32)) {
    let local = at % BLOCK;
    assert_eq!(panic.workgroup, [at / BLOCK, 0, 0], "{what}");
    assert_eq!(
        (panic.wave, panic.lane),
        (local / wave, local % wave),
        "{what}"
    );
    assert!(
        panic.file.ends_with("src/panic.rs"),
        "{what}: {}",
        panic.file
    );
    assert_eq!((panic.line, panic.column), (line, column), "{what}");
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_failed_bounds_check_names_its_site_and_work_item() {
    let mut rng = StdRng::seed_from_u64(0xb_00d5);
    let site = position("table[table[i as usize] as usize]");
    for build in BUILDS {
        let (device, module) = fixtures::load("device-probe", build);
        let wave = wave(build, &device);
        for n in [1u32, 100, 257, 1000] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..n)).collect();
            let want: Vec<u32> = x.iter().map(|&j| x[j as usize]).collect();
            assert_eq!(
                run(&device, &module, "lookup", &x).unwrap(),
                want,
                "{build} n = {n}"
            );
            let at = rng.random_range(0..n);
            let mut bad = x.clone();
            bad[at as usize] = n + rng.random_range(0..1000);
            let what = format!("{build} n = {n}, x[{at}] = {}", bad[at as usize]);
            let (panic, text) = panic_of(run(&device, &module, "lookup", &bad), &what);
            check_site(&panic, &what, at, wave, site);
            assert_eq!(
                panic.message, None,
                "{what}: a bounds check's message has arguments"
            );
            assert!(
                text.contains(&format!("panicked at {}:{}:{}", panic.file, site.0, site.1)),
                "{text}"
            );
            assert!(text.contains("a message with arguments"), "{text}");
            assert_eq!(
                run(&device, &module, "lookup", &x).unwrap(),
                want,
                "{build}: after the panic"
            );
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_failed_assertion_and_a_division_by_zero_report_their_messages() {
    let mut rng = StdRng::seed_from_u64(0xa5_5e27);
    let assertion = position("assert!(v != 7");
    let division = position("1000 / v");
    for build in BUILDS {
        let (device, module) = fixtures::load("device-probe", build);
        let wave = wave(build, &device);
        for n in [1u32, 63, 300] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(8..100_000)).collect();
            let want: Vec<u32> = x.iter().map(|v| 1000 / v).collect();
            assert_eq!(
                run(&device, &module, "checked_divide", &x).unwrap(),
                want,
                "{build}"
            );
            for (value, site, message) in [
                (7, assertion, "seven is not a divisor here"),
                (0, division, "attempt to divide by zero"),
            ] {
                let at = rng.random_range(0..n);
                let mut bad = x.clone();
                bad[at as usize] = value;
                let what = format!("{build} n = {n}, x[{at}] = {value}");
                let (panic, text) = panic_of(run(&device, &module, "checked_divide", &bad), &what);
                check_site(&panic, &what, at, wave, site);
                assert_eq!(panic.message.as_deref(), Some(message), "{what}");
                assert!(
                    text.contains(&format!("lane {}: {message}", panic.lane)),
                    "{text}"
                );
            }
        }
    }
}
