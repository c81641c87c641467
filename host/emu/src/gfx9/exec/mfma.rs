//! Matrix fused multiply-add (MFMA) execution: `D = A * B + C` over the whole wave.
//!
//! The operands are gathered from the lanes as [`super::mfma_layout`] describes, the products are
//! formed exactly and summed in f64, C is added and the sum is rounded once to the accumulator type
//! (round to nearest even). The hardware's adder tree rounds internally, so results can differ
//! from a GPU's in the last bits of f32; f64 MFMAs are a chain of fused multiply-adds in k order,
//! starting from C. Integer MFMAs wrap modulo 2^32.
//!
//! Modifiers: CBSZ/ABID broadcast one block of A to groups of 2^CBSZ blocks; BLGP permutes the
//! lanes B is read from (AMD's matrix instruction calculator); on gfx942/gfx950 the BLGP field of
//! the f64 instructions negates A, B and C. The `f8f6f4` instructions take their operand formats
//! from CBSZ (A) and BLGP (B); the scaled forms multiply each 32-long partial dot product by the
//! E8M0 scales of its A row and B column (scale of `A[i][k]` in lane `i + M * (k / 32)`, of
//! `B[k][j]` in lane `j + N * (k / 32)`, byte `op_sel | op_sel_hi << 1` of a VGPR; a scalar or
//! inline scale is read from bits 30:23); the unscaled forms (bit 0 of ABID clear, no scale
//! prefix) scale by 1. Combinations the documentation leaves open (broadcast on single-block
//! instructions, modifiers on gfx90a's f64 instructions) stop the wave with
//! [`Fault::Unsupported`].
//!
//! Denormals: f32 and f64 operands and results follow the MODE register's denormal controls of
//! their type, f16 sources the f16/f64 control; bf16 and the 8/6/4-bit formats keep denormals.
//! On gfx90a the f16 and bf16 instructions flush denormal inputs and results whatever the mode
//! (AMD's MIOpen documentation, "MI200 MFMA behavior specifics").
//!
//! All 64 lanes are read and written regardless of EXEC.

use super::super::inst::{Instruction, Operand, OperandKind};
use super::Wave;
use super::float::{flush16, flush32, flush64};
use super::fp8::Fp8;
use super::mfma_layout::SourceLayout;
use super::mfma_shape::{Accumulator, Element, Shape};
use super::minifloat::{Minifloat, e8m0};
use crate::error::Fault;
use crate::target::Target;

/// Executes the matrix instruction `i` on `w`.
pub(crate) fn execute(target: Target, w: &mut Wave, i: &Instruction) -> Result<(), Fault> {
    let shape = Shape::of(i.op, &i.fields).ok_or(Fault::Unsupported)?;
    let mods = Modifiers::of(target, &shape, i)?;
    let denormals = Denormals::of(target, w, &shape);
    let fnuz = target == Target::Gfx942;
    let a = load_source(
        w,
        &i.src[0],
        shape.a_layout(),
        shape.a,
        Decode {
            fnuz,
            flush: denormals.flush_sources,
            negate: mods.negate[0],
        },
        |lane| lane,
    )?;
    let blgp = mods.lane_pattern;
    let b = load_source(
        w,
        &i.src[1],
        shape.b_layout(),
        shape.b,
        Decode {
            fnuz,
            flush: denormals.flush_sources,
            negate: mods.negate[1],
        },
        |lane| lane_pattern(blgp, lane),
    )?;
    let c = load_accumulator(w, &i.src[2], &shape, denormals, mods.negate[2])?;
    let scales = if mods.scaled {
        Some(Scales::read(w, i)?)
    } else {
        None
    };
    let d = multiply(&shape, &mods, &a, &b, &c, scales.as_ref());
    store_accumulator(w, &i.dst, &shape, denormals, &d)
}

/// The modifier fields, validated for the instruction.
struct Modifiers {
    /// BLGP lane pattern of B (0: none).
    lane_pattern: u8,
    /// CBSZ: A blocks broadcast in groups of 2^cbsz.
    cbsz: u8,
    /// ABID: the block of each group that is broadcast.
    abid: u8,
    /// Negate A, B, C (gfx942+ f64).
    negate: [bool; 3],
    /// Block exponent scaling is applied.
    scaled: bool,
}

impl Modifiers {
    fn of(target: Target, shape: &Shape, i: &Instruction) -> Result<Modifiers, Fault> {
        let f = &i.fields;
        let mut m = Modifiers {
            lane_pattern: 0,
            cbsz: 0,
            abid: 0,
            negate: [false; 3],
            scaled: false,
        };
        if shape.f8f6f4 {
            // CBSZ/BLGP are the formats; ABID[0] says whether the scale prefix applies.
            let prefixed = i.scale[0].is_some();
            if f.abid > 1 || (f.abid == 1) != prefixed {
                return Err(Fault::Unsupported);
            }
            m.scaled = prefixed;
            return Ok(m);
        }
        if shape.acc == Accumulator::F64 {
            if f.cbsz != 0 || f.abid != 0 || (f.blgp != 0 && target == Target::Gfx90a) {
                return Err(Fault::Unsupported);
            }
            m.negate = [f.blgp & 1 != 0, f.blgp & 2 != 0, f.blgp & 4 != 0];
            return Ok(m);
        }
        let block_bits = shape.blocks.trailing_zeros();
        if u32::from(f.cbsz) > block_bits || u32::from(f.abid) >= 1 << f.cbsz {
            return Err(Fault::Unsupported);
        }
        m.cbsz = f.cbsz;
        m.abid = f.abid;
        m.lane_pattern = f.blgp;
        Ok(m)
    }

    /// The block of A that block `b` of the result multiplies.
    fn a_block(&self, b: u32) -> u32 {
        (b >> self.cbsz << self.cbsz) + u32::from(self.abid)
    }
}

/// The lane whose B operand lane `lane` uses under BLGP pattern `blgp`.
fn lane_pattern(blgp: u8, lane: u32) -> u32 {
    match blgp {
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        4 => lane % 16,
        5 => 16 + lane % 16,
        6 => 32 + lane % 16,
        7 => 48 + lane % 16,
        _ => lane,
    }
}

/// Denormal handling of one instruction.
#[derive(Clone, Copy)]
struct Denormals {
    flush_sources: bool,
    flush_accumulator_in: bool,
    flush_result: bool,
}

impl Denormals {
    fn of(target: Target, w: &Wave, shape: &Shape) -> Denormals {
        let half = matches!(shape.a, Element::F16 | Element::Bf16);
        let acc_mode = match shape.acc {
            Accumulator::F64 => w.denorm16_64(),
            _ => w.denorm32(),
        };
        if target == Target::Gfx90a && half {
            return Denormals {
                flush_sources: true,
                flush_accumulator_in: true,
                flush_result: true,
            };
        }
        let source_mode = match shape.a {
            Element::F32 => w.denorm32(),
            Element::F64 | Element::F16 => w.denorm16_64(),
            _ => 3,
        };
        Denormals {
            flush_sources: source_mode & 1 == 0,
            flush_accumulator_in: acc_mode & 1 == 0,
            flush_result: acc_mode & 2 == 0,
        }
    }
}

/// How source elements are turned into values.
#[derive(Clone, Copy)]
struct Decode {
    fnuz: bool,
    flush: bool,
    negate: bool,
}

impl Decode {
    fn value(self, element: Element, raw: u64) -> f64 {
        let v = match element {
            Element::F32 => {
                let bits = if self.flush {
                    flush32(raw as u32)
                } else {
                    raw as u32
                };
                f64::from(f32::from_bits(bits))
            }
            Element::F64 => f64::from_bits(if self.flush { flush64(raw) } else { raw }),
            Element::F16 => {
                let bits = if self.flush {
                    flush16(raw as u16)
                } else {
                    raw as u16
                };
                half::f16::from_bits(bits).to_f64()
            }
            Element::Bf16 => {
                let bits = (raw as u32) << 16;
                f64::from(f32::from_bits(if self.flush {
                    flush32(bits)
                } else {
                    bits
                }))
            }
            Element::I8 => f64::from(raw as u8 as i8),
            Element::Fp8 => f64::from(Fp8::e4m3(self.fnuz).decode(raw as u8)),
            Element::Bf8 => f64::from(Fp8::e5m2(self.fnuz).decode(raw as u8)),
            Element::Fp6 => f64::from(Minifloat::FP6.decode(raw as u32)),
            Element::Bf6 => f64::from(Minifloat::BF6.decode(raw as u32)),
            Element::Fp4 => f64::from(Minifloat::FP4.decode(raw as u32)),
        };
        if self.negate { -v } else { v }
    }
}

/// `count` consecutive registers of a vector operand, or an inline constant repeated.
fn registers(w: &Wave, o: &Operand, count: usize) -> Result<Vec<[u32; 64]>, Fault> {
    match o.kind {
        OperandKind::Vgpr(_) | OperandKind::Agpr(_) => {
            let sized = Operand {
                dwords: count as u8,
                ..*o
            };
            let (file, first) = w.vreg(&sized)?;
            Ok(file[first..first + count].to_vec())
        }
        OperandKind::Inline { value, .. } => Ok(vec![[value as u32; 64]; count]),
        _ => Err(Fault::Unsupported),
    }
}

/// Bits `[bit, bit + width)` of a lane's registers taken as one little-endian bit string.
fn field(regs: &[[u32; 64]], lane: usize, bit: u32, width: u32) -> u64 {
    let at = (bit / 32) as usize;
    let lo = u64::from(regs[at][lane]);
    let hi = regs.get(at + 1).map_or(0, |r| u64::from(r[lane]));
    let window = (lo | hi << 32) >> (bit % 32);
    if width == 64 {
        window
    } else {
        window & ((1u64 << width) - 1)
    }
}

/// A source matrix as values indexed `[block][outer][k]`; lane `l`'s elements are read from lane
/// `read_lane(l)`.
fn load_source(
    w: &Wave,
    o: &Operand,
    layout: SourceLayout,
    element: Element,
    decode: Decode,
    read_lane: impl Fn(u32) -> u32,
) -> Result<Vec<f64>, Fault> {
    let per_lane = layout.per_lane();
    let width = element.bits();
    let regs = registers(w, o, (per_lane * width).div_ceil(32) as usize)?;
    let mut out = vec![0.0; (layout.blocks * layout.outer * layout.k) as usize];
    for lane in 0..64 {
        let from = read_lane(lane) as usize;
        for slot in 0..per_lane {
            let e = layout.element(lane, slot);
            let raw = field(&regs, from, slot * width, width);
            let at = (e.block * layout.outer + e.outer) * layout.k + e.k;
            out[at as usize] = decode.value(element, raw);
        }
    }
    Ok(out)
}

/// The value of inline constant `code` as an f64 operand.
fn inline_f64(code: u16) -> f64 {
    match code {
        128..=192 => f64::from_bits(u64::from(code - 128)),
        193..=208 => f64::from_bits((192 - i64::from(code)) as u64),
        240 => 0.5,
        241 => -0.5,
        242 => 1.0,
        243 => -1.0,
        244 => 2.0,
        245 => -2.0,
        246 => 4.0,
        247 => -4.0,
        _ => f64::from_bits(0x3fc4_5f30_6dc9_c882),
    }
}

/// C as values indexed `[block][i][j]`.
fn load_accumulator(
    w: &Wave,
    o: &Operand,
    shape: &Shape,
    denormals: Denormals,
    negate: bool,
) -> Result<Vec<f64>, Fault> {
    let layout = shape.result_layout();
    let wide = shape.acc == Accumulator::F64;
    let per_lane = layout.per_lane() as usize;
    let count = per_lane * if wide { 2 } else { 1 };
    let constant = match (o.kind, wide) {
        (OperandKind::Inline { code, .. }, true) => Some(inline_f64(code)),
        _ => None,
    };
    let regs = match constant {
        Some(_) => Vec::new(),
        None => registers(w, o, count)?,
    };
    let flush = denormals.flush_accumulator_in;
    let mut out = vec![0.0; (shape.blocks * shape.m * shape.n) as usize];
    for b in 0..shape.blocks {
        for i in 0..shape.m {
            for j in 0..shape.n {
                let (lane, e) = layout.position(b, i, j);
                let (lane, e) = (lane as usize, e as usize);
                let v = match (constant, shape.acc) {
                    (Some(v), _) => v,
                    (None, Accumulator::F64) => {
                        let bits =
                            u64::from(regs[2 * e][lane]) | u64::from(regs[2 * e + 1][lane]) << 32;
                        f64::from_bits(if flush { flush64(bits) } else { bits })
                    }
                    (None, Accumulator::F32) => {
                        let bits = regs[e][lane];
                        f64::from(f32::from_bits(if flush { flush32(bits) } else { bits }))
                    }
                    (None, Accumulator::I32) => f64::from(regs[e][lane] as i32),
                };
                out[((b * shape.m + i) * shape.n + j) as usize] = if negate { -v } else { v };
            }
        }
    }
    Ok(out)
}

/// The E8M0 scales of a scaled MFMA, per lane.
struct Scales {
    a: [u8; 64],
    b: [u8; 64],
}

impl Scales {
    fn read(w: &Wave, i: &Instruction) -> Result<Scales, Fault> {
        let read = |k: usize| -> Result<[u8; 64], Fault> {
            let o = &i.scale[k];
            let byte = (i.mods.op_sel >> k & 1) | (i.mods.op_sel_hi >> k & 1) << 1;
            match o.kind {
                OperandKind::Vgpr(_) | OperandKind::Agpr(_) => {
                    let regs = registers(w, o, 1)?;
                    Ok(regs[0].map(|v| (v >> (8 * byte)) as u8))
                }
                _ => Ok([(w.scalar(o)? >> 23) as u8; 64]),
            }
        };
        Ok(Scales {
            a: read(0)?,
            b: read(1)?,
        })
    }

    /// The product of the scales of row `i` of A and column `j` of B for k block `kb`.
    fn factor(&self, shape: &Shape, i: u32, j: u32, kb: u32) -> f64 {
        let a = self.a[(i + shape.m * kb) as usize];
        let b = self.b[(j + shape.n * kb) as usize];
        e8m0(a) * e8m0(b)
    }
}

/// Products summed between two scale applications.
const SCALE_BLOCK: u32 = 32;

/// `A * B + C` for every block, as values indexed `[block][i][j]`.
fn multiply(
    shape: &Shape,
    mods: &Modifiers,
    a: &[f64],
    b: &[f64],
    c: &[f64],
    scales: Option<&Scales>,
) -> Vec<f64> {
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let mut d = vec![0.0; c.len()];
    for blk in 0..shape.blocks {
        let a_blk = mods.a_block(blk);
        for i in 0..m {
            let row = &a[((a_blk * m + i) * k) as usize..][..k as usize];
            for j in 0..n {
                let at = ((blk * m + i) * n + j) as usize;
                let column = |kk: u32| b[((blk * n + j) * k + kk) as usize];
                d[at] = match shape.acc {
                    Accumulator::F64 => {
                        (0..k).fold(c[at], |acc, kk| row[kk as usize].mul_add(column(kk), acc))
                    }
                    _ => {
                        let mut sum = 0.0;
                        for kb in 0..k.div_ceil(SCALE_BLOCK) {
                            let range = kb * SCALE_BLOCK..k.min((kb + 1) * SCALE_BLOCK);
                            let partial: f64 = range.map(|kk| row[kk as usize] * column(kk)).sum();
                            sum += match scales {
                                Some(s) => partial * s.factor(shape, i, j, kb),
                                None => partial,
                            };
                        }
                        c[at] + sum
                    }
                };
            }
        }
    }
    d
}

/// Writes D (values indexed `[block][i][j]`) to the destination registers of every lane.
fn store_accumulator(
    w: &mut Wave,
    o: &Operand,
    shape: &Shape,
    denormals: Denormals,
    d: &[f64],
) -> Result<(), Fault> {
    let layout = shape.result_layout();
    let wide = shape.acc == Accumulator::F64;
    let count = layout.per_lane() as usize * if wide { 2 } else { 1 };
    let sized = Operand {
        dwords: count as u8,
        ..*o
    };
    let (file, first) = w.vreg_mut(&sized)?;
    let flush = denormals.flush_result;
    for b in 0..shape.blocks {
        for i in 0..shape.m {
            for j in 0..shape.n {
                let v = d[((b * shape.m + i) * shape.n + j) as usize];
                let (lane, e) = layout.position(b, i, j);
                let (lane, e) = (lane as usize, e as usize);
                match shape.acc {
                    Accumulator::F64 => {
                        let bits = if flush {
                            flush64(v.to_bits())
                        } else {
                            v.to_bits()
                        };
                        file[first + 2 * e][lane] = bits as u32;
                        file[first + 2 * e + 1][lane] = (bits >> 32) as u32;
                    }
                    Accumulator::F32 => {
                        let bits = (v as f32).to_bits();
                        file[first + e][lane] = if flush { flush32(bits) } else { bits };
                    }
                    Accumulator::I32 => file[first + e][lane] = v as i64 as u32,
                }
            }
        }
    }
    Ok(())
}
