//! GFX9 instruction decoder: instruction words to [`Instruction`].
//!
//! Field layouts follow AMD's encoding tables (CDNA3/CDNA4 ISA, "Microcode Formats"); opcode numbers
//! come from the generated per-target tables.

use super::inst::{
    Dpp, Ext, Fields, Format, Instruction, Modifiers, Operand, OperandKind, Sdwa, Special,
};
use super::opcodes::Op;
use super::tables::{NumType, OpcodeTables, OperandSpec, RegKind, lookup};
use crate::Target;

pub use crate::machine::operand::{DecodeError, EXEC, FLAT_SCRATCH, M0, VCC};

const LITERAL: u16 = 255;
const SRC_DPP: u16 = 0xFA;
const SRC_SDWA: u16 = 0xF9;

/// Decodes the instruction at the start of `words` for `target`.
pub fn decode(target: Target, words: &[u32]) -> Result<Instruction, DecodeError> {
    let tables =
        OpcodeTables::for_target(target).ok_or(DecodeError::Unknown { word0: 0, word1: 0 })?;
    let w0 = *words.first().ok_or(DecodeError::Truncated)?;
    let mut d = Decoder {
        words,
        w0,
        tables,
        sve_scratch: target.sc_bits(),
    };
    d.decode()
}

struct Decoder<'a> {
    words: &'a [u32],
    w0: u32,
    tables: &'static OpcodeTables,
    /// Scratch instructions carry an SVE bit (gfx940+): the VGPR address is used only when it is set.
    sve_scratch: bool,
}

pub(crate) fn bits(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

pub(crate) fn bit(w: u32, b: u32) -> bool {
    (w >> b) & 1 == 1
}

impl Decoder<'_> {
    fn word(&self, i: usize) -> Result<u32, DecodeError> {
        self.words.get(i).copied().ok_or(DecodeError::Truncated)
    }

    fn unknown(&self) -> DecodeError {
        DecodeError::Unknown {
            word0: self.w0,
            word1: self.words.get(1).copied().unwrap_or(0),
        }
    }

    fn op(&self, table: &[Option<Op>], number: u32) -> Result<Op, DecodeError> {
        lookup(table, number).ok_or_else(|| self.unknown())
    }

    fn decode(&mut self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        if bits(w, 31, 23) == 0b1_0111_1101 {
            return self.sop1();
        }
        if bits(w, 31, 23) == 0b1_0111_1110 {
            return self.sopc();
        }
        if bits(w, 31, 23) == 0b1_0111_1111 {
            return self.sopp();
        }
        if bits(w, 31, 28) == 0b1011 {
            return self.sopk();
        }
        if bits(w, 31, 30) == 0b10 {
            return self.sop2();
        }
        if bits(w, 31, 25) == 0b011_1111 {
            return self.vop1();
        }
        if bits(w, 31, 25) == 0b011_1110 {
            return self.vopc();
        }
        if !bit(w, 31) {
            return self.vop2();
        }
        match bits(w, 31, 26) {
            0b11_0000 => self.smem(),
            0b11_0100 if bits(w, 25, 23) == 0b111 => self.vop3p(),
            0b11_0100 => self.vop3(),
            0b11_0110 => self.ds(),
            0b11_0111 => self.flat(),
            0b11_1000 => self.mubuf(),
            0b11_1010 => self.mtbuf(),
            0b11_1100 => self.mimg(),
            _ => Err(self.unknown()),
        }
    }

    /// A scalar ALU source: 16-bit operands are read as 32-bit values.
    fn ssrc(&self, code: u16, spec: OperandSpec, len: &mut u8) -> Result<Operand, DecodeError> {
        let spec = if spec.bits < 32 {
            OperandSpec {
                bits: 32,
                ty: NumType::Int,
                ..spec
            }
        } else {
            spec
        };
        self.src(code, spec, 1, len)
    }

    /// A source operand (8- or 9-bit source code) of the given shape; may consume a literal.
    fn src(
        &self,
        code: u16,
        spec: OperandSpec,
        literal_at: usize,
        len: &mut u8,
    ) -> Result<Operand, DecodeError> {
        let dwords = spec.dwords();
        let kind = match code {
            0..=127 => OperandKind::Sgpr(code as u8),
            128..=208 => OperandKind::Inline {
                code,
                value: inline_int(code, spec),
            },
            230 => OperandKind::Special(Special::FlatScratchBaseLo),
            231 => OperandKind::Special(Special::FlatScratchBaseHi),
            235 => OperandKind::Special(Special::SharedBase),
            236 => OperandKind::Special(Special::SharedLimit),
            237 => OperandKind::Special(Special::PrivateBase),
            238 => OperandKind::Special(Special::PrivateLimit),
            239 => OperandKind::Special(Special::PopsExitingWaveId),
            240..=248 => OperandKind::Inline {
                code,
                value: inline_float(code, spec),
            },
            251 => OperandKind::Special(Special::Vccz),
            252 => OperandKind::Special(Special::Execz),
            253 => OperandKind::Special(Special::Scc),
            254 => OperandKind::Special(Special::LdsDirect),
            LITERAL => {
                let raw = self.word(literal_at)?;
                *len = (literal_at as u8 + 1) * 4;
                OperandKind::Literal {
                    raw,
                    value: literal_value(raw, spec),
                }
            }
            256..=511 => OperandKind::Vgpr((code - 256) as u8),
            _ => OperandKind::Special(Special::Reserved(code)),
        };
        // Constants are one dword whatever they feed; a special source keeps the operand's width
        // (a 64-bit read of an aperture base is the whole base).
        let dwords = if matches!(
            kind,
            OperandKind::Inline { .. } | OperandKind::Literal { .. }
        ) {
            1
        } else {
            dwords
        };
        Ok(Operand::new(kind, dwords))
    }

    fn sgpr(code: u32, spec: OperandSpec) -> Operand {
        Operand::new(OperandKind::Sgpr(code as u8), spec.dwords())
    }

    fn vgpr(index: u32, spec: OperandSpec, acc: bool) -> Operand {
        let kind = if acc || spec.kind == RegKind::Agpr {
            OperandKind::Agpr(index as u8)
        } else {
            OperandKind::Vgpr(index as u8)
        };
        Operand::new(kind, spec.dwords())
    }

    fn base(&self, op: Op, format: Format, len: u8) -> Instruction {
        let _ = self;
        Instruction {
            op,
            format,
            len,
            dst: Operand::NONE,
            sdst: Operand::NONE,
            src: [Operand::NONE; 3],
            scale: [Operand::NONE; 2],
            mods: Modifiers::default(),
            ext: Ext::None,
            fields: Fields::default(),
        }
    }

    fn sop1(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sop1, bits(w, 15, 8))?;
        let [dst, s0, ..] = op.info().operands;
        let mut len = 4;
        let mut i = self.base(op, Format::Sop1, 4);
        if dst.kind != RegKind::None {
            i.dst = Self::sgpr(bits(w, 22, 16), dst);
        }
        if s0.kind != RegKind::None {
            i.src[0] = self.ssrc(bits(w, 7, 0) as u16, s0, &mut len)?;
        }
        i.len = len;
        Ok(i)
    }

    fn sop2(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sop2, bits(w, 29, 23))?;
        let [dst, s0, s1, _] = op.info().operands;
        let mut len = 4;
        let mut i = self.base(op, Format::Sop2, 4);
        i.dst = Self::sgpr(bits(w, 22, 16), dst);
        i.src[0] = self.ssrc(bits(w, 7, 0) as u16, s0, &mut len)?;
        i.src[1] = self.ssrc(bits(w, 15, 8) as u16, s1, &mut len)?;
        i.len = len;
        Ok(i)
    }

    fn sopc(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopc, bits(w, 22, 16))?;
        let [_, s0, s1, _] = op.info().operands;
        let mut len = 4;
        let mut i = self.base(op, Format::Sopc, 4);
        if s0.kind != RegKind::None {
            i.src[0] = self.ssrc(bits(w, 7, 0) as u16, s0, &mut len)?;
        } else {
            i.fields.imm = bits(w, 7, 0) as i32;
        }
        if s1.kind != RegKind::None && op != Op::S_SET_GPR_IDX_ON {
            i.src[1] = self.ssrc(bits(w, 15, 8) as u16, s1, &mut len)?;
        } else {
            i.fields.imm |= (bits(w, 15, 8) as i32) << 8;
        }
        i.len = len;
        Ok(i)
    }

    fn sopk(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopk, bits(w, 27, 23))?;
        let [dst, ..] = op.info().operands;
        let mut i = self.base(op, Format::Sopk, 4);
        if dst.kind != RegKind::None || op != Op::S_SETREG_IMM32_B32 {
            i.dst = Self::sgpr(
                bits(w, 22, 16),
                if dst.kind == RegKind::None {
                    OperandSpec { bits: 32, ..dst }
                } else {
                    dst
                },
            );
        }
        i.fields.imm = bits(w, 15, 0) as i32;
        if op == Op::S_SETREG_IMM32_B32 {
            let raw = self.word(1)?;
            i.dst = Operand::NONE;
            i.src[0] = Operand::new(
                OperandKind::Literal {
                    raw,
                    value: u64::from(raw),
                },
                1,
            );
            i.len = 8;
        }
        Ok(i)
    }

    fn sopp(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopp, bits(w, 22, 16))?;
        let mut i = self.base(op, Format::Sopp, 4);
        i.fields.imm = bits(w, 15, 0) as i32;
        Ok(i)
    }

    fn smem(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.smem, bits(w, 25, 18))?;
        let [dst, sbase, _, _] = op.info().operands;
        let mut i = self.base(op, Format::Smem, 8);
        let f = &mut i.fields;
        f.smem_imm = bit(w, 17);
        f.glc = bit(w, 16);
        f.nv = bit(w, 15);
        f.soffset_en = bit(w, 14);
        if dst.kind != RegKind::None {
            i.dst = Self::sgpr(bits(w, 12, 6), dst);
        }
        if sbase.kind != RegKind::None {
            i.src[0] = Self::sgpr(bits(w, 5, 0) << 1, sbase);
        }
        let offset = bits(w1, 20, 0);
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Sgpr,
        };
        if f.soffset_en {
            i.src[1] = Self::sgpr(bits(w1, 31, 25), b32);
            f.imm = sign_extend(offset, 21);
        } else if f.smem_imm {
            f.imm = sign_extend(offset, 21);
        } else {
            i.src[1] = Self::sgpr(offset & 0x7f, b32);
        }
        Ok(i)
    }

    fn vop2(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vop2, bits(w, 30, 25))?;
        let [dst, s0, s1, _] = op.info().operands;
        let mut i = self.base(op, Format::Vop2, 4);
        i.dst = Self::vgpr(bits(w, 24, 17), dst, false);
        i.src[1] = Self::vgpr(bits(w, 16, 9), s1, false);
        self.vop_src0(&mut i, s0)?;
        let vcc = Operand::new(OperandKind::Sgpr(VCC), 2);
        match op {
            Op::V_FMAMK_F32 | Op::V_MADMK_F32 | Op::V_MADMK_F16 => {
                let k = self.word(1)?;
                i.src[2] = i.src[1];
                i.src[1] = Operand::new(
                    OperandKind::Literal {
                        raw: k,
                        value: u64::from(k),
                    },
                    1,
                );
                i.len = 8;
            }
            Op::V_FMAAK_F32 | Op::V_MADAK_F32 | Op::V_MADAK_F16 => {
                let k = self.word(1)?;
                i.src[2] = Operand::new(
                    OperandKind::Literal {
                        raw: k,
                        value: u64::from(k),
                    },
                    1,
                );
                i.len = 8;
            }
            Op::V_CNDMASK_B32 => i.src[2] = vcc,
            Op::V_ADD_CO_U32 | Op::V_SUB_CO_U32 | Op::V_SUBREV_CO_U32 => i.sdst = vcc,
            Op::V_ADDC_CO_U32 | Op::V_SUBB_CO_U32 | Op::V_SUBBREV_CO_U32 => {
                i.sdst = vcc;
                i.src[2] = vcc;
            }
            _ if is_tied_accumulator(op) => i.src[2] = i.dst,
            _ => {}
        }
        Ok(i)
    }

    fn vop1(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vop1, bits(w, 16, 9))?;
        let [dst, s0, _, _] = op.info().operands;
        let mut i = self.base(op, Format::Vop1, 4);
        if dst.kind == RegKind::Sgpr {
            i.dst = Self::sgpr(bits(w, 24, 17), dst);
        } else if dst.kind != RegKind::None {
            i.dst = Self::vgpr(bits(w, 24, 17), dst, false);
        }
        if s0.kind != RegKind::None {
            self.vop_src0(&mut i, s0)?;
        }
        Ok(i)
    }

    fn vopc(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vopc, bits(w, 24, 17))?;
        let [_, s0, s1, _] = op.info().operands;
        let mut i = self.base(op, Format::Vopc, 4);
        i.dst = Operand::new(OperandKind::Sgpr(VCC), 2);
        i.src[1] = Self::vgpr(bits(w, 16, 9), s1, false);
        self.vop_src0(&mut i, s0)?;
        Ok(i)
    }

    /// src0 of a 32-bit VALU encoding, with its DPP or SDWA extension dword if any.
    fn vop_src0(&self, i: &mut Instruction, spec: OperandSpec) -> Result<(), DecodeError> {
        let code = bits(self.w0, 8, 0) as u16;
        match code {
            SRC_DPP => {
                let w1 = self.word(1)?;
                i.len = 8;
                i.src[0] = Self::vgpr(bits(w1, 7, 0), spec, false);
                i.ext = Ext::Dpp(Dpp {
                    ctrl: bits(w1, 16, 8) as u16,
                    bound_ctrl: bit(w1, 19),
                    bank_mask: bits(w1, 27, 24) as u8,
                    row_mask: bits(w1, 31, 28) as u8,
                });
                i.mods.neg = (bits(w1, 20, 20) | bits(w1, 22, 22) << 1) as u8;
                i.mods.abs = (bits(w1, 21, 21) | bits(w1, 23, 23) << 1) as u8;
            }
            SRC_SDWA => {
                let w1 = self.word(1)?;
                i.len = 8;
                let s0_sgpr = bit(w1, 23);
                let r0 = bits(w1, 7, 0);
                i.src[0] = if s0_sgpr {
                    let mut len = 8;
                    self.src(r0 as u16, spec, 9, &mut len)?
                } else {
                    Self::vgpr(r0, spec, false)
                };
                if i.format == Format::Vopc {
                    // VOPC SDWA: bits 14:8 name the mask destination when sd is set, else VCC.
                    if bit(w1, 15) {
                        i.dst = Operand::new(OperandKind::Sgpr((bits(w1, 14, 8) & !1) as u8), 2);
                    }
                    i.mods.omod = 0;
                } else {
                    i.mods.clamp = bit(w1, 13);
                    i.mods.omod = bits(w1, 15, 14) as u8;
                }
                if i.format == Format::Vop2 || i.format == Format::Vopc {
                    let s1 = bits(self.w0, 16, 9);
                    if bit(w1, 31) {
                        let mut len = 8;
                        i.src[1] = self.src(s1 as u16, op_spec(i.op, 2), 9, &mut len)?;
                    }
                }
                let vopc = i.format == Format::Vopc;
                i.ext = Ext::Sdwa(Sdwa {
                    dst_sel: if vopc { 6 } else { bits(w1, 10, 8) as u8 },
                    dst_unused: if vopc { 0 } else { bits(w1, 12, 11) as u8 },
                    src0_sel: bits(w1, 18, 16) as u8,
                    src0_sext: bit(w1, 19),
                    src1_sel: bits(w1, 26, 24) as u8,
                    src1_sext: bit(w1, 27),
                });
                i.mods.neg = (bits(w1, 20, 20) | bits(w1, 28, 28) << 1) as u8;
                i.mods.abs = (bits(w1, 21, 21) | bits(w1, 29, 29) << 1) as u8;
            }
            _ => {
                let mut len = i.len;
                let mut o = self.src(code, spec, 1, &mut len)?;
                if let (RegKind::Agpr, OperandKind::Vgpr(r)) = (spec.kind, o.kind) {
                    o.kind = OperandKind::Agpr(r);
                }
                i.src[0] = o;
                i.len = len;
            }
        }
        Ok(())
    }

    fn vop3(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let number = bits(w, 25, 16);
        let op = self.op(self.tables.vop3, number)?;
        let info = op.info();
        let [dst, s0, s1, s2] = info.operands;
        let vop3b = info.vop3b;
        let mut i = self.base(op, if vop3b { Format::Vop3b } else { Format::Vop3 }, 8);
        let vdst = bits(w, 7, 0);
        i.dst = match dst.kind {
            RegKind::Sgpr => Self::sgpr(vdst, dst),
            RegKind::None => Operand::NONE,
            _ => Self::vgpr(vdst, dst, false),
        };
        let mut len = 8;
        let specs = [s0, s1, s2];
        let codes = [bits(w1, 8, 0), bits(w1, 17, 9), bits(w1, 26, 18)];
        for k in 0..3 {
            if specs[k].kind != RegKind::None {
                i.src[k] = self.src(codes[k] as u16, specs[k], 2, &mut len)?;
            }
        }
        if vop3b {
            i.sdst = Operand::new(OperandKind::Sgpr(bits(w, 14, 8) as u8), 2);
        } else {
            i.mods.abs = bits(w, 10, 8) as u8;
            i.mods.op_sel = bits(w, 14, 11) as u8;
        }
        i.mods.clamp = bit(w, 15);
        i.mods.neg = bits(w1, 31, 29) as u8;
        i.mods.omod = bits(w1, 28, 27) as u8;
        if is_tied_accumulator(op) && !i.src[2].is_some() {
            i.src[2] = i.dst;
        }
        i.len = len;
        Ok(i)
    }

    fn vop3p(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        const LD_SCALE: u32 = 44;
        if bits(w, 22, 16) == LD_SCALE && lookup(self.tables.vop3p, LD_SCALE).is_none() {
            return self.scaled_mfma(w, w1);
        }
        let op = self.op(self.tables.vop3p, bits(w, 22, 16))?;
        let [dst, s0, s1, s2] = op.info().operands;
        let mfma = is_mfma(op);
        let mut i = self.base(op, if mfma { Format::Mfma } else { Format::Vop3p }, 8);
        let vdst = bits(w, 7, 0);
        let mut len = 8;
        if mfma {
            return self.vop3p_mfma(op, w, w1);
        }
        i.dst = match dst.kind {
            RegKind::Agpr => Self::vgpr(vdst, dst, true),
            RegKind::None => Operand::NONE,
            _ => Self::vgpr(vdst, dst, false),
        };
        let specs = [s0, s1, s2];
        let codes = [bits(w1, 8, 0), bits(w1, 17, 9), bits(w1, 26, 18)];
        for k in 0..3 {
            if specs[k].kind == RegKind::None {
                continue;
            }
            let mut o = self.src(codes[k] as u16, specs[k], 2, &mut len)?;
            if let (RegKind::Agpr, OperandKind::Vgpr(r)) = (specs[k].kind, o.kind) {
                o.kind = OperandKind::Agpr(r);
            }
            i.src[k] = o;
        }
        i.mods.neg_hi = bits(w, 10, 8) as u8;
        i.mods.op_sel = bits(w, 13, 11) as u8;
        i.mods.op_sel_hi = (bits(w1, 28, 27) | bits(w, 14, 14) << 2) as u8;
        i.mods.clamp = bit(w, 15);
        i.mods.neg = bits(w1, 31, 29) as u8;
        i.len = len;
        Ok(i)
    }

    /// A scaled MFMA: a `v_mfma_ld_scale_b32` word pair (scale sources and their op_sel) followed by
    /// the MFMA word pair.
    fn scaled_mfma(&self, w: u32, w1: u32) -> Result<Instruction, DecodeError> {
        let w2 = self.word(2)?;
        let w3 = self.word(3)?;
        if bits(w2, 31, 23) != 0b1_1010_0111 {
            return Err(self.unknown());
        }
        let op = self.op(self.tables.vop3px2, bits(w2, 22, 16))?;
        let inner = Decoder {
            words: &self.words[2..],
            w0: w2,
            tables: self.tables,
            sve_scratch: self.sve_scratch,
        };
        let mut i = inner.vop3p_mfma(op, w2, w3)?;
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Src,
        };
        let mut len = 16;
        i.scale = [
            self.src(bits(w1, 8, 0) as u16, b32, 4, &mut len)?,
            self.src(bits(w1, 17, 9) as u16, b32, 4, &mut len)?,
        ];
        // The two scale operands each take an op_sel and op_sel_hi bit (their byte); the third
        // bits of the fields (word 0 bits 13 and 14) select nothing.
        i.mods.op_sel = bits(w, 12, 11) as u8;
        i.mods.op_sel_hi = bits(w1, 28, 27) as u8;
        i.len = 16;
        Ok(i)
    }

    fn vop3p_mfma(&self, op: Op, w: u32, w1: u32) -> Result<Instruction, DecodeError> {
        let [dst, s0, s1, s2] = op.info().operands;
        let mut i = self.base(op, Format::Mfma, 8);
        let f = &mut i.fields;
        f.acc_cd = bit(w, 15);
        f.abid = bits(w, 14, 11) as u8;
        f.cbsz = bits(w, 10, 8) as u8;
        f.blgp = bits(w1, 31, 29) as u8;
        let acc = bits(w1, 28, 27);
        let acc_cd = f.acc_cd;
        i.dst = Self::vgpr(bits(w, 7, 0), dst, acc_cd);
        let codes = [bits(w1, 8, 0), bits(w1, 17, 9), bits(w1, 26, 18)];
        let specs = [s0, s1, s2];
        let mut len = 8;
        for k in 0..3 {
            if specs[k].kind == RegKind::None {
                continue;
            }
            let mut o = self.src(codes[k] as u16, specs[k], 2, &mut len)?;
            let to_acc = if k < 2 { acc >> k & 1 == 1 } else { acc_cd };
            if let (OperandKind::Vgpr(r), true) = (o.kind, to_acc) {
                o.kind = OperandKind::Agpr(r);
            }
            i.src[k] = o;
        }
        if op.name().contains("f8f6f4") {
            i.src[0].dwords = f8f6f4_dwords(i.fields.cbsz);
            i.src[1].dwords = f8f6f4_dwords(i.fields.blgp);
        }
        i.len = len;
        Ok(i)
    }

    fn ds(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.ds, bits(w, 24, 17))?;
        let [dst, addr, data0, data1] = op.info().operands;
        let mut i = self.base(op, Format::Ds, 8);
        let acc = bit(w, 25);
        i.fields.acc = acc;
        i.fields.imm = bits(w, 7, 0) as i32;
        i.fields.offset1 = bits(w, 15, 8) as u8;
        i.fields.gds = bit(w, 16);
        if dst.kind != RegKind::None {
            i.dst = Self::vgpr(bits(w1, 31, 24), dst, acc);
        }
        if addr.kind != RegKind::None {
            i.src[0] = Self::vgpr(bits(w1, 7, 0), addr, false);
        }
        if data0.kind != RegKind::None {
            i.src[1] = Self::vgpr(bits(w1, 15, 8), data0, acc);
        }
        if data1.kind != RegKind::None {
            i.src[2] = Self::vgpr(bits(w1, 23, 16), data1, acc);
        }
        Ok(i)
    }

    fn flat(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let number = bits(w, 24, 18);
        let (format, table) = match bits(w, 15, 14) {
            0 => (Format::Flat, self.tables.flat),
            1 => (Format::Scratch, self.tables.scratch),
            2 => (Format::Global, self.tables.global),
            _ => return Err(self.unknown()),
        };
        let op = self.op(table, number)?;
        let [dst, _, data, _] = op.info().operands;
        let mut i = self.base(op, format, 8);
        let f = &mut i.fields;
        f.acc = bit(w1, 23);
        f.glc = bit(w, 16);
        f.slc = bit(w, 17);
        f.scc = bit(w, 25);
        f.lds = bit(w, 13) && format != Format::Scratch;
        f.sve = bit(w, 13) && format == Format::Scratch;
        f.imm = if format == Format::Flat {
            bits(w, 11, 0) as i32
        } else {
            sign_extend(bits(w, 12, 0), 13)
        };
        let acc = f.acc;
        let saddr = bits(w1, 22, 16);
        let saddr_off = saddr == 0x7f;
        let vaddr = bits(w1, 7, 0);
        let addr_dwords = match format {
            Format::Flat => 2,
            Format::Global if saddr_off => 2,
            _ => 1,
        };
        let vaddr_used = match format {
            Format::Scratch if self.sve_scratch => i.fields.sve,
            Format::Scratch => saddr_off,
            _ => true,
        };
        if vaddr_used {
            i.src[0] = Operand::new(OperandKind::Vgpr(vaddr as u8), addr_dwords);
        }
        if data.kind != RegKind::None {
            i.src[1] = Self::vgpr(bits(w1, 15, 8), data, acc);
        }
        if format != Format::Flat && !saddr_off {
            let sdw = if format == Format::Global { 2 } else { 1 };
            i.src[2] = Operand::new(OperandKind::Sgpr(saddr as u8), sdw);
        }
        let name = op.name();
        let returns = !name.contains("_atomic_") || i.fields.glc;
        // A load to LDS (the lds bit, or gfx940's `_load_lds_` opcodes) writes no VGPR.
        if dst.kind != RegKind::None && returns && !name.contains("_load_lds_") && !i.fields.lds {
            i.dst = Self::vgpr(bits(w1, 31, 24), dst, acc);
        }
        Ok(i)
    }

    fn mubuf(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.mubuf, bits(w, 24, 18))?;
        let [vdata, _, srsrc, _] = op.info().operands;
        let mut i = self.base(op, Format::Mubuf, 8);
        self.buffer_common(&mut i, w1, vdata, srsrc)?;
        let f = &mut i.fields;
        f.glc = bit(w, 14);
        f.scc = bit(w, 15);
        f.lds = bit(w, 16);
        // A load to LDS writes no VGPR (its vdata field is unused).
        if f.lds && op.name().contains("_load_") {
            i.dst = Operand::NONE;
        }
        f.slc = bit(w, 17);
        // gfx90a's cache invalidations take no cache policy: LLVM decodes them only with glc
        // and scc clear (slc is ignored).
        let invalidation = matches!(
            op,
            Op::BUFFER_INVL2 | Op::BUFFER_WBINVL1 | Op::BUFFER_WBINVL1_VOL
        );
        if invalidation && (f.glc || f.scc) {
            return Err(self.unknown());
        }
        Ok(i)
    }

    fn mtbuf(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.mtbuf, bits(w, 18, 15))?;
        let [vdata, _, srsrc, _] = op.info().operands;
        let mut i = self.base(op, Format::Mtbuf, 8);
        self.buffer_common(&mut i, w1, vdata, srsrc)?;
        let f = &mut i.fields;
        f.glc = bit(w, 14);
        f.dfmt = bits(w, 22, 19) as u8;
        f.nfmt = bits(w, 25, 23) as u8;
        f.scc = bit(w1, 21);
        f.slc = bit(w1, 22);
        Ok(i)
    }

    /// An image instruction (gfx90a; LLVM's layout): vdata's width follows dmask (halved by d16),
    /// vaddr prints as one register (its count depends on the resource), srsrc is 8 SGPRs.
    fn mimg(&self) -> Result<Instruction, DecodeError> {
        use super::inst::mimg;
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.mimg, bits(w, 24, 18))?;
        let mut i = self.base(op, Format::Mimg, 8);
        let f = &mut i.fields;
        f.dmask = bits(w, 11, 8) as u8;
        f.glc = bit(w, 13);
        f.slc = bit(w, 25);
        f.acc = bit(w, 16);
        f.mimg_flags = [
            (bit(w, 12), mimg::UNORM),
            (bit(w, 14), mimg::DA),
            (bit(w, 15), mimg::A16),
            (bit(w, 17), mimg::LWE),
            (bit(w1, 31), mimg::D16),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .fold(0, |flags, (_, flag)| flags | flag);
        let components = f.dmask.count_ones().max(1) as u8;
        let dwords = if f.mimg_flags & mimg::D16 != 0 {
            components.div_ceil(2)
        } else {
            components
        };
        let data = if f.acc {
            OperandKind::Agpr(bits(w1, 15, 8) as u8)
        } else {
            OperandKind::Vgpr(bits(w1, 15, 8) as u8)
        };
        i.dst = Operand::new(data, dwords);
        i.src[0] = Operand::new(OperandKind::Vgpr(bits(w1, 7, 0) as u8), 1);
        i.src[1] = Operand::new(OperandKind::Sgpr((bits(w1, 20, 16) * 4) as u8), 8);
        if bits(w1, 25, 21) != 0 {
            i.src[2] = Operand::new(OperandKind::Sgpr((bits(w1, 25, 21) * 4) as u8), 4);
        }
        Ok(i)
    }

    fn buffer_common(
        &self,
        i: &mut Instruction,
        w1: u32,
        vdata: OperandSpec,
        srsrc: OperandSpec,
    ) -> Result<(), DecodeError> {
        let w = self.w0;
        let f = &mut i.fields;
        f.imm = bits(w, 11, 0) as i32;
        f.offen = bit(w, 12);
        f.idxen = bit(w, 13);
        f.acc = bit(w1, 23);
        let addr_dwords = u8::from(f.offen) + u8::from(f.idxen);
        if addr_dwords > 0 {
            i.src[0] = Operand::new(OperandKind::Vgpr(bits(w1, 7, 0) as u8), addr_dwords);
        }
        if vdata.kind != RegKind::None {
            i.dst = Self::vgpr(bits(w1, 15, 8), vdata, f.acc);
        }
        let _ = &f;
        let rsrc = OperandSpec { bits: 128, ..srsrc };
        i.src[1] = Self::sgpr(bits(w1, 20, 16) << 2, rsrc);
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Src,
        };
        let mut len = 8;
        i.src[2] = self.src(bits(w1, 31, 24) as u16, b32, 2, &mut len)?;
        Ok(())
    }
}

/// The shape of operand slot `slot` (0 = destination) of `op`.
fn op_spec(op: Op, slot: usize) -> OperandSpec {
    op.info().operands[slot]
}

/// Whether `op` reads its destination as an implicit third source (MAC/FMAC/DOT*C forms).
pub fn is_tied_accumulator(op: Op) -> bool {
    matches!(
        op,
        Op::V_MAC_F32
            | Op::V_FMAC_F32
            | Op::V_FMAC_F64
            | Op::V_MAC_F16
            | Op::V_PK_FMAC_F16
            | Op::V_DOT2C_F32_F16
            | Op::V_DOT2C_F32_BF16
            | Op::V_DOT2C_I32_I16
            | Op::V_DOT4C_I32_I8
            | Op::V_DOT8C_I32_I4
    )
}

/// Whether `op` is a matrix instruction (MFMA/SMFMAC) with the MFMA form of the VOP3P encoding.
pub fn is_mfma(op: Op) -> bool {
    let name = op.name();
    name.starts_with("v_mfma") || name.starts_with("v_smfmac")
}

/// Registers per lane of an f8f6f4 MFMA source in format `fmt` (0-1 fp8/bf8, 2-3 fp6/bf6, 4 fp4).
fn f8f6f4_dwords(fmt: u8) -> u8 {
    match fmt {
        2 | 3 => 6,
        4 => 4,
        _ => 8,
    }
}

pub(crate) fn sign_extend(v: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((v << shift) as i32) >> shift
}

/// Value of inline integer constant `code` (128..=208) for an operand of shape `spec`.
pub(crate) fn inline_int(code: u16, spec: OperandSpec) -> u64 {
    let v: i64 = if code <= 192 {
        i64::from(code) - 128
    } else {
        192 - i64::from(code)
    };
    match spec.bits {
        16 => u64::from(v as u16),
        64 if !matches!(spec.ty, NumType::PackedFloat32) => v as u64,
        _ => u64::from(v as u32),
    }
}

/// Value of inline float constant `code` (240..=248) for an operand of shape `spec`.
pub(crate) fn inline_float(code: u16, spec: OperandSpec) -> u64 {
    const F32: [u32; 9] = [
        0x3f00_0000,
        0xbf00_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x4000_0000,
        0xc000_0000,
        0x4080_0000,
        0xc080_0000,
        0x3e22_f983,
    ];
    const F64: [u64; 9] = [
        0x3fe0_0000_0000_0000,
        0xbfe0_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x4000_0000_0000_0000,
        0xc000_0000_0000_0000,
        0x4010_0000_0000_0000,
        0xc010_0000_0000_0000,
        0x3fc4_5f30_6dc9_c882,
    ];
    let k = usize::from(code - 240);
    let f16 = matches!(
        spec.ty,
        NumType::PackedFloat | NumType::PackedInt | NumType::PackedBFloat
    ) || spec.bits == 16;
    if f16 {
        u64::from(inline_f16(code))
    } else if spec.bits == 64 && !matches!(spec.ty, NumType::PackedFloat32) {
        F64[k]
    } else {
        u64::from(F32[k])
    }
}

/// The f16 encoding of inline float constant `code` (240..=248): what a 16-bit operand reads,
/// in its low half (the high half is 0).
pub(crate) fn inline_f16(code: u16) -> u16 {
    const F16: [u16; 9] = [
        0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
    ];
    F16[usize::from(code - 240)]
}

/// Value of a 32-bit literal for an operand of shape `spec`.
pub(crate) fn literal_value(raw: u32, spec: OperandSpec) -> u64 {
    if spec.bits == 64 {
        match spec.ty {
            NumType::Float => u64::from(raw) << 32,
            NumType::Sint => i64::from(raw as i32) as u64,
            _ => u64::from(raw),
        }
    } else {
        u64::from(raw)
    }
}
