#!/usr/bin/env python3
"""Ask LLVM's disassembler which opcode numbers each GFX9 target knows, and by what mnemonic.

AMD's machine-readable ISA data (see gen_gfx9_tables.py) describes one chip, CDNA4 (gfx950). The other
GFX9 targets the emulator covers (gfx90a, gfx942) differ in a few opcode slots. LLVM's disassembler is the
reference decoder for all of them, so this script builds one probe instruction per (encoding, opcode
number), disassembles it with `llvm-objdump --mcpu=<target>`, and records the mnemonic LLVM prints.

Output: gen/llvm_gfx9_mnemonics.json, {target: {encoding: {opcode: mnemonic}}}; read by
gen_gfx9_tables.py. Run by hand when the toolchain changes:

    python3 host/emu/gen/probe_llvm_mnemonics.py

Needs `llc` and `llvm-objdump` from the pinned toolchain's llvm-tools (found through `rustc --print sysroot`).
"""
import json
import os
import re
import subprocess
import tempfile

TARGETS = ["gfx90a", "gfx942", "gfx950"]
NOP = 0xBF800000  # s_nop 0


def tool(name):
    sysroot = subprocess.check_output(["rustc", "--print", "sysroot"], text=True,
                                      cwd=os.path.dirname(os.path.abspath(__file__))).strip()
    return os.path.join(sysroot, "lib/rustlib/x86_64-unknown-linux-gnu/bin", name)


def probes():
    """(encoding, opcode, [dwords]) for every opcode slot of every encoding."""
    out = []
    for op in range(128):  # SOP2 (ops whose top bits alias SOPK/SOP1/SOPC/SOPP are skipped)
        if op >= 0x60:
            continue
        out.append(("SOP2", op, [(0b10 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 0]))
    for op in range(29):  # SOPK slots 29..31 alias SOP1/SOPC/SOPP
        out.append(("SOPK", op, [(0b1011 << 28) | (op << 23) | (4 << 16) | 0x10]))
    for op in range(256):
        out.append(("SOP1", op, [(0x17D << 23) | (4 << 16) | (op << 8) | 0]))
    for op in range(128):
        out.append(("SOPC", op, [(0x17E << 23) | (op << 16) | (2 << 8) | 0]))
    for op in range(128):
        out.append(("SOPP", op, [(0x17F << 23) | (op << 16) | 0]))
    for op in range(256):
        out.append(("SMEM", op, [(0b110000 << 26) | (op << 18) | (1 << 17) | (4 << 6) | 0, 0x10]))
        out.append(("SMEM", op, [(0b110000 << 26) | (op << 18), 0]))
    for op in range(62):
        out.append(("VOP2", op, [(op << 25) | (1 << 17) | (2 << 9) | (256 + 3)]))
    for op in range(256):
        out.append(("VOP1", op, [(0b0111111 << 25) | (2 << 17) | (op << 9) | (256 + 4)]))
        out.append(("VOP1", op, [(0b0111111 << 25) | (op << 9)]))
    for op in range(256):
        out.append(("VOPC", op, [(0b0111110 << 25) | (op << 17) | (2 << 9) | (256 + 4)]))
    for op in range(0x380):
        out.append(("VOP3", op, [(0b110100 << 26) | (op << 16) | 2, (256 + 4) | ((256 + 6) << 9) | ((256 + 8) << 18)]))
    for op in range(128):
        out.append(("VOP3P", op, [(0x1A7 << 23) | (op << 16) | 2, (256 + 4) | ((256 + 6) << 9) | ((256 + 8) << 18) | (3 << 27)]))
    # Memory encodings: LLVM rejects words whose unused register fields are not zero, so each opcode is
    # probed with every combination of (data, data1, vdst) present or zero.
    for op in range(256):
        for data0, data1, vdst in FIELD_COMBOS:
            for addr in (2, 0):
                # With the gds bit too: LLVM decodes the GWS instructions only with it.
                for gds in (0, 1):
                    out.append(("DS", op, [(0b110110 << 26) | (op << 17) | (gds << 16),
                                           addr | (4 * data0 << 8) | (6 * data1 << 16) | (8 * vdst << 24)]))
    for seg, name in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
        for op in range(128):
            for data, _, vdst in FIELD_COMBOS[:4]:
                saddr = 0 if seg == 0 else 0x7F  # flat has no saddr; "off" is 0x7F for the others
                out.append((name, op, [(0b110111 << 26) | (op << 18) | (seg << 14), 2 | (4 * data << 8) | (saddr << 16) | (8 * vdst << 24)]))
    for op in range(128):
        out.append(("MUBUF", op, [(0b111000 << 26) | (op << 18) | (1 << 12), 2 | (4 << 8) | (1 << 16) | (0x80 << 24)]))
        out.append(("MUBUF", op, [(0b111000 << 26) | (op << 18), 0]))
    for op in range(16):
        out.append(("MTBUF", op, [(0b111010 << 26) | (op << 15) | (1 << 12) | (4 << 19), 2 | (4 << 8) | (1 << 16) | (0x80 << 24)]))
    for op in range(128):  # MIMG (gfx90a): dmask 0xf, v[4:7] <- v2, s[4:11], with and without a sampler
        for ssamp in (0, 3):
            out.append(("MIMG", op, [(0b111100 << 26) | (op << 18) | (0xF << 8), 2 | (4 << 8) | (1 << 16) | (ssamp << 21)]))
    return out


FIELD_COMBOS = [(a, b, c) for b in (0, 1) for a in (0, 1) for c in (0, 1)]

STRIDE = 4  # dwords per probe slot: the probe, then s_nop padding


def disassemble(target, plist):
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
        text = subprocess.check_output([tool("llvm-objdump"), "-d", "--mcpu=" + target, obj], text=True)
    by_addr = {}
    for line in text.splitlines():
        m = re.match(r"\s+(\S.*?)\s*//\s*([0-9A-F]+):", line)
        if m:
            by_addr[int(m.group(2), 16)] = m.group(1).split()[0]
    result = {}
    for i, (enc, op, _) in enumerate(plist):
        mnem = by_addr.get(i * STRIDE * 4)
        if mnem is None or mnem.startswith(".") or mnem == "<unknown>":
            continue
        result.setdefault(enc, {}).setdefault(str(op), mnem)
    return result


def main():
    plist = probes()
    out = {t: disassemble(t, plist) for t in TARGETS}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llvm_gfx9_mnemonics.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
