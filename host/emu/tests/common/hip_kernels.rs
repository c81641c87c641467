//! The HIP C++ test kernels (`tests/data/src/hip_kernels.hip`, built by clang-22) with seeded
//! random inputs, compared with host Rust computations; one check per kernel, run per build by
//! `run_hip_kernels.rs` (CDNA) and `run_rdna_hip_kernels.rs` (RDNA). Outputs are poisoned first.

use super::variant::Variant;
use super::{Args, Loaded, bytes_of, data, from_bytes, load};
use half::f16;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn object(v: &Variant) -> std::path::PathBuf {
    data(&format!("hip_kernels_{}.co", v.name))
}

fn kernels(v: &Variant) -> Loaded {
    load(&object(v))
}

/// Whether the kernels of `v` were built; says so when they were not.
pub fn built(v: &Variant) -> bool {
    super::variant::built(&object(v))
}

fn poison(k: &mut Loaded, bytes: usize) -> u64 {
    k.upload(&vec![0x5a; bytes])
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1.0) || (got.is_nan() && want.is_nan())
}

/// Check of the `saxpy_fuses` test.
pub fn saxpy_fuses(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(31);
    let n = 777usize;
    let a = 1.7f32;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-10.0f32..10.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.random_range(-10.0f32..10.0)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = k.upload(&bytes_of(&y));
    k.launch(
        "saxpy",
        &Args::default().f32(a).ptr(px).ptr(py).u32(n as u32).0,
        [4, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<f32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        assert_eq!(out[i], a.mul_add(x[i], y[i]), "{gfx} element {i}");
    }
}

/// Check of the `reduce_shared_uses_static_lds` test.
pub fn reduce_shared_uses_static_lds(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(32);
    let groups = 3usize;
    let x: Vec<f32> = (0..groups * 256)
        .map(|_| rng.random_range(0.0f32..1.0))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let po = poison(&mut k, groups * 4);
    k.launch(
        "reduce_shared",
        &Args::default().ptr(px).ptr(po).0,
        [groups as u32, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let out: Vec<f32> = from_bytes(&k.download(po, groups * 4));
    for g in 0..groups {
        let mut s = x[g * 256..(g + 1) * 256].to_vec();
        let mut w = 128;
        while w > 0 {
            for t in 0..w {
                s[t] += s[t + w];
            }
            w >>= 1;
        }
        assert_eq!(out[g], s[0], "{gfx} group {g}");
    }
}

/// Check of the `shuffles_follow_dpp_swizzle_and_permute_rules` test.
pub fn shuffles_follow_dpp_swizzle_and_permute_rules(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(33);
    let n = 256usize;
    let x: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "shuffles",
        &Args::default().ptr(px).ptr(py).0,
        [1, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i32> = from_bytes(&k.download(py, n * 4));
    let (lanes, wrap) = (v.lanes, v.permute_wrap);
    for wave in 0..n / lanes {
        let s = &x[wave * lanes..(wave + 1) * lanes];
        for l in 0..lanes {
            let (row, r) = (l & !15, l & 15);
            // Both families: bpermute from lane l ^ 1, quad_perm [2,3,0,1], swizzle xor 1,
            // readlane 5, row_half_mirror into rows 1 and 3 and banks 0 and 2, row_ror:1.
            let a = s[l - l % wrap + (l ^ 1) % wrap];
            let c = s[(l & !3) | [2, 3, 0, 1][l & 3]];
            let d = s[l ^ 1];
            let e = s[5];
            let f = if (row / 16) % 2 == 1 && (r / 4) % 2 == 0 {
                s[row + (r & 8) + 7 - (r & 7)]
            } else {
                s[l]
            };
            let m = s[row + (r + 15) % 16];
            let (b, g, h, k2, n2) = if v.rdna {
                // row_share:2, row_xmask:5 into banks 0 and 1, dpp8, permlane16 (identity, then
                // reversed), permlanex16 (reversed, then identity, from the other row).
                (
                    s[row + 2],
                    if r < 8 { s[row + (r ^ 5)] } else { s[l] },
                    s[(l & !7) + [1, 0, 3, 2, 7, 7, 5, 4][l % 8]],
                    s[row + if r < 8 { r } else { 23 - r }],
                    s[(row ^ 16) + if r < 8 { 7 - r } else { r }],
                )
            } else {
                // wave_shl:1, wave_ror:1, row_bcast:15, row_bcast:31, row_shl:1.
                (
                    if l < 63 { s[l + 1] } else { 0 },
                    s[(l + 63) % 64],
                    if row > 0 { s[row - 1] } else { 0 },
                    if l >= 32 { s[31] } else { 0 },
                    if r < 15 { s[l + 1] } else { 0 },
                )
            };
            let want = a
                .wrapping_add(b.wrapping_mul(3))
                .wrapping_add(c ^ d)
                .wrapping_add(e)
                .wrapping_sub(f)
                .wrapping_add(g)
                .wrapping_add(h)
                .wrapping_add(k2)
                .wrapping_add(m)
                .wrapping_add(n2);
            assert_eq!(y[wave * lanes + l], want, "{gfx} wave {wave} lane {l}");
        }
    }
}

/// Check of the `double_math` test.
pub fn double_math(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(34);
    let n = 300usize;
    let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1e4..1e4)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 8);
    k.launch(
        "dbl",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f64> = from_bytes(&k.download(py, n * 8));
    for i in 0..n {
        let v = x[i];
        let want =
            (v * v + 1.0).sqrt() / (v - 3.0) + v.mul_add(2.0, 1.0) + v.floor() + (v as i64) as f64;
        assert!(
            close(y[i], want, 1e-12),
            "{gfx} element {i}: {} vs {want}",
            y[i]
        );
    }
}

/// Check of the `packed_halves` test.
pub fn packed_halves(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(35);
    let n = 300usize;
    let x: Vec<f16> = (0..2 * n)
        .map(|_| f16::from_f32(rng.random_range(-8.0f32..8.0)))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    let pz = poison(&mut k, n * 4);
    k.launch(
        "halfs",
        &Args::default().ptr(px).ptr(py).ptr(pz).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f16> = from_bytes(&k.download(py, n * 4));
    let z: Vec<f32> = from_bytes(&k.download(pz, n * 4));
    for i in 0..n {
        let (vx, vy) = (x[2 * i], x[2 * i + 1]);
        let fma = |a: f16, c: f32| {
            f16::from_f64(f64::from(a.to_f32()).mul_add(f64::from(a.to_f32()), f64::from(c)))
        };
        let (wx, wy) = (fma(vx, 1.0), fma(vy, 2.0));
        assert_eq!(
            y[2 * i],
            f16::from_f32(wx.to_f32() - vx.to_f32()),
            "{gfx} y.x[{i}]"
        );
        assert_eq!(
            y[2 * i + 1],
            f16::from_f32(wy.to_f32() - vy.to_f32()),
            "{gfx} y.y[{i}]"
        );
        let mx = if vx > vy { vx } else { vy };
        let want = f64::from(wx.to_f32()) * f64::from(wy.to_f32()) + f64::from(mx.to_f32());
        assert!(
            close(f64::from(z[i]), want, 1e-6),
            "{gfx} z[{i}] {} vs {want}",
            z[i]
        );
    }
}

/// Check of the `integer_ops` test.
pub fn integer_ops(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(36);
    let n = 600usize;
    let mut x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    x[0] = 0;
    x[1] = 0x8000_0000;
    x[2] = u32::MAX;
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "intops",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [3, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let v = x[i];
        let mut r = v.count_ones() + (v | 1).leading_zeros() + (v | 0x8000_0000).trailing_zeros();
        r = r
            .wrapping_add(v / 10)
            .wrapping_add(v % 7)
            .wrapping_add((v as i32).wrapping_div(-3) as u32)
            .wrapping_add((u64::from(v).wrapping_mul(0x1_2345_6789) >> 32) as u32);
        r ^= v
            .reverse_bits()
            .wrapping_add(v >> (i & 31))
            .wrapping_add(((v as i32) >> 3) as u32);
        let ubfe = (v >> 3) & 0x7f;
        let sbfe = ((((v >> 5) & 0x1ff) << 23) as i32 >> 23) as u32;
        r = r.wrapping_add(ubfe).wrapping_add(sbfe);
        r = r
            .wrapping_add(v.max(1000))
            .wrapping_add((v as i32).wrapping_abs() as u32);
        assert_eq!(y[i], r, "{gfx} element {i} (x = {v:#x})");
    }
}

/// Check of the `float_functions` test.
pub fn float_functions(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(37);
    let n = 500usize;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-10.0f32..10.0)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "fops",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let v = f64::from(x[i]);
        let mut r = v.abs().sqrt() + (v * 0.1).exp() + (v.abs() + 1.0).ln();
        r += 1.0 / (v + 0.5) + v.sin() * v.cos() + v.trunc() + v.ceil() + v.round_ties_even();
        r += v.min(2.0) + v.max(-2.0) + v.exp2() + (v.abs() + 2.0).log2();
        r += 1.0 / (v.abs() + 1.0).sqrt() + (v - v.floor()) + v * 8.0 + 1f64.copysign(v);
        r += f64::from(x[i] as i32) + f64::from(x[i].abs() as u32);
        let scale = v.abs().exp2() + 1.0 / (v + 0.5).abs() + 30.0;
        assert!(
            (f64::from(y[i]) - r).abs() <= 2e-5 * scale,
            "{gfx} element {i}: x = {} got {} want {r}",
            x[i],
            y[i]
        );
    }
}

/// Check of the `global_atomics` test.
pub fn global_atomics(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(38);
    let n = 700usize;
    let x: Vec<i32> = (0..n)
        .map(|_| rng.random_range(-100_000..100_000))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let init: [u32; 6] = [0, u32::MAX, 0, 5, 0, 0];
    let pc = k.upload(&bytes_of(&init));
    let pd = k.upload(&[0u8; 8]);
    let pf = k.upload(&[0u8; 4]);
    let pm = k.upload(&bytes_of(&[i32::MIN, i32::MAX]));
    let args = Args::default()
        .ptr(pc)
        .ptr(pd)
        .ptr(pf)
        .ptr(pm)
        .ptr(px)
        .u32(n as u32);
    k.launch("atomics", &args.0, [3, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let c: Vec<u32> = from_bytes(&k.download(pc, 24));
    let d: Vec<u64> = from_bytes(&k.download(pd, 8));
    let f: Vec<f32> = from_bytes(&k.download(pf, 4));
    let m: Vec<i32> = from_bytes(&k.download(pm, 8));
    assert_eq!(c[0], n as u32, "{gfx} add");
    assert_eq!(
        c[1],
        x.iter().fold(u32::MAX, |a, v| a & *v as u32),
        "{gfx} and"
    );
    assert!(
        x.iter().any(|v| *v as u32 == c[3]),
        "{gfx} cmpswap stored one lane's value"
    );
    assert_eq!(c[4], (n % 101) as u32, "{gfx} inc wraps at the limit");
    let mut dec = 0u32;
    for _ in 0..n {
        dec = if dec == 0 || dec > 100 { 100 } else { dec - 1 };
    }
    assert_eq!(c[5], dec, "{gfx} dec");
    assert_eq!(
        d[0],
        x.iter().fold(0u64, |a, v| a.wrapping_add(*v as i64 as u64)),
        "{gfx} u64 add"
    );
    assert_eq!(m[0], *x.iter().max().unwrap(), "{gfx} max");
    assert_eq!(m[1], *x.iter().min().unwrap(), "{gfx} min");
    let sum: f64 = x.iter().map(|v| f64::from(*v)).sum();
    assert!(
        (f64::from(f[0]) - sum).abs() < 64.0,
        "{gfx} float add {} vs {sum}",
        f[0]
    );
}

/// Check of the `lds_atomics_and_return_values` test.
pub fn lds_atomics_and_return_values(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(39);
    let groups = 2usize;
    let x: Vec<u32> = (0..groups * 256).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let po = poison(&mut k, groups * 64 * 4);
    let pord = poison(&mut k, groups * 256 * 4);
    let c = k
        .launch(
            "lds_atomics",
            &Args::default().ptr(po).ptr(pord).ptr(px).0,
            [groups as u32, 1, 1],
            [256, 1, 1],
            0,
        )
        .unwrap();
    let out: Vec<u32> = from_bytes(&k.download(po, groups * 64 * 4));
    let order: Vec<u32> = from_bytes(&k.download(pord, groups * 256 * 4));
    for g in 0..groups {
        let v = &x[g * 256..(g + 1) * 256];
        let (mut add, mut max, mut or) = ([0u32; 64], [0u32; 64], [0u32; 64]);
        for (t, &val) in v.iter().enumerate() {
            add[(val % 64) as usize] += 1;
            let s = ((val >> 8) % 64) as usize;
            max[s] = max[s].max(val);
            or[t % 64] |= val;
        }
        for t in 0..64 {
            let want = add[t]
                .wrapping_add(max[t])
                .wrapping_add(or[t])
                .wrapping_add(1);
            assert_eq!(out[g * 64 + t], want, "{gfx} group {g} slot {t}");
        }
        let mut seen: Vec<u32> = order[g * 256..(g + 1) * 256].to_vec();
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..256).collect::<Vec<u32>>(),
            "{gfx} returned counter values"
        );
    }
    assert!(c.lds_accesses > 0);
}

/// Check of the `wide_lds_accesses` test.
pub fn wide_lds_accesses(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(40);
    let x: Vec<f32> = (0..256 * 4)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, 256 * 16);
    k.launch(
        "lds_wide",
        &Args::default().ptr(px).ptr(py).0,
        [1, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, 256 * 16));
    let mut d2 = [0f64; 512];
    for t in 0..256 {
        d2[2 * t] = t as f64;
        d2[2 * t + 1] = 2.0 * t as f64;
    }
    for t in 0..256usize {
        let add = (d2[511 - 2 * t] + d2[(3 * t) & 511]) as f32;
        for c in 0..4 {
            let want = x[(255 - t) * 4 + c] + x[((t + 17) & 255) * 4 + c] + add;
            assert_eq!(y[t * 4 + c], want, "{gfx} thread {t} component {c}");
        }
    }
}

/// Check of the `local_arrays_use_scratch` test.
pub fn local_arrays_use_scratch(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(41);
    let n = 512usize;
    let x: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "local_array",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let mut arr = [0i32; 40];
        for (kk, a) in arr.iter_mut().enumerate() {
            *a = x[(i + kk) % n];
        }
        let idx = (x[i] & 31) as usize;
        arr[idx] += 7;
        let s = (0..40).fold(0i32, |s, kk| {
            s.wrapping_add(arr[(kk * 3 + idx) % 40].wrapping_mul(kk as i32))
        });
        assert_eq!(y[i], s, "{gfx} element {i}");
    }
}

/// Check of the `three_dimensional_grid` test.
pub fn three_dimensional_grid(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let (w, h, depth) = (20u32, 13u32, 8u32);
    let len = (w * h * depth) as usize;
    let py = poison(&mut k, len * 4);
    k.launch(
        "grid3",
        &Args::default().ptr(py).u32(w).u32(h).0,
        [3, 2, 2],
        [8, 8, 4],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, len * 4));
    for z in 0..depth {
        for yy in 0..h {
            for x in 0..w {
                let want = x as f32 + yy as f32 * 100.0 + z as f32 * 10000.0;
                assert_eq!(
                    y[((z * h + yy) * w + x) as usize],
                    want,
                    "{gfx} ({x},{yy},{z})"
                );
            }
        }
    }
}

/// Check of the `wave_votes` test.
pub fn wave_votes(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(42);
    let n = 256usize;
    let x: Vec<i32> = (0..n).map(|_| rng.random_range(-5..5)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 8);
    k.launch(
        "wave_vote",
        &Args::default().ptr(px).ptr(py).0,
        [1, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u64> = from_bytes(&k.download(py, n * 8));
    let lanes = v.lanes;
    for wave in 0..n / lanes {
        let s = &x[wave * lanes..(wave + 1) * lanes];
        let positive: u64 = (0..lanes).filter(|&l| s[l] > 0).map(|l| 1u64 << l).sum();
        let first = s[0];
        let same: u64 = (0..lanes)
            .filter(|&l| s[l] == first)
            .map(|l| 1u64 << l)
            .sum();
        for l in 0..lanes {
            let want = positive
                .wrapping_add(l as u64)
                .wrapping_add(first as i64 as u64)
                .wrapping_add(same);
            assert_eq!(y[wave * lanes + l], want, "{gfx} wave {wave} lane {l}");
        }
    }
}

/// Check of the `int64_ops` test.
pub fn int64_ops(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(43);
    let n = 400usize;
    let x: Vec<i64> = (0..n)
        .map(|_| rng.random_range(-(1i64 << 52)..(1i64 << 52)))
        .collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 8);
    k.launch(
        "i64ops",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i64> = from_bytes(&k.download(py, n * 8));
    for i in 0..n {
        let v = x[i];
        let u = v as u64;
        let want = (v / 1_000_003)
            .wrapping_add(v % 77)
            .wrapping_add((u >> 17) as i64)
            .wrapping_add(v.wrapping_shl(5))
            .wrapping_add(i64::from(u.count_ones()))
            .wrapping_add(i64::from((u | 1).leading_zeros()))
            .wrapping_add((v as f64 * 0.5) as i64);
        assert_eq!(y[i], want, "{gfx} element {i}");
    }
}

/// Check of the `byte_arithmetic` test.
pub fn byte_arithmetic(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(44);
    let n = 300usize;
    let x: Vec<u8> = (0..n + 1).map(|_| rng.random()).collect();
    let px = k.upload(&x);
    let py = poison(&mut k, n * 2);
    let pz = poison(&mut k, n);
    k.launch(
        "bytes",
        &Args::default().ptr(px).ptr(py).ptr(pz).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<u16> = from_bytes(&k.download(py, n * 2));
    let z = k.download(pz, n);
    for i in 0..n {
        let c = i32::from(x[i]);
        assert_eq!(y[i], (c * 300 + i32::from(x[i + 1])) as u16, "{gfx} y[{i}]");
        assert_eq!(z[i] as i8, ((c - 128) / 3) as i8, "{gfx} z[{i}]");
    }
}

/// Check of the `packed_f32_math` test.
pub fn packed_f32_math(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(45);
    let n = 512usize;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-3.0f32..3.0)).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, n * 4);
    k.launch(
        "pk_math",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [1, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, n * 4));
    for i in 0..n {
        let c = [1.0f32, 2.0][i % 2];
        let s = [0.5f32, 0.25][i % 2];
        let b = x[i].mul_add(x[i], c);
        let want = b.mul_add(s, x[i]);
        assert_eq!(y[i], want, "{gfx} element {i}");
    }
}

/// Check of the `matrix_vector_with_shuffle_reduction` test.
pub fn matrix_vector_with_shuffle_reduction(v: &Variant) {
    let gfx = v.name;
    let mut k = kernels(v);
    let mut rng = StdRng::seed_from_u64(46);
    let (rows, cols) = (3usize, 700usize);
    let a: Vec<f32> = (0..rows * cols)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let x: Vec<f32> = (0..cols).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let pa = k.upload(&bytes_of(&a));
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, rows * 4);
    let args = Args::default()
        .ptr(pa)
        .ptr(px)
        .ptr(py)
        .u32(rows as u32)
        .u32(cols as u32);
    k.launch("matvec", &args.0, [rows as u32, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let y: Vec<f32> = from_bytes(&k.download(py, rows * 4));
    for r in 0..rows {
        // Thread t sums columns t, t + 256, ...; the shuffle reduction adds, for off = 32 .. 1,
        // the value of the lane its bpermute address (t ^ off) names, and thread 0 adds the
        // results of threads 0, 64, 128 and 192. With 64-lane waves this is the full sum.
        let mut s: Vec<f64> = (0..256)
            .map(|t| {
                (t..cols)
                    .step_by(256)
                    .map(|c| f64::from(a[r * cols + c]) * f64::from(x[c]))
                    .sum()
            })
            .collect();
        for off in [32, 16, 8, 4, 2, 1] {
            s = (0..256)
                .map(|t| {
                    // bpermute wraps within each group of `permute_wrap` lanes.
                    let group = t / v.permute_wrap * v.permute_wrap;
                    s[t] + s[group + (t ^ off) % v.permute_wrap]
                })
                .collect();
        }
        let want: f64 = [0, 64, 128, 192].iter().map(|&t| s[t]).sum();
        assert!(
            close(f64::from(y[r]), want, 1e-4),
            "{gfx} row {r}: {} vs {want}",
            y[r]
        );
    }
}
