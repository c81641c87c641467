//! Random instruction words of a given encoding and opcode, with operand fields that LLVM accepts
//! (aligned register tuples, zero unused fields) and random modifiers.
#![allow(dead_code)]

use iron_emu::gfx9::{Encoding, Op, OperandSpec, RegKind};
use rand::Rng;
use rand::rngs::StdRng;

/// A random register index for an operand of `spec`, aligned as LLVM requires for tuples.
fn reg(rng: &mut StdRng, spec: OperandSpec, max: u32, scalar: bool) -> u32 {
    let n = u32::from(spec.dwords());
    let align = if scalar {
        if n >= 4 {
            4
        } else if n == 2 {
            2
        } else {
            1
        }
    } else if n >= 2 {
        2
    } else {
        1
    };
    let r = rng.random_range(0..max.saturating_sub(n).max(1));
    r / align * align
}

/// A random 9-bit source code for `spec` (SGPR, special register, constant, VGPR; literal if allowed).
fn src(rng: &mut StdRng, spec: OperandSpec, literal_ok: bool) -> u32 {
    match rng.random_range(0..12) {
        0..=3 => 256 + reg(rng, spec, 64, false),
        4 | 5 => reg(rng, spec, 100, true),
        6 => [106, 126, 124, 102][rng.random_range(0..4)],
        7 => rng.random_range(128..=208),
        8 => rng.random_range(240..=248),
        9 if literal_ok => 255,
        9 => rng.random_range(128..=140),
        10 => [235, 236, 237, 238, 251, 252, 253][rng.random_range(0..7)],
        _ => 256 + reg(rng, spec, 256, false),
    }
}

fn literal(rng: &mut StdRng) -> u32 {
    match rng.random_range(0..5) {
        0 => rng.random_range(0..0x100),
        1 => 0x3f80_0000,
        2 => rng.random::<u32>() & 0xffff,
        3 => 0x4000_0000,
        _ => rng.random(),
    }
}

/// Random words for one instruction of `op` in `encoding` with opcode `num`.
pub fn instruction(rng: &mut StdRng, encoding: Encoding, num: u32, op: Op) -> Vec<u32> {
    let [d, s0, s1, s2] = op.info().operands;
    let mut lit: Option<u32> = None;
    fn src_lit_into(rng: &mut StdRng, spec: OperandSpec, lit: &mut Option<u32>) -> u32 {
        let c = src(rng, spec, true);
        if c == 255 {
            *lit = Some(literal(rng));
        }
        c
    }
    macro_rules! src_lit {
        ($rng:expr, $spec:expr) => {
            src_lit_into($rng, $spec, &mut lit)
        };
    }
    let mut words = match encoding {
        Encoding::Sop1 => {
            let sd = if d.kind == RegKind::None {
                0
            } else {
                reg(rng, d, 100, true)
            };
            let a = if s0.kind == RegKind::None {
                0
            } else {
                src_lit!(rng, s0) & 0xff
            };
            vec![0xBE80_0000 | sd << 16 | num << 8 | a]
        }
        Encoding::Sop2 => {
            let sd = reg(rng, d, 100, true);
            let a = src_lit!(rng, s0) & 0xff;
            let b = if lit.is_some() {
                src(rng, s1, false) & 0xff
            } else {
                src_lit!(rng, s1) & 0xff
            };
            vec![0x8000_0000 | num << 23 | sd << 16 | b << 8 | a]
        }
        Encoding::Sopc => {
            let a = if s0.kind == RegKind::None {
                rng.random_range(0..8)
            } else {
                src_lit!(rng, s0) & 0xff
            };
            let b = if s1.kind == RegKind::None {
                0
            } else if lit.is_some() {
                src(rng, s1, false) & 0xff
            } else {
                src_lit!(rng, s1) & 0xff
            };
            vec![0xBF00_0000 | num << 16 | b << 8 | a]
        }
        Encoding::Sopk => {
            let sd = reg(rng, OperandSpec { bits: 64, ..d }, 100, true);
            let imm: u32 = if rng.random_bool(0.5) {
                rng.random_range(0..64)
            } else {
                rng.random::<u32>() & 0xffff
            };
            let mut w = vec![0xB000_0000 | num << 23 | sd << 16 | imm];
            if op == Op::S_SETREG_IMM32_B32 {
                w.push(literal(rng));
            }
            w
        }
        Encoding::Sopp => {
            let imm: u32 = if rng.random_bool(0.5) {
                rng.random_range(0..16)
            } else {
                rng.random::<u32>() & 0xffff
            };
            vec![0xBF80_0000 | num << 16 | imm]
        }
        Encoding::Smem => {
            let sd = if d.kind == RegKind::None {
                0
            } else {
                reg(rng, d, 96, true)
            };
            let sb = if s0.kind == RegKind::None {
                0
            } else {
                reg(rng, s0, 96, true) / 2
            };
            let imm = rng.random_bool(0.7) as u32;
            let soe = rng.random_bool(0.2) as u32;
            let glc = rng.random_bool(0.2) as u32;
            let off = if imm == 1 {
                rng.random_range(0..0x200)
            } else {
                reg(rng, d, 100, true)
            };
            let soff = if soe == 1 { reg(rng, d, 100, true) } else { 0 };
            vec![
                0xC000_0000 | num << 18 | imm << 17 | glc << 16 | soe << 14 | sd << 6 | sb,
                off | soff << 25,
            ]
        }
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
            let vd = if d.kind == RegKind::Sgpr {
                reg(rng, d, 100, true)
            } else {
                reg(rng, d, 128, false)
            };
            let v1 = reg(rng, s1, 128, false);
            let ext = rng.random_range(0..10);
            let s0code = match ext {
                0 => 0xFA,
                1 => 0xF9,
                _ => {
                    if s0.kind == RegKind::None {
                        0
                    } else {
                        src_lit!(rng, s0)
                    }
                }
            };
            let w0 = match encoding {
                Encoding::Vop1 => 0x7E00_0000 | vd << 17 | num << 9 | s0code,
                Encoding::Vop2 => num << 25 | vd << 17 | v1 << 9 | s0code,
                _ => 0x7C00_0000 | num << 17 | v1 << 9 | s0code,
            };
            let mut w = vec![w0];
            if ext <= 1 {
                let mut w1 = rng.random::<u32>();
                w1 = w1 & !0xff | reg(rng, s0, 128, false);
                if ext == 0 {
                    // DPP: keep dpp_ctrl within the defined values most of the time.
                    let ctrl = [
                        0x1b, 0xe4, 0x4e, 0x101, 0x111, 0x121, 0x130, 0x134, 0x138, 0x13c, 0x140,
                        0x141, 0x142, 0x143, 0x10f, 0x118,
                    ];
                    w1 = w1 & !(0x1ff << 8) & !(1 << 18)
                        | ctrl[rng.random_range(0..ctrl.len())] << 8;
                } else {
                    // SDWA: selects within range, reserved bit clear.
                    let sel = |r: &mut StdRng| r.random_range(0..7u32);
                    w1 &= !((7 << 8) | (3 << 11) | (7 << 16) | (7 << 24) | (1 << 22) | (1 << 30));
                    w1 |= sel(rng) << 8
                        | rng.random_range(0..3u32) << 11
                        | sel(rng) << 16
                        | sel(rng) << 24;
                    if rng.random_bool(0.7) {
                        w1 &= !(1 << 23 | 1 << 31);
                    }
                    if rng.random_bool(0.6) {
                        w1 &= !(0xff << 13 >> 13 << 13) | 0x1fff;
                    }
                }
                w.push(w1);
            }
            if matches!(
                op,
                Op::V_FMAMK_F32
                    | Op::V_FMAAK_F32
                    | Op::V_MADMK_F32
                    | Op::V_MADAK_F32
                    | Op::V_MADMK_F16
                    | Op::V_MADAK_F16
            ) && ext > 1
            {
                // A literal or special source beside the K constant is not a valid encoding.
                if lit.is_some() || (235..=254).contains(&(w[0] & 0x1ff)) {
                    w[0] = w[0] & !0x1ff | (256 + reg(rng, s0, 128, false));
                    lit = None;
                }
                w.push(literal(rng));
            }
            w
        }
        Encoding::Vop3 => {
            let info = op.info();
            let vd = if d.kind == RegKind::Sgpr {
                reg(rng, d, 100, true)
            } else {
                reg(rng, d, 256, false)
            };
            let codes: Vec<u32> = [s0, s1, s2]
                .iter()
                .map(|s| {
                    if s.kind == RegKind::None {
                        0
                    } else {
                        src(rng, *s, false)
                    }
                })
                .collect();
            let mods = if info.vop3b {
                reg(rng, OperandSpec { bits: 64, ..d }, 100, true) << 8
            } else if rng.random_bool(0.3) {
                rng.random_range(0..128u32) << 8
            } else {
                0
            };
            let clamp = rng.random_bool(0.15) as u32;
            let neg = if rng.random_bool(0.3) {
                rng.random_range(0..8u32)
            } else {
                0
            };
            let omod = if rng.random_bool(0.15) {
                rng.random_range(0..4u32)
            } else {
                0
            };
            vec![
                0xD000_0000 | num << 16 | clamp << 15 | mods | vd,
                codes[0] | codes[1] << 9 | codes[2] << 18 | omod << 27 | neg << 29,
            ]
        }
        Encoding::Vop3p => {
            let vd = reg(rng, d, 256, false);
            let codes: Vec<u32> = [s0, s1, s2]
                .iter()
                .map(|s| {
                    if s.kind == RegKind::None {
                        0
                    } else {
                        src(rng, *s, false)
                    }
                })
                .collect();
            let lo = rng.random::<u32>() & (0xff << 8);
            let hi = rng.random::<u32>() & (0x7 << 27 | 0x7 << 29);
            vec![
                0xD380_0000 | num << 16 | lo | vd,
                codes[0] | codes[1] << 9 | codes[2] << 18 | hi,
            ]
        }
        Encoding::Ds => {
            let f = |rng: &mut StdRng, s: OperandSpec| {
                if s.kind == RegKind::None {
                    0
                } else {
                    reg(rng, s, 200, false)
                }
            };
            let (vd, a, d0, d1) = (f(rng, d), f(rng, s0), f(rng, s1), f(rng, s2));
            let offs = if rng.random_bool(0.6) {
                rng.random::<u32>() & 0xffff
            } else {
                0
            };
            vec![
                0xD800_0000 | num << 17 | offs,
                a | d0 << 8 | d1 << 16 | vd << 24,
            ]
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            let seg = match encoding {
                Encoding::Flat => 0,
                Encoding::Scratch => 1,
                _ => 2,
            };
            let f = |rng: &mut StdRng, s: OperandSpec| {
                if s.kind == RegKind::None {
                    0
                } else {
                    reg(rng, s, 200, false)
                }
            };
            let vd = f(rng, d);
            let data = f(rng, s1);
            let saddr = if seg == 0 {
                0
            } else if rng.random_bool(0.5) {
                0x7f
            } else {
                reg(rng, s2, 100, true)
            };
            let addr = reg(rng, OperandSpec { bits: 64, ..s0 }, 200, false);
            let off = if rng.random_bool(0.5) {
                rng.random::<u32>() & if seg == 0 { 0xfff } else { 0x1fff }
            } else {
                0
            };
            let bits = rng.random::<u32>() & (1 << 16 | 1 << 17 | 1 << 25);
            vec![
                0xDC00_0000 | num << 18 | seg << 14 | bits | off,
                addr | data << 8 | saddr << 16 | vd << 24,
            ]
        }
        Encoding::Mubuf => {
            let vd = if d.kind == RegKind::None {
                0
            } else {
                reg(rng, d, 200, false)
            };
            let offen = rng.random_bool(0.5) as u32;
            let idxen = rng.random_bool(0.3) as u32;
            let vaddr = reg(rng, OperandSpec { bits: 64, ..s0 }, 200, false);
            let srsrc = rng.random_range(0..24u32);
            let soff = match rng.random_range(0..3) {
                0 => rng.random_range(128..140),
                1 => rng.random_range(0..100),
                _ => 128,
            };
            let off = if rng.random_bool(0.5) {
                rng.random::<u32>() & 0xfff
            } else {
                0
            };
            let bits = rng.random::<u32>() & (1 << 14 | 1 << 15 | 1 << 17);
            let (vaddr, srsrc, soff, vd) = if d.kind == RegKind::None && s1.kind == RegKind::None {
                (0, 0, 0, 0)
            } else {
                (vaddr, srsrc, soff, vd)
            };
            let (offen, idxen, off) = if d.kind == RegKind::None && s1.kind == RegKind::None {
                (0, 0, 0)
            } else {
                (offen, idxen, off)
            };
            vec![
                0xE000_0000 | num << 18 | bits | idxen << 13 | offen << 12 | off,
                vaddr | vd << 8 | srsrc << 16 | soff << 24,
            ]
        }
        Encoding::Mtbuf | Encoding::Vop3px2 => Vec::new(),
    };
    if let Some(l) = lit {
        words.push(l);
    }
    words
}
