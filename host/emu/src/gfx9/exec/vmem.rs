//! Vector memory: FLAT (generic addresses: global, LDS or scratch by aperture), GLOBAL, SCRATCH and
//! MUBUF (buffer resources, including the swizzled private-segment buffer) loads, stores and atomics.

use super::super::inst::{Format, Instruction, Operand, OperandKind};
use super::super::opcodes::{OP_COUNT, Op};
use super::valu::read_operand;
use super::{Ctx, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI, Wave};
use crate::counters::InstructionClass;
use crate::error::Fault;
use crate::memory::MemoryError;
use half::f16;
use std::sync::OnceLock;

/// Half of the destination a 16-bit load writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum D16 {
    /// A full 32-bit (or wider) destination.
    No,
    /// Bits 15:0, bits 31:16 kept.
    Lo,
    /// Bits 31:16, bits 15:0 kept.
    Hi,
}

/// Read-modify-write operations of the atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rmw {
    Swap,
    CmpSwap,
    Add,
    Sub,
    Rsub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    AddF32,
    AddF64,
    MinF64,
    MaxF64,
    MinF32,
    MaxF32,
    PkAddF16,
    PkAddBf16,
    MskOr,
    /// ds_wrap: `old >= data ? old - data : old + data2`.
    Wrap,
}

/// What a memory instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Load `bytes` per lane (sign-extended if `signed`).
    Load { bytes: u32, signed: bool, d16: D16 },
    /// Store `bytes` per lane (from the high half of the data register if `hi`).
    Store { bytes: u32, hi: bool },
    /// Atomic of `bytes` (4 or 8) per lane.
    Atomic { op: Rmw, bytes: u32 },
    /// Load into LDS at M0 instead of a VGPR.
    LoadLds { bytes: u32, signed: bool },
    /// Cache control: no effect here.
    Nop,
}

/// Parses the operation part of a memory mnemonic (after `global_`, `buffer_`, `ds_`, ...).
pub(crate) fn access_of(rest: &str) -> Option<Access> {
    let size = |s: &str| -> Option<(u32, bool)> {
        Some(match s {
            "ubyte" | "u8" | "byte" | "b8" => (1, false),
            "sbyte" | "i8" => (1, true),
            "ushort" | "u16" | "short" | "b16" => (2, false),
            "sshort" | "i16" => (2, true),
            "dword" | "b32" => (4, false),
            "dwordx2" | "b64" => (8, false),
            "dwordx3" | "b96" => (12, false),
            "dwordx4" | "b128" => (16, false),
            _ => return None,
        })
    };
    if let Some(r) = rest.strip_prefix("load_lds_") {
        let (bytes, signed) = size(r)?;
        return Some(Access::LoadLds { bytes, signed });
    }
    if let Some(r) = rest
        .strip_prefix("load_")
        .or_else(|| rest.strip_prefix("read_"))
    {
        let (r, d16) = if let Some(x) = r.strip_suffix("_d16_hi") {
            (x, D16::Hi)
        } else if let Some(x) = r.strip_suffix("_d16") {
            (x, D16::Lo)
        } else {
            (r, D16::No)
        };
        let (bytes, signed) = size(r)?;
        return Some(Access::Load { bytes, signed, d16 });
    }
    if let Some(r) = rest
        .strip_prefix("store_")
        .or_else(|| rest.strip_prefix("write_"))
    {
        let (r, hi) = match r.strip_suffix("_d16_hi") {
            Some(x) => (x, true),
            None => (r, false),
        };
        let (bytes, _) = size(r)?;
        return Some(Access::Store { bytes, hi });
    }
    let r = rest.strip_prefix("atomic_")?;
    let (r, wide) = match r.strip_suffix("_x2") {
        Some(x) => (x, true),
        None => (r, false),
    };
    let op = match r {
        "swap" => Rmw::Swap,
        "cmpswap" => Rmw::CmpSwap,
        "add" => Rmw::Add,
        "sub" => Rmw::Sub,
        "smin" => Rmw::SMin,
        "umin" => Rmw::UMin,
        "smax" => Rmw::SMax,
        "umax" => Rmw::UMax,
        "and" => Rmw::And,
        "or" => Rmw::Or,
        "xor" => Rmw::Xor,
        "inc" => Rmw::Inc,
        "dec" => Rmw::Dec,
        "add_f32" => Rmw::AddF32,
        "add_f64" => {
            return Some(Access::Atomic {
                op: Rmw::AddF64,
                bytes: 8,
            });
        }
        "min_f64" => {
            return Some(Access::Atomic {
                op: Rmw::MinF64,
                bytes: 8,
            });
        }
        "max_f64" => {
            return Some(Access::Atomic {
                op: Rmw::MaxF64,
                bytes: 8,
            });
        }
        "pk_add_f16" => Rmw::PkAddF16,
        "pk_add_bf16" => Rmw::PkAddBf16,
        _ => return None,
    };
    Some(Access::Atomic {
        op,
        bytes: if wide { 8 } else { 4 },
    })
}

/// Whether each op is a formatted buffer access (`buffer_*_format_*`).
fn formatted() -> &'static [bool] {
    static TABLE: OnceLock<Vec<bool>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..OP_COUNT)
            .map(|k| {
                // SAFETY: `Op` is a `repr(u16)` enum whose discriminants are exactly 0..OP_COUNT.
                let op: Op = unsafe { std::mem::transmute::<u16, Op>(k as u16) };
                op.name().starts_with("buffer_") && op.name().contains("_format_")
            })
            .collect()
    })
}

fn accesses() -> &'static [Option<Access>] {
    static TABLE: OnceLock<Vec<Option<Access>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..OP_COUNT)
            .map(|k| {
                // SAFETY: `Op` is a `repr(u16)` enum whose discriminants are exactly 0..OP_COUNT.
                let op: Op = unsafe { std::mem::transmute::<u16, Op>(k as u16) };
                let name = op.name();
                let (prefix, rest) = name.split_once('_')?;
                if !matches!(prefix, "flat" | "global" | "scratch" | "buffer") {
                    return None;
                }
                if matches!(rest, "wbl2" | "inv" | "invl2" | "wbinvl1" | "wbinvl1_vol") {
                    return Some(Access::Nop);
                }
                access_of(rest)
            })
            .collect()
    })
}

/// Applies an atomic operation to `old` (`data`: the operand; `cmp`: the compare value of cmpswap).
pub(crate) fn rmw(op: Rmw, bytes: u32, old: u64, data: u64, cmp: u64) -> u64 {
    let wide = bytes == 8;
    let m = if wide { u64::MAX } else { 0xffff_ffff };
    let (o, x) = (old & m, data & m);
    let sx = |v: u64| {
        if wide {
            v as i64
        } else {
            i64::from(v as u32 as i32)
        }
    };
    let r = match op {
        Rmw::Swap => x,
        Rmw::CmpSwap => {
            if o == cmp & m {
                x
            } else {
                o
            }
        }
        Rmw::Add => o.wrapping_add(x),
        Rmw::Sub => o.wrapping_sub(x),
        Rmw::Rsub => x.wrapping_sub(o),
        Rmw::SMin => {
            if sx(x) < sx(o) {
                x
            } else {
                o
            }
        }
        Rmw::SMax => {
            if sx(x) > sx(o) {
                x
            } else {
                o
            }
        }
        Rmw::UMin => o.min(x),
        Rmw::UMax => o.max(x),
        Rmw::And => o & x,
        Rmw::Or => o | x,
        Rmw::Xor => o ^ x,
        Rmw::Inc => {
            if o >= x {
                0
            } else {
                o + 1
            }
        }
        Rmw::Dec => {
            if o == 0 || o > x {
                x
            } else {
                o - 1
            }
        }
        Rmw::AddF32 => u64::from((f32::from_bits(o as u32) + f32::from_bits(x as u32)).to_bits()),
        Rmw::MinF32 => u64::from(
            super::float::min32(f32::from_bits(o as u32), f32::from_bits(x as u32), true).to_bits(),
        ),
        Rmw::MaxF32 => u64::from(
            super::float::max32(f32::from_bits(o as u32), f32::from_bits(x as u32), true).to_bits(),
        ),
        Rmw::AddF64 => (f64::from_bits(o) + f64::from_bits(x)).to_bits(),
        Rmw::MinF64 => super::float::min64(f64::from_bits(o), f64::from_bits(x), true).to_bits(),
        Rmw::MaxF64 => super::float::max64(f64::from_bits(o), f64::from_bits(x), true).to_bits(),
        Rmw::PkAddF16 => {
            let add = |s: u32| {
                let a = f16::from_bits((o >> s) as u16).to_f32();
                let b = f16::from_bits((x >> s) as u16).to_f32();
                u64::from(f16::from_f32(a + b).to_bits()) << s
            };
            add(0) | add(16)
        }
        Rmw::PkAddBf16 => {
            let add = |s: u32| {
                let a = f32::from_bits(((o >> s) as u32 & 0xffff) << 16);
                let b = f32::from_bits(((x >> s) as u32 & 0xffff) << 16);
                u64::from(bf16(a + b)) << s
            };
            add(0) | add(16)
        }
        Rmw::MskOr => (o & !x) | (cmp & m),
        Rmw::Wrap => {
            if o >= x {
                o - x
            } else {
                o.wrapping_add(cmp & m)
            }
        }
    };
    r & m
}

fn bf16(x: f32) -> u16 {
    if x.is_nan() {
        return (x.to_bits() >> 16) as u16 | 0x40;
    }
    let b = x.to_bits();
    (b.wrapping_add(0x7fff + (b >> 16 & 1)) >> 16) as u16
}

/// Where one lane's access goes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// Device memory address.
    Global(u64),
    /// LDS byte offset.
    Lds(u64),
    /// Per-lane private offset, and the wave's scratch base (swizzled dword addressing).
    Scratch { offset: u64, base: u64 },
    /// Out of a buffer's range: loads read zero, stores and atomics are dropped.
    Discard,
}

/// Executes a FLAT/GLOBAL/SCRATCH/MUBUF instruction.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    if i.format == Format::Mtbuf || formatted()[i.op as usize] {
        return super::buffer_format::execute(ctx, w, i);
    }
    let access = match accesses()[i.op as usize].ok_or(Fault::Unsupported)? {
        // A MUBUF or global load with the `lds` bit (gfx90a's `global_load_dword ... lds`)
        // writes LDS at M0 instead of its VGPRs.
        Access::Load { bytes, signed, .. } if i.fields.lds => Access::LoadLds { bytes, signed },
        access => access,
    };
    execute_access(ctx, w, i, access)
}

/// Executes `i` as the memory access `access`, which RDNA's float atomics that GFX9 lacks name
/// for an instruction of the same encoding.
pub(crate) fn execute_access(
    ctx: &mut Ctx<'_>,
    w: &mut Wave,
    i: &Instruction,
    access: Access,
) -> Result<(), Fault> {
    let class = match access {
        Access::Load { .. } | Access::LoadLds { .. } => InstructionClass::VmemLoad,
        Access::Store { .. } => InstructionClass::VmemStore,
        Access::Atomic { .. } => InstructionClass::VmemAtomic,
        Access::Nop => InstructionClass::VmemStore,
    };
    ctx.count(class);
    if access == Access::Nop {
        return Ok(());
    }
    let exec = w.exec();
    let bytes = match access {
        Access::Load { bytes, .. }
        | Access::Store { bytes, .. }
        | Access::Atomic { bytes, .. }
        | Access::LoadLds { bytes, .. } => bytes,
        Access::Nop => 0,
    };
    // Untyped buffer loads and stores are range-checked dword by dword; atomics (and the
    // formatted accesses, executed elsewhere) as a whole. See `buffer_addresses`.
    let per_dword = matches!(
        access,
        Access::Load { .. } | Access::Store { .. } | Access::LoadLds { .. }
    );
    let (places, in_range) = places(ctx, w, i, bytes, per_dword)?;
    let mut data = [[0u64; 64]; 2];
    match access {
        Access::Store { .. } | Access::Atomic { .. } => {
            // MUBUF keeps its data in the vdata register (decoded as the destination).
            let src = if i.format == Format::Mubuf {
                &i.dst
            } else {
                &i.src[1]
            };
            read_wide(w, src, &mut data)?;
        }
        _ => {}
    }
    let mut global = false;
    let mut out = [[0u32; 4]; 64];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let place = places[l];
        global |= matches!(place, Place::Global(_));
        match access {
            Access::Load { bytes, signed, .. } => {
                let mut buf = [0u8; 16];
                for (at, range) in parts(place, in_range[l], bytes) {
                    read_bytes(ctx, at, l, &mut buf[range])?;
                }
                extend(&buf, bytes, signed, &mut out[l]);
            }
            Access::LoadLds { bytes, signed } => {
                // LDS_ADDR = M0 + inst_offset + lane * (the dwords each lane loads, at least
                // one: bytes and shorts arrive extended to a dword), the CDNA3/CDNA4 guides'
                // "Memory Buffer Load to LDS".
                let mut buf = [0u8; 16];
                for (at, range) in parts(place, in_range[l], bytes) {
                    read_bytes(ctx, at, l, &mut buf[range])?;
                }
                let mut v = [0u32; 4];
                extend(&buf, bytes, signed, &mut v);
                let width = bytes.max(4) as usize;
                let m0 = u64::from(w.sgpr[usize::from(super::super::decode::M0)]);
                let at = m0 + i.fields.imm.max(0) as u64 + (l * width) as u64;
                let mut data = [0u8; 16];
                for (k, word) in v.iter().enumerate() {
                    data[4 * k..4 * k + 4].copy_from_slice(&word.to_le_bytes());
                }
                write_lds(ctx, at, l, &data[..width])?;
            }
            Access::Store { bytes, hi } => {
                let mut buf = [0u8; 16];
                let lo = data[0][l].to_le_bytes();
                let hi_w = data[1][l].to_le_bytes();
                buf[..8].copy_from_slice(&lo);
                buf[8..].copy_from_slice(&hi_w);
                let start = if hi { 2 } else { 0 };
                let src = &buf[start..start + bytes as usize];
                for (at, range) in parts(place, in_range[l], bytes) {
                    write_bytes(ctx, at, l, &src[range])?;
                }
            }
            Access::Atomic { op, bytes } => {
                // cmpswap: data holds {new, compare} (two registers, or four for _x2).
                let (value, cmp) = if op == Rmw::CmpSwap {
                    if bytes == 8 {
                        (data[0][l], data[1][l])
                    } else {
                        (data[0][l] & 0xffff_ffff, data[0][l] >> 32)
                    }
                } else {
                    (data[0][l], 0)
                };
                let old =
                    update_bytes(ctx, place, l, bytes, |old| rmw(op, bytes, old, value, cmp))?;
                out[l] = [old as u32, (old >> 32) as u32, 0, 0];
            }
            Access::Nop => {}
        }
    }
    let active = u64::from(exec.count_ones());
    if global {
        match access {
            Access::Load { .. } | Access::LoadLds { .. } => {
                ctx.counters.global_bytes_read += active * u64::from(bytes)
            }
            Access::Store { .. } => ctx.counters.global_bytes_written += active * u64::from(bytes),
            Access::Atomic { .. } => {
                ctx.counters.global_bytes_read += active * u64::from(bytes);
                ctx.counters.global_bytes_written += active * u64::from(bytes);
            }
            Access::Nop => {}
        }
        ctx.counters.access_width(bytes);
    }
    match access {
        Access::Load { d16, .. } => write_result(w, &i.dst, exec, &out, d16),
        Access::Atomic { .. } if i.fields.glc && i.dst.is_some() => {
            write_result(w, &i.dst, exec, &out, D16::No)
        }
        _ => Ok(()),
    }
}

/// Sign- or zero-extends a loaded value into result dwords.
fn extend(buf: &[u8; 16], bytes: u32, signed: bool, out: &mut [u32; 4]) {
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
            for k in 0..(bytes as usize / 4) {
                out[k] = u32::from_le_bytes([
                    buf[4 * k],
                    buf[4 * k + 1],
                    buf[4 * k + 2],
                    buf[4 * k + 3],
                ]);
            }
        }
    }
}

/// Reads up to 128 bits per lane of a data operand: `d[0]` holds dwords 0-1, `d[1]` dwords 2-3.
pub(crate) fn read_wide(w: &Wave, o: &Operand, d: &mut [[u64; 64]; 2]) -> Result<(), Fault> {
    let n = o.dwords.max(1);
    read_operand(
        w,
        &Operand {
            dwords: n.min(2),
            ..*o
        },
        &mut d[0],
    )?;
    if n > 2 {
        let next = match o.kind {
            OperandKind::Vgpr(r) => OperandKind::Vgpr(r.wrapping_add(2)),
            OperandKind::Agpr(r) => OperandKind::Agpr(r.wrapping_add(2)),
            k => k,
        };
        if matches!(o.kind, OperandKind::Vgpr(r) | OperandKind::Agpr(r) if usize::from(r) + usize::from(n) > super::wave::VGPRS)
        {
            return Err(Fault::Register("data register range".into()));
        }
        read_operand(
            w,
            &Operand {
                kind: next,
                dwords: n - 2,
            },
            &mut d[1],
        )?;
    }
    Ok(())
}

/// Writes loaded dwords to the destination registers of active lanes.
pub(crate) fn write_result(
    w: &mut Wave,
    dst: &Operand,
    exec: u64,
    out: &[[u32; 4]; 64],
    d16: D16,
) -> Result<(), Fault> {
    let n = usize::from(dst.dwords.max(1)).min(4);
    let (file, r) = w.vreg_mut(dst)?;
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        match d16 {
            D16::No => {
                for k in 0..n {
                    file[r + k][l] = out[l][k];
                }
            }
            D16::Lo => file[r][l] = file[r][l] & 0xffff_0000 | out[l][0] & 0xffff,
            D16::Hi => file[r][l] = file[r][l] & 0xffff | out[l][0] << 16,
        }
    }
    Ok(())
}

/// Bit mask of the dword pieces of an access of `bytes` (one piece below a dword).
fn all_pieces(bytes: u32) -> u8 {
    (1u8 << bytes.div_ceil(4).clamp(1, 4)) - 1
}

/// The parts of one lane's access that move data, as (place, bytes of the access): the whole
/// access when every piece is in range (`in_range`, a mask from [`places`]), else each dword piece
/// in range on its own. A lane with no piece in range has none: its loads read zero.
fn parts(
    place: Place,
    in_range: u8,
    bytes: u32,
) -> impl Iterator<Item = (Place, std::ops::Range<usize>)> {
    let whole = in_range == all_pieces(bytes);
    let n = if whole { 1 } else { bytes.div_ceil(4) };
    (0..n)
        .filter(move |&k| whole || in_range >> k & 1 == 1)
        .map(move |k| {
            if whole {
                (place, 0..bytes as usize)
            } else {
                let at = 4 * k as usize;
                (shifted(place, at as u64), at..at + 4)
            }
        })
}

/// `place` moved on by `by` bytes.
fn shifted(place: Place, by: u64) -> Place {
    match place {
        Place::Global(a) => Place::Global(a.wrapping_add(by)),
        Place::Lds(o) => Place::Lds(o + by),
        Place::Scratch { offset, base } => Place::Scratch {
            offset: offset + by,
            base,
        },
        Place::Discard => Place::Discard,
    }
}

/// Per-lane places of a memory instruction, each access range-checked as a whole.
pub(crate) fn addresses(
    ctx: &Ctx<'_>,
    w: &Wave,
    i: &Instruction,
    bytes: u32,
) -> Result<[Place; 64], Fault> {
    Ok(places(ctx, w, i, bytes, false)?.0)
}

/// Per-lane places of a memory instruction, and per lane the mask of the access's dword pieces
/// that are in range (bit k: bytes 4k..4k + 4; a single piece below a dword). Only a buffer
/// access can be partly in range, and only with `per_dword` (see [`buffer_addresses`]); every
/// other lane's mask is all or nothing.
fn places(
    ctx: &Ctx<'_>,
    w: &Wave,
    i: &Instruction,
    bytes: u32,
    per_dword: bool,
) -> Result<([Place; 64], [u8; 64]), Fault> {
    let mut places = [Place::Discard; 64];
    let mut vaddr = [0u64; 64];
    if i.src[0].is_some() {
        read_operand(w, &i.src[0], &mut vaddr)?;
    }
    let imm = i64::from(i.fields.imm);
    match i.format {
        Format::Global => {
            if i.src[2].is_some() {
                let base = w.scalar(&i.src[2])?;
                for l in 0..64 {
                    places[l] = Place::Global(
                        base.wrapping_add(vaddr[l] & 0xffff_ffff)
                            .wrapping_add(imm as u64),
                    );
                }
            } else {
                for l in 0..64 {
                    places[l] = Place::Global(vaddr[l].wrapping_add(imm as u64));
                }
            }
        }
        Format::Flat => {
            let base = w.flat_scratch();
            for l in 0..64 {
                let a = vaddr[l].wrapping_add(imm as u64);
                places[l] = match (a >> 32) as u32 {
                    SHARED_APERTURE_HI => Place::Lds(a & 0xffff_ffff),
                    PRIVATE_APERTURE_HI => Place::Scratch {
                        offset: a & 0xffff_ffff,
                        base,
                    },
                    _ => Place::Global(a),
                };
            }
        }
        Format::Scratch => {
            let sbase = if i.src[2].is_some() {
                w.scalar(&i.src[2])? & 0xffff_ffff
            } else {
                0
            };
            let base = w.flat_scratch();
            for l in 0..64 {
                let v = if i.src[0].is_some() {
                    vaddr[l] & 0xffff_ffff
                } else {
                    0
                };
                let off = sbase.wrapping_add(v).wrapping_add(imm as u64) & 0xffff_ffff;
                places[l] = Place::Scratch { offset: off, base };
            }
        }
        Format::Mubuf | Format::Mtbuf => {
            return buffer_addresses(ctx, w, i, &vaddr, bytes, per_dword);
        }
        _ => return Err(Fault::Unsupported),
    }
    Ok((places, [all_pieces(bytes); 64]))
}

/// Addresses of a MUBUF instruction from its buffer resource (V#), and per lane the mask of the
/// access's dword pieces in range (as [`places`] returns them).
///
/// Range checking follows the notes of the "Range Checking" section of AMD's ISA guides: a read
/// out of range returns zero and a write out of range writes nothing; the format instructions
/// and the atomics are checked "all or nothing", the untyped dword x2/x3/x4 loads and stores per
/// component. LLVM says the same: D18292 (reviews.llvm.org), which added the untyped buffer
/// intrinsics, notes their per-component range checking, and AMDGPUUsage ("Relaxed Buffer OOB
/// Mode") has the offset of an access wider than 32 bits checked for each 32-bit word on its own.
///
/// So with `per_dword` (untyped loads and stores, the loads into LDS included) dword piece k of
/// a raw access (stride 0, or no index) is out of range when
/// `offset + 4k + min(bytes, 4) > NUM_RECORDS`, as RDNA's executor checks it; without it (atomics,
/// formatted accesses) the whole access is, when `offset + bytes > NUM_RECORDS`. Bytes and shorts
/// are one piece. soffset is added to the address but left out of the check. A structured
/// access (an index and a stride) is checked by its index alone, which is the same for every
/// piece. Swizzled buffers are not range-checked here.
fn buffer_addresses(
    ctx: &Ctx<'_>,
    w: &Wave,
    i: &Instruction,
    vaddr: &[u64; 64],
    bytes: u32,
    per_dword: bool,
) -> Result<([Place; 64], [u8; 64]), Fault> {
    let OperandKind::Sgpr(r) = i.src[1].kind else {
        return Err(Fault::Unsupported);
    };
    let v = [0u8, 1, 2, 3].map(|k| w.sgpr_read(r.wrapping_add(k)) as u32);
    let base = u64::from(v[0]) | u64::from(v[1] & 0xffff) << 32;
    let stride = u64::from(v[1] >> 16 & 0x3fff);
    let swizzle = v[1] >> 31 == 1;
    let num_records = u64::from(v[2]);
    let add_tid = v[3] >> 23 & 1 == 1;
    let index_stride = 8u64 << (v[3] >> 21 & 3);
    let elem = 2u64 << (v[3] >> 19 & 3);
    let soffset = w.scalar(&i.src[2])? & 0xffff_ffff;
    let f = i.fields;
    let mut places = [Place::Discard; 64];
    let mut in_range = [0u8; 64];
    let all = all_pieces(bytes);
    let piece = u64::from(bytes.min(4));
    let scratch_wave = ctx.scratch.base != 0 && add_tid && swizzle;
    for l in 0..64 {
        let vidx = if f.idxen { vaddr[l] & 0xffff_ffff } else { 0 };
        let voff = if f.offen {
            if f.idxen {
                vaddr[l] >> 32
            } else {
                vaddr[l] & 0xffff_ffff
            }
        } else {
            0
        };
        let index = vidx + if add_tid { l as u64 } else { 0 };
        let offset = voff + f.imm as u64;
        if scratch_wave {
            // The private segment buffer: the lane's private offset, dword-interleaved per wave.
            places[l] = Place::Scratch {
                offset,
                base: base + soffset,
            };
            in_range[l] = all;
            continue;
        }
        let mask = if swizzle {
            all
        } else if stride != 0 && f.idxen {
            if index < num_records { all } else { 0 }
        } else if per_dword {
            (0..u64::from(bytes).div_ceil(4))
                .filter(|k| offset + 4 * k + piece <= num_records)
                .fold(0, |m, k| m | 1 << k)
        } else if offset + u64::from(bytes) <= num_records {
            all
        } else {
            0
        };
        if mask == 0 {
            continue;
        }
        in_range[l] = mask;
        let a = if swizzle {
            let (imsb, ilsb) = (index / index_stride, index % index_stride);
            let (omsb, olsb) = (offset / elem, offset % elem);
            base.wrapping_add(soffset)
                .wrapping_add((imsb * stride + omsb * elem) * index_stride + ilsb * elem + olsb)
        } else {
            base.wrapping_add(soffset)
                .wrapping_add(index * stride + offset)
        };
        places[l] = Place::Global(a);
    }
    Ok((places, in_range))
}

/// The device address of byte `k` of a scratch access: dwords of the lanes' private segments are
/// interleaved (64 lanes x 4 bytes per dword row), as the hardware swizzles scratch.
fn scratch_address(base: u64, offset: u64, lane: usize) -> u64 {
    base.wrapping_add((offset / 4) * 256 + lane as u64 * 4 + offset % 4)
}

fn check_scratch(ctx: &Ctx<'_>, offset: u64, len: usize) -> Result<(), Fault> {
    if offset + len as u64 > u64::from(ctx.scratch.per_lane) {
        return Err(Fault::Scratch {
            offset,
            bytes: len as u32,
            size: ctx.scratch.per_lane,
        });
    }
    Ok(())
}

pub(crate) fn read_bytes(
    ctx: &mut Ctx<'_>,
    place: Place,
    lane: usize,
    out: &mut [u8],
) -> Result<(), Fault> {
    match place {
        Place::Discard => out.fill(0),
        Place::Global(a) => ctx.global_read(a, out, lane)?,
        Place::Lds(o) => {
            let s = lds_range(ctx, o, out.len())?;
            out.copy_from_slice(ctx.lds_read(s, lane)?);
        }
        Place::Scratch { offset, base } => {
            check_scratch(ctx, offset, out.len())?;
            for (k, b) in out.iter_mut().enumerate() {
                let a = scratch_address(base, offset + k as u64, lane);
                ctx.mem
                    .read(a, std::slice::from_mut(b))
                    .map_err(|e| match e {
                        MemoryError::Unwritten { .. } => Fault::UninitializedScratch {
                            offset: offset + k as u64,
                            lane: lane as u32,
                        },
                        _ => Fault::Memory {
                            address: a,
                            bytes: 1,
                            write: false,
                        },
                    })?;
            }
        }
    }
    Ok(())
}

pub(crate) fn write_bytes(
    ctx: &mut Ctx<'_>,
    place: Place,
    lane: usize,
    data: &[u8],
) -> Result<(), Fault> {
    match place {
        Place::Discard => {}
        Place::Global(a) => ctx.global_write(a, data, lane)?,
        Place::Lds(o) => write_lds(ctx, o, lane, data)?,
        Place::Scratch { offset, base } => {
            check_scratch(ctx, offset, data.len())?;
            for (k, b) in data.iter().enumerate() {
                let a = scratch_address(base, offset + k as u64, lane);
                ctx.mem.write(a, &[*b]).map_err(|_| Fault::Memory {
                    address: a,
                    bytes: 1,
                    write: true,
                })?;
            }
        }
    }
    Ok(())
}

/// The read-modify-write of an atomic: the `bytes` (at most 8) at `place` become `update` of
/// their little-endian value, atomically against the other waves. Returns the old value.
pub(crate) fn update_bytes(
    ctx: &mut Ctx<'_>,
    place: Place,
    lane: usize,
    bytes: u32,
    update: impl FnOnce(u64) -> u64,
) -> Result<u64, Fault> {
    if let Place::Global(a) = place {
        return ctx.global_update(a, bytes, lane, update);
    }
    let mut buf = [0u8; 8];
    read_bytes(ctx, place, lane, &mut buf[..bytes as usize])?;
    let old = u64::from_le_bytes(buf);
    write_bytes(
        ctx,
        place,
        lane,
        &update(old).to_le_bytes()[..bytes as usize],
    )?;
    Ok(old)
}

fn lds_range(ctx: &Ctx<'_>, offset: u64, len: usize) -> Result<std::ops::Range<usize>, Fault> {
    let end = offset + len as u64;
    if end > ctx.lds.len() as u64 {
        return Err(Fault::Lds {
            offset,
            bytes: len as u32,
            size: ctx.lds.len() as u32,
        });
    }
    Ok(offset as usize..end as usize)
}

fn write_lds(ctx: &mut Ctx<'_>, offset: u64, lane: usize, data: &[u8]) -> Result<(), Fault> {
    let r = lds_range(ctx, offset, data.len())?;
    ctx.lds_write(r, lane)?.copy_from_slice(data);
    Ok(())
}
