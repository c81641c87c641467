//! The host model of the integer and f32 atomics the buffer tests check, named by the
//! mnemonic's operation part (`add`, `min_i`, `max_u`, `cmpswap`, `add_f32`, ...).

/// A 32- or 64-bit atomic: the new memory value from `old`, the data `x`
/// and the compare value `c`.
pub fn new_value(op: &str, wide: bool, old: u64, x: u64, c: u64) -> u64 {
    let m = if wide { u64::MAX } else { 0xffff_ffff };
    let s = |v: u64| {
        if wide {
            v as i64
        } else {
            i64::from(v as u32 as i32)
        }
    };
    let r = match op {
        "add" => old.wrapping_add(x),
        "sub" => old.wrapping_sub(x),
        "min_i" => {
            if s(x) < s(old) {
                x
            } else {
                old
            }
        }
        "max_i" => {
            if s(x) > s(old) {
                x
            } else {
                old
            }
        }
        "min_u" => old.min(x),
        "max_u" => old.max(x),
        "and" => old & x,
        "or" => old | x,
        "xor" => old ^ x,
        "swap" => x,
        "cmpswap" => {
            if old == c {
                x
            } else {
                old
            }
        }
        "inc" => {
            if old >= x {
                0
            } else {
                old + 1
            }
        }
        "dec" => {
            if old == 0 || old > x {
                x
            } else {
                old - 1
            }
        }
        "add_f32" => u64::from((f32::from_bits(old as u32) + f32::from_bits(x as u32)).to_bits()),
        _ => unreachable!("{op}"),
    };
    r & m
}
