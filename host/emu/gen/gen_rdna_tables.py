#!/usr/bin/env python3
"""Generate the RDNA (gfx1100, gfx1201) opcode tables of the emulator: src/rdna/opcodes.rs.

Inputs (facts only, no code is taken from either):
  * AMD's machine-readable ISA data for RDNA3 and RDNA4 as shipped in the PyPI wheel tinygrad==0.14.0
    (MIT), tinygrad/runtime/autogen/amd/{rdna3,rdna4}/{enum.py, operands.py}: opcode numbers per
    encoding and the width and number format of every operand of every instruction.
  * gen/llvm_rdna_mnemonics.json, written by gen/probe_llvm_rdna_mnemonics.py: for each target, the
    opcode slots LLVM's disassembler decodes and the mnemonic it prints. LLVM is the reference decoder,
    so it decides which slots exist on which target and how they are spelled; AMD's data supplies the
    operands (RDNA3's for gfx1100, RDNA4's for gfx1201).

Output: src/rdna/opcodes.rs with
  * `Op`: one variant per instruction (the LLVM mnemonic without `_e32`/`_e64`, upper-cased); a VOPD
    half names the instruction it performs (`v_dual_add_f32` is `V_ADD_F32`),
  * `OP_INFO`: per `Op` its mnemonic, whether LLVM prints an `_e32`/`_e64` suffix, whether its VOP3 form
    is VOP3SD, its operands, and which operands are lane masks (32 or 64 bits with the wave size),
  * `GFX1100`, `GFX1201`: per target and encoding, the dense opcode-number -> `Op` tables.

Run by hand (the output is committed, formatted by rustfmt):

    pip download --no-deps -d /tmp/tg tinygrad==0.14.0 && (cd /tmp/tg && unzip -o -q tinygrad-0.14.0-*.whl)
    python3 host/emu/gen/gen_rdna_tables.py --tinygrad /tmp/tg
"""
import argparse
import importlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"gfx1100": "rdna3", "gfx1201": "rdna4"}

# Encoding name -> (AMD enum classes holding its opcodes per ISA, number of opcode slots).
ENCODINGS = {
    "SOP1": ({"rdna3": ["SOP1Op"], "rdna4": ["SOP1Op"]}, 256),
    "SOP2": ({"rdna3": ["SOP2Op"], "rdna4": ["SOP2Op"]}, 128),
    "SOPK": ({"rdna3": ["SOPKOp"], "rdna4": ["SOPKOp"]}, 32),
    "SOPC": ({"rdna3": ["SOPCOp"], "rdna4": ["SOPCOp"]}, 128),
    "SOPP": ({"rdna3": ["SOPPOp"], "rdna4": ["SOPPOp"]}, 128),
    "SMEM": ({"rdna3": ["SMEMOp"], "rdna4": ["SMEMOp"]}, 256),
    "VOP1": ({"rdna3": ["VOP1Op"], "rdna4": ["VOP1Op"]}, 256),
    "VOP2": ({"rdna3": ["VOP2Op"], "rdna4": ["VOP2Op"]}, 64),
    "VOPC": ({"rdna3": ["VOPCOp"], "rdna4": ["VOPCOp"]}, 256),
    "VOP3": ({"rdna3": ["VOP3Op", "VOP3SDOp"], "rdna4": ["VOP3Op", "VOP3SDOp"]}, 1024),
    "VOP3P": ({"rdna3": ["VOP3POp"], "rdna4": ["VOP3POp"]}, 128),
    "VOPDX": ({"rdna3": ["VOPDOp"], "rdna4": ["VOPDOp"]}, 16),
    "VOPDY": ({"rdna3": ["VOPDOp"], "rdna4": ["VOPDOp"]}, 32),
    "DS": ({"rdna3": ["DSOp"], "rdna4": ["DSOp"]}, 256),
    "FLAT": ({"rdna3": ["FLATOp"], "rdna4": ["VFLATOp"]}, 256),
    "GLOBAL": ({"rdna3": ["GLOBALOp"], "rdna4": ["VGLOBALOp"]}, 256),
    "SCRATCH": ({"rdna3": ["SCRATCHOp"], "rdna4": ["VSCRATCHOp"]}, 256),
    "MUBUF": ({"rdna3": ["MUBUFOp"], "rdna4": ["VBUFFEROp"]}, 256),
}

# Operand slots of the emulator's tables, and the field names AMD's data uses for them.
SLOT_FIELDS = {
    "dst": ["sdst", "sdata", "vdst", "vdata", "vdsty"],
    "src0": ["ssrc0", "src0", "vsrc0", "sbase", "addr", "vaddr", "srcy0"],
    "src1": ["ssrc1", "vsrc1", "src1", "soffset", "data0", "data", "vsrc", "srsrc", "rsrc", "vsrcy1"],
    "src2": ["src2", "data1", "saddr"],
}
# A buffer instruction's soffset is its third operand (after vaddr and the resource); SMEM's is its second.
SLOT_OVERRIDES = {"MUBUF": {"soffset": "src2", "srsrc": "src1", "rsrc": "src1"}}

# Fields decoded from the encoding's bit fields, not from the operand table.
IMMEDIATE_FIELDS = {"simm16", "offset", "ioffset"}

# Where AMD's data gives an operand a shape LLVM does not read it as: the exponent of v_ldexp_f16 is a
# signed 32-bit integer, as the instruction's pseudocode says. The bf16 dot product exists only as a
# VOPD half, which AMD's data describes by its own field names: its operands are those of the f16 one.
OPERAND_FIXES = {
    "v_ldexp_f16": {"src1": (32, "Sint", "Src")},
    "v_dot2acc_f32_bf16": {"dst": (32, "Float", "Vgpr"), "src0": (32, "PackedBFloat", "Src"),
                           "src1": (32, "PackedBFloat", "Vgpr")},
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
    if f in ("I16", "I24", "I32", "I64"):
        return "Sint"
    return "Int"


def reg_kind(optype):
    """Which register files (or immediates) an operand slot may name."""
    n = optype.name
    if n in ("OPR_VGPR", "OPR_SRC_VGPR"):
        return "Vgpr"
    if n in ("OPR_SREG", "OPR_SDST", "OPR_SREG_NOVCC", "OPR_SMEM_OFFSET", "OPR_SMEM_OFFSET_NOK",
             "OPR_SDST_NULL", "OPR_EXEC", "OPR_SREG_M0"):
        return "Sgpr"
    if n.startswith("OPR_SRC") or n.startswith("OPR_SSRC") or n.startswith("OPR_SREG"):
        return "Src"
    return "Imm"


def load_amd(tinygrad_dir, isa):
    sys.path.insert(0, tinygrad_dir)
    enum = importlib.import_module(f"tinygrad.runtime.autogen.amd.{isa}.enum")
    operands = importlib.import_module(f"tinygrad.runtime.autogen.amd.{isa}.operands").OPERANDS
    by_slot = {}  # (encoding, opnum) -> (AMD's lower-case name, enum member)
    for enc, (classes, _) in ENCODINGS.items():
        for cls in classes[isa]:
            for member in getattr(enum, cls).__members__.values():
                by_slot.setdefault((enc, member.value), (member.name.lower(), member))
    return by_slot, operands


def base_name(mnemonic):
    return re.sub(r"_e(32|64)$", "", mnemonic)


def vopd_base(name):
    """The instruction a VOPD half performs: `v_dual_add_f32` -> `v_add_f32`."""
    return "v_" + name[len("v_dual_"):]


def slot_of(enc, field):
    over = SLOT_OVERRIDES.get(enc, {})
    if field in over:
        return over[field]
    for slot, fields in SLOT_FIELDS.items():
        if field in fields:
            return slot
    raise SystemExit(f"unknown operand field {field} in {enc}")


def operand_slots(enc, entry):
    """(slots, lane-mask slots) of one of AMD's operand entries."""
    slots, masks = {}, set()
    for field, (fmt, bits, optype) in entry.items():
        if field in IMMEDIATE_FIELDS or optype.name in ("OPR_LABEL", "OPR_SIMM16", "OPR_WAITCNT"):
            continue
        if field == "sdst" and "vdst" in entry:
            continue  # VOP3SD: the carry/flag destination, always a lane mask, has its own field
        slot = slot_of(enc, field)
        slots[slot] = (bits, num_type(fmt), reg_kind(optype))
        if fmt.name == "FMT_NUM_M64":
            masks.add(slot)
    return slots, masks


class Isa:
    """AMD's data for one ISA: opcode slots and operand entries by name."""

    def __init__(self, tinygrad_dir, isa):
        self.by_slot, self.operands = load_amd(tinygrad_dir, isa)
        self.by_name = {}
        for (enc, num), (name, member) in self.by_slot.items():
            key = vopd_base(name) if enc.startswith("VOPD") else base_name(name)
            self.by_name.setdefault(key, []).append((enc, num, member))

    def entry(self, name):
        """(slots, masks) of an instruction, its VOP3 form preferred (it names every operand)."""
        found = []
        for enc, num, member in self.by_name.get(name, []):
            if member in self.operands and not enc.startswith("VOPD"):
                found.append((enc != "VOP3", enc, operand_slots(enc, self.operands[member])))
        found.sort(key=lambda x: x[0])
        return found[0][2] if found else None

    def vop3sd(self, name):
        return any(m.__class__.__name__ == "VOP3SDOp" for _, _, m in self.by_name.get(name, []))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tinygrad", default="/tmp/tg", help="directory holding the unzipped tinygrad wheel")
    args = ap.parse_args()
    isas = {isa: Isa(args.tinygrad, isa) for isa in set(TARGETS.values())}
    with open(os.path.join(HERE, "llvm_rdna_mnemonics.json")) as f:
        llvm = json.load(f)

    ops = {}  # base mnemonic -> dict(encodings, suffixed, operands, masks, vop3sd, order)
    tables = {t: {enc: [None] * n for enc, (_, n) in ENCODINGS.items()} for t in TARGETS}
    for target, isa_name in TARGETS.items():
        isa = isas[isa_name]
        for enc in ENCODINGS:
            for num_s, mnemonic in sorted(llvm[target].get(enc, {}).items(), key=lambda kv: int(kv[0])):
                num = int(num_s)
                name = base_name(mnemonic)
                if enc.startswith("VOPD"):
                    name = vopd_base(name)
                op = ops.setdefault(name, {"encodings": set(), "suffixed": set(), "operands": None,
                                           "masks": set(), "vop3sd": False, "order": len(ops)})
                op["encodings"].add(enc)
                if mnemonic != base_name(mnemonic):
                    op["suffixed"].add(target)
                tables[target][enc][num] = name
                entry = isa.entry(name)
                if op["operands"] is None:
                    if entry is not None:
                        op["operands"], op["masks"] = entry
                        op["vop3sd"] = isa.vop3sd(name)
                elif entry is not None and entry[0] != op["operands"]:
                    # RDNA4 gives the instruction other operands (WMMA: half the A/B registers).
                    op["gfx12_operands"] = entry[0]

    # The all-zero word, in the VOP2 space but in no opcode slot, is `v_illegal` on both targets: the
    # hardware raises an illegal-instruction exception (padding between functions holds it).
    ops["v_illegal"] = {"encodings": {"VOP2"}, "suffixed": set(), "operands": {}, "masks": set(),
                        "vop3sd": False, "order": len(ops)}
    for name, fixes in OPERAND_FIXES.items():
        if name in ops:
            ops[name]["operands"] = {**(ops[name]["operands"] or {}), **fixes}
    for name, op in ops.items():
        if op["operands"] is None:
            op["operands"] = {}
            print(f"note: {name} has no operands", file=sys.stderr)
        for o in (op["operands"], op.get("gfx12_operands")):
            flat_or_global = "MUBUF" not in op["encodings"]
            if o is not None and "_atomic_cmpswap_" in name and flat_or_global and "dst" in o and "src1" in o:
                # AMD's data gives the destination the width of the data (new value and compare
                # value); the pre-op value it returns is half of that. A buffer atomic's data and
                # result share one register range (vdata), which keeps the data's width.
                bits, ty, kind = o["src1"]
                o["dst"] = (bits // 2, ty, kind)
        if op.get("gfx12_operands") == op["operands"]:
            del op["gfx12_operands"]
    write_rust(ops, tables)


def ident(name):
    return name.upper()


def spec(slot):
    if slot is None:
        return "NONE"
    bits, ty, kind = slot
    return f"o({bits}, T::{ty}, R::{kind})"


SLOTS = ("dst", "src0", "src1", "src2")


def write_rust(ops, tables):
    names = sorted(ops, key=lambda n: ops[n]["order"])
    out = []
    out.append("// @generated by host/emu/gen/gen_rdna_tables.py from AMD's machine-readable ISA data (the RDNA3")
    out.append("// and RDNA4 opcode and operand tables shipped in tinygrad 0.14.0,")
    out.append("// tinygrad/runtime/autogen/amd/{rdna3,rdna4}) and gen/llvm_rdna_mnemonics.json (the opcode slots")
    out.append("// and mnemonics LLVM's disassembler decodes per target). Do not edit by hand: change the")
    out.append("// generator and run it again.")
    out.append("")
    out.append("//! RDNA opcode tables: every instruction, its operand shapes, and the per-target opcode numbers.")
    out.append("")
    out.append("use super::tables::{NumType as T, OpInfo, OpcodeTables, OperandSpec, RegKind as R};")
    out.append("")
    out.append("const NONE: OperandSpec = OperandSpec::NONE;")
    out.append("")
    out.append("const fn o(bits: u16, ty: T, kind: R) -> OperandSpec {")
    out.append("    OperandSpec { bits, ty, kind }")
    out.append("}")
    out.append("")
    out.append("/// Every RDNA instruction the decoder knows, named as LLVM spells it (without `_e32`/`_e64`).")
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
    out.append("/// Number of [`Op`] variants.")
    out.append(f"pub const OP_COUNT: usize = {len(names)};")
    out.append("")
    out.append("/// Per [`Op`] (indexed by its discriminant): mnemonic, suffix rule, operand shapes and lane masks.")
    out.append("pub(crate) static OP_INFO: [OpInfo; OP_COUNT] = [")
    for n in names:
        op = ops[n]
        o = op["operands"]
        fields = ", ".join(spec(o.get(s)) for s in SLOTS)
        g12 = op.get("gfx12_operands")
        gfx12 = "None" if g12 is None else "Some([" + ", ".join(spec(g12.get(s)) for s in SLOTS) + "])"
        masks = sum(1 << i for i, s in enumerate(SLOTS) if s in op["masks"])
        suffixed = ", ".join(str(t in op["suffixed"]).lower() for t in TARGETS)
        out.append(f"    OpInfo {{ name: \"{n}\", suffixed: [{suffixed}], "
                   f"vop3sd: {str(op['vop3sd']).lower()}, lane_masks: {masks}, operands: [{fields}], "
                   f"gfx12_operands: {gfx12} }},")
    out.append("];")
    out.append("")
    for target in TARGETS:
        out.append(f"/// Opcode tables of {target}.")
        out.append(f"pub(crate) static {target.upper()}: OpcodeTables = OpcodeTables {{")
        for enc in ENCODINGS:
            slots = tables[target][enc]
            while slots and slots[-1] is None:
                slots = slots[:-1]
            out.append(f"    {enc.lower()}: &[")
            row = ["None" if s is None else f"Some(Op::{ident(s)})" for s in slots]
            for i in range(0, len(row), 4):
                out.append("        " + ", ".join(row[i:i + 4]) + ",")
            out.append("    ],")
        out.append("};")
        out.append("")
    path = os.path.join(HERE, "..", "src", "rdna", "opcodes.rs")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out))
    subprocess.check_call(["rustfmt", "--edition", "2024", path], cwd=HERE)
    print("wrote", os.path.normpath(path), f"({len(names)} instructions)")


if __name__ == "__main__":
    main()
