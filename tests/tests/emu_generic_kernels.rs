//! Generic kernels and declared workgroup shapes on every emulated build (CDNA, and RDNA in
//! wave32 and wave64), from `tests/device-probe`'s `generic` module:
//! - each instance of the generic `scale` is its own kernel, computing `x * S` in its own type
//!   over seeded random inputs and edge values, into a poisoned output with a guard zone, for
//!   counts that are not multiples of the wave or the workgroup;
//! - `block_ids`, declared `block = (8, 4, 2)`, carries that shape as `.reqd_workgroup_size`,
//!   and run with it every work-item reports its own local id and the declared size.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/device-probe/<build>/
//! kernels.co`, so this test is ignored under plain `cargo test`.

use iron::launch::LaunchArg;
use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use iron_intrinsics::half::f16;
use iron_tests::fixtures::{self, EMULATED_BUILDS as BUILDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Elements after the end of every output that must stay untouched.
const GUARD: usize = 8;

/// Element counts run: empty, one, around the wave sizes, and more than one workgroup.
const COUNTS: [usize; 6] = [0, 1, 31, 65, 257, 1000];

/// Loads the fixture for `build` (`<gfx>` or `<gfx>-w64`).
fn load(build: &str) -> (Device, Module) {
    fixtures::load("device-probe", build)
}

/// Runs `kernel(x, y, n)` over `x` with 64-work-item workgroups into a buffer poisoned with
/// `poison` (and its guard); returns the whole buffer.
fn run_scale<T: bytemuck::Pod>(
    device: &Device,
    module: &Module,
    kernel: &str,
    x: &[T],
    poison: T,
) -> Vec<T> {
    let kernel = module.kernel_by_name(kernel).unwrap();
    // An empty input is still a (one-element) allocation the kernel never reads.
    let padded: Vec<T> = x.iter().copied().chain([poison]).collect();
    let dx = DeviceBuffer::from_slice(device, &padded[..x.len().max(1)]).unwrap();
    let y = DeviceBuffer::from_slice(device, &vec![poison; x.len() + GUARD]).unwrap();
    let args = [
        LaunchArg::Buffer {
            address: dx.address(),
            device,
        },
        LaunchArg::Buffer {
            address: y.address(),
            device,
        },
        LaunchArg::value(&(x.len() as u32).to_le_bytes()),
    ];
    let grid = (x.len() as u32).div_ceil(64).clamp(1, 3);
    let stream = device.default_stream();
    // SAFETY: x and y hold the n elements the kernel reads and writes; the emulator checks
    // every access against its allocations.
    unsafe {
        stream
            .launch_untyped(&kernel, LaunchConfig::new([grid, 1, 1], [64, 1, 1]), &args)
            .unwrap()
    };
    stream.synchronize().unwrap();
    y.to_vec().unwrap()
}

/// Checks that every element of `got` was written (is not `poison`, a value no kernel
/// computes) and matches `want` (with `same`), and that its guard still holds `poison`.
fn check<T: bytemuck::Pod + std::fmt::Debug>(
    context: &str,
    got: &[T],
    want: &[T],
    poison: T,
    same: impl Fn(T, T) -> bool,
) {
    let poisoned = |g: &T| bytemuck::bytes_of(g) == bytemuck::bytes_of(&poison);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(!poisoned(&g), "{context}: element {i} was not written");
        assert!(same(g, w), "{context}: element {i} = {g:?}, want {w:?}");
    }
    assert!(
        got[want.len()..].iter().all(poisoned),
        "{context}: the guard after {} elements was written",
        want.len()
    );
}

/// f32 inputs: seeded random values, then the edge cases.
fn f32_inputs(rng: &mut StdRng, n: usize) -> Vec<f32> {
    let edges = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        1.0,
    ];
    (0..n)
        .map(|i| {
            edges
                .get(i)
                .copied()
                .unwrap_or_else(|| rng.random_range(-1e6..1e6))
        })
        .collect()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn each_instance_of_a_generic_kernel_computes_in_its_own_type() {
    let mut rng = StdRng::seed_from_u64(0x6e_e71c);
    let f32_same = |g: f32, w: f32| g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan();
    for build in BUILDS {
        let (device, module) = load(build);
        for instance in ["scale2_f32", "scale3_f32", "scale3_u32", "scale5_f16"] {
            assert!(
                module.kernel_by_name(instance).is_ok(),
                "{build}: instance {instance} is missing"
            );
        }
        for n in COUNTS {
            let context = |kernel: &str| format!("{build} {kernel} n = {n}");
            let x = f32_inputs(&mut rng, n);
            let poison = f32::from_bits(0x7fbe_ef01);
            for (kernel, s) in [("scale2_f32", 2.0), ("scale3_f32", 3.0)] {
                let want: Vec<f32> = x.iter().map(|v| v * s).collect();
                let got = run_scale(&device, &module, kernel, &x, poison);
                check(&context(kernel), &got, &want, poison, f32_same);
            }
            let x: Vec<u32> = (0..n)
                .map(|i| {
                    if i < 2 {
                        [u32::MAX, 0x5555_5556][i]
                    } else {
                        rng.random()
                    }
                })
                .collect();
            let want: Vec<u32> = x.iter().map(|v| v.wrapping_mul(3)).collect();
            let got = run_scale(&device, &module, "scale3_u32", &x, 0xdead_beef);
            check(&context("scale3_u32"), &got, &want, 0xdead_beef, |g, w| {
                g == w
            });
            let x: Vec<f16> = (0..n)
                .map(|i| match i {
                    0 => f16::MAX,
                    1 => f16::from_bits(1),
                    2 => f16::NEG_INFINITY,
                    _ => f16::from_bits(rng.random()),
                })
                .collect();
            let five = f16::from_f32(5.0);
            let want: Vec<f16> = x.iter().map(|&v| v * five).collect();
            let poison = f16::from_bits(0x7d01);
            let got = run_scale(&device, &module, "scale5_f16", &x, poison);
            let f16_same = |g: f16, w: f16| g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan();
            check(&context("scale5_f16"), &got, &want, poison, f16_same);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_declared_block_is_the_code_objects_required_shape_and_runs_as_declared() {
    for build in BUILDS {
        let (device, module) = load(build);
        let kernel = module.kernel_by_name("block_ids").unwrap();
        assert_eq!(
            kernel.metadata().reqd_workgroup_size,
            Some([8, 4, 2]),
            "{build}: .reqd_workgroup_size"
        );
        assert_eq!(kernel.metadata().max_flat_workgroup_size, 64, "{build}");
        let groups = 3;
        let out = DeviceBuffer::from_slice(&device, &vec![u32::MAX; 64 * groups + GUARD]).unwrap();
        let args = [LaunchArg::Buffer {
            address: out.address(),
            device: &device,
        }];
        let stream = device.default_stream();
        // SAFETY: out holds 64 elements per workgroup.
        unsafe {
            stream
                .launch_untyped(
                    &kernel,
                    LaunchConfig::new([groups as u32, 1, 1], [8, 4, 2]),
                    &args,
                )
                .unwrap()
        };
        stream.synchronize().unwrap();
        let got = out.to_vec().unwrap();
        let want: Vec<u32> = (0..groups)
            .flat_map(|_| {
                (0..2u32).flat_map(|z| {
                    (0..4u32)
                        .flat_map(move |y| (0..8u32).map(move |x| x | y << 8 | z << 16 | 8 << 24))
                })
            })
            .collect();
        check(
            &format!("{build} block_ids"),
            &got,
            &want,
            u32::MAX,
            |g, w| g == w,
        );
        let wrong = LaunchConfig::new([1, 1, 1], [64, 1, 1]);
        // SAFETY: refused before anything runs.
        let error = unsafe { stream.launch_untyped(&kernel, wrong, &args) }.unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel block_ids requires a block of [8, 4, 2], got [64, 1, 1]",
            "{build}"
        );
    }
}
