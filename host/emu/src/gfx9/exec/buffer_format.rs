//! Formatted buffer accesses: `buffer_{load,store}_format_*` (format from the buffer resource's
//! DATA_FORMAT/NUM_FORMAT) and `tbuffer_*` (MTBUF, format from the instruction). Each component is
//! converted between its memory format and a 32-bit register (or a 16-bit half with `d16`).
//!
//! Supported data formats: those whose components all have one width (8, 16, 32 bits; 1 to 4
//! components); the packed 10/11-bit formats are reported as unsupported. Number formats: unorm,
//! snorm, uscaled, sscaled, uint, sint, float. Components the format lacks read as 0 (x, y, z) and
//! 1 (w); the descriptor's DST_SEL swizzle is not applied.

use super::super::inst::{Format, Instruction};
use super::vmem::{D16, addresses, read_bytes, read_wide, write_bytes, write_result};
use super::{Ctx, Wave};
use crate::counters::InstructionClass;
use crate::error::Fault;
use half::f16;

/// Number formats (BUF_NUM_FORMAT_*).
const UNORM: u8 = 0;
const SNORM: u8 = 1;
const USCALED: u8 = 2;
const SSCALED: u8 = 3;
const UINT: u8 = 4;
const SINT: u8 = 5;
const FLOAT: u8 = 7;

/// Component width in bits and component count of a data format (BUF_DATA_FORMAT_*).
fn data_format(dfmt: u8) -> Option<(u32, u32)> {
    Some(match dfmt {
        1 => (8, 1),
        2 => (16, 1),
        3 => (8, 2),
        4 => (32, 1),
        5 => (16, 2),
        10 => (8, 4),
        11 => (32, 2),
        12 => (16, 4),
        13 => (32, 3),
        14 => (32, 4),
        _ => return None,
    })
}

/// Whether components of this number format are floats in registers.
fn is_float(nfmt: u8) -> bool {
    !matches!(nfmt, UINT | SINT)
}

fn sign_extend(raw: u32, bits: u32) -> i32 {
    if bits >= 32 {
        raw as i32
    } else {
        ((raw << (32 - bits)) as i32) >> (32 - bits)
    }
}

fn max_of(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// A memory component as a register value: f32 bits or a 32-bit integer (`half`: f16 bits or a
/// 16-bit integer).
fn decode(raw: u32, bits: u32, nfmt: u8, half: bool) -> Result<u32, Fault> {
    let float = |x: f32| {
        if half {
            u32::from(f16::from_f32(x).to_bits())
        } else {
            x.to_bits()
        }
    };
    Ok(match nfmt {
        UNORM => float((f64::from(raw) / f64::from(max_of(bits))) as f32),
        SNORM => {
            let m = f64::from(max_of(bits - 1));
            float((f64::from(sign_extend(raw, bits)) / m).max(-1.0) as f32)
        }
        USCALED => float(raw as f32),
        SSCALED => float(sign_extend(raw, bits) as f32),
        UINT if half => raw & 0xffff,
        SINT if half => sign_extend(raw, bits) as u32 & 0xffff,
        UINT => raw,
        SINT => sign_extend(raw, bits) as u32,
        FLOAT => match (bits, half) {
            (16, true) => raw,
            (16, false) => f16::from_bits(raw as u16).to_f32().to_bits(),
            (32, true) => u32::from(f16::from_f32(f32::from_bits(raw)).to_bits()),
            (32, false) => raw,
            _ => return Err(Fault::Unsupported),
        },
        _ => return Err(Fault::Unsupported),
    })
}

/// A register value (f32/f16 bits or an integer) as a memory component.
fn encode(value: u32, bits: u32, nfmt: u8, half: bool) -> Result<u32, Fault> {
    let x = if half {
        f16::from_bits(value as u16).to_f32()
    } else {
        f32::from_bits(value)
    };
    let x = if x.is_nan() { 0.0 } else { f64::from(x) };
    let max = f64::from(max_of(bits));
    Ok(match nfmt {
        UNORM => (x.clamp(0.0, 1.0) * max).round_ties_even() as u32,
        SNORM => {
            let m = f64::from(max_of(bits - 1));
            ((x.clamp(-1.0, 1.0) * m).round_ties_even() as i32) as u32 & max_of(bits)
        }
        USCALED => x.clamp(0.0, max) as u32,
        SSCALED => {
            let m = f64::from(max_of(bits - 1));
            (x.clamp(-m - 1.0, m) as i32) as u32 & max_of(bits)
        }
        UINT | SINT => value & max_of(bits),
        FLOAT => match (bits, half) {
            (16, true) => value & 0xffff,
            (16, false) => u32::from(f16::from_f32(f32::from_bits(value)).to_bits()),
            (32, true) => f16::from_bits(value as u16).to_f32().to_bits(),
            (32, false) => value,
            _ => return Err(Fault::Unsupported),
        },
        _ => return Err(Fault::Unsupported),
    })
}

/// Executes a formatted buffer load or store (MUBUF `*_format_*` or MTBUF).
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let name = i.op.name();
    let rest = name
        .strip_prefix("tbuffer_")
        .or_else(|| name.strip_prefix("buffer_"))
        .ok_or(Fault::Unsupported)?;
    let (store, rest) = match rest.strip_prefix("store_format_") {
        Some(r) => (true, r),
        None => (
            false,
            rest.strip_prefix("load_format_")
                .ok_or(Fault::Unsupported)?,
        ),
    };
    let (d16, rest) = if let Some(r) = rest.strip_prefix("d16_hi_") {
        (D16::Hi, r)
    } else if let Some(r) = rest.strip_prefix("d16_") {
        (D16::Lo, r)
    } else {
        (D16::No, rest)
    };
    let comps = rest.len() as u32;
    let (dfmt, nfmt) = if i.format == Format::Mtbuf {
        (i.fields.dfmt, i.fields.nfmt)
    } else {
        let super::super::inst::OperandKind::Sgpr(r) = i.src[1].kind else {
            return Err(Fault::Unsupported);
        };
        let word3 = w.sgpr_read(r.wrapping_add(3)) as u32;
        ((word3 >> 15 & 0xf) as u8, (word3 >> 12 & 7) as u8)
    };
    let (bits, fmt_comps) = data_format(dfmt).ok_or(Fault::Unsupported)?;
    if !is_float(nfmt) && nfmt != UINT && nfmt != SINT {
        return Err(Fault::Unsupported);
    }
    ctx.count(if store {
        InstructionClass::VmemStore
    } else {
        InstructionClass::VmemLoad
    });
    let n = comps.min(fmt_comps);
    let width = bits / 8;
    let bytes = n * width;
    let places = addresses(ctx, w, i, bytes)?;
    let exec = w.exec();
    let half = d16 != D16::No;
    let mut global = false;
    if store {
        let mut data = [[0u64; 64]; 2];
        read_wide(w, &i.dst, &mut data)?;
        for l in 0..64 {
            if exec >> l & 1 == 0 {
                continue;
            }
            global |= matches!(places[l], super::vmem::Place::Global(_));
            let dwords =
                [data[0][l], data[0][l] >> 32, data[1][l], data[1][l] >> 32].map(|x| x as u32);
            let mut buf = [0u8; 16];
            for k in 0..n as usize {
                let v = match d16 {
                    D16::No => dwords[k],
                    D16::Lo => dwords[k / 2] >> (16 * (k % 2)) & 0xffff,
                    D16::Hi => dwords[0] >> 16,
                };
                let raw = encode(v, bits, nfmt, half)?;
                let at = k * width as usize;
                buf[at..at + width as usize].copy_from_slice(&raw.to_le_bytes()[..width as usize]);
            }
            write_bytes(ctx, places[l], l, &buf[..bytes as usize])?;
        }
        if global {
            ctx.counters.global_bytes_written += u64::from(exec.count_ones()) * u64::from(bytes);
            ctx.counters.access_width(bytes);
        }
        return Ok(());
    }
    let one = if is_float(nfmt) {
        if half { 0x3c00 } else { 1.0f32.to_bits() }
    } else {
        1
    };
    let mut out = [[0u32; 4]; 64];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        global |= matches!(places[l], super::vmem::Place::Global(_));
        let mut buf = [0u8; 16];
        read_bytes(ctx, places[l], l, &mut buf[..bytes as usize])?;
        let mut values = [0u32; 4];
        for (k, v) in values.iter_mut().enumerate().take(comps as usize) {
            *v = if (k as u32) < n {
                let at = k * width as usize;
                let mut b = [0u8; 4];
                b[..width as usize].copy_from_slice(&buf[at..at + width as usize]);
                decode(u32::from_le_bytes(b), bits, nfmt, half)?
            } else if k == 3 {
                one
            } else {
                0
            };
        }
        out[l] = match d16 {
            D16::No => values,
            _ => [
                values[0] & 0xffff | values[1] << 16,
                values[2] & 0xffff | values[3] << 16,
                0,
                0,
            ],
        };
    }
    if global {
        ctx.counters.global_bytes_read += u64::from(exec.count_ones()) * u64::from(bytes);
        ctx.counters.access_width(bytes);
    }
    // Packed d16 results fill whole registers except for a single component (x), which only
    // replaces its half.
    let mode = match d16 {
        D16::Lo if comps == 1 => D16::Lo,
        D16::Hi => D16::Hi,
        _ => D16::No,
    };
    write_result(w, &i.dst, exec, &out, mode)
}
