//! The walkthrough's kernels on every gfx the bundle holds, each on an emulator of its gfx,
//! against their CPU oracles; and what the resource table promised.

use iron::Module;
use iron::code_object::{Bundle, CodeObject};
use iron::emulator::Emulator;
use iron_intrinsics::half::f16;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};
use walkthrough_host::{KERNELS, load};

/// Every gfx the bundle holds, each with the module loaded on an emulator of that gfx.
fn modules() -> Vec<(String, Module)> {
    let bundle = Bundle::parse(KERNELS).expect("the embedded bundle parses");
    let modules: Vec<(String, Module)> = bundle
        .entries()
        .iter()
        .filter(|entry| entry.id.is_amdgpu())
        .map(|entry| {
            let gfx = CodeObject::parse(&entry.data)
                .unwrap()
                .target()
                .processor
                .clone();
            let device = Emulator::new(&gfx).unwrap().device();
            let module = load(&device).unwrap_or_else(|e| panic!("{gfx}: {e}"));
            (gfx, module)
        })
        .collect();
    let gfx: Vec<&str> = modules.iter().map(|(gfx, _)| gfx.as_str()).collect();
    assert_eq!(gfx, ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]);
    modules
}

#[test]
fn normalize_rows_matches_its_oracle_on_every_target() {
    let mut rng = StdRng::seed_from_u64(0x1a0b);
    let eps = 1e-12;
    for (build, module) in modules() {
        let wave = module.kernels()[0].metadata().wavefront_size;
        // One column; rows shorter than a wave; not a multiple of any workgroup; longer ones.
        for (rows, cols) in [(3, 1), (5, 37), (4, 1000), (2, 4099)] {
            for block in [wave, 256, 1024] {
                let mut x: Vec<f32> = (0..rows * cols)
                    .map(|_| rng.random_range(-4.0..4.0))
                    .collect();
                // A row of zeros: eps keeps it finite, and it stays zero.
                x[..cols].fill(0.0);
                let got = walkthrough_host::normalize_rows(&module, &x, cols, block, eps)
                    .unwrap_or_else(|e| panic!("{build}: {e}"));
                let want = walkthrough_host::normalize_rows_oracle(&x, cols, eps);
                // The f32 roundings behind each result: a work-item's cols / block squares, at
                // most log2(64) = 6 levels of the wave's tree, the block / wave partials added
                // in turn, then sqrt, divide and multiply; each within f32::EPSILON / 2.
                let steps = cols.div_ceil(block as usize) + 6 + (block / wave) as usize + 3;
                let tolerance = steps as f64 * f64::from(f32::EPSILON);
                for (i, (&got, &want)) in got.iter().zip(&want).enumerate() {
                    let error = (f64::from(got) - want).abs();
                    assert!(
                        error <= tolerance,
                        "{build} [{rows}, {cols}] block {block}: y[{i}] = {got}, want {want}"
                    );
                }
            }
        }
    }
}

/// `p` (an f32 times an f16, exact in f64) rounded once to the nearest f16, ties to even: via
/// f32 rounded to odd, which keeps the sticky bit so that the f16 rounding is the only one.
fn round_once(p: f64) -> f16 {
    let mut t = p as f32;
    if f64::from(t).abs() > p.abs() {
        t = f32::from_bits(t.to_bits() - 1);
    }
    if f64::from(t) != p {
        t = f32::from_bits(t.to_bits() | 1);
    }
    f16::from_f32(t)
}

#[test]
fn scale_matches_its_oracle_on_every_target() {
    let mut rng = StdRng::seed_from_u64(0x5ca1e);
    for (build, module) in modules() {
        for n in [1, 255, 256, 257, 10_000] {
            let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
            let a = rng.random_range(-3.0..3.0f32);
            let got =
                walkthrough_host::scale(&module, a, &x).unwrap_or_else(|e| panic!("{build}: {e}"));
            // One f32 multiplication: the device must round exactly as the CPU does.
            let want: Vec<f32> = x.iter().map(|v| a * v).collect();
            assert_eq!(got, want, "{build}: n = {n}");
            // The f16 instance: every bit pattern is a possible input, NaNs included.
            let x: Vec<f16> = (0..n).map(|_| f16::from_bits(rng.random())).collect();
            let got =
                walkthrough_host::scale(&module, a, &x).unwrap_or_else(|e| panic!("{build}: {e}"));
            for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
                // The f32 product rounded to f16, as the source says; or what LLVM compiles it
                // to on every gfx here, `v_fma_mixlo_f16(a, x, +0)`: the exact product plus +0,
                // rounded once. The two differ by one ulp when the f32 product falls on an f16
                // tie, and in the sign of a zero product (-0 + +0 is +0).
                let twice = f16::from_f32(a * v.to_f32());
                let once = round_once(f64::from(a) * f64::from(v.to_f32()) + 0.0);
                let same = |w: f16| g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan();
                assert!(
                    same(twice) || same(once),
                    "{build}: n = {n}: y[{i}] = {g}, want {twice} or {once} (a = {a:e}, x = {v})"
                );
            }
        }
    }
}

#[test]
fn the_kernels_keep_their_declared_resources() {
    for (build, module) in modules() {
        let wave = module.kernels()[0].metadata().wavefront_size;
        // normalize_rows_f32's static array: one f32 per wave of its largest workgroup.
        for (name, max_threads, lds) in [
            ("scale_f32", 256, 0),
            ("scale_f16", 256, 0),
            ("normalize_rows_f32", 1024, 4 * 1024 / wave),
        ] {
            let metadata = module.kernel_by_name(name).unwrap().metadata().clone();
            assert_eq!(
                metadata.max_flat_workgroup_size, max_threads,
                "{build} {name}"
            );
            assert_eq!(
                metadata.private_segment_fixed_size, 0,
                "{build} {name}: scratch"
            );
            assert_eq!(
                metadata.group_segment_fixed_size, lds,
                "{build} {name}: static LDS"
            );
        }
        let x = [1.0f32; 8];
        let error = walkthrough_host::normalize_rows(&module, &x, 8, 2048, 0.0).unwrap_err();
        assert_eq!(
            error.to_string(),
            "block of 2048 exceeds normalize_rows_f32's declared maximum of 1024",
            "{build}"
        );
        let error = walkthrough_host::normalize_rows(&module, &x, 8, 48, 0.0).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "kernel normalize_rows_f32 runs whole waves only: a block of 48 work-items is not a multiple of the wave size {wave}"
            ),
            "{build}"
        );
    }
}

#[test]
fn report_nonfinite_prints_each_element_that_is_not_finite() {
    let mut rng = StdRng::seed_from_u64(0x9a_9a);
    for gfx in ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"] {
        // What the kernels print goes to this string instead of stdout.
        let emulator = Emulator::new(gfx).unwrap();
        let printed = Arc::new(Mutex::new(String::new()));
        let into = Arc::clone(&printed);
        emulator.set_print_sink(Box::new(move |text| into.lock().unwrap().push_str(text)));
        let module = load(&emulator.device()).unwrap();
        for n in [1, 100, 1000] {
            let mut x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e30..1e30)).collect();
            for k in 0..n / 40 + 1 {
                x[rng.random_range(0..n)] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][k % 3];
            }
            walkthrough_host::report_nonfinite(&module, &x).unwrap();
            let text = std::mem::take(&mut *printed.lock().unwrap());
            let mut got: Vec<&str> = text.lines().collect();
            got.sort_unstable();
            // The device prints floats as C's `%g` does: `nan`, `inf`, `-inf`.
            let mut want: Vec<String> = x
                .iter()
                .enumerate()
                .filter(|(_, v)| !v.is_finite())
                .map(|(i, v)| match (v.is_nan(), *v > 0.0) {
                    (true, _) => format!("x[{i}] = nan"),
                    (false, true) => format!("x[{i}] = inf"),
                    (false, false) => format!("x[{i}] = -inf"),
                })
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "{gfx} n = {n}");
        }
    }
}
