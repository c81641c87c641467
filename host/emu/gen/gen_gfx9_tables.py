#!/usr/bin/env python3
"""Generate the GFX9 (gfx90a, gfx942, gfx950) opcode tables of the emulator: src/gfx9/opcodes.rs.

Inputs (facts only, no code is taken from either):
  * AMD's machine-readable ISA data for CDNA4 as shipped in the PyPI wheel tinygrad==0.14.0 (MIT),
    tinygrad/runtime/autogen/amd/cdna/{enum.py, operands.py}: opcode numbers per encoding and the
    width and number format of every operand of every instruction.
  * gen/llvm_gfx9_mnemonics.json, written by gen/probe_llvm_mnemonics.py: for each target, the opcode
    slots LLVM's disassembler decodes and the mnemonic it prints. LLVM is the reference decoder, so it
    decides which slots exist on which target and how they are spelled; AMD's data supplies the operands.

Output: src/gfx9/opcodes.rs with
  * `Op`: one variant per instruction (the LLVM mnemonic without `_e32`/`_e64`, upper-cased),
  * `OP_INFO`: per `Op` its mnemonic, whether LLVM prints an `_e32`/`_e64` suffix, and its operands,
  * `GFX90A`, `GFX942`, `GFX950`: per target and encoding, the dense opcode-number -> `Op` tables.

Run by hand (the output is committed):

    pip download --no-deps -d /tmp/tg tinygrad==0.14.0 && (cd /tmp/tg && unzip -o -q tinygrad-0.14.0-*.whl)
    python3 host/emu/gen/gen_gfx9_tables.py --tinygrad /tmp/tg
"""
import argparse
import importlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = ["gfx90a", "gfx942", "gfx950"]

# Encoding name -> (tinygrad enum classes holding its opcodes, number of opcode slots).
ENCODINGS = {
    "SOP1": (["SOP1Op"], 256),
    "SOP2": (["SOP2Op"], 128),
    "SOPK": (["SOPKOp"], 32),
    "SOPC": (["SOPCOp"], 128),
    "SOPP": (["SOPPOp"], 128),
    "SMEM": (["SMEMOp"], 256),
    "VOP1": (["VOP1Op"], 256),
    "VOP2": (["VOP2Op"], 64),
    "VOPC": (["VOPCOp"], 256),
    "VOP3": (["VOP3Op", "VOP3SDOp"], 0x380),
    "VOP3P": (["VOP3POp"], 128),
    "DS": (["DSOp"], 256),
    "FLAT": (["FLATOp"], 128),
    "GLOBAL": (["GLOBALOp"], 128),
    "SCRATCH": (["SCRATCHOp"], 128),
    "MUBUF": (["MUBUFOp"], 128),
    "MTBUF": (["MTBUFOp"], 16),
    "VOP3PX2": (["VOP3PX2Op"], 128),
    # Image instructions (gfx90a): absent from AMD's CDNA4 data, named by LLVM; the decoder takes
    # their operands from the encoding's fields (dmask, d16, the resource size).
    "MIMG": ([], 128),
}
# LLVM decodes VOP3PX2 (a scale-loading VOP3P word pair followed by an MFMA word pair) only as a pair,
# so the probe cannot see it; on the targets whose data describes it, AMD's table is used directly.
AMD_ONLY_ENCODINGS = {"VOP3PX2": ["gfx950"]}

# Operand slots of the emulator's tables, and the field names AMD's data uses for them per encoding.
SLOT_FIELDS = {
    "dst": ["sdst", "sdata", "vdst", "vdata"],
    "src0": ["ssrc0", "src0", "sbase", "addr", "vaddr"],
    "src1": ["ssrc1", "vsrc1", "src1", "soffset", "data0", "data", "srsrc"],
    "src2": ["src2", "data1", "saddr"],
}
# MUBUF's soffset is its third operand (after vaddr and srsrc); SMEM's is its second.
SLOT_OVERRIDES = {"MUBUF": {"soffset": "src2", "srsrc": "src1"}}

# LLVM spells a few of AMD's instructions differently (same opcode, same operands).
LLVM_RENAMES = {
    "v_mad_mix_f32": "v_fma_mix_f32",
    "v_mad_mixlo_f16": "v_fma_mixlo_f16",
    "v_mad_mixhi_f16": "v_fma_mixhi_f16",
    "v_accvgpr_read": "v_accvgpr_read_b32",
    "v_accvgpr_write": "v_accvgpr_write_b32",
}

# Instructions LLVM decodes on gfx90a/gfx942 that AMD's CDNA4 data no longer has: their operands are
# those of the named CDNA4 instruction with the same operand shapes.
OPERANDS_LIKE = {
    "v_mac_f32": "v_fmac_f32",
    "v_madmk_f32": "v_fmamk_f32",
    "v_madak_f32": "v_fmaak_f32",
    "v_mad_legacy_f32": "v_fma_f32",
    "v_mad_f32": "v_fma_f32",
    "buffer_invl2": "buffer_inv",
    "buffer_wbinvl1": "buffer_wbl2",
    "buffer_wbinvl1_vol": "buffer_wbl2",
}

# gfx90a MFMA spellings without a block count: the number of blocks each computes (from the CDNA2 ISA).
MFMA_OLD_BLOCKS = {
    "v_mfma_f32_32x32x1f32": 2, "v_mfma_f32_16x16x1f32": 4, "v_mfma_f32_4x4x1f32": 16,
    "v_mfma_f32_32x32x2f32": 1, "v_mfma_f32_16x16x4f32": 1,
    "v_mfma_f32_32x32x4f16": 2, "v_mfma_f32_16x16x4f16": 4, "v_mfma_f32_4x4x4f16": 16,
    "v_mfma_f32_32x32x8f16": 1, "v_mfma_f32_16x16x16f16": 1,
    "v_mfma_i32_32x32x4i8": 2, "v_mfma_i32_16x16x4i8": 4, "v_mfma_i32_4x4x4i8": 16,
    "v_mfma_i32_32x32x8i8": 1, "v_mfma_i32_16x16x16i8": 1,
    "v_mfma_f32_32x32x2bf16": 2, "v_mfma_f32_16x16x2bf16": 4, "v_mfma_f32_4x4x2bf16": 16,
    "v_mfma_f32_32x32x4bf16": 1, "v_mfma_f32_16x16x8bf16": 1,
    "v_mfma_f32_32x32x4bf16_1k": 2, "v_mfma_f32_16x16x4bf16_1k": 4, "v_mfma_f32_4x4x4bf16_1k": 16,
    "v_mfma_f32_32x32x8bf16_1k": 1, "v_mfma_f32_16x16x16bf16_1k": 1,
    "v_mfma_f64_16x16x4f64": 1, "v_mfma_f64_4x4x4f64": 4,
}
# gfx942 xf32 MFMAs (absent from CDNA4): (A/B bits, C/D bits) per lane.
MFMA_XF32 = {"v_mfma_f32_16x16x8_xf32": (64, 128), "v_mfma_f32_32x32x4_xf32": (64, 512)}
ELEMENT_BITS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8, "f64": 64}


# Where AMD's data gives an operand a type the instruction does not read it as (the exponent of
# v_ldexp_f16 is a signed 32-bit integer, as the instruction's pseudocode says).
# LLVM also reads a few packed sources as plain 32-bit operands (their constants print as 32-bit).
OPERAND_FIXES = {
    "v_ldexp_f16": {"src1": (32, "Sint", "Src")},
    # The global wave sync instructions (absent from AMD's CDNA4 data) that take a value: in the
    # address field, as LLVM encodes it.
    "ds_gws_init": {"src0": (32, "Int", "Vgpr")},
    "ds_gws_barrier": {"src0": (32, "Int", "Vgpr")},
    "ds_gws_sema_br": {"src0": (32, "Int", "Vgpr")},
    "v_sat_pk_u8_i16": {"src0": (32, "Int", "Src")},
    "v_dot2c_i32_i16": {"src0": (32, "Int", "Src"), "src1": (32, "Int", "Src")},
}


def llvm_reads_as_32bit(name, slot):
    """The 8-bit, 4-bit and bf16 conversion instructions take their 16-bit packed sources as 32-bit operands."""
    return slot != "dst" and re.search(r"(fp8|bf8|fp4|bf16|fp6|bf6)", name) is not None


def mfma_old_operands(name):
    """Operand widths of a gfx90a-spelled MFMA: A and B hold M*K*blocks/64 elements per lane, C/D M*N*blocks/64."""
    m = re.match(r"v_mfma_(f32|i32|f64)_(\d+)x(\d+)x(\d+)(f32|f16|bf16|i8|f64)(_1k)?$", name)
    out_t, mdim, ndim, kdim, in_t, _ = m.groups()
    blocks = MFMA_OLD_BLOCKS[name]
    ab_bits = int(mdim) * int(kdim) * blocks // 64 * ELEMENT_BITS[in_t]
    cd_bits = int(mdim) * int(ndim) * blocks // 64 * ELEMENT_BITS[out_t.replace("i32", "f32")]
    ab_ty = "Float" if in_t in ("f32", "f64") else ("Int" if in_t == "i8" else "PackedFloat")
    cd_ty = "Int" if out_t == "i32" else "Float"
    return {
        "dst": (cd_bits, cd_ty, "VgprOrAgpr"),
        "src0": (ab_bits, ab_ty, "VgprOrAgpr"),
        "src1": (ab_bits, ab_ty, "VgprOrAgpr"),
        "src2": (cd_bits, cd_ty, "Src"),
    }


def num_type(fmt):
    """The emulator's number kind for one of AMD's operand formats."""
    f = fmt.name[len("FMT_NUM_"):] if fmt.name.startswith("FMT_NUM_") else ""
    if f in ("F16", "F32", "F64"):
        return "Float"
    if f == "BF16":
        return "BFloat"
    if f == "PK2_F16":
        return "PackedFloat"
    if f == "PK2_BF16":
        return "PackedBFloat"
    if f in ("PK2_I16", "PK2_U16", "PK2_B16"):
        return "PackedInt"
    if f in ("PK2_F32", "PK2_B32"):
        return "PackedFloat32"
    if f.startswith("PK") and ("F32" in f or "F64" in f):
        return "Float"
    if f in ("I16", "I24", "I32", "I64"):
        return "Sint"
    return "Int"


def reg_kind(optype):
    """Which register files (or immediates) an operand slot may name."""
    n = optype.name
    if n in ("OPR_VGPR", "OPR_SRC_VGPR"):
        return "Vgpr"
    if n in ("OPR_VGPR_OR_ACCVGPR", "OPR_SRC_VGPR_OR_ACCVGPR"):
        return "VgprOrAgpr"
    if n in ("OPR_ACCVGPR", "OPR_SRC_ACCVGPR"):
        return "Agpr"
    if n in ("OPR_SREG", "OPR_SDST", "OPR_SREG_NOVCC", "OPR_SMEM_OFFSET"):
        return "Sgpr"
    if n.startswith("OPR_SRC") or n.startswith("OPR_SSRC") or n == "OPR_VGPR_OR_LDS":
        return "Src"
    return "Imm"


def load_amd(tinygrad_dir):
    sys.path.insert(0, tinygrad_dir)
    enum = importlib.import_module("tinygrad.runtime.autogen.amd.cdna.enum")
    operands = importlib.import_module("tinygrad.runtime.autogen.amd.cdna.operands").OPERANDS
    by_slot = {}  # (encoding, opnum) -> (AMD's lower-case name, enum member)
    for enc, (classes, _) in ENCODINGS.items():
        for cls in classes:
            for member in getattr(enum, cls).__members__.values():
                by_slot.setdefault((enc, member.value), (member.name.lower(), member))
    return by_slot, operands


def base_name(mnemonic):
    return re.sub(r"_e(32|64)$", "", mnemonic)


def amd_base_name(name):
    name = base_name(name)
    return LLVM_RENAMES.get(name, name)


def slot_of(enc, field):
    over = SLOT_OVERRIDES.get(enc, {})
    if field in over:
        return over[field]
    for slot, fields in SLOT_FIELDS.items():
        if field in fields:
            return slot
    raise SystemExit(f"unknown operand field {field} in {enc}")


# Immediate fields are decoded from the encoding's bit fields, not from the operand table.
IMMEDIATE_FIELDS = {"simm16", "scale_src0", "scale_src1"}


def operand_slots(enc, entry):
    slots = {}
    for field, (fmt, bits, optype) in entry.items():
        if field in IMMEDIATE_FIELDS:
            continue
        slots[slot_of(enc, field)] = (bits, num_type(fmt), reg_kind(optype))
    return slots


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tinygrad", default="/tmp/tg", help="directory holding the unzipped tinygrad wheel")
    args = ap.parse_args()
    by_slot, amd_operands = load_amd(args.tinygrad)
    with open(os.path.join(HERE, "llvm_gfx9_mnemonics.json")) as f:
        llvm = json.load(f)

    ops = {}  # base mnemonic -> dict(encodings=set, suffixed=bool, operands=dict, vop3b=bool, order=int)
    tables = {t: {enc: [None] * n for enc, (_, n) in ENCODINGS.items()} for t in TARGETS}
    amd_by_name = {}
    for (enc, num), (name, member) in by_slot.items():
        amd_by_name.setdefault(amd_base_name(name), []).append((enc, num, member))

    def amd_entry_for(name):
        """AMD's operand entries for an instruction, its VOP3 form preferred (it names every operand)."""
        found = []
        for enc, num, member in amd_by_name.get(name, []):
            if member in amd_operands:
                found.append((enc != "VOP3", enc, operand_slots(enc, amd_operands[member]), member))
        found.sort(key=lambda x: x[0])
        return found

    for enc, targets in AMD_ONLY_ENCODINGS.items():
        for target in targets:
            for (e, num), (name, _) in by_slot.items():
                if e == enc:
                    llvm[target].setdefault(enc, {})[str(num)] = name
    for target in TARGETS:
        for enc, (_, nslots) in ENCODINGS.items():
            for num_s, mnemonic in sorted(llvm[target].get(enc, {}).items(), key=lambda kv: int(kv[0])):
                num = int(num_s)
                name = base_name(mnemonic)
                op = ops.setdefault(name, {"encodings": set(), "suffixed": False, "operands": None,
                                           "vop3b": False, "order": len(ops)})
                op["encodings"].add(enc)
                if mnemonic != name:
                    op["suffixed"] = True
                tables[target][enc][num] = name
                if op["operands"] is None:
                    amd = by_slot.get((enc, num))
                    if amd is not None and amd_base_name(amd[0]) == name:
                        entries = amd_entry_for(name)
                        if entries:
                            op["operands"] = entries[0][2]
                        op["vop3b"] = any(m.__class__.__name__ == "VOP3SDOp" for _, _, m in amd_by_name[name])

    for name, op in ops.items():
        if op["operands"] is not None:
            continue
        if name in OPERANDS_LIKE:
            entries = amd_entry_for(OPERANDS_LIKE[name])
            op["operands"] = entries[0][2] if entries else {}
        elif name in MFMA_OLD_BLOCKS:
            op["operands"] = mfma_old_operands(name)
        elif name in MFMA_XF32:
            ab, cd = MFMA_XF32[name]
            op["operands"] = {"dst": (cd, "Float", "VgprOrAgpr"), "src0": (ab, "Float", "VgprOrAgpr"),
                              "src1": (ab, "Float", "VgprOrAgpr"), "src2": (cd, "Float", "Src")}
        else:
            entries = amd_entry_for(name)
            if entries:
                op["operands"] = entries[0][2]
            else:
                op["operands"] = {}
                print(f"note: {name} has no operands", file=sys.stderr)

    for name, fixes in OPERAND_FIXES.items():
        if name in ops:
            ops[name]["operands"].update(fixes)
    for name, op in ops.items():
        for slot, (bits, ty, kind) in list(op["operands"].items()):
            if bits == 16 and llvm_reads_as_32bit(name, slot):
                op["operands"][slot] = (32, ty, kind)
    write_rust(ops, tables)


def ident(name):
    return name.upper()


def spec(slot):
    if slot is None:
        return "NONE"
    bits, ty, kind = slot
    return f"O({bits}, T::{ty}, R::{kind})"


def write_rust(ops, tables):
    names = sorted(ops, key=lambda n: ops[n]["order"])
    out = []
    out.append("// @generated by host/emu/gen/gen_gfx9_tables.py from AMD's machine-readable ISA data (the CDNA4")
    out.append("// opcode and operand tables shipped in tinygrad 0.14.0, tinygrad/runtime/autogen/amd/cdna) and")
    out.append("// gen/llvm_gfx9_mnemonics.json (the opcode slots and mnemonics LLVM's disassembler decodes per")
    out.append("// target). Do not edit by hand: change the generator and run it again.")
    out.append("")
    out.append("//! GFX9 opcode tables: every instruction, its operand shapes, and the per-target opcode numbers.")
    out.append("")
    out.append("use super::tables::{NumType as T, OpInfo, OpcodeTables, OperandSpec, RegKind as R};")
    out.append("")
    out.append("const NONE: OperandSpec = OperandSpec::NONE;")
    out.append("")
    out.append("const fn o(bits: u16, ty: T, kind: R) -> OperandSpec {")
    out.append("    OperandSpec { bits, ty, kind }")
    out.append("}")
    out.append("")
    out.append("/// Every GFX9 instruction the decoder knows, named as LLVM spells it (without `_e32`/`_e64`).")
    out.append("#[allow(non_camel_case_types)]")
    out.append("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    out.append("#[repr(u16)]")
    out.append("pub enum Op {")
    for n in names:
        encs = ", ".join(sorted(ops[n]["encodings"]))
        out.append(f"    /// `{n}` ({encs}).")
        out.append(f"    {ident(n)},")
    out.append("}")
    out.append("")
    out.append(f"/// Number of [`Op`] variants.")
    out.append(f"pub const OP_COUNT: usize = {len(names)};")
    out.append("")
    out.append("/// Per [`Op`] (indexed by its discriminant): mnemonic, suffix rule and operand shapes.")
    out.append(f"pub(crate) static OP_INFO: [OpInfo; OP_COUNT] = [")
    for n in names:
        op = ops[n]
        o = op["operands"]
        fields = ", ".join(spec(o.get(s)) for s in ("dst", "src0", "src1", "src2"))
        line = (f"    OpInfo {{ name: \"{n}\", suffixed: {str(op['suffixed']).lower()}, "
                f"vop3b: {str(op['vop3b']).lower()}, operands: [{fields}] }},")
        out.append(line.replace("O(", "o("))
    out.append("];")
    out.append("")
    for target in TARGETS:
        out.append(f"/// Opcode tables of {target}.")
        out.append(f"pub(crate) static {target.upper()}: OpcodeTables = OpcodeTables {{")
        for enc in ENCODINGS:
            slots = tables[target][enc]
            out.append(f"    {enc.lower()}: &[")
            row = []
            for s in slots:
                row.append("None" if s is None else f"Some(Op::{ident(s)})")
            for i in range(0, len(row), 4):
                out.append("        " + ", ".join(row[i:i + 4]) + ",")
            out.append("    ],")
        out.append("};")
        out.append("")
    path = os.path.join(HERE, "..", "src", "gfx9", "opcodes.rs")
    with open(path, "w") as f:
        f.write("\n".join(out))
    print("wrote", os.path.normpath(path), f"({len(names)} instructions)")


if __name__ == "__main__":
    main()
