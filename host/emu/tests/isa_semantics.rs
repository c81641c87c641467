//! Per-family instruction semantics on hand-written code: each test assembles a few instructions
//! (with `llc`), runs one wave on seeded random inputs and compares every lane with a host reference.
//!
//! Harness layout: kernarg = {out, in}; lane `l` gets inputs `in[k*64 + l]` in v1, v2, v3; the body
//! leaves results in v4..v7, which are stored to `out[k*64 + l]`. v20 holds the lane's byte offset.

mod common;

use common::transpose::{TRANSPOSE_LOADS, transposed_wave};
use common::{Args, AsmKernel, bytes_of, from_bytes};
use half::f16;
use iron_emu::{Checks, EmuError, Fault, Schedule, WaveStatus};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GFX: [&str; 3] = ["gfx90a", "gfx942", "gfx950"];

/// Runs `body` on one wave of `gfx` with three input registers; returns v4..v7 of every lane.
fn run_on(
    gfx: &str,
    body: &[&str],
    inputs: [&[u32; 64]; 3],
    exec_lanes: u32,
) -> Option<[[u32; 64]; 4]> {
    let mut lines = vec![
        "s_load_dwordx4 s[8:11], s[0:1], 0x0",
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v20, 2, v0",
        "global_load_dword v1, v20, s[10:11]",
        "global_load_dword v2, v20, s[10:11] offset:256",
        "global_load_dword v3, v20, s[10:11] offset:512",
        "v_mov_b32 v4, 0",
        "v_mov_b32 v5, 0",
        "v_mov_b32 v6, 0",
        "v_mov_b32 v7, 0",
        "s_waitcnt vmcnt(0)",
    ];
    lines.extend_from_slice(body);
    lines.extend_from_slice(&[
        "s_mov_b64 exec, -1",
        "global_store_dword v20, v4, s[8:9]",
        "global_store_dword v20, v5, s[8:9] offset:256",
        "global_store_dword v20, v6, s[8:9] offset:512",
        "global_store_dword v20, v7, s[8:9] offset:768",
    ]);
    let mut k = AsmKernel::new(gfx, &lines)?;
    let mut input = Vec::new();
    for a in inputs {
        input.extend_from_slice(a);
    }
    let pin = k.gpu.memory_mut().alloc(768, 256).unwrap();
    k.gpu.memory_mut().write(pin, &bytes_of(&input)).unwrap();
    let pout = k.gpu.memory_mut().alloc(1024, 256).unwrap();
    k.gpu.memory_mut().write(pout, &[0xee; 1024]).unwrap();
    k.run(
        &Args::default().ptr(pout).ptr(pin).0,
        [1, 1, 1],
        [exec_lanes, 1, 1],
    )
    .unwrap();
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    let mut r = [[0u32; 64]; 4];
    for k in 0..4 {
        r[k].copy_from_slice(&out[k * 64..k * 64 + 64]);
    }
    Some(r)
}

fn random(seed: u64) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    std::array::from_fn(|_| std::array::from_fn(|_| rng.random()))
}

fn floats(seed: u64, lo: f32, hi: f32) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v: [[u32; 64]; 3] =
        std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(lo..hi).to_bits()));
    // Special values in the first lanes.
    let specials = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0,
        -1.0,
        f32::MIN_POSITIVE / 4.0,
    ];
    for (k, s) in specials.iter().enumerate() {
        v[0][k] = s.to_bits();
        v[1][(k + 3) % 8] = s.to_bits();
    }
    v
}

/// Runs on every GFX9 target and checks each lane with `check(lane, inputs, outputs)`.
fn check_all(
    body: &[&str],
    inputs: [[u32; 64]; 3],
    check: impl Fn(usize, [u32; 3], [u32; 4]) -> Result<(), String>,
) {
    for gfx in GFX {
        let Some(out) = run_on(gfx, body, [&inputs[0], &inputs[1], &inputs[2]], 64) else {
            common::skip("llc not available");
            return;
        };
        for l in 0..64 {
            let i = [inputs[0][l], inputs[1][l], inputs[2][l]];
            let o = [out[0][l], out[1][l], out[2][l], out[3][l]];
            if let Err(e) = check(l, i, o) {
                panic!("{gfx} lane {l}: inputs {i:08x?}: {e}");
            }
        }
    }
}

fn same_f32(got: u32, want: f32) -> Result<(), String> {
    let g = f32::from_bits(got);
    if got == want.to_bits() || (g.is_nan() && want.is_nan()) {
        Ok(())
    } else {
        Err(format!(
            "got {g} ({got:#x}), want {want} ({:#x})",
            want.to_bits()
        ))
    }
}

fn eq(got: u32, want: u32) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:#x}, want {want:#x}"))
    }
}

#[test]
fn f32_arithmetic_and_ieee_min_max() {
    let f = |x: u32| f32::from_bits(x);
    check_all(
        &[
            "v_add_f32 v4, v1, v2",
            "v_mul_f32 v5, v1, v2",
            "v_fma_f32 v6, v1, v2, v3",
            "v_max_f32 v7, v1, v2",
        ],
        floats(1, -100.0, 100.0),
        |_, i, o| {
            same_f32(o[0], f(i[0]) + f(i[1]))?;
            same_f32(o[1], f(i[0]) * f(i[1]))?;
            same_f32(o[2], f(i[0]).mul_add(f(i[1]), f(i[2])))?;
            let (a, b) = (f(i[0]), f(i[1]));
            let want = if a.is_nan() {
                b
            } else if b.is_nan() {
                a
            } else if a == 0.0 && b == 0.0 {
                if a.is_sign_negative() { b } else { a }
            } else {
                a.max(b)
            };
            same_f32(o[3], want)
        },
    );
}

#[test]
fn vop3_modifiers_abs_neg_clamp_omod() {
    let f = |x: u32| f32::from_bits(x);
    check_all(
        &[
            "v_add_f32_e64 v4, |v1|, -v2",
            "v_mul_f32_e64 v5, -|v1|, v2 clamp",
            "v_add_f32_e64 v6, v1, v2 mul:2",
            "v_add_f32_e64 v7, v1, v2 clamp div:2",
        ],
        floats(2, -2.0, 2.0),
        |_, i, o| {
            let (a, b) = (f(i[0]), f(i[1]));
            same_f32(o[0], a.abs() + -b)?;
            let clamp = |x: f32| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            same_f32(o[1], clamp(-a.abs() * b))?;
            same_f32(o[2], (a + b) * 2.0)?;
            same_f32(o[3], clamp((a + b) * 0.5))
        },
    );
}

#[test]
fn f32_division_sequence_matches_ieee() {
    // The sequence LLVM emits for an IEEE f32 division.
    let body = [
        "v_div_scale_f32 v8, s[2:3], v2, v2, v1",
        "v_div_scale_f32 v9, vcc, v1, v2, v1",
        "v_rcp_f32 v10, v8",
        "v_fma_f32 v11, -v8, v10, 1.0",
        "v_fma_f32 v10, v11, v10, v10",
        "v_mul_f32 v11, v9, v10",
        "v_fma_f32 v12, -v8, v11, v9",
        "v_fma_f32 v11, v12, v10, v11",
        "v_fma_f32 v8, -v8, v11, v9",
        "v_div_fmas_f32 v8, v8, v10, v11",
        "v_div_fixup_f32 v4, v8, v2, v1",
    ];
    check_all(&body, floats(3, -1e6, 1e6), |_, i, o| {
        let want = f32::from_bits(i[0]) / f32::from_bits(i[1]);
        let g = f32::from_bits(o[0]);
        if g.is_nan() && want.is_nan() || (g.to_bits() as i64 - want.to_bits() as i64).abs() <= 1 {
            Ok(())
        } else {
            Err(format!("{g} vs {want}"))
        }
    });
}

#[test]
fn f64_arithmetic() {
    // Lane l: a = (v2:v1), b = (v2:v3) as doubles.
    let mut rng = StdRng::seed_from_u64(4);
    let mut inputs = [[0u32; 64]; 3];
    let [lo, hi, b_lo] = &mut inputs;
    for ((lo, hi), b_lo) in lo.iter_mut().zip(hi.iter_mut()).zip(b_lo.iter_mut()) {
        let a: f64 = rng.random_range(-1e10..1e10);
        *lo = a.to_bits() as u32;
        *hi = (a.to_bits() >> 32) as u32;
        *b_lo = rng.random();
    }
    let body = [
        "v_mov_b32 v8, v1",
        "v_mov_b32 v9, v2",
        "v_mov_b32 v10, v3",
        "v_mov_b32 v11, v2",
        "v_mul_f64 v[12:13], v[8:9], v[10:11]",
        "v_add_f64 v[14:15], v[8:9], v[10:11]",
        "v_mov_b32 v4, v12",
        "v_mov_b32 v5, v13",
        "v_mov_b32 v6, v14",
        "v_mov_b32 v7, v15",
    ];
    check_all(&body, inputs, |_, i, o| {
        let a = f64::from_bits(u64::from(i[0]) | u64::from(i[1]) << 32);
        let b = f64::from_bits(u64::from(i[2]) | u64::from(i[1]) << 32);
        let mul = f64::from_bits(u64::from(o[0]) | u64::from(o[1]) << 32);
        let add = f64::from_bits(u64::from(o[2]) | u64::from(o[3]) << 32);
        if mul.to_bits() == (a * b).to_bits() && add.to_bits() == (a + b).to_bits() {
            Ok(())
        } else {
            Err(format!("mul {mul} vs {}, add {add} vs {}", a * b, a + b))
        }
    });
}

#[test]
fn half_precision_and_op_sel() {
    let mut rng = StdRng::seed_from_u64(5);
    let h = |rng: &mut StdRng| f16::from_f32(rng.random_range(-20.0f32..20.0)).to_bits() as u32;
    let inputs: [[u32; 64]; 3] =
        std::array::from_fn(|_| std::array::from_fn(|_| h(&mut rng) | h(&mut rng) << 16));
    let body = [
        "v_add_f16 v4, v1, v2",
        "v_mul_f16_e64 v5, v1, v2",
        "v_mov_b32 v6, v3",
        "v_fma_f16 v6, v1, v2, v3 op_sel:[1,1,0,1]",
        "v_pk_add_f16 v7, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]",
    ];
    check_all(&body, inputs, |_, i, o| {
        let lo = |x: u32| f16::from_bits(x as u16).to_f32();
        let hi = |x: u32| f16::from_bits((x >> 16) as u16).to_f32();
        eq(
            o[0],
            u32::from(f16::from_f32(lo(i[0]) + lo(i[1])).to_bits()),
        )?;
        eq(
            o[1],
            u32::from(f16::from_f32(lo(i[0]) * lo(i[1])).to_bits()),
        )?;
        let fma =
            f16::from_f64(f64::from(hi(i[0])).mul_add(f64::from(hi(i[1])), f64::from(lo(i[2]))));
        eq(o[2], i[2] & 0xffff | u32::from(fma.to_bits()) << 16)?;
        let pk_lo = f16::from_f32(hi(i[0]) + lo(i[1]));
        let pk_hi = f16::from_f32(lo(i[0]) + hi(i[1]));
        eq(
            o[3],
            u32::from(pk_lo.to_bits()) | u32::from(pk_hi.to_bits()) << 16,
        )
    });
}

#[test]
fn integer_multiply_and_carry_chain() {
    check_all(
        &[
            "v_mul_hi_u32 v4, v1, v2",
            "v_add_co_u32 v5, vcc, v1, v2",
            "v_addc_co_u32 v6, vcc, v3, 0, vcc",
            "v_mad_u64_u32 v[8:9], s[4:5], v1, v2, v[2:3]",
            "v_xor_b32 v7, v8, v9",
        ],
        random(6),
        |_, i, o| {
            eq(o[0], ((u64::from(i[0]) * u64::from(i[1])) >> 32) as u32)?;
            let (s, c) = i[0].overflowing_add(i[1]);
            eq(o[1], s)?;
            eq(o[2], i[2].wrapping_add(u32::from(c)))?;
            let m = (u128::from(i[0]) * u128::from(i[1])
                + u128::from(u64::from(i[1]) | u64::from(i[2]) << 32)) as u64;
            eq(o[3], m as u32 ^ (m >> 32) as u32)
        },
    );
}

#[test]
fn gpr_index_mode_offsets_selected_vgpr_operands() {
    // v[30:37] = in0 + k; index 3 on src0 reads v33; then index 2 on dst writes v34 (read back
    // through v5 after s_set_gpr_idx_off); s_set_gpr_idx_idx changes only the index.
    let mut body: Vec<String> = (0..8)
        .map(|k| format!("v_add_u32 v{}, {k}, v1", 30 + k))
        .collect();
    body.extend(
        [
            "s_mov_b32 s2, 3",
            "s_set_gpr_idx_on s2, gpr_idx(SRC0)",
            "v_mov_b32 v4, v30",
            "s_set_gpr_idx_mode gpr_idx(DST)",
            "s_set_gpr_idx_idx s2",
            "v_mov_b32 v30, v2",
            "s_set_gpr_idx_off",
            "v_mov_b32 v5, v33",
            "v_mov_b32 v6, v31",
            "s_getreg_b32 s3, hwreg(HW_REG_MODE, 27, 1)",
            "v_mov_b32 v7, s3",
        ]
        .map(String::from),
    );
    let body: Vec<&str> = body.iter().map(String::as_str).collect();
    check_all(&body, random(61), |_, i, o| {
        eq(o[0], i[0].wrapping_add(3))?;
        eq(o[1], i[1])?;
        eq(o[2], i[0].wrapping_add(1))?;
        eq(o[3], 0)
    });
}

#[test]
fn bit_field_and_shift_ops() {
    check_all(
        &[
            "v_bfe_u32 v4, v1, 5, 9",
            "v_bfe_i32 v5, v1, v2, 7",
            "v_alignbit_b32 v6, v1, v2, v3",
            "v_mov_b32 v9, 0x0c050a01",
            "v_perm_b32 v7, v1, v2, v9",
        ],
        random(7),
        |_, i, o| {
            eq(o[0], (i[0] >> 5) & 0x1ff)?;
            let f = (i[0] >> (i[1] & 31)) & 0x7f;
            eq(o[1], ((f << 25) as i32 >> 25) as u32)?;
            eq(
                o[2],
                (((u64::from(i[0]) << 32) | u64::from(i[1])) >> (i[2] & 31)) as u32,
            )?;
            let data = (u64::from(i[0]) << 32) | u64::from(i[1]);
            let sel = |s: u32| -> u32 {
                match s {
                    12 => 0,
                    10 => {
                        if data >> 47 & 1 == 1 {
                            0xff
                        } else {
                            0
                        }
                    }
                    _ => (data >> (8 * s) & 0xff) as u32,
                }
            };
            eq(o[3], sel(1) | sel(10) << 8 | sel(5) << 16 | sel(12) << 24)
        },
    );
}

#[test]
fn compares_write_masks_and_cmpx_writes_exec() {
    check_all(
        &[
            "v_cmp_gt_u32 vcc, v1, v2",
            "v_cndmask_b32 v4, v1, v2, vcc",
            "v_cmp_lt_i32_e64 s[4:5], v1, v3",
            "v_cndmask_b32_e64 v5, 0, 1, s[4:5]",
            "v_cmpx_lt_u32 vcc, v1, v3",
            "v_mov_b32 v6, 7",
            "s_mov_b64 exec, -1",
            "v_mov_b32 v7, vcc_lo",
        ],
        random(8),
        |l, i, o| {
            eq(o[0], if i[0] > i[1] { i[1] } else { i[0] })?;
            eq(o[1], u32::from((i[0] as i32) < (i[2] as i32)))?;
            eq(o[2], if i[0] < i[2] { 7 } else { 0 })?;
            let _ = l;
            Ok(())
        },
    );
}

#[test]
fn dpp_row_shift_with_masks_and_bound_ctrl() {
    for gfx in GFX {
        let input = random(9);
        let body = [
            "v_mov_b32 v4, 0x77",
            "v_mov_b32_dpp v4, v1 row_shr:1 row_mask:0x5 bank_mask:0xf",
            "v_mov_b32 v5, 0x77",
            "v_mov_b32_dpp v5, v1 row_shl:2 row_mask:0xf bank_mask:0xf bound_ctrl:1",
            "v_add_u32_dpp v6, v1, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0x3",
            "v_mov_b32 v7, 0x77",
            "v_mov_b32_dpp v7, v1 row_bcast:15 row_mask:0xa bank_mask:0xf",
        ];
        let Some(o) = run_on(gfx, &body, [&input[0], &input[1], &input[2]], 64) else {
            return;
        };
        let v = &input[0];
        for l in 0..64usize {
            let (row, r) = (l / 16, l % 16);
            let w4 = if row % 2 == 0 && r >= 1 {
                v[l - 1]
            } else {
                0x77
            };
            assert_eq!(o[0][l], w4, "{gfx} row_shr lane {l}");
            let w5 = if r + 2 < 16 { v[l + 2] } else { 0 };
            assert_eq!(o[1][l], w5, "{gfx} row_shl bound_ctrl lane {l}");
            let w6 = if r / 4 < 2 {
                v[(l & !3) | (3 - (l & 3))].wrapping_add(input[1][l])
            } else {
                0
            };
            assert_eq!(o[2][l], w6, "{gfx} quad_perm lane {l}");
            let w7 = if row % 2 == 1 { v[row * 16 - 1] } else { 0x77 };
            assert_eq!(o[3][l], w7, "{gfx} row_bcast15 lane {l}");
        }
    }
}

#[test]
fn sdwa_selects_and_places() {
    check_all(
        &[
            "v_add_u32_sdwa v4, v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:WORD_1",
            "v_mov_b32 v5, v3",
            "v_mov_b32_sdwa v5, v1 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0",
            "v_mov_b32_sdwa v6, sext(v1) dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_3",
        ],
        random(10),
        |_, i, o| {
            eq(o[0], ((i[0] >> 16) & 0xff).wrapping_add(i[1] >> 16))?;
            eq(o[1], i[2] & !0xff00 | (i[0] & 0xff) << 8)?;
            // WORD_1 has no bits above it: sign extension leaves the lower word clear.
            let b = (i[0] >> 24) as u8 as i8 as i32 as u32 & 0xffff;
            eq(o[2], b << 16)
        },
    );
}

#[test]
fn scalar_alu_and_branches() {
    let body = [
        "s_mov_b32 s12, 0",
        "s_mov_b32 s13, 0",
        "s_movk_i32 s14, 0x7fff",
        // loop: s12 += s14 for 10 iterations, counting in s13
        "s_add_u32 s12, s12, s14",
        "s_add_i32 s13, s13, 1",
        "s_cmp_lt_u32 s13, 10",
        "s_cbranch_scc1 0xfffc",
        "s_bfe_u32 s15, s12, 0x50004",
        "s_ff1_i32_b32 s16, s12",
        "s_flbit_i32_b32 s17, s12",
        "v_mov_b32 v4, s12",
        "v_mov_b32 v5, s15",
        "v_mov_b32 v6, s16",
        "v_mov_b32 v7, s17",
    ];
    check_all(&body, random(11), |_, _, o| {
        let s12 = 0x7fffu32 * 10;
        eq(o[0], s12)?;
        eq(o[1], (s12 >> 4) & 0x1f)?;
        eq(o[2], s12.trailing_zeros())?;
        eq(o[3], s12.leading_zeros())
    });
}

#[test]
fn saveexec_masks_divergent_code() {
    check_all(
        &[
            "v_cmp_lt_u32 vcc, v1, v2",
            "s_and_saveexec_b64 s[4:5], vcc",
            "v_mov_b32 v4, 1",
            "s_xor_b64 exec, exec, s[4:5]",
            "v_mov_b32 v4, 2",
            "s_mov_b64 exec, s[4:5]",
            "v_mbcnt_lo_u32_b32 v5, -1, 0",
            "v_mbcnt_hi_u32_b32 v5, -1, v5",
            "v_readfirstlane_b32 s6, v1",
            "v_mov_b32 v6, s6",
        ],
        random(12),
        |l, i, o| {
            eq(o[0], if i[0] < i[1] { 1 } else { 2 })?;
            eq(o[1], l as u32)?;
            let _ = o[2];
            Ok(())
        },
    );
}

#[test]
fn lds_read2_write2_atomics_and_bpermute() {
    let body = [
        "v_lshlrev_b32 v8, 3, v0",
        "ds_write2_b32 v8, v1, v2 offset1:1",
        "s_waitcnt lgkmcnt(0)",
        "v_xor_b32 v9, 8, v8",
        "ds_read2_b32 v[10:11], v9 offset1:1",
        "s_waitcnt lgkmcnt(0)",
        "v_mov_b32 v4, v10",
        "v_mov_b32 v5, v11",
        "v_mov_b32 v12, 0",
        "v_mov_b32 v13, 1",
        "ds_add_rtn_u32 v6, v12, v13 offset:1024",
        "v_lshlrev_b32 v14, 2, v3",
        "ds_bpermute_b32 v7, v14, v1",
        "s_waitcnt lgkmcnt(0)",
    ];
    for gfx in GFX {
        let mut input = random(13);
        for v in input[2].iter_mut() {
            *v %= 64;
        }
        if common::llvm_tool("llc").is_none() {
            return;
        }
        let lines: Vec<&str> = body.to_vec();
        let out = run_with_lds(gfx, &lines, &input, 2048);
        for l in 0..64 {
            let partner = l ^ 1;
            assert_eq!(out[0][l], input[0][partner], "{gfx} read2 lane {l}");
            assert_eq!(out[1][l], input[1][partner], "{gfx} read2 second lane {l}");
            assert_eq!(out[2][l], l as u32, "{gfx} atomic return lane {l}");
            assert_eq!(
                out[3][l], input[0][input[2][l] as usize],
                "{gfx} bpermute lane {l}"
            );
        }
    }
}

/// Like [`run_on`] with `lds` bytes of LDS.
fn run_with_lds(gfx: &str, body: &[&str], inputs: &[[u32; 64]; 3], lds: u32) -> [[u32; 64]; 4] {
    let mut lines = vec![
        "s_load_dwordx4 s[8:11], s[0:1], 0x0",
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v20, 2, v0",
        "global_load_dword v1, v20, s[10:11]",
        "global_load_dword v2, v20, s[10:11] offset:256",
        "global_load_dword v3, v20, s[10:11] offset:512",
        "s_waitcnt vmcnt(0)",
    ];
    lines.extend_from_slice(body);
    lines.extend_from_slice(&[
        "global_store_dword v20, v4, s[8:9]",
        "global_store_dword v20, v5, s[8:9] offset:256",
        "global_store_dword v20, v6, s[8:9] offset:512",
        "global_store_dword v20, v7, s[8:9] offset:768",
    ]);
    let mut k = AsmKernel::new(gfx, &lines).expect("llc");
    k.descriptor.group_segment_fixed_size = lds;
    // The LDS tests start from the LDS the emulator clears for each workgroup (atomics and
    // appends on words nothing wrote), which the initcheck would stop.
    k.gpu.set_checks(Checks {
        init: false,
        ..Checks::ALL
    });
    let input: Vec<u32> = inputs.iter().flatten().copied().collect();
    let pin = k.gpu.memory_mut().alloc(768, 256).unwrap();
    k.gpu.memory_mut().write(pin, &bytes_of(&input)).unwrap();
    let pout = k.gpu.memory_mut().alloc(1024, 256).unwrap();
    k.run(&Args::default().ptr(pout).ptr(pin).0, [1, 1, 1], [64, 1, 1])
        .unwrap();
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    std::array::from_fn(|k| std::array::from_fn(|l| out[k * 64 + l]))
}

#[test]
fn global_atomics_return_old_values_only_with_glc() {
    for gfx in GFX {
        let glc = if gfx == "gfx90a" { "glc" } else { "sc0" };
        let ret = format!("global_atomic_add v4, v21, v1, s[12:13] {glc}");
        let cas = format!("global_atomic_cmpswap v5, v21, v[22:23], s[12:13] offset:4 {glc}");
        let body = [
            "s_load_dwordx2 s[12:13], s[0:1], 0x10",
            "s_waitcnt lgkmcnt(0)",
            "v_mov_b32 v21, 0",
            ret.as_str(),
            "v_mov_b32 v22, v0",
            "v_mov_b32 v23, 0",
            cas.as_str(),
            "global_atomic_add v21, v1, s[12:13] offset:8",
            "s_waitcnt vmcnt(0)",
        ];
        let input = random(14);
        let mut lines = vec![
            "s_load_dwordx4 s[8:11], s[0:1], 0x0",
            "s_waitcnt lgkmcnt(0)",
            "v_lshlrev_b32 v20, 2, v0",
            "global_load_dword v1, v20, s[10:11]",
            "s_waitcnt vmcnt(0)",
        ];
        lines.extend_from_slice(&body);
        lines.extend_from_slice(&[
            "global_store_dword v20, v4, s[8:9]",
            "global_store_dword v20, v5, s[8:9] offset:256",
        ]);
        let Some(mut k) = AsmKernel::new(gfx, &lines) else {
            return;
        };
        let pin = k.gpu.memory_mut().alloc(256, 256).unwrap();
        k.gpu.memory_mut().write(pin, &bytes_of(&input[0])).unwrap();
        let pout = k.gpu.memory_mut().alloc(512, 256).unwrap();
        let pcell = k.gpu.memory_mut().alloc(16, 256).unwrap();
        // The atomics' cell starts at zero, written as a kernel's memory must be before it is read.
        k.gpu.memory_mut().write(pcell, &[0; 16]).unwrap();
        k.run(
            &Args::default().ptr(pout).ptr(pin).ptr(pcell).0,
            [1, 1, 1],
            [64, 1, 1],
        )
        .unwrap();
        let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 512).unwrap());
        let cell: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pcell, 16).unwrap());
        let mut acc = 0u32;
        for l in 0..64 {
            assert_eq!(out[l], acc, "{gfx} lane {l} sees the running sum");
            acc = acc.wrapping_add(input[0][l]);
        }
        assert_eq!(cell[0], acc, "{gfx} sum");
        assert_eq!(cell[2], acc, "{gfx} non-returning add");
        // cmpswap: lane l swaps in l if the cell holds 0; lane 0 succeeds (writes 0), then lane 1
        // swaps 0 -> 1, lane 2 sees 1 (fails), ...
        assert_eq!(out[64], 0, "{gfx} first cmpswap");
        assert_eq!(cell[1], 1, "{gfx} cmpswap result");
    }
}

#[test]
fn faults_name_the_instruction() {
    let Some(mut k) = AsmKernel::new(
        "gfx950",
        &[
            "v_mov_b32 v2, 0",
            "v_mov_b32 v3, 16",
            "global_load_dword v4, v[2:3], off",
        ],
    ) else {
        return;
    };
    let err = k.run(&[0; 16], [1, 1, 1], [64, 1, 1]).unwrap_err();
    match &err {
        EmuError::Execution {
            fault:
                Fault::Memory {
                    address,
                    write: false,
                    ..
                },
            instruction,
            wave: 0,
            ..
        } => {
            assert_eq!(*address, 16 << 32);
            assert!(
                instruction.starts_with("global_load_dword v4, v[2:3], off"),
                "{err}"
            );
        }
        other => panic!("unexpected {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("kernel `asm`") && text.contains("memory fault") && text.contains("pc 0x"),
        "{text}"
    );

    let Some(mut k) = AsmKernel::new("gfx950", &["s_trap 2"]) else {
        return;
    };
    assert!(matches!(
        k.run(&[0; 16], [1, 1, 1], [64, 1, 1]),
        Err(EmuError::Execution {
            fault: Fault::Trap(2),
            ..
        })
    ));

    // A kernel that does not finish: wave 0 waits at a barrier, wave 1 spins. The error says
    // where each wave stood and how far the grid got.
    let Some(mut k) = AsmKernel::new(
        "gfx950",
        &[
            "v_readfirstlane_b32 s4, v0",
            "s_cmp_eq_u32 s4, 0",
            "s_cbranch_scc0 .Lspin",
            "s_barrier",
            "s_endpgm",
            ".Lspin:",
            "s_branch .Lspin",
        ],
    ) else {
        return;
    };
    k.gpu.set_instruction_budget(1000);
    // One host thread, so that the budget is shared out the same way every run.
    k.gpu.set_threads(1);
    // In order, only the first workgroup has started; by default all three are resident.
    k.gpu.set_schedule(Schedule::InOrder);
    let in_order = k.run(&[0; 16], [3, 1, 1], [128, 1, 1]).unwrap_err();
    k.gpu.set_schedule(Schedule::default());
    let e = k.run(&[0; 16], [3, 1, 1], [128, 1, 1]).unwrap_err();
    for (e, groups) in [(&in_order, 1), (&e, 3)] {
        match e {
            EmuError::BudgetExceeded {
                budget: 1000,
                finished_workgroups: 0,
                workgroups: 3,
                waves,
                ..
            } => {
                let at: Vec<([u32; 3], u32, WaveStatus, &str)> = waves
                    .iter()
                    .map(|w| (w.workgroup, w.wave, w.status, w.instruction.as_str()))
                    .collect();
                let expected: Vec<([u32; 3], u32, WaveStatus, &str)> = (0..groups)
                    .flat_map(|g| {
                        [
                            ([g, 0, 0], 0, WaveStatus::AtBarrier, "s_endpgm"),
                            ([g, 0, 0], 1, WaveStatus::Running, "s_branch 65535"),
                        ]
                    })
                    .collect();
                assert_eq!(at, expected, "{e}");
            }
            other => panic!("unexpected {other}"),
        }
    }
    let text = e.to_string();
    assert!(
        text.contains("budget of 1000 wave-instructions exceeded (0 of 3 workgroups finished)")
            && text.contains("wave 0 at pc 0x")
            && text.contains("waiting at a barrier: `s_endpgm`")
            && text.contains("wave 1 at pc 0x")
            && text.contains("running: `s_branch 65535`"),
        "{text}"
    );

    // Instructions decoded and printed but not executed fail with what they are.
    for (gfx, line, what) in [
        (
            "gfx90a",
            "image_load v[0:3], v4, s[0:7] dmask:0xf unorm",
            "image instructions",
        ),
        (
            "gfx942",
            "ds_gws_barrier v2 offset:4 gds",
            "global wave sync",
        ),
    ] {
        let Some(mut k) = AsmKernel::new(gfx, &[line]) else {
            return;
        };
        let e = k
            .run(&[0; 16], [1, 1, 1], [64, 1, 1])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(what) && e.contains("are not executed by the emulator"),
            "{e}"
        );
        assert!(e.ends_with(&format!(": `{line}`")), "{e}");
    }

    // Words that decode to nothing: the fault names them, with no empty instruction after.
    let Some(mut k) = AsmKernel::new("gfx950", &[".long 0xffffffff", ".long 0xffffffff"]) else {
        return;
    };
    let e = k
        .run(&[0; 16], [1, 1, 1], [64, 1, 1])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown instruction encoding 0xffffffff 0xffffffff"),
        "{e}"
    );
    assert!(!e.contains("``"), "{e}");

    let Some(mut k) = AsmKernel::new("gfx950", &["v_mov_b32 v1, 0x10000", "ds_read_b32 v2, v1"])
    else {
        return;
    };
    assert!(matches!(
        k.run(&[0; 16], [1, 1, 1], [64, 1, 1]),
        Err(EmuError::Execution {
            fault: Fault::Lds { .. },
            ..
        })
    ));

    let Some(mut k) = AsmKernel::new("gfx950", &[".long 0xffffffff"]) else {
        return;
    };
    assert!(matches!(
        k.run(&[0; 16], [1, 1, 1], [64, 1, 1]),
        Err(EmuError::Execution {
            fault: Fault::UnknownEncoding { .. },
            ..
        })
    ));
}

#[test]
fn trace_reports_every_instruction_in_order() {
    let Some(mut k) = AsmKernel::new(
        "gfx942",
        &["v_mov_b32 v1, 1", "s_nop 0", "v_add_u32 v1, v1, v1"],
    ) else {
        return;
    };
    k.gpu.set_schedule(Schedule::InOrder);
    let mut seen = Vec::new();
    let d = iron_emu::Dispatch {
        kernel_name: "asm",
        code: k.code,
        entry: k.entry,
        descriptor: k.descriptor,
        kernarg: &[0; 16],
        grid: [2, 1, 1],
        workgroup_size: [128, 1, 1],
        dynamic_lds: 0,
        buffers: None,
    };
    let c = k
        .gpu
        .dispatch_traced(&d, &mut |e| {
            seen.push((
                e.workgroup[0],
                e.wave,
                e.pc,
                iron_emu::gfx9::disassemble(iron_emu::Target::Gfx942, e.instruction),
            ))
        })
        .unwrap();
    assert_eq!(seen.len() as u64, c.total_instructions());
    assert_eq!(
        seen.len(),
        2 * 2 * 4,
        "4 instructions x 2 waves x 2 workgroups"
    );
    assert_eq!(seen[0].3, "v_mov_b32_e32 v1, 1");
    assert_eq!(seen[3].3, "s_endpgm");
    assert_eq!(seen[0].2 + 4, seen[1].2);

    // Under a random schedule the waves interleave, each still in program order.
    let program: Vec<(u64, String)> = seen[..4].iter().map(|e| (e.2, e.3.clone())).collect();
    k.gpu.set_schedule(Schedule::Random { seed: 3 });
    let mut interleaved = Vec::new();
    k.gpu
        .dispatch_traced(&d, &mut |e| {
            interleaved.push((
                e.workgroup[0],
                e.wave,
                e.pc,
                iron_emu::gfx9::disassemble(iron_emu::Target::Gfx942, e.instruction),
            ))
        })
        .unwrap();
    assert_ne!(interleaved, seen, "seed 3 interleaves the four waves");
    for (group, wave) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let own: Vec<(u64, String)> = interleaved
            .iter()
            .filter(|e| (e.0, e.1) == (group, wave))
            .map(|e| (e.2, e.3.clone()))
            .collect();
        assert_eq!(own, program, "workgroup {group} wave {wave}");
    }
}

#[test]
fn lds_bank_conflicts_are_counted() {
    for (stride, conflicts) in [(4u32, false), (128, true)] {
        let mul = format!("v_mul_u32_u24 v1, {stride}, v0");
        let Some(mut k) = AsmKernel::new(
            "gfx950",
            &[mul.as_str(), "ds_write_b32 v1, v0", "s_waitcnt lgkmcnt(0)"],
        ) else {
            return;
        };
        k.descriptor.group_segment_fixed_size = 64 * 128;
        let c = k.run(&[0; 16], [1, 1, 1], [64, 1, 1]).unwrap();
        assert_eq!(c.lds_accesses, 1);
        assert_eq!(
            c.lds_bank_conflict_cycles > 0,
            conflicts,
            "stride {stride}: {c:?}"
        );
    }
}

/// The two-address forms move 8 bytes per lane (two dwords), so they are served 16 lanes at a
/// time like `ds_read_b64`: consecutive pairs are conflict-free, pairs 128 bytes apart are not.
#[test]
fn two_address_lds_accesses_are_grouped_by_the_bytes_a_lane_moves() {
    for (stride, conflicts) in [(8u32, false), (128, true)] {
        let mul = format!("v_mul_u32_u24 v1, {stride}, v0");
        let Some(mut k) = AsmKernel::new(
            "gfx950",
            &[
                mul.as_str(),
                "ds_read2_b32 v[2:3], v1 offset1:1",
                "s_waitcnt lgkmcnt(0)",
            ],
        ) else {
            return;
        };
        k.descriptor.group_segment_fixed_size = 64 * 128 + 8;
        // Only the bank pattern matters: the words read were never written.
        k.gpu.set_checks(Checks::NONE);
        let c = k.run(&[0; 16], [1, 1, 1], [64, 1, 1]).unwrap();
        assert_eq!(c.lds_accesses, 1);
        assert_eq!(c.lds_bytes, 64 * 8);
        assert_eq!(
            c.lds_bank_conflict_cycles > 0,
            conflicts,
            "stride {stride}: {c:?}"
        );
    }
}

/// Reference 8-bit float decoder from the format definition (OCP, or FNUZ: bias + 1, 0x80 = NaN).
fn fp8_value(v: u8, exp_bits: u32, fnuz: bool) -> f64 {
    let mant_bits = 7 - exp_bits;
    let bias = (1 << (exp_bits - 1)) - 1 + i32::from(fnuz);
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = (u32::from(v) >> mant_bits) & ((1 << exp_bits) - 1);
    let m = u32::from(v) & ((1 << mant_bits) - 1);
    let max_e = (1 << exp_bits) - 1;
    if fnuz && v == 0x80
        || !fnuz && exp_bits == 4 && v & 0x7f == 0x7f
        || !fnuz && exp_bits == 5 && e == max_e && m != 0
    {
        return f64::NAN;
    }
    if !fnuz && exp_bits == 5 && e == max_e {
        return sign * f64::INFINITY;
    }
    let frac = f64::from(m) / f64::from(1u32 << mant_bits);
    if e == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(e as i32 - bias)
    }
}

/// Nearest finite code to `x` (ties to an even code), by search over all codes.
fn fp8_nearest(x: f32, exp_bits: u32, fnuz: bool) -> u8 {
    let mut best = 0u8;
    let mut best_d = f64::INFINITY;
    for v in 0..=255u8 {
        let y = fp8_value(v, exp_bits, fnuz);
        if !y.is_finite() || (y == 0.0 && v != 0 && fnuz) {
            continue;
        }
        let d = (f64::from(x) - y).abs();
        if d < best_d || (d == best_d && v & 1 == 0 && y.is_sign_negative() == x.is_sign_negative())
        {
            best = v;
            best_d = d;
        }
    }
    best
}

#[test]
fn fp8_conversions_follow_the_target_format() {
    for (gfx, fnuz) in [("gfx942", true), ("gfx950", false)] {
        let mut rng = StdRng::seed_from_u64(15);
        let inputs: [[u32; 64]; 3] = [
            std::array::from_fn(|_| rng.random_range(-200.0f32..200.0).to_bits()),
            std::array::from_fn(|_| rng.random_range(-0.01f32..0.01).to_bits()),
            std::array::from_fn(|_| rng.random()),
        ];
        let body = [
            "v_mov_b32 v4, 0x11223344",
            "v_cvt_pk_fp8_f32 v4, v1, v2 op_sel:[0,0,1]",
            "v_cvt_pk_bf8_f32 v5, v1, v2",
            "v_cvt_f32_fp8_sdwa v6, v3 src0_sel:BYTE_2",
            "v_cvt_pk_f32_bf8_sdwa v[8:9], v3 src0_sel:WORD_1",
            "v_mov_b32 v7, v9",
        ];
        let Some(out) = run_on(gfx, &body, [&inputs[0], &inputs[1], &inputs[2]], 64) else {
            return;
        };
        for l in 0..64 {
            let (a, b) = (f32::from_bits(inputs[0][l]), f32::from_bits(inputs[1][l]));
            let want4 = 0x3344
                | u32::from(fp8_nearest(a, 4, fnuz)) << 16
                | u32::from(fp8_nearest(b, 4, fnuz)) << 24;
            assert_eq!(out[0][l], want4, "{gfx} lane {l}: pk_fp8 of {a}, {b}");
            let want5 =
                u32::from(fp8_nearest(a, 5, fnuz)) | u32::from(fp8_nearest(b, 5, fnuz)) << 8;
            assert_eq!(out[1][l], want5, "{gfx} lane {l}: pk_bf8 of {a}, {b}");
            let byte2 = (inputs[2][l] >> 16) as u8;
            let want6 = fp8_value(byte2, 4, fnuz) as f32;
            assert!(
                f32::from_bits(out[2][l]) == want6
                    || want6.is_nan() && f32::from_bits(out[2][l]).is_nan(),
                "{gfx} lane {l}: fp8 {byte2:#x}"
            );
            let byte3 = (inputs[2][l] >> 24) as u8;
            let want7 = fp8_value(byte3, 5, fnuz) as f32;
            let got7 = f32::from_bits(out[3][l]);
            assert!(
                got7 == want7 || want7.is_nan() && got7.is_nan(),
                "{gfx} lane {l}: bf8 {byte3:#x}: {got7} vs {want7}"
            );
        }
    }
}

#[test]
fn malformed_dispatches_are_rejected_before_running() {
    let Some(mut k) = AsmKernel::new("gfx950", &["s_nop 0"]) else {
        return;
    };
    let bad = |e: Result<iron_emu::Counters, EmuError>| {
        matches!(e, Err(EmuError::InvalidDispatch { .. }))
    };
    assert!(
        bad(k.run(&[0; 16], [1, 1, 1], [1025, 1, 1])),
        "more than 1024 work-items"
    );
    assert!(
        bad(k.run(&[0; 16], [1, 1, 1], [0, 1, 1])),
        "empty workgroup"
    );
    k.descriptor.group_segment_fixed_size = 200 * 1024;
    assert!(
        bad(k.run(&[0; 16], [1, 1, 1], [64, 1, 1])),
        "LDS beyond the target's"
    );
    k.descriptor.group_segment_fixed_size = 0;
    k.descriptor.kernel_code_properties |= 1 << 10;
    assert!(
        bad(k.run(&[0; 16], [1, 1, 1], [64, 1, 1])),
        "wave32 code on a wave64 target"
    );
    k.descriptor.kernel_code_properties &= !(1 << 10);
    let c = k.run(&[0; 16], [2, 3, 1], [1024, 1, 1]).unwrap();
    assert_eq!(c.workgroups, 6);
    assert_eq!(c.waves, 6 * 16);
    assert_eq!(
        k.gpu.memory().allocation_count(),
        1,
        "dispatch buffers are freed"
    );
}

/// [`check_all`] on the given targets only.
fn check_on(
    targets: &[&str],
    body: &[&str],
    inputs: [[u32; 64]; 3],
    check: impl Fn(usize, [u32; 3], [u32; 4]) -> Result<(), String>,
) {
    for gfx in targets {
        let Some(out) = run_on(gfx, body, [&inputs[0], &inputs[1], &inputs[2]], 64) else {
            common::skip("llc not available");
            return;
        };
        for l in 0..64 {
            let i = [inputs[0][l], inputs[1][l], inputs[2][l]];
            let o = [out[0][l], out[1][l], out[2][l], out[3][l]];
            if let Err(e) = check(l, i, o) {
                panic!("{gfx} lane {l}: inputs {i:08x?}: {e}");
            }
        }
    }
}

#[test]
fn trig_preop_returns_segments_of_two_over_pi() {
    // x = 1.0 (segments 0, 1, 2) and x = 2^100 (exponent past 1077 shifts the window).
    let body = [
        "v_mov_b32 v8, 0",
        "v_mov_b32 v9, 0x3ff00000",
        "v_trig_preop_f64 v[10:11], v[8:9], 0",
        "v_trig_preop_f64 v[12:13], v[8:9], 1",
        "v_mov_b32 v9, 0x46300000",
        "v_trig_preop_f64 v[14:15], v[8:9], 1",
        "v_mov_b32 v4, v10",
        "v_mov_b32 v5, v11",
        "v_xor_b32 v6, v12, v13",
        "v_xor_b32 v7, v14, v15",
    ];
    check_all(&body, random(70), |_, _, o| {
        eq(o[0], 0x6dc9_c882)?;
        eq(o[1], 0x3fe4_5f30)?;
        eq(o[2], 0x3c94_a7f0 ^ 0x9d5f_47d4)?;
        eq(o[3], 0x39b5_34dd ^ 0xc0db_6295)
    });
}

#[test]
fn cube_map_and_norm_conversions() {
    let ins = floats(71, -4.0, 4.0);
    check_all(
        &[
            "v_cubeid_f32 v4, v1, v2, v3",
            "v_cubema_f32 v5, v1, v2, v3",
            "v_cubesc_f32 v6, v1, v2, v3",
            "v_cubetc_f32 v7, v1, v2, v3",
        ],
        ins,
        |_, i, o| {
            let [x, y, z] = i.map(f32::from_bits);
            if [x, y, z].iter().any(|v| v.is_nan()) {
                return Ok(());
            }
            let (id, ma, sc, tc) = if z.abs() >= x.abs() && z.abs() >= y.abs() {
                if z < 0.0 {
                    (5.0, 2.0 * z, -x, -y)
                } else {
                    (4.0, 2.0 * z, x, -y)
                }
            } else if y.abs() >= x.abs() {
                if y < 0.0 {
                    (3.0, 2.0 * y, x, -z)
                } else {
                    (2.0, 2.0 * y, x, z)
                }
            } else if x < 0.0 {
                (1.0, 2.0 * x, z, -y)
            } else {
                (0.0, 2.0 * x, -z, -y)
            };
            same_f32(o[0], id)?;
            same_f32(o[1], ma)?;
            same_f32(o[2], sc)?;
            same_f32(o[3], tc)
        },
    );
    let halves = floats(72, -2.0, 2.0)
        .map(|v| v.map(|x| u32::from(f16::from_f32(f32::from_bits(x)).to_bits())));
    check_all(
        &["v_cvt_norm_i16_f16 v4, v1", "v_cvt_norm_u16_f16 v5, v1"],
        halves,
        |_, i, o| {
            let x = f16::from_bits(i[0] as u16).to_f32();
            let x = if x.is_nan() { 0.0 } else { x };
            eq(
                o[0],
                u32::from((x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16),
            )?;
            eq(
                o[1],
                u32::from((x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16),
            )
        },
    );
}

#[test]
fn dot8c_and_packed_fmac() {
    check_all(
        &["v_mov_b32 v4, v3", "v_dot8c_i32_i4 v4, v1, v2"],
        random(73),
        |_, i, o| {
            let nib = |v: u32, k: u32| (((v >> (4 * k)) as u8) << 4) as i8 as i32 >> 4;
            let want = (0..8).fold(i[2] as i32, |a, k| {
                a.wrapping_add(nib(i[0], k) * nib(i[1], k))
            });
            eq(o[0], want as u32)
        },
    );
    let h = |seed| {
        let f = floats(seed, -3.0, 3.0);
        let lo = f[0].map(|x| u32::from(f16::from_f32(f32::from_bits(x)).to_bits()));
        let hi = f[1].map(|x| u32::from(f16::from_f32(f32::from_bits(x)).to_bits()));
        std::array::from_fn::<u32, 64, _>(|l| lo[l] | hi[l] << 16)
    };
    check_on(
        &["gfx90a"],
        &["v_mov_b32 v4, v3", "v_pk_fmac_f16 v4, v1, v2"],
        [h(74), h(75), h(76)],
        |_, i, o| {
            for k in 0..2 {
                let v = |x: u32| f64::from(f16::from_bits((x >> (16 * k)) as u16).to_f32());
                let want = f16::from_f64(v(i[0]).mul_add(v(i[1]), v(i[2])));
                let got = f16::from_bits((o[0] >> (16 * k)) as u16);
                if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                    return Err(format!("half {k}: got {got}, want {want}"));
                }
            }
            Ok(())
        },
    );
}

#[test]
fn gfx950_minimum3_bf16_dot_and_saturating_packs() {
    let ins = floats(77, -8.0, 8.0);
    let minimum = |a: f32, b: f32| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            if a.is_sign_negative() { a } else { b }
        } else {
            a.min(b)
        }
    };
    let maximum = |a: f32, b: f32| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            if a.is_sign_positive() { a } else { b }
        } else {
            a.max(b)
        }
    };
    check_on(
        &["gfx950"],
        &[
            "v_minimum3_f32 v4, v1, v2, v3",
            "v_maximum3_f32 v5, v1, v2, v3",
            "v_dot2_f32_bf16 v6, v1, v2, v3",
            "v_ashr_pk_i8_i32 v7, v1, v2, 3",
        ],
        ins,
        move |_, i, o| {
            let [x, y, z] = i.map(f32::from_bits);
            same_f32(o[0], minimum(minimum(x, y), z))?;
            same_f32(o[1], maximum(maximum(x, y), z))?;
            let bf = |v: u32, k: u32| f32::from_bits((v >> (16 * k) & 0xffff) << 16);
            same_f32(
                o[2],
                bf(i[0], 0) * bf(i[1], 0) + bf(i[0], 1) * bf(i[1], 1) + z,
            )?;
            let sat = |v: u32| ((v as i32) >> 3).clamp(-128, 127) as u8 as u32;
            eq(o[3] & 0xffff, sat(i[0]) | sat(i[1]) << 8)
        },
    );
}

#[test]
fn ds_append_addtid_swizzle_modes_and_wrap() {
    // Lane l: v1 = data, v3 = l. M0 = 0x100: ds_append at 0x100 (x2), ds_consume at 0x104.
    let body = [
        "s_mov_b32 m0, 0x100",
        "v_mov_b32 v8, 0",
        "ds_write_b32 v8, v8 offset:256",
        "v_mov_b32 v9, 50",
        "ds_write_b32 v8, v9 offset:260",
        "s_waitcnt lgkmcnt(0)",
        "s_mov_b64 exec, 0xff",
        "ds_append v10",
        "s_mov_b64 exec, -1",
        "ds_append v11",
        "ds_consume v12 offset:4",
        "s_waitcnt lgkmcnt(0)",
        // v4 = (append #1 result) | (append #2 result) << 8 | (consume result) << 16
        "v_lshl_or_b32 v4, v11, 8, v10",
        "v_lshl_or_b32 v4, v12, 16, v4",
        // ds_wrap at 0x108 (initially 0): old >= 10 ? old - 10 : old + 7, lane by lane.
        "v_mov_b32 v15, 10",
        "v_mov_b32 v16, 7",
        "ds_write_b32 v8, v8 offset:264",
        "ds_wrap_rtn_b32 v17, v8, v15, v16 offset:264",
        "s_waitcnt lgkmcnt(0)",
        "v_lshl_or_b32 v4, v17, 24, v4",
        // addtid: write v1 at 0x200 + 4 * lane, read back rotated by M0 (lane l reads l + 1).
        "s_movk_i32 m0, 0x200",
        "ds_write_addtid_b32 v1",
        "s_waitcnt lgkmcnt(0)",
        "s_movk_i32 m0, 0x204",
        "ds_read_addtid_b32 v5",
        // FFT swizzle (mask 0) and rotate by 3 to the left.
        "ds_swizzle_b32 v6, v1 offset:swizzle(FFT,0)",
        "ds_swizzle_b32 v7, v1 offset:swizzle(ROTATE,0,3)",
        "s_waitcnt lgkmcnt(0)",
    ];
    for gfx in GFX {
        if common::llvm_tool("llc").is_none() {
            return;
        }
        let input = random(78);
        let out = run_with_lds(gfx, &body, &input, 4096);
        for l in 0..64 {
            assert_eq!(out[0][l] & 0xff, 0, "{gfx} append #1 lane {l}");
            assert_eq!(out[0][l] >> 8 & 0xff, 8, "{gfx} append #2 lane {l}");
            assert_eq!(out[0][l] >> 16 & 0xff, 50, "{gfx} consume lane {l}");
            let wrap = (0..l).fold(0u32, |v, _| if v >= 10 { v - 10 } else { v + 7 });
            assert_eq!(out[0][l] >> 24, wrap, "{gfx} wrap lane {l}");
            let next = if l == 63 { 0 } else { input[0][l + 1] };
            if l < 63 {
                assert_eq!(out[1][l], next, "{gfx} addtid lane {l}");
            }
            let fft = ((l as u32 & 31).reverse_bits() >> 27) as usize | (l & 32);
            assert_eq!(out[2][l], input[0][fft], "{gfx} fft lane {l}");
            let rot = ((l + 3) & 31) | (l & 32);
            assert_eq!(out[3][l], input[0][rot], "{gfx} rotate lane {l}");
        }
    }
}

#[test]
fn formatted_buffer_loads_and_stores_convert() {
    // A V# over the input (64 x 4 bytes, stride 0) with DATA_FORMAT 8_8_8_8 / NUM_FORMAT unorm,
    // then tbuffer with 16_16 sint, then a store_format of 16_16 float.
    let body = [
        "s_mov_b32 s16, s10",
        "s_and_b32 s17, s11, 0xffff",
        "s_mov_b32 s18, 0x400",
        "s_mov_b32 s19, 0x50000",
        "buffer_load_format_xy v[8:9], v20, s[16:19], 0 offen",
        "tbuffer_load_format_xyzw v[10:13], v20, s[16:19], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SINT] offen",
        "s_waitcnt vmcnt(0)",
        "v_mov_b32 v4, v8",
        "v_mov_b32 v5, v9",
        "v_xor_b32 v6, v10, v11",
        "v_add_u32 v6, v6, v12",
        "v_mov_b32 v7, v13",
        // Store v2, v3 as 16_16 float over the input, then read the dword back into v7's high half.
        "s_mov_b32 s19, 0x2f000",
        "buffer_store_format_xy v[2:3], v20, s[16:19], 0 offen",
        "s_waitcnt vmcnt(0)",
        "global_load_dword v14, v20, s[10:11]",
        "s_waitcnt vmcnt(0)",
        "v_xor_b32 v6, v6, v14",
    ];
    let mut ins = random(79);
    ins[1] = floats(80, -100.0, 100.0)[0];
    ins[2] = floats(81, -100.0, 100.0)[1];
    check_all(&body, ins, |_, i, o| {
        let b = |k: u32| (i[0] >> (8 * k) & 0xff) as f32 / 255.0;
        same_f32(o[0], b(0))?;
        same_f32(o[1], b(1))?;
        let h = |k: u32| (i[0] >> (16 * k)) as u16 as i16 as i32 as u32;
        let half = |x: u32| u32::from(f16::from_f32(f32::from_bits(x)).to_bits());
        let stored = half(i[1]) | half(i[2]) << 16;
        eq(o[2], (h(0) ^ h(1)) ^ stored)?;
        eq(o[3], 1)
    });
}

#[test]
fn scalar_atomics_read_modify_write_memory() {
    if common::llvm_tool("llc").is_none() {
        return;
    }
    for gfx in GFX {
        // Scalar memory spells the return bit `glc` on every GFX9 target.
        let body = [
            "s_load_dwordx2 s[12:13], s[0:1], 0x10",
            "s_waitcnt lgkmcnt(0)",
            "s_mov_b32 s20, 5",
            "s_atomic_add s20, s[12:13], 0x0 glc",
            "s_mov_b32 s22, 77",
            "s_mov_b32 s23, 9",
            "s_atomic_cmpswap s[22:23], s[12:13], 0x4 glc",
            "s_waitcnt lgkmcnt(0)",
            "v_mov_b32 v4, s20",
            "v_mov_b32 v5, s22",
            "s_load_dwordx2 s[24:25], s[12:13], 0x0 glc",
            "s_waitcnt lgkmcnt(0)",
            "v_mov_b32 v6, s24",
            "v_mov_b32 v7, s25",
        ];
        let mut lines = vec![
            "s_load_dwordx4 s[8:11], s[0:1], 0x0",
            "s_waitcnt lgkmcnt(0)",
            "v_lshlrev_b32 v20, 2, v0",
        ];
        lines.extend_from_slice(&body);
        lines.extend_from_slice(&[
            "global_store_dword v20, v4, s[8:9]",
            "global_store_dword v20, v5, s[8:9] offset:256",
            "global_store_dword v20, v6, s[8:9] offset:512",
            "global_store_dword v20, v7, s[8:9] offset:768",
        ]);
        let mut k = AsmKernel::new(gfx, &lines).unwrap();
        let pout = k.gpu.memory_mut().alloc(1024, 256).unwrap();
        let cell = k.gpu.memory_mut().alloc(8, 8).unwrap();
        k.gpu
            .memory_mut()
            .write(cell, &bytes_of(&[100u32, 9]))
            .unwrap();
        k.run(
            &Args::default().ptr(pout).ptr(0).ptr(cell).0,
            [1, 1, 1],
            [64, 1, 1],
        )
        .unwrap();
        let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
        assert_eq!(out[0], 100, "{gfx} add returns the old value");
        assert_eq!(out[64], 9, "{gfx} cmpswap returns the old value");
        assert_eq!(out[128], 105, "{gfx} add result");
        assert_eq!(out[192], 77, "{gfx} cmpswap result");
    }
}

#[test]
fn aperture_bases_read_as_64_bits_make_generic_pointers_into_lds() {
    // As a 64-bit operand, src_shared_base is the whole aperture base (low dword 0); as a 32-bit
    // one, its high dword. A generic pointer built from it reaches LDS.
    let body = [
        "s_mov_b64 s[12:13], src_shared_base",
        "s_mov_b32 s14, src_shared_base",
        "s_mov_b64 s[16:17], src_private_base",
        "v_add_u32 v8, s12, v20",
        "v_mov_b32 v9, s13",
        "flat_store_dword v[8:9], v1",
        "s_waitcnt vmcnt(0) lgkmcnt(0)",
        "ds_read_b32 v4, v20",
        "s_waitcnt lgkmcnt(0)",
        "v_mov_b32 v5, s12",
        "v_or_b32 v5, s16, v5",
        "v_mov_b32 v6, s13",
        "v_mov_b32 v7, s14",
    ];
    for gfx in GFX {
        let inputs = random(31);
        let out = run_with_lds(gfx, &body, &inputs, 256);
        for l in 0..64 {
            assert_eq!(
                out[0][l], inputs[0][l],
                "{gfx} lane {l}: the LDS store through the generic pointer"
            );
            assert_eq!(
                out[1][l], 0,
                "{gfx} lane {l}: low dwords of the 64-bit aperture bases"
            );
            assert_eq!(
                out[2][l], out[3][l],
                "{gfx} lane {l}: the high dword is the 32-bit read"
            );
            assert_ne!(out[2][l], 0, "{gfx} lane {l}: an aperture");
        }
    }
}

/// Random f16 pairs (no NaN or infinity) in v1, random f32 in v2 and v3.
fn mixed_inputs(seed: u64) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut half = || u32::from(f16::from_f32(rng.random_range(-8.0f32..8.0)).to_bits());
    let pairs = std::array::from_fn(|_| half() | half() << 16);
    let mut rng = StdRng::seed_from_u64(seed + 1);
    let f = std::array::from_fn(|_| rng.random_range(-100.0f32..100.0).to_bits());
    let g = std::array::from_fn(|_| rng.random_range(-100.0f32..100.0).to_bits());
    [pairs, f, g]
}

/// The f32 result of a mixed FMA with f16 or f32 inputs, rounded once.
fn mix(a: f64, b: f64, c: f64) -> f32 {
    a.mul_add(b, c) as f32
}

#[test]
fn mixed_precision_fma_reads_inline_constants_as_f16_in_f16_slots() {
    let body = [
        "v_fma_mix_f32 v4, v1, 1.0, v2 op_sel_hi:[1,1,0]",
        "v_fma_mix_f32 v5, 0.5, v1, -2.0 op_sel:[0,1,0] op_sel_hi:[1,1,1]",
        "v_fma_mix_f32 v6, v1, 1.0, v2 op_sel_hi:[1,0,0]",
        "v_mov_b32 v7, v3",
        "v_fma_mixlo_f16 v7, v1, 4.0, 0.5 op_sel_hi:[1,1,1]",
    ];
    check_all(&body, mixed_inputs(51), |_, i, o| {
        let lo = f64::from(f16::from_bits(i[0] as u16).to_f32());
        let hi = f64::from(f16::from_bits((i[0] >> 16) as u16).to_f32());
        let f = f64::from(f32::from_bits(i[1]));
        same_f32(o[0], mix(lo, 1.0, f))?;
        same_f32(o[1], mix(0.5, hi, -2.0))?;
        same_f32(o[2], mix(lo, 1.0, f))?;
        let want = f16::from_f64(lo.mul_add(4.0, 0.5)).to_bits();
        eq(o[3], i[2] & 0xffff_0000 | u32::from(want))
    });
}

#[test]
fn dpp_row_newbcast_broadcasts_a_lane_of_each_row() {
    let body = [
        "v_mov_b32 v4, 0x77",
        "v_mov_b32_dpp v4, v1 row_newbcast:3 row_mask:0xf bank_mask:0xf",
        "v_mov_b32 v5, 0x77",
        "v_add_u32_dpp v5, v1, v2 row_newbcast:15 row_mask:0x5 bank_mask:0xf",
        "v_mov_b32 v6, 0",
        "v_mov_b32 v7, 0",
    ];
    let input = random(71);
    check_all(&body, input, |l, i, o| {
        let (row, v) = (l / 16, &input[0]);
        eq(o[0], v[row * 16 + 3])?;
        let want = if row % 2 == 0 {
            v[row * 16 + 15].wrapping_add(i[1])
        } else {
            0x77
        };
        eq(o[1], want)
    });
}

/// The 64 x 3 input dwords as one little-endian byte string (what the `in` buffer holds).
fn input_bytes(inputs: &[[u32; 64]; 3]) -> Vec<u8> {
    inputs
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

/// The dword at byte `at` of `bytes`, 0 past its end (out of a buffer's range).
fn dword_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[test]
fn buffer_loads_with_the_lds_bit_write_lds_at_m0() {
    // s[12:15]: a buffer over the 768 input bytes. Each load's lane l writes LDS at
    // M0 + inst_offset + l * 4 (the data goes nowhere else).
    let body = [
        "s_mov_b32 s12, s10",
        "s_mov_b32 s13, s11",
        "s_mov_b32 s14, 768",
        "s_mov_b32 s15, 0x27000",
        "v_mov_b32 v4, 0x77",
        "s_mov_b32 m0, 0",
        "buffer_load_dword v20, s[12:15], 0 offen lds",
        "s_mov_b32 m0, 256",
        "buffer_load_dword v20, s[12:15], 0 offen offset:256 lds",
        "s_waitcnt vmcnt(0)",
        "v_mov_b32 v6, v4",
        "ds_read_b32 v4, v20",
        "ds_read_b32 v5, v20 offset:512",
        "v_mov_b32 v7, 0",
        "s_waitcnt lgkmcnt(0)",
    ];
    for gfx in GFX {
        let inputs = random(81);
        let out = run_with_lds(gfx, &body, &inputs, 1024);
        for l in 0..64 {
            assert_eq!(out[0][l], inputs[0][l], "{gfx} lane {l}: M0 = 0");
            assert_eq!(
                out[1][l], inputs[1][l],
                "{gfx} lane {l}: M0 = 256, offset:256"
            );
            assert_eq!(out[2][l], 0x77, "{gfx} lane {l}: the VGPR is not written");
        }
    }
}

#[test]
#[allow(
    clippy::needless_range_loop,
    reason = "lane l's four outputs and its offsets"
)]
fn gfx950_wide_loads_to_lds_write_every_dword_of_each_lane() {
    // Memory offset (l & 31) * 16 (+ inst_offset); LDS at M0 + inst_offset + l * 16 (dwordx4) or
    // l * 12 (dwordx3). The buffer holds 400 bytes: the lanes past it write zeros.
    let body = [
        "s_mov_b32 s12, s10",
        "s_mov_b32 s13, s11",
        "s_mov_b32 s14, 400",
        "s_mov_b32 s15, 0x27000",
        "v_and_b32 v21, 31, v0",
        "v_lshlrev_b32 v21, 4, v21",
        "v_lshlrev_b32 v22, 4, v0",
        "v_mul_u32_u24 v23, 12, v0",
        "s_mov_b32 m0, 0",
        "buffer_load_dwordx4 v21, s[12:15], 0 offen lds",
        "s_movk_i32 m0, 0x400",
        "global_load_lds_dwordx4 v21, s[10:11]",
        "s_movk_i32 m0, 0x800",
        "global_load_lds_dwordx3 v21, s[10:11] offset:4",
        "s_waitcnt vmcnt(0)",
        "ds_read_b128 v[8:11], v22",
        "ds_read_b128 v[12:15], v22 offset:1024",
        "v_add_u32 v23, 0x804, v23",
        "ds_read_b96 v[16:18], v23",
        "s_waitcnt lgkmcnt(0)",
        "v_xor_b32 v4, v8, v9",
        "v_xor_b32 v4, v4, v10",
        "v_xor_b32 v4, v4, v11",
        "v_xor_b32 v5, v12, v13",
        "v_xor_b32 v5, v5, v14",
        "v_xor_b32 v5, v5, v15",
        "v_xor_b32 v6, v16, v17",
        "v_xor_b32 v6, v6, v18",
        "v_mov_b32 v7, v10",
    ];
    let inputs = random(91);
    let out = run_with_lds("gfx950", &body, &inputs, 3072);
    let bytes = input_bytes(&inputs);
    for l in 0..64 {
        let at = (l & 31) * 16;
        let word = |k: usize, limit: usize| {
            if at + 4 * k + 4 <= limit {
                dword_at(&bytes, at + 4 * k)
            } else {
                0
            }
        };
        let x4 = |limit| (0..4).fold(0, |x, k| x ^ word(k, limit));
        assert_eq!(
            out[0][l],
            x4(400),
            "lane {l}: buffer_load_dwordx4 lds (range 400)"
        );
        assert_eq!(out[1][l], x4(768), "lane {l}: global_load_lds_dwordx4");
        let x3 = (0..3).fold(0, |x, k| x ^ dword_at(&bytes, at + 4 + 4 * k));
        assert_eq!(out[2][l], x3, "lane {l}: global_load_lds_dwordx3 offset:4");
        assert_eq!(out[3][l], word(2, 400), "lane {l}: the third dword itself");
    }
}

/// Runs `body` on one wave of `gfx` with a raw buffer (stride 0) over `buffer` in s[16:19]
/// (NUM_RECORDS `num_records`, DATA_FORMAT 32) and `soffset` in s21, after `run_on`'s prologue
/// (inputs in v1..v3, v4..v7 zero, v20 the lane's byte offset). Returns the lanes' v4..v7 and
/// the buffer afterwards, or `None` without `llc`.
fn run_raw_buffer(
    gfx: &str,
    num_records: u32,
    soffset: u32,
    body: &[String],
    inputs: &[[u32; 64]; 3],
    buffer: &[u8],
) -> Option<([[u32; 64]; 4], Vec<u8>)> {
    let mut lines: Vec<String> = [
        "s_load_dwordx4 s[8:11], s[0:1], 0x0",
        "s_load_dwordx2 s[12:13], s[0:1], 0x10",
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v20, 2, v0",
        "global_load_dword v1, v20, s[10:11]",
        "global_load_dword v2, v20, s[10:11] offset:256",
        "global_load_dword v3, v20, s[10:11] offset:512",
        "v_mov_b32 v4, 0",
        "v_mov_b32 v5, 0",
        "v_mov_b32 v6, 0",
        "v_mov_b32 v7, 0",
        "s_waitcnt vmcnt(0)",
        "s_mov_b32 s16, s12",
        "s_and_b32 s17, s13, 0xffff",
        "s_mov_b32 s19, 0x27000",
    ]
    .map(String::from)
    .to_vec();
    lines.push(format!("s_mov_b32 s18, {num_records:#x}"));
    lines.push(format!("s_mov_b32 s21, {soffset:#x}"));
    lines.extend(body.iter().cloned());
    lines.extend(
        [
            "s_waitcnt vmcnt(0)",
            "s_mov_b64 exec, -1",
            "global_store_dword v20, v4, s[8:9]",
            "global_store_dword v20, v5, s[8:9] offset:256",
            "global_store_dword v20, v6, s[8:9] offset:512",
            "global_store_dword v20, v7, s[8:9] offset:768",
        ]
        .map(String::from),
    );
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut k = AsmKernel::new(gfx, &refs)?;
    let input: Vec<u32> = inputs.iter().flatten().copied().collect();
    let mem = k.gpu.memory_mut();
    let pin = mem.alloc(768, 256).unwrap();
    mem.write(pin, &bytes_of(&input)).unwrap();
    let pout = mem.alloc(1024, 256).unwrap();
    mem.write(pout, &[0xee; 1024]).unwrap();
    let pbuf = mem.alloc(buffer.len() as u64, 256).unwrap();
    mem.write(pbuf, buffer).unwrap();
    k.run(
        &Args::default().ptr(pout).ptr(pin).ptr(pbuf).0,
        [1, 1, 1],
        [64, 1, 1],
    )
    .unwrap_or_else(|e| panic!("{gfx}: {e}"));
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    let after = k.gpu.memory().read_vec(pbuf, buffer.len() as u64).unwrap();
    Some((
        std::array::from_fn(|k| std::array::from_fn(|l| out[k * 64 + l])),
        after,
    ))
}

/// Seeded random bytes.
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// Bytes `p..p + n` (n <= 4) of `b` as a little-endian number.
fn le(b: &[u8], p: usize, n: usize) -> u32 {
    (0..n).fold(0, |v, k| v | u32::from(b[p + k]) << (8 * k))
}

fn sext(v: u32, bits: u32) -> u32 {
    ((v << (32 - bits)) as i32 >> (32 - bits)) as u32
}

/// The body lines of a buffer test.
fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[test]
fn buffer_raw_loads_check_each_dword_against_num_records() {
    // NUM_RECORDS 301 (odd); offsets (v1 + offset:8) near it, so wide loads straddle the end.
    // Each dword piece (the whole access below a dword) is read if offset + its end is at most
    // NUM_RECORDS, else reads zero; soffset moves the address but is not part of the check.
    let limit = 301;
    let buffer = random_bytes(170, 1024);
    let mut rng = StdRng::seed_from_u64(171);
    let mut inputs = random(172);
    inputs[0] = std::array::from_fn(|t| {
        if t % 4 == 0 {
            rng.random_range(0..64)
        } else {
            rng.random_range(250..320)
        }
    });
    // (body, per-lane expectation from (model of a load of n bytes, v2, v3))
    type Want = fn(&dyn Fn(usize) -> [u32; 4], u32, u32) -> [u32; 4];
    let poison = [
        "v_mov_b32 v4, -1",
        "v_mov_b32 v5, -1",
        "v_mov_b32 v6, -1",
        "v_mov_b32 v7, -1",
    ];
    let cases: [(&[&str], Want); 4] = [
        (
            &["buffer_load_dwordx4 v[4:7], v1, s[16:19], s21 offen offset:8"],
            |m, _, _| m(16),
        ),
        (
            &[
                "buffer_load_dwordx3 v[4:6], v1, s[16:19], s21 offen offset:8",
                "buffer_load_ubyte v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, _, _| {
                let w = m(12);
                [w[0], w[1], w[2], m(1)[0]]
            },
        ),
        (
            &[
                "buffer_load_dwordx2 v[4:5], v1, s[16:19], s21 offen offset:8",
                "buffer_load_sshort v6, v1, s[16:19], s21 offen offset:8",
                "buffer_load_sbyte v7, v1, s[16:19], s21 offen offset:8",
            ],
            |m, _, _| {
                let w = m(8);
                [w[0], w[1], sext(m(2)[0], 16), sext(m(1)[0], 8)]
            },
        ),
        (
            &[
                "buffer_load_dword v4, v1, s[16:19], s21 offen offset:8",
                "buffer_load_ushort v5, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v6, v2",
                "buffer_load_short_d16 v6, v1, s[16:19], s21 offen offset:8",
                "v_mov_b32 v7, v3",
                "buffer_load_sbyte_d16_hi v7, v1, s[16:19], s21 offen offset:8",
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
    ];
    for gfx in GFX {
        for soffset in [0, 400] {
            for (body, want) in cases {
                let mut lines = strings(&poison);
                lines.extend(strings(body));
                let Some((out, _)) = run_raw_buffer(gfx, limit, soffset, &lines, &inputs, &buffer)
                else {
                    common::skip("llc not available");
                    return;
                };
                for l in 0..64 {
                    let offset = 8 + inputs[0][l] as usize;
                    // Piece k of a load of n bytes: in range if offset + 4k + min(n, 4) <= limit.
                    let model = |n: usize| -> [u32; 4] {
                        let piece = n.min(4);
                        std::array::from_fn(|k| {
                            let at = offset + 4 * k;
                            if k < n.div_ceil(4) && at + piece <= limit as usize {
                                le(&buffer, soffset as usize + at, piece)
                            } else {
                                0
                            }
                        })
                    };
                    let w = want(&model, inputs[1][l], inputs[2][l]);
                    for k in 0..4 {
                        assert_eq!(
                            out[k][l],
                            w[k],
                            "{gfx} {body:?} soffset {soffset} lane {l} (offset {offset}) v{}",
                            4 + k
                        );
                    }
                }
            }
        }
    }
}

#[test]
#[allow(
    clippy::needless_range_loop,
    reason = "lane t's data registers and offset"
)]
fn buffer_raw_stores_write_only_the_dwords_in_range() {
    // Lane t stores at offset 16t + 4 (plus soffset 8 in the address only); NUM_RECORDS ends
    // 10 bytes into lane 50's access: its first two dwords are written, the others are not.
    let buffer = random_bytes(173, 1100);
    let data = random(174);
    let soffset = 8usize;
    let limit = 16 * 50 + 4 + 10;
    // (store, bytes per lane, first byte taken from the data registers)
    let cases: [(&str, usize, usize); 8] = [
        (
            "buffer_store_dwordx4 v[4:7], v21, s[16:19], s21 offen offset:4",
            16,
            0,
        ),
        (
            "buffer_store_dwordx3 v[4:6], v21, s[16:19], s21 offen offset:4",
            12,
            0,
        ),
        (
            "buffer_store_dwordx2 v[4:5], v21, s[16:19], s21 offen offset:4",
            8,
            0,
        ),
        (
            "buffer_store_dword v4, v21, s[16:19], s21 offen offset:4",
            4,
            0,
        ),
        (
            "buffer_store_short v4, v21, s[16:19], s21 offen offset:4",
            2,
            0,
        ),
        (
            "buffer_store_byte v4, v21, s[16:19], s21 offen offset:4",
            1,
            0,
        ),
        (
            "buffer_store_short_d16_hi v4, v21, s[16:19], s21 offen offset:4",
            2,
            2,
        ),
        (
            "buffer_store_byte_d16_hi v4, v21, s[16:19], s21 offen offset:4",
            1,
            2,
        ),
    ];
    for gfx in GFX {
        for (store, bytes, from) in cases {
            let body = strings(&[
                "v_lshlrev_b32 v21, 4, v0",
                "v_mov_b32 v4, v1",
                "v_mov_b32 v5, v2",
                "v_mov_b32 v6, v3",
                "v_xor_b32 v7, v1, v2",
                store,
            ]);
            let Some((_, after)) =
                run_raw_buffer(gfx, limit as u32, soffset as u32, &body, &data, &buffer)
            else {
                common::skip("llc not available");
                return;
            };
            let mut want = buffer.clone();
            for t in 0..64 {
                let regs = [data[0][t], data[1][t], data[2][t], data[0][t] ^ data[1][t]];
                let src: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
                let offset = 4 + 16 * t;
                let piece = bytes.min(4);
                for k in 0..bytes.div_ceil(4) {
                    if offset + 4 * k + piece <= limit {
                        for j in 0..piece {
                            want[soffset + offset + 4 * k + j] = src[from + 4 * k + j];
                        }
                    }
                }
            }
            // The model itself: lane 50's x3/x4 store writes its first two dwords, not the rest.
            if bytes > 8 {
                let at = soffset + 4 + 16 * 50;
                assert_ne!(want[at..at + 8], buffer[at..at + 8], "{store}: lane 50");
                assert_eq!(
                    want[at + 8..at + 16],
                    buffer[at + 8..at + 16],
                    "{store}: lane 50"
                );
            }
            for (at, (g, w)) in after.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{gfx} {store}: byte {at}");
            }
        }
    }
}

#[test]
fn buffer_atomics_are_range_checked_as_a_whole() {
    // Lane t works on the 8 bytes at offset 8t (plus soffset 4 in the address); NUM_RECORDS
    // 8 * 40 + 4 keeps lane 40's first dword in range: its 32-bit atomic runs, its 64-bit ones
    // (which straddle the end) are dropped whole and return zero, as are all later lanes'.
    let limit = 8 * 40 + 4;
    let soffset = 4usize;
    let buffer = random_bytes(175, 600);
    let inputs = random(176);
    // (atomic, bytes, new value from (old, data))
    type Op = fn(u64, u64) -> u64;
    let cases: [(&str, usize, Op); 4] = [
        ("buffer_atomic_add_x2 v[4:5]", 8, |o, d| o.wrapping_add(d)),
        ("buffer_atomic_swap_x2 v[4:5]", 8, |_, d| d),
        ("buffer_atomic_umax_x2 v[4:5]", 8, |o, d| o.max(d)),
        ("buffer_atomic_add v4", 4, |o, d| {
            (o as u32).wrapping_add(d as u32).into()
        }),
    ];
    for gfx in GFX {
        let glc = if gfx == "gfx90a" { "glc" } else { "sc0" };
        for (atomic, bytes, op) in cases {
            let body = vec![
                "v_lshlrev_b32 v21, 3, v0".to_string(),
                "v_mov_b32 v4, v1".to_string(),
                "v_mov_b32 v5, v2".to_string(),
                format!("{atomic}, v21, s[16:19], s21 offen {glc}"),
            ];
            let Some((out, after)) =
                run_raw_buffer(gfx, limit as u32, soffset as u32, &body, &inputs, &buffer)
            else {
                common::skip("llc not available");
                return;
            };
            let mut want = buffer.clone();
            for t in 0..64 {
                let at = soffset + 8 * t;
                let old = (0..bytes).fold(0u64, |v, k| v | u64::from(buffer[at + k]) << (8 * k));
                let data = u64::from(inputs[0][t]) | u64::from(inputs[1][t]) << 32;
                let in_range = 8 * t + bytes <= limit;
                if in_range {
                    let new = op(old, data);
                    want[at..at + bytes].copy_from_slice(&new.to_le_bytes()[..bytes]);
                }
                let returned = if in_range { old } else { 0 };
                assert_eq!(
                    out[0][t], returned as u32,
                    "{gfx} {atomic} lane {t}: returned"
                );
                if bytes == 8 {
                    let hi = (returned >> 32) as u32;
                    assert_eq!(out[1][t], hi, "{gfx} {atomic} lane {t}: returned high");
                }
            }
            for (at, (g, w)) in after.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{gfx} {atomic}: byte {at}");
            }
        }
    }
}

#[test]
fn buffer_accesses_at_offset_0x80000000_are_out_of_range() {
    // A V# of 4096 bytes and every lane's offset 0x80000000: the loads read zero, the stores and
    // the atomic are dropped (it returns zero), whatever their width.
    let buffer = random_bytes(177, 4096);
    let inputs = random(178);
    let glc = |gfx: &str| if gfx == "gfx90a" { "glc" } else { "sc0" };
    for gfx in GFX {
        let mut body = strings(&[
            "v_mov_b32 v21, 0x80000000",
            "v_mov_b32 v4, -1",
            "v_mov_b32 v5, -1",
            "v_mov_b32 v6, -1",
            "v_mov_b32 v7, -1",
            "buffer_load_dwordx2 v[4:5], v21, s[16:19], s21 offen offset:16",
            "buffer_load_ubyte v6, v21, s[16:19], s21 offen",
            "buffer_store_dwordx4 v[0:3], v21, s[16:19], s21 offen",
            "buffer_store_dword v1, v21, s[16:19], s21 offen offset:4092",
            "buffer_store_byte v2, v21, s[16:19], s21 offen offset:7",
            "v_mov_b32 v8, v3",
        ]);
        body.push(format!(
            "buffer_atomic_add v8, v21, s[16:19], s21 offen {}",
            glc(gfx)
        ));
        body.push("s_waitcnt vmcnt(0)".into());
        body.push("v_mov_b32 v7, v8".into());
        let Some((out, after)) = run_raw_buffer(gfx, 4096, 0, &body, &inputs, &buffer) else {
            common::skip("llc not available");
            return;
        };
        for (k, what) in ["dwordx2 low", "dwordx2 high", "ubyte", "atomic"]
            .iter()
            .enumerate()
        {
            for (l, &got) in out[k].iter().enumerate() {
                assert_eq!(got, 0, "{gfx} lane {l}: {what}");
            }
        }
        assert!(after == buffer, "{gfx}: the buffer is unchanged");
    }
}

#[test]
#[allow(
    clippy::needless_range_loop,
    reason = "lane l's four outputs and its offsets"
)]
fn gfx950_wide_buffer_loads_to_lds_check_each_dword() {
    // buffer_load_dwordx4 ... lds over a buffer of 408 bytes from offset (l & 31) * 16: lanes 25
    // and 57 straddle its end (their first two dwords are read, the others write zeros into the
    // LDS, which starts poisoned); later lanes write only zeros.
    let body = [
        "s_mov_b32 s12, s10",
        "s_mov_b32 s13, s11",
        "s_movk_i32 s14, 408",
        "s_mov_b32 s15, 0x27000",
        "v_and_b32 v21, 31, v0",
        "v_lshlrev_b32 v21, 4, v21",
        "v_lshlrev_b32 v22, 4, v0",
        "v_mov_b32 v8, -1",
        "v_mov_b32 v9, -1",
        "v_mov_b32 v10, -1",
        "v_mov_b32 v11, -1",
        "ds_write_b128 v22, v[8:11]",
        "s_waitcnt lgkmcnt(0)",
        "s_barrier",
        "s_mov_b32 m0, 0",
        "buffer_load_dwordx4 v21, s[12:15], 0 offen lds",
        "s_waitcnt vmcnt(0)",
        "ds_read_b128 v[4:7], v22",
        "s_waitcnt lgkmcnt(0)",
    ];
    if common::llvm_tool("llc").is_none() {
        common::skip("llc not available");
        return;
    }
    let inputs = random(179);
    let out = run_with_lds("gfx950", &body, &inputs, 1024);
    let bytes = input_bytes(&inputs);
    for l in 0..64 {
        let at = (l & 31) * 16;
        for k in 0..4 {
            let want = if at + 4 * k + 4 <= 408 {
                dword_at(&bytes, at + 4 * k)
            } else {
                0
            };
            assert_eq!(out[k][l], want, "lane {l} dword {k}");
        }
    }
}

#[test]
fn gfx950_transposing_lds_loads_exchange_elements_within_16_lanes() {
    if common::llvm_tool("llc").is_none() {
        common::skip("llc not available");
        return;
    }
    // LDS bytes 0..512 hold v1 and v2 of every lane (random); v3 is the lane's address, random,
    // so that the read at v3 + offset is aligned to its size (8 or 12 bytes, as the loads require)
    // and stays in those 512 bytes.
    for (seed, (name, bytes, width)) in TRANSPOSE_LOADS.iter().enumerate() {
        for (agpr, offset) in [(false, 0usize), (true, 24), (false, 120)] {
            let mut input = random(200 + seed as u64);
            let mut rng = StdRng::seed_from_u64(300 + seed as u64);
            let last = (512 - bytes - offset) / bytes * bytes;
            for a in input[2].iter_mut() {
                *a = (*bytes * rng.random_range(0..=last / bytes)) as u32;
            }
            // Edge cases: lanes sharing an address, and the last address that fits.
            input[2][1] = input[2][0];
            input[2][63] = last as u32;
            let dwords = bytes / 4;
            // The 64-bit forms need an even-aligned destination, the 96-bit one does not.
            let first = if dwords == 3 { 9 } else { 10 } - if agpr { 6 } else { 0 };
            let file = if agpr { "a" } else { "v" };
            let dst = format!("{file}[{first}:{}]", first + dwords - 1);
            let load = format!("{name} {dst}, v3 offset:{offset}");
            let moves: Vec<String> = (0..dwords)
                .map(|k| {
                    let reg = format!("{file}{}", first + k);
                    if agpr {
                        format!("v_accvgpr_read_b32 v{}, {reg}", 4 + k)
                    } else {
                        format!("v_mov_b32 v{}, {reg}", 4 + k)
                    }
                })
                .collect();
            let mut body = vec![
                "v_lshlrev_b32 v8, 2, v0",
                "ds_write_b32 v8, v1",
                "ds_write_b32 v8, v2 offset:256",
                "s_waitcnt lgkmcnt(0)",
                load.as_str(),
                "s_waitcnt lgkmcnt(0)",
            ];
            body.extend(moves.iter().map(String::as_str));
            let out = run_with_lds("gfx950", &body, &input, 512);
            let lds: Vec<u8> = bytes_of(&input[0])
                .into_iter()
                .chain(bytes_of(&input[1]))
                .collect();
            let addresses: Vec<usize> = input[2].iter().map(|&a| a as usize + offset).collect();
            let want = transposed_wave(&lds, &addresses, *bytes, *width);
            for (l, want) in want.iter().enumerate() {
                let got = (0..dwords).fold(0u128, |v, d| v | u128::from(out[d][l]) << (32 * d));
                assert_eq!(got, *want, "{load}: lane {l}");
            }
        }
    }
}

#[test]
fn transposing_lds_loads_do_not_decode_before_gfx950() {
    // `ds_read_b64_tr_b4 v[0:1], v1`, `ds_read_b96_tr_b6 v[1:3], v4`,
    // `ds_read_b64_tr_b8 a[0:1], v2`, `ds_read_b64_tr_b16 v[6:7], v3 offset:1024`, as gfx950
    // encodes them (llvm-objdump).
    let words: [[u32; 2]; 4] = [
        [0xd9c0_0000, 0x0000_0001],
        [0xd9c2_0000, 0x0100_0004],
        [0xdbc4_0000, 0x0000_0002],
        [0xd9c6_0400, 0x0600_0003],
    ];
    for w in &words {
        assert!(iron_emu::gfx9::decode(iron_emu::Target::Gfx950, w).is_ok());
    }
    for target in [iron_emu::Target::Gfx90a, iron_emu::Target::Gfx942] {
        for w in &words {
            assert!(
                iron_emu::gfx9::decode(target, w).is_err(),
                "{}: {w:08x?} decodes",
                target.name()
            );
            // A dispatch that reaches one stops with the undecodable words named.
            let mut gpu = iron_emu::Gpu::new(target);
            let mut code = Vec::new();
            for x in w.iter().chain(&[0xbf81_0000]) {
                code.extend_from_slice(&x.to_le_bytes());
            }
            let base = gpu.memory_mut().alloc(code.len() as u64, 4096).unwrap();
            gpu.memory_mut().write(base, &code).unwrap();
            let id = gpu.load_code(&code, base);
            let d = iron_emu::Dispatch {
                kernel_name: "tr",
                code: id,
                entry: base,
                descriptor: iron_emu::KernelDescriptor::default(),
                kernarg: &[],
                grid: [1, 1, 1],
                workgroup_size: [64, 1, 1],
                dynamic_lds: 0,
                buffers: None,
            };
            match gpu.dispatch(&d) {
                Err(EmuError::Execution {
                    fault: Fault::UnknownEncoding { word0, word1 },
                    pc,
                    ..
                }) => {
                    assert_eq!((word0, word1, pc), (w[0], w[1], base), "{}", target.name())
                }
                other => panic!("{}: {w:08x?}: {other:?}", target.name()),
            }
        }
    }
}

/// Runs a hand-made kernel whose descriptor preloads `length` kernarg dwords from dword `offset`
/// with USER_SGPR_COUNT `user_sgprs` (the kernarg pointer in s[0:1], then the preloaded dwords),
/// on 2 workgroups: the first 256 bytes trap (the compatibility prologue must be skipped), the
/// code after them writes s2..s(2 + stored - 1) and the workgroup id SGPR to `out + 128 * group`.
/// `kernarg`'s first two dwords are replaced by `out`; returns the kernarg dwords and `out`.
fn preloaded_sgprs(
    gfx: &str,
    length: u16,
    offset: u16,
    user_sgprs: u32,
    stored: usize,
    kernarg: &[u32],
) -> Option<(Vec<u32>, Vec<u32>)> {
    let mut lines = vec!["s_trap 2".to_string()];
    lines.extend((0..63).map(|_| "s_nop 0".to_string()));
    lines.extend([
        "s_load_dwordx2 s[40:41], s[0:1], 0x0".to_string(),
        format!("s_lshl_b32 s42, s{user_sgprs}, 7"),
        "s_waitcnt lgkmcnt(0)".to_string(),
        "v_mov_b32 v3, s42".to_string(),
    ]);
    for k in 0..=stored {
        let sgpr = if k < stored {
            2 + k
        } else {
            user_sgprs as usize
        };
        lines.push(format!("v_mov_b32 v2, s{sgpr}"));
        lines.push(format!(
            "global_store_dword v3, v2, s[40:41] offset:{}",
            4 * k
        ));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut k = AsmKernel::new(gfx, &refs)?;
    k.descriptor.kernarg_preload = length | offset << 7;
    k.descriptor.compute_pgm_rsrc2 =
        k.descriptor.compute_pgm_rsrc2 & !(0x1f << 1) | user_sgprs << 1;
    k.descriptor.kernarg_size = 4 * kernarg.len() as u32;
    let out = k.gpu.memory_mut().alloc(256, 256).unwrap();
    k.gpu.memory_mut().write(out, &[0x5a; 256]).unwrap();
    let mut args = kernarg.to_vec();
    args[0] = out as u32;
    args[1] = (out >> 32) as u32;
    k.run(&bytes_of(&args), [2, 1, 1], [64, 1, 1]).unwrap();
    Some((
        args,
        from_bytes(&k.gpu.memory().read_vec(out, 256).unwrap()),
    ))
}

#[test]
fn preloaded_kernel_arguments_fill_the_user_sgprs_after_the_kernarg_pointer() {
    if common::llvm_tool("llc").is_none() {
        common::skip("llc not available");
        return;
    }
    let mut rng = StdRng::seed_from_u64(58);
    for gfx in GFX {
        let kernarg: Vec<u32> = (0..40).map(|_| rng.random()).collect();
        // (length, offset, USER_SGPR_COUNT): 5 dwords from the odd dword offset 3; and 20 dwords
        // from dword 1, more than the 14 user SGPRs left after the pointer (only the first 16
        // user SGPRs are initialised, AMDGPUUsage), the system SGPRs following at s16.
        for (length, offset, user_sgprs) in [(5u16, 3u16, 7u32), (20, 1, 16)] {
            let stored = (user_sgprs - 2) as usize;
            let Some((args, out)) =
                preloaded_sgprs(gfx, length, offset, user_sgprs, stored, &kernarg)
            else {
                return;
            };
            for group in 0..2 {
                let got = &out[32 * group..32 * group + stored + 1];
                let mut want: Vec<u32> =
                    args[usize::from(offset)..usize::from(offset) + stored].to_vec();
                want.push(group as u32);
                assert_eq!(got, &want[..], "{gfx}: {length} dwords from {offset}");
            }
        }
    }
}

#[test]
fn rdna_refuses_a_descriptor_that_asks_for_preloaded_arguments() {
    // AMDGPUUsage defines KERNARG_PRELOAD_SPEC for GFX90A and GFX940 onwards; it is reserved
    // (must be 0) on RDNA, where LLVM preloads nothing.
    for gfx in ["gfx1100", "gfx1201"] {
        let Some(mut k) = AsmKernel::new(gfx, &["s_nop 0"]) else {
            common::skip("llc not available");
            return;
        };
        k.run(&[0; 64], [1, 1, 1], [32, 1, 1]).unwrap();
        k.descriptor.kernarg_preload = 2;
        match k.run(&[0; 64], [1, 1, 1], [32, 1, 1]) {
            Err(EmuError::InvalidDispatch { reason, .. }) => {
                assert!(reason.contains("preloaded into SGPRs"), "{gfx}: {reason}")
            }
            other => panic!("{gfx}: {other:?}"),
        }
    }
}

/// gfx950's scaled MFMA takes one scale byte per scale operand from op_sel/op_sel_hi bits 0 and 1;
/// the fields' third bits select nothing (llvm-objdump ignores them too), so setting them leaves
/// the result unchanged, while moving a scale byte changes it.
#[test]
fn scaled_mfma_ignores_the_third_scale_select_bits() {
    let mut rng = StdRng::seed_from_u64(950);
    let mut inputs = random(950);
    for scales in inputs.iter_mut().take(2) {
        for lane in scales.iter_mut() {
            *lane = u32::from_le_bytes(std::array::from_fn(|_| rng.random_range(124..=130)));
        }
    }
    // v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[8:15], v[8:15], v[4:7], v1, v2
    // op_sel:[1,0,0] op_sel_hi:[0,1,0], then with op_sel's and op_sel_hi's third bits set, then
    // with op_sel:[0,0,0].
    let mfma = |w0: u32| format!(".long {w0:#x}, 0x10020501, 0xd3ad0804, 0x04121108");
    let run = |w0: u32| {
        let line = mfma(w0);
        let body = [
            "v_and_b32 v8, 0x37373737, v3",
            "v_xor_b32 v9, 0x11111111, v8",
            "v_xor_b32 v10, 0x22222222, v8",
            "v_xor_b32 v11, 0x04040404, v8",
            "v_mov_b32 v12, v9",
            "v_mov_b32 v13, v10",
            "v_mov_b32 v14, v11",
            "v_mov_b32 v15, v8",
            line.as_str(),
            "s_nop 7",
            "s_nop 7",
        ];
        run_on("gfx950", &body, [&inputs[0], &inputs[1], &inputs[2]], 64)
    };
    let Some(selected) = run(0xd3ac_0800) else {
        return;
    };
    let with_ignored_bits = run(0xd3ac_0800 | 1 << 13 | 1 << 14).unwrap();
    let other_byte = run(0xd3ac_0000).unwrap();
    assert_eq!(selected, with_ignored_bits);
    assert_ne!(selected, other_byte);
    assert!(selected.iter().flatten().any(|&v| v != 0));
}

/// The f16 nearest `a * b + c` (ties to even) for inputs whose exact value f64 holds (asserted):
/// scaled to the f16 step around it, rounded to an integer, scaled back.
fn f16_of_exact_fma(a: f64, b: f64, c: f64) -> u16 {
    let (p, s) = (a * b, a * b + c);
    let v = s - p;
    assert_eq!(
        (p - (s - v)) + (c - v),
        0.0,
        "{a} * {b} + {c} is exact in f64"
    );
    let exponent = ((s.abs().to_bits() >> 52) as i32 - 1023).max(-14);
    let q = (2f64).powi(exponent - 10);
    let r = (s / q).round_ties_even() * q;
    assert!(r.abs() <= 65504.0, "finite");
    f16::from_f64(r).to_bits()
}

#[test]
fn f16_fma_results_round_once_from_the_exact_value() {
    // v1: f16 pairs {a, b} (normal, 0.5 <= |x| < 8), v2: f32 c (1 <= |c| < 100), v3: f16 pairs {k,
    // m}. Lane 0: a * b = 3 * 2^-10 - 3 * 2^-28, so a * b + 3.140625 lies just below the midpoint
    // of two f16 values; lane 1: 1 * (2^-10 + 2^-30) + 2 lies just above the midpoint of 2 and
    // 2 + 2^-9. A rounding to f32 first lands on the midpoint (and ties to even the wrong way).
    let mut rng = StdRng::seed_from_u64(131);
    let mut half = || {
        let x =
            f16::from_f32(rng.random_range(0.5f32..8.0) * if rng.random() { 1.0 } else { -1.0 });
        u32::from(x.to_bits())
    };
    let mut inputs: [[u32; 64]; 3] = [[0; 64]; 3];
    let [pairs, _, constants] = &mut inputs;
    for v in pairs.iter_mut().chain(constants.iter_mut()) {
        *v = half() | half() << 16;
    }
    let mut rng = StdRng::seed_from_u64(132);
    for c in inputs[1].iter_mut() {
        *c = (rng.random_range(1.0f32..100.0) * if rng.random() { 1.0 } else { -1.0 }).to_bits();
    }
    let h = |x: f64| u32::from(f16::from_f64(x).to_bits());
    inputs[0][0] =
        h(3.0 * (2f64).powi(-10) * (1.0 + (2f64).powi(-9))) | h(1.0 - (2f64).powi(-9)) << 16;
    inputs[2][0] = h(3.140625) | h(-0.5) << 16;
    inputs[0][1] = h(1.0) | h(1.5) << 16;
    inputs[1][1] = ((2f32).powi(-10) + (2f32).powi(-30)).to_bits();
    let body = [
        "v_mov_b32 v4, 0x12340000",
        "v_fma_mixlo_f16 v4, v1, v2, 2.0 op_sel_hi:[1,0,0]",
        "v_lshrrev_b32 v8, 16, v1",
        "v_fma_f16 v5, v1, v8, v3",
        "v_pk_fma_f16 v6, v1, v1, v3 op_sel:[0,1,0] op_sel_hi:[0,1,1]",
        "v_mov_b32 v7, 0",
    ];
    check_all(&body, inputs, |_, i, o| {
        let f = |x: u32| f64::from(f16::from_bits(x as u16).to_f32());
        let (a, b, k, m) = (f(i[0]), f(i[0] >> 16), f(i[2]), f(i[2] >> 16));
        let c = f64::from(f32::from_bits(i[1]));
        eq(o[0], 0x1234_0000 | u32::from(f16_of_exact_fma(a, c, 2.0)))?;
        eq(o[1] & 0xffff, u32::from(f16_of_exact_fma(a, b, k)))?;
        let lo = u32::from(f16_of_exact_fma(a, b, k));
        eq(o[2], lo | u32::from(f16_of_exact_fma(a, b, m)) << 16)
    });
}

/// The dispatch's kernarg segment is readable through global and scalar loads but not writable:
/// a store into it (global, flat or scalar) is a fault that names it, where it used to change the
/// arguments of the running dispatch silently.
#[test]
fn stores_into_the_kernarg_segment_are_faults() {
    let load = [
        "v_mov_b32 v2, s0",
        "v_mov_b32 v3, s1",
        "global_load_dword v4, v[2:3], off",
        "s_load_dword s4, s[0:1], 0x0",
        "s_waitcnt vmcnt(0) lgkmcnt(0)",
    ];
    for gfx in ["gfx90a", "gfx942", "gfx950"] {
        let Some(mut k) = AsmKernel::new(gfx, &load) else {
            return;
        };
        k.run(&[0; 16], [1, 1, 1], [64, 1, 1])
            .unwrap_or_else(|e| panic!("{gfx}: reading the kernarg segment: {e}"));
        for store in [
            "global_store_dword v[2:3], v1, off",
            "flat_store_dword v[2:3], v1",
            "s_store_dword s4, s[0:1], 0x4",
        ] {
            let body = [
                load[0],
                load[1],
                "v_mov_b32 v1, 7",
                "s_mov_b32 s4, 7",
                store,
            ];
            let mut k = AsmKernel::new(gfx, &body).unwrap();
            match k.run(&[0; 16], [1, 1, 1], [64, 1, 1]) {
                Err(EmuError::Execution {
                    fault:
                        Fault::Protected {
                            write: true, what, ..
                        },
                    instruction,
                    ..
                }) => {
                    assert!(what.contains("kernarg"), "{gfx} {store}: {what}");
                    assert!(instruction.starts_with(store.split(' ').next().unwrap()));
                }
                other => panic!("{gfx} {store}: {other:?}"),
            }
        }
    }
}
