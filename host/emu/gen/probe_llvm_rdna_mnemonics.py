#!/usr/bin/env python3
"""Ask LLVM's disassembler which opcode numbers gfx1100 (RDNA3) and gfx1201 (RDNA4) know, and by what
mnemonic.

LLVM is the reference decoder: it decides which opcode slots exist on each target and how they are
spelled. This script builds one probe instruction per (encoding, opcode number), disassembles it with
`llvm-objdump --mcpu=<target>`, and records the mnemonic LLVM prints. VOPD (dual issue) is probed per
half: the X opcodes with `v_dual_add_f32` as Y, the Y opcodes with `v_dual_add_f32` as X.

LLVM decodes gfx1201 without true16 by default, and a few gfx1201 instructions exist only in its true16
tables (`v_mov_b16`, `v_swap_b16`): a second pass with `--mattr=+real-true16` fills the slots the default
pass leaves empty.

Output: gen/llvm_rdna_mnemonics.json, {target: {encoding: {opcode: mnemonic}}}; read by
gen_rdna_tables.py. Run by hand when the toolchain changes:

    python3 host/emu/gen/probe_llvm_rdna_mnemonics.py

Needs `llc` and `llvm-objdump` from the pinned toolchain's llvm-tools (found through `rustc --print sysroot`).
"""
import json
import os
import re
import subprocess
import tempfile

from probe_llvm_mnemonics import FIELD_COMBOS, NOP, STRIDE, tool

TARGETS = ["gfx1100", "gfx1201"]
NULL = 124  # the null SGPR ("off" as a memory instruction's saddr)
VOPD_ADD = 4  # v_dual_add_f32 in both VOPD halves (it reads both sources)


def common_probes():
    """Probes whose encoding is the same on gfx11 and gfx12."""
    out = []
    for op in range(0x60):  # SOP2 slots 0x60.. alias SOPK/SOP1/SOPC/SOPP
        out.append(("SOP2", op, [(0b10 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 0]))
    for op in range(29):  # SOPK slots 29..31 alias SOP1/SOPC/SOPP
        out.append(("SOPK", op, [(0b1011 << 28) | (op << 23) | (4 << 16) | 0x10]))
    for op in range(256):
        out.append(("SOP1", op, [(0x17D << 23) | (4 << 16) | (op << 8) | 0]))
        out.append(("SOP1", op, [(0x17D << 23) | (NULL << 16) | (op << 8) | 0]))
    for op in range(128):
        out.append(("SOPC", op, [(0x17E << 23) | (op << 16) | (2 << 8) | 0]))
    for op in range(128):
        out.append(("SOPP", op, [(0x17F << 23) | (op << 16) | 0]))
    for op in range(64):
        out.append(("VOP2", op, [(op << 25) | (1 << 17) | (2 << 9) | (256 + 3)]))
    for op in range(256):
        out.append(("VOP1", op, [(0b0111111 << 25) | (2 << 17) | (op << 9) | (256 + 4)]))
        out.append(("VOP1", op, [(0b0111111 << 25) | (op << 9)]))
    for op in range(256):
        out.append(("VOPC", op, [(0b0111110 << 25) | (op << 17) | (2 << 9) | (256 + 4)]))
    for op in range(1024):
        out.append(("VOP3", op, [(0b110101 << 26) | (op << 16) | 2, (256 + 4) | ((256 + 6) << 9) | ((256 + 8) << 18)]))
    for op in range(128):
        out.append(("VOP3P", op, [(0b11001100 << 24) | (op << 16) | (1 << 14) | 2,
                                  (256 + 4) | ((256 + 6) << 9) | ((256 + 8) << 18) | (3 << 27)]))
    for op in range(32):
        for vsrc1 in (True, False):  # one-source opcodes need a zero vsrc1 field
            if op < 16:
                out.append(("VOPDX", op, vopd(op, VOPD_ADD, x_vsrc1=vsrc1)))
            out.append(("VOPDY", op, vopd(VOPD_ADD, op, y_vsrc1=vsrc1)))
    for op in range(256):
        for data0, data1, vdst in FIELD_COMBOS:
            for addr in (2, 0):
                out.append(("DS", op, [(0b110110 << 26) | (op << 18),
                                       addr | (4 * data0 << 8) | (6 * data1 << 16) | (8 * vdst << 24)]))
    return out


def vopd(opx, opy, x_vsrc1=True, y_vsrc1=True):
    """A VOPD word pair: X writes v2 from v4 and v6, Y writes v3 from v9 and v11 (other VGPR banks)."""
    return [(0b110010 << 26) | (opx << 22) | (opy << 17) | (6 * x_vsrc1 << 9) | (256 + 4),
            (2 << 24) | (1 << 17) | (11 * y_vsrc1 << 9) | (256 + 9)]


def gfx11_probes():
    out = []
    for op in range(256):
        out.append(("SMEM", op, [(0b111101 << 26) | (op << 18) | (4 << 6) | 1, 0x10 | (NULL << 25)]))
        out.append(("SMEM", op, [(0b111101 << 26) | (op << 18), NULL << 25]))
    for seg, name in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
        for op in range(128):
            for data, _, vdst in FIELD_COMBOS[:4]:
                out.append((name, op, [(0b110111 << 26) | (op << 18) | (seg << 16),
                                       2 | (4 * data << 8) | (NULL << 16) | (8 * vdst << 24)]))
    for op in range(256):
        out.append(("MUBUF", op, [(0b111000 << 26) | (op << 18), 2 | (4 << 8) | (1 << 16) | (0x80 << 24) | (1 << 22)]))
        out.append(("MUBUF", op, [(0b111000 << 26) | (op << 18), NULL << 24]))
    return out


def gfx12_probes():
    out = []
    for op in range(64):
        out.append(("SMEM", op, [(0b111101 << 26) | (op << 13) | (4 << 6) | 1, 0x10 | (NULL << 25)]))
        out.append(("SMEM", op, [(0b111101 << 26) | (op << 13), NULL << 25]))
    for prefix, name in ((0xEC, "FLAT"), (0xED, "SCRATCH"), (0xEE, "GLOBAL")):
        for op in range(256):
            for data, _, vdst in FIELD_COMBOS[:4]:
                sve = 1 if name == "SCRATCH" else 0
                out.append((name, op, [(prefix << 24) | (op << 14) | NULL,
                                       (8 * vdst) | (sve << 17) | (4 * data << 23), 2]))
    for op in range(256):
        out.append(("MUBUF", op, [(0b110001 << 26) | (op << 14) | NULL, 4 | (1 << 9) | (1 << 30), 2]))
        out.append(("MUBUF", op, [(0b110001 << 26) | (op << 14) | NULL, 0, 0]))
    return out


def disassemble(target, plist, mattr=None):
    """{encoding: {opcode: mnemonic}} as `llvm-objdump` prints the probes (for VOPDY, the Y half),
    with the target features `mattr` if given."""
    lines = ['target triple = "amdgcn-amd-amdhsa"', 'module asm ".text"', 'module asm ".globl probe"',
             'module asm "probe:"']
    for _, _, words in plist:
        padded = words + [NOP] * (STRIDE - len(words))
        lines.append('module asm ".long ' + ", ".join("0x%08X" % w for w in padded) + '"')
    with tempfile.TemporaryDirectory() as d:
        ll, obj = os.path.join(d, "p.ll"), os.path.join(d, "p.o")
        with open(ll, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.check_call([tool("llc"), "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + target, "-filetype=obj", ll, "-o", obj])
        features = ["--mattr=" + mattr] if mattr else []
        text = subprocess.check_output([tool("llvm-objdump"), "-d", "--mcpu=" + target, *features, obj], text=True)
    by_addr = {}
    for line in text.splitlines():
        m = re.match(r"\s+(\S.*?)\s*//\s*([0-9A-F]+):", line)
        if m:
            by_addr[int(m.group(2), 16)] = m.group(1)
    result = {}
    for i, (enc, op, _) in enumerate(plist):
        text = by_addr.get(i * STRIDE * 4)
        if text is None:
            continue
        if enc == "VOPDY":
            if "::" not in text:
                continue
            text = text.split("::")[1].strip()
        mnem = text.split()[0]
        if mnem.startswith(".") or mnem == "<unknown>":
            continue
        result.setdefault(enc, {}).setdefault(str(op), mnem)
    return result


def main():
    probes = {"gfx1100": common_probes() + gfx11_probes(), "gfx1201": common_probes() + gfx12_probes()}
    out = {t: disassemble(t, probes[t]) for t in TARGETS}
    for enc, ops in disassemble("gfx1201", probes["gfx1201"], "+real-true16").items():
        for op, mnemonic in ops.items():
            out["gfx1201"].setdefault(enc, {}).setdefault(op, mnemonic)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llvm_rdna_mnemonics.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
