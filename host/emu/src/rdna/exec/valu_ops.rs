//! Per-lane semantics of the RDNA VALU operations that GFX9 does not have (the others run GFX9's,
//! see `lower`). Sources arrive as raw lane bits with modifiers applied, as for GFX9's.

use super::super::opcodes::Op;
use crate::gfx9::exec::float::{fma_to_f16, maximum32, minimum32};
use crate::gfx9::exec::valu::Lanes;

/// Computes `op` for every lane if it is an RDNA-only operation; `false` if it is not one.
pub(crate) fn compute(op: Op, s: &[Lanes; 3], d: &mut Lanes) -> bool {
    let (a, b, c) = (&s[0], &s[1], &s[2]);
    let f = |x: u64| f32::from_bits(x as u32);
    let fb = |x: f32| u64::from(x.to_bits());
    let each = |d: &mut Lanes, op: &dyn Fn(u64, u64, u64) -> u64| {
        for l in 0..64 {
            d[l] = op(a[l], b[l], c[l]);
        }
    };
    match op {
        Op::V_XOR3_B32 => each(d, &|x, y, z| (x ^ y ^ z) & 0xffff_ffff),
        Op::V_CVT_PK_I16_I32 => each(d, &|x, y, _| {
            let sat = |v: u64| (v as u32 as i32).clamp(-32768, 32767) as u16 as u64;
            sat(x) | sat(y) << 16
        }),
        Op::V_CVT_PK_U16_U32 => each(d, &|x, y, _| {
            let sat = |v: u64| (v as u32).min(0xffff) as u64;
            sat(x) | sat(y) << 16
        }),
        Op::V_MAXIMUM_F32 => each(d, &|x, y, _| fb(maximum32(f(x), f(y)))),
        Op::V_MINIMUM_F32 => each(d, &|x, y, _| fb(minimum32(f(x), f(y)))),
        // The decoder puts K where it is read (FMAMK: src1, FMAAK: src2) and FMAC's accumulator
        // in src2: S0 * S1 + S2.
        Op::V_FMAMK_F16 | Op::V_FMAAK_F16 | Op::V_FMAC_F16 => each(d, &|x, y, z| {
            let h = |v: u64| f64::from(half::f16::from_bits(v as u16).to_f32());
            u64::from(fma_to_f16(h(x), h(y), h(z)).to_bits())
        }),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: Op, a: u64, b: u64, c: u64) -> u64 {
        let mut d = [0u64; 64];
        assert!(compute(op, &[[a; 64], [b; 64], [c; 64]], &mut d));
        d[0]
    }

    #[test]
    fn xor3_and_saturating_packs() {
        assert_eq!(run(Op::V_XOR3_B32, 0xf0f0, 0x0ff0, 0x1), 0xff01);
        assert_eq!(
            run(Op::V_CVT_PK_I16_I32, (-40000i32) as u32 as u64, 123, 0),
            0x007b_8000
        );
        assert_eq!(run(Op::V_CVT_PK_U16_U32, 70000, 5, 0), 0x0005_ffff);
    }

    #[test]
    fn maximum_and_minimum_propagate_nan() {
        let nan = u64::from(f32::NAN.to_bits());
        let one = u64::from(1.0f32.to_bits());
        assert!(f32::from_bits(run(Op::V_MAXIMUM_F32, nan, one, 0) as u32).is_nan());
        assert!(f32::from_bits(run(Op::V_MINIMUM_F32, one, nan, 0) as u32).is_nan());
        let two = u64::from(2.0f32.to_bits());
        assert_eq!(run(Op::V_MAXIMUM_F32, one, two, 0), two);
    }
}
