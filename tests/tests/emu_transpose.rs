//! `transpose_b32` and `transpose_b16` on the emulator for every emulated gfx: seeded random
//! matrices of shapes that fill whole tiles, leave partial edge tiles, or are thinner than a
//! tile, with grids from one workgroup per tile down to a single looping workgroup; the output's
//! guard zone must stay untouched, and LDS must see no bank conflicts. The whole-block kernels
//! (`transpose_blocks_b32`, `transpose_blocks_b16`) run on matrices whose sides are multiples of
//! 64, directly and through the library.

use iron::{DeviceBuffer, LaunchConfig};
use iron_kernels::transpose;
use iron_tests::devices::emulated_devices;
use iron_tests::oracle::transpose::transpose as reference;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GUARD: usize = 40;
/// Dynamic LDS of each kernel (see the kernel docs).
const LDS_B32: u32 = 4096;
const LDS_B16: u32 = 8192;

/// (rows, cols) cases: empty, one element, thin, partial tiles, whole tiles.
const SHAPES: [(usize, usize); 10] = [
    (0, 7),
    (1, 1),
    (1, 100),
    (100, 1),
    (3, 5),
    (32, 32),
    (64, 64),
    (33, 65),
    (128, 96),
    (67, 130),
];

/// The grid of one workgroup per tile, and a single workgroup that loops over all tiles.
fn grids(rows: usize, cols: usize, tile: usize) -> [[u32; 3]; 2] {
    let per_tile = [
        cols.div_ceil(tile).max(1) as u32,
        rows.div_ceil(tile).max(1) as u32,
        1,
    ];
    [per_tile, [1, 1, 1]]
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn transpose_b32_matches_the_reference() {
    let mut rng = StdRng::seed_from_u64(21);
    for d in emulated_devices() {
        let kernel = d.module.kernel(transpose::transpose_b32).unwrap();
        let stream = d.device.default_stream();
        for (rows, cols) in SHAPES {
            for (grid, block) in grids(rows, cols, 32).into_iter().zip([256, 64]) {
                let src: Vec<u32> = (0..rows * cols).map(|_| rng.random()).collect();
                let ds = DeviceBuffer::from_slice(&d.device, &src).unwrap();
                let poison = vec![0x5A5A_5A5Au32; rows * cols + GUARD];
                let mut dst = DeviceBuffer::from_slice(&d.device, &poison).unwrap();
                let cfg = LaunchConfig::new(grid, [block, 1, 1]).with_dynamic_lds(LDS_B32);
                // SAFETY: the kernel reads src[0..rows * cols] and writes dst[0..rows * cols].
                unsafe {
                    stream
                        .launch(&kernel, cfg, (&ds, &mut dst, rows as u32, cols as u32))
                        .unwrap()
                };
                let got = dst.to_vec().unwrap();
                let n = rows * cols;
                assert_eq!(
                    got[..n],
                    reference(&src, rows, cols)[..],
                    "{} {rows}x{cols}",
                    d.gfx
                );
                assert!(
                    got[n..].iter().all(|&v| v == 0x5A5A_5A5A),
                    "{} overran",
                    d.gfx
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn transpose_b16_matches_the_reference() {
    let mut rng = StdRng::seed_from_u64(22);
    for d in emulated_devices() {
        let kernel = d.module.kernel(transpose::transpose_b16).unwrap();
        let stream = d.device.default_stream();
        for (rows, cols) in SHAPES {
            for (grid, block) in grids(rows, cols, 64).into_iter().zip([256, 128]) {
                let src: Vec<u16> = (0..rows * cols).map(|_| rng.random()).collect();
                let ds = DeviceBuffer::from_slice(&d.device, &src).unwrap();
                let poison = vec![0x5A5Au16; rows * cols + GUARD];
                let mut dst = DeviceBuffer::from_slice(&d.device, &poison).unwrap();
                let cfg = LaunchConfig::new(grid, [block, 1, 1]).with_dynamic_lds(LDS_B16);
                // SAFETY: as for 4-byte elements.
                unsafe {
                    stream
                        .launch(&kernel, cfg, (&ds, &mut dst, rows as u32, cols as u32))
                        .unwrap()
                };
                let got = dst.to_vec().unwrap();
                let n = rows * cols;
                assert_eq!(
                    got[..n],
                    reference(&src, rows, cols)[..],
                    "{} {rows}x{cols}",
                    d.gfx
                );
                assert!(got[n..].iter().all(|&v| v == 0x5A5A), "{} overran", d.gfx);
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn aligned_shapes_use_16_byte_accesses_and_no_bank_conflicts() {
    let mut rng = StdRng::seed_from_u64(23);
    for d in emulated_devices() {
        let b32 = d.module.kernel(transpose::transpose_b32).unwrap();
        let b16 = d.module.kernel(transpose::transpose_b16).unwrap();
        let stream = d.device.default_stream();
        let (rows, cols) = (128usize, 192usize);
        let src32: Vec<u32> = (0..rows * cols).map(|_| rng.random()).collect();
        let src16: Vec<u16> = (0..rows * cols).map(|_| rng.random()).collect();
        let (d32, d16) = (
            DeviceBuffer::from_slice(&d.device, &src32).unwrap(),
            DeviceBuffer::from_slice(&d.device, &src16).unwrap(),
        );
        let mut o32 = DeviceBuffer::<u32>::zeros(&d.device, rows * cols).unwrap();
        let mut o16 = DeviceBuffer::<u16>::zeros(&d.device, rows * cols).unwrap();
        let args = (rows as u32, cols as u32);
        // SAFETY: as above.
        unsafe {
            let cfg = LaunchConfig::new([6, 4, 1], [256, 1, 1]).with_dynamic_lds(LDS_B32);
            stream
                .launch(&b32, cfg, (&d32, &mut o32, args.0, args.1))
                .unwrap();
            let cfg = LaunchConfig::new([3, 2, 1], [256, 1, 1]).with_dynamic_lds(LDS_B16);
            stream
                .launch(&b16, cfg, (&d16, &mut o16, args.0, args.1))
                .unwrap();
        }
        for (name, c) in d.emulator.take_counters() {
            let [w1, w2, w4, w8, w12, w16] = c.global_access_widths;
            assert_eq!((w1, w4, w8, w12), (0, 0, 0, 0), "{} {name}", d.gfx);
            assert_eq!(w2, 0, "{} {name}: {w2} 2-byte accesses", d.gfx);
            assert!(w16 > 0, "{} {name}", d.gfx);
            assert_eq!(
                c.lds_bank_conflict_cycles, 0,
                "{} {name}: {} conflict cycles in {} LDS instructions",
                d.gfx, c.lds_bank_conflict_cycles, c.lds_accesses
            );
        }
        assert_eq!(
            o32.to_vec().unwrap(),
            reference(&src32, rows, cols),
            "{}",
            d.gfx
        );
        assert_eq!(
            o16.to_vec().unwrap(),
            reference(&src16, rows, cols),
            "{}",
            d.gfx
        );
    }
}

/// Runs a whole-block kernel on a `[rows, cols]` matrix of random `T` (sides multiples of 64, one
/// workgroup per 64 x 64 block) into a poisoned output with a guard zone, and checks the result,
/// the guard, that every global access was 16 bytes wide and that LDS saw no bank conflicts.
fn check_whole_blocks<T>(
    d: &iron_tests::devices::TestDevice,
    kernel: &iron::TypedKernel<fn(*const T, *mut T, u32, u32)>,
    (rows, cols): (usize, usize),
    lds: u32,
    rng: &mut StdRng,
) where
    T: bytemuck::Pod + PartialEq + std::fmt::Debug,
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    let src: Vec<T> = (0..rows * cols).map(|_| rng.random()).collect();
    let ds = DeviceBuffer::from_slice(&d.device, &src).unwrap();
    let poison: T = bytemuck::cast_slice(&[0x5Au8; 16])[0];
    let mut dst = DeviceBuffer::from_slice(&d.device, &vec![poison; rows * cols + GUARD]).unwrap();
    let grid = [(cols / 64) as u32, (rows / 64) as u32, 1];
    let cfg = LaunchConfig::new(grid, [transpose::BLOCK_THREADS, 1, 1]).with_dynamic_lds(lds);
    d.emulator.take_counters();
    // SAFETY: the kernel reads src[0..rows * cols] and writes dst[0..rows * cols], one
    // workgroup per 64 x 64 block of the grid; both sides are multiples of 64.
    unsafe {
        d.device
            .default_stream()
            .launch(kernel, cfg, (&ds, &mut dst, rows as u32, cols as u32))
            .unwrap()
    };
    let got = dst.to_vec().unwrap();
    let n = rows * cols;
    let context = format!("{} {rows}x{cols}", d.gfx);
    assert_eq!(got[..n], reference(&src, rows, cols)[..], "{context}");
    assert!(got[n..].iter().all(|&v| v == poison), "{context}: overran");
    for (name, c) in d.emulator.take_counters() {
        let [w1, w2, w4, w8, w12, w16] = c.global_access_widths;
        assert_eq!((w1, w2, w4, w8, w12), (0, 0, 0, 0, 0), "{context} {name}");
        assert!(w16 > 0, "{context} {name}");
        assert_eq!(c.lds_bank_conflict_cycles, 0, "{context} {name}");
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_whole_block_kernels_match_the_reference_without_bank_conflicts() {
    let mut rng = StdRng::seed_from_u64(25);
    for d in emulated_devices() {
        let b32 = d.module.kernel(transpose::transpose_blocks_b32).unwrap();
        let b16 = d.module.kernel(transpose::transpose_blocks_b16).unwrap();
        for shape in [(64, 64), (128, 192), (192, 64), (64, 320)] {
            check_whole_blocks(&d, &b32, shape, transpose::BLOCKS_B32_LDS, &mut rng);
            check_whole_blocks(&d, &b16, shape, transpose::BLOCKS_B16_LDS, &mut rng);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_transposes_floats_and_checks_its_buffers() {
    use iron::library::{Library, LibraryError, f16};
    let mut rng = StdRng::seed_from_u64(24);
    for d in emulated_devices() {
        let library = Library::from_module(d.module.clone()).unwrap();
        let stream = d.device.default_stream();
        for (rows, cols) in [(0, 9), (45, 70), (128, 64), (3, 1000), (192, 128)] {
            let src: Vec<f32> = (0..rows * cols).map(|_| rng.random()).collect();
            let ds = DeviceBuffer::from_slice(&d.device, &src).unwrap();
            let mut dst = DeviceBuffer::<f32>::zeros(&d.device, rows * cols).unwrap();
            library
                .transpose(&stream, &ds, &mut dst, rows, cols)
                .unwrap();
            let got: Vec<u32> = dst.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
            let bits: Vec<u32> = src.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                got,
                reference(&bits, rows, cols),
                "{} f32 {rows}x{cols}",
                d.gfx
            );

            let src: Vec<f16> = (0..rows * cols)
                .map(|_| f16::from_bits(rng.random()))
                .collect();
            let ds = DeviceBuffer::from_slice(&d.device, &src).unwrap();
            let mut dst = DeviceBuffer::<f16>::zeros(&d.device, rows * cols).unwrap();
            library
                .transpose(&stream, &ds, &mut dst, rows, cols)
                .unwrap();
            let got: Vec<u16> = dst.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
            let bits: Vec<u16> = src.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                got,
                reference(&bits, rows, cols),
                "{} f16 {rows}x{cols}",
                d.gfx
            );
        }
        let ds = DeviceBuffer::<u32>::zeros(&d.device, 12).unwrap();
        let mut dst = DeviceBuffer::<u32>::zeros(&d.device, 11).unwrap();
        let error = library.transpose(&stream, &ds, &mut dst, 3, 4).unwrap_err();
        assert!(matches!(
            error,
            LibraryError::BufferTooShort { buffer: "dst", .. }
        ));
    }
}
