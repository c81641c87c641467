//! The Rust test kernels (`tests/data/rust`) with seeded random inputs, compared with the same
//! computation in host Rust; one check per kernel, run per build by `run_rust_kernels.rs` (CDNA)
//! and `run_rdna_rust_kernels.rs` (RDNA). Outputs are poisoned first.

use super::variant::Variant;
use super::{Args, Loaded, bytes_of, data, from_bytes, load};
use half::f16;
use iron_emu::{Fault, InstructionClass};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn object(v: &Variant) -> std::path::PathBuf {
    data(&format!("rust_kernels_{}.elf", v.name))
}

fn kernels(v: &Variant) -> Loaded {
    load(&object(v))
}

/// Whether the kernels of `v` were built; says so when they were not.
pub fn built(v: &Variant) -> bool {
    super::variant::built(&object(v))
}

fn poison(k: &mut Loaded, bytes: usize) -> u64 {
    k.upload(&vec![0xa5; bytes])
}

fn ulps32(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

/// Check of the `fmath_matches_host_within_tolerance` test.
pub fn fmath_matches_host_within_tolerance(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(11);
    let n = 700usize;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-50.0f32..50.0)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "fmath",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [3, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let v = f64::from(x[i]);
        let s = v.abs().sqrt();
        let d = v / (s + 1.5);
        let e = (d * 0.25).exp();
        let l = (s + 2.0).ln();
        let want = d.mul_add(e, l) + v.floor() - s.powf(0.5);
        let tol = 2e-5 * (want.abs() + v.abs() + 1.0);
        assert!(
            (f64::from(y[i]) - want).abs() <= tol,
            "{gfx} element {i}: x={} got {} want {want}",
            x[i],
            y[i]
        );
    }
}

/// Check of the `dmath_divides_and_roots_in_double` test.
pub fn dmath_divides_and_roots_in_double(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(12);
    let n = 300usize;
    let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1e6..1e6)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 8);
    k.launch(
        "dmath",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f64> = from_bytes(&k.download(py, n * 8));
    for i in 0..n {
        let v = x[i];
        let want = v / (v.abs().sqrt() + 1.5) + (v * 3.0).floor();
        assert!(
            (y[i] - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{gfx} element {i}: {} vs {want}",
            y[i]
        );
    }
}

/// Check of the `loop_sum_hashes_strided_values` test.
pub fn loop_sum_hashes_strided_values(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(13);
    let n = 5000u32;
    let stride = 512u32;
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let threads = 512usize;
    let po = poison(&mut k, threads * 8);
    k.launch(
        "loop_sum",
        &Args::default().ptr(px).ptr(po).u32(n).u32(stride).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<u64> = from_bytes(&k.download(po, threads * 8));
    for (i, got) in out.iter().enumerate() {
        let mut acc = 0u64;
        let mut j = i as u32;
        while j < n {
            let v = u64::from(x[j as usize]);
            acc = acc.wrapping_mul(31).wrapping_add(v * v) ^ (acc >> 7);
            j += stride;
        }
        assert_eq!(*got, acc, "{gfx} thread {i}");
    }
}

/// Check of the `atomics_accumulate_every_lane` test.
pub fn atomics_accumulate_every_lane(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(14);
    let n = 1000usize;
    let x: Vec<f32> = (0..n)
        .map(|_| rng.random_range(-1000.0f32..1000.0))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let ctr = k.upload(&[0u8; 16]);
    let c64 = k.upload(&[0u8; 8]);
    let fsum = k.upload(&[0u8; 4]);
    let imax = k.upload(&bytes_of(&[i32::MIN]));
    let args = Args::default()
        .ptr(ctr)
        .ptr(c64)
        .ptr(fsum)
        .ptr(imax)
        .ptr(px)
        .u32(n as u32);
    let c = k
        .launch("atomics", &args.0, [4, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let counters: Vec<u32> = from_bytes(&k.download(ctr, 16));
    assert_eq!(counters[0], n as u32, "{gfx} count");
    assert_eq!(counters[1], u32::MAX, "{gfx} or of all lane bits");
    assert_eq!(
        counters[2],
        (0..n as u32).fold(0, |a, i| a ^ i),
        "{gfx} xor"
    );
    let sum64: Vec<u64> = from_bytes(&k.download(c64, 8));
    assert_eq!(sum64[0], (0..n as u64).sum::<u64>(), "{gfx} u64 sum");
    let max: Vec<i32> = from_bytes(&k.download(imax, 4));
    assert_eq!(
        max[0],
        x.iter().map(|v| *v as i32).max().unwrap(),
        "{gfx} max"
    );
    let fs: Vec<f32> = from_bytes(&k.download(fsum, 4));
    let want: f64 = x.iter().map(|v| f64::from(*v)).sum();
    assert!(
        (f64::from(fs[0]) - want).abs() < 0.5,
        "{gfx} float sum {} vs {want}",
        fs[0]
    );
    assert!(c.of(InstructionClass::VmemAtomic) > 0);
}

/// Check of the `lds_reduce_sums_each_workgroup` test.
pub fn lds_reduce_sums_each_workgroup(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(15);
    let groups = 5usize;
    let x: Vec<f32> = (0..groups * 256)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let po = poison(&mut k, groups * 4);
    let c = k
        .launch(
            "lds_reduce",
            &Args::default().ptr(px).ptr(po).0,
            [groups as u32, 1, 1],
            [256, 1, 1],
            1024,
        )
        .unwrap();
    let out: Vec<f32> = from_bytes(&k.download(po, groups * 4));
    for g in 0..groups {
        let want: f32 = x[g * 256..(g + 1) * 256].iter().sum();
        assert!(
            (out[g] - want).abs() < 1e-3,
            "{gfx} group {g}: {} vs {want}",
            out[g]
        );
    }
    assert!(
        c.barriers >= 9 * groups as u64,
        "{gfx} barriers {}",
        c.barriers
    );
    assert!(c.lds_accesses > 0);
}

/// Check of the `wave_ops_permute_and_vote` test.
pub fn wave_ops_permute_and_vote(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(16);
    let n = 512usize;
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let po = poison(&mut k, n * 4);
    k.launch(
        "wave_ops",
        &Args::default().ptr(px).ptr(po).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<u32> = from_bytes(&k.download(po, n * 4));
    // Lane l: bpermute reads lane (l + 1) % 64 and permute writes lane (l + 3) % 64, both
    // wrapping at `permute_wrap` lanes within l's group of that many lanes; the ballot covers
    // the wave's lanes.
    let (lanes, wrap) = (v.lanes, v.permute_wrap);
    let wrapped = |l: usize, offset: usize| l - l % wrap + (l + offset) % wrap;
    for wave in 0..n / lanes {
        let x = &x[wave * lanes..(wave + 1) * lanes];
        let ballot: u64 = (0..lanes)
            .filter(|&l| x[l] & 1 == 1)
            .map(|l| 1u64 << l)
            .sum();
        let mut permuted = vec![0u32; lanes];
        for (l, value) in x.iter().enumerate() {
            permuted[wrapped(l, 3)] = *value;
        }
        for l in 0..lanes {
            let b = x[wrapped(l, 1)];
            let d = if l % 16 == 0 { 0 } else { x[l - 1] };
            let want = b
                ^ d.wrapping_mul(3)
                ^ x[0]
                ^ ballot as u32
                ^ (ballot >> 32) as u32
                ^ permuted[l].rotate_left(5);
            assert_eq!(out[wave * lanes + l], want, "{gfx} wave {wave} lane {l}");
        }
    }
}

/// Check of the `wave_library_shuffles_and_reduces` test: `iron_intrinsics::wave` against the
/// same operations on the host, lane by lane.
pub fn wave_library_shuffles_and_reduces(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(19);
    let n = 512usize;
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let po = poison(&mut k, 7 * n * 4);
    k.launch(
        "wave_library",
        &Args::default().ptr(px).ptr(po).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<u32> = from_bytes(&k.download(po, 7 * n * 4));
    let lanes = v.lanes;
    for wave in 0..n / lanes {
        let x = &x[wave * lanes..(wave + 1) * lanes];
        let sum = x.iter().fold(0u32, |s, v| s.wrapping_add(*v));
        let max = *x.iter().max().unwrap();
        for l in 0..lanes {
            let prefix = x[..=l].iter().fold(0u32, |s, v| s.wrapping_add(*v));
            let want = [
                x[(x[l] >> 16) as usize % lanes],
                x[l ^ 5],
                x[l ^ (lanes / 2)],
                sum,
                max,
                prefix,
                x[0],
            ];
            let got = &out[7 * (wave * lanes + l)..][..7];
            assert_eq!(got, want, "{gfx} wave {wave} lane {l}");
        }
    }
}

/// Check of the `i64_and_u32_division_match_rust` test.
pub fn i64_and_u32_division_match_rust(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(17);
    let n = 600usize;
    let x: Vec<i64> = (0..n)
        .map(|_| rng.random_range(-(1i64 << 60)..(1i64 << 60)))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 8);
    k.launch(
        "i64_math",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [3, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i64> = from_bytes(&k.download(py, n * 8));
    for i in 0..n {
        let v = x[i];
        let q = (v / 7).wrapping_sub((v % 13).wrapping_mul(5));
        let u = (v as u64) >> (i % 63);
        let want = q
            ^ (u as i64)
            ^ v.wrapping_mul(0x1234_5678_9abc)
            ^ i64::from(v.leading_zeros())
            ^ i64::from(v.count_ones());
        assert_eq!(y[i], want, "{gfx} i64 element {i}");
    }
    let xs: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&xs));
    let py = poison(&mut k, n * 4);
    k.launch(
        "u32_div",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [3, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let v = xs[i];
        let d = (i as u32 % 17) + 1;
        let want = (v / d)
            .wrapping_add(v % (d + 3))
            .wrapping_add((v as i32 / -(d as i32)) as u32);
        assert_eq!(y[i], want, "{gfx} u32 element {i}");
    }
}

/// Check of the `half_math_rounds_like_f16` test.
pub fn half_math_rounds_like_f16(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(18);
    let n = 400usize;
    let x: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(rng.random_range(-30.0f32..30.0)))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 2);
    let pz = poison(&mut k, n * 4);
    k.launch(
        "half_math",
        &Args::default().ptr(px).ptr(py).ptr(pz).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f16> = from_bytes(&k.download(py, n * 2));
    let z: Vec<f32> = from_bytes(&k.download(pz, n * 4));
    for i in 0..n {
        let v = x[i];
        let two_v = f16::from_f32(v.to_f32() * 2.0);
        let w = f16::from_f32(two_v.to_f32() + 0.5);
        let want_y = if w > v {
            f16::from_f32(w.to_f32() - v.to_f32())
        } else {
            f16::from_f32(w.to_f32() * v.to_f32())
        };
        let fused = f16::from_f64(f64::from(v.to_f32()).mul_add(2.0, 0.5));
        let ok = |got: f16| {
            got == want_y || {
                let w2 = fused;
                got == if w2 > v {
                    f16::from_f32(w2.to_f32() - v.to_f32())
                } else {
                    f16::from_f32(w2.to_f32() * v.to_f32())
                }
            }
        };
        assert!(ok(y[i]), "{gfx} y[{i}] = {} for x = {v}", y[i]);
        let zw = [w.to_f32() * 1.25, fused.to_f32() * 1.25];
        assert!(zw.contains(&z[i]), "{gfx} z[{i}] = {} want {zw:?}", z[i]);
    }
}

/// Check of the `conversions_saturate_like_rust` test.
pub fn conversions_saturate_like_rust(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(19);
    let n = 300usize;
    let mut x: Vec<f32> = (0..n).map(|_| rng.random_range(-1e5f32..1e5)).collect();
    x[0] = f32::NAN;
    x[1] = 3e9;
    x[2] = -3e9;
    x[3] = 25.7;
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    let pz = poison(&mut k, n);
    let pw = poison(&mut k, n * 2);
    k.launch(
        "conv",
        &Args::default()
            .ptr(px)
            .ptr(py)
            .ptr(pz)
            .ptr(pw)
            .u32(n as u32)
            .0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i32> = from_bytes(&k.download(py, n * 4));
    let z = k.download(pz, n);
    let w: Vec<u16> = from_bytes(&k.download(pw, n * 2));
    for i in 0..n {
        let v = x[i];
        let want_y = (v as i32)
            .wrapping_add((v as u32) as i32)
            .wrapping_add((f64::from(v) * 3.0) as i32);
        assert_eq!(y[i], want_y, "{gfx} y[{i}] for {v}");
        assert_eq!(z[i], (v * 10.0) as u8, "{gfx} z[{i}] for {v}");
        assert_eq!(w[i], (v as i16) as u16, "{gfx} w[{i}] for {v}");
    }
}

/// Check of the `slices_are_bounds_checked` test.
pub fn slices_are_bounds_checked(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let n = 512usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    let args = Args::default().ptr(px).u64(n as u64).ptr(py).u64(n as u64);
    k.launch("sl", &args.0, [2, 1, 1], [256, 1, 1], 0).unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        assert_eq!(y[i], x[i] * 2.0, "{gfx} element {i}");
    }
    // One workgroup too many: the bounds check panics, which traps.
    let err = k
        .launch("sl", &args.0, [3, 1, 1], [256, 1, 1], 0)
        .unwrap_err();
    match &err {
        iron_emu::EmuError::Execution {
            fault: Fault::Trap(2),
            workgroup,
            instruction,
            ..
        } => {
            assert_eq!(workgroup[0], 2, "{gfx}: {err}");
            assert!(instruction.starts_with("s_trap"), "{gfx}: {err}");
        }
        other => panic!("{gfx}: expected a trap, got {other}"),
    }
}

/// Check of the `grid2d_uses_two_dimensional_ids` test.
pub fn grid2d_uses_two_dimensional_ids(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(20);
    let (w, h) = (40u32, 23u32);
    let x: Vec<f32> = (0..w * h).map(|_| rng.random_range(-4.0f32..4.0)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, (w * h) as usize * 4);
    k.launch(
        "grid2d",
        &Args::default().ptr(px).ptr(py).u32(w).u32(h).0,
        [3, 2, 1],
        [16, 16, 1],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, (w * h) as usize * 4));
    for cy in 0..h {
        for cx in 0..w {
            let i = (cy * w + cx) as usize;
            let l = if cx > 0 { x[i - 1] } else { 0.0 };
            let r = if cx + 1 < w { x[i + 1] } else { 0.0 };
            let want = l + r - 2.0 * x[i];
            assert!(
                ulps32(y[i], want) <= 1,
                "{gfx} ({cx},{cy}): {} vs {want}",
                y[i]
            );
        }
    }
}

/// Check of the `dispatch_packet_and_ids_are_visible` test.
pub fn dispatch_packet_and_ids_are_visible(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let po = poison(&mut k, 3 * 16);
    k.launch(
        "dispatch_info",
        &Args::default().ptr(po).0,
        [3, 1, 1],
        [192, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<u32> = from_bytes(&k.download(po, 3 * 16));
    for g in 0..3 {
        assert_eq!(out[g * 4], 192, "{gfx} workgroup_size_x");
        assert_eq!(out[g * 4 + 1], 576, "{gfx} grid_size_x");
        assert_eq!(out[g * 4 + 2] as usize, v.lanes, "{gfx} wave size");
    }
    let first_id = out[3];
    let po2 = poison(&mut k, 16);
    k.launch(
        "dispatch_info",
        &Args::default().ptr(po2).0,
        [1, 1, 1],
        [64, 1, 1],
        0,
    )
    .unwrap();
    let out2: Vec<u32> = from_bytes(&k.download(po2, 16));
    assert_eq!(out2[3], first_id + 1, "{gfx} dispatch id increments");
}

/// Check of the `byte_loads_sign_and_zero_extend` test.
pub fn byte_loads_sign_and_zero_extend(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(21);
    let n = 300usize;
    let x: Vec<u8> = (0..n + 1).map(|_| rng.random()).collect();
    let px = k.upload(&x);
    let py = poison(&mut k, n * 2);
    k.launch(
        "bytes",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u16> = from_bytes(&k.download(py, n * 2));
    for i in 0..n {
        let b = u16::from(x[i]);
        let c = x[i + 1] as i8;
        let want = b.wrapping_mul(3).wrapping_add(c as u16) | ((b.leading_zeros() as u16) << 12);
        assert_eq!(y[i], want, "{gfx} element {i}");
    }
}

/// Check of the `stack_arrays_live_in_scratch` test.
pub fn stack_arrays_live_in_scratch(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(22);
    let n = 512usize;
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "stack_array",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let mut arr = [0u32; 64];
        for (kk, a) in arr.iter_mut().enumerate() {
            *a = x[(i + kk) % n];
        }
        let idx = x[i] as usize % 64;
        arr[idx] ^= 0xdead;
        let s = (0..64).fold(0u32, |s, kk| s.wrapping_add(arr[(kk * 7 + idx) % 64]));
        assert_eq!(y[i], s, "{gfx} element {i}");
    }
}
