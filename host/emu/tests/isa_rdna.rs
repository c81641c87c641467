//! RDNA instruction semantics on hand-written code: each test assembles a few instructions (with
//! `llc`) for gfx1100 and gfx1201, in wave32 and wave64, runs one workgroup of 64 work-items on
//! seeded random inputs and compares every lane with a host reference.
//!
//! Harness layout: kernarg = {out, in}; work-item `t` gets inputs `in[k*64 + t]` in v1, v2, v3; the
//! body leaves results in v4..v7, which are stored to `out[k*64 + t]`. v20 holds `t * 4`. In wave32
//! the workgroup is two waves (work-items 0-31 and 32-63).

mod common;

use common::{Args, AsmKernel, bytes_of, from_bytes};
use half::f16;
use iron_emu::{Counters, EmuError, Fault, InstructionClass, Target, WaveSize, rdna};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// (target, wave64) of every run.
const RUNS: [(&str, bool); 4] = [
    ("gfx1100", false),
    ("gfx1201", false),
    ("gfx1100", true),
    ("gfx1201", true),
];

fn gfx12(gfx: &str) -> bool {
    gfx == "gfx1201"
}

/// Assembler features: gfx1201 assembles true16 operands (`v1.h`) only with `+real-true16`.
fn features(gfx: &str) -> Vec<&'static str> {
    if gfx12(gfx) {
        vec!["+real-true16"]
    } else {
        Vec::new()
    }
}

/// Loads the inputs into v1-v3 and zeroes v4-v7.
fn prologue(gfx: &str) -> Vec<String> {
    let (kmcnt, loadcnt) = if gfx12(gfx) {
        ("s_wait_kmcnt 0x0", "s_wait_loadcnt 0x0")
    } else {
        ("s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(0)")
    };
    [
        "s_load_b128 s[8:11], s[0:1], 0x0",
        kmcnt,
        "v_lshlrev_b32 v20, 2, v0",
        "global_load_b32 v1, v20, s[10:11]",
        "global_load_b32 v2, v20, s[10:11] offset:256",
        "global_load_b32 v3, v20, s[10:11] offset:512",
        "v_mov_b32 v4, 0",
        "v_mov_b32 v5, 0",
        "v_mov_b32 v6, 0",
        "v_mov_b32 v7, 0",
        loadcnt,
    ]
    .map(String::from)
    .to_vec()
}

/// Stores v4-v7 for every lane.
fn epilogue(wave64: bool) -> Vec<String> {
    [
        if wave64 {
            "s_mov_b64 exec, -1"
        } else {
            "s_mov_b32 exec_lo, -1"
        },
        "global_store_b32 v20, v4, s[8:9]",
        "global_store_b32 v20, v5, s[8:9] offset:256",
        "global_store_b32 v20, v6, s[8:9] offset:512",
        "global_store_b32 v20, v7, s[8:9] offset:768",
    ]
    .map(String::from)
    .to_vec()
}

/// Outputs (v4..v7 per work-item) and counters of one run.
struct Run {
    out: [[u32; 64]; 4],
    counters: Counters,
}

/// Runs `body` on one workgroup of 64 work-items; `None` if `llc` is unavailable.
fn run(gfx: &str, wave64: bool, body: &[&str], inputs: &[[u32; 64]; 3], lds: u32) -> Option<Run> {
    let mut lines = prologue(gfx);
    lines.extend(body.iter().map(|s| s.to_string()));
    lines.extend(epilogue(wave64));
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut k = AsmKernel::with_features(gfx, wave64, &features(gfx), &refs)?;
    k.descriptor.group_segment_fixed_size = lds;
    // These tests are about what instructions compute; some read another wave's LDS on purpose
    // (a `ds_load_2addr` across the wave boundary), which the racecheck would stop.
    k.gpu.set_checks(iron_emu::Checks::NONE);
    let input: Vec<u32> = inputs.iter().flatten().copied().collect();
    let pin = k.gpu.memory_mut().alloc(768, 256).unwrap();
    k.gpu.memory_mut().write(pin, &bytes_of(&input)).unwrap();
    let pout = k.gpu.memory_mut().alloc(1024, 256).unwrap();
    k.gpu.memory_mut().write(pout, &[0xee; 1024]).unwrap();
    let counters = k
        .run(&Args::default().ptr(pout).ptr(pin).0, [1, 1, 1], [64, 1, 1])
        .unwrap_or_else(|e| panic!("{gfx} wave64={wave64}: {e}"));
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    Some(Run {
        out: std::array::from_fn(|k| std::array::from_fn(|t| out[k * 64 + t])),
        counters,
    })
}

fn random(seed: u64) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    std::array::from_fn(|_| std::array::from_fn(|_| rng.random()))
}

/// Per work-item facts a check needs.
#[derive(Clone, Copy)]
struct Lane {
    /// Work-item index (0..64).
    t: usize,
    /// Lanes per wave.
    lanes: usize,
}

impl Lane {
    /// Lane index within the wave.
    fn l(self) -> usize {
        self.t % self.lanes
    }
    /// Work-item index of lane `l` of this lane's wave.
    fn at(self, l: usize) -> usize {
        self.t - self.l() + l
    }
}

/// Runs `body` for every target and wave size in `runs`, checking each work-item with
/// `check(lane, inputs, outputs)` where `inputs[k]` is the whole input array `k`.
fn check(
    runs: &[(&str, bool)],
    body: impl Fn(&str, bool) -> Vec<String>,
    inputs: [[u32; 64]; 3],
    lds: u32,
    check: impl Fn(&str, Lane, &[[u32; 64]; 3], [u32; 4]) -> Result<(), String>,
) {
    for &(gfx, wave64) in runs {
        let lines = body(gfx, wave64);
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let Some(r) = run(gfx, wave64, &refs, &inputs, lds) else {
            common::skip("llc not available");
            return;
        };
        let lanes = if wave64 { 64 } else { 32 };
        for t in 0..64 {
            let o = [r.out[0][t], r.out[1][t], r.out[2][t], r.out[3][t]];
            if let Err(e) = check(gfx, Lane { t, lanes }, &inputs, o) {
                panic!("{gfx} wave{lanes} work-item {t}: {e}");
            }
        }
    }
}

fn lines(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

fn eq(what: &str, got: u32, want: u32) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:#x}, want {want:#x}"))
    }
}

fn h(bits: u32) -> f32 {
    f16::from_bits(bits as u16).to_f32()
}

fn hb(x: f32) -> u32 {
    u32::from(f16::from_f32(x).to_bits())
}

/// Random f16 pairs without NaNs or infinities.
fn halves(seed: u64) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut half = || hb(rng.random_range(-50.0f32..50.0));
    std::array::from_fn(|_| std::array::from_fn(|_| half() | half() << 16))
}

#[test]
fn sixteen_bit_results_write_one_half_and_keep_the_other() {
    let body = |_: &str, _| {
        lines(&[
            "v_mov_b32 v4, v3",
            "v_add_f16 v4.h, v1.l, v2.h",
            "v_mov_b32 v5, v3",
            "v_mul_f16_e32 v5.l, v1.h, v2.l",
            "v_cvt_f32_f16_e32 v6, v1.h",
            "v_mov_b32 v7, v3",
            "v_cvt_f16_f32_e32 v7.h, v6",
        ])
    };
    check(&RUNS, body, halves(1), 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        eq(
            "add to high half",
            o[0],
            c & 0xffff | hb(h(a) + h(b >> 16)) << 16,
        )?;
        eq(
            "mul to low half",
            o[1],
            c & 0xffff_0000 | hb(h(a >> 16) * h(b)),
        )?;
        eq("convert high half", o[2], h(a >> 16).to_bits())?;
        eq(
            "convert to high half",
            o[3],
            c & 0xffff | hb(h(a >> 16)) << 16,
        )
    });
}

#[test]
fn dpp16_row_share_row_xmask_masks_and_dpp8() {
    let body = |_: &str, _| {
        lines(&[
            "v_mov_b32_dpp v4, v1 row_share:3 row_mask:0xf bank_mask:0xf",
            "v_add_nc_u32_dpp v5, v1, v2 row_xmask:7 row_mask:0xf bank_mask:0xf",
            "v_mov_b32_dpp v6, v1 dpp8:[7,6,5,4,3,2,1,0]",
            "v_mov_b32 v7, v3",
            "v_mov_b32_dpp v7, v1 quad_perm:[1,0,3,2] row_mask:0x5 bank_mask:0xa",
        ])
    };
    check(&RUNS, body, random(2), 0, |_, lane, i, o| {
        let l = lane.l();
        let row = l & !15;
        let r = l & 15;
        eq("row_share", o[0], i[0][lane.at(row + 3)])?;
        eq(
            "row_xmask",
            o[1],
            i[0][lane.at(row + (r ^ 7))].wrapping_add(i[1][lane.t]),
        )?;
        eq("dpp8", o[2], i[0][lane.at((l & !7) + 7 - l % 8)])?;
        let written = (l / 16) % 2 == 0 && (r / 4) % 2 == 1;
        let want = if written {
            i[0][lane.at(l ^ 1)]
        } else {
            i[2][lane.t]
        };
        eq("row and bank masks", o[3], want)
    });
}

#[test]
fn vopd_halves_both_read_before_either_writes() {
    let wave32 = [("gfx1100", false), ("gfx1201", false)];
    let body = |_: &str, _| {
        lines(&[
            "v_mov_b32 v10, v1",
            "v_mov_b32 v9, v2",
            "v_mov_b32 v11, v2",
            "v_dual_mov_b32 v9, v10 :: v_dual_mov_b32 v10, v9",
            "v_mov_b32 v4, v9",
            "v_mov_b32 v5, v10",
            "v_dual_mul_f32 v6, v1, v2 :: v_dual_add_f32 v7, v3, v11",
        ])
    };
    let mut rng = StdRng::seed_from_u64(3);
    let inputs: [[u32; 64]; 3] = std::array::from_fn(|_| {
        std::array::from_fn(|_| rng.random_range(-100.0f32..100.0).to_bits())
    });
    check(&wave32, body, inputs, 0, |_, lane, i, o| {
        let f = |k: usize| f32::from_bits(i[k][lane.t]);
        eq("swapped x", o[0], i[0][lane.t])?;
        eq("swapped y", o[1], i[1][lane.t])?;
        eq("mul", o[2], (f(0) * f(1)).to_bits())?;
        eq("add", o[3], (f(2) + f(1)).to_bits())
    });
}

#[test]
fn permlanes_readlane_writelane_and_readfirstlane() {
    let body = |_: &str, _| {
        lines(&[
            "s_mov_b32 s4, 0x01234567",
            "s_mov_b32 s5, 0x89abcdef",
            "v_permlane16_b32 v4, v1, s4, s5",
            "v_permlanex16_b32 v5, v1, s4, s5",
            "v_readlane_b32 s6, v1, 7",
            "v_mov_b32 v6, s6",
            "v_readfirstlane_b32 s7, v2",
            "v_mov_b32 v7, s7",
            "v_writelane_b32 v7, s6, 3",
        ])
    };
    check(&RUNS, body, random(4), 0, |_, lane, i, o| {
        let l = lane.l();
        let (row, r) = (l & !15, l & 15);
        let sel = if r < 8 { 7 - r } else { 23 - r };
        eq("permlane16", o[0], i[0][lane.at(row + sel)])?;
        eq("permlanex16", o[1], i[0][lane.at((row ^ 16) + sel)])?;
        eq("readlane", o[2], i[0][lane.at(7)])?;
        let want = if l == 3 {
            i[0][lane.at(7)]
        } else {
            i[1][lane.at(0)]
        };
        eq("readfirstlane, writelane", o[3], want)
    });
}

#[test]
fn permlane64_swaps_the_halves_of_a_wave64() {
    let wave64 = [("gfx1100", true), ("gfx1201", true)];
    let body = |_: &str, _| lines(&["v_permlane64_b32 v4, v1"]);
    check(&wave64, body, random(5), 0, |_, lane, i, o| {
        eq("permlane64", o[0], i[0][lane.t ^ 32])
    });
}

#[test]
fn lane_masks_are_one_sgpr_in_wave32_and_a_pair_in_wave64() {
    let body = |_: &str, wave64: bool| {
        if wave64 {
            lines(&[
                "v_cmp_gt_u32_e32 vcc, v1, v2",
                "v_cndmask_b32_e32 v4, v2, v1, vcc",
                "v_cmp_lt_u32_e64 s[6:7], v1, v2",
                "v_cndmask_b32_e64 v5, v3, v1, s[6:7]",
                "s_bcnt1_i32_b64 s12, s[6:7]",
                "v_mov_b32 v6, s12",
                "s_bcnt1_i32_b64 s13, vcc",
                "v_mov_b32 v7, s13",
            ])
        } else {
            lines(&[
                "s_mov_b32 vcc_hi, 0x1234",
                "s_mov_b32 s7, 0x5678",
                "v_cmp_gt_u32_e32 vcc_lo, v1, v2",
                "v_cndmask_b32_e32 v4, v2, v1, vcc_lo",
                "v_cmp_lt_u32_e64 s6, v1, v2",
                "v_cndmask_b32_e64 v5, v3, v1, s6",
                "v_mov_b32 v6, vcc_hi",
                "v_mov_b32 v7, s7",
            ])
        }
    };
    check(&RUNS, body, random(6), 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        eq("max by compare", o[0], a.max(b))?;
        eq("select by sgpr mask", o[1], if a < b { a } else { c })?;
        if lane.lanes == 64 {
            let count = |f: &dyn Fn(u32, u32) -> bool| {
                (0..64)
                    .filter(|&l| f(i[0][lane.at(l)], i[1][lane.at(l)]))
                    .count() as u32
            };
            eq("mask bits", o[2], count(&|a, b| a < b))?;
            eq("vcc bits", o[3], count(&|a, b| a > b))
        } else {
            eq("vcc_hi untouched", o[2], 0x1234)?;
            eq("next sgpr untouched", o[3], 0x5678)
        }
    });
}

#[test]
fn carries_and_64_bit_multiply_add() {
    let body = |gfx: &str, wave64: bool| {
        let (c0, c1) = if wave64 {
            ("s[6:7]", "s[12:13]")
        } else {
            ("s6", "s7")
        };
        let mad = if gfx12(gfx) {
            "v_mad_co_u64_u32"
        } else {
            "v_mad_u64_u32"
        };
        vec![
            format!("v_add_co_u32 v4, {c0}, v1, v2"),
            format!("v_add_co_ci_u32_e64 v5, {c1}, v3, v1, {c0}"),
            format!("{mad} v[6:7], null, v1, v2, v[2:3]"),
        ]
    };
    check(&RUNS, body, random(7), 0, |_, lane, i, o| {
        let (a, b, c) = (
            u64::from(i[0][lane.t]),
            u64::from(i[1][lane.t]),
            u64::from(i[2][lane.t]),
        );
        eq("add", o[0], (a + b) as u32)?;
        eq("add with carry in", o[1], (c + a + ((a + b) >> 32)) as u32)?;
        let mad = (a * b).wrapping_add(b | c << 32);
        eq("mad low", o[2], mad as u32)?;
        eq("mad high", o[3], (mad >> 32) as u32)
    });
}

#[test]
fn signed_adds_without_carry_wrap_and_saturate_under_clamp() {
    let body = |_: &str, _: bool| {
        lines(&[
            "v_add_nc_i32 v4, v1, v2",
            "v_sub_nc_i32 v5, v1, v2",
            "v_add_nc_i32 v6, v1, v2 clamp",
            "v_sub_nc_i32 v7, v1, v2 clamp",
        ])
    };
    let mut inputs = random(11);
    let edges = [
        (i32::MAX, 1),
        (i32::MIN, -1),
        (i32::MIN, 1),
        (i32::MAX, -1),
        (-5, 3),
    ];
    for (t, (x, y)) in edges.into_iter().enumerate() {
        inputs[0][t] = x as u32;
        inputs[1][t] = y as u32;
    }
    check(&RUNS, body, inputs, 0, |_, lane, i, o| {
        let (a, b) = (i[0][lane.t] as i32, i[1][lane.t] as i32);
        eq("add", o[0], a.wrapping_add(b) as u32)?;
        eq("sub", o[1], a.wrapping_sub(b) as u32)?;
        eq("add clamped", o[2], a.saturating_add(b) as u32)?;
        eq("sub clamped", o[3], a.saturating_sub(b) as u32)
    });
}

#[test]
fn cmpx_and_saveexec_mask_lanes() {
    let body = |_: &str, wave64: bool| {
        let (exec, vcc, s6, all) = if wave64 {
            ("exec", "vcc", "s[6:7]", "s_mov_b64 exec, -1")
        } else {
            ("exec_lo", "vcc_lo", "s6", "s_mov_b32 exec_lo, -1")
        };
        vec![
            "v_cmpx_gt_u32_e32 v1, v2".into(),
            "v_mov_b32 v4, v3".into(),
            all.into(),
            format!("v_cmp_lt_u32_e32 {vcc}, v1, v3"),
            format!(
                "s_and_saveexec_b{} {s6}, {vcc}",
                if wave64 { 64 } else { 32 }
            ),
            "v_mov_b32 v5, 1".into(),
            format!("s_mov_b{} {exec}, {s6}", if wave64 { 64 } else { 32 }),
            "v_mov_b32 v6, s6".into(),
        ]
    };
    check(&RUNS, body, random(8), 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        eq("cmpx", o[0], if a > b { c } else { 0 })?;
        eq("saveexec", o[1], u32::from(a < c))?;
        eq("saved exec", o[2], u32::MAX)
    });
}

#[test]
fn gfx12_scalar_float_and_64_bit_arithmetic() {
    let runs = [("gfx1201", false), ("gfx1201", true)];
    let body = |_: &str, _| {
        lines(&[
            "v_readfirstlane_b32 s4, v1",
            "v_readfirstlane_b32 s5, v2",
            "v_readfirstlane_b32 s12, v3",
            "s_add_f32 s6, s4, s5",
            "s_mul_f32 s7, s4, s5",
            "s_cvt_f32_u32 s13, s12",
            "s_cvt_u32_f32 s14, s4",
            "s_add_nc_u64 s[16:17], s[4:5], s[12:13]",
            "s_mul_u64 s[18:19], s[4:5], s[12:13]",
            "v_mov_b32 v4, s6",
            "v_mov_b32 v5, s7",
            "v_mov_b32 v6, s14",
            "s_xor_b32 s16, s16, s17",
            "s_xor_b32 s18, s18, s19",
            "s_add_co_u32 s16, s16, s18",
            "v_mov_b32 v7, s16",
        ])
    };
    let mut rng = StdRng::seed_from_u64(9);
    let inputs: [[u32; 64]; 3] = std::array::from_fn(|k| {
        std::array::from_fn(|_| {
            if k == 2 {
                rng.random()
            } else {
                rng.random_range(0.0f32..1000.0).to_bits()
            }
        })
    });
    check(&runs, body, inputs, 0, |_, lane, i, o| {
        let first = |k: usize| i[k][lane.at(0)];
        let (a, b) = (f32::from_bits(first(0)), f32::from_bits(first(1)));
        eq("s_add_f32", o[0], (a + b).to_bits())?;
        eq("s_mul_f32", o[1], (a * b).to_bits())?;
        eq("s_cvt_u32_f32", o[2], a as u32)?;
        let x = u64::from(first(0)) | u64::from(first(1)) << 32;
        let y = u64::from(first(2)) | u64::from((first(2) as f32).to_bits()) << 32;
        let (s, p) = (x.wrapping_add(y), x.wrapping_mul(y));
        let fold = |v: u64| v as u32 ^ (v >> 32) as u32;
        eq(
            "64-bit add and multiply",
            o[3],
            fold(s).wrapping_add(fold(p)),
        )
    });
}

#[test]
fn gfx12_scalar_float_rounding() {
    let runs = [("gfx1201", false), ("gfx1201", true)];
    let body = |_: &str, _| {
        lines(&[
            "v_readfirstlane_b32 s4, v1",
            "s_rndne_f32 s20, s4",
            "s_ceil_f32 s21, s4",
            "s_floor_f32 s22, s4",
            "s_trunc_f32 s23, s4",
            "v_mov_b32 v4, s20",
            "v_mov_b32 v5, s21",
            "v_mov_b32 v6, s22",
            "v_mov_b32 v7, s23",
        ])
    };
    // Ties (n + 0.5) of both signs and parities, and arbitrary fractions.
    for seed in 0..8 {
        let mut rng = StdRng::seed_from_u64(40 + seed);
        let inputs: [[u32; 64]; 3] = std::array::from_fn(|_| {
            std::array::from_fn(|_| {
                let whole = rng.random_range(-100i32..100) as f32;
                let fraction = if seed % 2 == 0 {
                    0.5
                } else {
                    rng.random_range(0.0f32..1.0)
                };
                (whole + fraction).to_bits()
            })
        });
        check(&runs, body, inputs, 0, |_, lane, i, o| {
            let a = f32::from_bits(i[0][lane.at(0)]);
            eq("s_rndne_f32", o[0], a.round_ties_even().to_bits())?;
            eq("s_ceil_f32", o[1], a.ceil().to_bits())?;
            eq("s_floor_f32", o[2], a.floor().to_bits())?;
            eq("s_trunc_f32", o[3], a.trunc().to_bits())
        });
    }
}

#[test]
fn gfx12_scalar_loads_of_bytes_and_halves_extend() {
    let runs = [("gfx1201", false)];
    let body = |_: &str, _| {
        lines(&[
            "s_load_i8 s12, s[10:11], 0x5",
            "s_load_u8 s13, s[10:11], 0x7",
            "s_load_i16 s14, s[10:11], 0xa",
            "s_load_u16 s15, s[10:11], 0xe",
            "s_wait_kmcnt 0x0",
            "v_mov_b32 v4, s12",
            "v_mov_b32 v5, s13",
            "v_mov_b32 v6, s14",
            "v_mov_b32 v7, s15",
        ])
    };
    check(&runs, body, random(10), 0, |_, _, i, o| {
        let bytes: Vec<u8> = i[0].iter().flat_map(|w| w.to_le_bytes()).collect();
        let half = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        eq("i8", o[0], bytes[5] as i8 as i32 as u32)?;
        eq("u8", o[1], u32::from(bytes[7]))?;
        eq("i16", o[2], half(10) as i16 as i32 as u32)?;
        eq("u16", o[3], u32::from(half(14)))
    });
}

#[test]
fn lds_compare_store_order_and_bpermute_lane_wrap() {
    let body = |gfx: &str, _| {
        let wait = if gfx12(gfx) {
            "s_wait_dscnt 0x0"
        } else {
            "s_waitcnt lgkmcnt(0)"
        };
        lines(&[
            "ds_store_b32 v20, v1",
            wait,
            "ds_cmpstore_rtn_b32 v4, v20, v2, v3",
            wait,
            "ds_load_b32 v5, v20",
            "v_add_nc_u32 v21, 0x84, v20",
            "ds_bpermute_b32 v6, v21, v1",
            "ds_load_2addr_b32 v[8:9], v20 offset1:1",
            wait,
            "v_mov_b32 v7, v9",
        ])
    };
    let mut inputs = random(11);
    for t in (0..64).step_by(2) {
        inputs[2][t] = inputs[0][t];
    }
    check(&RUNS, body, inputs, 260, |gfx, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        eq("returned old value", o[0], a)?;
        eq("stored if equal", o[1], if a == c { b } else { a })?;
        // Lane l reads lane (l + 33) modulo the wrap: on gfx1100 modulo 32 within l's own half
        // of a wave64; on gfx1201 modulo the wave's lanes.
        let source = if gfx == "gfx1100" {
            (lane.l() & 32) | ((lane.l() + 33) % 32)
        } else {
            (lane.l() + 33) % lane.lanes
        };
        eq("bpermute", o[2], i[0][lane.at(source)])?;
        if lane.t < 63 {
            let next = lane.t + 1;
            let stored = if i[0][next] == i[2][next] {
                i[1][next]
            } else {
                i[0][next]
            };
            // The neighbour's word, read after both waves stored it in wave64; in wave32 the
            // other wave may not have run yet, so only the wave's own lanes are certain.
            if lane.l() + 1 < lane.lanes {
                eq("2addr second word", o[3], stored)?;
            }
        }
        Ok(())
    });
}

#[test]
fn barriers_let_waves_share_lds() {
    let body = |gfx: &str, _| {
        let mut l = vec!["ds_store_b32 v20, v1".to_string()];
        if gfx12(gfx) {
            l.extend(lines(&[
                "s_wait_dscnt 0x0",
                "s_barrier_signal -1",
                "s_barrier_wait 0xffff",
            ]));
        } else {
            l.extend(lines(&["s_waitcnt lgkmcnt(0)", "s_barrier"]));
        }
        l.extend(lines(&[
            "v_xor_b32 v21, 0x80, v20",
            "ds_load_b32 v4, v21",
            if gfx12(gfx) {
                "s_wait_dscnt 0x0"
            } else {
                "s_waitcnt lgkmcnt(0)"
            },
        ]));
        l
    };
    check(&RUNS, body, random(12), 256, |_, lane, i, o| {
        eq("other half's value", o[0], i[0][lane.t ^ 32])
    });
}

#[test]
fn packed_math_runs_gfx9_semantics() {
    let body = |_: &str, _| {
        lines(&[
            "v_pk_fma_f16 v4, v1, v2, v3",
            "v_pk_add_u16 v5, v1, v2",
            "v_dot2_f32_f16 v6, v1, v2, v3",
            "v_fma_mix_f32 v7, v1, v2, v3 op_sel_hi:[1,1,0]",
        ])
    };
    let mut inputs = halves(13);
    let mut rng = StdRng::seed_from_u64(13);
    for c in inputs[2].iter_mut() {
        *c = rng.random_range(-10.0f32..10.0).to_bits();
    }
    check(&RUNS, body, inputs, 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        let fma = |s: u32| {
            let v = |x: u32| f64::from(h(x >> s));
            u32::from(f16::from_f64(v(a).mul_add(v(b), v(c))).to_bits()) << s
        };
        eq("pk_fma", o[0], fma(0) | fma(16))?;
        let add = |s: u32| ((a >> s) as u16).wrapping_add((b >> s) as u16) as u32;
        eq("pk_add_u16", o[1], add(0) | add(16) << 16)?;
        let cf = f32::from_bits(c);
        let dot = f64::from(h(a)) * f64::from(h(b)) + f64::from(h(a >> 16)) * f64::from(h(b >> 16));
        let got = f32::from_bits(o[2]);
        let want = (dot + f64::from(cf)) as f32;
        if (got - want).abs() > 1e-3 * want.abs().max(1.0) {
            return Err(format!("dot2: got {got}, want {want}"));
        }
        eq(
            "fma_mix",
            o[3],
            (f64::from(h(a)).mul_add(f64::from(h(b)), f64::from(cf)) as f32).to_bits(),
        )
    });
}

#[test]
fn waits_and_scheduling_hints_are_counted_no_ops() {
    for (gfx, wave64) in RUNS {
        let body: Vec<&str> = if gfx12(gfx) {
            vec![
                "s_delay_alu instid0(VALU_DEP_1)",
                "s_clause 0x1",
                "s_wait_alu 0xfffd",
                "s_wait_storecnt 0x0",
                "v_add_nc_u32 v4, v1, v2",
            ]
        } else {
            vec![
                "s_delay_alu instid0(VALU_DEP_1)",
                "s_clause 0x1",
                "s_waitcnt_depctr 0xfffd",
                "s_waitcnt_vscnt null, 0x0",
                "v_add_nc_u32 v4, v1, v2",
            ]
        };
        let inputs = random(14);
        let Some(r) = run(gfx, wave64, &body, &inputs, 0) else {
            return;
        };
        for (t, got) in r.out[0].iter().enumerate() {
            assert_eq!(*got, inputs[0][t].wrapping_add(inputs[1][t]), "{gfx} {t}");
        }
        let waves = if wave64 { 1 } else { 2 };
        // The prologue waits twice; the body adds two waits.
        assert_eq!(r.counters.of(InstructionClass::Waitcnt), 4 * waves, "{gfx}");
        assert!(r.counters.of(InstructionClass::Salu) >= 2 * waves, "{gfx}");
    }
}

#[test]
fn workgroup_ids_arrive_where_each_target_keeps_them() {
    for (gfx, wave64) in RUNS {
        let ids: &[&str] = if gfx12(gfx) {
            &[
                "s_mov_b32 s2, ttmp9",
                "s_and_b32 s3, ttmp7, 0xffff",
                "s_lshr_b32 s4, ttmp7, 16",
            ]
        } else {
            &[]
        };
        let mut body: Vec<&str> = vec!["s_load_b64 s[8:9], s[0:1], 0x0"];
        body.extend_from_slice(ids);
        body.extend_from_slice(&[
            "s_mul_i32 s5, s3, 3",
            "s_mul_i32 s6, s4, 6",
            "s_add_co_u32 s5, s5, s6",
            "s_add_co_u32 s5, s5, s2",
            "s_lshl_b32 s5, s5, 2",
            "s_lshl_b32 s6, s3, 8",
            "s_lshl_b32 s7, s4, 16",
            "s_or_b32 s6, s6, s7",
            "s_or_b32 s6, s6, s2",
            "v_mov_b32 v1, s5",
            "v_mov_b32 v2, s6",
            if gfx12(gfx) {
                "s_wait_kmcnt 0x0"
            } else {
                "s_waitcnt lgkmcnt(0)"
            },
            "global_store_b32 v1, v2, s[8:9]",
        ]);
        if gfx == "gfx1100" {
            // gfx11 has no s_add_co_u32.
            for line in body.iter_mut() {
                *line = match *line {
                    "s_add_co_u32 s5, s5, s6" => "s_add_u32 s5, s5, s6",
                    "s_add_co_u32 s5, s5, s2" => "s_add_u32 s5, s5, s2",
                    l => l,
                };
            }
        }
        let Some(mut k) = AsmKernel::with_features(gfx, wave64, &features(gfx), &body) else {
            return;
        };
        // In wave32 both waves of a workgroup store its word (the same value): a race the
        // global racecheck would report.
        k.gpu.set_checks(iron_emu::Checks {
            global_races: false,
            ..iron_emu::Checks::ALL
        });
        let out = k.gpu.memory_mut().alloc(12 * 4, 256).unwrap();
        k.gpu.memory_mut().write(out, &[0xee; 48]).unwrap();
        k.run(&Args::default().ptr(out).0, [3, 2, 2], [64, 1, 1])
            .unwrap_or_else(|e| panic!("{gfx}: {e}"));
        let got: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(out, 48).unwrap());
        for z in 0..2u32 {
            for y in 0..2u32 {
                for x in 0..3u32 {
                    let at = (x + 3 * y + 6 * z) as usize;
                    assert_eq!(got[at], x | y << 8 | z << 16, "{gfx} group ({x},{y},{z})");
                }
            }
        }
    }
}

#[test]
fn saveexec_scc_covers_only_the_waves_lanes() {
    // EXEC is all ones: OR-NOT of zero gives no lanes, so SCC is 0 and EXEC becomes empty.
    let body = |_: &str, wave64: bool| {
        let (b, s6, s7) = if wave64 {
            (64, "s[6:7]", "s[12:13]")
        } else {
            (32, "s6", "s12")
        };
        vec![
            format!("s_mov_b{b} {s7}, 0"),
            format!("s_or_not1_saveexec_b{b} {s6}, {s7}"),
            "s_cselect_b32 s14, 1, 2".into(),
            format!("s_mov_b{b} exec{}, {s6}", if wave64 { "" } else { "_lo" }),
            "v_mov_b32 v4, s14".into(),
        ]
    };
    check(&RUNS, body, random(16), 0, |_, _, _, o| eq("scc", o[0], 2));
}

#[test]
fn fma_with_a_constant_k_reads_one_literal_and_runs_the_next_instruction() {
    // A literal src0 and K share one dword: decoding two would swallow the instruction after.
    let body = |gfx: &str, _| {
        let mut l = lines(&[
            "v_fmaak_f32 v4, 0x40400000, v1, 0x40400000",
            "v_add_nc_u32 v7, 1, v7",
            "v_fmamk_f32 v5, 0x3fc00000, 0x3fc00000, v2",
            "v_add_nc_u32 v7, 2, v7",
        ]);
        if gfx12(gfx) {
            l.extend(lines(&[
                "v_readfirstlane_b32 s12, v1",
                "v_readfirstlane_b32 s13, v2",
                "s_fmamk_f32 s14, s12, 0x40400000, s13",
                "s_fmaak_f32 s15, s12, s13, 0x3fc00000",
                "s_fmaak_f32 s16, 0x3fc00000, s13, 0x3fc00000",
                "v_mov_b32 v6, s14",
                "v_add_f32 v6, s15, v6",
                "v_add_f32 v6, s16, v6",
            ]));
        }
        l
    };
    let mut rng = StdRng::seed_from_u64(17);
    let inputs: [[u32; 64]; 3] = std::array::from_fn(|_| {
        std::array::from_fn(|_| rng.random_range(-100.0f32..100.0).to_bits())
    });
    check(&RUNS, body, inputs, 0, |gfx, lane, i, o| {
        let (a, b) = (f32::from_bits(i[0][lane.t]), f32::from_bits(i[1][lane.t]));
        eq("v_fmaak_f32", o[0], 3.0f32.mul_add(a, 3.0).to_bits())?;
        eq("v_fmamk_f32", o[1], 1.5f32.mul_add(1.5, b).to_bits())?;
        eq("the instructions after both ran", o[3], 3)?;
        if gfx12(gfx) {
            let first = |k: usize| f32::from_bits(i[k][lane.at(0)]);
            let (a, b) = (first(0), first(1));
            // v6 = s16 + (s15 + s14), in that order.
            let want = 1.5f32.mul_add(b, 1.5) + (a.mul_add(b, 1.5) + a.mul_add(3.0, b));
            eq("s_fmamk_f32, s_fmaak_f32", o[2], want.to_bits())?;
        }
        Ok(())
    });
}

#[test]
fn gfx12_waves_find_their_index_in_the_workgroup_in_ttmp8() {
    for wave64 in [false, true] {
        let body = [
            "s_load_b64 s[8:9], s[0:1], 0x0",
            "s_bfe_u32 s5, ttmp8, 0x50019",
            "s_lshl_b32 s6, s5, 2",
            "v_mov_b32 v1, s6",
            "v_mov_b32 v2, s5",
            "s_wait_kmcnt 0x0",
            "global_store_b32 v1, v2, s[8:9]",
        ];
        let Some(mut k) = AsmKernel::with_features("gfx1201", wave64, &features("gfx1201"), &body)
        else {
            return;
        };
        let waves = if wave64 { 4 } else { 8 };
        let out = k.gpu.memory_mut().alloc(4 * 8, 256).unwrap();
        k.gpu.memory_mut().write(out, &[0xee; 32]).unwrap();
        k.run(&Args::default().ptr(out).0, [1, 1, 1], [256, 1, 1])
            .unwrap_or_else(|e| panic!("wave64={wave64}: {e}"));
        let got: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(out, 4 * waves).unwrap());
        assert_eq!(
            got,
            (0..waves as u32).collect::<Vec<_>>(),
            "wave64={wave64}"
        );
    }
}

#[test]
fn aperture_bases_read_as_64_bits_make_generic_pointers_into_lds() {
    let body = |gfx: &str, _| {
        let (wait_store, wait_ds) = if gfx12(gfx) {
            ("s_wait_storecnt_dscnt 0x0", "s_wait_dscnt 0x0")
        } else {
            ("s_waitcnt vmcnt(0) lgkmcnt(0)", "s_waitcnt lgkmcnt(0)")
        };
        lines(&[
            "s_mov_b64 s[12:13], src_shared_base",
            "s_mov_b32 s14, src_shared_base",
            "s_mov_b64 s[16:17], src_private_base",
            "v_add_nc_u32 v8, s12, v20",
            "v_mov_b32 v9, s13",
            "flat_store_b32 v[8:9], v1",
            wait_store,
            "ds_load_b32 v4, v20",
            wait_ds,
            "v_mov_b32 v5, s12",
            "v_or_b32 v5, s16, v5",
            "v_mov_b32 v6, s13",
            "v_mov_b32 v7, s14",
        ])
    };
    check(&RUNS, body, random(41), 256, |_, lane, i, o| {
        eq(
            "the LDS store through the generic pointer",
            o[0],
            i[0][lane.t],
        )?;
        eq("low dwords of the 64-bit aperture bases", o[1], 0)?;
        eq("the high dword is the 32-bit read", o[2], o[3])?;
        if o[2] == 0 {
            return Err("no aperture".into());
        }
        Ok(())
    });
}

#[test]
fn mixed_precision_fma_reads_inline_constants_as_f16_in_f16_slots() {
    let body = |_: &str, _| {
        lines(&[
            "v_fma_mix_f32 v4, v1, 1.0, v2 op_sel_hi:[1,1,0]",
            "v_fma_mix_f32 v5, 0.5, v1, -2.0 op_sel:[0,1,0] op_sel_hi:[1,1,1]",
            "v_fma_mix_f32 v6, v1, 1.0, v2 op_sel_hi:[1,0,0]",
            "v_mov_b32 v7, v3",
            "v_fma_mixlo_f16 v7, v1, 4.0, 0.5 op_sel_hi:[1,1,1]",
        ])
    };
    let mut inputs = halves(61);
    let mut rng = StdRng::seed_from_u64(62);
    inputs[1] = std::array::from_fn(|_| rng.random_range(-100.0f32..100.0).to_bits());
    check(&RUNS, body, inputs, 0, |_, lane, i, o| {
        let (a, f, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        let lo = f64::from(h(a & 0xffff));
        let hi = f64::from(h(a >> 16));
        let f = f64::from(f32::from_bits(f));
        eq(
            "f16 x 1.0 + f32",
            o[0],
            (lo.mul_add(1.0, f) as f32).to_bits(),
        )?;
        eq(
            "0.5 x f16 + -2.0",
            o[1],
            (0.5f64.mul_add(hi, -2.0) as f32).to_bits(),
        )?;
        eq(
            "f16 x f32 1.0 + f32",
            o[2],
            (lo.mul_add(1.0, f) as f32).to_bits(),
        )?;
        let want = half::f16::from_f64(lo.mul_add(4.0, 0.5)).to_bits();
        eq("mixlo", o[3], c & 0xffff_0000 | u32::from(want))
    });
}

/// The buffer a buffer test's V# describes: `s[16:19]` holds the V#, built from the buffer's
/// address (kernarg dword 4-5) and these fields; `s21` holds `soffset`.
#[derive(Clone, Copy)]
struct Vsharp {
    /// Stride (word 1 bits 29:16).
    stride: u32,
    /// SWIZZLE_ENABLE (word 1 bits 31:30).
    swizzle: u32,
    /// NUM_RECORDS (word 2).
    num_records: u32,
    /// Word 3: DST_SEL, FORMAT, INDEX_STRIDE, ADD_TID_ENABLE, OOB_SELECT, TYPE.
    word3: u32,
    /// The SGPR offset the instructions name (s21).
    soffset: u32,
}

/// Word 3 of a V# with FORMAT 32_UINT-like nonzero format (a bound resource) and OOB_SELECT `oob`.
fn word3(oob: u32) -> u32 {
    4 << 12 | oob << 28
}

impl Vsharp {
    /// A raw buffer (stride 0) checked as OOB_SELECT 3, the mode HIP and LLVM code use.
    fn raw(num_records: u32, soffset: u32) -> Vsharp {
        Vsharp {
            stride: 0,
            swizzle: 0,
            num_records,
            word3: word3(3),
            soffset,
        }
    }

    /// Lines that load the buffer's address and build the V# in `s[16:19]` and soffset in s21.
    fn setup(&self, gfx: &str) -> Vec<String> {
        vec![
            "s_load_b64 s[12:13], s[0:1], 0x10".into(),
            if gfx12(gfx) {
                "s_wait_kmcnt 0x0"
            } else {
                "s_waitcnt lgkmcnt(0)"
            }
            .into(),
            "s_mov_b32 s16, s12".into(),
            "s_and_b32 s17, s13, 0xffff".into(),
            format!(
                "s_or_b32 s17, s17, {:#x}",
                self.stride << 16 | self.swizzle << 30
            ),
            format!("s_mov_b32 s18, {:#x}", self.num_records),
            format!("s_mov_b32 s19, {:#x}", self.word3),
            format!("s_mov_b32 s21, {:#x}", self.soffset),
        ]
    }
}

/// Waits for every vector memory access.
fn wait_vmem(gfx: &str) -> Vec<String> {
    if gfx12(gfx) {
        lines(&["s_wait_loadcnt 0x0", "s_wait_storecnt 0x0"])
    } else {
        lines(&["s_waitcnt vmcnt(0)", "s_waitcnt_vscnt null, 0x0"])
    }
}

/// An atomic's return modifier on `gfx` (gfx11: glc; gfx12: the temporal hint's return bit).
fn atomic_return(gfx: &str) -> &'static str {
    if gfx12(gfx) {
        " th:TH_ATOMIC_RETURN"
    } else {
        " glc"
    }
}

/// What a buffer test's kernel left: the lanes' v4..v7 and the buffer's bytes.
struct BufferRun {
    out: [[u32; 64]; 4],
    after: Vec<u8>,
}

/// Runs `v.setup` + `body` on one workgroup of 64 work-items with `buffer` as the V#'s memory:
/// the outputs and the buffer afterwards, the dispatch's error text, or `None` without `llc`.
fn run_buffer(
    gfx: &str,
    wave64: bool,
    v: Vsharp,
    body: &[String],
    inputs: &[[u32; 64]; 3],
    buffer: &[u8],
) -> Option<Result<BufferRun, String>> {
    let mut lines = prologue(gfx);
    lines.extend(v.setup(gfx));
    lines.extend(body.iter().cloned());
    lines.extend(wait_vmem(gfx));
    lines.extend(epilogue(wave64));
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut k = AsmKernel::with_features(gfx, wave64, &features(gfx), &refs)?;
    let input: Vec<u32> = inputs.iter().flatten().copied().collect();
    let mem = k.gpu.memory_mut();
    let pin = mem.alloc(768, 256).unwrap();
    mem.write(pin, &bytes_of(&input)).unwrap();
    let pout = mem.alloc(1024, 256).unwrap();
    mem.write(pout, &[0xee; 1024]).unwrap();
    let pbuf = mem.alloc(buffer.len() as u64, 256).unwrap();
    mem.write(pbuf, buffer).unwrap();
    let args = Args::default().ptr(pout).ptr(pin).ptr(pbuf).0;
    if let Err(e) = k.run(&args, [1, 1, 1], [64, 1, 1]) {
        return Some(Err(e.to_string()));
    }
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    Some(Ok(BufferRun {
        out: std::array::from_fn(|k| std::array::from_fn(|t| out[k * 64 + t])),
        after: k.gpu.memory().read_vec(pbuf, buffer.len() as u64).unwrap(),
    }))
}

/// Runs a buffer test for every target and wave size in `runs` and checks the whole run with
/// `check(gfx, lanes per wave, outputs, buffer before, buffer after)`.
fn check_buffer(
    runs: &[(&str, bool)],
    v: Vsharp,
    body: impl Fn(&str) -> Vec<String>,
    inputs: [[u32; 64]; 3],
    buffer: &[u8],
    check: impl Fn(&str, usize, &[[u32; 64]; 4], &[u8]) -> Result<(), String>,
) {
    for &(gfx, wave64) in runs {
        let Some(r) = run_buffer(gfx, wave64, v, &body(gfx), &inputs, buffer) else {
            common::skip("llc not available");
            return;
        };
        let r = r.unwrap_or_else(|e| panic!("{gfx} wave64={wave64}: {e}"));
        let lanes = if wave64 { 64 } else { 32 };
        if let Err(e) = check(gfx, lanes, &r.out, &r.after) {
            panic!("{gfx} wave{lanes}: {e}");
        }
    }
}

/// Seeded random bytes.
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// Bytes `p..p + n` (n <= 4) of `b` as a little-endian number.
fn le(b: &[u8], p: u64, n: u64) -> u32 {
    (0..n).fold(0, |v, k| v | u32::from(b[(p + k) as usize]) << (8 * k))
}

/// Host model of an untyped load of `bytes` at byte `p` of a buffer whose first `limit` bytes
/// are in range: each dword piece (the whole access below a dword) is read only if it ends
/// within `limit`, else it reads zero.
fn model_load(b: &[u8], limit: u64, p: u64, bytes: u64) -> [u32; 4] {
    let piece = bytes.min(4);
    std::array::from_fn(|k| {
        let at = p + 4 * k as u64;
        if (k as u64) < bytes.div_ceil(4) && at + piece <= limit {
            le(b, at, piece)
        } else {
            0
        }
    })
}

fn sext(v: u32, bits: u32) -> u32 {
    ((v << (32 - bits)) as i32 >> (32 - bits)) as u32
}

#[test]
fn buffer_raw_loads_check_each_dword_against_num_records() {
    // OOB_SELECT 3 with stride 0: a byte is in range if soffset + offset + its piece's end is at
    // most NUM_RECORDS (an odd 301 here), each dword of a wide load on its own.
    let buffer = random_bytes(70, 1024);
    let mut rng = StdRng::seed_from_u64(71);
    let mut inputs = random(72);
    inputs[0] = std::array::from_fn(|t| {
        if t % 4 == 0 {
            rng.random_range(0..64)
        } else {
            rng.random_range(250..320)
        }
    });
    // (body after the V#, per-lane expectation from (offset v1, v2, v3))
    type Want = fn(&dyn Fn(u64) -> [u32; 4], u32, u32) -> [u32; 4];
    let cases: [(&[&str], Want); 5] = [
        (
            &["buffer_load_b128 v[4:7], v1, s[16:19], s21 offen offset:8"],
            |m, _, _| m(16),
        ),
        (
            &[
                "buffer_load_b96 v[4:6], v1, s[16:19], s21 offen offset:8",
                "buffer_load_u8 v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, _, _| {
                let w = m(12);
                [w[0], w[1], w[2], m(1)[0]]
            },
        ),
        (
            &[
                "buffer_load_b64 v[4:5], v1, s[16:19], s21 offen offset:8",
                "buffer_load_i16 v6, v1, s[16:19], s21 offen offset:8",
                "buffer_load_i8 v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, _, _| {
                let w = m(8);
                [w[0], w[1], sext(m(2)[0], 16), sext(m(1)[0], 8)]
            },
        ),
        (
            &[
                "buffer_load_b32 v4, v1, s[16:19], s21 offen offset:8",
                "buffer_load_u16 v5, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v6, v2",
                "buffer_load_d16_b16 v6, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v7, v3",
                "buffer_load_d16_hi_i8 v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, a, b| {
                [
                    m(4)[0],
                    m(2)[0],
                    a & 0xffff_0000 | m(2)[0],
                    b & 0xffff | sext(m(1)[0], 8) << 16,
                ]
            },
        ),
        (
            &[
                "v_mov_b32 v4, v2",
                "buffer_load_d16_u8 v4, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v5, v3",
                "buffer_load_d16_hi_b16 v5, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v6, v2",
                "buffer_load_d16_i8 v6, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v7, v3",
                "buffer_load_d16_hi_u8 v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, a, b| {
                [
                    a & 0xffff_0000 | m(1)[0],
                    b & 0xffff | m(2)[0] << 16,
                    a & 0xffff_0000 | sext(m(1)[0], 8) & 0xffff,
                    b & 0xffff | m(1)[0] << 16,
                ]
            },
        ),
    ];
    for soffset in [4, 400] {
        let v = Vsharp::raw(301, soffset);
        for (body, want) in cases {
            check_buffer(
                &RUNS,
                v,
                |gfx| {
                    let mut l = lines(body);
                    l.extend(wait_vmem(gfx));
                    l
                },
                inputs,
                &buffer,
                |_, _, out, _| {
                    for t in 0..64 {
                        let p = u64::from(soffset) + 8 + u64::from(inputs[0][t]);
                        let m = |bytes| model_load(&buffer, 301, p, bytes);
                        let w = want(&m, inputs[1][t], inputs[2][t]);
                        for (k, &w) in w.iter().enumerate() {
                            eq(
                                &format!("{body:?} soffset {soffset} t {t} v{}", 4 + k),
                                out[k][t],
                                w,
                            )?;
                        }
                    }
                    Ok(())
                },
            );
        }
    }
}

#[test]
fn buffer_raw_stores_write_only_the_dwords_in_range() {
    let buffer = random_bytes(73, 1100);
    let data = random(74);
    // (store, bytes per lane, bytes from the data registers' first byte)
    let cases: [(&str, u64, u64); 8] = [
        (
            "buffer_store_b128 v[4:7], v21, s[16:19], s21 offen offset:4",
            16,
            0,
        ),
        (
            "buffer_store_b96 v[4:6], v21, s[16:19], s21 offen offset:4",
            12,
            0,
        ),
        (
            "buffer_store_b64 v[4:5], v21, s[16:19], s21 offen offset:4",
            8,
            0,
        ),
        (
            "buffer_store_b32 v4, v21, s[16:19], s21 offen offset:4",
            4,
            0,
        ),
        (
            "buffer_store_b16 v4, v21, s[16:19], s21 offen offset:4",
            2,
            0,
        ),
        (
            "buffer_store_b8 v4, v21, s[16:19], s21 offen offset:4",
            1,
            0,
        ),
        (
            "buffer_store_d16_hi_b16 v4, v21, s[16:19], s21 offen offset:4",
            2,
            2,
        ),
        (
            "buffer_store_d16_hi_b8 v4, v21, s[16:19], s21 offen offset:4",
            1,
            2,
        ),
    ];
    for (store, bytes, from) in cases {
        // Lane t stores at t * 16; NUM_RECORDS ends inside lane 50's access.
        let soffset = 8u64;
        let limit = 16 * 50 + 6 + soffset + 4;
        let v = Vsharp::raw(limit as u32, soffset as u32);
        check_buffer(
            &RUNS,
            v,
            |_| {
                lines(&[
                    "v_lshlrev_b32 v21, 4, v0",
                    "v_mov_b32 v4, v1",
                    "v_mov_b32 v5, v2",
                    "v_mov_b32 v6, v3",
                    "v_xor_b32 v7, v1, v2",
                    store,
                ])
            },
            data,
            &buffer,
            |_, _, _, after| {
                let mut want = buffer.clone();
                let lanes = data[0].iter().zip(&data[1]).zip(&data[2]);
                for (t, ((&a, &b), &c)) in lanes.enumerate() {
                    let regs = [a, b, c, a ^ b];
                    let src: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
                    let p = soffset + 4 + 16 * t as u64;
                    let piece = bytes.min(4);
                    for k in 0..bytes.div_ceil(4) {
                        if p + 4 * k + piece <= limit {
                            for j in 0..piece {
                                want[(p + 4 * k + j) as usize] = src[(from + 4 * k + j) as usize];
                            }
                        }
                    }
                }
                for (at, (g, w)) in after.iter().zip(&want).enumerate() {
                    eq(&format!("{store}: byte {at}"), u32::from(*g), u32::from(*w))?;
                }
                Ok(())
            },
        );
    }
}

#[test]
fn buffer_atomics_return_the_old_value_and_are_dropped_out_of_range_as_a_whole() {
    // Lane t works on the 8 bytes at t * 8; NUM_RECORDS (40 * 8 + 4) keeps lane 40's first
    // dword in range, so its 32-bit atomics run and its 64-bit ones are dropped.
    let limit = 40 * 8 + 4;
    let mut buffer = random_bytes(75, 512);
    let mut rng = StdRng::seed_from_u64(76);
    let mut inputs = random(77);
    for t in 0..64 {
        // Small values for inc/dec wrap points; equal compare values on even lanes.
        if t % 3 == 0 {
            buffer[8 * t..8 * t + 4].copy_from_slice(&rng.random_range(0..8u32).to_le_bytes());
            inputs[1][t] = rng.random_range(0..8);
        }
        if t % 2 == 0 {
            inputs[0][t] = le(&buffer, 8 * t as u64, 4);
            buffer[8 * t + 4..8 * t + 8].copy_from_slice(&inputs[2][t].to_le_bytes());
        }
    }
    let floats: [[u32; 64]; 3] = {
        let mut rng = StdRng::seed_from_u64(78);
        std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-1e3f32..1e3).to_bits()))
    };
    let mut float_buffer = buffer.clone();
    for t in 0..64 {
        float_buffer[8 * t..8 * t + 4].copy_from_slice(&floats[0][t].to_le_bytes());
    }
    let ops32 = [
        ("add_u32", "add"),
        ("sub_u32", "sub"),
        ("min_i32", "min_i"),
        ("max_i32", "max_i"),
        ("min_u32", "min_u"),
        ("max_u32", "max_u"),
        ("and_b32", "and"),
        ("or_b32", "or"),
        ("xor_b32", "xor"),
        ("swap_b32", "swap"),
        ("cmpswap_b32", "cmpswap"),
        ("inc_u32", "inc"),
        ("dec_u32", "dec"),
        ("add_f32", "add_f32"),
    ];
    let ops64 = [
        ("add_u64", "add"),
        ("sub_u64", "sub"),
        ("min_i64", "min_i"),
        ("max_u64", "max_u"),
        ("and_b64", "and"),
        ("or_b64", "or"),
        ("xor_b64", "xor"),
        ("swap_b64", "swap"),
        ("cmpswap_b64", "cmpswap"),
        ("inc_u64", "inc"),
        ("dec_u64", "dec"),
    ];
    let all = ops32
        .iter()
        .map(|o| (o, false))
        .chain(ops64.iter().map(|o| (o, true)));
    for ((name, op), wide) in all {
        let float = *op == "add_f32";
        let (buf, ins) = if float {
            (&float_buffer, floats)
        } else {
            (&buffer, inputs)
        };
        for ret in [true, false] {
            // Data: 32-bit v4 (cmpswap: v4 new, v5 compare); 64-bit v[4:5] (cmpswap: v[4:5]
            // new, v[6:7] compare).
            let data = match (*op == "cmpswap", wide) {
                (false, false) => "v4",
                (true, false) | (false, true) => "v[4:5]",
                (true, true) => "v[4:7]",
            };
            let body = |gfx: &str| {
                let mut l = lines(&["v_lshlrev_b32 v21, 3, v0"]);
                l.extend(if wide {
                    lines(&[
                        "v_mov_b32 v4, v2",
                        "v_mov_b32 v5, v3",
                        "v_mov_b32 v6, v1",
                        "v_mov_b32 v7, v3",
                    ])
                } else if *op == "cmpswap" {
                    lines(&["v_mov_b32 v4, v2", "v_mov_b32 v5, v1"])
                } else {
                    lines(&["v_mov_b32 v4, v2"])
                });
                let r = if ret { atomic_return(gfx) } else { "" };
                l.push(format!(
                    "buffer_atomic_{name} {data}, v21, s[16:19], s21 offen{r}"
                ));
                l.extend(wait_vmem(gfx));
                l
            };
            let v = Vsharp::raw(limit, 0);
            check_buffer(&RUNS, v, body, ins, buf, |_, _, out, after| {
                for t in 0..64 {
                    let p = 8 * t as u64;
                    let n = if wide { 8 } else { 4 };
                    let in_range = p + n <= u64::from(limit);
                    let old = u64::from(le(buf, p, 4)) | u64::from(le(buf, p + 4, 4)) << 32;
                    let old = if wide { old } else { old & 0xffff_ffff };
                    let (x, c) = match (wide, *op == "cmpswap") {
                        (true, _) => (
                            u64::from(ins[1][t]) | u64::from(ins[2][t]) << 32,
                            u64::from(ins[0][t]) | u64::from(ins[2][t]) << 32,
                        ),
                        (false, true) => (u64::from(ins[1][t]), u64::from(ins[0][t])),
                        (false, false) => (u64::from(ins[1][t]), 0),
                    };
                    let new = if in_range {
                        common::atomic_model::new_value(op, wide, old, x, c)
                    } else {
                        old
                    };
                    let what = format!("buffer_atomic_{name} return={ret} t {t}");
                    let got = u64::from(le(after, p, 4)) | u64::from(le(after, p + 4, 4)) << 32;
                    let keep = le(buf, p + 4, 4);
                    eq(&format!("{what}: memory lo"), got as u32, new as u32)?;
                    eq(
                        &format!("{what}: memory hi"),
                        (got >> 32) as u32,
                        if wide { (new >> 32) as u32 } else { keep },
                    )?;
                    // The registers: the pre-op value (zero out of range) replaces the first
                    // dword(s) of the data when the atomic returns; the rest keep the data.
                    let returned = if in_range { old } else { 0 };
                    let mut want = if wide {
                        [ins[1][t], ins[2][t], ins[0][t], ins[2][t]]
                    } else if *op == "cmpswap" {
                        [ins[1][t], ins[0][t], 0, 0]
                    } else {
                        [ins[1][t], 0, 0, 0]
                    };
                    if ret {
                        want[0] = returned as u32;
                        if wide {
                            want[1] = (returned >> 32) as u32;
                        }
                    }
                    for k in 0..4 {
                        eq(&format!("{what}: v{}", 4 + k), out[k][t], want[k])?;
                    }
                }
                Ok(())
            });
        }
    }
}

/// Host model of one dword piece's range check, as the RDNA3/RDNA4 guides' OOB_SELECT table
/// states it: `index` counts records (lane id included), `offset` is the in-record byte offset.
fn model_out_of_range(v: Vsharp, stride: u64, index: u64, offset: u64, payload: u64) -> bool {
    let nr = u64::from(v.num_records);
    let structured = index >= nr || offset + payload > stride;
    match v.word3 >> 28 & 3 {
        0 => structured,
        1 => index >= nr,
        2 => nr == 0,
        _ if v.swizzle != 0 && stride != 0 => structured,
        _ => offset + payload > nr.saturating_sub(u64::from(v.soffset)),
    }
}

#[test]
fn buffer_structured_loads_check_the_index_and_offset_as_oob_select_says() {
    let buffer = random_bytes(80, 1024);
    let mut rng = StdRng::seed_from_u64(81);
    let mut inputs = random(82);
    inputs[0] = std::array::from_fn(|_| rng.random_range(0..24));
    inputs[1] = std::array::from_fn(|_| rng.random_range(0..32));
    let body = |gfx: &str| {
        let mut l = lines(&[
            "v_mov_b32 v8, v1",
            "v_mov_b32 v9, v2",
            "buffer_load_b64 v[4:5], v[8:9], s[16:19], s21 idxen offen",
            "buffer_load_b32 v6, v8, s[16:19], s21 idxen offset:4",
            "buffer_load_u16 v7, v[8:9], s[16:19], s21 idxen offen offset:2",
        ]);
        l.extend(wait_vmem(gfx));
        l
    };
    for (oob, num_records) in [(0, 20), (1, 20), (2, 20), (2, 0), (3, 100)] {
        let v = Vsharp {
            stride: 24,
            swizzle: 0,
            num_records,
            word3: word3(oob),
            soffset: 8,
        };
        check_buffer(&RUNS, v, body, inputs, &buffer, |_, _, out, _| {
            for t in 0..64 {
                let (index, voff) = (u64::from(inputs[0][t]), u64::from(inputs[1][t]));
                let load = |offset: u64, bytes: u64| -> [u32; 4] {
                    let piece = bytes.min(4);
                    std::array::from_fn(|k| {
                        let at = offset + 4 * k as u64;
                        if (k as u64) < bytes.div_ceil(4)
                            && !model_out_of_range(v, 24, index, at, piece)
                        {
                            le(&buffer, 8 + 24 * index + at, piece)
                        } else {
                            0
                        }
                    })
                };
                let b64 = load(voff, 8);
                let want = [b64[0], b64[1], load(4, 4)[0], load(voff + 2, 2)[0]];
                for k in 0..4 {
                    eq(
                        &format!(
                            "OOB_SELECT {oob} NUM_RECORDS {num_records} t {t} v{}",
                            4 + k
                        ),
                        out[k][t],
                        want[k],
                    )?;
                }
            }
            Ok(())
        });
    }
}

/// Host model of a swizzled buffer's byte offset from the base (RDNA guides, "Swizzled Buffer
/// Addressing").
fn model_swizzle(index: u64, offset: u64, stride: u64, element: u64, index_stride: u64) -> u64 {
    (index / index_stride * stride + offset / element * element) * index_stride
        + index % index_stride * element
        + offset % element
}

#[test]
fn buffer_swizzled_loads_add_the_lane_id_and_interleave_records() {
    let buffer = random_bytes(83, 2048);
    let mut rng = StdRng::seed_from_u64(84);
    let mut inputs = random(85);
    inputs[0] = std::array::from_fn(|_| rng.random_range(0..16));
    inputs[1] = std::array::from_fn(|_| 4 * rng.random_range(0..4));
    // What each output loads: (bytes of the load, instruction offset, dword of the load, VGPR
    // index used, VGPR offset used).
    type Load = (u64, u64, u64, bool, bool);
    // (SWIZZLE_ENABLE, element bytes, INDEX_STRIDE field, body, loads)
    type Case = (u32, u64, u32, &'static [&'static str], [Load; 4]);
    let cases: [Case; 2] = [
        (
            1,
            4,
            1,
            &[
                "buffer_load_b32 v4, v[8:9], s[16:19], s21 idxen offen",
                "buffer_load_b32 v5, v9, s[16:19], s21 offen offset:4",
                "buffer_load_b32 v6, v8, s[16:19], s21 idxen offset:12",
                "buffer_load_u16 v7, v[8:9], s[16:19], s21 idxen offen offset:2",
            ],
            [
                (4, 0, 0, true, true),
                (4, 4, 0, false, true),
                (4, 12, 0, true, false),
                (2, 2, 0, true, true),
            ],
        ),
        (
            3,
            16,
            0,
            &[
                "buffer_load_b64 v[4:5], v[8:9], s[16:19], s21 idxen offen",
                "buffer_load_b32 v6, v9, s[16:19], s21 offen offset:8",
                "buffer_load_b32 v7, v8, s[16:19], s21 idxen offset:12",
            ],
            [
                (8, 0, 0, true, true),
                (8, 0, 1, true, true),
                (4, 8, 0, false, true),
                (4, 12, 0, true, false),
            ],
        ),
    ];
    for (swizzle, element, index_stride, body, loads) in cases {
        for soffset in [0, 32] {
            let v = Vsharp {
                stride: 16,
                swizzle,
                num_records: 48,
                word3: word3(3) | 1 << 23 | index_stride << 21,
                soffset,
            };
            let body = |gfx: &str| {
                let mut l = lines(&["v_mov_b32 v8, v1", "v_mov_b32 v9, v2"]);
                l.extend(lines(body));
                l.extend(wait_vmem(gfx));
                l
            };
            check_buffer(&RUNS, v, body, inputs, &buffer, |gfx, lanes, out, _| {
                for t in 0..64 {
                    let lane = (t % lanes) as u64;
                    for (k, &(bytes, imm, dword, indexed, offen)) in loads.iter().enumerate() {
                        let vidx = if indexed { u64::from(inputs[0][t]) } else { 0 };
                        let voff = if offen { u64::from(inputs[1][t]) } else { 0 };
                        let (index, offset) = (vidx + lane, voff + imm);
                        let piece = bytes.min(4);
                        let at = offset + 4 * dword;
                        let want = if model_out_of_range(v, 16, index, at, piece) {
                            0
                        } else {
                            // gfx11 adds soffset to the base, gfx12 swizzles it with the offset.
                            let (outside, inside) = if gfx12(gfx) {
                                (0, u64::from(soffset))
                            } else {
                                (u64::from(soffset), 0)
                            };
                            let first = model_swizzle(
                                index,
                                offset + inside,
                                16,
                                element,
                                8 << index_stride,
                            );
                            le(&buffer, outside + first + 4 * dword, piece)
                        };
                        eq(
                            &format!("swizzle {swizzle} soffset {soffset} t {t} v{}", 4 + k),
                            out[k][t],
                            want,
                        )?;
                    }
                }
                Ok(())
            });
        }
    }
}

#[test]
fn gfx12_buffer_strides_are_scaled_by_stride_scale() {
    // STRIDE 6 with STRIDE_SCALE 1 (x4): records of 24 bytes, checked as OOB_SELECT 0.
    let buffer = random_bytes(86, 1024);
    let mut rng = StdRng::seed_from_u64(87);
    let mut inputs = random(88);
    inputs[0] = std::array::from_fn(|_| rng.random_range(0..24));
    inputs[1] = std::array::from_fn(|_| rng.random_range(0..28));
    let v = Vsharp {
        stride: 6,
        swizzle: 0,
        num_records: 20,
        word3: word3(0) | 1 << 18,
        soffset: 4,
    };
    let runs = [("gfx1201", false), ("gfx1201", true)];
    let body = |gfx: &str| {
        let mut l = lines(&[
            "v_mov_b32 v8, v1",
            "v_mov_b32 v9, v2",
            "buffer_load_b32 v4, v[8:9], s[16:19], s21 idxen offen",
        ]);
        l.extend(wait_vmem(gfx));
        l
    };
    check_buffer(&runs, v, body, inputs, &buffer, |_, _, out, _| {
        for t in 0..64 {
            let (index, offset) = (u64::from(inputs[0][t]), u64::from(inputs[1][t]));
            let want = if model_out_of_range(v, 24, index, offset, 4) {
                0
            } else {
                le(&buffer, 4 + 24 * index + offset, 4)
            };
            eq(
                &format!("t {t} index {index} offset {offset}"),
                out[0][t],
                want,
            )?;
        }
        Ok(())
    });
}

#[test]
fn buffer_accesses_through_an_unbound_resource_read_zero_and_write_nothing() {
    // FORMAT 0 without ADD_TID_ENABLE is the guides' unbound resource, whatever NUM_RECORDS says.
    let buffer = random_bytes(89, 512);
    let inputs = random(90);
    let v = Vsharp {
        word3: 3 << 28,
        ..Vsharp::raw(512, 0)
    };
    let body = |gfx: &str| {
        let mut l = lines(&[
            "buffer_load_b64 v[4:5], v20, s[16:19], s21 offen",
            "v_mov_b32 v6, v1",
        ]);
        l.push(format!(
            "buffer_atomic_add_u32 v6, v20, s[16:19], s21 offen offset:4{}",
            atomic_return(gfx)
        ));
        l.push("buffer_store_b32 v2, v20, s[16:19], s21 offen offset:256".into());
        l.push("buffer_load_u8 v7, off, s[16:19], s21 offset:3".into());
        l.extend(wait_vmem(gfx));
        l
    };
    check_buffer(&RUNS, v, body, inputs, &buffer, |_, _, out, after| {
        for (k, reg) in out.iter().enumerate() {
            for (t, &got) in reg.iter().enumerate() {
                eq(&format!("t {t} v{}", 4 + k), got, 0)?;
            }
        }
        if after != buffer {
            return Err("an unbound resource's store or atomic wrote memory".into());
        }
        Ok(())
    });
}

#[test]
fn unmodelled_buffer_descriptor_settings_stop_the_wave_with_a_reason() {
    let buffer = random_bytes(91, 256);
    let inputs = random(92);
    let load = "buffer_load_b32 v4, v20, s[16:19], s21 offen";
    let cases: [(Vsharp, &str, &str); 4] = [
        (
            Vsharp {
                swizzle: 2,
                stride: 16,
                ..Vsharp::raw(256, 0)
            },
            load,
            "reserved SWIZZLE_ENABLE",
        ),
        (
            Vsharp {
                word3: word3(3) | 2 << 30,
                ..Vsharp::raw(256, 0)
            },
            load,
            "TYPE",
        ),
        (
            Vsharp {
                swizzle: 1,
                stride: 16,
                ..Vsharp::raw(256, 0)
            },
            "buffer_load_b128 v[4:7], v20, s[16:19], s21 offen",
            "wider than the descriptor's element size",
        ),
        (
            Vsharp::raw(256, 0),
            "buffer_load_format_x v4, v20, s[16:19], s21 offen",
            "formatted buffer accesses",
        ),
    ];
    for (v, line, reason) in cases {
        for &(gfx, wave64) in &RUNS {
            let Some(r) = run_buffer(gfx, wave64, v, &lines(&[line]), &inputs, &buffer) else {
                common::skip("llc not available");
                return;
            };
            match r {
                Ok(_) => panic!("{gfx} wave64={wave64} {line}: ran, want a fault ({reason})"),
                Err(e) => assert!(e.contains(reason), "{gfx} {line}: {e}"),
            }
        }
    }
}

/// `v_mov_b16` (VOP1 and VOP3) and `v_swap_b16` move one 16-bit half and keep the other, on
/// gfx1100 and on gfx1201 (where only LLVM's true16 tables hold them).
#[test]
fn sixteen_bit_moves_and_swaps_touch_one_half() {
    let body = |_: &str, _| {
        lines(&[
            "v_mov_b32 v4, v3",
            "v_mov_b16_e32 v4.h, v1.l",
            "v_mov_b32 v5, v3",
            "v_mov_b16_e64 v5.l, v2.h",
            "v_mov_b32 v6, v1",
            "v_mov_b32 v7, v2",
            "v_swap_b16 v6.h, v7.l",
            "v_mov_b16_e32 v3.l, 0x1234",
            "v_mov_b16_e32 v5.h, v3.l",
        ])
    };
    check(&RUNS, body, random(16), 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        eq("v_mov_b16 .h <- .l", o[0], (c & 0xffff) | a << 16)?;
        eq(
            "v_mov_b16_e64 .l <- .h, then .h <- 0x1234",
            o[1],
            b >> 16 | 0x1234 << 16,
        )?;
        eq("v_swap_b16 first", o[2], (a & 0xffff) | b << 16)?;
        eq("v_swap_b16 second", o[3], (b & 0xffff_0000) | a >> 16)
    });
}

/// The 16-bit FMAs of the VOP2 encoding read the 16-bit half their register field names in every
/// operand slot: `v_fmac_f16`'s accumulator is the destination's half, `v_fmamk_f16`'s addend
/// (the vsrc1 field) keeps its half when it moves behind the constant.
#[test]
fn sixteen_bit_vop2_fmas_read_the_named_halves() {
    let body = |_: &str, _| {
        lines(&[
            "v_mov_b32 v4, v3",
            "v_fmac_f16_e32 v4.h, v1.l, v2.h",
            "v_mov_b32 v5, v3",
            "v_fmamk_f16 v5.l, v1.h, 0x4000, v2.h",
            "v_mov_b32 v6, v3",
            "v_fmaak_f16 v6.h, v1.l, v2.l, 0x3c00",
        ])
    };
    check(&RUNS, body, halves(17), 0, |_, lane, i, o| {
        let (a, b, c) = (i[0][lane.t], i[1][lane.t], i[2][lane.t]);
        let fma = |x: u32, y: u32, z: u32| {
            u32::from(
                f16::from_f64(f64::from(h(x)).mul_add(f64::from(h(y)), f64::from(h(z)))).to_bits(),
            )
        };
        eq(
            "v_fmac_f16 .h",
            o[0],
            (c & 0xffff) | fma(a, b >> 16, c >> 16) << 16,
        )?;
        eq(
            "v_fmamk_f16",
            o[1],
            (c & 0xffff_0000) | fma(a >> 16, 0x4000, b >> 16),
        )?;
        eq("v_fmaak_f16", o[2], (c & 0xffff) | fma(a, b, 0x3c00) << 16)
    });
}

/// The all-zero word is RDNA's `v_illegal`: it decodes and prints as llvm-objdump prints it
/// (a lone zero word, as padding between functions holds), and running into it stops the wave
/// with an illegal-instruction fault at its address.
#[test]
fn the_all_zero_word_is_the_illegal_instruction() {
    for (gfx, wave64) in RUNS {
        let target = Target::ALL.into_iter().find(|t| t.name() == gfx).unwrap();
        let mattr: &[&str] = if wave64 { &["+wavefrontsize64"] } else { &[] };
        let (compared, mismatches) = common::compare_words(gfx, mattr, &[vec![0]], |w| {
            let wave = if wave64 {
                WaveSize::Wave64
            } else {
                WaveSize::Wave32
            };
            rdna::decode(target, wave, w)
                .map(|i| (usize::from(i.len), rdna::disassemble(target, &i)))
                .map_err(|e| e.to_string())
        });
        assert_eq!(compared, 1);
        assert!(mismatches.is_empty(), "{mismatches:?}");
        let body = ["v_mov_b32 v1, 1", ".long 0", "s_endpgm"];
        let Some(mut k) = AsmKernel::with_features(gfx, wave64, &features(gfx), &body) else {
            return;
        };
        match k.run(&Args::default().0, [1, 1, 1], [64, 1, 1]) {
            Err(EmuError::Execution {
                fault, instruction, ..
            }) => {
                assert_eq!(fault, Fault::IllegalInstruction, "{gfx}");
                assert_eq!(instruction, "v_illegal", "{gfx}");
            }
            other => panic!("{gfx} wave64={wave64}: {other:?}"),
        }
    }
}

/// RDNA's global and flat stores into the dispatch's kernarg segment are faults naming it; loads
/// from it are not.
#[test]
fn stores_into_the_kernarg_segment_are_faults() {
    for (gfx, wave64) in RUNS {
        let wait = if gfx12(gfx) {
            "s_wait_loadcnt 0x0"
        } else {
            "s_waitcnt vmcnt(0)"
        };
        let load = [
            "v_mov_b32 v2, s0",
            "v_mov_b32 v3, s1",
            "global_load_b32 v4, v[2:3], off",
            wait,
        ];
        let Some(mut k) = AsmKernel::with_features(gfx, wave64, &features(gfx), &load) else {
            return;
        };
        k.run(&Args::default().0, [1, 1, 1], [64, 1, 1])
            .unwrap_or_else(|e| panic!("{gfx}: reading the kernarg segment: {e}"));
        for store in [
            "global_store_b32 v[2:3], v1, off",
            "flat_store_b32 v[2:3], v1",
        ] {
            let body = [load[0], load[1], "v_mov_b32 v1, 7", store];
            let mut k = AsmKernel::with_features(gfx, wave64, &features(gfx), &body).unwrap();
            match k.run(&Args::default().0, [1, 1, 1], [64, 1, 1]) {
                Err(EmuError::Execution {
                    fault:
                        Fault::Protected {
                            write: true, what, ..
                        },
                    ..
                }) => assert!(what.contains("kernarg"), "{gfx} {store}: {what}"),
                other => panic!("{gfx} wave64={wave64} {store}: {other:?}"),
            }
        }
    }
}
