//! `Library::scan` (the decoupled look-back prefix sums `scan_u32` and `scan_f32`) on every
//! emulated gfx: inclusive and exclusive, sizes around the wave, the work-item's 8 elements and
//! the 2048-element tile, seeded u32 values over the whole range (the sums wrap), f32 values
//! with subnormals, signed zeros, infinities and NaNs, poisoned outputs with a guard zone; and
//! under several schedules and few compute units, where workgroups wait for each other's
//! published sums.

mod common;

use common::{GUARD, SIZES, TestFloat, assert_floats_written, library_devices, rng};
use iron::DeviceBuffer;
use iron::emulator::Schedule;
use iron::library::{ScanElement, ScanKind};
use iron_kernels::scan::ITEMS;
use iron_tests::oracle::scan::{prefix_sums_f32, prefix_sums_u32};
use rand::Rng;
use rand::rngs::StdRng;

/// Elements one workgroup of the library's scan covers (256 work-items of [`ITEMS`]).
const TILE: usize = 256 * ITEMS as usize;

/// A word no scan of the tests' inputs is likely to write (and checked not to be an expected
/// value where it matters).
const POISON: u32 = 0xDEAD_BEEF;

/// The sizes scanned: the common ones, the edges of a tile, and grids of a few and of many
/// tiles.
fn scan_sizes() -> Vec<usize> {
    let mut sizes = SIZES.to_vec();
    sizes.extend([TILE - 1, TILE, TILE + 1, 3 * TILE + 5, 37 * TILE + 101]);
    sizes
}

const KINDS: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];

/// Scans `x` on `d` into an output of `x.len() + GUARD` elements of `poison`, and returns it.
fn scanned<T: ScanElement>(
    d: &common::LibraryDevice,
    x: &[T],
    poison: T,
    kind: ScanKind,
    context: &str,
) -> Vec<T> {
    let n = x.len();
    let x_buf = DeviceBuffer::from_slice(&d.device, x).unwrap();
    let mut y = DeviceBuffer::from_slice(&d.device, &vec![poison; n + GUARD]).unwrap();
    let s = d.device.default_stream();
    d.library
        .scan(&s, &x_buf, &mut y, n, kind)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    y.to_vec().unwrap()
}

/// Scans `x` on `d` and checks every element against the wrapping oracle and the guard.
fn check_u32(d: &common::LibraryDevice, x: &[u32], kind: ScanKind, context: &str) {
    let n = x.len();
    let got = scanned(d, x, POISON, kind, context);
    let want = prefix_sums_u32(x, kind == ScanKind::Inclusive);
    if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
        panic!("{context}: y[{i}] = {:#x}, want {:#x}", got[i], want[i]);
    }
    assert!(
        got[n..].iter().all(|&v| v == POISON),
        "{context}: the guard past y[{n}] was written"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scan_u32_writes_the_wrapping_prefix_sums() {
    let mut rng = rng(41);
    for d in library_devices() {
        for n in scan_sizes() {
            for kind in KINDS {
                let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
                check_u32(&d, &x, kind, &format!("{} scan_u32 {kind:?} n={n}", d.gfx));
            }
        }
        d.clear_counters();
    }
}

/// `n` f32 values uniform in `[-10, 10]`, with every 13th an edge value that keeps the sums
/// finite: signed zeros, subnormals, tiny and large-but-cancelling magnitudes.
fn finite_values(rng: &mut StdRng, n: usize) -> Vec<f32> {
    let edges = [0.0, -0.0, 1e-45, -3e-45, 1.1754942e-38, 1e-30, 3e4, -3e4];
    (0..n)
        .map(|i| {
            if i % 13 == 6 {
                edges[rng.random_range(0..edges.len())]
            } else {
                rng.random_range(-10.0f32..=10.0)
            }
        })
        .collect()
}

/// Scans `x` on `d` and checks every element against the oracle's bound and the guard.
fn check_f32(d: &common::LibraryDevice, x: &[f32], kind: ScanKind, context: &str) {
    let n = x.len();
    let got = scanned(d, x, f32::from_bits(f32::POISON), kind, context);
    assert_floats_written(&got, n, context);
    let exact: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let want = prefix_sums_f32(&exact, kind == ScanKind::Inclusive, TILE);
    for i in 0..n {
        assert!(
            want[i].accepts(f64::from(got[i])),
            "{context}: y[{i}] = {:e}, want {:e} within {:e}",
            got[i],
            want[i].value,
            want[i].error
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scan_f32_is_within_the_rounding_of_any_grouping() {
    let mut rng = rng(42);
    for d in library_devices() {
        for n in scan_sizes() {
            for kind in KINDS {
                let x = finite_values(&mut rng, n);
                check_f32(&d, &x, kind, &format!("{} scan_f32 {kind:?} n={n}", d.gfx));
            }
        }
        d.clear_counters();
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scan_f32_carries_infinities_and_nans_into_later_tiles() {
    let mut rng = rng(43);
    let n = 5 * TILE + 3;
    for d in library_devices() {
        for kind in KINDS {
            let mut x = finite_values(&mut rng, n);
            x[TILE + 17] = f32::INFINITY;
            x[3 * TILE - 1] = f32::NAN;
            let context = format!("{} scan_f32 {kind:?} with inf and NaN", d.gfx);
            check_f32(&d, &x, kind, &context);
        }
        d.clear_counters();
    }
}

/// The wave-instructions of the one `scan_u32` dispatch since the last call.
fn scan_instructions(d: &common::LibraryDevice) -> u64 {
    let dispatches = d.emulator.take_counters();
    let scans: Vec<u64> = dispatches
        .iter()
        .filter(|(name, _)| name == "scan_u32")
        .map(|(_, c)| c.total_instructions())
        .collect();
    assert_eq!(scans.len(), 1, "{}: the scan dispatches", d.gfx);
    scans[0]
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scan_finishes_under_every_schedule_and_on_one_compute_unit() {
    let mut rng = rng(44);
    let n = 24 * TILE + 7;
    for d in library_devices() {
        let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        d.clear_counters();
        // One after another, each workgroup finds its predecessor's prefix at once: the
        // fewest instructions a scan can take.
        d.emulator.set_compute_units(1);
        d.emulator.set_schedule(Schedule::InOrder);
        check_u32(&d, &x, ScanKind::Inclusive, &format!("{} in order", d.gfx));
        let sequential = scan_instructions(&d);
        let mut waited = 0;
        for compute_units in [1, 2, 8] {
            d.emulator.set_compute_units(compute_units);
            for seed in 1..=3 {
                d.emulator.set_schedule(Schedule::Random { seed });
                let context = format!("{} random:{seed} on {compute_units} CUs", d.gfx);
                check_u32(&d, &x, ScanKind::Inclusive, &context);
                let ran = scan_instructions(&d);
                assert!(ran >= sequential, "{context}: {ran} < {sequential}");
                waited = waited.max(ran - sequential);
            }
        }
        // With every workgroup resident, some polled a tile not yet published.
        assert!(waited > 0, "{}: no workgroup ever waited", d.gfx);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scan_rejects_short_buffers_and_launches_nothing_for_no_elements() {
    for d in library_devices() {
        let s = d.device.default_stream();
        let x = DeviceBuffer::from_slice(&d.device, &[1u32, 2, 3]).unwrap();
        let mut y = DeviceBuffer::from_slice(&d.device, &[POISON; 2]).unwrap();
        let err = d
            .library
            .scan(&s, &x, &mut y, 3, ScanKind::Inclusive)
            .unwrap_err();
        assert_eq!(err.to_string(), "scan: y holds 2 elements, n = 3");
        let err = d
            .library
            .scan(&s, &x, &mut y, 4, ScanKind::Exclusive)
            .unwrap_err();
        assert_eq!(err.to_string(), "scan: x holds 3 elements, n = 4");
        d.library
            .scan(&s, &x, &mut y, 0, ScanKind::Inclusive)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), [POISON; 2]);
        assert!(d.emulator.take_counters().is_empty(), "{}", d.gfx);
    }
}
