//! RDNA buffer data instructions (MUBUF on gfx11, VBUFFER on gfx12): untyped loads, stores and
//! atomics through a buffer resource (V#).
//!
//! What each access does to its data (extension of bytes and halves, d16 halves, the atomics'
//! read-modify-write) is GFX9's ([`gfx9::exec::vmem`]); what differs is the descriptor and the
//! range check, from the RDNA3/RDNA3.5 and RDNA4 ISA guides ("Buffer Resource", "Range
//! Checking", "Swizzled Buffer Addressing").
//!
//! The descriptor fields modelled (dword.bits):
//! - base address (0.31:0, 1.15:0), 48 bits;
//! - stride (1.29:16), 14 bits; on gfx12 multiplied by STRIDE_SCALE (3.19:18: x1, x4, x8, x32);
//! - SWIZZLE_ENABLE (1.31:30): 0 linear, 1 swizzled with 4-byte elements, 3 with 16-byte
//!   elements, with INDEX_STRIDE (3.22:21: 8, 16, 32 or 64 indices);
//! - NUM_RECORDS (2), checked as OOB_SELECT (3.29:28) says:
//!   0 `index >= num_records || offset + payload > stride` (structured buffers),
//!   1 `index >= num_records`, 2 `num_records == 0` (no check otherwise), 3 like 0 for a
//!   swizzled buffer with a stride, else `offset + payload > num_records - soffset` (raw buffers:
//!   the mode HIP and LLVM-generated code use). `index` is the VGPR index plus the lane id when
//!   ADD_TID_ENABLE (3.23) is set, `offset` the VGPR offset plus the instruction's offset;
//! - FORMAT (3.17:12) only as the guides' "unbound resource" key: FORMAT 0 with ADD_TID_ENABLE
//!   clear makes every load return zero and drops every store and atomic;
//! - TYPE (3.31:30) must be 0 (a buffer).
//!
//! A load or store of more than one dword is range-checked per dword: the in-range dwords of a
//! lane straddling the end are accessed, the others read zero and are not written. An atomic is
//! in or out as a whole; one out of range returns zero. soffset is added to the address outside
//! the swizzle on gfx11 and inside it on gfx12 (its "total_offset").
//!
//! Not modelled, and refused with [`Fault::NotExecuted`] rather than run wrong: the formatted
//! accesses (`buffer_*_format_*`, which convert through FORMAT and apply DST_SEL), a TYPE other
//! than buffer, the reserved SWIZZLE_ENABLE 2, swizzled accesses wider than the element size or
//! of 16 bytes, TFE (the extra status VGPR) and negative instruction offsets. The floating point
//! min/max, float compare-swap and clamped-subtract atomics stop with [`Fault::Unsupported`].
//! DST_SEL does not apply to untyped accesses; the gfx12 compression controls (3.27:24) change no
//! data and are ignored, as are the cache controls.

use super::super::inst::{Instruction, Operand, OperandKind};
use super::lower::memory_name;
use crate::counters::InstructionClass;
use crate::error::Fault;
use crate::gfx9::exec::valu::read_operand;
use crate::gfx9::exec::vmem::{
    Access, D16, Place, Rmw, access_of, read_bytes, read_wide, rmw, update_bytes, write_bytes,
    write_result,
};
use crate::machine::{Ctx, Wave};
use crate::target::Target;

/// The fields of a buffer resource that addressing and range checking read.
#[derive(Clone, Copy, Debug)]
struct Descriptor {
    base: u64,
    /// Record stride in bytes (gfx12: scaled).
    stride: u64,
    /// Swizzle element size in bytes (4 or 16) of a swizzled buffer.
    element: Option<u64>,
    /// Indices per swizzle group.
    index_stride: u64,
    num_records: u64,
    add_tid: bool,
    oob_select: u32,
    /// FORMAT 0 without ADD_TID_ENABLE: every access is out of range.
    unbound: bool,
}

impl Descriptor {
    /// Reads the four descriptor dwords at `dwords`.
    fn new(target: Target, dwords: [u32; 4]) -> Result<Descriptor, Fault> {
        let [d0, d1, d2, d3] = dwords;
        if d3 >> 30 != 0 {
            return Err(Fault::NotExecuted(
                "buffer accesses through a resource whose TYPE is not buffer (0)",
            ));
        }
        let element = match d1 >> 30 {
            0 => None,
            1 => Some(4),
            3 => Some(16),
            _ => {
                return Err(Fault::NotExecuted(
                    "buffer accesses through a resource with the reserved SWIZZLE_ENABLE 2",
                ));
            }
        };
        let scale = if target == Target::Gfx1201 {
            [1, 4, 8, 32][(d3 >> 18 & 3) as usize]
        } else {
            1
        };
        let add_tid = d3 >> 23 & 1 == 1;
        Ok(Descriptor {
            base: u64::from(d0) | u64::from(d1 & 0xffff) << 32,
            stride: u64::from(d1 >> 16 & 0x3fff) * scale,
            element,
            index_stride: 8 << (d3 >> 21 & 3),
            num_records: u64::from(d2),
            add_tid,
            oob_select: d3 >> 28 & 3,
            unbound: d3 >> 12 & 0x3f == 0 && !add_tid,
        })
    }

    /// Whether a piece of `payload` bytes at in-record `offset` of record `index` is out of range.
    fn out_of_range(&self, index: u64, offset: u64, payload: u64, soffset: u64) -> bool {
        let structured = || index >= self.num_records || offset + payload > self.stride;
        self.unbound
            || match self.oob_select {
                0 => structured(),
                1 => index >= self.num_records,
                2 => self.num_records == 0,
                _ if self.element.is_some() && self.stride != 0 => structured(),
                _ => offset + payload > self.num_records.saturating_sub(soffset),
            }
    }

    /// The device address of byte 0 of an access at in-record `offset` of record `index`.
    fn address(&self, target: Target, index: u64, offset: u64, soffset: u64) -> u64 {
        let Some(element) = self.element else {
            return self
                .base
                .wrapping_add(soffset)
                .wrapping_add(index * self.stride)
                .wrapping_add(offset);
        };
        // gfx12 swizzles soffset with the offset; gfx11 adds it to the base.
        let (offset, outside) = if target == Target::Gfx1201 {
            ((offset + soffset) & 0xffff_ffff, 0)
        } else {
            (offset, soffset)
        };
        let (imsb, ilsb) = (index / self.index_stride, index % self.index_stride);
        let (omsb, olsb) = (offset / element, offset % element);
        let swizzled =
            (imsb * self.stride + omsb * element) * self.index_stride + ilsb * element + olsb;
        self.base.wrapping_add(outside).wrapping_add(swizzled)
    }
}

/// Whether an atomic returns its pre-op value (gfx11: glc; gfx12: th bit 0).
fn returns(target: Target, i: &Instruction) -> bool {
    if target == Target::Gfx1201 {
        i.fields.th & 1 == 1
    } else {
        i.fields.glc
    }
}

/// What the instruction does, in the GFX9 access model.
fn access(i: &Instruction) -> Result<Access, Fault> {
    let rest =
        i.op.name()
            .strip_prefix("buffer_")
            .ok_or(Fault::Unsupported)?;
    if rest.contains("_format_") {
        return Err(Fault::NotExecuted(
            "formatted buffer accesses (buffer_*_format_*: FORMAT conversion and DST_SEL) on RDNA",
        ));
    }
    match access_of(&memory_name(rest)) {
        Some(a @ (Access::Load { .. } | Access::Store { .. })) => Ok(a),
        Some(a @ Access::Atomic { op, .. })
            if !matches!(op, Rmw::MinF32 | Rmw::MaxF32 | Rmw::MinF64 | Rmw::MaxF64) =>
        {
            Ok(a)
        }
        _ => Err(Fault::Unsupported),
    }
}

/// Executes a buffer load, store or atomic.
pub(crate) fn execute(ctx: &mut Ctx<'_>, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let access = access(i)?;
    if i.fields.tfe {
        return Err(Fault::NotExecuted(
            "buffer accesses with TFE (the texture-fail status VGPR)",
        ));
    }
    if i.fields.imm < 0 {
        return Err(Fault::NotExecuted(
            "buffer accesses with a negative instruction offset",
        ));
    }
    let (bytes, class) = match access {
        Access::Load { bytes, .. } => (bytes, InstructionClass::VmemLoad),
        Access::Store { bytes, .. } => (bytes, InstructionClass::VmemStore),
        Access::Atomic { bytes, .. } => (bytes, InstructionClass::VmemAtomic),
        _ => return Err(Fault::Unsupported),
    };
    ctx.count(class);
    let OperandKind::Sgpr(r) = i.src[1].kind else {
        return Err(Fault::Register(
            "buffer resource is not an SGPR quad".into(),
        ));
    };
    let target = ctx.target;
    let desc = Descriptor::new(
        target,
        [0u8, 1, 2, 3].map(|k| w.sgpr_read(r.wrapping_add(k)) as u32),
    )?;
    // The guides: one access must not exceed the element, and 16-byte accesses are not
    // supported with 16-byte elements.
    if desc
        .element
        .is_some_and(|e| u64::from(bytes) > e || bytes == 16)
    {
        return Err(Fault::NotExecuted(
            "swizzled buffer accesses wider than the descriptor's element size (or of 16 bytes)",
        ));
    }
    let soffset = w.scalar(&i.src[2])? & 0xffff_ffff;
    let mut vaddr = [0u64; 64];
    if i.src[0].is_some() {
        read_operand(w, &i.src[0], &mut vaddr)?;
    }
    let mut data = [[0u64; 64]; 2];
    if !matches!(access, Access::Load { .. }) {
        // The data's size follows from the access (cmpswap: new value and compare value).
        let dwords = match access {
            Access::Atomic {
                op: Rmw::CmpSwap,
                bytes,
            } => bytes / 2,
            _ => bytes.div_ceil(4),
        };
        let src = Operand {
            dwords: dwords as u8,
            ..i.dst
        };
        read_wide(w, &src, &mut data)?;
    }
    let f = i.fields;
    let exec = w.exec();
    // Dword pieces of the access (one piece of `bytes` for bytes and halves).
    let piece = u64::from(bytes.min(4));
    let pieces = u64::from(bytes).div_ceil(4);
    let mut out = [[0u32; 4]; 64];
    let mut moved = 0u64;
    for l in 0..w.lanes as usize {
        if exec >> l & 1 == 0 {
            continue;
        }
        let v = vaddr[l];
        let vidx = if f.idxen { v & 0xffff_ffff } else { 0 };
        let voff = match (f.offen, f.idxen) {
            (false, _) => 0,
            (true, true) => v >> 32,
            (true, false) => v & 0xffff_ffff,
        };
        let index = vidx + if desc.add_tid { l as u64 } else { 0 };
        let offset = voff + f.imm as u64;
        let place = |k: u64| {
            if desc.out_of_range(index, offset + 4 * k, piece, soffset) {
                Place::Discard
            } else {
                Place::Global(desc.address(target, index, offset, soffset) + 4 * k)
            }
        };
        let in_range = |k: u64| !matches!(place(k), Place::Discard);
        match access {
            Access::Load { bytes, signed, .. } => {
                let mut buf = [0u8; 16];
                for k in 0..pieces {
                    let at = (4 * k) as usize;
                    read_bytes(ctx, place(k), l, &mut buf[at..at + piece as usize])?;
                    moved += if in_range(k) { piece } else { 0 };
                }
                out[l] = extend(&buf, bytes, signed);
            }
            Access::Store { bytes, hi } => {
                let mut buf = [0u8; 16];
                buf[..8].copy_from_slice(&data[0][l].to_le_bytes());
                buf[8..].copy_from_slice(&data[1][l].to_le_bytes());
                let start = if hi { 2 } else { 0 };
                let src = &buf[start..start + bytes as usize];
                for k in 0..pieces {
                    let at = (4 * k) as usize;
                    write_bytes(ctx, place(k), l, &src[at..at + piece as usize])?;
                    moved += if in_range(k) { piece } else { 0 };
                }
            }
            Access::Atomic { op, bytes } => {
                let payload = u64::from(bytes);
                if desc.out_of_range(index, offset, payload, soffset) {
                    continue;
                }
                let at = Place::Global(desc.address(target, index, offset, soffset));
                // cmpswap's data is {new, compare}: two registers, four for the 64-bit form.
                let (value, cmp) = match (op, bytes) {
                    (Rmw::CmpSwap, 8) => (data[0][l], data[1][l]),
                    (Rmw::CmpSwap, _) => (data[0][l] & 0xffff_ffff, data[0][l] >> 32),
                    _ => (data[0][l], 0),
                };
                let old = update_bytes(ctx, at, l, bytes, |old| rmw(op, bytes, old, value, cmp))?;
                out[l] = [old as u32, (old >> 32) as u32, 0, 0];
                moved += payload;
            }
            _ => {}
        }
    }
    match access {
        Access::Load { .. } => ctx.counters.global_bytes_read += moved,
        Access::Store { .. } => ctx.counters.global_bytes_written += moved,
        _ => {
            ctx.counters.global_bytes_read += moved;
            ctx.counters.global_bytes_written += moved;
        }
    }
    if moved > 0 {
        ctx.counters.access_width(bytes);
    }
    match access {
        Access::Load { d16, .. } => write_result(w, &i.dst, exec, &out, d16),
        Access::Atomic { bytes, .. } if returns(target, i) => {
            // The pre-op value fills the first dwords of vdata (cmpswap's compare half stays).
            let dst = Operand {
                dwords: (bytes / 4) as u8,
                ..i.dst
            };
            write_result(w, &dst, exec, &out, D16::No)
        }
        _ => Ok(()),
    }
}

/// A loaded value as result dwords: bytes and halves zero- or sign-extended.
fn extend(buf: &[u8; 16], bytes: u32, signed: bool) -> [u32; 4] {
    let mut out = [0u32; 4];
    match (bytes, signed) {
        (1, true) => out[0] = buf[0] as i8 as u32,
        (1, false) => out[0] = u32::from(buf[0]),
        (2, true) => out[0] = i16::from_le_bytes([buf[0], buf[1]]) as u32,
        (2, false) => out[0] = u32::from(u16::from_le_bytes([buf[0], buf[1]])),
        _ => {
            for (k, o) in out.iter_mut().enumerate().take(bytes as usize / 4) {
                *o = u32::from_le_bytes([
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
