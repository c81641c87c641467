//! Device printing (`iron_intrinsics::print!`) on every emulated build, from
//! `tests/device-probe`'s `print` module: the output is checked line by line against glibc's
//! `snprintf` on the C format each template must translate to (what the HIP runtime prints on
//! ROCm), with seeded random values and edge values, sizes that are not a multiple of the wave
//! or the workgroup, frames of different sizes in one wave, and a buffer too small for the
//! output. The order is checked too: one call's lines from one wave are contiguous and in lane
//! order.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/device-probe/<build>/
//! kernels.co`, so this test is ignored under plain `cargo test`.

use std::collections::HashSet;
use std::ffi::{CString, c_char, c_int};
use std::sync::{Arc, Mutex};

use iron::code_object::ArgValueKind;
use iron::emulator::Emulator;
use iron::launch::LaunchArg;
use iron::print::DROPPED_LINE;
use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use iron_tests::fixtures::{self, EMULATED_BUILDS as BUILDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

unsafe extern "C" {
    /// glibc's, the oracle: the HIP runtime hands each frame to the C library's printf.
    fn snprintf(buffer: *mut c_char, size: usize, format: *const c_char, ...) -> c_int;
}

/// Work-items per workgroup of every launch here.
const BLOCK: u32 = 256;

/// An emulator of `build` with the probe loaded, and what its kernels print.
struct Printing {
    emulator: Emulator,
    device: Device,
    module: Module,
    printed: Arc<Mutex<String>>,
    build: &'static str,
}

impl Printing {
    fn new(build: &'static str) -> Printing {
        let gfx = build.split('-').next().unwrap_or(build);
        let emulator = Emulator::new(gfx).unwrap();
        let printed = Arc::new(Mutex::new(String::new()));
        let into = Arc::clone(&printed);
        emulator.set_print_sink(Box::new(move |text| into.lock().unwrap().push_str(text)));
        let device = emulator.device();
        let module = device
            .load_module(&fixtures::code_object("device-probe", build))
            .unwrap();
        Printing {
            emulator,
            device,
            module,
            printed,
            build,
        }
    }

    /// Runs `kernel` on `n` work-items (whole workgroups of [`BLOCK`]) and returns what it
    /// printed.
    fn run(&self, kernel: &str, n: u32, args: &[LaunchArg<'_>]) -> String {
        let kernel = self.module.kernel_by_name(kernel).unwrap();
        let stream = self.device.default_stream();
        let config = LaunchConfig::new([n.div_ceil(BLOCK).max(1), 1, 1], [BLOCK, 1, 1]);
        // SAFETY: every buffer argument holds the elements the kernel reads or writes.
        unsafe { stream.launch_untyped(&kernel, config, args).unwrap() };
        stream.synchronize().unwrap();
        std::mem::take(&mut *self.printed.lock().unwrap())
    }

    /// The wave size the build's code object runs with (`-w64`: RDNA in wave64).
    fn wave(&self) -> u32 {
        if self.build.ends_with("-w64") {
            64
        } else {
            self.device.properties().wave_size
        }
    }
}

/// glibc's rendering of `format` with `args` (already C-typed by the caller's macro).
macro_rules! c_format {
    ($format:expr $(, $arg:expr)*) => {{
        let format = CString::new($format).unwrap();
        let mut buffer = vec![0u8; 512];
        // SAFETY: the buffer's size is passed; the arguments match the conversions.
        let len = unsafe {
            snprintf(buffer.as_mut_ptr().cast(), buffer.len(), format.as_ptr() $(, $arg)*)
        };
        buffer.truncate(len as usize);
        String::from_utf8(buffer).unwrap()
    }};
}

/// The two lines `print_values` prints for work-item `i` with `v = x[i]`, on a wave of `wave`
/// lanes, `x` at device address `x_address`.
fn value_lines(i: u32, v: i32, wave: u32, x_address: u64) -> [String; 2] {
    let (wg, local) = (i / BLOCK, i % BLOCK);
    let first = c_format!(
        "%u wg %u wave %u lane %u: %d %u %ld %x 0x%lX %08d [%-5d] %+d\n",
        i,
        wg,
        local / wave,
        local % wave,
        v,
        v as u32,
        v as i64 * 1_000_000_007,
        v as u32,
        v as u64,
        v,
        v % 1000,
        v
    );
    let sign = if v < 0 { "negative" } else { "non-negative" };
    let sign = CString::new(sign).unwrap();
    let truth = CString::new(if v % 2 == 0 { "true" } else { "false" }).unwrap();
    let second = c_format!(
        "%u: %.3f %e %g %g %s %s %p\n",
        i,
        (v as f32 / 7.0) as f64,
        v as f64 * 1e-300,
        iron_intrinsics::half::f16::from_f32(v as f32).to_f64(),
        iron_intrinsics::half::bf16::from_f32(v as f32 / 3.0).to_f64(),
        truth.as_ptr(),
        sign.as_ptr(),
        x_address as *const u8
    );
    [first, second]
}

/// Checks the order of `lines`: each is `(call, wave, lane)`; one call's lines from one wave
/// must be contiguous, in lane order, and every wave's lines of a call one run.
fn check_order(build: &str, what: &str, lines: &[(u32, u32, u32)]) {
    let mut seen = HashSet::new();
    let mut at = 0;
    while at < lines.len() {
        let (call, wave, _) = lines[at];
        let mut end = at + 1;
        while end < lines.len() && (lines[end].0, lines[end].1) == (call, wave) {
            end += 1;
        }
        let lanes: Vec<u32> = lines[at..end].iter().map(|l| l.2).collect();
        assert!(
            lanes.windows(2).all(|w| w[0] < w[1]),
            "{build} {what}: call {call} of wave {wave} printed lanes {lanes:?} out of order"
        );
        assert!(
            seen.insert((call, wave)),
            "{build} {what}: call {call} of wave {wave} printed in two runs"
        );
        at = end;
    }
}

/// The number before the first `' '` or `':'` of `line`: the work-item that printed it.
fn work_item(line: &str) -> u32 {
    line.split([' ', ':']).next().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_argument_kind_prints_as_the_hip_runtime_prints_it_in_wave_and_lane_order() {
    let mut rng = StdRng::seed_from_u64(0x9_1e7f);
    let edges = [
        0,
        -1,
        1,
        i32::MIN,
        i32::MAX,
        999,
        -1000,
        7,
        -7,
        65504,
        1 << 24,
    ];
    for build in BUILDS {
        let p = Printing::new(build);
        let wave = p.wave();
        let metadata = p.module.kernel_by_name("print_values").unwrap();
        assert!(
            metadata
                .metadata()
                .args
                .iter()
                .any(|a| a.value_kind == ArgValueKind::HiddenPrintfBuffer),
            "{build}: a kernel that prints asks for the printf buffer"
        );
        for n in [1u32, 37, 300, 513] {
            let x: Vec<i32> = (0..n as usize)
                .map(|i| edges.get(i).copied().unwrap_or_else(|| rng.random()))
                .collect();
            let dx = DeviceBuffer::from_slice(&p.device, &x).unwrap();
            let out = p.run(
                "print_values",
                n,
                &[
                    LaunchArg::Buffer {
                        address: dx.address(),
                        device: &p.device,
                    },
                    LaunchArg::value(&n.to_le_bytes()),
                ],
            );
            let lines: Vec<&str> = out.split_inclusive('\n').collect();
            assert_eq!(
                lines.len(),
                2 * n as usize,
                "{build} n = {n}: two lines per work-item"
            );
            let mut order = Vec::new();
            let mut got = vec![[None, None]; n as usize];
            for line in &lines {
                let i = work_item(line);
                let call = usize::from(!line.contains(" wg "));
                assert!(
                    got[i as usize][call].is_none(),
                    "{build}: {line:?} printed twice"
                );
                got[i as usize][call] = Some(line.to_string());
                order.push((call as u32, i / wave, i % wave));
            }
            for (i, (lines, v)) in got.iter().zip(&x).enumerate() {
                let want = value_lines(i as u32, *v, wave, dx.address());
                for (g, w) in lines.iter().zip(&want) {
                    assert_eq!(
                        g.as_deref(),
                        Some(w.as_str()),
                        "{build} n = {n}: work-item {i}, x = {v}"
                    );
                }
            }
            check_order(build, "print_values", &order);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn frames_of_different_sizes_in_one_wave_stay_in_lane_order() {
    const LETTERS: &str = "abcdefghijklmnopqrstuvw";
    for build in BUILDS {
        let p = Printing::new(build);
        let wave = p.wave();
        for n in [1u32, 23, 100, 300] {
            let out = p.run("print_names", n, &[LaunchArg::value(&n.to_le_bytes())]);
            let mut seen = vec![false; n as usize];
            let mut order = Vec::new();
            for line in out.split_inclusive('\n') {
                let i = work_item(line);
                assert_eq!(
                    line,
                    format!("{i}:[{}]\n", &LETTERS[..(i % 23) as usize]),
                    "{build}"
                );
                assert!(
                    !std::mem::replace(&mut seen[i as usize], true),
                    "{build}: {i} twice"
                );
                order.push((0, i / wave, i % wave));
            }
            assert!(
                seen.iter().all(|s| *s),
                "{build} n = {n}: every work-item printed"
            );
            check_order(build, "print_names", &order);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_full_buffer_drops_whole_frames_says_so_and_the_next_launch_prints_again() {
    for build in BUILDS {
        let p = Printing::new(build);
        let wave = p.wave();
        p.emulator.set_print_buffer_bytes(4096);
        let lines_each = 10u32;
        let out = p.run(
            "print_flood",
            BLOCK,
            &[LaunchArg::value(&lines_each.to_le_bytes())],
        );
        assert!(out.contains(DROPPED_LINE), "{build}: {out}");
        let printed: Vec<&str> = out
            .split_inclusive('\n')
            .filter(|l| *l != DROPPED_LINE)
            .collect();
        // A frame is 4 + 8 (format) + 16 (two arguments) bytes; the buffer holds 4088 after its
        // header, less the dropped-output frame's room.
        assert!(
            printed.len() < 4088 / 28 && printed.len() >= wave as usize,
            "{build}: {} lines",
            printed.len()
        );
        let mut order = Vec::new();
        for line in &printed {
            let mut fields = line.trim_end().split(' ');
            let i: u32 = fields.next().unwrap().parse().unwrap();
            let call: u32 = fields.next().unwrap().parse().unwrap();
            assert!(i < BLOCK && call < lines_each, "{build}: {line:?}");
            order.push((call, i / wave, i % wave));
        }
        let per_call = printed.len() % wave as usize;
        assert_eq!(
            per_call, 0,
            "{build}: whole waves' frames are kept or dropped"
        );
        check_order(build, "print_flood", &order);
        let out = p.run("print_names", 5, &[LaunchArg::value(&5u32.to_le_bytes())]);
        assert_eq!(out, "0:[]\n1:[a]\n2:[ab]\n3:[abc]\n4:[abcd]\n", "{build}");
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_print_that_is_not_reached_prints_nothing_and_the_kernel_still_computes() {
    let mut rng = StdRng::seed_from_u64(0xc0_91);
    for build in BUILDS {
        let p = Printing::new(build);
        let plain = p.module.kernel_by_name("copy_plain").unwrap();
        assert!(
            !plain
                .metadata()
                .args
                .iter()
                .any(|a| a.value_kind == ArgValueKind::HiddenPrintfBuffer),
            "{build}: a kernel without prints has no printf buffer"
        );
        for n in [1u32, 255, 1000] {
            let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..u32::MAX)).collect();
            let dx = DeviceBuffer::from_slice(&p.device, &x).unwrap();
            let y = DeviceBuffer::from_slice(&p.device, &vec![0xdead_beefu32; n as usize]).unwrap();
            for kernel in ["copy_checked", "copy_plain"] {
                let out = p.run(
                    kernel,
                    n,
                    &[
                        LaunchArg::Buffer {
                            address: dx.address(),
                            device: &p.device,
                        },
                        LaunchArg::Buffer {
                            address: y.address(),
                            device: &p.device,
                        },
                        LaunchArg::value(&n.to_le_bytes()),
                    ],
                );
                assert_eq!(out, "", "{build} {kernel}");
                assert_eq!(y.to_vec().unwrap(), x, "{build} {kernel} n = {n}");
            }
        }
        let x = [5, u32::MAX, 6];
        let dx = DeviceBuffer::from_slice(&p.device, &x).unwrap();
        let y = DeviceBuffer::from_slice(&p.device, &[0u32; 3]).unwrap();
        let out = p.run(
            "copy_checked",
            3,
            &[
                LaunchArg::Buffer {
                    address: dx.address(),
                    device: &p.device,
                },
                LaunchArg::Buffer {
                    address: y.address(),
                    device: &p.device,
                },
                LaunchArg::value(&3u32.to_le_bytes()),
            ],
        );
        assert_eq!(out, "copy_checked: x[1] is 0xffffffff\n", "{build}");
    }
}
