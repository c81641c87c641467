//! Local data share (DS): reads, writes (one or two addresses), atomics, and the cross-lane
//! permutes (ds_swizzle, ds_permute, ds_bpermute). Also counts LDS bank conflicts.

use super::super::inst::Instruction;
use super::super::opcodes::{OP_COUNT, Op};
use super::valu::read_operand;
use super::vmem::{Access, D16, Rmw, access_of, read_wide, rmw, write_result};
use super::{Ctx, Wave};
use crate::counters::InstructionClass;
use crate::error::Fault;
use std::sync::OnceLock;

/// LDS banks (each 4 bytes wide) on GFX9.
const BANKS: usize = 32;

/// What a DS instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DsKind {
    /// A single-address access (load, store or atomic).
    One(Access, bool),
    /// Two addresses (read2/write2/wrxchg2), element size in bytes, offsets scaled by 64 elements.
    Two {
        bytes: u32,
        st64: bool,
        read: bool,
        xchg: bool,
    },
    Swizzle,
    Permute,
    Bpermute,
    Nop,
    /// ds_append (add) / ds_consume (subtract) the number of active lanes at M0 + offset.
    Append {
        consume: bool,
    },
    /// ds_read_addtid_b32 / ds_write_addtid_b32: address M0[15:0] + offset + lane * 4.
    AddTid {
        read: bool,
    },
    /// ds_condxchg32_rtn_b64: two dwords each replaced if its data's top bit is set.
    CondXchg,
    /// gfx950's transposing loads `ds_read_b64_tr_b{4,8,16}` and `ds_read_b96_tr_b6`: each lane
    /// reads `bytes` (8 or 12) at its address, and each group of 16 lanes exchanges the
    /// `bits`-wide elements it read (see [`transpose`]).
    Transpose {
        bytes: u32,
        bits: u32,
    },
}

fn kinds() -> &'static [Option<DsKind>] {
    static TABLE: OnceLock<Vec<Option<DsKind>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..OP_COUNT)
            .map(|k| {
                // SAFETY: `Op` is a `repr(u16)` enum whose discriminants are exactly 0..OP_COUNT.
                let op: Op = unsafe { std::mem::transmute::<u16, Op>(k as u16) };
                ds_kind(op.name().strip_prefix("ds_")?)
            })
            .collect()
    })
}

fn ds_kind(rest: &str) -> Option<DsKind> {
    match rest {
        "swizzle_b32" => return Some(DsKind::Swizzle),
        "permute_b32" => return Some(DsKind::Permute),
        "bpermute_b32" => return Some(DsKind::Bpermute),
        "nop" => return Some(DsKind::Nop),
        "append" => return Some(DsKind::Append { consume: false }),
        "consume" => return Some(DsKind::Append { consume: true }),
        "read_addtid_b32" => return Some(DsKind::AddTid { read: true }),
        "write_addtid_b32" => return Some(DsKind::AddTid { read: false }),
        "condxchg32_rtn_b64" => return Some(DsKind::CondXchg),
        "read_b64_tr_b4" => return Some(DsKind::Transpose { bytes: 8, bits: 4 }),
        "read_b64_tr_b8" => return Some(DsKind::Transpose { bytes: 8, bits: 8 }),
        "read_b64_tr_b16" => return Some(DsKind::Transpose { bytes: 8, bits: 16 }),
        "read_b96_tr_b6" => return Some(DsKind::Transpose { bytes: 12, bits: 6 }),
        _ => {}
    }
    for (prefix, read, xchg) in [
        ("read2", true, false),
        ("write2", false, false),
        ("wrxchg2", false, true),
    ] {
        if let Some(r) = rest.strip_prefix(prefix) {
            let (r, st64) = match r.strip_prefix("st64") {
                Some(x) => (x, true),
                None => (r, false),
            };
            let r = r.strip_prefix("_rtn").unwrap_or(r);
            let bytes = match r {
                "_b32" => 4,
                "_b64" => 8,
                _ => return None,
            };
            return Some(DsKind::Two {
                bytes,
                st64,
                read,
                xchg,
            });
        }
    }
    if let Some(a) = access_of(rest) {
        return Some(DsKind::One(a, false));
    }
    // Atomics: ds_<op>[_rtn]_<type>.
    let (rest, rtn) = match rest.split_once("_rtn_") {
        Some((op, ty)) => (format!("{op}_{ty}"), true),
        None => (rest.to_string(), false),
    };
    let (op, ty) = rest.rsplit_once('_')?;
    let wide = matches!(ty, "b64" | "u64" | "i64" | "f64");
    let signed = ty.starts_with('i');
    let rmw = match (op, ty) {
        ("add", "f32") => Rmw::AddF32,
        ("add", "f64") => Rmw::AddF64,
        ("min", "f32") => Rmw::MinF32,
        ("max", "f32") => Rmw::MaxF32,
        ("min", "f64") => Rmw::MinF64,
        ("max", "f64") => Rmw::MaxF64,
        ("pk_add", "f16") => Rmw::PkAddF16,
        ("pk_add", "bf16") => Rmw::PkAddBf16,
        ("add", _) => Rmw::Add,
        ("sub", _) => Rmw::Sub,
        ("rsub", _) => Rmw::Rsub,
        ("inc", _) => Rmw::Inc,
        ("dec", _) => Rmw::Dec,
        ("min", _) if signed => Rmw::SMin,
        ("max", _) if signed => Rmw::SMax,
        ("min", _) => Rmw::UMin,
        ("max", _) => Rmw::UMax,
        ("and", _) => Rmw::And,
        ("or", _) => Rmw::Or,
        ("xor", _) => Rmw::Xor,
        ("mskor", _) => Rmw::MskOr,
        ("wrxchg", _) => Rmw::Swap,
        ("cmpst", _) => Rmw::CmpSwap,
        ("wrap", _) => Rmw::Wrap,
        _ => return None,
    };
    Some(DsKind::One(
        Access::Atomic {
            op: rmw,
            bytes: if wide { 8 } else { 4 },
        },
        rtn,
    ))
}

/// Executes a DS instruction.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    ctx.count(InstructionClass::Lds);
    if i.fields.gds {
        return Err(Fault::NotExecuted(
            "global data share and global wave sync instructions (gds, ds_gws_*)",
        ));
    }
    let kind = kinds()[i.op as usize].ok_or(Fault::Unsupported)?;
    let exec = w.exec();
    let mut addr = [0u64; 64];
    if i.src[0].is_some() {
        read_operand(w, &i.src[0], &mut addr)?;
    }
    let offset16 = (i.fields.imm as u64 & 0xff) | u64::from(i.fields.offset1) << 8;
    match kind {
        DsKind::Nop => Ok(()),
        DsKind::Swizzle => swizzle(w, i, exec, offset16 as u16),
        DsKind::Append { consume } => {
            let at = u64::from(w.sgpr[usize::from(super::super::decode::M0)]) + offset16;
            let r = range(ctx, at & !3, 4)?;
            let slot = ctx.lds_atomic(r, 0)?;
            let old = u32::from_le_bytes(slot[..4].try_into().unwrap_or([0; 4]));
            let n = exec.count_ones();
            let new = if consume {
                old.wrapping_sub(n)
            } else {
                old.wrapping_add(n)
            };
            slot.copy_from_slice(&new.to_le_bytes());
            count_lds(ctx, &[(0, at & !3)], 4, 4, 1);
            let out = [[old, 0, 0, 0]; 64];
            write_result(w, &i.dst, exec, &out, D16::No)
        }
        DsKind::AddTid { read } => {
            let base = u64::from(w.sgpr[usize::from(super::super::decode::M0)] & 0xffff) + offset16;
            let mut data = [0u64; 64];
            if !read {
                read_operand(w, &i.src[1], &mut data)?;
            }
            let mut out = [[0u32; 4]; 64];
            let mut bank_addrs = Vec::with_capacity(64);
            for l in 0..64 {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let at = base + 4 * l as u64;
                let r = range(ctx, at, 4)?;
                bank_addrs.push((l, at));
                if read {
                    out[l][0] =
                        u32::from_le_bytes(ctx.lds_read(r, l)?.try_into().unwrap_or([0; 4]));
                } else {
                    ctx.lds_write(r, l)?
                        .copy_from_slice(&(data[l] as u32).to_le_bytes());
                }
            }
            count_lds(ctx, &bank_addrs, 4, 4, exec);
            if read {
                write_result(w, &i.dst, exec, &out, D16::No)?;
            }
            Ok(())
        }
        DsKind::CondXchg => {
            let mut data = [[0u64; 64]; 2];
            read_wide(w, &i.src[1], &mut data)?;
            let mut out = [[0u32; 4]; 64];
            let mut bank_addrs = Vec::with_capacity(64);
            for l in 0..64 {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let at0 = (addr[l] + offset16) & 0xfff8;
                let d = data[0][l];
                for (k, slot) in out[l].iter_mut().take(2).enumerate() {
                    let at = at0 + 4 * k as u64;
                    let r = range(ctx, at, 4)?;
                    let bytes = ctx.lds_atomic(r, l)?;
                    *slot = u32::from_le_bytes(bytes[..4].try_into().unwrap_or([0; 4]));
                    let word = (d >> (32 * k)) as u32;
                    if word >> 31 == 1 {
                        bytes.copy_from_slice(&(word & 0x7fff_ffff).to_le_bytes());
                    }
                }
                bank_addrs.push((l, at0));
            }
            count_lds(ctx, &bank_addrs, 8, 8, exec);
            write_result(w, &i.dst, exec, &out, D16::No)
        }
        DsKind::Permute | DsKind::Bpermute => {
            let mut data = [0u64; 64];
            read_operand(w, &i.src[1], &mut data)?;
            let mut tmp = [0u64; 64];
            for l in 0..64 {
                let other = ((addr[l] as u32).wrapping_add(offset16 as u32) / 4 % 64) as usize;
                if kind == DsKind::Bpermute {
                    if exec >> l & 1 == 1 && exec >> other & 1 == 1 {
                        tmp[l] = data[other];
                    }
                } else if exec >> l & 1 == 1 {
                    tmp[other] = data[l];
                }
            }
            let out: [[u32; 4]; 64] = std::array::from_fn(|l| [tmp[l] as u32, 0, 0, 0]);
            write_result(w, &i.dst, exec, &out, D16::No)
        }
        DsKind::Two {
            bytes,
            st64,
            read,
            xchg,
        } => {
            let scale = u64::from(bytes) * if st64 { 64 } else { 1 };
            let o0 = (i.fields.imm as u64 & 0xff) * scale;
            let o1 = u64::from(i.fields.offset1) * scale;
            let mut d0 = [[0u64; 64]; 2];
            let mut d1 = [[0u64; 64]; 2];
            if !read {
                read_wide(w, &i.src[1], &mut d0)?;
                read_wide(w, &i.src[2], &mut d1)?;
            }
            let mut out = [[0u32; 4]; 64];
            let mut bank_addrs = Vec::with_capacity(128);
            for l in 0..64 {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let base = addr[l] & 0xffff_ffff;
                for (k, (off, data)) in [(o0, d0[0][l]), (o1, d1[0][l])].into_iter().enumerate() {
                    let at = (base + off) & 0xffff_ffff;
                    let r = range(ctx, at, bytes)?;
                    bank_addrs.push((l, at));
                    let mut old = [0u8; 8];
                    let place = if read {
                        old[..bytes as usize].copy_from_slice(ctx.lds_read(r, l)?);
                        None
                    } else if xchg {
                        let place = ctx.lds_atomic(r, l)?;
                        old[..bytes as usize].copy_from_slice(place);
                        Some(place)
                    } else {
                        Some(ctx.lds_write(r, l)?)
                    };
                    let old = u64::from_le_bytes(old);
                    if read || xchg {
                        let words = if bytes == 8 {
                            [old as u32, (old >> 32) as u32]
                        } else {
                            [old as u32, 0]
                        };
                        let base_k = k * (bytes as usize / 4);
                        out[l][base_k] = words[0];
                        if bytes == 8 {
                            out[l][base_k + 1] = words[1];
                        }
                    }
                    if let Some(place) = place {
                        place.copy_from_slice(&data.to_le_bytes()[..bytes as usize]);
                    }
                }
            }
            count_lds(ctx, &bank_addrs, bytes, 2 * bytes, exec);
            if read || xchg {
                write_result(w, &i.dst, exec, &out, D16::No)?;
            }
            Ok(())
        }
        DsKind::Transpose { bytes, bits } => {
            let mut loaded = [0u128; 64];
            let mut bank_addrs = Vec::with_capacity(64);
            for (l, slot) in loaded.iter_mut().enumerate() {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let at = (addr[l] + offset16) & 0xffff_ffff;
                let r = range(ctx, at, bytes)?;
                bank_addrs.push((l, at));
                let mut buf = [0u8; 16];
                buf[..bytes as usize].copy_from_slice(ctx.lds_read(r, l)?);
                *slot = u128::from_le_bytes(buf);
            }
            count_lds(ctx, &bank_addrs, bytes, bytes, exec);
            let out = transpose(&loaded, bytes, bits);
            write_result(w, &i.dst, exec, &out, D16::No)
        }
        DsKind::One(access, rtn) => one(ctx, w, i, exec, &addr, offset16, access, rtn),
    }
}

/// The exchange of gfx950's transposing LDS loads (CDNA4 ISA, "MFMA Transpose Load from LDS":
/// each lane reads 64 bits, 96 for `_b6`, interpreted with the others of its 16 lanes as a matrix
/// of `bits`-wide elements that is transposed). Lane `s` of a group of 16 read `n = 8 * bytes /
/// bits` elements, element `e` at bits `bits * e` of its little-endian data; element `r` of lane
/// `l`'s result is element `l % n` of lane `l / n + (16 / n) * r`. For b16 (n = 4) the 16 lanes
/// read a 4 x 16 tile, lanes `4k..4k+3` row `k`, and lane `l` receives column `l`; for b8 (n = 8)
/// they form two interleaved 8 x 8 byte transposes (lanes 0-7 take from the even lanes, 8-15 from
/// the odd ones); for b4 and b6 (n = 16) the 16 x 16 element matrix is transposed, lane `l`'s
/// element `r` being lane `r`'s element `l`. The guide does not say what an inactive lane
/// contributes; here its elements read as zero.
fn transpose(loaded: &[u128; 64], bytes: u32, bits: u32) -> [[u32; 4]; 64] {
    let n = (8 * bytes / bits) as usize;
    let mask = (1u128 << bits) - 1;
    std::array::from_fn(|lane| {
        let (group, l) = (lane & !15, lane & 15);
        let mut v = 0u128;
        for r in 0..n {
            let src = loaded[group + l / n + 16 / n * r];
            let e = src >> (bits as usize * (l % n)) & mask;
            v |= e << (bits as usize * r);
        }
        std::array::from_fn(|k| (v >> (32 * k)) as u32)
    })
}

#[allow(clippy::too_many_arguments)]
fn one(
    ctx: &mut Ctx<'_>,
    w: &mut Wave,
    i: &Instruction,
    exec: u64,
    addr: &[u64; 64],
    offset: u64,
    access: Access,
    rtn: bool,
) -> Result<(), Fault> {
    let mut d0 = [[0u64; 64]; 2];
    let mut d1 = [[0u64; 64]; 2];
    if i.src[1].is_some() {
        read_wide(w, &i.src[1], &mut d0)?;
    }
    if i.src[2].is_some() {
        read_wide(w, &i.src[2], &mut d1)?;
    }
    let mut out = [[0u32; 4]; 64];
    let mut bank_addrs = Vec::with_capacity(64);
    let bytes = match access {
        Access::Load { bytes, .. } | Access::Store { bytes, .. } | Access::Atomic { bytes, .. } => {
            bytes
        }
        _ => return Err(Fault::Unsupported),
    };
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let at = (addr[l] + offset) & 0xffff_ffff;
        let r = range(ctx, at, bytes)?;
        bank_addrs.push((l, at));
        match access {
            Access::Load { bytes, signed, .. } => {
                let mut buf = [0u8; 16];
                buf[..bytes as usize].copy_from_slice(ctx.lds_read(r, l)?);
                out[l] = load_words(&buf, bytes, signed);
            }
            Access::Store { bytes, hi } => {
                let mut buf = [0u8; 16];
                buf[..8].copy_from_slice(&d0[0][l].to_le_bytes());
                buf[8..].copy_from_slice(&d0[1][l].to_le_bytes());
                let src = if hi {
                    &buf[2..2 + bytes as usize]
                } else {
                    &buf[..bytes as usize]
                };
                ctx.lds_write(r, l)?.copy_from_slice(src);
            }
            Access::Atomic { op, bytes } => {
                let place = ctx.lds_atomic(r, l)?;
                let mut old = [0u8; 8];
                old[..bytes as usize].copy_from_slice(place);
                let old = u64::from_le_bytes(old);
                // DS compare-store: data0 is the compare value and data1 the new one; mskor: data0 is
                // the mask and data1 the bits to set.
                let (value, second) = match op {
                    Rmw::CmpSwap => (d1[0][l], d0[0][l]),
                    Rmw::MskOr | Rmw::Wrap => (d0[0][l], d1[0][l]),
                    _ => (d0[0][l], 0),
                };
                let new = rmw(op, bytes, old, value, second);
                place.copy_from_slice(&new.to_le_bytes()[..bytes as usize]);
                out[l] = [old as u32, (old >> 32) as u32, 0, 0];
            }
            _ => {}
        }
    }
    count_lds(ctx, &bank_addrs, bytes, bytes, exec);
    match access {
        Access::Load { d16, .. } => write_result(w, &i.dst, exec, &out, d16),
        Access::Atomic { .. } if rtn => write_result(w, &i.dst, exec, &out, D16::No),
        _ => Ok(()),
    }
}

fn load_words(buf: &[u8; 16], bytes: u32, signed: bool) -> [u32; 4] {
    let mut out = [0u32; 4];
    match bytes {
        1 => {
            out[0] = if signed {
                buf[0] as i8 as i32 as u32
            } else {
                u32::from(buf[0])
            }
        }
        2 => {
            let v = u16::from_le_bytes([buf[0], buf[1]]);
            out[0] = if signed {
                v as i16 as i32 as u32
            } else {
                u32::from(v)
            };
        }
        _ => {
            for k in 0..bytes as usize / 4 {
                out[k] = u32::from_le_bytes([
                    buf[4 * k],
                    buf[4 * k + 1],
                    buf[4 * k + 2],
                    buf[4 * k + 3],
                ]);
            }
        }
    }
    out
}

fn range(ctx: &Ctx<'_>, at: u64, bytes: u32) -> Result<std::ops::Range<usize>, Fault> {
    let end = at + u64::from(bytes);
    if end > ctx.lds.len() as u64 {
        return Err(Fault::Lds {
            offset: at,
            bytes,
            size: ctx.lds.len() as u32,
        });
    }
    Ok(at as usize..end as usize)
}

/// Counts an LDS access of `bytes` at each of `accesses` (lane, address) and its bank-conflict
/// cycles. Lanes are served in groups of 128 bytes, by what a lane moves in all (`lane_bytes`:
/// `bytes`, or twice that for the two-address forms): 32 lanes for up to 4 bytes, 16 for 8, 8
/// for 16; within a group, each bank serves one distinct dword per cycle (lanes reading the same
/// dword share it).
fn count_lds(ctx: &mut Ctx<'_>, accesses: &[(usize, u64)], bytes: u32, lane_bytes: u32, exec: u64) {
    ctx.counters.lds_accesses += 1;
    ctx.counters.lds_bytes += u64::from(exec.count_ones()) * u64::from(lane_bytes);
    let group = match lane_bytes {
        0..=4 => 32,
        8 => 16,
        _ => 8,
    };
    let dwords = u64::from(bytes.div_ceil(4));
    let mut extra = 0u64;
    let mut seen = [0u64; 128];
    for g in 0..64 / group {
        let mut n = 0;
        for &(_, at) in accesses.iter().filter(|(l, _)| l / group == g) {
            for k in 0..dwords {
                if n < seen.len() {
                    seen[n] = at / 4 + k;
                    n += 1;
                }
            }
        }
        let distinct = &mut seen[..n];
        distinct.sort_unstable();
        let mut per_bank = [0u32; BANKS];
        let mut last = None;
        for &dw in distinct.iter() {
            if last != Some(dw) {
                per_bank[(dw % BANKS as u64) as usize] += 1;
                last = Some(dw);
            }
        }
        let worst = per_bank.iter().copied().max().unwrap_or(0);
        extra += u64::from(worst.saturating_sub(1));
    }
    ctx.counters.lds_bank_conflict_cycles += extra;
}

/// ds_swizzle_b32, by offset: FFT (>= 0xe000) and rotate (>= 0xc000) modes within 32-lane
/// halves, quad permute (bit 15), or bit-mask permute within 32-lane halves.
fn swizzle(w: &mut Wave, i: &Instruction, exec: u64, off: u16) -> Result<(), Fault> {
    let mut data = [0u64; 64];
    read_operand(w, &i.src[0], &mut data)?;
    let mut out = [[0u32; 4]; 64];
    let mask = usize::from(off & 0x1f);
    for (l, slot) in out.iter_mut().enumerate() {
        let src = if off >= 0xe000 {
            let j = ((l & 0x1f) as u32).reverse_bits() >> 27;
            let j = (j >> mask.count_ones()) as usize;
            j | (l & mask) | (l & 0x20)
        } else if off >= 0xc000 {
            let amount = usize::from(off >> 5 & 0x1f);
            let moved = if off & 0x400 != 0 {
                l.wrapping_sub(amount)
            } else {
                l + amount
            };
            ((l & mask) | (moved & !mask)) & 0x1f | (l & 0x20)
        } else if off & 0x8000 != 0 {
            (l & !3) | (usize::from(off) >> (2 * (l & 3)) & 3)
        } else {
            let and = usize::from(off & 0x1f);
            let or = usize::from(off >> 5 & 0x1f);
            let xor = usize::from(off >> 10 & 0x1f);
            (((l & 31) & and | or) ^ xor) | (l & 32)
        };
        if exec >> src & 1 == 1 {
            slot[0] = data[src] as u32;
        }
    }
    write_result(w, &i.dst, exec, &out, D16::No)
}
