//! Hand-written GFX9 instructions (assembled by `llc`) disassembled by the emulator and by
//! `llvm-objdump`, per target: forms that code from elsewhere uses and Iron's kernels do not.

mod common;

use common::{compare_hand_written, llvm_tool};
use iron_emu::{Target, gfx9};

/// Instruction lines per target, each assembled alone.
fn lines(target: Target) -> Vec<&'static str> {
    let mut l = vec![
        // SMEM offsets are signed (but the buffer forms'), 21 bits.
        "s_load_dword s1, s[2:3], -0x8",
        "s_load_dwordx2 s[4:5], s[2:3], s4 offset:-0x10",
        "s_store_dword s1, s[2:3], -0x4",
        "s_load_dwordx4 s[4:7], s[2:3], 0xfffff",
        "s_buffer_load_dword s1, s[4:7], 0xfffff",
        // Global wave sync (decoded and printed, not executed).
        "ds_gws_init v2 gds",
        "ds_gws_barrier v2 offset:4 gds",
        "ds_gws_sema_v gds",
        "ds_gws_sema_br v2 gds",
        "ds_gws_sema_p gds",
        "ds_gws_sema_release_all gds",
        "v_mov_b32_dpp v1, v2 row_newbcast:3 row_mask:0xf bank_mask:0xf",
        "v_add_f32_dpp v1, v2, v3 row_newbcast:15 row_mask:0x5 bank_mask:0xf bound_ctrl:1",
        // Loads into LDS name no VGPR destination.
        "buffer_load_dword v2, s[8:11], 0 offen lds",
        "buffer_load_ubyte v2, s[8:11], s3 idxen offset:16 lds",
    ];
    if target == Target::Gfx950 {
        l.push("v_mov_b32_dpp v1, v2 row_newbcast:0 row_mask:0x3 bank_mask:0xc");
        // Transposing LDS loads: every form, with and without offsets, VGPR and AGPR
        // destinations (the 96-bit form's destination need not be even-aligned).
        l.extend([
            "ds_read_b64_tr_b4 v[0:1], v1",
            "ds_read_b64_tr_b4 v[2:3], v1 offset:64",
            "ds_read_b64_tr_b4 a[2:3], v4 offset:65535",
            "ds_read_b64_tr_b4 a[0:1], v255",
            "ds_read_b64_tr_b8 v[4:5], v2 offset:8",
            "ds_read_b64_tr_b8 v[254:255], v0 offset:1",
            "ds_read_b64_tr_b8 a[0:1], v2",
            "ds_read_b64_tr_b8 a[6:7], v2 offset:4096",
            "ds_read_b64_tr_b16 v[6:7], v3 offset:1024",
            "ds_read_b64_tr_b16 v[8:9], v3",
            "ds_read_b64_tr_b16 a[4:5], v3 offset:16",
            "ds_read_b64_tr_b16 a[254:255], v3",
            "ds_read_b96_tr_b6 v[1:3], v4",
            "ds_read_b96_tr_b6 v[0:2], v4 offset:96",
            "ds_read_b96_tr_b6 a[3:5], v4 offset:4",
            "ds_read_b96_tr_b6 a[0:2], v4",
        ]);
    }
    if target == Target::Gfx90a {
        l.extend([
            "global_load_dword v[2:3], off offset:64 glc slc lds",
            "global_load_ubyte v2, s[10:11] lds",
            "global_load_sshort v2, s[10:11] offset:-8 lds",
        ]);
        // Image instructions (decoded and printed, not executed).
        l.extend([
            "image_load v[0:3], v4, s[0:7] dmask:0xf unorm",
            "image_load v[16:19], v20, s[8:15] dmask:0xf unorm da",
            "image_load v[0:1], v4, s[0:7] dmask:0x3 unorm lwe",
            "image_load v0, v4, s[4:11]",
            "image_load v[0:1], v4, s[0:7] dmask:0xf unorm d16",
            "image_load a[0:3], v4, s[0:7] dmask:0xf unorm",
            "image_load v[0:3], v4, s[0:7] dmask:0xf a16",
            "image_load_mip v[0:1], v4, s[0:7] dmask:0x3",
            "image_store v[16:19], v20, s[8:15] dmask:0xf unorm",
            "image_store v[0:1], v4, s[0:7] dmask:0x3 glc slc da",
            "image_store_pck v[0:3], v4, s[0:7] dmask:0xf unorm",
            "image_atomic_add v1, v2, s[0:7] dmask:0x1 unorm glc slc da",
            "image_atomic_cmpswap v[0:1], v2, s[0:7] dmask:0x3 unorm",
            "image_get_resinfo v[0:3], v4, s[0:7] dmask:0xf",
        ]);
    }
    l
}

#[test]
fn hand_written_gfx9_instructions_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let lines: Vec<String> = lines(target).into_iter().map(String::from).collect();
        let (n, m) = compare_hand_written(target.name(), &[], &lines, |words| {
            gfx9::decode(target, words)
                .map(|i| (usize::from(i.len), gfx9::disassemble(target, &i)))
                .map_err(|e| e.to_string())
        });
        compared += n;
        mismatches.extend(m);
    }
    for m in &mismatches {
        eprintln!("{m}");
    }
    assert!(compared >= 70);
    assert!(mismatches.is_empty(), "{} differ", mismatches.len());
}

/// gfx950's scaled MFMA with every combination of its scale-select bits (op_sel bits 11-13 of
/// the first word, op_sel_hi bit 14 and bits 27-28 of the second): llvm-objdump lists the two
/// meaningful bits of each field, always prints op_sel_hi, and ignores the third bits.
#[test]
fn gfx950_scaled_mfma_scale_selects_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    let target = Target::Gfx950;
    // v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[8:11], v[8:11], a[0:3], v1, v1 cbsz:4 blgp:4
    let base = [0xD3AC_1000u32, 0x0002_0301, 0xD3AD_8C00, 0x8402_1108];
    let mut slots = Vec::new();
    for sel in 0..8u32 {
        for hi in 0..8u32 {
            let mut w = base.to_vec();
            w[0] = (w[0] & !(0xf << 11)) | sel << 11 | (hi >> 2) << 14;
            w[1] = (w[1] & !(3 << 27)) | (hi & 3) << 27;
            slots.push(w);
        }
    }
    let (compared, mismatches) = common::compare_words(target.name(), &[], &slots, |w| {
        gfx9::decode(target, w)
            .map(|i| (usize::from(i.len), gfx9::disassemble(target, &i)))
            .map_err(|e| e.to_string())
    });
    for m in &mismatches {
        eprintln!("{m}");
    }
    assert_eq!(compared, 64);
    assert!(mismatches.is_empty(), "{} differ", mismatches.len());
}

/// The cache-control instructions without operands (`buffer_wbl2`, `buffer_invl2`,
/// `buffer_wbinvl1_vol`, `buffer_inv`) with every combination of the glc, slc and scc bits, on
/// every CDNA target.
#[test]
fn cache_control_instructions_disassemble_like_llvm_objdump() {
    if llvm_tool("llc").is_none() || llvm_tool("llvm-objdump").is_none() {
        common::skip("llc/llvm-objdump not found (install the llvm-tools component)");
        return;
    }
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let mut slots = Vec::new();
        for op in [0x28u32, 0x29, 0x3e, 0x3f, 0x2b] {
            for bits in 0..8u32 {
                let (glc, slc, scc) = (bits & 1, bits >> 1 & 1, bits >> 2 & 1);
                let word0 = 0xE000_0000 | op << 18 | glc << 14 | scc << 15 | slc << 17;
                slots.push(vec![word0, 0]);
            }
        }
        // A word that does not decode is what llvm-objdump prints as `.long`.
        let (compared, mismatches) = common::compare_words(target.name(), &[], &slots, |w| {
            Ok(gfx9::decode(target, w).map_or_else(
                |_| (4, format!(".long {:#010x}", w[0])),
                |i| (usize::from(i.len), gfx9::disassemble(target, &i)),
            ))
        });
        for m in &mismatches {
            eprintln!("{m}");
        }
        assert_eq!(compared, 40, "{target}");
        assert!(
            mismatches.is_empty(),
            "{target}: {} differ",
            mismatches.len()
        );
    }
}
