//! `saxpy_f32` on every gfx the bundle holds, each on an emulator of its gfx (and on HIP device 0
//! when there is one), against the CPU: seeded random inputs with NaN, infinities, denormals and
//! signed zeros, sizes around the workgroup, and a poisoned output that must be overwritten.

use iron::code_object::{Bundle, CodeObject};
use iron::emulator::Emulator;
use iron::{Device, DeviceBuffer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use template_host::{KERNELS, load, saxpy, saxpy_into};

/// A NaN with a payload no computation produces: an element still holding it was not written.
const POISON: u32 = 0x7fa5_5a5a;

/// Inputs: mostly random, with the awkward values in between.
fn values(rng: &mut StdRng, n: usize) -> Vec<f32> {
    const SPECIAL: [f32; 8] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        1e-40, // a denormal
        f32::MIN_POSITIVE,
        f32::MAX,
        0.0,
    ];
    (0..n)
        .map(|_| {
            if rng.random_bool(0.05) {
                SPECIAL[rng.random_range(0..SPECIAL.len())]
            } else {
                rng.random_range(-1e3..1e3)
            }
        })
        .collect()
}

/// Every gfx in the bundle.
fn bundled_gfx() -> Vec<String> {
    let bundle = Bundle::parse(KERNELS).expect("the embedded bundle parses");
    let gfx: Vec<String> = bundle
        .entries()
        .iter()
        .filter(|entry| entry.id.is_amdgpu())
        .map(|entry| {
            let code_object = CodeObject::parse(&entry.data).expect("a bundled code object parses");
            code_object.target().processor.clone()
        })
        .collect();
    assert_eq!(gfx, ["gfx950", "gfx1100"], "the targets of build.rs");
    gfx
}

/// Checks `saxpy_f32` on `device` against the CPU, bit for bit (one fused multiply-add).
fn check(device: &Device, label: &str) {
    let module = load(device).unwrap_or_else(|e| panic!("{label}: {e}"));
    let mut rng = StdRng::seed_from_u64(0x5a_c0de);
    for n in [1, 63, 64, 255, 256, 257, 1000, 65_537] {
        let alpha = rng.random_range(-4.0..4.0f32);
        let x = values(&mut rng, n);
        let y = values(&mut rng, n);
        let x_device = DeviceBuffer::from_slice(device, &x).unwrap();
        let y_device = DeviceBuffer::from_slice(device, &y).unwrap();
        let mut z_device =
            DeviceBuffer::from_slice(device, &vec![f32::from_bits(POISON); n]).unwrap();
        saxpy_into(&module, alpha, &x_device, &y_device, &mut z_device)
            .unwrap_or_else(|e| panic!("{label} n = {n}: {e}"));
        let z = z_device.to_vec().unwrap();
        for i in 0..n {
            let want = alpha.mul_add(x[i], y[i]);
            assert_ne!(
                z[i].to_bits(),
                POISON,
                "{label} n = {n}: z[{i}] was not written"
            );
            assert!(
                z[i].to_bits() == want.to_bits() || (z[i].is_nan() && want.is_nan()),
                "{label} n = {n}: z[{i}] = {} for {alpha} * {} + {}, want {want}",
                z[i],
                x[i],
                y[i]
            );
        }
    }
    assert_eq!(saxpy(device, 1.0, &[], &[]).unwrap(), Vec::<f32>::new());
    let e = saxpy(device, 1.0, &[1.0], &[]).unwrap_err().to_string();
    assert_eq!(e, "saxpy: x, y and z hold 1, 0 and 1 elements");
}

#[test]
fn saxpy_matches_the_cpu_on_every_bundled_gfx() {
    for gfx in bundled_gfx() {
        let emulator = Emulator::new(&gfx).unwrap();
        check(&emulator.device(), &gfx);
    }
}

#[test]
fn gpu_saxpy_matches_the_cpu() {
    match Device::hip(0) {
        Ok(device) => check(&device, "HIP device 0"),
        Err(e) => println!("no GPU here ({e}): only the emulated runs count"),
    }
}
