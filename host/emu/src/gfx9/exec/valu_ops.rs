//! Semantics of the VOP1/VOP2/VOPC/VOP3 instructions, one arm per instruction (or family), written
//! from the ISA pseudocode. Sources arrive as raw lane bits with modifiers already applied; results
//! are raw lane bits (written back by `valu`).

use super::super::inst::Modifiers;
use super::super::opcodes::Op;
use super::float::*;
use super::fp8::Fp8;
use super::valu::Lanes;
use crate::error::Fault;
use half::f16;
use std::sync::OnceLock;

/// Wave state an instruction's semantics may read.
pub(crate) struct Env {
    pub vcc: u64,
    pub ieee: bool,
    pub clamp: bool,
    pub mods: Modifiers,
    /// The instruction came in a VOP3 encoding (op_sel selects bytes/words of conversions).
    pub vop3: bool,
    /// The target's 8-bit floats are the FNUZ variants (gfx942).
    pub fnuz: bool,
    /// How many lanes to compute, from lane 0: those up to the highest lane the instruction
    /// writes. Results of the lanes above are left as they were.
    pub lanes: usize,
}

/// The lanes [`compute`] needs for an instruction that writes the lanes of `exec`: all up to the
/// highest one.
pub(crate) fn active_lanes(exec: u64) -> usize {
    64 - exec.leading_zeros() as usize
}

/// What an instruction produced besides the per-lane values in `d`.
pub(crate) enum Res {
    /// Per-lane values for the vector destination.
    Vector,
    /// A compare mask for the scalar destination.
    Mask(u64),
    /// A compare mask for the scalar destination and EXEC (CMPX).
    MaskExec(u64),
    /// Per-lane values and a carry/flag mask for the scalar second destination.
    VectorCarry(u64),
}

#[inline]
fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
#[inline]
fn fb(x: f32) -> u64 {
    u64::from(x.to_bits())
}
#[inline]
fn g(x: u64) -> f64 {
    f64::from_bits(x)
}
#[inline]
fn gb(x: f64) -> u64 {
    x.to_bits()
}
#[inline]
fn h(x: u64) -> f16 {
    f16::from_bits(x as u16)
}
#[inline]
fn hf(x: u64) -> f32 {
    f16::from_bits(x as u16).to_f32()
}
#[inline]
fn hb(x: f32) -> u64 {
    u64::from(f16::from_f32(x).to_bits())
}
#[inline]
fn hb64(x: f64) -> u64 {
    u64::from(f64_to_f16_exact(x, 0.0).to_bits())
}

#[inline]
fn un(d: &mut [u64], a: &[u64], op: impl Fn(u64) -> u64) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = op(a);
    }
}
#[inline]
fn bin(d: &mut [u64], a: &[u64], b: &[u64], op: impl Fn(u64, u64) -> u64) {
    for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
        *d = op(a, b);
    }
}
#[inline]
fn tri(d: &mut [u64], a: &[u64], b: &[u64], c: &[u64], op: impl Fn(u64, u64, u64) -> u64) {
    for (((d, &a), &b), &c) in d.iter_mut().zip(a).zip(b).zip(c) {
        *d = op(a, b, c);
    }
}
#[inline]
fn lanes(d: &mut [u64], op: impl Fn(usize) -> u64) {
    for (l, v) in d.iter_mut().enumerate() {
        *v = op(l);
    }
}
#[inline]
fn mask(n: usize, op: impl Fn(usize) -> bool) -> u64 {
    let mut m = 0u64;
    for l in 0..n {
        m |= u64::from(op(l)) << l;
    }
    m
}

fn sat_u32(v: i64) -> u64 {
    v.clamp(0, i64::from(u32::MAX)) as u64
}

/// Whether `clamp` on `op` saturates an integer result instead of clamping a float to [0, 1].
pub(crate) fn clamp_is_integer(op: Op) -> bool {
    let n = op.name();
    n.contains("_u32")
        || n.contains("_i32")
        || n.contains("_u16")
        || n.contains("_i16")
        || n.contains("_co_")
}

/// The part of the destination (bit shift, width) that `op`'s VOP3 form writes, keeping the rest:
/// the GFX9 op_sel instructions write the half selected by op_sel[3], the 8-bit float conversions a
/// word or byte. `None`: the whole register (16-bit results are zero-extended).
pub(crate) fn partial_write(op: Op, op_sel: u8) -> Option<(u32, u32)> {
    use Op::*;
    match op {
        V_MAD_F16 | V_MAD_U16 | V_MAD_I16 | V_FMA_F16 | V_DIV_FIXUP_F16 | V_MIN3_F16
        | V_MIN3_I16 | V_MIN3_U16 | V_MAX3_F16 | V_MAX3_I16 | V_MAX3_U16 | V_MED3_F16
        | V_MED3_I16 | V_MED3_U16 | V_ADD_I16 | V_SUB_I16 | V_CVT_PK_FP8_F32 | V_CVT_PK_BF8_F32 => {
            Some((16 * u32::from(op_sel >> 3 & 1), 16))
        }
        V_CVT_SR_FP8_F32 | V_CVT_SR_BF8_F32 => Some((8 * u32::from(op_sel >> 2 & 3), 8)),
        V_ASHR_PK_I8_I32 | V_ASHR_PK_U8_I32 => Some((0, 16)),
        _ => None,
    }
}

/// Type of the operands of a compare instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CmpType {
    F16,
    F32,
    F64,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

/// Compare predicates (float predicates starting with N are true for unordered operands).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pred {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ge,
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
    T,
    Class,
}

/// A decoded VOPC instruction: predicate (or class test), operand type, and whether it writes EXEC.
#[derive(Clone, Copy, Debug)]
struct Cmp {
    pred: Pred,
    ty: CmpType,
    exec: bool,
}

fn compares() -> &'static [Option<Cmp>] {
    static TABLE: OnceLock<Vec<Option<Cmp>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..super::super::opcodes::OP_COUNT)
            .map(|k| {
                // SAFETY: `Op` is a `repr(u16)` enum whose discriminants are exactly 0..OP_COUNT.
                let op: Op = unsafe { std::mem::transmute::<u16, Op>(k as u16) };
                let name = op.name();
                let (exec, rest) = match name.strip_prefix("v_cmpx_") {
                    Some(r) => (true, r),
                    None => (false, name.strip_prefix("v_cmp_")?),
                };
                let (pred, ty) = rest.rsplit_once('_')?;
                let ty = match ty {
                    "f16" => CmpType::F16,
                    "f32" => CmpType::F32,
                    "f64" => CmpType::F64,
                    "i16" => CmpType::I16,
                    "u16" => CmpType::U16,
                    "i32" => CmpType::I32,
                    "u32" => CmpType::U32,
                    "i64" => CmpType::I64,
                    "u64" => CmpType::U64,
                    _ => return None,
                };
                let pred = match pred {
                    "f" => Pred::F,
                    "lt" => Pred::Lt,
                    "eq" => Pred::Eq,
                    "le" => Pred::Le,
                    "gt" => Pred::Gt,
                    "lg" | "ne" => Pred::Lg,
                    "ge" => Pred::Ge,
                    "o" => Pred::O,
                    "u" => Pred::U,
                    "nge" => Pred::Nge,
                    "nlg" => Pred::Nlg,
                    "ngt" => Pred::Ngt,
                    "nle" => Pred::Nle,
                    "neq" => Pred::Neq,
                    "nlt" => Pred::Nlt,
                    "tru" | "t" => Pred::T,
                    "class" => Pred::Class,
                    _ => return None,
                };
                Some(Cmp { pred, ty, exec })
            })
            .collect()
    })
}

#[inline]
fn float_pred(pred: Pred, a: f64, b: f64) -> bool {
    let un = a.is_nan() || b.is_nan();
    match pred {
        Pred::F => false,
        Pred::Lt => a < b,
        Pred::Eq => a == b,
        Pred::Le => a <= b,
        Pred::Gt => a > b,
        Pred::Lg => !un && a != b,
        Pred::Ge => a >= b,
        Pred::O => !un,
        Pred::U => un,
        Pred::Nge => un || a < b,
        Pred::Nlg => un || a == b,
        Pred::Ngt => un || a <= b,
        Pred::Nle => un || a > b,
        Pred::Neq => a != b,
        Pred::Nlt => un || a >= b,
        Pred::T | Pred::Class => true,
    }
}

#[inline]
fn int_pred(pred: Pred, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match pred {
        Pred::F => false,
        Pred::Lt => o == Less,
        Pred::Eq => o == Equal,
        Pred::Le => o != Greater,
        Pred::Gt => o == Greater,
        Pred::Lg => o != Equal,
        Pred::Ge => o != Less,
        _ => true,
    }
}

fn compare(c: Cmp, a: &[u64], b: &[u64]) -> u64 {
    let n = a.len();
    let p = c.pred;
    if p == Pred::Class {
        return mask(n, |l| {
            let bit = match c.ty {
                CmpType::F16 => class_bit(a[l] & 0xffff, 5, 10),
                CmpType::F64 => class_bit(a[l], 11, 52),
                _ => class_bit(a[l] & 0xffff_ffff, 8, 23),
            };
            b[l] >> bit & 1 == 1
        });
    }
    match c.ty {
        CmpType::F16 => mask(n, |l| {
            float_pred(p, f64::from(hf(a[l])), f64::from(hf(b[l])))
        }),
        CmpType::F32 => mask(n, |l| float_pred(p, f64::from(f(a[l])), f64::from(f(b[l])))),
        CmpType::F64 => mask(n, |l| float_pred(p, g(a[l]), g(b[l]))),
        CmpType::I16 => mask(n, |l| int_pred(p, (a[l] as i16).cmp(&(b[l] as i16)))),
        CmpType::U16 => mask(n, |l| int_pred(p, (a[l] as u16).cmp(&(b[l] as u16)))),
        CmpType::I32 => mask(n, |l| int_pred(p, (a[l] as i32).cmp(&(b[l] as i32)))),
        CmpType::U32 => mask(n, |l| int_pred(p, (a[l] as u32).cmp(&(b[l] as u32)))),
        CmpType::I64 => mask(n, |l| int_pred(p, (a[l] as i64).cmp(&(b[l] as i64)))),
        CmpType::U64 => mask(n, |l| int_pred(p, a[l].cmp(&b[l]))),
    }
}

fn bfe_u(v: u32, off: u32, width: u32) -> u32 {
    let width = width & 31;
    if width == 0 {
        0
    } else {
        (v >> (off & 31)) & ((1u32 << width) - 1)
    }
}

fn bfe_i(v: u32, off: u32, width: u32) -> u32 {
    let width = width & 31;
    if width == 0 {
        return 0;
    }
    let x = (v >> (off & 31)) & ((1u32 << width) - 1);
    (((x << (32 - width)) as i32) >> (32 - width)) as u32
}

fn perm_byte(data: u64, sel: u32) -> u32 {
    match sel {
        13.. => 0xff,
        12 => 0,
        8..=11 => {
            let byte = [1u32, 3, 5, 7][(sel - 8) as usize];
            if data >> (byte * 8 + 7) & 1 == 1 {
                0xff
            } else {
                0
            }
        }
        _ => (data >> (sel * 8) & 0xff) as u32,
    }
}

fn sad_u8(a: u32, b: u32) -> u32 {
    (0..4)
        .map(|k| ((a >> (8 * k) & 0xff) as i32 - (b >> (8 * k) & 0xff) as i32).unsigned_abs())
        .sum()
}

fn f32_to_u8(x: f32) -> u32 {
    if x.is_nan() {
        0
    } else {
        x.clamp(0.0, 255.0).round_ties_even() as u32
    }
}

/// Runs `op` on the first `e.lanes` lanes: `s` are the sources, `d` receives per-lane results.
pub(crate) fn compute(op: Op, e: &Env, s: &[Lanes; 3], d: &mut Lanes) -> Result<Res, Fault> {
    let n = e.lanes;
    let (a, b, c) = (&s[0][..n], &s[1][..n], &s[2][..n]);
    let d = &mut d[..n];
    let ieee = e.ieee;
    let cl = e.clamp;
    use Op::*;
    match op {
        // Moves and selects.
        V_MOV_B32 | V_MOV_B64 | V_ACCVGPR_MOV_B32 => un(d, a, |x| x),
        V_CNDMASK_B32 => lanes(d, |l| if c[l] >> l & 1 == 1 { b[l] } else { a[l] }),

        // f32 arithmetic.
        V_ADD_F32 => bin(d, a, b, |x, y| fb(f(x) + f(y))),
        V_SUB_F32 => bin(d, a, b, |x, y| fb(f(x) - f(y))),
        V_SUBREV_F32 => bin(d, a, b, |x, y| fb(f(y) - f(x))),
        V_MUL_F32 => bin(d, a, b, |x, y| fb(f(x) * f(y))),
        V_MUL_LEGACY_F32 => bin(d, a, b, |x, y| {
            fb(if f(x) == 0.0 || f(y) == 0.0 {
                0.0
            } else {
                f(x) * f(y)
            })
        }),
        V_FMA_F32 | V_FMAC_F32 | V_FMAMK_F32 | V_FMAAK_F32 => {
            tri(d, a, b, c, |x, y, z| fb(f(x).mul_add(f(y), f(z))))
        }
        V_MAC_F32 | V_MAD_F32 | V_MADMK_F32 | V_MADAK_F32 => {
            tri(d, a, b, c, |x, y, z| fb(f(x) * f(y) + f(z)))
        }
        V_MAD_LEGACY_F32 => tri(d, a, b, c, |x, y, z| {
            let p = if f(x) == 0.0 || f(y) == 0.0 {
                0.0
            } else {
                f(x) * f(y)
            };
            fb(p + f(z))
        }),
        V_MIN_F32 => bin(d, a, b, |x, y| fb(min32(f(x), f(y), ieee))),
        V_MAX_F32 => bin(d, a, b, |x, y| fb(max32(f(x), f(y), ieee))),
        V_MIN3_F32 => tri(d, a, b, c, |x, y, z| {
            fb(min32(min32(f(x), f(y), ieee), f(z), ieee))
        }),
        V_MAX3_F32 => tri(d, a, b, c, |x, y, z| {
            fb(max32(max32(f(x), f(y), ieee), f(z), ieee))
        }),
        V_MED3_F32 => tri(d, a, b, c, |x, y, z| fb(med3_32(f(x), f(y), f(z), ieee))),
        V_LDEXP_F32 => bin(d, a, b, |x, y| fb(ldexp32(f(x), y as u32 as i32))),
        V_FREXP_MANT_F32 => un(d, a, |x| fb(frexp_mant32(f(x)))),
        V_FREXP_EXP_I32_F32 => un(d, a, |x| u64::from(frexp_exp32(f(x)) as u32)),
        V_FRACT_F32 => un(d, a, |x| fb(fract32(f(x)))),
        V_TRUNC_F32 => un(d, a, |x| fb(f(x).trunc())),
        V_CEIL_F32 => un(d, a, |x| fb(f(x).ceil())),
        V_FLOOR_F32 => un(d, a, |x| fb(f(x).floor())),
        V_RNDNE_F32 => un(d, a, |x| fb(f(x).round_ties_even())),
        V_EXP_F32 | V_EXP_LEGACY_F32 => un(d, a, |x| fb(f(x).exp2())),
        V_LOG_F32 | V_LOG_LEGACY_F32 => un(d, a, |x| fb(f(x).log2())),
        V_RCP_F32 | V_RCP_IFLAG_F32 => un(d, a, |x| fb(1.0 / f(x))),
        V_RSQ_F32 => un(d, a, |x| fb((1.0 / f64::from(f(x)).sqrt()) as f32)),
        V_SQRT_F32 => un(d, a, |x| fb(f(x).sqrt())),
        V_SIN_F32 => un(d, a, |x| {
            fb((f64::from(f(x)) * std::f64::consts::TAU).sin() as f32)
        }),
        V_COS_F32 => un(d, a, |x| {
            fb((f64::from(f(x)) * std::f64::consts::TAU).cos() as f32)
        }),
        V_DIV_SCALE_F32 => {
            let mut vcc = 0u64;
            for l in 0..n {
                let (r, v) = div_scale32(f(a[l]), f(b[l]), f(c[l]));
                d[l] = fb(r);
                vcc |= u64::from(v) << l;
            }
            return Ok(Res::VectorCarry(vcc));
        }
        V_DIV_FMAS_F32 => lanes(d, |l| {
            fb(div_fmas32(f(a[l]), f(b[l]), f(c[l]), e.vcc >> l & 1 == 1))
        }),
        V_DIV_FIXUP_F32 => tri(d, a, b, c, |x, y, z| fb(div_fixup32(f(x), f(y), f(z)))),
        V_MINIMUM3_F32 => tri(d, a, b, c, |x, y, z| {
            fb(minimum32(minimum32(f(x), f(y)), f(z)))
        }),
        V_MAXIMUM3_F32 => tri(d, a, b, c, |x, y, z| {
            fb(maximum32(maximum32(f(x), f(y)), f(z)))
        }),
        V_CUBEID_F32 => tri(d, a, b, c, |x, y, z| fb(cube(f(x), f(y), f(z)).0)),
        V_CUBEMA_F32 => tri(d, a, b, c, |x, y, z| {
            let m = cube(f(x), f(y), f(z)).1;
            fb(m + m)
        }),
        V_CUBESC_F32 => tri(d, a, b, c, |x, y, z| fb(cube(f(x), f(y), f(z)).2)),
        V_CUBETC_F32 => tri(d, a, b, c, |x, y, z| fb(cube(f(x), f(y), f(z)).3)),

        // f64 arithmetic.
        V_ADD_F64 => bin(d, a, b, |x, y| gb(g(x) + g(y))),
        V_MUL_F64 => bin(d, a, b, |x, y| gb(g(x) * g(y))),
        V_FMA_F64 | V_FMAC_F64 => tri(d, a, b, c, |x, y, z| gb(g(x).mul_add(g(y), g(z)))),
        V_MIN_F64 => bin(d, a, b, |x, y| gb(min64(g(x), g(y), ieee))),
        V_MAX_F64 => bin(d, a, b, |x, y| gb(max64(g(x), g(y), ieee))),
        V_LDEXP_F64 => bin(d, a, b, |x, y| gb(ldexp64(g(x), y as u32 as i32))),
        V_FREXP_MANT_F64 => un(d, a, |x| gb(frexp64(g(x)).0)),
        V_FREXP_EXP_I32_F64 => un(d, a, |x| u64::from(frexp64(g(x)).1 as u32)),
        V_FRACT_F64 => un(d, a, |x| gb(fract64(g(x)))),
        V_TRUNC_F64 => un(d, a, |x| gb(g(x).trunc())),
        V_CEIL_F64 => un(d, a, |x| gb(g(x).ceil())),
        V_FLOOR_F64 => un(d, a, |x| gb(g(x).floor())),
        V_RNDNE_F64 => un(d, a, |x| gb(g(x).round_ties_even())),
        V_RCP_F64 => un(d, a, |x| gb(1.0 / g(x))),
        V_RSQ_F64 => un(d, a, |x| gb(1.0 / g(x).sqrt())),
        V_SQRT_F64 => un(d, a, |x| gb(g(x).sqrt())),
        V_DIV_SCALE_F64 => {
            let mut vcc = 0u64;
            for l in 0..n {
                let (r, v) = div_scale64(g(a[l]), g(b[l]), g(c[l]));
                d[l] = gb(r);
                vcc |= u64::from(v) << l;
            }
            return Ok(Res::VectorCarry(vcc));
        }
        V_DIV_FMAS_F64 => lanes(d, |l| {
            gb(div_fmas64(g(a[l]), g(b[l]), g(c[l]), e.vcc >> l & 1 == 1))
        }),
        V_DIV_FIXUP_F64 => tri(d, a, b, c, |x, y, z| gb(div_fixup64(g(x), g(y), g(z)))),
        V_TRIG_PREOP_F64 => bin(d, a, b, |x, y| gb(trig_preop(g(x), y as u32))),

        // f16 arithmetic (computed in f32/f64, exactly rounded once).
        V_ADD_F16 => bin(d, a, b, |x, y| hb(hf(x) + hf(y))),
        V_SUB_F16 => bin(d, a, b, |x, y| hb(hf(x) - hf(y))),
        V_SUBREV_F16 => bin(d, a, b, |x, y| hb(hf(y) - hf(x))),
        V_MUL_F16 => bin(d, a, b, |x, y| hb(hf(x) * hf(y))),
        V_FMA_F16 | V_FMA_LEGACY_F16 => tri(d, a, b, c, |x, y, z| {
            u64::from(fma_to_f16(f64::from(hf(x)), f64::from(hf(y)), f64::from(hf(z))).to_bits())
        }),
        V_MAC_F16 | V_MAD_F16 | V_MADMK_F16 | V_MADAK_F16 | V_MAD_LEGACY_F16 => {
            tri(d, a, b, c, |x, y, z| {
                hb(h(hb(hf(x) * hf(y))).to_f32() + hf(z))
            })
        }
        V_MIN_F16 => bin(d, a, b, |x, y| hb(min32(hf(x), hf(y), ieee))),
        V_MAX_F16 => bin(d, a, b, |x, y| hb(max32(hf(x), hf(y), ieee))),
        V_MIN3_F16 => tri(d, a, b, c, |x, y, z| {
            hb(min32(min32(hf(x), hf(y), ieee), hf(z), ieee))
        }),
        V_MAX3_F16 => tri(d, a, b, c, |x, y, z| {
            hb(max32(max32(hf(x), hf(y), ieee), hf(z), ieee))
        }),
        V_MED3_F16 => tri(d, a, b, c, |x, y, z| hb(med3_32(hf(x), hf(y), hf(z), ieee))),
        V_LDEXP_F16 => bin(d, a, b, |x, y| {
            hb64(ldexp64(f64::from(hf(x)), y as u32 as i32))
        }),
        V_RCP_F16 => un(d, a, |x| hb(1.0 / hf(x))),
        V_RSQ_F16 => un(d, a, |x| hb(1.0 / hf(x).sqrt())),
        V_SQRT_F16 => un(d, a, |x| hb(hf(x).sqrt())),
        V_LOG_F16 => un(d, a, |x| hb(hf(x).log2())),
        V_EXP_F16 => un(d, a, |x| hb(hf(x).exp2())),
        V_FLOOR_F16 => un(d, a, |x| hb(hf(x).floor())),
        V_CEIL_F16 => un(d, a, |x| hb(hf(x).ceil())),
        V_TRUNC_F16 => un(d, a, |x| hb(hf(x).trunc())),
        V_RNDNE_F16 => un(d, a, |x| hb(hf(x).round_ties_even())),
        V_FRACT_F16 => un(d, a, |x| {
            let v = hf(x);
            if v.is_infinite() {
                hb(f32::NAN)
            } else {
                u64::from(f16::from_f32(v - v.floor()).to_bits().min(0x3bff))
            }
        }),
        V_FREXP_MANT_F16 => un(d, a, |x| hb(frexp_mant32(hf(x)))),
        V_FREXP_EXP_I16_F16 => un(d, a, |x| u64::from(frexp_exp32(hf(x)) as u16)),
        V_SIN_F16 => un(d, a, |x| {
            hb((f64::from(hf(x)) * std::f64::consts::TAU).sin() as f32)
        }),
        V_COS_F16 => un(d, a, |x| {
            hb((f64::from(hf(x)) * std::f64::consts::TAU).cos() as f32)
        }),
        V_DIV_FIXUP_F16 | V_DIV_FIXUP_LEGACY_F16 => tri(d, a, b, c, |x, y, z| {
            u64::from(div_fixup16(h(x), h(y), h(z)).to_bits())
        }),

        // Conversions.
        V_CVT_F32_I32 => un(d, a, |x| fb(x as u32 as i32 as f32)),
        V_CVT_F32_U32 => un(d, a, |x| fb(x as u32 as f32)),
        V_CVT_I32_F32 => un(d, a, |x| u64::from(f(x) as i32 as u32)),
        V_CVT_U32_F32 => un(d, a, |x| u64::from(f(x) as u32)),
        V_CVT_RPI_I32_F32 => un(d, a, |x| u64::from((f(x) + 0.5).floor() as i32 as u32)),
        V_CVT_FLR_I32_F32 => un(d, a, |x| u64::from(f(x).floor() as i32 as u32)),
        V_CVT_F64_I32 => un(d, a, |x| gb(f64::from(x as u32 as i32))),
        V_CVT_F64_U32 => un(d, a, |x| gb(f64::from(x as u32))),
        V_CVT_I32_F64 => un(d, a, |x| u64::from(g(x) as i32 as u32)),
        V_CVT_U32_F64 => un(d, a, |x| u64::from(g(x) as u32)),
        V_CVT_F32_F64 => un(d, a, |x| fb(g(x) as f32)),
        V_CVT_F64_F32 => un(d, a, |x| gb(f64::from(f(x)))),
        V_CVT_F16_F32 => un(d, a, |x| hb(f(x))),
        V_CVT_F32_F16 => un(d, a, |x| fb(hf(x))),
        V_CVT_F16_U16 => un(d, a, |x| hb(f32::from(x as u16))),
        V_CVT_F16_I16 => un(d, a, |x| hb(f32::from(x as u16 as i16))),
        V_CVT_U16_F16 => un(d, a, |x| u64::from(hf(x) as u16)),
        V_CVT_I16_F16 => un(d, a, |x| u64::from(hf(x) as i16 as u16)),
        V_CVT_F32_UBYTE0 => un(d, a, |x| fb((x & 0xff) as f32)),
        V_CVT_F32_UBYTE1 => un(d, a, |x| fb((x >> 8 & 0xff) as f32)),
        V_CVT_F32_UBYTE2 => un(d, a, |x| fb((x >> 16 & 0xff) as f32)),
        V_CVT_F32_UBYTE3 => un(d, a, |x| fb((x >> 24 & 0xff) as f32)),
        V_CVT_OFF_F32_I4 => un(d, a, |x| fb(f32::from(((x as u8) << 4) as i8 >> 4) / 16.0)),
        V_CVT_F32_BF16 => un(d, a, |x| u64::from((x as u32) << 16)),
        V_CVT_PKRTZ_F16_F32 => bin(d, a, b, |x, y| {
            u64::from(f32_to_f16_rtz(f(x))) | u64::from(f32_to_f16_rtz(f(y))) << 16
        }),
        V_CVT_PK_F16_F32 => bin(d, a, b, |x, y| hb(f(x)) | hb(f(y)) << 16),
        V_CVT_PK_BF16_F32 => bin(d, a, b, |x, y| {
            u64::from(bf16_rne(f(x))) | u64::from(bf16_rne(f(y))) << 16
        }),
        V_CVT_PKNORM_I16_F32 => bin(d, a, b, |x, y| {
            u64::from(to_snorm16(f(x))) | u64::from(to_snorm16(f(y))) << 16
        }),
        V_CVT_PKNORM_U16_F32 => bin(d, a, b, |x, y| {
            u64::from(to_unorm16(f(x))) | u64::from(to_unorm16(f(y))) << 16
        }),
        V_CVT_PKNORM_I16_F16 => bin(d, a, b, |x, y| {
            u64::from(to_snorm16(hf(x))) | u64::from(to_snorm16(hf(y))) << 16
        }),
        V_CVT_PKNORM_U16_F16 => bin(d, a, b, |x, y| {
            u64::from(to_unorm16(hf(x))) | u64::from(to_unorm16(hf(y))) << 16
        }),
        V_CVT_PK_U16_U32 => bin(d, a, b, |x, y| {
            (x as u32).min(0xffff) as u64 | u64::from((y as u32).min(0xffff)) << 16
        }),
        V_CVT_PK_I16_I32 => bin(d, a, b, |x, y| {
            let s = |v: u64| u64::from((v as u32 as i32).clamp(-32768, 32767) as i16 as u16);
            s(x) | s(y) << 16
        }),
        V_CVT_PK_U8_F32 => tri(d, a, b, c, |x, y, z| {
            let sh = (y as u32 & 3) * 8;
            u64::from((z as u32 & !(0xff << sh)) | (f32_to_u8(f(x)) & 0xff) << sh)
        }),
        V_CVT_NORM_I16_F16 => un(d, a, |x| u64::from(to_snorm16(hf(x)))),
        V_CVT_NORM_U16_F16 => un(d, a, |x| u64::from(to_unorm16(hf(x)))),
        V_ASHR_PK_I8_I32 | V_ASHR_PK_U8_I32 => tri(d, a, b, c, |x, y, z| {
            let sh = z as u32 & 31;
            let sat = |v: u64| {
                let n = (v as u32 as i32) >> sh;
                u64::from(if op == V_ASHR_PK_I8_I32 {
                    n.clamp(-128, 127) as u8
                } else {
                    n.clamp(0, 255) as u8
                })
            };
            sat(x) | sat(y) << 8
        }),
        V_PACK_B32_F16 => bin(d, a, b, |x, y| (x & 0xffff) | (y & 0xffff) << 16),
        V_SAT_PK_U8_I16 => un(d, a, |x| {
            let s = |v: u64| u64::from((v as u16 as i16).clamp(0, 255) as u16);
            s(x) | s(x >> 16) << 8
        }),

        // 8-bit floats (gfx942: FNUZ, gfx950: OCP); the clamp bit saturates.
        V_CVT_F32_FP8 | V_CVT_F32_BF8 => {
            let fmt = if op == V_CVT_F32_FP8 {
                Fp8::e4m3(e.fnuz)
            } else {
                Fp8::e5m2(e.fnuz)
            };
            // The VOP3 byte select reads op_sel[0] as the high bit of the byte index and op_sel[1]
            // as the low bit (byte 1 is op_sel:[0,1], byte 2 op_sel:[1,0]).
            let sel = if e.vop3 {
                u32::from((e.mods.op_sel & 1) << 1 | (e.mods.op_sel >> 1 & 1)) * 8
            } else {
                0
            };
            un(d, a, |x| fb(fmt.decode((x >> sel) as u8)))
        }
        V_CVT_PK_F32_FP8 | V_CVT_PK_F32_BF8 => {
            let fmt = if op == V_CVT_PK_F32_FP8 {
                Fp8::e4m3(e.fnuz)
            } else {
                Fp8::e5m2(e.fnuz)
            };
            let sel = if e.vop3 {
                u32::from(e.mods.op_sel & 1) * 16
            } else {
                0
            };
            un(d, a, |x| {
                fb(fmt.decode((x >> sel) as u8)) | fb(fmt.decode((x >> (sel + 8)) as u8)) << 32
            })
        }
        V_CVT_PK_FP8_F32 | V_CVT_PK_BF8_F32 => {
            let fmt = if op == V_CVT_PK_FP8_F32 {
                Fp8::e4m3(e.fnuz)
            } else {
                Fp8::e5m2(e.fnuz)
            };
            bin(d, a, b, |x, y| {
                u64::from(fmt.encode(f(x), cl)) | u64::from(fmt.encode(f(y), cl)) << 8
            })
        }
        V_CVT_SR_FP8_F32 | V_CVT_SR_BF8_F32 => {
            let fmt = if op == V_CVT_SR_FP8_F32 {
                Fp8::e4m3(e.fnuz)
            } else {
                Fp8::e5m2(e.fnuz)
            };
            bin(d, a, b, |x, y| {
                // Stochastic rounding: the random bits are added to the mantissa (wrapping within it).
                let v = x as u32;
                let m = (v & 0x7f_ffff).wrapping_add(y as u32 >> 12) & 0x7f_ffff;
                u64::from(fmt.encode(f32::from_bits(v & !0x7f_ffff | m), cl))
            })
        }

        // 32-bit integer arithmetic.
        V_ADD_U32 => bin(d, a, b, |x, y| {
            if cl {
                sat_u32(i64::from(x as u32) + i64::from(y as u32))
            } else {
                u64::from((x as u32).wrapping_add(y as u32))
            }
        }),
        V_SUB_U32 => bin(d, a, b, |x, y| {
            if cl {
                sat_u32(i64::from(x as u32) - i64::from(y as u32))
            } else {
                u64::from((x as u32).wrapping_sub(y as u32))
            }
        }),
        V_SUBREV_U32 => bin(d, a, b, |x, y| {
            if cl {
                sat_u32(i64::from(y as u32) - i64::from(x as u32))
            } else {
                u64::from((y as u32).wrapping_sub(x as u32))
            }
        }),
        V_ADD_I32 => bin(d, a, b, |x, y| {
            u64::from(if cl {
                (x as i32).saturating_add(y as i32)
            } else {
                (x as i32).wrapping_add(y as i32)
            } as u32)
        }),
        V_SUB_I32 => bin(d, a, b, |x, y| {
            u64::from(if cl {
                (x as i32).saturating_sub(y as i32)
            } else {
                (x as i32).wrapping_sub(y as i32)
            } as u32)
        }),
        V_ADD_CO_U32 | V_SUB_CO_U32 | V_SUBREV_CO_U32 | V_ADDC_CO_U32 | V_SUBB_CO_U32
        | V_SUBBREV_CO_U32 => {
            let mut carry = 0u64;
            for l in 0..n {
                let cin = i64::from(
                    matches!(op, V_ADDC_CO_U32 | V_SUBB_CO_U32 | V_SUBBREV_CO_U32)
                        && c[l] >> l & 1 == 1,
                );
                let (x, y) = (i64::from(a[l] as u32), i64::from(b[l] as u32));
                let r = match op {
                    V_ADD_CO_U32 | V_ADDC_CO_U32 => x + y + cin,
                    V_SUB_CO_U32 | V_SUBB_CO_U32 => x - y - cin,
                    _ => y - x - cin,
                };
                let out = !(0..=i64::from(u32::MAX)).contains(&r);
                carry |= u64::from(out) << l;
                d[l] = if cl {
                    sat_u32(r)
                } else {
                    r as u64 & 0xffff_ffff
                };
            }
            return Ok(Res::VectorCarry(carry));
        }
        V_MUL_LO_U32 => bin(d, a, b, |x, y| u64::from((x as u32).wrapping_mul(y as u32))),
        V_MUL_HI_U32 => bin(d, a, b, |x, y| {
            ((x & 0xffff_ffff) * (y & 0xffff_ffff)) >> 32
        }),
        V_MUL_HI_I32 => bin(d, a, b, |x, y| {
            ((i64::from(x as u32 as i32) * i64::from(y as u32 as i32)) >> 32) as u64 & 0xffff_ffff
        }),
        V_MUL_I32_I24 => bin(d, a, b, |x, y| u64::from((i24(x) * i24(y)) as u32)),
        V_MUL_HI_I32_I24 => bin(d, a, b, |x, y| {
            ((i24(x) * i24(y)) >> 32) as u64 & 0xffff_ffff
        }),
        V_MUL_U32_U24 => bin(d, a, b, |x, y| {
            ((x & 0xff_ffff) * (y & 0xff_ffff)) & 0xffff_ffff
        }),
        V_MUL_HI_U32_U24 => bin(d, a, b, |x, y| ((x & 0xff_ffff) * (y & 0xff_ffff)) >> 32),
        V_MAD_I32_I24 => tri(d, a, b, c, |x, y, z| {
            u64::from((i24(x) * i24(y) + i64::from(z as u32 as i32)) as u32)
        }),
        V_MAD_U32_U24 => tri(d, a, b, c, |x, y, z| {
            ((x & 0xff_ffff) * (y & 0xff_ffff) + (z & 0xffff_ffff)) & 0xffff_ffff
        }),
        V_MAD_U64_U32 | V_MAD_I64_I32 => {
            let mut carry = 0u64;
            for l in 0..n {
                let (r, o) = if op == V_MAD_U64_U32 {
                    let p = u128::from(a[l] as u32) * u128::from(b[l] as u32) + u128::from(c[l]);
                    (p as u64, p >> 64 != 0)
                } else {
                    let p = i128::from(a[l] as u32 as i32) * i128::from(b[l] as u32 as i32)
                        + i128::from(c[l] as i64);
                    (p as u64, p != i128::from(p as i64))
                };
                d[l] = r;
                carry |= u64::from(o) << l;
            }
            return Ok(Res::VectorCarry(carry));
        }
        V_MIN_I32 => bin(d, a, b, |x, y| u64::from((x as i32).min(y as i32) as u32)),
        V_MAX_I32 => bin(d, a, b, |x, y| u64::from((x as i32).max(y as i32) as u32)),
        V_MIN_U32 => bin(d, a, b, |x, y| u64::from((x as u32).min(y as u32))),
        V_MAX_U32 => bin(d, a, b, |x, y| u64::from((x as u32).max(y as u32))),
        V_MIN3_I32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as i32).min(y as i32).min(z as i32) as u32)
        }),
        V_MAX3_I32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as i32).max(y as i32).max(z as i32) as u32)
        }),
        V_MED3_I32 => tri(d, a, b, c, |x, y, z| {
            u64::from(med3(x as i32, y as i32, z as i32) as u32)
        }),
        V_MIN3_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32).min(y as u32).min(z as u32))
        }),
        V_MAX3_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32).max(y as u32).max(z as u32))
        }),
        V_MED3_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from(med3(x as u32, y as u32, z as u32))
        }),
        V_SAD_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32).abs_diff(y as u32).wrapping_add(z as u32))
        }),
        V_SAD_U8 => tri(d, a, b, c, |x, y, z| {
            u64::from(sad_u8(x as u32, y as u32).wrapping_add(z as u32))
        }),
        V_SAD_HI_U8 => tri(d, a, b, c, |x, y, z| {
            u64::from((sad_u8(x as u32, y as u32) << 16).wrapping_add(z as u32))
        }),
        V_SAD_U16 => tri(d, a, b, c, |x, y, z| {
            let s = (x as u16).abs_diff(y as u16) as u32
                + ((x >> 16) as u16).abs_diff((y >> 16) as u16) as u32;
            u64::from(s.wrapping_add(z as u32))
        }),
        V_MSAD_U8 => tri(d, a, b, c, |x, y, z| {
            let s: u32 = (0..4)
                .filter(|k| y >> (8 * k) & 0xff != 0)
                .map(|k| {
                    ((x >> (8 * k) & 0xff) as i32 - (y >> (8 * k) & 0xff) as i32).unsigned_abs()
                })
                .sum();
            u64::from(s.wrapping_add(z as u32))
        }),
        V_LERP_U8 => tri(d, a, b, c, |x, y, z| {
            (0..4)
                .map(|k| {
                    (((x >> (8 * k) & 0xff) + (y >> (8 * k) & 0xff) + (z >> (8 * k) & 1)) >> 1)
                        << (8 * k)
                })
                .sum()
        }),

        // Bitwise and shifts.
        V_AND_B32 => bin(d, a, b, |x, y| x & y & 0xffff_ffff),
        V_OR_B32 => bin(d, a, b, |x, y| (x | y) & 0xffff_ffff),
        V_XOR_B32 => bin(d, a, b, |x, y| (x ^ y) & 0xffff_ffff),
        V_XNOR_B32 => bin(d, a, b, |x, y| !(x ^ y) & 0xffff_ffff),
        V_NOT_B32 => un(d, a, |x| !x & 0xffff_ffff),
        V_BFREV_B32 => un(d, a, |x| u64::from((x as u32).reverse_bits())),
        V_FFBH_U32 => un(d, a, |x| {
            if x as u32 == 0 {
                0xffff_ffff
            } else {
                u64::from((x as u32).leading_zeros())
            }
        }),
        V_FFBL_B32 => un(d, a, |x| {
            if x as u32 == 0 {
                0xffff_ffff
            } else {
                u64::from((x as u32).trailing_zeros())
            }
        }),
        V_FFBH_I32 => un(d, a, |x| {
            let v = x as u32 as i32;
            if v == 0 || v == -1 {
                0xffff_ffff
            } else {
                u64::from(if v < 0 {
                    (!v).leading_zeros()
                } else {
                    v.leading_zeros()
                })
            }
        }),
        V_BCNT_U32_B32 => bin(d, a, b, |x, y| {
            u64::from((x as u32).count_ones().wrapping_add(y as u32))
        }),
        V_MBCNT_LO_U32_B32 => lanes(d, |l| {
            let m = if l >= 32 {
                u32::MAX
            } else {
                ((1u64 << l) - 1) as u32
            };
            u64::from((a[l] as u32 & m).count_ones().wrapping_add(b[l] as u32))
        }),
        V_MBCNT_HI_U32_B32 => lanes(d, |l| {
            let m = if l <= 32 {
                0
            } else {
                ((1u64 << (l - 32)) - 1) as u32
            };
            u64::from((a[l] as u32 & m).count_ones().wrapping_add(b[l] as u32))
        }),
        V_LSHLREV_B32 => bin(d, a, b, |x, y| u64::from((y as u32) << (x & 31))),
        V_LSHRREV_B32 => bin(d, a, b, |x, y| u64::from((y as u32) >> (x & 31))),
        V_ASHRREV_I32 => bin(d, a, b, |x, y| {
            u64::from(((y as u32 as i32) >> (x & 31)) as u32)
        }),
        V_LSHLREV_B64 => bin(d, a, b, |x, y| y << (x & 63)),
        V_LSHRREV_B64 => bin(d, a, b, |x, y| y >> (x & 63)),
        V_ASHRREV_I64 => bin(d, a, b, |x, y| ((y as i64) >> (x & 63)) as u64),
        V_LSHL_ADD_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from(((x as u32) << (y & 31)).wrapping_add(z as u32))
        }),
        V_ADD_LSHL_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32).wrapping_add(y as u32) << (z & 31))
        }),
        V_ADD3_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32).wrapping_add(y as u32).wrapping_add(z as u32))
        }),
        V_LSHL_OR_B32 => tri(d, a, b, c, |x, y, z| {
            u64::from(((x as u32) << (y & 31)) | z as u32)
        }),
        V_AND_OR_B32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32 & y as u32) | z as u32)
        }),
        V_OR3_B32 => tri(d, a, b, c, |x, y, z| (x | y | z) & 0xffff_ffff),
        V_XAD_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32 ^ y as u32).wrapping_add(z as u32))
        }),
        V_LSHL_ADD_U64 => tri(d, a, b, c, |x, y, z| (x << (y & 7)).wrapping_add(z)),
        V_BFE_U32 => tri(d, a, b, c, |x, y, z| {
            u64::from(bfe_u(x as u32, y as u32, z as u32))
        }),
        V_BFE_I32 => tri(d, a, b, c, |x, y, z| {
            u64::from(bfe_i(x as u32, y as u32, z as u32))
        }),
        V_BFI_B32 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u32 & y as u32) | (!(x as u32) & z as u32))
        }),
        V_BFM_B32 => bin(d, a, b, |x, y| {
            u64::from((((1u64 << (x & 31)) - 1) as u32) << (y & 31))
        }),
        V_ALIGNBIT_B32 => tri(d, a, b, c, |x, y, z| {
            ((x & 0xffff_ffff) << 32 | (y & 0xffff_ffff)) >> (z & 31) & 0xffff_ffff
        }),
        V_ALIGNBYTE_B32 => tri(d, a, b, c, |x, y, z| {
            ((x & 0xffff_ffff) << 32 | (y & 0xffff_ffff)) >> ((z & 3) * 8) & 0xffff_ffff
        }),
        V_PERM_B32 => tri(d, a, b, c, |x, y, z| {
            let data = (x & 0xffff_ffff) << 32 | (y & 0xffff_ffff);
            let sel = z as u32;
            (0..4)
                .map(|k| u64::from(perm_byte(data, sel >> (8 * k) & 0xff)) << (8 * k))
                .sum()
        }),
        V_BITOP3_B32 | V_BITOP3_B16 => {
            let m = e.mods;
            let table = u32::from(m.neg) | u32::from(m.abs) << 3 | u32::from(m.omod) << 6;
            tri(d, a, b, c, |x, y, z| {
                let mut r = 0u64;
                for k in 0..8u32 {
                    if table >> k & 1 == 1 {
                        let pick = |v: u64, bit: u32| if k >> bit & 1 == 1 { v } else { !v };
                        r |= pick(x, 2) & pick(y, 1) & pick(z, 0);
                    }
                }
                r & 0xffff_ffff
            })
        }

        // 16-bit integer arithmetic.
        V_ADD_U16 => bin(d, a, b, |x, y| {
            if cl {
                u64::from((x as u16).saturating_add(y as u16))
            } else {
                u64::from((x as u16).wrapping_add(y as u16))
            }
        }),
        V_SUB_U16 => bin(d, a, b, |x, y| {
            if cl {
                u64::from((x as u16).saturating_sub(y as u16))
            } else {
                u64::from((x as u16).wrapping_sub(y as u16))
            }
        }),
        V_SUBREV_U16 => bin(d, a, b, |x, y| {
            if cl {
                u64::from((y as u16).saturating_sub(x as u16))
            } else {
                u64::from((y as u16).wrapping_sub(x as u16))
            }
        }),
        V_ADD_I16 => bin(d, a, b, |x, y| {
            u64::from(if cl {
                (x as i16).saturating_add(y as i16)
            } else {
                (x as i16).wrapping_add(y as i16)
            } as u16)
        }),
        V_SUB_I16 => bin(d, a, b, |x, y| {
            u64::from(if cl {
                (x as i16).saturating_sub(y as i16)
            } else {
                (x as i16).wrapping_sub(y as i16)
            } as u16)
        }),
        V_MUL_LO_U16 => bin(d, a, b, |x, y| u64::from((x as u16).wrapping_mul(y as u16))),
        V_LSHLREV_B16 => bin(d, a, b, |x, y| u64::from((y as u16) << (x & 15))),
        V_LSHRREV_B16 => bin(d, a, b, |x, y| u64::from((y as u16) >> (x & 15))),
        V_ASHRREV_I16 => bin(d, a, b, |x, y| {
            u64::from(((y as u16 as i16) >> (x & 15)) as u16)
        }),
        V_MAX_U16 => bin(d, a, b, |x, y| u64::from((x as u16).max(y as u16))),
        V_MIN_U16 => bin(d, a, b, |x, y| u64::from((x as u16).min(y as u16))),
        V_MAX_I16 => bin(d, a, b, |x, y| u64::from((x as i16).max(y as i16) as u16)),
        V_MIN_I16 => bin(d, a, b, |x, y| u64::from((x as i16).min(y as i16) as u16)),
        V_MAD_U16 | V_MAD_LEGACY_U16 => tri(d, a, b, c, |x, y, z| {
            let r = u32::from(x as u16) * u32::from(y as u16) + u32::from(z as u16);
            u64::from(if cl { r.min(0xffff) } else { r & 0xffff })
        }),
        V_MAD_I16 | V_MAD_LEGACY_I16 => tri(d, a, b, c, |x, y, z| {
            let r = i32::from(x as i16) * i32::from(y as i16) + i32::from(z as i16);
            u64::from(if cl {
                r.clamp(-32768, 32767) as u16
            } else {
                r as u16
            })
        }),
        V_MAD_U32_U16 => tri(d, a, b, c, |x, y, z| {
            u64::from((u32::from(x as u16) * u32::from(y as u16)).wrapping_add(z as u32))
        }),
        V_MAD_I32_I16 => tri(d, a, b, c, |x, y, z| {
            u64::from((i32::from(x as i16) * i32::from(y as i16)).wrapping_add(z as i32) as u32)
        }),
        V_MIN3_I16 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as i16).min(y as i16).min(z as i16) as u16)
        }),
        V_MAX3_I16 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as i16).max(y as i16).max(z as i16) as u16)
        }),
        V_MED3_I16 => tri(d, a, b, c, |x, y, z| {
            u64::from(med3(x as i16, y as i16, z as i16) as u16)
        }),
        V_MIN3_U16 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u16).min(y as u16).min(z as u16))
        }),
        V_MAX3_U16 => tri(d, a, b, c, |x, y, z| {
            u64::from((x as u16).max(y as u16).max(z as u16))
        }),
        V_MED3_U16 => tri(d, a, b, c, |x, y, z| {
            u64::from(med3(x as u16, y as u16, z as u16))
        }),

        // Dot products with an accumulator in the destination (DOT*C).
        V_DOT2C_F32_F16 => tri(d, a, b, c, |x, y, z| {
            fb(f(z) + hf(x) * hf(y) + hf(x >> 16) * hf(y >> 16))
        }),
        V_DOT2C_I32_I16 => tri(d, a, b, c, |x, y, z| {
            let p = |k: u32| i32::from((x >> (16 * k)) as i16) * i32::from((y >> (16 * k)) as i16);
            u64::from((z as i32).wrapping_add(p(0)).wrapping_add(p(1)) as u32)
        }),
        V_DOT2C_F32_BF16 => tri(d, a, b, c, |x, y, z| {
            let bf = |v: u64, k: u32| f32::from_bits(((v >> (16 * k)) as u32 & 0xffff) << 16);
            fb(f(z) + bf(x, 0) * bf(y, 0) + bf(x, 1) * bf(y, 1))
        }),
        V_DOT8C_I32_I4 => tri(d, a, b, c, |x, y, z| {
            let nib = |v: u64, k: u32| i32::from(((v >> (4 * k)) as u8) << 4) as i8 >> 4;
            let p = |k: u32| i32::from(nib(x, k)) * i32::from(nib(y, k));
            u64::from((0..8).fold(z as i32, |acc, k| acc.wrapping_add(p(k))) as u32)
        }),
        V_PK_FMAC_F16 => tri(d, a, b, c, |x, y, z| {
            let fma = |k: u32| {
                let v = |w: u64| f64::from(hf(w >> (16 * k)));
                u64::from(fma_to_f16(v(x), v(y), v(z)).to_bits()) << (16 * k)
            };
            fma(0) | fma(1)
        }),
        V_DOT4C_I32_I8 => tri(d, a, b, c, |x, y, z| {
            let p = |k: u32| i32::from((x >> (8 * k)) as i8) * i32::from((y >> (8 * k)) as i8);
            u64::from((0..4).fold(z as i32, |acc, k| acc.wrapping_add(p(k))) as u32)
        }),

        _ => {
            if let Some(cmp) = compares()[op as usize] {
                let m = compare(cmp, a, b);
                return Ok(if cmp.exec {
                    Res::MaskExec(m)
                } else {
                    Res::Mask(m)
                });
            }
            return Err(Fault::Unsupported);
        }
    }
    Ok(Res::Vector)
}

fn i24(x: u64) -> i64 {
    i64::from(((x as u32) << 8) as i32 >> 8)
}

fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.max(b).min(a.min(b).max(c))
}

fn bf16_rne(x: f32) -> u16 {
    if x.is_nan() {
        return (x.to_bits() >> 16) as u16 | 0x40;
    }
    let b = x.to_bits();
    let round = 0x7fff + (b >> 16 & 1);
    (b.wrapping_add(round) >> 16) as u16
}
