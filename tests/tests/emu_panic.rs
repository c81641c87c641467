//! Panic messages on every emulated build, from `tests/device-probe`'s `panic` module: a failed
//! check in one chosen work-item makes the launch fail with a [`DevicePanic`] naming the file,
//! line and column of the check, the work-item's workgroup, wave and lane, and the message with
//! its values (a bounds check's index and length, a slice range, `iron_intrinsics`' `assert!`,
//! `assert_eq!`, `assert_ne!`, `panic!` and `unreachable!` with their arguments,
//! `Option::expect`, `Result::expect`, `copy_from_slice`); the error's `Display` says the same,
//! and the module runs correctly again afterwards. `core`'s `assert!` records its constant
//! message, and says that its formatted one is not recorded. Seeded random inputs and
//! positions, sizes that are not a multiple of the wave or the workgroup.
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

/// The 1-based line and column where `needle` first starts in the probe's source after the
/// line declaring `kernel`.
fn position(kernel: &str, needle: &str) -> (u32, u32) {
    let declaration = format!("pub fn {kernel}(");
    SOURCE
        .lines()
        .enumerate()
        .skip_while(|(_, line)| !line.contains(&declaration))
        .find_map(|(i, line)| line.find(needle).map(|c| (i as u32 + 1, c as u32 + 1)))
        .unwrap_or_else(|| panic!("{needle} is not in {kernel}"))
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

/// One emulated build's probe module.
struct Probe {
    build: &'static str,
    device: Device,
    module: Module,
    wave: u32,
}

impl Probe {
    fn load(build: &'static str) -> Probe {
        let (device, module) = fixtures::load("device-probe", build);
        let wave = wave(build, &device);
        Probe {
            build,
            device,
            module,
            wave,
        }
    }

    /// Checks that `kernel` computes `want` from `x`.
    fn check_runs(&self, kernel: &str, x: &[u32], want: &[u32]) {
        assert_eq!(
            run(&self.device, &self.module, kernel, x).unwrap(),
            want,
            "{} {kernel} n = {}",
            self.build,
            x.len()
        );
    }

    /// Runs `kernel` on `x` with `x[at] = value` and checks that work-item `at` panicked at
    /// `site` with `message` (`None`: a message with arguments the device did not record).
    /// Returns the panic.
    fn check_panics(
        &self,
        kernel: &str,
        x: &[u32],
        (at, value): (u32, u32),
        site: (u32, u32),
        message: Option<&str>,
    ) -> DevicePanic {
        let mut bad = x.to_vec();
        bad[at as usize] = value;
        let what = format!("{} {kernel} n = {}, x[{at}] = {value}", self.build, x.len());
        let (panic, text) = panic_of(run(&self.device, &self.module, kernel, &bad), &what);
        let local = at % BLOCK;
        assert_eq!(panic.workgroup, [at / BLOCK, 0, 0], "{what}");
        assert_eq!(
            (panic.wave, panic.lane),
            (local / self.wave, local % self.wave),
            "{what}"
        );
        assert!(
            panic.file.ends_with("src/panic.rs"),
            "{what}: {}",
            panic.file
        );
        assert_eq!((panic.line, panic.column), site, "{what}");
        assert_eq!(panic.message.as_deref(), message, "{what}");
        let head = format!(
            "kernel {kernel} faulted: panicked at {}:{}:{} in workgroup ({}, 0, 0) wave {} lane {}: ",
            panic.file,
            site.0,
            site.1,
            at / BLOCK,
            panic.wave,
            panic.lane
        );
        assert!(text.starts_with(&head), "{what}: {text}");
        match message {
            Some(message) => assert!(
                text[head.len()..].starts_with(&format!("{message}; ")),
                "{what}: {text}"
            ),
            None => assert!(
                text[head.len()..].starts_with("a message with arguments")
                    && text.contains("use iron_intrinsics::panic!, assert!"),
                "{what}: {text}"
            ),
        }
        panic
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_failed_bounds_check_reports_its_index_and_length() {
    let mut rng = StdRng::seed_from_u64(0xb_00d5);
    let site = position("lookup", "table[table[i as usize] as usize]");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [1u32, 100, 257, 1000] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..n)).collect();
            let want: Vec<u32> = x.iter().map(|&j| x[j as usize]).collect();
            probe.check_runs("lookup", &x, &want);
            let at = rng.random_range(0..n);
            let index = n + rng.random_range(0..1000);
            let message = format!("index out of bounds: the len is {n} but the index is {index}");
            probe.check_panics("lookup", &x, (at, index), site, Some(&message));
            probe.check_runs("lookup", &x, &want);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_failed_slice_range_reports_which_bound_and_its_values() {
    let mut rng = StdRng::seed_from_u64(0x0051_1ce5);
    // A range index's location is its bracket, where rustc puts it.
    let site = position("slice_sum", "[(v & 0xffff)");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [3u32, 200, 300] {
            let x: Vec<u32> = (0..n)
                .map(|_| {
                    let start = rng.random_range(0..=n);
                    start | rng.random_range(start..=n) << 16
                })
                .collect();
            let want: Vec<u32> = x
                .iter()
                .map(|&v| {
                    x[(v & 0xffff) as usize..(v >> 16) as usize]
                        .iter()
                        .fold(0u32, |s, &t| s.wrapping_add(t))
                })
                .collect();
            probe.check_runs("slice_sum", &x, &want);
            let at = rng.random_range(0..n);
            let beyond = n + rng.random_range(1..1000);
            let start = rng.random_range(1..=n);
            let end = rng.random_range(0..start);
            for (value, message) in [
                (
                    beyond | rng.random_range(0..=n) << 16,
                    format!("range start index {beyond} out of range for slice of length {n}"),
                ),
                (
                    end | beyond << 16,
                    format!("range end index {beyond} out of range for slice of length {n}"),
                ),
                (
                    start | end << 16,
                    format!("slice index starts at {start} but ends at {end}"),
                ),
            ] {
                probe.check_panics("slice_sum", &x, (at, value), site, Some(&message));
            }
            probe.check_runs("slice_sum", &x, &want);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn core_assertions_record_constant_messages_and_say_when_they_cannot() {
    let mut rng = StdRng::seed_from_u64(0xa5_5e27);
    let constant = position("checked_divide", "::core::assert!(v != 7");
    let formatted = position("checked_divide", "::core::assert!(v != 1");
    let division = position("checked_divide", "1000 / v");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [1u32, 63, 300] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(8..100_000)).collect();
            let want: Vec<u32> = x.iter().map(|v| 1000 / v).collect();
            probe.check_runs("checked_divide", &x, &want);
            for (value, site, message) in [
                (7, constant, Some("seven is not a divisor here")),
                (1, formatted, None),
                (0, division, Some("attempt to divide by zero")),
            ] {
                let at = rng.random_range(0..n);
                probe.check_panics("checked_divide", &x, (at, value), site, message);
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn iron_assertions_record_their_arguments() {
    let mut rng = StdRng::seed_from_u64(0x00a5_5e27);
    let quarter = position("quarter", "assert!(");
    let even = position("residue", "assert_eq!(v % 2");
    let not_four = position("residue", "assert_ne!(v % 8");
    let residue = position("residue", "assert_eq!(Residue");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [1u32, 70, 300] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..1_000_000)).collect();
            let want: Vec<u32> = x.iter().map(|v| v / 4).collect();
            probe.check_runs("checked_quarter", &x, &want);
            let at = rng.random_range(0..n);
            let large = rng.random_range(1_000_000..4_000_000);
            let message = format!(
                "x[{at}] = {large} is too large (a quarter: {:.2})",
                large as f32 * 0.25
            );
            probe.check_panics("checked_quarter", &x, (at, large), quarter, Some(&message));

            let x: Vec<u32> = (0..n).map(|_| 8 * rng.random_range(0..100_000)).collect();
            let want: Vec<u32> = x.iter().map(|v| v / 8).collect();
            probe.check_runs("checked_residues", &x, &want);
            let at = rng.random_range(0..n);
            let base = 8 * rng.random_range(0..100_000);
            let odd = base + 2 * rng.random_range(0..4) + 1;
            probe.check_panics(
                "checked_residues",
                &x,
                (at, odd),
                even,
                Some("assertion `left == right` failed\n  left: 1\n right: 0"),
            );
            let message = format!(
                "assertion `left != right` failed: x[{at}] = {}\n  left: 4\n right: 4",
                base + 4
            );
            probe.check_panics(
                "checked_residues",
                &x,
                (at, base + 4),
                not_four,
                Some(&message),
            );
            let note = "(not recorded: not an integer, float, bool, &str or pointer)";
            let message = format!(
                "assertion `left == right` failed: x[{at}]\n  left: {note}\n right: {note}"
            );
            let two_or_six = base + [2, 6][rng.random_range(0..2)];
            probe.check_panics(
                "checked_residues",
                &x,
                (at, two_or_six),
                residue,
                Some(&message),
            );
            probe.check_runs("checked_residues", &x, &want);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn iron_panic_and_unreachable_record_their_arguments() {
    let mut rng = StdRng::seed_from_u64(0xf1a9);
    let panic_site = position("flag", "panic!(");
    let unreachable_site = position("flag", "unreachable!(");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [1u32, 90, 513] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..u32::MAX - 1)).collect();
            let want: Vec<u32> = x.iter().map(|v| v + 1).collect();
            probe.check_runs("flagged", &x, &want);
            let at = rng.random_range(0..n);
            let local = at % BLOCK;
            let message = format!(
                "x[{at}] = 0xffffffff in wave {} lane {}: true (all ones)",
                local / probe.wave,
                local % probe.wave
            );
            probe.check_panics("flagged", &x, (at, u32::MAX), panic_site, Some(&message));
            let message = format!(
                "internal error: entered unreachable code: x[{at}] = {}",
                u32::MAX - 1
            );
            probe.check_panics(
                "flagged",
                &x,
                (at, u32::MAX - 1),
                unreachable_site,
                Some(&message),
            );
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn expect_unwrap_and_copy_from_slice_record_their_messages() {
    let mut rng = StdRng::seed_from_u64(0xe4_9ec7);
    let divisor = position("unwrapped", "expect(\"a zero divisor\")");
    let byte = position("unwrapped", "expect(\"v - 1 fits in a byte\")");
    let copy = position("unwrapped", "copy_from_slice(");
    for build in BUILDS {
        let probe = Probe::load(build);
        for n in [4u32, 65, 260] {
            let x: Vec<u32> = (0..n)
                .map(|_| match rng.random_range(0..4) {
                    0 => 2 << 16 | rng.random_range(0..0x1_0000),
                    _ => rng.random_range(1..=256),
                })
                .collect();
            let want: Vec<u32> = x
                .iter()
                .map(|&v| {
                    if v >= 0x1_0000 {
                        x[0] ^ x[1]
                    } else {
                        1000 / v + (v - 1)
                    }
                })
                .collect();
            probe.check_runs("unwrapped", &x, &want);
            let at = rng.random_range(0..n);
            probe.check_panics("unwrapped", &x, (at, 0), divisor, Some("a zero divisor"));
            probe.check_panics(
                "unwrapped",
                &x,
                (at, rng.random_range(258..0x1_0000)),
                byte,
                Some("v - 1 fits in a byte: (the error value is not recorded)"),
            );
            let length = [1, 3, 4][rng.random_range(0..3)];
            let message = format!(
                "copy_from_slice: source slice length ({length}) does not match destination \
                 slice length (2)"
            );
            probe.check_panics(
                "unwrapped",
                &x,
                (at, length << 16 | rng.random_range(0..0x1_0000)),
                copy,
                Some(&message),
            );
            probe.check_runs("unwrapped", &x, &want);
        }
    }
}
