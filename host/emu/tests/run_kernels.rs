//! End-to-end: the test kernels run on the emulator with seeded random inputs, compared
//! with Rust computations. Outputs are poisoned first so that unwritten elements are caught.

mod common;

use common::{Args, bytes_of, data, from_bytes, load};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const POISON: u32 = 0xdead_beef;

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn vadd_adds_elementwise_on_every_target() {
    for gfx in ["gfx90a", "gfx942", "gfx950"] {
        let mut k = load(&data(&format!("rust_kernels_{gfx}.elf")));
        let mut rng = StdRng::seed_from_u64(7);
        let n = 1000usize;
        let a: Vec<f32> = (0..n).map(|_| rng.random_range(-100.0..100.0)).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.random_range(-100.0..100.0)).collect();
        let pa = k.upload(&bytes_of(&a));
        let pb = k.upload(&bytes_of(&b));
        let pc = k.upload(&bytes_of(&vec![POISON; n + 64]));
        let args = Args::default().ptr(pa).ptr(pb).ptr(pc).u32(n as u32);
        let counters = k
            .launch(
                "vadd",
                &args.0,
                [n.div_ceil(256) as u32, 1, 1],
                [256, 1, 1],
                0,
            )
            .unwrap();
        let c: Vec<f32> = from_bytes(&k.download(pc, (n + 64) * 4));
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "element {i}");
        }
        for (i, v) in c[n..].iter().enumerate() {
            assert_eq!(
                v.to_bits(),
                POISON,
                "element {} past the end was written",
                n + i
            );
        }
        assert!(counters.total_instructions() > 0);
        assert_eq!(counters.workgroups, 4);
        assert_eq!(counters.waves, 16);
    }
}
