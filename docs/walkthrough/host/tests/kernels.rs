//! The walkthrough's kernels on every gfx the bundle holds, each on an emulator of its gfx,
//! against their CPU oracles; and what the resource table promised.

use iron::Module;
use iron::code_object::{Bundle, CodeObject};
use iron::emulator::Emulator;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
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
        }
    }
}

#[test]
fn the_kernels_keep_their_declared_resources() {
    for (build, module) in modules() {
        for (name, max_threads) in [("scale_f32", 256), ("normalize_rows_f32", 1024)] {
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
                metadata.group_segment_fixed_size, 0,
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
    }
}
