//! Matrix-instruction test harness: the MFMA intrinsics of each target, their operand layouts as
//! AMD documents them (matrix instruction calculator for CDNA1-3, the CDNA4 `f8f6f4` layouts),
//! kernels built from LLVM IR (`llc` + `rust-lld`) or HIP (`clang-22`) that load one operand image
//! per lane, run one instruction and store D, and a naive f64 matmul to compare with.
#![allow(dead_code)]

pub mod catalog;
pub mod formats;
pub mod kernels;

use catalog::{Acc, Case, MatrixOp};
use formats::Fmt;

use crate::common::{Args, Loaded, bytes_of, from_bytes};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// (lane, element slot) of element (`block`, `outer`, `k`) of a source whose outer dimension
/// (M for A, N for B) is `outer_dim`, per AMD's register layouts.
pub fn source_slot(
    op: &MatrixOp,
    outer_dim: u32,
    fmt: Fmt,
    block: u32,
    outer: u32,
    k: u32,
) -> (u32, u32) {
    if op.f8f6f4 && fmt.bits() == 8 {
        // Two chunks of 16 k per lane; lane group g holds k = 16g + 16 * groups * chunk + j.
        let groups = 64 / outer_dim;
        let chunk = k / (16 * groups);
        let group = k % (16 * groups) / 16;
        return (outer + outer_dim * group, 16 * chunk + k % 16);
    }
    let per_lane = op.k * outer_dim * op.blocks / 64;
    (
        block * outer_dim + k / per_lane * outer_dim * op.blocks + outer,
        k % per_lane,
    )
}

/// (block, i, j) of accumulator element `elem` (a dword, or a dword pair for f64) of `lane`.
pub fn result_element(op: &MatrixOp, lane: u32, elem: u32) -> (u32, u32, u32) {
    match (op.m, op.acc == Acc::F64) {
        (32, false) => {
            let r = elem % 16;
            (elem / 16, 8 * (r / 4) + 4 * (lane / 32) + r % 4, lane % 32)
        }
        (16, false) => (elem / 4, 4 * (lane / 16) + elem % 4, lane % 16),
        (4, false) => (lane / 4, elem, lane % 4),
        (16, true) => (0, 4 * elem + lane / 16, lane % 16),
        (4, true) => (lane / 4 % 4, lane / 16, lane % 4),
        other => panic!("no result layout for {other:?}"),
    }
}

/// Lane images of a source: `codes[block][outer][k]` packed per [`source_slot`].
fn pack(op: &MatrixOp, outer_dim: u32, fmt: Fmt, codes: &[u64]) -> Vec<u32> {
    let per_lane_bits = op.k * outer_dim * op.blocks / 64 * fmt.bits();
    let dwords = (per_lane_bits / 32) as usize;
    let mut image = vec![0u32; 64 * dwords];
    for b in 0..op.blocks {
        for o in 0..outer_dim {
            for k in 0..op.k {
                let code = codes[((b * outer_dim + o) * op.k + k) as usize];
                let (lane, slot) = source_slot(op, outer_dim, fmt, b, o, k);
                let bit = slot * fmt.bits();
                let lane_base = lane as usize * dwords;
                let wide = u128::from(code) << (bit % 32);
                for w in 0..3 {
                    let at = (bit / 32) as usize + w;
                    if at < dwords {
                        image[lane_base + at] |= (wide >> (32 * w)) as u32;
                    }
                }
            }
        }
    }
    image
}

/// Values `[block][outer][k]` a source image holds when lane `l` reads lane `lanes(l)`'s image.
fn unpack(
    op: &MatrixOp,
    outer_dim: u32,
    fmt: Fmt,
    image: &[u32],
    lanes: impl Fn(u32) -> u32,
    fnuz: bool,
) -> Vec<f64> {
    let dwords = (op.k * outer_dim * op.blocks / 64 * fmt.bits() / 32) as usize;
    let mut out = vec![0.0; (op.blocks * outer_dim * op.k) as usize];
    for b in 0..op.blocks {
        for o in 0..outer_dim {
            for k in 0..op.k {
                let (lane, slot) = source_slot(op, outer_dim, fmt, b, o, k);
                let base = lanes(lane) as usize * dwords;
                let bit = (slot * fmt.bits()) as usize;
                let mut window = 0u128;
                for w in 0..3 {
                    if bit / 32 + w < dwords {
                        window |= u128::from(image[base + bit / 32 + w]) << (32 * w);
                    }
                }
                let raw = (window >> (bit % 32)) as u64 & (u64::MAX >> (64 - fmt.bits()));
                out[((b * outer_dim + o) * op.k + k) as usize] = fmt.decode(raw, fnuz);
            }
        }
    }
    out
}

/// The lane B is read from under BLGP `blgp` (matrix instruction calculator).
fn blgp_lane(blgp: u32, lane: u32) -> u32 {
    match blgp {
        1 => lane % 32,
        2 if lane < 32 => lane + 32,
        3 => (lane + 16) % 64,
        4 => lane % 16,
        5 => 16 + lane % 16,
        6 => 32 + lane % 16,
        7 => 48 + lane % 16,
        _ => lane,
    }
}

/// Runs `case` (kernel `case.name()` of `code`, built for `gfx`) on random inputs and compares D
/// with a naive matmul. gfx942 reads FP8/BF8 as FNUZ; gfx942 and gfx950 read the BLGP field of the
/// f64 instructions as negation of A, B and C.
pub fn check(code: &mut Loaded, gfx: &str, case: &Case, seed: u64) {
    let op = &case.op;
    let fnuz = gfx == "gfx942";
    let negate = |bit: u32| {
        if op.acc == Acc::F64 && gfx != "gfx90a" && case.variant.blgp >> bit & 1 == 1 {
            -1.0
        } else {
            1.0
        }
    };
    let mut v = case.variant;
    if op.acc == Acc::F64 {
        v.blgp = 0;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let a_codes: Vec<u64> = (0..op.blocks * op.m * op.k)
        .map(|_| op.a.random(&mut rng, fnuz))
        .collect();
    let b_codes: Vec<u64> = (0..op.blocks * op.k * op.n)
        .map(|_| op.b.random(&mut rng, fnuz))
        .collect();
    let a_image = pack(op, op.m, op.a, &a_codes);
    let b_image = pack(op, op.n, op.b, &b_codes);
    let per_lane = op.m * op.n * op.blocks / 64;
    let mut c_image = vec![0u32; (64 * case.c_dwords()) as usize];
    let mut c = vec![0.0f64; (op.blocks * op.m * op.n) as usize];
    for lane in 0..64 {
        for e in 0..per_lane {
            let (b, i, j) = result_element(op, lane, e);
            let at = ((b * op.m + i) * op.n + j) as usize;
            let base = (lane * case.c_dwords()) as usize;
            match op.acc {
                Acc::F32 => {
                    let x = rng.random_range(-4.0f32..4.0);
                    c[at] = f64::from(x);
                    c_image[base + e as usize] = x.to_bits();
                }
                Acc::I32 => {
                    let x = rng.random_range(-100_000i32..100_000);
                    c[at] = f64::from(x);
                    c_image[base + e as usize] = x as u32;
                }
                Acc::F64 => {
                    let x = rng.random_range(-4.0f64..4.0);
                    c[at] = x;
                    c_image[base + 2 * e as usize] = x.to_bits() as u32;
                    c_image[base + 2 * e as usize + 1] = (x.to_bits() >> 32) as u32;
                }
            }
        }
    }
    // Scale words: the selected byte holds the lane's E8M0 scale, the other bytes are noise.
    let mut scale_words = vec![0u32; 128];
    let mut scale_bytes = [[127u8; 64]; 2];
    if let Some(sel) = v.scale_sel {
        for lane in 0..64 {
            for (w, byte) in [sel.0, sel.1].into_iter().enumerate() {
                let s = rng.random_range(117u8..=137);
                let noise: u32 = rng.random();
                let word = noise & !(0xff << (8 * byte)) | u32::from(s) << (8 * byte);
                scale_words[2 * lane + w] = word;
                scale_bytes[w][lane] = s;
            }
        }
    }
    let a = unpack(op, op.m, op.a, &a_image, |l| l, fnuz);
    let b = unpack(op, op.n, op.b, &b_image, |l| blgp_lane(v.blgp, l), fnuz);

    let pa = code.upload(&bytes_of(&a_image));
    let pb = code.upload(&bytes_of(&b_image));
    let pc = code.upload(&bytes_of(&c_image));
    let d_len = c_image.len() * 4;
    let pd = code.upload(&vec![0xa5; d_len]);
    let ps = code.upload(&bytes_of(&scale_words));
    let args = Args::default().ptr(pa).ptr(pb).ptr(pc).ptr(pd).ptr(ps);
    code.launch(&case.name(), &args.0, [1, 1, 1], [64, 1, 1], 0)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name()));
    let d_image: Vec<u32> = from_bytes(&code.download(pd, d_len));

    for lane in 0..64 {
        for e in 0..per_lane {
            let (blk, i, j) = result_element(op, lane, e);
            let a_blk = (blk >> v.cbsz << v.cbsz) + v.abid;
            let mut sum = 0.0f64;
            let mut magnitude = c[((blk * op.m + i) * op.n + j) as usize].abs();
            for kb in 0..op.k.div_ceil(32) {
                let mut partial = 0.0;
                let mut partial_mag = 0.0;
                for k in kb * 32..op.k.min(kb * 32 + 32) {
                    let x = a[((a_blk * op.m + i) * op.k + k) as usize];
                    let y = b[((blk * op.n + j) * op.k + k) as usize];
                    partial += x * y;
                    partial_mag += (x * y).abs();
                }
                let factor = match v.scale_sel {
                    Some(_) => {
                        let sa = scale_bytes[0][(i + op.m * kb) as usize];
                        let sb = scale_bytes[1][(j + op.n * kb) as usize];
                        2f64.powi(i32::from(sa) + i32::from(sb) - 254)
                    }
                    None => 1.0,
                };
                sum += partial * factor;
                magnitude += partial_mag * factor;
            }
            let want =
                negate(2) * c[((blk * op.m + i) * op.n + j) as usize] + negate(0) * negate(1) * sum;
            let base =
                (lane * case.c_dwords() + e * if op.acc == Acc::F64 { 2 } else { 1 }) as usize;
            let (got, tolerance) = match op.acc {
                Acc::F32 => (
                    f64::from(f32::from_bits(d_image[base])),
                    magnitude * 1e-6 + 1e-30,
                ),
                Acc::I32 => (f64::from(d_image[base] as i32), 0.0),
                Acc::F64 => (
                    f64::from_bits(u64::from(d_image[base]) | u64::from(d_image[base + 1]) << 32),
                    magnitude * 1e-14,
                ),
            };
            assert!(
                (got - want).abs() <= tolerance,
                "{}: lane {lane} element {e} = D[{blk}][{i}][{j}]: got {got}, want {want}",
                case.name()
            );
        }
    }
}
