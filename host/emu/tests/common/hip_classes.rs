//! The instruction-class HIP kernels (`tests/data/src/hip_classes.hip`, built by clang-22): each
//! makes the compiler emit one class of instruction (fmaak/fmamk, DPP row_newbcast, loads to LDS,
//! fma_mix with constants, the wave index, flat pointers into LDS and scratch, SALU float). The
//! checks run every kernel with seeded random inputs plus edge values on poisoned outputs and
//! compare every element with a host computation; [`emits`] checks that each object holds the
//! instruction its kernel is there for. Run per build by `run_hip_classes.rs`.

use super::variant::{CDNA, RDNA};
use super::{Args, Loaded, bytes_of, data, from_bytes, load, objdump_wave, read_code_object};
use half::f16;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One build of `hip_classes.hip`: a target and wave size, on CDNA also with the kernel arguments
/// preloaded into SGPRs.
pub struct Build {
    /// The variant's name (`gfx1100_w64` for a wave64 RDNA build).
    pub variant: &'static str,
    /// Lanes per wave.
    pub lanes: usize,
    /// An RDNA build.
    pub rdna: bool,
    /// The kernel-argument preload build (`hip_classes_preload_<gfx>.co`).
    pub preload: bool,
}

impl Build {
    /// The name of the build, as in its object's file name.
    pub fn name(&self) -> String {
        if self.preload {
            format!("preload_{}", self.variant)
        } else {
            self.variant.to_string()
        }
    }

    /// The target (`gfx1100` for both of its wave sizes).
    pub fn gfx(&self) -> &'static str {
        self.variant.trim_end_matches("_w64")
    }

    fn object(&self) -> std::path::PathBuf {
        data(&format!("hip_classes_{}.co", self.name()))
    }

    fn load(&self) -> Loaded {
        load(&self.object())
    }
}

/// Every build whose object exists (CDNA plain and preloaded, RDNA in both wave sizes); says so
/// for each one that does not.
pub fn builds() -> Vec<Build> {
    let cdna = CDNA.iter().flat_map(|v| {
        [false, true].map(|preload| Build {
            variant: v.name,
            lanes: v.lanes,
            rdna: v.rdna,
            preload,
        })
    });
    let rdna = RDNA.iter().map(|v| Build {
        variant: v.name,
        lanes: v.lanes,
        rdna: v.rdna,
        preload: false,
    });
    cdna.chain(rdna)
        .filter(|b| super::variant::built(&b.object()))
        .collect()
}

/// The byte every output buffer holds before a kernel runs.
const POISON: u8 = 0x5a;

fn poison(k: &mut Loaded, bytes: usize) -> u64 {
    k.upload(&vec![POISON; bytes])
}

/// Whether `got` is `want`, bit for bit, or both are NaN (a NaN's payload is not checked).
fn same_f32(got: f32, want: f32) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        got.to_bits() == want.to_bits()
    }
}

fn same_f16(got: f16, want: f16) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        got.to_bits() == want.to_bits()
    }
}

/// f32 edge values: signed zeros, infinities, NaN, denormals, the largest finite values, values
/// whose products overflow or underflow.
fn edges_f32() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1),
        f32::from_bits(0x000c_0000),
        -f32::from_bits(0x0040_0001),
        -f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        1.0,
        -1.0,
        3.0e-20,
        1.0e20,
    ]
}

/// f16 edge values: signed zeros, infinities, NaN, subnormals, the largest finite values.
fn edges_f16() -> Vec<f16> {
    vec![
        f16::ZERO,
        f16::NEG_ZERO,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::NAN,
        f16::from_bits(1),
        f16::from_bits(0x8203),
        f16::MIN_POSITIVE,
        f16::MAX,
        f16::MIN,
        f16::ONE,
        f16::NEG_ONE,
        f16::from_f32(0.5),
        f16::from_f32(-300.0),
    ]
}

/// Overwrites the first elements of `v` with `edges`: element `j` takes edge `(j / stride) % len`,
/// so that inputs with strides 1, len, len² meet every pair (and many triples) of edges.
fn with_edges<T: Copy>(v: &mut [T], edges: &[T], stride: usize) {
    let len = edges.len();
    for (j, x) in v.iter_mut().enumerate().take(len * len) {
        *x = edges[(j / stride) % len];
    }
}

fn random_f32(rng: &mut StdRng, n: usize, range: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-range..range)).collect()
}

fn random_f16(rng: &mut StdRng, n: usize, range: f32) -> Vec<f16> {
    (0..n)
        .map(|_| f16::from_f32(rng.random_range(-range..range)))
        .collect()
}

/// `a * b + c` for a product that is exact in f64: the f64 nearest the exact value, and the
/// exact value minus it (TwoSum).
fn fma_exact(a: f64, b: f64, c: f64) -> (f64, f64) {
    let p = a * b;
    assert!(
        !p.is_finite() || a.mul_add(b, -p) == 0.0,
        "the product {a} * {b} is exact in f64"
    );
    let s = p + c;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let v = s - p;
    (s, (p - (s - v)) + (c - v))
}

/// The f32 nearest the exact value `s + e` of [`fma_exact`], ties to even: rounding `s` is that
/// unless `s` sits exactly halfway between two f32 values while `e` is not zero, which the
/// inputs avoid (asserted).
fn round_f32((s, e): (f64, f64)) -> f32 {
    let r = s as f32;
    if e != 0.0 {
        let (lo, hi) = if f64::from(r) < s {
            (r, r.next_up())
        } else {
            (r.next_down(), r)
        };
        assert!(
            s - f64::from(lo) != f64::from(hi) - s,
            "{s} + {e} is not a rounding tie in f64"
        );
    }
    r
}

/// The f16 step (unit in the last place) of the f16 values around `a` (`a >= 0`, finite).
fn f16_step(a: f64) -> f64 {
    if a < f64::from(f16::MIN_POSITIVE) {
        (2f64).powi(-24)
    } else {
        let exponent = ((a.to_bits() >> 52) as i32) - 1023;
        (2f64).powi(exponent - 10)
    }
}

/// The f16 nearest the exact value `s + e` of [`fma_exact`], ties to even, rounded from the exact
/// value once (`half`'s f64 conversion goes through f32 or drops low bits, so it is not used on
/// inexact values). `s` is never a tie when `e` is not zero (asserted).
fn round_f16((s, e): (f64, f64)) -> f16 {
    if s.is_nan() {
        return f16::NAN;
    }
    if s.abs() >= 65520.0 {
        assert!(
            s.abs() != 65520.0 || e == 0.0,
            "{s} + {e} is not the tie at the overflow threshold"
        );
        return if s > 0.0 {
            f16::INFINITY
        } else {
            f16::NEG_INFINITY
        };
    }
    let q = f16_step(s.abs());
    let m = s / q;
    assert!(
        e == 0.0 || m.fract().abs() != 0.5,
        "{s} + {e} is not a rounding tie in f64"
    );
    f16::from_f64(m.round_ties_even() * q)
}

fn f64_of(h: f16) -> f64 {
    f64::from(h.to_f32())
}

/// Check of `fmak_f32`: `fma(x, 1.3719, z)` and `fma(x, y, 6.0271)` (v_fmamk_f32, v_fmaak_f32).
pub fn fmak_f32(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(101);
    let n = 777usize;
    let e = edges_f32();
    let mut x = random_f32(&mut rng, n, 1000.0);
    let mut y = random_f32(&mut rng, n, 1000.0);
    let mut z = random_f32(&mut rng, n, 1000.0);
    with_edges(&mut x, &e, 1);
    with_edges(&mut y, &e, e.len());
    with_edges(&mut z, &e, e.len());
    let (px, py, pz) = (
        k.upload(&bytes_of(&x)),
        k.upload(&bytes_of(&y)),
        k.upload(&bytes_of(&z)),
    );
    let po = poison(&mut k, (2 * n + 64) * 4);
    let args = Args::default()
        .ptr(px)
        .ptr(py)
        .ptr(pz)
        .ptr(po)
        .u32(n as u32);
    k.launch("fmak_f32", &args.0, [4, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let o: Vec<f32> = from_bytes(&k.download(po, (2 * n + 64) * 4));
    for i in 0..n {
        let (mk, ak) = (x[i].mul_add(1.3719, z[i]), x[i].mul_add(y[i], 6.0271));
        assert!(
            same_f32(o[2 * i], mk),
            "{name} fma({}, 1.3719, {}) = {} want {mk}",
            x[i],
            z[i],
            o[2 * i]
        );
        assert!(
            same_f32(o[2 * i + 1], ak),
            "{name} fma({}, {}, 6.0271) = {} want {ak}",
            x[i],
            y[i],
            o[2 * i + 1]
        );
    }
    assert!(
        o[2 * n..].iter().all(|v| v.to_bits() == 0x5a5a_5a5a),
        "{name}: lanes past n stored"
    );
}

/// Check of `fmak_f16`: f16 `fma(x, 1.3720703, z)`, `fma(x, y, 6.0273438)` and `fma(z, -1.5, y)`
/// (v_fmamk_f16, v_fmaak_f16 on RDNA), each rounded once.
pub fn fmak_f16(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(102);
    let n = 700usize;
    let e = edges_f16();
    let mut x = random_f16(&mut rng, n, 200.0);
    let mut y = random_f16(&mut rng, n, 200.0);
    let mut z = random_f16(&mut rng, n, 200.0);
    with_edges(&mut x, &e, 1);
    with_edges(&mut y, &e, e.len());
    with_edges(&mut z, &e, e.len());
    // x * y = 2^-9 - 2^-27: the sum with 6.0273438 is just below the midpoint of two f16 values,
    // which a rounding to f32 first lands on (and then rounds to even, up).
    let j = e.len() * e.len();
    x[j] = f16::from_f64((2f64).powi(-9) * (1.0 + (2f64).powi(-9)));
    y[j] = f16::from_f64(1.0 - (2f64).powi(-9));
    let (px, py, pz) = (
        k.upload(&bytes_of(&x)),
        k.upload(&bytes_of(&y)),
        k.upload(&bytes_of(&z)),
    );
    let po = poison(&mut k, (3 * n + 64) * 2);
    let args = Args::default()
        .ptr(px)
        .ptr(py)
        .ptr(pz)
        .ptr(po)
        .u32(n as u32);
    k.launch("fmak_f16", &args.0, [3, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let o: Vec<f16> = from_bytes(&k.download(po, (3 * n + 64) * 2));
    let (mk, ak) = (f16::from_f32(1.3719), f16::from_f32(6.0271));
    let neg = f16::from_f32(-1.5);
    for i in 0..n {
        let (a, bb, c) = (x[i], y[i], z[i]);
        let want = [
            round_f16(fma_exact(f64_of(a), f64_of(mk), f64_of(c))),
            round_f16(fma_exact(f64_of(a), f64_of(bb), f64_of(ak))),
            round_f16(fma_exact(f64_of(c), f64_of(neg), f64_of(bb))),
        ];
        for (j, w) in want.iter().enumerate() {
            assert!(
                same_f16(o[3 * i + j], *w),
                "{name} element {i} output {j}: x {a} y {bb} z {c}: got {} want {w}",
                o[3 * i + j]
            );
        }
    }
    assert!(
        o[3 * n..].iter().all(|v| v.to_bits() == 0x5a5a),
        "{name}: lanes past n stored"
    );
}

/// Check of `row_broadcast`: lanes read lane 3 of their row (row_newbcast:3 / row_share:3), lane
/// 15 in rows 1 and 3 only (row_mask 0xa; rows 0 and 2 keep their own value), and a float add of
/// lane 1 of the row (v_add_f32_dpp). Rows are 16 lanes in both wave sizes, so the oracle is the
/// same for every build.
pub fn row_broadcast(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(103);
    let n = 512usize;
    let x: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    let mut f = random_f32(&mut rng, n, 100.0);
    let e = edges_f32();
    for (j, v) in f.iter_mut().enumerate().take(64) {
        *v = e[(j * 5) % e.len()];
    }
    let (px, pf) = (k.upload(&bytes_of(&x)), k.upload(&bytes_of(&f)));
    let (py, pg) = (poison(&mut k, n * 4), poison(&mut k, n * 4));
    let args = Args::default().ptr(px).ptr(pf).ptr(py).ptr(pg);
    k.launch("row_broadcast", &args.0, [2, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let y: Vec<i32> = from_bytes(&k.download(py, n * 4));
    let g: Vec<f32> = from_bytes(&k.download(pg, n * 4));
    for i in 0..n {
        let row = i - i % 16;
        let a = x[row + 3];
        let bb = if (i / 16) % 2 == 1 { x[row + 15] } else { x[i] };
        assert_eq!(
            y[i],
            a.wrapping_add(bb.wrapping_mul(3)),
            "{name} lane {i} (waves of {})",
            b.lanes
        );
        let want = f[i] + f[row + 1];
        assert!(
            same_f32(g[i], want),
            "{name} lane {i}: {} + {} = {} want {want}",
            f[i],
            f[row + 1],
            g[i]
        );
    }
}

/// Check of `buffer_lds`: three groups of 256 lanes load one, four and three dwords each through
/// buffer resources of `n1`, `n4` and `n3` records (lanes past them read 0) into LDS at M0 (CDNA;
/// the dwordx3/x4 forms on gfx950) and store what their LDS slots hold.
pub fn buffer_lds(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(104);
    let lanes = 768usize;
    let (n1, n4, n3) = (700usize, 650usize, 601usize);
    let x1: Vec<u32> = (0..n1).map(|_| rng.random()).collect();
    let x4: Vec<u32> = (0..4 * n4).map(|_| rng.random()).collect();
    let x3: Vec<u32> = (0..3 * n3).map(|_| rng.random()).collect();
    let (p1, p4, p3) = (
        k.upload(&bytes_of(&x1)),
        k.upload(&bytes_of(&x4)),
        k.upload(&bytes_of(&x3)),
    );
    let (y1, y4, y3) = (
        poison(&mut k, lanes * 4),
        poison(&mut k, lanes * 16),
        poison(&mut k, lanes * 12),
    );
    let args = Args::default()
        .ptr(p1)
        .u32(n1 as u32)
        .ptr(p4)
        .u32(n4 as u32)
        .ptr(p3)
        .u32(n3 as u32)
        .ptr(y1)
        .ptr(y4)
        .ptr(y3);
    k.launch("buffer_lds", &args.0, [3, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let o1: Vec<u32> = from_bytes(&k.download(y1, lanes * 4));
    let o4: Vec<u32> = from_bytes(&k.download(y4, lanes * 16));
    let o3: Vec<u32> = from_bytes(&k.download(y3, lanes * 12));
    for i in 0..lanes {
        let w1 = if i < n1 { x1[i] } else { 0 };
        assert_eq!(o1[i], w1, "{name} dword lane {i}");
        for c in 0..4 {
            let w = if i < n4 { x4[4 * i + c] } else { 0 };
            assert_eq!(o4[4 * i + c], w, "{name} dwordx4 lane {i} dword {c}");
        }
        for c in 0..3 {
            let w = if i < n3 { x3[3 * i + c] } else { 0 };
            assert_eq!(o3[3 * i + c], w, "{name} dwordx3 lane {i} dword {c}");
        }
    }
}

/// Check of `global_lds`: the lanes below `n` load a dword (with a 64-byte instruction offset), a
/// byte and a short (zero-extended into dword slots), four and three dwords into LDS (CDNA; the
/// 12- and 16-byte forms on gfx950) and store their slots; lanes past `n` store nothing.
pub fn global_lds(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(105);
    let (n, lanes) = (700usize, 768usize);
    let x: Vec<u32> = (0..n + 16).map(|_| rng.random()).collect();
    let mut xb: Vec<u8> = (0..n).map(|_| rng.random()).collect();
    let mut xs: Vec<u16> = (0..n).map(|_| rng.random()).collect();
    xb[..4].copy_from_slice(&[0, 0x80, 0xff, 0x7f]);
    xs[..4].copy_from_slice(&[0, 0x8000, 0xffff, 0x7fff]);
    let x4: Vec<u32> = (0..4 * n).map(|_| rng.random()).collect();
    let x3: Vec<u32> = (0..3 * n).map(|_| rng.random()).collect();
    let ptrs = [
        k.upload(&bytes_of(&x)),
        k.upload(&xb),
        k.upload(&bytes_of(&xs)),
        k.upload(&bytes_of(&x4)),
        k.upload(&bytes_of(&x3)),
    ];
    let py = poison(&mut k, lanes * 40);
    let args = ptrs
        .iter()
        .fold(Args::default(), |a, p| a.ptr(*p))
        .ptr(py)
        .u32(n as u32);
    k.launch("global_lds", &args.0, [3, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let y: Vec<u32> = from_bytes(&k.download(py, lanes * 40));
    for i in 0..lanes {
        let o = &y[10 * i..10 * i + 10];
        if i >= n {
            assert!(
                o.iter().all(|&v| v == 0x5a5a_5a5a),
                "{name} lane {i} is past n and stored"
            );
            continue;
        }
        assert_eq!(o[0], x[i + 16], "{name} lane {i} dword at offset 64");
        assert_eq!(o[1], u32::from(xb[i]), "{name} lane {i} byte");
        assert_eq!(o[2], u32::from(xs[i]), "{name} lane {i} short");
        assert_eq!(o[3..7], x4[4 * i..4 * i + 4], "{name} lane {i} dwordx4");
        assert_eq!(o[7..10], x3[3 * i..3 * i + 3], "{name} lane {i} dwordx3");
    }
}

/// Inputs of `fma_mix`: f16 `a`, `b` and f32 `c`, random plus edge values, and `a`, `c` pairs
/// whose f16 results are ties only the low bits of `c` break.
fn mix_inputs(rng: &mut StdRng, n: usize) -> (Vec<f16>, Vec<f16>, Vec<f32>) {
    let e16 = edges_f16();
    let mut a = random_f16(rng, n, 16.0);
    let mut b = random_f16(rng, n, 16.0);
    let mut c = random_f32(rng, n, 100.0);
    with_edges(&mut a, &e16, 1);
    with_edges(&mut b, &e16, e16.len());
    let e32 = edges_f32();
    for (j, v) in c.iter_mut().enumerate().take(3 * e32.len()) {
        *v = e32[j % e32.len()];
    }
    // Ties of the f16 results that only the low bits of an f32 `c` break: 1 * (2^-10 + 2^-30) + 2
    // is just above the midpoint of 2 and 2 + 2^-9; a rounding through f32 first, or one that
    // drops the low bits, gives 2.
    let k = e16.len() * e16.len();
    for (j, (m, d)) in [
        (1.0f32, (2f32).powi(-10) + (2f32).powi(-30)),
        (-1.0, (2f32).powi(-10) + (2f32).powi(-30)),
        (1.0, (2f32).powi(-10) - (2f32).powi(-34)),
    ]
    .into_iter()
    .enumerate()
    {
        a[k + j] = f16::from_f32(m);
        c[k + j] = d;
    }
    (a, b, c)
}

/// Check of `fma_mix`: f32 results of `fma(a, b, 1)`, `fma(a, 2, c)`, `fma(a, b, 0)`,
/// `fma(a, -b, 1)`, `fma(a, 4, b)` and the f16 pair `{fma(a, b, 1), fma(a, c, 2)}`
/// (v_fma_mix_f32, v_fma_mixlo_f16, v_fma_mixhi_f16), every one rounded once from the exact value.
pub fn fma_mix(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(106);
    let n = 777usize;
    let (a, bb, c) = mix_inputs(&mut rng, n);
    let (pa, pb, pc) = (
        k.upload(&bytes_of(&a)),
        k.upload(&bytes_of(&bb)),
        k.upload(&bytes_of(&c)),
    );
    let po = poison(&mut k, n * 20);
    let pp = poison(&mut k, n * 4);
    let args = Args::default()
        .ptr(pa)
        .ptr(pb)
        .ptr(pc)
        .ptr(po)
        .ptr(pp)
        .u32(n as u32);
    k.launch("fma_mix", &args.0, [4, 1, 1], [256, 1, 1], 0)
        .unwrap();
    let o: Vec<f32> = from_bytes(&k.download(po, n * 20));
    let p: Vec<f16> = from_bytes(&k.download(pp, n * 4));
    for i in 0..n {
        let (x, y, z) = (f64_of(a[i]), f64_of(bb[i]), f64::from(c[i]));
        let want = [
            round_f32(fma_exact(x, y, 1.0)),
            round_f32(fma_exact(x, 2.0, z)),
            round_f32(fma_exact(x, y, 0.0)),
            round_f32(fma_exact(x, -y, 1.0)),
            round_f32(fma_exact(x, 4.0, y)),
        ];
        for (j, w) in want.iter().enumerate() {
            assert!(
                same_f32(o[5 * i + j], *w),
                "{name} element {i} f32 output {j}: a {} b {} c {}: got {} want {w}",
                a[i],
                bb[i],
                c[i],
                o[5 * i + j]
            );
        }
        let lo = round_f16(fma_exact(x, y, 1.0));
        let hi = round_f16(fma_exact(x, z, 2.0));
        assert!(
            same_f16(p[2 * i], lo),
            "{name} element {i} mixlo: fma({}, {}, 1) = {} want {lo}",
            a[i],
            bb[i],
            p[2 * i]
        );
        assert!(
            same_f16(p[2 * i + 1], hi),
            "{name} element {i} mixhi: fma({}, {:e}, 2) = {} want {hi}",
            a[i],
            c[i],
            p[2 * i + 1]
        );
    }
}

/// Check of `pk_f16_consts`: per half, `fma(v, v, 1)` and `fma(v, 2, -0.5)` (v_pk_fma_f16 with
/// inline constants), rounded once.
pub fn pk_f16_consts(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(107);
    let n = 333usize;
    let e = edges_f16();
    let mut v = random_f16(&mut rng, 2 * n, 300.0);
    for (j, x) in v.iter_mut().enumerate().take(2 * e.len()) {
        *x = e[(j * 3) % e.len()];
    }
    let pa = k.upload(&bytes_of(&v));
    let po = poison(&mut k, n * 8 + 256);
    k.launch(
        "pk_f16_consts",
        &Args::default().ptr(pa).ptr(po).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let o: Vec<f16> = from_bytes(&k.download(po, n * 8 + 256));
    for i in 0..n {
        for h in 0..2 {
            let x = f64_of(v[2 * i + h]);
            let sq = round_f16(fma_exact(x, x, 1.0));
            let lin = round_f16(fma_exact(x, 2.0, -0.5));
            assert!(
                same_f16(o[4 * i + h], sq),
                "{name} element {i} half {h}: fma({x}, {x}, 1) = {} want {sq}",
                o[4 * i + h]
            );
            assert!(
                same_f16(o[4 * i + 2 + h], lin),
                "{name} element {i} half {h}: fma({x}, 2, -0.5) = {} want {lin}",
                o[4 * i + 2 + h]
            );
        }
    }
    assert!(
        o[4 * n..].iter().all(|v| v.to_bits() == 0x5a5a),
        "{name}: lanes past n stored"
    );
}

/// Check of `wave_partials`: workgroups of 200 work-items (4 wave64 or 7 wave32 waves, the last
/// one partial); every lane's wave index is its work-item id over the wave size, and each wave's
/// LDS slot holds the wrapping sum of its lanes' inputs (0 past `n`).
pub fn wave_partials(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(108);
    let (groups, block, n) = (3usize, 200usize, 555usize);
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let pids = poison(&mut k, groups * block * 4);
    let ppart = poison(&mut k, groups * 8 * 4);
    let ptotal = poison(&mut k, groups * 4);
    let args = Args::default()
        .ptr(px)
        .ptr(pids)
        .ptr(ppart)
        .ptr(ptotal)
        .u32(n as u32)
        .u32(block as u32);
    k.launch(
        "wave_partials",
        &args.0,
        [groups as u32, 1, 1],
        [block as u32, 1, 1],
        0,
    )
    .unwrap();
    let ids: Vec<u32> = from_bytes(&k.download(pids, groups * block * 4));
    let part: Vec<u32> = from_bytes(&k.download(ppart, groups * 8 * 4));
    let total: Vec<u32> = from_bytes(&k.download(ptotal, groups * 4));
    for g in 0..groups {
        let mut sums = [0u32; 8];
        for t in 0..block {
            let i = g * block + t;
            assert_eq!(
                ids[i] as usize,
                t / b.lanes,
                "{name} group {g} work-item {t}: wave index"
            );
            if i < n {
                sums[t / b.lanes] = sums[t / b.lanes].wrapping_add(x[i]);
            }
        }
        assert_eq!(
            part[g * 8..g * 8 + 8],
            sums,
            "{name} group {g}: per-wave sums"
        );
        let all = sums.iter().fold(0u32, |s, v| s.wrapping_add(*v));
        assert_eq!(total[g], all, "{name} group {g}: total");
    }
}

/// Check of `flat_apertures`: a function given flat pointers into a shared array and into a
/// private array (dynamically indexed) reads and writes through them.
pub fn flat_apertures(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(109);
    let n = 500usize;
    let x: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    let px = k.upload(&bytes_of(&x));
    let py = poison(&mut k, 512 * 4);
    k.launch(
        "flat_apertures",
        &Args::default().ptr(px).ptr(py).u32(n as u32).0,
        [2, 1, 1],
        [256, 1, 1],
        0,
    )
    .unwrap();
    let y: Vec<i32> = from_bytes(&k.download(py, 512 * 4));
    let j = |i: usize| i.min(n - 1);
    for i in 0..512 {
        if i >= n {
            assert_eq!(y[i] as u32, 0x5a5a_5a5a, "{name} item {i} is past n");
            continue;
        }
        let (g, t) = (i / 256, i % 256);
        let shared = |t: usize| x[j(g * 256 + t)] ^ 0x55;
        let a = shared((t + 1) & 255);
        let mut loc: Vec<i32> = (0..16).map(|kk| x[(j(i) + kk) % n]).collect();
        let idx = (x[j(i)] & 15) as usize;
        let bb = loc[idx];
        loc[idx] = bb.wrapping_mul(3).wrapping_add(11);
        let c = (0..16).fold(0i32, |s, kk| {
            s.wrapping_add(loc[kk].wrapping_mul(kk as i32 + 1))
        });
        let own = shared(t).wrapping_mul(3).wrapping_add(7);
        let want = a
            .wrapping_add(bb.wrapping_mul(5))
            .wrapping_add(c)
            .wrapping_add(own);
        assert_eq!(y[i], want, "{name} item {i}");
    }
}

/// Check of `scalar_float`: the uniform `fma(a0, 1.7, a1)`, `fma(a0, a1, 2.5)`,
/// `fma(a1, -3.3, a0)` and `a0 * a1` (SALU float on gfx1201), and per lane `fma(x, a, b) * c`, for
/// argument pairs with signed zeros, infinities, NaN, denormals and overflow.
pub fn scalar_float(b: &Build) {
    let name = b.name();
    let mut k = b.load();
    let mut rng = StdRng::seed_from_u64(110);
    let n = 100usize;
    let mut pairs: Vec<(f32, f32)> = vec![
        (1.25, -3.5),
        (0.0, -0.0),
        (-0.0, -0.0),
        (f32::INFINITY, 1.0),
        (f32::NAN, 2.0),
        (f32::from_bits(0x0008_0000), f32::from_bits(0x8000_0123)),
        (3.0e38, 3.0e38),
        (-1.0e-30, 1.0e-20),
    ];
    pairs.extend((0..4).map(|_| (rng.random_range(-50.0..50.0), rng.random_range(-50.0..50.0))));
    let x = random_f32(&mut rng, n, 10.0);
    let px = k.upload(&bytes_of(&x));
    for (a0, a1) in pairs {
        let py = poison(&mut k, (n + 4) * 4 + 64);
        let args = Args::default()
            .f32(a0)
            .f32(a1)
            .ptr(px)
            .ptr(py)
            .u32(n as u32);
        k.launch("scalar_float", &args.0, [1, 1, 1], [256, 1, 1], 0)
            .unwrap();
        let y: Vec<f32> = from_bytes(&k.download(py, (n + 4) * 4 + 64));
        let a = a0.mul_add(1.7, a1);
        let bb = a0.mul_add(a1, 2.5);
        let c = a1.mul_add(-3.3, a0);
        let uniform = [a, bb, c, a0 * a1];
        for (j, w) in uniform.iter().enumerate() {
            assert!(
                same_f32(y[n + j], *w),
                "{name} a0 {a0:e} a1 {a1:e}: uniform value {j} = {:e} want {w:e}",
                y[n + j]
            );
        }
        for i in 0..n {
            let w = x[i].mul_add(a, bb) * c;
            assert!(
                same_f32(y[i], w),
                "{name} a0 {a0:e} a1 {a1:e} lane {i}: {:e} want {w:e}",
                y[i]
            );
        }
        assert!(
            y[n + 4..].iter().all(|v| v.to_bits() == 0x5a5a_5a5a),
            "{name}: stored past the uniform values"
        );
    }
}

/// An instruction a kernel is there to make the compiler emit: on `targets`, some instruction of
/// `kernel` contains every one of `all_of` (llvm-objdump's text).
struct Expect {
    kernel: &'static str,
    targets: &'static [&'static str],
    all_of: &'static [&'static str],
}

const CDNA_GFX: &[&str] = &["gfx90a", "gfx942", "gfx950"];
const RDNA_GFX: &[&str] = &["gfx1100", "gfx1201"];
const EVERY_GFX: &[&str] = &["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"];

const EXPECT: &[Expect] = &[
    Expect {
        kernel: "fmak_f32",
        targets: &["gfx942", "gfx950", "gfx1100", "gfx1201"],
        all_of: &["v_fmamk_f32", "0x3faf9a6b"],
    },
    Expect {
        kernel: "fmak_f32",
        targets: &["gfx942", "gfx950", "gfx1100", "gfx1201"],
        all_of: &["v_fmaak_f32", "0x40c0de01"],
    },
    Expect {
        kernel: "fmak_f32",
        targets: &["gfx90a"],
        all_of: &["v_fmac_f32", "0x3faf9a6b"],
    },
    Expect {
        kernel: "fmak_f16",
        targets: RDNA_GFX,
        all_of: &["v_fmamk_f16", "0x3d7d"],
    },
    Expect {
        kernel: "fmak_f16",
        targets: RDNA_GFX,
        all_of: &["v_fmaak_f16", "0x4607"],
    },
    Expect {
        kernel: "fmak_f16",
        targets: CDNA_GFX,
        all_of: &["v_fma_f16"],
    },
    Expect {
        kernel: "row_broadcast",
        targets: CDNA_GFX,
        all_of: &["v_mov_b32_dpp", "row_newbcast:3 "],
    },
    Expect {
        kernel: "row_broadcast",
        targets: CDNA_GFX,
        all_of: &["v_mov_b32_dpp", "row_newbcast:15", "row_mask:0xa"],
    },
    Expect {
        kernel: "row_broadcast",
        targets: CDNA_GFX,
        all_of: &["v_add_f32_dpp", "row_newbcast:1 "],
    },
    Expect {
        kernel: "row_broadcast",
        targets: RDNA_GFX,
        all_of: &["v_mov_b32_dpp", "row_share:3 "],
    },
    Expect {
        kernel: "row_broadcast",
        targets: RDNA_GFX,
        all_of: &["v_mov_b32_dpp", "row_share:15", "row_mask:0xa"],
    },
    Expect {
        kernel: "row_broadcast",
        targets: RDNA_GFX,
        all_of: &["v_add_f32_dpp", "row_share:1 "],
    },
    Expect {
        kernel: "buffer_lds",
        targets: CDNA_GFX,
        all_of: &["buffer_load_dword ", "offen lds"],
    },
    Expect {
        kernel: "buffer_lds",
        targets: &["gfx950"],
        all_of: &["buffer_load_dwordx4 ", "offen lds"],
    },
    Expect {
        kernel: "buffer_lds",
        targets: &["gfx950"],
        all_of: &["buffer_load_dwordx3 ", "offen lds"],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx90a"],
        all_of: &["global_load_dword ", "offset:64 lds"],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx90a"],
        all_of: &["global_load_ubyte ", " lds"],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx90a"],
        all_of: &["global_load_ushort ", " lds"],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx942", "gfx950"],
        all_of: &["global_load_lds_dword ", "offset:64"],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx942", "gfx950"],
        all_of: &["global_load_lds_ubyte "],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx942", "gfx950"],
        all_of: &["global_load_lds_ushort "],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx950"],
        all_of: &["global_load_lds_dwordx4 "],
    },
    Expect {
        kernel: "global_lds",
        targets: &["gfx950"],
        all_of: &["global_load_lds_dwordx3 "],
    },
    Expect {
        kernel: "fma_mix",
        targets: EVERY_GFX,
        all_of: &["v_fma_mix_f32 "],
    },
    Expect {
        kernel: "fma_mix",
        targets: EVERY_GFX,
        all_of: &["v_fma_mix_f32 ", ", 0 op_sel_hi:[1,1,0]"],
    },
    Expect {
        kernel: "fma_mix",
        targets: EVERY_GFX,
        all_of: &["v_fma_mix_f32 ", ", -v"],
    },
    Expect {
        kernel: "fma_mix",
        targets: EVERY_GFX,
        all_of: &["v_fma_mixlo_f16 "],
    },
    Expect {
        kernel: "fma_mix",
        targets: EVERY_GFX,
        all_of: &["v_fma_mixhi_f16 "],
    },
    Expect {
        kernel: "pk_f16_consts",
        targets: EVERY_GFX,
        all_of: &["v_pk_fma_f16 ", ", 1.0 op_sel_hi:[1,1,0]"],
    },
    Expect {
        kernel: "pk_f16_consts",
        targets: EVERY_GFX,
        all_of: &["v_pk_fma_f16 ", ", 2.0, -0.5 op_sel_hi:[1,0,0]"],
    },
    Expect {
        kernel: "wave_partials",
        targets: &["gfx1201"],
        all_of: &["s_bfe_u32 ", "ttmp8, 0x50019"],
    },
    Expect {
        kernel: "flat_apertures",
        targets: EVERY_GFX,
        all_of: &["s_mov_b64 ", "src_shared_base"],
    },
    Expect {
        kernel: "flat_apertures",
        targets: EVERY_GFX,
        all_of: &["s_mov_b64 ", "src_private_base"],
    },
    Expect {
        kernel: "scalar_float",
        targets: &["gfx1201"],
        all_of: &["s_fmaak_f32 ", "0x40200000"],
    },
    Expect {
        kernel: "scalar_float",
        targets: &["gfx1201"],
        all_of: &["s_fmac_f32 ", "0x3fd9999a"],
    },
];

/// Checks that every kernel of the build's object holds the instructions it is there for on the
/// build's target (llvm-objdump's disassembly of the kernel's symbol); returns one line per
/// instruction found.
pub fn emits(b: &Build) -> Vec<String> {
    let path = b.object();
    let co = read_code_object(&path).expect("code object");
    let lines = objdump_wave(&path, b.gfx(), b.rdna && b.lanes == 64);
    let mut found = Vec::new();
    for e in EXPECT.iter().filter(|e| e.targets.contains(&b.gfx())) {
        let &(_, start, size) = co
            .functions
            .iter()
            .find(|f| f.0 == e.kernel)
            .unwrap_or_else(|| panic!("{}: no function {}", b.name(), e.kernel));
        let hit = lines
            .iter()
            .filter(|l| l.address >= start && l.address < start + size)
            .find(|l| e.all_of.iter().all(|s| l.text.contains(s)))
            .unwrap_or_else(|| {
                panic!(
                    "{}: kernel {} has no instruction with {:?}",
                    b.name(),
                    e.kernel,
                    e.all_of
                )
            });
        found.push(format!("{} {}: {}", b.name(), e.kernel, hit.text));
    }
    found
}
