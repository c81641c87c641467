//! `gather_b32` and `gather_b16` on the emulator for every emulated gfx: seeded random tables
//! and indices (some at or beyond `vocab`, which must give zero rows), row widths that do and do
//! not fill 16-byte chunks, 2-D workgroups of several shapes and grids small enough to make
//! workgroups loop, and a poisoned guard zone after the output that must stay untouched.

use iron::{DeviceBuffer, LaunchConfig};
use iron_kernels::gather;
use iron_tests::devices::emulated_devices;
use iron_tests::oracle::gather::gather as reference;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GUARD: usize = 24;

/// (n, vocab, dim) cases: empty, narrow, odd, wide.
const SHAPES: [(usize, usize, usize); 8] = [
    (0, 5, 8),
    (7, 0, 4),
    (1, 1, 1),
    (9, 13, 3),
    (33, 50, 8),
    (20, 17, 64),
    (5, 40, 257),
    (64, 100, 768),
];

/// (grid x, block x, block y) launch shapes.
const LAUNCHES: [(u32, u32, u32); 3] = [(1, 64, 1), (3, 8, 32), (64, 256, 1)];

/// Indices mostly in range, with some at `vocab`, beyond it and at `u32::MAX`.
fn indices(rng: &mut StdRng, n: usize, vocab: usize) -> Vec<u32> {
    (0..n)
        .map(|i| match i % 7 {
            3 => vocab as u32,
            5 => u32::MAX - rng.random_range(0..3),
            _ => rng.random_range(0..vocab.max(1) as u32),
        })
        .collect()
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn gather_b32_copies_rows_and_zeroes_bad_indices() {
    let mut rng = StdRng::seed_from_u64(11);
    for d in emulated_devices() {
        let kernel = d.module.kernel(gather::gather_b32).unwrap();
        let stream = d.device.default_stream();
        for (n, vocab, dim) in SHAPES {
            for (grid, bx, by) in LAUNCHES {
                let table: Vec<u32> = (0..vocab * dim).map(|_| rng.random()).collect();
                let idx = indices(&mut rng, n, vocab);
                let want = reference(&table, &idx, dim);
                let dt = DeviceBuffer::from_slice(&d.device, &table).unwrap();
                let di = DeviceBuffer::from_slice(&d.device, &idx).unwrap();
                let poison = vec![0xA5A5_A5A5u32; n * dim + GUARD];
                let mut out = DeviceBuffer::from_slice(&d.device, &poison).unwrap();
                let cfg = LaunchConfig::new([grid, 1, 1], [bx, by, 1]);
                let args = (&dt, &di, &mut out, n as u32, vocab as u32, dim as u32);
                // SAFETY: the kernel reads table rows below vocab and indices[0..n], and writes
                // out[0..n * dim]; every buffer holds that much.
                unsafe { stream.launch(&kernel, cfg, args).unwrap() };
                let got = out.to_vec().unwrap();
                assert_eq!(
                    got[..n * dim],
                    want[..],
                    "{} n={n} vocab={vocab} dim={dim}",
                    d.gfx
                );
                assert!(
                    got[n * dim..].iter().all(|&v| v == 0xA5A5_A5A5),
                    "{} overran",
                    d.gfx
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn gather_b16_copies_rows_and_zeroes_bad_indices() {
    let mut rng = StdRng::seed_from_u64(12);
    for d in emulated_devices() {
        let kernel = d.module.kernel(gather::gather_b16).unwrap();
        let stream = d.device.default_stream();
        for (n, vocab, dim) in SHAPES {
            for (grid, bx, by) in LAUNCHES {
                let table: Vec<u16> = (0..vocab * dim).map(|_| rng.random()).collect();
                let idx = indices(&mut rng, n, vocab);
                let want = reference(&table, &idx, dim);
                let dt = DeviceBuffer::from_slice(&d.device, &table).unwrap();
                let di = DeviceBuffer::from_slice(&d.device, &idx).unwrap();
                let poison = vec![0xA5A5u16; n * dim + GUARD];
                let mut out = DeviceBuffer::from_slice(&d.device, &poison).unwrap();
                let cfg = LaunchConfig::new([grid, 1, 1], [bx, by, 1]);
                let args = (&dt, &di, &mut out, n as u32, vocab as u32, dim as u32);
                // SAFETY: as in the 4-byte test.
                unsafe { stream.launch(&kernel, cfg, args).unwrap() };
                let got = out.to_vec().unwrap();
                assert_eq!(
                    got[..n * dim],
                    want[..],
                    "{} n={n} vocab={vocab} dim={dim}",
                    d.gfx
                );
                assert!(
                    got[n * dim..].iter().all(|&v| v == 0xA5A5),
                    "{} overran",
                    d.gfx
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn wide_rows_move_in_16_byte_accesses() {
    let mut rng = StdRng::seed_from_u64(13);
    for d in emulated_devices() {
        let kernel = d.module.kernel(gather::gather_b16).unwrap();
        let (n, vocab, dim) = (16usize, 32usize, 512usize);
        let table: Vec<u16> = (0..vocab * dim).map(|_| rng.random()).collect();
        let idx: Vec<u32> = (0..n).map(|_| rng.random_range(0..vocab as u32)).collect();
        let dt = DeviceBuffer::from_slice(&d.device, &table).unwrap();
        let di = DeviceBuffer::from_slice(&d.device, &idx).unwrap();
        let mut out = DeviceBuffer::<u16>::zeros(&d.device, n * dim).unwrap();
        let cfg = LaunchConfig::new([4, 1, 1], [64, 4, 1]);
        // SAFETY: as above.
        unsafe {
            d.device
                .default_stream()
                .launch(
                    &kernel,
                    cfg,
                    (&dt, &di, &mut out, n as u32, vocab as u32, dim as u32),
                )
                .unwrap()
        };
        let counters = d.emulator.take_counters();
        let (_, c) = counters.last().expect("the launch ran");
        assert_eq!(c.global_bytes_written, (2 * n * dim) as u64, "{}", d.gfx);
        // Each row is copied by the 64 work-items of one workgroup row, 64 / wave waves, and
        // each wave reads the row's 4-byte index once.
        let index_reads = n * (64 / d.wave as usize);
        assert_eq!(
            c.vector_bytes_read(),
            (2 * n * dim + 4 * index_reads) as u64,
            "{}",
            d.gfx
        );
        // Row data moves only in 16-byte accesses (widths 1, 2, 4, 8, 12, 16); the indices are
        // the only narrower ones, 4-byte reads.
        let [w1, w2, _, w8, w12, w16] = c.global_access_widths;
        assert_eq!((w1, w2, w8, w12), (0, 0, 0, 0), "{}", d.gfx);
        assert!(w16 > 0, "{}", d.gfx);
        assert_eq!(
            out.to_vec().unwrap(),
            reference(&table, &idx, dim),
            "{}",
            d.gfx
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_gathers_floats_and_checks_its_buffers() {
    use iron::library::{Library, LibraryError, bf16};
    let mut rng = StdRng::seed_from_u64(14);
    for d in emulated_devices() {
        let library = Library::from_module(d.module.clone()).unwrap();
        let stream = d.device.default_stream();
        let (vocab, dim, n) = (50usize, 96usize, 37usize);
        let idx = indices(&mut rng, n, vocab);
        let di = DeviceBuffer::from_slice(&d.device, &idx).unwrap();
        let table: Vec<f32> = (0..vocab * dim).map(|_| rng.random()).collect();
        let dt = DeviceBuffer::from_slice(&d.device, &table).unwrap();
        let mut out = DeviceBuffer::<f32>::zeros(&d.device, n * dim).unwrap();
        library
            .gather(&stream, &dt, (vocab, dim), &di, &mut out, n)
            .unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let want = reference(&bits(&table), &idx, dim);
        assert_eq!(bits(&out.to_vec().unwrap()), want, "{} f32", d.gfx);

        let table: Vec<bf16> = (0..vocab * dim)
            .map(|_| bf16::from_bits(rng.random()))
            .collect();
        let dt = DeviceBuffer::from_slice(&d.device, &table).unwrap();
        let mut out = DeviceBuffer::<bf16>::zeros(&d.device, n * dim).unwrap();
        library
            .gather(&stream, &dt, (vocab, dim), &di, &mut out, n)
            .unwrap();
        let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let want = reference(&bits(&table), &idx, dim);
        assert_eq!(bits(&out.to_vec().unwrap()), want, "{} bf16", d.gfx);

        let error = library
            .gather(&stream, &dt, (vocab + 1, dim), &di, &mut out, n)
            .unwrap_err();
        assert!(matches!(
            error,
            LibraryError::BufferTooShort {
                buffer: "table",
                ..
            }
        ));
        assert_eq!(
            error.to_string(),
            format!(
                "gather: table holds {} elements, vocab * dim = {}",
                vocab * dim,
                (vocab + 1) * dim
            )
        );
        let error = library
            .gather(&stream, &dt, (vocab, dim), &di, &mut out, n + 1)
            .unwrap_err();
        assert!(matches!(
            error,
            LibraryError::BufferTooShort {
                buffer: "indices",
                ..
            }
        ));
    }
}
