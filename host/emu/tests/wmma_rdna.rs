//! WMMA on gfx1100 and gfx1201, wave32 and wave64: every dense form runs once per case on seeded
//! random tiles (negative values, signedness combinations, integer extremes, f16 infinities, NaNs
//! and subnormals, op_sel halves on gfx11), and every D element is compared with a naive matmul.
//!
//! The fragments are placed with the documented lane layouts, written here from the matrix side:
//! where A[m][k], B[k][n] and C[m][n] live (register, bit offset, lanes).
//!
//! Kernel: work-item `t` loads v0-v31 from `in[32 t..]` (A from v0, B from v8, C from v16, D from
//! v24, which starts with random bits to show what WMMA leaves alone), runs one WMMA and stores
//! v24-v31 to `out[8 t..]`.

mod common;

use common::{Args, AsmKernel, bytes_of, from_bytes};
use half::{bf16, f16};
use iron_emu::InstructionClass;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// (target, wave64) of every run.
const RUNS: [(&str, bool); 4] = [
    ("gfx1100", false),
    ("gfx1201", false),
    ("gfx1100", true),
    ("gfx1201", true),
];

/// Element formats of the A and B inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum In {
    F16,
    Bf16,
    Fp8,
    Bf8,
    Iu8,
    Iu4,
}

impl In {
    fn bits(self) -> usize {
        match self {
            In::F16 | In::Bf16 => 16,
            In::Fp8 | In::Bf8 | In::Iu8 => 8,
            In::Iu4 => 4,
        }
    }
}

/// Element formats of C and D.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    F32,
    F16,
    Bf16,
    I32,
}

impl Out {
    fn bits(self) -> usize {
        match self {
            Out::F16 | Out::Bf16 => 16,
            Out::F32 | Out::I32 => 32,
        }
    }
}

/// One instruction under test.
#[derive(Clone, Copy, Debug)]
struct Case {
    mnemonic: &'static str,
    a: In,
    b: In,
    out: Out,
    k: usize,
    /// neg_lo and neg_hi, bit `s` for source `s`.
    neg_lo: u8,
    neg_hi: u8,
    /// gfx11 op_sel[2]: 16-bit C/D in the high halves.
    high: bool,
    clamp: bool,
    /// Sprinkle infinities, NaNs and subnormals (float) or use only extremes (integer).
    special: bool,
    /// C as an inline constant instead of registers.
    c_constant: Option<(&'static str, u32)>,
}

impl Case {
    fn new(mnemonic: &'static str, a: In, b: In, out: Out, k: usize) -> Case {
        Case {
            mnemonic,
            a,
            b,
            out,
            k,
            neg_lo: 0,
            neg_hi: 0,
            high: false,
            clamp: false,
            special: false,
            c_constant: None,
        }
    }
    fn neg(self, neg_lo: u8, neg_hi: u8) -> Case {
        Case {
            neg_lo,
            neg_hi,
            ..self
        }
    }
    fn high(self) -> Case {
        Case { high: true, ..self }
    }
    fn clamp(self) -> Case {
        Case {
            clamp: true,
            ..self
        }
    }
    fn special(self) -> Case {
        Case {
            special: true,
            ..self
        }
    }
    fn integer(self) -> bool {
        self.out == Out::I32
    }
}

/// The lane layout of one (target, wave size), from the matrix side.
#[derive(Clone, Copy)]
struct Layout {
    gfx12: bool,
    lanes: usize,
}

impl Layout {
    /// Registers of an A or B fragment.
    fn ab_registers(self, bits: usize, k: usize) -> usize {
        let per_lane = if self.gfx12 { 16 * k / self.lanes } else { k };
        (per_lane * bits).div_ceil(32)
    }

    /// Registers of a C or D fragment.
    fn cd_registers(self, bits: usize) -> usize {
        let per_lane = 256 / self.lanes;
        if self.gfx12 {
            (per_lane * bits).div_ceil(32)
        } else {
            per_lane
        }
    }

    /// Element slot of A[i][k] (B[k][i]): (element index within the lane, lanes holding it).
    fn ab(self, i: usize, k: usize, kdim: usize) -> (usize, Vec<usize>) {
        if !self.gfx12 {
            // Calculator: register floor(k / per-register), lanes i, i+16 (and i+32, i+48).
            return (k, (0..self.lanes / 16).map(|j| i + 16 * j).collect());
        }
        // Wave32: lanes 0-15 take k 0-7 of every 16, lanes 16-31 k 8-15.
        let e32 = 8 * (k / 16) + k % 8;
        let lane32 = 16 * ((k % 16) / 8) + i;
        if self.lanes == 32 {
            (e32, vec![lane32])
        } else {
            // Wave64: the second half of each wave32 fragment moves to lanes 32-63.
            let per_lane = 16 * kdim / 64;
            (e32 % per_lane, vec![lane32 + 32 * (e32 / per_lane)])
        }
    }

    /// Register, bit offset and lane of C[m][n] (D[m][n]).
    fn cd(self, m: usize, n: usize, bits: usize, high: bool) -> (usize, u32, usize) {
        if !self.gfx12 {
            // Calculator: register floor(16 m / wave), lane (16 m) % wave + n.
            let shift = if bits == 16 && high { 16 } else { 0 };
            return (16 * m / self.lanes, shift, 16 * m % self.lanes + n);
        }
        let (i32_, lane32) = (m % 8, 16 * (m / 8) + n);
        let (i, lane) = if self.lanes == 32 {
            (i32_, lane32)
        } else {
            (i32_ % 4, lane32 + 32 * (i32_ / 4))
        };
        ((i * bits) / 32, ((i * bits) % 32) as u32, lane)
    }
}

/// Range syntax for `n` registers from `first`.
fn regs(first: usize, n: usize) -> String {
    if n == 1 {
        format!("v{first}")
    } else {
        format!("v[{first}:{}]", first + n - 1)
    }
}

/// `name:[a,b,c]` from bits 0-2 of `v` (empty when zero).
fn bits3(name: &str, v: u8) -> String {
    if v == 0 {
        String::new()
    } else {
        format!(" {name}:[{},{},{}]", v & 1, v >> 1 & 1, v >> 2 & 1)
    }
}

/// A random element code of format `f`.
fn code(rng: &mut StdRng, f: In, special: bool) -> u32 {
    let odd = special && rng.random_bool(0.08);
    match f {
        In::F16 if odd => {
            let sign = if rng.random() { 0x8000 } else { 0 };
            sign | [0x7c00, 0x7e00, rng.random_range(1..0x400), 0, 0x7bff][rng.random_range(0..5)]
        }
        In::Bf16 if odd => {
            let sign = if rng.random() { 0x8000 } else { 0 };
            sign | [0x7f80, 0x7fc0, rng.random_range(1..0x80), 0][rng.random_range(0..4)]
        }
        In::F16 => u32::from(f16::from_f32(rng.random_range(-4.0..4.0)).to_bits()),
        In::Bf16 => u32::from(bf16::from_f32(rng.random_range(-4.0..4.0)).to_bits()),
        In::Fp8 | In::Bf8 if odd => rng.random_range(0..256),
        // Finite codes only: E4M3 NaN is 0x7f/0xff, E5M2 infinities and NaNs 0x7c-0x7f/0xfc-0xff.
        In::Fp8 => loop {
            let c = rng.random_range(0..256u32);
            if c & 0x7f != 0x7f {
                break c;
            }
        },
        In::Bf8 => loop {
            let c = rng.random_range(0..256u32);
            if c & 0x7c != 0x7c {
                break c;
            }
        },
        In::Iu8 if special || rng.random_bool(0.2) => [0x80, 0x7f, 0xff, 0][rng.random_range(0..4)],
        In::Iu8 => rng.random_range(0..256),
        In::Iu4 if special || rng.random_bool(0.2) => [8, 7, 15, 0][rng.random_range(0..4)],
        In::Iu4 => rng.random_range(0..16),
    }
}

/// A random C element code.
fn c_code(rng: &mut StdRng, case: &Case) -> u32 {
    let odd = case.special && rng.random_bool(0.05);
    match case.out {
        Out::F32 if odd => [0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 1][rng.random_range(0..4)],
        Out::F32 => rng.random_range(-8.0f32..8.0).to_bits(),
        Out::F16 if odd => [0x7c00, 0xfc00, 0x7e00, 0x8001][rng.random_range(0..4)],
        Out::F16 => u32::from(f16::from_f32(rng.random_range(-8.0..8.0)).to_bits()),
        Out::Bf16 => u32::from(bf16::from_f32(rng.random_range(-8.0..8.0)).to_bits()),
        // Near the i32 limits, so that saturation and wrapping both show.
        Out::I32 if case.special => {
            let near: i64 = rng.random_range(0..40_000);
            (if rng.random() {
                i64::from(i32::MAX) - near
            } else {
                i64::from(i32::MIN) + near
            }) as u32
        }
        Out::I32 => rng.random(),
    }
}

/// The value of a float input element.
fn float_value(f: In, c: u32) -> f64 {
    match f {
        In::F16 => f16::from_bits(c as u16).to_f64(),
        In::Bf16 => bf16::from_bits(c as u16).to_f64(),
        In::Fp8 => minifloat(c, 4, 3),
        _ => minifloat(c, 5, 2),
    }
}

/// An OCP 8-bit float: E4M3 (no infinities, NaN at S.1111.111) or E5M2 (IEEE-like).
fn minifloat(c: u32, exp_bits: u32, mant_bits: u32) -> f64 {
    let sign = if c & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (c >> mant_bits) & ((1 << exp_bits) - 1);
    let mant = c & ((1 << mant_bits) - 1);
    let bias = (1 << (exp_bits - 1)) - 1;
    let all_ones = (1 << exp_bits) - 1;
    if exp_bits == 4 && exp == all_ones && mant == (1 << mant_bits) - 1 {
        return f64::NAN;
    }
    if exp_bits == 5 && exp == all_ones {
        return if mant == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    let frac = f64::from(mant) / f64::from(1u32 << mant_bits);
    if exp == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
    }
}

/// The value of an integer input element.
fn int_value(f: In, c: u32, signed: bool) -> i64 {
    let bits = f.bits() as u32;
    if signed && c >> (bits - 1) & 1 == 1 {
        i64::from(c) - (1i64 << bits)
    } else {
        i64::from(c)
    }
}

/// The naive reference: D codes indexed [m][n].
fn reference(case: &Case, a: &[Vec<u32>], b: &[Vec<u32>], c: &[Vec<u32>]) -> Vec<Vec<u32>> {
    (0..16)
        .map(|m| {
            (0..16)
                .map(|n| {
                    if case.integer() {
                        let sa = case.neg_lo & 1 != 0;
                        let sb = case.neg_lo & 2 != 0;
                        let mut s = i64::from(c[m][n] as i32);
                        for k in 0..case.k {
                            s += int_value(case.a, a[m][k], sa) * int_value(case.b, b[k][n], sb);
                        }
                        if case.clamp {
                            s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                        } else {
                            s as i32 as u32
                        }
                    } else {
                        // neg_lo / neg_hi: even / odd k (the low / high register halves).
                        let negated = |f: In, s: u8, k: usize| {
                            f.bits() == 16
                                && (if k.is_multiple_of(2) {
                                    case.neg_lo
                                } else {
                                    case.neg_hi
                                }) >> s
                                    & 1
                                    == 1
                        };
                        let mut acc = match case.out {
                            Out::F32 => f64::from(f32::from_bits(c[m][n])),
                            Out::F16 => f16::from_bits(c[m][n] as u16).to_f64(),
                            _ => bf16::from_bits(c[m][n] as u16).to_f64(),
                        };
                        if case.neg_hi & 4 != 0 {
                            acc = acc.abs();
                        }
                        if case.neg_lo & 4 != 0 {
                            acc = -acc;
                        }
                        for k in 0..case.k {
                            let mut x = float_value(case.a, a[m][k]);
                            let mut y = float_value(case.b, b[k][n]);
                            if negated(case.a, 0, k) {
                                x = -x;
                            }
                            if negated(case.b, 1, k) {
                                y = -y;
                            }
                            acc += x * y;
                        }
                        match case.out {
                            Out::F32 => (acc as f32).to_bits(),
                            Out::F16 => u32::from(f16::from_f64(acc).to_bits()),
                            _ => u32::from(bf16::from_f64(acc).to_bits()),
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// Whether D codes `got` and `want` agree (any NaN matches any NaN).
fn same(out: Out, got: u32, want: u32) -> bool {
    let nan = |x: u32| match out {
        Out::F32 => f32::from_bits(x).is_nan(),
        Out::F16 => f16::from_bits(x as u16).is_nan(),
        Out::Bf16 => bf16::from_bits(x as u16).is_nan(),
        Out::I32 => false,
    };
    got == want || (nan(got) && nan(want))
}

/// Runs `case` on every target and wave size that has it.
fn run(case: Case, seed: u64) {
    for (gfx, wave64) in RUNS {
        let gfx12 = gfx == "gfx1201";
        if !gfx12 && (case.k == 32 || matches!(case.a, In::Fp8 | In::Bf8)) {
            continue;
        }
        if gfx12 && case.high {
            continue;
        }
        if !run_one(case, seed, gfx, wave64) {
            common::skip("llc not available");
            return;
        }
    }
}

/// Runs `case` on one target and wave size; `false` if the assembler is unavailable.
fn run_one(case: Case, seed: u64, gfx: &str, wave64: bool) -> bool {
    let lanes = if wave64 { 64 } else { 32 };
    let layout = Layout {
        gfx12: gfx == "gfx1201",
        lanes,
    };
    let (a_n, b_n) = (
        layout.ab_registers(case.a.bits(), case.k),
        layout.ab_registers(case.b.bits(), case.k),
    );
    let cd_n = layout.cd_registers(case.out.bits());
    let c_text = match case.c_constant {
        Some((text, _)) => text.to_string(),
        None => regs(16, cd_n),
    };
    let mut mods = String::new();
    if case.high {
        mods.push_str(" op_sel:[0,0,1]");
    }
    mods.push_str(&bits3("neg_lo", case.neg_lo));
    mods.push_str(&bits3("neg_hi", case.neg_hi));
    if case.clamp {
        mods.push_str(" clamp");
    }
    let wmma = format!(
        "{} {}, {}, {}, {c_text}{mods}",
        case.mnemonic,
        regs(24, cd_n),
        regs(0, a_n),
        regs(8, b_n)
    );
    let (wait_k, wait_v) = if layout.gfx12 {
        ("s_wait_kmcnt 0x0", "s_wait_loadcnt 0x0")
    } else {
        ("s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(0)")
    };
    let loads: Vec<String> = (0..8)
        .map(|q| {
            format!(
                "global_load_b128 v[{}:{}], v40, s[10:11] offset:{}",
                4 * q,
                4 * q + 3,
                16 * q
            )
        })
        .collect();
    let mut body = vec![
        "s_load_b128 s[8:11], s[0:1], 0x0".to_string(),
        wait_k.into(),
        "v_lshlrev_b32 v40, 7, v0".into(),
        "v_lshlrev_b32 v41, 5, v0".into(),
    ];
    body.extend(loads);
    body.push(wait_v.into());
    body.push(wmma.clone());
    body.push("global_store_b128 v41, v[24:27], s[8:9]".into());
    body.push("global_store_b128 v41, v[28:31], s[8:9] offset:16".into());
    let refs: Vec<&str> = body.iter().map(String::as_str).collect();
    let Some(mut kernel) = AsmKernel::with_features(gfx, wave64, &[], &refs) else {
        return false;
    };

    let mut rng = StdRng::seed_from_u64(seed);
    let a: Vec<Vec<u32>> = (0..16)
        .map(|_| {
            (0..case.k)
                .map(|_| code(&mut rng, case.a, case.special))
                .collect()
        })
        .collect();
    let b: Vec<Vec<u32>> = (0..case.k)
        .map(|_| {
            (0..16)
                .map(|_| code(&mut rng, case.b, case.special))
                .collect()
        })
        .collect();
    let c: Vec<Vec<u32>> = (0..16)
        .map(|_| {
            (0..16)
                .map(|_| match case.c_constant {
                    Some((_, v)) => v,
                    None => c_code(&mut rng, &case),
                })
                .collect()
        })
        .collect();
    let mut lane_regs = vec![[0u32; 32]; lanes];
    for l in lane_regs.iter_mut() {
        for r in l.iter_mut().skip(16) {
            *r = rng.random();
        }
    }
    let old_d: Vec<[u32; 32]> = lane_regs.clone();
    let mut place = |first: usize, bits: usize, e: usize, lane: usize, v: u32| {
        let (r, shift) = (first + e * bits / 32, (e * bits % 32) as u32);
        lane_regs[lane][r] |= v << shift;
    };
    for i in 0..16 {
        for k in 0..case.k {
            let (e, ls) = layout.ab(i, k, case.k);
            for &l in &ls {
                place(0, case.a.bits(), e, l, a[i][k]);
                place(8, case.b.bits(), e, l, b[k][i]);
            }
        }
    }
    let out_bits = case.out.bits();
    let field_mask = u32::MAX >> (32 - out_bits);
    for (m, row) in c.iter().enumerate() {
        for (n, &value) in row.iter().enumerate() {
            let (r, shift, l) = layout.cd(m, n, out_bits, case.high);
            let slot = &mut lane_regs[l][16 + r];
            *slot = (*slot & !(field_mask << shift)) | value << shift;
        }
    }
    let input: Vec<u32> = lane_regs.iter().flatten().copied().collect();
    let pin = kernel
        .gpu
        .memory_mut()
        .alloc(lanes as u64 * 128, 256)
        .unwrap();
    kernel
        .gpu
        .memory_mut()
        .write(pin, &bytes_of(&input))
        .unwrap();
    let pout = kernel
        .gpu
        .memory_mut()
        .alloc(lanes as u64 * 32, 256)
        .unwrap();
    let counters = kernel
        .run(
            &Args::default().ptr(pout).ptr(pin).0,
            [1, 1, 1],
            [lanes as u32, 1, 1],
        )
        .unwrap_or_else(|e| panic!("{gfx} wave{lanes} `{wmma}`: {e}"));
    assert_eq!(counters.of(InstructionClass::Mfma), 1, "{gfx} `{wmma}`");
    let out: Vec<u32> = from_bytes(
        &kernel
            .gpu
            .memory()
            .read_vec(pout, lanes as u64 * 32)
            .unwrap(),
    );

    let want = reference(&case, &a, &b, &c);
    let mut expected: Vec<[u32; 8]> = old_d
        .iter()
        .map(|r| std::array::from_fn(|i| r[24 + i]))
        .collect();
    for (m, row) in want.iter().enumerate() {
        for (n, &value) in row.iter().enumerate() {
            let (r, shift, l) = layout.cd(m, n, out_bits, case.high);
            let slot = &mut expected[l][r];
            *slot = (*slot & !(field_mask << shift)) | value << shift;
        }
    }
    let mut checked = 0;
    for l in 0..lanes {
        for r in 0..8 {
            let got = out[l * 8 + r];
            let wanted = expected[l][r];
            // The element of this register (if any) decides how to compare.
            let element = (0..16)
                .flat_map(|m| (0..16).map(move |n| (m, n)))
                .find(|&(m, n)| {
                    let (rr, _, ll) = layout.cd(m, n, out_bits, case.high);
                    rr == r && ll == l
                });
            let ok = match element {
                None => got == wanted,
                Some(_) => (0..32 / out_bits).all(|h| {
                    let shift = (h * out_bits) as u32;
                    same(
                        case.out,
                        got >> shift & field_mask,
                        wanted >> shift & field_mask,
                    )
                }),
            };
            assert!(
                ok,
                "{gfx} wave{lanes} `{wmma}` lane {l} v{}: got {got:#010x}, want {wanted:#010x}",
                24 + r
            );
            checked += 1;
        }
    }
    assert_eq!(checked, lanes * 8);
    true
}

#[test]
fn float16_inputs_to_f32() {
    for (s, f) in [(1, In::F16), (2, In::Bf16)] {
        let name = if f == In::F16 {
            "v_wmma_f32_16x16x16_f16"
        } else {
            "v_wmma_f32_16x16x16_bf16"
        };
        let base = Case::new(name, f, f, Out::F32, 16);
        run(base, 100 + s);
        run(base.neg(0b101, 0b110), 110 + s);
        run(base.neg(0b010, 0b001), 120 + s);
        run(base.special(), 130 + s);
    }
}

#[test]
fn sixteen_bit_outputs_round_to_nearest_even_in_either_half() {
    let f16_case = Case::new("v_wmma_f16_16x16x16_f16", In::F16, In::F16, Out::F16, 16);
    let bf16_case = Case::new(
        "v_wmma_bf16_16x16x16_bf16",
        In::Bf16,
        In::Bf16,
        Out::Bf16,
        16,
    );
    for (s, case) in [f16_case, bf16_case].into_iter().enumerate() {
        let s = s as u64;
        run(case, 200 + s);
        run(case.high(), 210 + s);
        run(case.neg(0b111, 0b011), 220 + s);
        run(case.high().neg(0b001, 0b110), 230 + s);
    }
    run(f16_case.special(), 240);
    run(f16_case.special().high(), 241);
}

#[test]
fn integer_forms_honour_signedness_and_clamp() {
    let forms = [
        ("v_wmma_i32_16x16x16_iu8", In::Iu8, 16),
        ("v_wmma_i32_16x16x16_iu4", In::Iu4, 16),
        ("v_wmma_i32_16x16x32_iu4", In::Iu4, 32),
    ];
    for (f, (name, input, k)) in forms.into_iter().enumerate() {
        let base = Case::new(name, input, input, Out::I32, k);
        let seed = 300 + 20 * f as u64;
        for signs in 0..4u8 {
            run(base.neg(signs, 0), seed + u64::from(signs));
        }
        run(base.special(), seed + 10);
        run(base.special().neg(0b11, 0), seed + 11);
        run(base.special().clamp(), seed + 12);
        run(base.special().clamp().neg(0b01, 0), seed + 13);
        run(base.special().clamp().neg(0b11, 0), seed + 14);
    }
}

#[test]
fn fp8_and_bf8_forms() {
    let forms = [
        ("v_wmma_f32_16x16x16_fp8_fp8", In::Fp8, In::Fp8),
        ("v_wmma_f32_16x16x16_fp8_bf8", In::Fp8, In::Bf8),
        ("v_wmma_f32_16x16x16_bf8_fp8", In::Bf8, In::Fp8),
        ("v_wmma_f32_16x16x16_bf8_bf8", In::Bf8, In::Bf8),
    ];
    for (f, (name, a, b)) in forms.into_iter().enumerate() {
        let base = Case::new(name, a, b, Out::F32, 16);
        let seed = 400 + 10 * f as u64;
        run(base, seed);
        run(base.neg(0b100, 0b100), seed + 1);
        run(base.special(), seed + 2);
    }
}

#[test]
fn inline_constant_accumulator() {
    let case = Case {
        c_constant: Some(("1.0", 1.0f32.to_bits())),
        ..Case::new("v_wmma_f32_16x16x16_f16", In::F16, In::F16, Out::F32, 16)
    };
    run(case, 500);
    let case = Case {
        c_constant: Some(("-2.0", (-2.0f32).to_bits())),
        ..Case::new(
            "v_wmma_f32_16x16x16_bf8_fp8",
            In::Bf8,
            In::Fp8,
            Out::F32,
            16,
        )
    };
    run(case, 501);
}
