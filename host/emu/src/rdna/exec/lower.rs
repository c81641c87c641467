//! Which GFX9 instruction does what an RDNA instruction does.
//!
//! Most RDNA instructions are GFX9 instructions renamed (`s_and_not1_b32` is `s_andn2_b32`,
//! `global_load_b32` is `global_load_dword`, `v_add_nc_u32` is `v_add_u32`) or unchanged. For those
//! the emulator runs the GFX9 semantics: the per-lane ALU math, packed math, scalar ALU, LDS and
//! memory accesses are written once. The table is built from the mnemonics with the renaming rules
//! below; an instruction without an equivalent has RDNA semantics of its own (or is unsupported).

use super::super::inst::{Instruction, Operand};
use super::super::opcodes::{OP_COUNT, Op};
use super::super::tables::{Encoding, OpcodeTables};
use crate::Target;
use crate::gfx9;
use std::collections::HashMap;
use std::sync::OnceLock;

/// RDNA names whose GFX9 instruction has another name.
const RENAMES: [(&str, &str); 36] = [
    ("s_ctz_i32_b32", "s_ff1_i32_b32"),
    ("s_ctz_i32_b64", "s_ff1_i32_b64"),
    ("s_clz_i32_u32", "s_flbit_i32_b32"),
    ("s_clz_i32_u64", "s_flbit_i32_b64"),
    ("s_cls_i32", "s_flbit_i32"),
    ("s_cls_i32_i64", "s_flbit_i32_i64"),
    ("s_add_co_i32", "s_add_i32"),
    ("s_sub_co_i32", "s_sub_i32"),
    ("s_add_co_u32", "s_add_u32"),
    ("s_sub_co_u32", "s_sub_u32"),
    ("s_add_co_ci_u32", "s_addc_u32"),
    ("s_sub_co_ci_u32", "s_subb_u32"),
    ("s_addk_co_i32", "s_addk_i32"),
    ("v_add_nc_u32", "v_add_u32"),
    ("v_sub_nc_u32", "v_sub_u32"),
    ("v_subrev_nc_u32", "v_subrev_u32"),
    ("v_add_nc_u16", "v_add_u16"),
    ("v_sub_nc_u16", "v_sub_u16"),
    ("v_add_nc_i16", "v_add_i16"),
    ("v_sub_nc_i16", "v_sub_i16"),
    ("v_add_nc_i32", "v_add_i32"),
    ("v_sub_nc_i32", "v_sub_i32"),
    ("v_add_co_ci_u32", "v_addc_co_u32"),
    ("v_sub_co_ci_u32", "v_subb_co_u32"),
    ("v_subrev_co_ci_u32", "v_subbrev_co_u32"),
    ("v_mad_co_u64_u32", "v_mad_u64_u32"),
    ("v_mad_co_i64_i32", "v_mad_i64_i32"),
    ("v_cvt_nearest_i32_f32", "v_cvt_rpi_i32_f32"),
    ("v_cvt_floor_i32_f32", "v_cvt_flr_i32_f32"),
    ("v_clz_i32_u32", "v_ffbh_u32"),
    ("v_ctz_i32_b32", "v_ffbl_b32"),
    ("v_cls_i32", "v_ffbh_i32"),
    ("v_cvt_pk_rtz_f16_f32", "v_cvt_pkrtz_f16_f32"),
    ("v_dot2acc_f32_f16", "v_dot2c_f32_f16"),
    ("v_dot2acc_f32_bf16", "v_dot2c_f32_bf16"),
    ("v_mul_dx9_zero_f32", "v_mul_legacy_f32"),
];

/// The 16-bit bitwise operations compute like their 32-bit forms (the result keeps 16 bits).
const WIDENED: [(&str, &str); 6] = [
    ("v_and_b16", "v_and_b32"),
    ("v_or_b16", "v_or_b32"),
    ("v_xor_b16", "v_xor_b32"),
    ("v_not_b16", "v_not_b32"),
    ("v_mov_b16", "v_mov_b32"),
    ("v_cndmask_b16", "v_cndmask_b32"),
];

/// The GFX9 mnemonic an RDNA mnemonic corresponds to (it may not exist).
fn gfx9_name(name: &str) -> String {
    if let Some((_, g)) = RENAMES.iter().chain(&WIDENED).find(|(r, _)| *r == name) {
        return (*g).to_string();
    }
    let mut n = name.to_string();
    // Scalar bit operations with an inverted operand, and the wave-size saveexec forms.
    for (from, to) in [
        ("_and_not1_", "_andn2_"),
        ("_or_not1_", "_orn2_"),
        ("_and_not0_", "_andn1_"),
        ("_or_not0_", "_orn1_"),
    ] {
        n = n.replace(from, to);
    }
    for suffix in ["_saveexec_b32", "_wrexec_b32"] {
        if let Some(stem) = n.strip_suffix(suffix) {
            n = format!("{stem}{}", suffix.replace("b32", "b64"));
        }
    }
    // gfx12 "num" min/max are the non-IEEE-mode ones; a VALU operation with a scalar result
    // (`v_s_log_f32`) computes what its vector form does.
    n = n.replace("_num_", "_");
    if let Some(rest) = n.strip_prefix("v_s_") {
        n = format!("v_{rest}");
    }
    if let Some(rest) = n.strip_prefix("ds_") {
        return format!("ds_{}", ds_name(rest));
    }
    for prefix in ["global_", "flat_", "scratch_"] {
        if let Some(rest) = n.strip_prefix(prefix) {
            return format!("{prefix}{}", memory_name(rest));
        }
    }
    n
}

/// A DS operation's GFX9 name.
fn ds_name(rest: &str) -> String {
    for (from, to) in [
        ("load_2addr_stride64_", "read2st64_"),
        ("load_2addr_", "read2_"),
        ("store_2addr_stride64_", "write2st64_"),
        ("store_2addr_", "write2_"),
        ("storexchg_2addr_stride64_rtn_", "wrxchg2st64_rtn_"),
        ("storexchg_2addr_rtn_", "wrxchg2_rtn_"),
        ("storexchg_rtn_", "wrxchg_rtn_"),
        ("cmpstore_", "cmpst_"),
        ("load_", "read_"),
        ("store_", "write_"),
    ] {
        if let Some(r) = rest.strip_prefix(from) {
            return format!("{to}{r}");
        }
    }
    rest.to_string()
}

/// A FLAT/GLOBAL/SCRATCH/buffer operation's GFX9 name (the part after the prefix).
pub(super) fn memory_name(rest: &str) -> String {
    let size = |s: &str| -> Option<&'static str> {
        Some(match s {
            "u8" => "ubyte",
            "i8" => "sbyte",
            "u16" => "ushort",
            "i16" => "sshort",
            "b8" => "byte",
            "b16" => "short",
            "b32" => "dword",
            "b64" => "dwordx2",
            "b96" => "dwordx3",
            "b128" => "dwordx4",
            _ => return None,
        })
    };
    for (kind, gfx9_kind) in [("load_", "load_"), ("store_", "store_")] {
        let Some(r) = rest.strip_prefix(kind) else {
            continue;
        };
        let (r, d16) = if let Some(x) = r.strip_prefix("d16_hi_") {
            (x, "_d16_hi")
        } else if let Some(x) = r.strip_prefix("d16_") {
            (x, "_d16")
        } else {
            (r, "")
        };
        // GFX9 names a 16-bit d16 access by its signedness ("short_d16"), not "ushort".
        let base = match (r, d16.is_empty()) {
            ("b16", false) => Some("short"),
            (s, _) => size(s),
        };
        if let Some(b) = base {
            return format!("{gfx9_kind}{b}{d16}");
        }
    }
    if let Some(r) = rest.strip_prefix("atomic_") {
        let (op, ty) = r.rsplit_once('_').unwrap_or((r, ""));
        let wide = matches!(ty, "b64" | "u64" | "i64");
        let op = match (op, ty) {
            ("min", "i32" | "i64") => "smin",
            ("max", "i32" | "i64") => "smax",
            ("min", "u32" | "u64") => "umin",
            ("max", "u32" | "u64") => "umax",
            (_, "f32" | "f16" | "bf16" | "f64") => return format!("atomic_{r}"),
            (op, _) => op,
        };
        return format!("atomic_{op}{}", if wide { "_x2" } else { "" });
    }
    rest.to_string()
}

/// Every RDNA instruction, by discriminant, with its GFX9 equivalent.
fn table() -> &'static [Option<gfx9::Op>] {
    static TABLE: OnceLock<Vec<Option<gfx9::Op>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut gfx9_ops: HashMap<&'static str, gfx9::Op> = HashMap::new();
        for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            if let Some(t) = gfx9::OpcodeTables::for_target(target) {
                for enc in gfx9::Encoding::ALL {
                    for (_, op) in t.slots(enc) {
                        gfx9_ops.insert(op.name(), op);
                    }
                }
            }
        }
        let mut out = vec![None; OP_COUNT];
        for target in [Target::Gfx1100, Target::Gfx1201] {
            if let Some(t) = OpcodeTables::for_target(target) {
                for enc in Encoding::ALL {
                    for (_, op) in t.slots(enc) {
                        out[op as usize] = gfx9_ops.get(gfx9_name(op.name()).as_str()).copied();
                    }
                }
            }
        }
        out
    })
}

/// The GFX9 instruction with the same semantics as `op`, if there is one.
pub(crate) fn gfx9_op(op: Op) -> Option<gfx9::Op> {
    table()[op as usize]
}

/// `i` as the GFX9 instruction `op` of encoding `format`: the same operands and fields. An atomic
/// returns its pre-op value when it has a destination.
pub(crate) fn gfx9_instruction(
    i: &Instruction,
    op: gfx9::Op,
    format: gfx9::Format,
) -> gfx9::Instruction {
    let f = i.fields;
    gfx9::Instruction {
        op,
        format,
        len: i.len,
        dst: i.dst,
        sdst: i.sdst,
        src: i.src,
        scale: [Operand::NONE; 2],
        mods: i.mods,
        ext: gfx9::Ext::None,
        fields: gfx9::Fields {
            imm: f.imm,
            offset1: f.offset1,
            gds: f.gds,
            glc: i.dst.is_some(),
            slc: f.slc,
            sve: f.sve,
            offen: f.offen,
            idxen: f.idxen,
            ..gfx9::Fields::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_instructions_find_their_gfx9_equivalent() {
        let cases = [
            (Op::S_AND_NOT1_B32, gfx9::Op::S_ANDN2_B32),
            (Op::S_AND_SAVEEXEC_B32, gfx9::Op::S_AND_SAVEEXEC_B64),
            (Op::S_AND_NOT1_SAVEEXEC_B32, gfx9::Op::S_ANDN2_SAVEEXEC_B64),
            (Op::V_ADD_NC_U32, gfx9::Op::V_ADD_U32),
            (Op::V_ADD_CO_CI_U32, gfx9::Op::V_ADDC_CO_U32),
            (Op::DS_LOAD_2ADDR_STRIDE64_B32, gfx9::Op::DS_READ2ST64_B32),
            (Op::DS_STORE_B128, gfx9::Op::DS_WRITE_B128),
            (Op::DS_CMPSTORE_RTN_B32, gfx9::Op::DS_CMPST_RTN_B32),
            (Op::GLOBAL_LOAD_B128, gfx9::Op::GLOBAL_LOAD_DWORDX4),
            (
                Op::GLOBAL_LOAD_D16_HI_B16,
                gfx9::Op::GLOBAL_LOAD_SHORT_D16_HI,
            ),
            (Op::GLOBAL_LOAD_D16_U8, gfx9::Op::GLOBAL_LOAD_UBYTE_D16),
            (
                Op::GLOBAL_STORE_D16_HI_B8,
                gfx9::Op::GLOBAL_STORE_BYTE_D16_HI,
            ),
            (Op::GLOBAL_ATOMIC_MAX_I32, gfx9::Op::GLOBAL_ATOMIC_SMAX),
            (Op::GLOBAL_ATOMIC_ADD_U64, gfx9::Op::GLOBAL_ATOMIC_ADD_X2),
            (
                Op::GLOBAL_ATOMIC_CMPSWAP_B32,
                gfx9::Op::GLOBAL_ATOMIC_CMPSWAP,
            ),
            (Op::GLOBAL_ATOMIC_ADD_F32, gfx9::Op::GLOBAL_ATOMIC_ADD_F32),
            (Op::SCRATCH_STORE_B128, gfx9::Op::SCRATCH_STORE_DWORDX4),
            (Op::V_MAX_NUM_F32, gfx9::Op::V_MAX_F32),
            (Op::V_CMP_LT_F32, gfx9::Op::V_CMP_LT_F32),
            (Op::V_FMA_MIXLO_F16, gfx9::Op::V_FMA_MIXLO_F16),
        ];
        for (rdna, want) in cases {
            assert_eq!(gfx9_op(rdna), Some(want), "{}", rdna.name());
        }
    }

    #[test]
    fn instructions_without_an_equivalent_have_none() {
        for op in [Op::S_DELAY_ALU, Op::V_PERMLANE16_B32, Op::S_ADD_NC_U64] {
            assert_eq!(gfx9_op(op), None, "{}", op.name());
        }
    }
}
