//! Static LDS arrays next to dynamic LDS on every emulated build (CDNA, and RDNA in wave32 and
//! wave64), from `tests/device-probe`'s `lds` module: the code object carries the two static
//! arrays (1024 + 4 bytes) as `.group_segment_fixed_size`, the launch adds the dynamic LDS the
//! kernel declares, and `reverse_blocks` only computes the right result when the three regions
//! are distinct. Seeded random inputs, sizes that end in a partial workgroup, poisoned outputs
//! with a guard zone; the launch checks static plus dynamic LDS against the device.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/device-probe/<build>/
//! kernels.co`, so this test is ignored under plain `cargo test`.

use iron::launch::LaunchArg;
use iron::{DeviceBuffer, LaunchConfig};
use iron_tests::fixtures::{self, EMULATED_BUILDS as BUILDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Work-items per workgroup of `reverse_blocks`, and elements per slice.
const BLOCK: usize = 256;

/// Elements after the end of the output that must stay untouched.
const GUARD: usize = 8;

/// Poison of the output: a signalling NaN no addition of two finite values writes.
const POISON: u32 = 0x7fbe_ef01;

/// `y` as `reverse_blocks` computes it: each slice of 256 reversed, plus the number of its
/// elements whose bit pattern is odd.
fn oracle(x: &[f32]) -> Vec<f32> {
    x.chunks(BLOCK)
        .flat_map(|slice| {
            let odd = slice.iter().filter(|v| v.to_bits() & 1 == 1).count() as f32;
            slice.iter().rev().map(move |v| v + odd).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn static_arrays_and_dynamic_lds_are_distinct_and_carried_by_the_code_object() {
    let mut rng = StdRng::seed_from_u64(0x1d5_57a7);
    for build in BUILDS {
        let (device, module) = fixtures::load("device-probe", build);
        let kernel = module.kernel_by_name("reverse_blocks").unwrap();
        assert_eq!(
            kernel.metadata().group_segment_fixed_size,
            1028,
            "{build}: the static arrays' 1024 + 4 bytes"
        );
        let stream = device.default_stream();
        for n in [1, 255, 256, 700, 1024] {
            let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
            let dx = DeviceBuffer::from_slice(&device, &x).unwrap();
            let y = DeviceBuffer::from_slice(&device, &vec![POISON; n + GUARD]).unwrap();
            let args = [
                LaunchArg::Buffer {
                    address: dx.address(),
                    device: &device,
                },
                LaunchArg::Buffer {
                    address: y.address(),
                    device: &device,
                },
                LaunchArg::value(&(n as u32).to_le_bytes()),
            ];
            let config = LaunchConfig::new([n.div_ceil(BLOCK) as u32, 1, 1], [BLOCK as u32, 1, 1])
                .with_dynamic_lds(4 * BLOCK as u32);
            // SAFETY: x and y hold n elements; the dynamic LDS is the 256 u32 the kernel uses.
            unsafe { stream.launch_untyped(&kernel, config, &args).unwrap() };
            stream.synchronize().unwrap();
            let got = y.to_vec().unwrap();
            let want = oracle(&x);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_ne!(*g, POISON, "{build} n = {n}: element {i} was not written");
                assert_eq!(
                    f32::from_bits(*g),
                    *w,
                    "{build} n = {n}: element {i} (x = {})",
                    x[i]
                );
            }
            assert!(
                got[n..].iter().all(|&g| g == POISON),
                "{build} n = {n}: the guard was written"
            );
        }
        // The device's LDS holds the static arrays plus at most the rest as dynamic LDS.
        let limit = device.properties().lds_per_workgroup;
        let with_dynamic =
            |bytes: u32| LaunchConfig::new([1, 1, 1], [BLOCK as u32, 1, 1]).with_dynamic_lds(bytes);
        let empty = DeviceBuffer::from_slice(&device, &[0u32; 1]).unwrap();
        let buffer = LaunchArg::Buffer {
            address: empty.address(),
            device: &device,
        };
        let args = [buffer, buffer, LaunchArg::value(&0u32.to_le_bytes())];
        // SAFETY: n = 0: the kernel touches only its LDS.
        unsafe { stream.launch_untyped(&kernel, with_dynamic(limit - 1028), &args) }.unwrap();
        stream.synchronize().unwrap();
        // SAFETY: refused before anything runs.
        let error = unsafe { stream.launch_untyped(&kernel, with_dynamic(limit - 1027), &args) }
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "reverse_blocks needs 1028 bytes of static and {} bytes of dynamic LDS, above the device's {limit} bytes per workgroup",
                limit - 1027
            ),
            "{build}"
        );
    }
}
