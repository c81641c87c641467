//! Hand-written RDNA instructions (assembled by `llc`) disassembled by the emulator and by
//! `llvm-objdump`, per target and wave size: forms compiled code rarely shows (WMMA, DPP8, VOPD,
//! 16-bit halves, the gfx12 memory encodings with their cache policies).

mod common;

use common::{compare_hand_written, llvm_tool};
use iron_emu::{Target, WaveSize, rdna};

/// Instruction lines per target, each assembled alone.
fn lines(gfx: &str, wave64: bool) -> Vec<String> {
    let gfx12 = gfx == "gfx1201";
    let (vcc, mask) = if wave64 {
        ("vcc", "s[4:5]")
    } else {
        ("vcc_lo", "s4")
    };
    let mut l: Vec<String> = vec![
        "v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0]".into(),
        "v_add_nc_u32_dpp v1, v2, v3 row_share:5 row_mask:0x3 bank_mask:0xc fi:1".into(),
        "v_mul_f32_dpp v1, -v2, |v3| row_xmask:2 row_mask:0xf bank_mask:0xf bound_ctrl:1".into(),
        "v_permlane16_b32 v1, v2, s3, s4".into(),
        "v_permlanex16_b32 v1, v2, 0x76543210, s4 op_sel:[1,0]".into(),
        format!("v_cmp_lt_f32_e64 {mask}, -v1, v2"),
        format!("v_cndmask_b32_e64 v1, v2, -v3, {mask}"),
        format!("v_add_co_ci_u32_e32 v1, {vcc}, v2, v3, {vcc}"),
        format!("v_div_scale_f32 v1, {mask}, v2, v3, v4"),
        "v_fma_mix_f32 v1, v2, v3, v4 op_sel_hi:[1,1,0]".into(),
        "v_pk_fma_f16 v1, v2, v3, v4 op_sel:[1,0,1] neg_hi:[0,1,0]".into(),
        "ds_load_2addr_stride64_b64 v[2:5], v1 offset0:3 offset1:200".into(),
        "ds_bpermute_b32 v1, v2, v3 offset:4".into(),
        // VOP2 with a constant K: a literal src0 shares K's dword.
        "v_fmaak_f32 v1, 0x40400000, v2, 0x40400000".into(),
        "v_fmamk_f32 v1, 0x3fc00000, 0x3fc00000, v2".into(),
        "v_fmamk_f32 v1, v3, 0x3fc00000, v2".into(),
        "v_fmaak_f16 v1, v2, v3, 0x3c00".into(),
        "s_denorm_mode 15".into(),
        "s_denorm_mode 0".into(),
        "s_round_mode 3".into(),
        "s_load_b32 s1, s[2:3], -0x8".into(),
        "s_load_b64 s[4:5], s[2:3], s6 offset:-0x10".into(),
        "s_buffer_load_b32 s1, s[4:7], 0x40".into(),
    ];
    if !wave64 {
        l.push("v_dual_fmaak_f32 v1, v2, v3, 0x40400000 :: v_dual_mov_b32 v4, v5".into());
        l.push("v_dual_cndmask_b32 v1, v2, v3 :: v_dual_lshlrev_b32 v4, v5, v6".into());
    }
    // WMMA: wave64 halves C and D, and on gfx12 also A and B.
    let (ab, cd) = match (gfx12, wave64) {
        (false, false) => (["v[0:7]", "v[8:15]"], "v[16:23]"),
        (false, true) => (["v[0:7]", "v[8:15]"], "v[16:19]"),
        (true, false) => (["v[0:3]", "v[4:7]"], "v[16:23]"),
        (true, true) => (["v[0:1]", "v[2:3]"], "v[16:19]"),
    };
    l.push(format!(
        "v_wmma_f32_16x16x16_f16 {cd}, {}, {}, {cd}",
        ab[0], ab[1]
    ));
    l.push(format!(
        "v_wmma_f32_16x16x16_bf16 {cd}, {}, {}, 0",
        ab[0], ab[1]
    ));
    l.extend(wmma_lines(gfx12, wave64));
    if gfx12 {
        l.extend(
            [
                "global_load_b64 v[1:2], v3, s[4:5] offset:-64 th:TH_LOAD_NT scope:SCOPE_SYS",
                "global_store_b32 v[1:2], v3, off offset:4096 scope:SCOPE_DEV",
                "global_atomic_max_i32 v1, v2, v3, s[4:5] th:TH_ATOMIC_RETURN",
                "scratch_load_b128 v[1:4], v5, off offset:16",
                "scratch_store_b32 off, v1, s7 offset:-8",
                "s_load_b96 s[4:6], s[2:3], 0x40",
                "s_load_i16 s4, s[2:3], s5 offset:0x8",
                "s_wait_loadcnt_dscnt 0x102",
                "s_barrier_signal -1",
                "s_barrier_wait 0xffff",
                "s_fmamk_f32 s1, s2, 0x40400000, s3",
                "s_fmaak_f32 s1, s2, s3, 0x40400000",
                "s_fmaak_f32 s1, 0x40400000, s3, 0x40400000",
                "buffer_atomic_cmpswap_b64 v[2:5], v7, s[0:3], null offen th:TH_ATOMIC_RETURN",
                "buffer_atomic_cmpswap_b32 v[2:3], v7, s[0:3], s5 idxen",
            ]
            .map(String::from),
        );
    } else {
        l.extend(
            [
                "v_add_f16_e64 v1.h, -v2.l, v3.h clamp",
                "v_fmamk_f16 v0.l, v2.l, 0x3d7d, v2.h",
                "v_fmac_f16_e32 v4.h, v1.l, v2.h",
                "v_cvt_f32_f16_e32 v1, v2.h",
                "global_load_b64 v[1:2], v3, s[4:5] offset:-64 glc slc",
                "global_atomic_max_i32 v1, v2, v3, s[4:5] glc",
                "buffer_atomic_cmpswap_b64 v[2:5], v7, s[0:3], 0 offen glc",
                "scratch_load_b128 v[1:4], v5, off offset:16",
                "scratch_store_b32 off, v1, s7 offset:-8",
                "s_load_b256 s[4:11], s[2:3], 0x40",
                "s_waitcnt vmcnt(3) lgkmcnt(1)",
                "s_waitcnt_depctr depctr_va_vdst(0)",
                "s_delay_alu instid0(TRANS32_DEP_2) | instskip(SKIP_1) | instid1(SALU_CYCLE_2)",
            ]
            .map(String::from),
        );
    }
    l
}

/// Every dense WMMA form with its modifiers, in the register widths of the target and wave size.
fn wmma_lines(gfx12: bool, wave64: bool) -> Vec<String> {
    let range = |first: usize, n: usize| {
        if n == 1 {
            format!("v{first}")
        } else {
            format!("v[{first}:{}]", first + n - 1)
        }
    };
    // Registers: C/D of 32-bit and 16-bit elements, A/B of 16-, 8- and 4-bit elements (K = 16).
    let per_lane = if wave64 { 4 } else { 8 };
    let (cd32, cd16) = if gfx12 {
        (per_lane, per_lane / 2)
    } else {
        (per_lane, per_lane)
    };
    let ab = |bits: usize| {
        let elements = if gfx12 {
            256 / if wave64 { 64 } else { 32 }
        } else {
            16
        };
        (elements * bits).div_ceil(32)
    };
    let (d, d16) = (range(24, cd32), range(24, cd16));
    let (c, c16) = (range(16, cd32), range(16, cd16));
    let (a16, b16) = (range(0, ab(16)), range(8, ab(16)));
    let (a8, b8) = (range(0, ab(8)), range(8, ab(8)));
    let (a4, b4) = (range(0, ab(4)), range(8, ab(4)));
    let mut l = vec![
        format!("v_wmma_f32_16x16x16_f16 {d}, {a16}, {b16}, {c} neg_lo:[1,0,1] neg_hi:[0,1,1]"),
        format!("v_wmma_f32_16x16x16_bf16 {d}, {a16}, {b16}, {c} neg_hi:[1,0,0]"),
        format!("v_wmma_f16_16x16x16_f16 {d16}, {a16}, {b16}, {c16} neg_lo:[0,1,0]"),
        format!("v_wmma_bf16_16x16x16_bf16 {d16}, {a16}, {b16}, {c16}"),
        format!("v_wmma_i32_16x16x16_iu8 {d}, {a8}, {b8}, {c} neg_lo:[1,1,0] clamp"),
        format!("v_wmma_i32_16x16x16_iu8 {d}, {a8}, {b8}, {c}"),
        format!("v_wmma_i32_16x16x16_iu4 {d}, {a4}, {b4}, {c} neg_lo:[0,1,0]"),
    ];
    if gfx12 {
        let (a32, b32) = (range(0, ab(8)), range(8, ab(8)));
        l.extend([
            format!("v_wmma_i32_16x16x32_iu4 {d}, {a32}, {b32}, {c} neg_lo:[1,0,0] clamp"),
            format!("v_wmma_f32_16x16x16_fp8_fp8 {d}, {a8}, {b8}, {c}"),
            format!("v_wmma_f32_16x16x16_fp8_bf8 {d}, {a8}, {b8}, {c} neg_lo:[0,0,1]"),
            format!("v_wmma_f32_16x16x16_bf8_fp8 {d}, {a8}, {b8}, 1.0 neg_hi:[0,0,1]"),
            format!("v_wmma_f32_16x16x16_bf8_bf8 {d}, {a8}, {b8}, {c}"),
        ]);
    } else {
        l.extend([
            format!("v_wmma_f16_16x16x16_f16 {d16}, {a16}, {b16}, {c16} op_sel:[0,0,1]"),
            format!(
                "v_wmma_bf16_16x16x16_bf16 {d16}, {a16}, {b16}, {c16} op_sel:[0,0,1] neg_lo:[1,1,0]"
            ),
            format!("v_wmma_f32_16x16x16_f16 {d}, {a16}, {b16}, 1.0"),
        ]);
    }
    l
}

#[test]
fn hand_written_rdna_instructions_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for (target, wave64) in [
        (Target::Gfx1100, false),
        (Target::Gfx1201, false),
        (Target::Gfx1100, true),
        (Target::Gfx1201, true),
    ] {
        let wave = if wave64 {
            WaveSize::Wave64
        } else {
            WaveSize::Wave32
        };
        let features: &[&str] = if wave64 { &["+wavefrontsize64"] } else { &[] };
        let (n, m) = compare_hand_written(
            target.name(),
            features,
            &lines(target.name(), wave64),
            |words| {
                rdna::decode(target, wave, words)
                    .map(|i| (usize::from(i.len), rdna::disassemble(target, &i)))
                    .map_err(|e| e.to_string())
            },
        );
        compared += n;
        mismatches.extend(m);
    }
    for m in &mismatches {
        eprintln!("{m}");
    }
    assert!(compared > 50);
    assert!(mismatches.is_empty(), "{} differ", mismatches.len());
}

/// gfx12's cache policies: every temporal hint at every scope on loads, stores and atomics of
/// each memory encoding (global, flat, scratch, buffer, scalar), disassembled like llvm-objdump.
/// LLVM names a hint by the access kind and, for some hints, by the scope.
#[test]
fn gfx12_cache_policies_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let target = Target::Gfx1201;
    // Vector memory: th is bits 22:20 and scope bits 19:18 of the second dword.
    let vector = [
        "global_load_b32 v1, v2, s[4:5]",
        "global_store_b64 v2, v[4:5], s[4:5]",
        "global_atomic_add_u32 v1, v2, v3, s[4:5] th:TH_ATOMIC_RETURN",
        "global_atomic_cmpswap_b32 v2, v[4:5], s[4:5]",
        "buffer_load_b128 v[4:7], v2, s[4:7], s3 offen",
        "buffer_store_b32 v1, v2, s[4:7], s3 idxen",
        "buffer_atomic_add_u32 v1, v2, s[4:7], s3 offen",
        "scratch_load_b32 v1, v2, off",
        "scratch_store_b32 off, v1, s7",
        "flat_load_b32 v1, v[2:3]",
        "flat_store_b32 v[2:3], v1",
    ];
    // Scalar memory: th is bits 24:23 and scope bits 22:21 of the first dword.
    let scalar = [
        "s_load_b32 s1, s[2:3], 0x0",
        "s_buffer_load_b64 s[4:5], s[4:7], 0x10",
    ];
    let mut slots = Vec::new();
    for line in vector {
        let base = common::assemble_words(target.name(), &[], line);
        for policy in 0..32u32 {
            let mut w = base.clone();
            w[1] = (w[1] & !(0x1f << 18)) | policy << 18;
            slots.push(w);
        }
    }
    for line in scalar {
        let base = common::assemble_words(target.name(), &[], line);
        for policy in 0..16u32 {
            let mut w = base.clone();
            w[0] = (w[0] & !(0xf << 21)) | policy << 21;
            slots.push(w);
        }
    }
    let (compared, mismatches) = common::compare_words(target.name(), &[], &slots, |words| {
        rdna::decode(target, WaveSize::Wave32, words)
            .map(|i| (usize::from(i.len), rdna::disassemble(target, &i)))
            .map_err(|e| e.to_string())
    });
    for m in &mismatches {
        eprintln!("{m}");
    }
    assert_eq!(compared, vector.len() * 32 + scalar.len() * 16);
    assert!(mismatches.is_empty(), "{} differ", mismatches.len());
}

/// The source codes a VOP3 sweep gives `op`: VGPRs v2, v4, v6, except where the instruction takes
/// SGPRs (scalar-result transcendentals, lane selects of readlane/writelane/permlane) or a lane
/// mask (vcc_lo).
fn vop3_sources(op: rdna::Op, target: Target) -> (u32, u8) {
    let name = op.name();
    let ops = op.info().operands_on(target);
    let (mut word, mut valid) = (0u32, 0u8);
    for (k, spec) in ops[1..].iter().enumerate() {
        let scalar = spec.kind == rdna::RegKind::Sgpr
            || name.starts_with("v_s_")
            || (k > 0 && (name.starts_with("v_readlane") || name.starts_with("v_writelane")))
            || (k > 0 && name.starts_with("v_permlane") && !name.ends_with("_var_b32"));
        let code = match spec.kind {
            rdna::RegKind::None => continue,
            _ if op.info().is_lane_mask(k + 1) => 106,
            _ if scalar => 2 + 2 * k as u32,
            _ => 258 + 2 * k as u32,
        };
        word |= code << (9 * k);
        let selectable =
            !op.info().is_lane_mask(k + 1) && (spec.bits == 16 || !name.starts_with("v_cmp"));
        if selectable {
            valid |= 1 << k;
        }
    }
    if ops[0].kind == rdna::RegKind::Vgpr && !op.info().is_lane_mask(0) {
        valid |= 8;
    }
    (word, valid)
}

/// op_sel on every VOP3 instruction of gfx1100 (true16: halves named in the registers) and
/// gfx1201 (op_sel listed only where LLVM lists it, `byte_sel` on the 8-bit float conversions),
/// with every combination of the bits the instruction's operands can take, disassembled like
/// llvm-objdump. v_ldexp_f16 is left out on gfx1100: LLVM reads its exponent as a 16-bit half,
/// AMD's pseudocode (which the emulator follows) as a 32-bit integer.
#[test]
fn vop3_op_sel_disassembles_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    for target in [Target::Gfx1100, Target::Gfx1201] {
        let tables = rdna::OpcodeTables::for_target(target).unwrap();
        let mut slots = Vec::new();
        for (num, op) in tables.slots(rdna::Encoding::Vop3) {
            if op.info().vop3sd || (target == Target::Gfx1100 && op == rdna::Op::V_LDEXP_F16) {
                continue;
            }
            let (sources, valid) = vop3_sources(op, target);
            for sel in (0u32..16).filter(|s| s & !u32::from(valid) == 0) {
                slots.push(vec![0xD400_0000 | num << 16 | sel << 11 | 2, sources]);
            }
        }
        let (compared, mismatches) = common::compare_words(target.name(), &[], &slots, |w| {
            rdna::decode(target, WaveSize::Wave32, w)
                .map(|i| (usize::from(i.len), rdna::disassemble(target, &i)))
                .map_err(|e| e.to_string())
        });
        // Words LLVM rejects, or decodes with operands it flags, say nothing about op_sel.
        let mismatches: Vec<&String> = mismatches
            .iter()
            .filter(|m| !m.contains("llvm `.long") && !m.contains("/*"))
            .collect();
        for m in &mismatches {
            eprintln!("{m}");
        }
        assert!(compared > 2000, "{}: {compared} compared", target.name());
        assert!(
            mismatches.is_empty(),
            "{}: {} differ",
            target.name(),
            mismatches.len()
        );
    }
}

/// gfx1201 instructions that only LLVM's true16 tables hold (`v_mov_b16`, `v_swap_b16`), so only
/// llvm-objdump with `+real-true16` decodes them, with their 16-bit halves named.
#[test]
fn gfx1201_true16_only_instructions_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let target = Target::Gfx1201;
    let lines = [
        "v_mov_b16_e32 v1.l, v2.h",
        "v_mov_b16_e32 v1.h, 0x1234",
        "v_mov_b16_e32 v1.l, s2",
        "v_mov_b16_e32 v1.l, -1",
        "v_mov_b16_e64 v1.h, v2.l",
        "v_mov_b16_e64 v200.l, v201.h",
        "v_swap_b16 v1.l, v2.h",
        "v_swap_b16 v3.h, v4.l",
    ]
    .map(String::from);
    let (n, mismatches) = compare_hand_written(target.name(), &["+real-true16"], &lines, |w| {
        rdna::decode(target, WaveSize::Wave32, w)
            .map(|i| (usize::from(i.len), rdna::disassemble(target, &i)))
            .map_err(|e| e.to_string())
    });
    for m in &mismatches {
        eprintln!("{m}");
    }
    assert_eq!(n, lines.len());
    assert!(mismatches.is_empty(), "{} differ", mismatches.len());
}
