//! The bad-input catalogue of the Rust API, in one place: every way a caller can hand Iron
//! something wrong, each answered with an error value whose message is one line naming the
//! problem (and, where the caller can act, what to do), never a panic.
//!
//! | bad input | error |
//! | --- | --- |
//! | empty, random, truncated image | `DeviceError::CodeObject` (not ELF / truncated / malformed) |
//! | another machine's ELF | `CodeObjectError::WrongMachine` |
//! | code object or bundle without the device's gfx | `DeviceError::NoCodeObjectForDevice` (names the `cargo xtask build --gfx` to run) |
//! | unknown kernel | `LaunchError::NoSuchKernel` (lists the module's kernels) |
//! | wrong argument count, size, kind | `LaunchError::ArgumentCount` / `ArgumentSize` / `ArgumentKind` |
//! | buffer too small for a library call's shape | `LibraryError::BufferTooShort` |
//! | block above the kernel's bounds, zero grid, LDS above the limit | `LaunchError::BlockTooLarge` / `EmptyGrid` / `LdsTooLarge` |
//! | missing or too-old HIP runtime | `BackendError::NoDevice` (names `IRON_HIP_LIBRARY`) |
//! | out-of-bounds access, `s_trap`, never-ending kernel (emulator) | `BackendError::KernelFault`; the device stays usable |
//! | an access into a live buffer the launch did not pass (emulator) | `BackendError::KernelFault` naming it a wild pointer |
//!
//! Finer-grained variants live next to the code: `host/code-object/tests/code_object_*.rs` (every
//! truncation, malformed metadata and bundles), `host/tests/launch_checks.rs` and
//! `launch_kernarg.rs` (every launch check), `tests/tests/emu_*.rs` (each library method's
//! shapes), `tests/tests/hip_stand_in.rs` (the same errors through the HIP path), and
//! `xtask/tests/bad_input_cli.rs` for the command line.

use std::fmt::Display;
use std::path::PathBuf;
use std::process::Command;

use iron::code_object::{Bundle, CodeObjectError};
use iron::emulator::{Checks, Emulator};
use iron::launch::LaunchArg;
use iron::library::{Library, LibraryError};
use iron::{BackendError, Device, DeviceBuffer, DeviceError, LaunchConfig, LaunchError, Module};
use iron_kernels::elementwise::add_f32;
use iron_tests::Artifacts;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Asserts that `error`'s message is one non-empty line holding every needle.
fn assert_one_line(error: &impl Display, needles: &[&str]) {
    let message = error.to_string();
    assert!(!message.is_empty(), "empty message");
    assert!(!message.contains('\n'), "more than one line: {message}");
    for needle in needles {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
}

/// The gfx950 emulator as a device.
fn gfx950() -> (Emulator, Device) {
    let emulator = Emulator::new("gfx950").expect("the emulator models gfx950");
    let device = emulator.device();
    (emulator, device)
}

/// The bytes of the library's bare code object for `gfx` (the default wave size) from the
/// device build.
fn built_code_object(gfx: &str) -> Vec<u8> {
    let artifacts = Artifacts::load();
    let target = artifacts
        .targets
        .iter()
        .filter(|t| t.gfx == gfx)
        .min_by_key(|t| t.wave)
        .unwrap_or_else(|| panic!("the device build holds no {gfx} code object"));
    std::fs::read(&target.code_object)
        .unwrap_or_else(|e| panic!("{}: {e}", target.code_object.display()))
}

/// The library bundle of the device build.
fn built_bundle() -> Vec<u8> {
    std::fs::read(Artifacts::load().dir.join("kernels.bundle")).expect("kernels.bundle")
}

#[test]
fn empty_and_random_images_are_code_object_errors() {
    let (_emulator, device) = gfx950();
    let error = device.load_module(&[]).unwrap_err();
    assert_one_line(&error, &["truncated ELF header"]);
    let mut rng = StdRng::seed_from_u64(0xbad_1a9e);
    for len in [1, 3, 16, 64, 1000, 70_000] {
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let error = device.load_module(&bytes).unwrap_err();
        assert!(matches!(error, DeviceError::CodeObject(_)), "{error:?}");
        assert_one_line(&error, &[]);
        // The same bytes behind an ELF magic get past the first check and still fail cleanly.
        bytes.splice(0..len.min(4), *b"\x7fELF");
        let error = device.load_module(&bytes).unwrap_err();
        assert!(matches!(error, DeviceError::CodeObject(_)), "{error:?}");
        assert_one_line(&error, &[]);
    }
}

#[test]
fn another_machines_elf_is_refused_by_name() {
    let (_emulator, device) = gfx950();
    // This test's own executable: an x86-64 ELF file.
    let host_elf = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let error = device.load_module(&host_elf).unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::CodeObject(CodeObjectError::WrongMachine(_))
        ),
        "{error:?}"
    );
    assert_one_line(&error, &["expected an AMDGPU code object"]);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn truncated_code_objects_are_errors_at_every_length() {
    let (_emulator, device) = gfx950();
    let image = built_code_object("gfx950");
    let mut rng = StdRng::seed_from_u64(0x7c0de);
    let mut cuts: Vec<usize> = (0..64).map(|_| rng.random_range(0..image.len())).collect();
    cuts.extend([0, 1, 4, 63, 64, 65, image.len() / 2, image.len() - 1]);
    for cut in cuts {
        let error = device.load_module(&image[..cut]).unwrap_err();
        assert!(
            matches!(error, DeviceError::CodeObject(_)),
            "cut {cut}: {error:?}"
        );
        assert_one_line(&error, &[]);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn code_for_another_gfx_names_the_build_to_run() {
    let emulator = Emulator::new("gfx1100").unwrap();
    let device = emulator.device();
    let error = device
        .load_module(&built_code_object("gfx950"))
        .unwrap_err();
    assert!(
        matches!(error, DeviceError::NoCodeObjectForDevice { .. }),
        "{error:?}"
    );
    assert_one_line(&error, &["gfx950", "cargo xtask build --gfx gfx1100"]);

    let bundle = Bundle::parse(&built_bundle()).unwrap();
    let mut without = Bundle::new();
    for entry in bundle.entries() {
        if entry
            .id
            .target_id
            .as_ref()
            .is_none_or(|t| t.processor != "gfx1100")
        {
            without.push(entry.id.clone(), entry.data.clone()).unwrap();
        }
    }
    let error = device.load_module(&without.write()).unwrap_err();
    assert!(
        matches!(error, DeviceError::NoCodeObjectForDevice { .. }),
        "{error:?}"
    );
    assert_one_line(&error, &["gfx950", "cargo xtask build --gfx gfx1100"]);
}

/// The gfx950 emulator with the library's code object loaded.
fn library_module() -> (Emulator, Device, Module) {
    let (emulator, device) = gfx950();
    let module = device
        .load_module(&built_code_object("gfx950"))
        .expect("the library loads");
    (emulator, device, module)
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn an_unknown_kernel_lists_the_kernels_there_are() {
    let (_emulator, _device, module) = library_module();
    let error = module.kernel_by_name("add_f33").unwrap_err();
    assert!(
        matches!(error, DeviceError::Launch(LaunchError::NoSuchKernel { .. })),
        "{error:?}"
    );
    assert_one_line(&error, &["no kernel add_f33", "add_f32"]);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn wrong_argument_count_size_or_kind_is_refused_before_the_launch() {
    let (emulator, device, module) = library_module();
    let add = module.kernel_by_name("add_f32").unwrap();
    let n = 64usize;
    let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
    let buffer = |b: &DeviceBuffer<f32>| LaunchArg::Buffer {
        address: b.address(),
        device: &device,
    };
    let count = (n as u32).to_le_bytes();
    let wide_count = (n as u64).to_le_bytes();
    let config = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
    let cases: Vec<(Vec<LaunchArg<'_>>, &[&str])> = vec![
        (vec![buffer(&a)], &["add_f32 takes 4 arguments, got 1"]),
        (
            vec![
                buffer(&a),
                buffer(&a),
                buffer(&c),
                LaunchArg::value(&count),
                LaunchArg::value(&count),
            ],
            &["takes 4 arguments, got 5"],
        ),
        (
            vec![
                buffer(&a),
                buffer(&a),
                buffer(&c),
                LaunchArg::value(&wide_count),
            ],
            &["argument 4 of 4", "expects 4 bytes", "passes 8 bytes"],
        ),
        (
            vec![
                buffer(&a),
                LaunchArg::value(&count),
                buffer(&c),
                LaunchArg::value(&count),
            ],
            &["argument 2 of 4", "global_buffer"],
        ),
    ];
    for (args, needles) in cases {
        // SAFETY: every case is refused before anything runs.
        let error =
            unsafe { device.default_stream().launch_untyped(&add, config, &args) }.unwrap_err();
        assert!(matches!(error, DeviceError::Launch(_)), "{error:?}");
        assert_one_line(&error, needles);
    }
    assert!(
        emulator.take_counters().is_empty(),
        "nothing was dispatched"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn bad_geometry_is_refused_before_the_launch() {
    let (emulator, device, module) = library_module();
    let add = module.kernel(add_f32).unwrap();
    let n = 64usize;
    let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; n]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
    let max = add.kernel().metadata().max_flat_workgroup_size;
    let limit = device.properties().lds_per_workgroup;
    let cases: Vec<(LaunchConfig, Vec<String>)> = vec![
        (
            LaunchConfig::new([1, 1, 1], [max * 2, 1, 1]),
            vec![format!(
                "block of {} exceeds add_f32's declared maximum of {max}",
                max * 2
            )],
        ),
        (
            LaunchConfig::new([0, 1, 1], [256, 1, 1]),
            vec!["zero dimension".into(), "at least one workgroup".into()],
        ),
        (
            LaunchConfig::new([1, 1, 1], [64, 1, 1]),
            vec!["add_f32 requires a block of [256, 1, 1], got [64, 1, 1]".into()],
        ),
        (
            LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_dynamic_lds(limit + 1),
            vec![format!("above the device's {limit} bytes per workgroup")],
        ),
    ];
    for (config, needles) in cases {
        // SAFETY: every case is refused before anything runs.
        let error = unsafe {
            device
                .default_stream()
                .launch(&add, config, (&a, &a, &mut c, n as u32))
        }
        .unwrap_err();
        assert!(matches!(error, DeviceError::Launch(_)), "{error:?}");
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_one_line(&error, &needles);
    }
    assert!(
        emulator.take_counters().is_empty(),
        "nothing was dispatched"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_buffer_too_small_for_a_library_shape_is_refused() {
    let (emulator, device, module) = library_module();
    let library = Library::from_module(module).unwrap();
    let stream = device.default_stream();
    let x = DeviceBuffer::from_slice(&device, &vec![1.0f32; 100]).unwrap();
    let weight = DeviceBuffer::from_slice(&device, &[1.0f32; 16]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeros(&device, 128).unwrap();
    let error = library
        .rmsnorm(&stream, &x, &weight, 1e-6, &mut y, 8, 16)
        .unwrap_err();
    assert!(
        matches!(error, LibraryError::BufferTooShort { .. }),
        "{error:?}"
    );
    assert_one_line(
        &error,
        &["rmsnorm: x holds 100 elements, rows * cols = 128"],
    );
    let mut out = DeviceBuffer::<f32>::zeros(&device, 10).unwrap();
    let error = library.add(&stream, &x, &x, &mut out, 100).unwrap_err();
    assert_one_line(&error, &["add: out holds 10 elements, n = 100"]);
    assert!(
        emulator.take_counters().is_empty(),
        "nothing was dispatched"
    );
}

/// The HIP runtime library the child process is pointed at, and what its error must say.
const HIP_PROBE_ENV: &str = "IRON_BAD_INPUT_HIP_PROBE";

/// Run in a child process by `a_missing_or_too_old_hip_runtime_is_an_error` (the runtime is
/// loaded once per process): prints the error of opening HIP device 0.
#[test]
fn hip_runtime_probe() {
    if std::env::var_os(HIP_PROBE_ENV).is_none() {
        return;
    }
    match Device::hip(0) {
        Ok(_) => println!("probe: opened"),
        Err(error) => {
            assert!(matches!(
                error,
                DeviceError::Backend(BackendError::NoDevice(_))
            ));
            println!("probe: {error}");
        }
    }
}

#[test]
fn a_missing_or_too_old_hip_runtime_is_an_error() {
    // A path that does not exist, and a library that lacks the HIP functions (as a runtime
    // older than the one Iron binds would).
    let cases: [(PathBuf, &[&str]); 2] = [
        (
            PathBuf::from("/nonexistent/libamdhip64.so"),
            &["no HIP runtime library could be loaded", "IRON_HIP_LIBRARY"],
        ),
        (
            PathBuf::from("libc.so.6"),
            &["not a usable HIP runtime", "hipInit", "IRON_HIP_LIBRARY"],
        ),
    ];
    for (library, needles) in cases {
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "hip_runtime_probe", "--nocapture"])
            .env(HIP_PROBE_ENV, "1")
            .env("IRON_HIP_LIBRARY", &library)
            .output()
            .expect("the test executable runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{}: {stdout}", library.display());
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("probe: "))
            .unwrap_or_else(|| panic!("{}: no probe line in {stdout}", library.display()));
        assert_one_line(&line, needles);
    }
}

/// The gfx950 library code object with the first instruction of `add_f32` replaced by `word`.
fn add_f32_starting_with(word: u32) -> Vec<u8> {
    let mut image = built_code_object("gfx950");
    let code_object = iron::code_object::CodeObject::parse(&image).unwrap();
    let code = code_object.kernel("add_f32").unwrap().code();
    let probe = &code[..code.len().min(64)];
    let at = image
        .windows(probe.len())
        .position(|w| w == probe)
        .expect("the kernel's code lies in the file");
    image[at..at + 4].copy_from_slice(&word.to_le_bytes());
    image
}

/// Launches `add_f32` from `image` on `n` elements, with `a` replaced by `a_address` when given.
fn launch_add(
    device: &Device,
    image: &[u8],
    a_address: Option<u64>,
) -> Result<Vec<f32>, DeviceError> {
    let module = device.load_module(image)?;
    let add = module.kernel_by_name("add_f32")?;
    let n = 64usize;
    let a = DeviceBuffer::from_slice(device, &vec![1.0f32; n])?;
    let b = DeviceBuffer::from_slice(device, &vec![2.0f32; n])?;
    let c = DeviceBuffer::<f32>::zeros(device, n)?;
    let count = (n as u32).to_le_bytes();
    let args = [
        LaunchArg::Buffer {
            address: a_address.unwrap_or(a.address()),
            device,
        },
        LaunchArg::Buffer {
            address: b.address(),
            device,
        },
        LaunchArg::Buffer {
            address: c.address(),
            device,
        },
        LaunchArg::value(&count),
    ];
    let config = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
    // SAFETY: the emulator checks every access against its allocations: a bogus address or a
    // patched kernel ends in a fault value, never in a host memory access.
    unsafe {
        device
            .default_stream()
            .launch_untyped(&add, config, &args)?
    };
    c.to_vec()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn device_faults_are_errors_and_the_device_stays_usable() {
    let (emulator, device) = gfx950();
    emulator.set_instruction_budget(100_000);
    let image = built_code_object("gfx950");
    // s_trap 2, and s_branch -1 (a branch to itself, which never ends).
    let trapping = add_f32_starting_with(0xbf92_0002);
    let looping = add_f32_starting_with(0xbf82_ffff);
    let cases: [(&[u8], Option<u64>, &[&str]); 3] = [
        (
            &image,
            Some(0x10),
            &["memory fault", "0x10", "outside every live buffer"],
        ),
        (&trapping, None, &["s_trap 2", "device-side abort"]),
        (
            &looping,
            None,
            &[
                "instruction budget of 100000",
                "workgroups finished",
                "set_instruction_budget",
                "wave 0 at pc 0x",
                "running: `s_branch 65535`",
            ],
        ),
    ];
    for (faulting, a_address, needles) in cases {
        let error = launch_add(&device, faulting, a_address).unwrap_err();
        assert!(
            matches!(
                error,
                DeviceError::Backend(BackendError::KernelFault { .. })
            ),
            "{error:?}"
        );
        assert_one_line(&error, needles);
        // The fault left the device usable: the real kernel runs and is right.
        assert_eq!(launch_add(&device, &image, None).unwrap(), vec![3.0f32; 64]);
    }
}

/// Launches `gather_b32` to copy row `row` (4 elements) of `table`, the launch claiming a
/// vocabulary of `u32::MAX` rows whatever the table holds; returns the copied row.
fn gather_row(
    device: &Device,
    module: &Module,
    table: &DeviceBuffer<u32>,
    row: u32,
) -> Result<Vec<u32>, DeviceError> {
    let gather = module.kernel_by_name("gather_b32")?;
    let indices = DeviceBuffer::from_slice(device, &[row])?;
    let out = DeviceBuffer::<u32>::zeros(device, 4)?;
    let [n, vocab, dim] = [1u32, u32::MAX, 4].map(u32::to_le_bytes);
    let buffer = |address| LaunchArg::Buffer { address, device };
    let args = [
        buffer(table.address()),
        buffer(indices.address()),
        buffer(out.address()),
        LaunchArg::value(&n),
        LaunchArg::value(&vocab),
        LaunchArg::value(&dim),
    ];
    let config = LaunchConfig::new([1, 1, 1], [4, 1, 1]);
    // SAFETY: the emulator checks every access against its allocations: a row past the table
    // ends in a fault value or in another emulated buffer, never in host memory.
    unsafe {
        device
            .default_stream()
            .launch_untyped(&gather, config, &args)?
    };
    out.to_vec()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_read_of_a_live_buffer_the_launch_did_not_pass_is_a_kernel_fault() {
    let (emulator, device, module) = library_module();
    let mut rng = StdRng::seed_from_u64(22);
    let table = DeviceBuffer::from_slice(&device, &[7u32; 64]).unwrap();
    let secret: Vec<u32> = (0..1024).map(|_| rng.random()).collect();
    let other = DeviceBuffer::from_slice(&device, &secret).unwrap();
    assert_eq!(gather_row(&device, &module, &table, 15).unwrap(), [7; 4]);
    // An overstated vocabulary lets a bad index reach the buffer after the table's guard gap.
    let into_other = (other.address() - table.address()) / 16 + 2;
    let row = u32::try_from(into_other).unwrap();
    let error = gather_row(&device, &module, &table, row).unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::Backend(BackendError::KernelFault { .. })
        ),
        "{error:?}"
    );
    assert_one_line(
        &error,
        &[
            "gather_b32",
            "a buffer the launch did not pass to the kernel",
            "wild pointer",
        ],
    );
    // Without the check the read succeeds, as on hardware, and copies the other buffer's bytes.
    emulator.set_checks(Checks {
        buffers: false,
        ..Checks::ALL
    });
    let leaked = gather_row(&device, &module, &table, row).unwrap();
    let at = (table.address() + 16 * u64::from(row) - other.address()) as usize / 4;
    assert_eq!(leaked, secret[at..at + 4]);
}
