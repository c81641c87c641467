//! RDNA instruction decoder (gfx1100, gfx1201): instruction words to [`Instruction`].
//!
//! Field layouts follow AMD's encoding tables (RDNA3/RDNA4 ISA, "Microcode Formats"); opcode numbers
//! come from the generated per-target tables. Lane-mask operands (VCC, compare results, carries)
//! span one SGPR in wave32 and two in wave64, so decoding depends on the wave size.

use super::inst::{
    Dpp8, Dpp16, Dual, Ext, Fields, Format, Instruction, Modifiers, Operand, OperandKind, Special,
};
use super::opcodes::Op;
use super::tables::{NumType, OpcodeTables, OperandSpec, RegKind, lookup};
use crate::gfx9::decode::{bit, bits, inline_float, inline_int, literal_value, sign_extend};
use crate::{Target, WaveSize};

pub use crate::gfx9::decode::DecodeError;

/// Register file index of VCC (low half).
pub const VCC: u8 = 106;
/// Register file index of EXEC (low half).
pub const EXEC: u8 = 126;
/// Register file index of M0 (encoded as 125 on RDNA).
pub const M0: u8 = 124;
/// Register file index of `null` (encoded as 124 on RDNA): reads zero, writes are dropped.
pub const NULL: u8 = 125;

/// The encoding of `null` in RDNA register fields.
const NULL_CODE: u32 = 124;
const LITERAL: u16 = 255;
const SRC_DPP16: u16 = 250;
const SRC_DPP8: u16 = 233;
const SRC_DPP8_FI: u16 = 234;

/// Decodes the instruction at the start of `words` for `target` running waves of `wave` lanes.
pub fn decode(target: Target, wave: WaveSize, words: &[u32]) -> Result<Instruction, DecodeError> {
    let tables =
        OpcodeTables::for_target(target).ok_or(DecodeError::Unknown { word0: 0, word1: 0 })?;
    let w0 = *words.first().ok_or(DecodeError::Truncated)?;
    Decoder {
        words,
        w0,
        tables,
        target,
        gfx12: target == Target::Gfx1201,
        mask_dwords: match wave {
            WaveSize::Wave32 => 1,
            WaveSize::Wave64 => 2,
        },
    }
    .decode()
}

struct Decoder<'a> {
    words: &'a [u32],
    w0: u32,
    tables: &'static OpcodeTables,
    target: Target,
    gfx12: bool,
    /// Registers per lane mask: 1 in wave32, 2 in wave64.
    mask_dwords: u8,
}

/// The register file index of scalar register field value `code` (RDNA swaps m0 and null).
pub(crate) fn sreg(code: u32) -> u8 {
    match code {
        NULL_CODE => NULL,
        125 => M0,
        c => c as u8,
    }
}

/// Whether `op` reads its destination as an implicit third source (FMAC/DOT2ACC forms).
pub fn is_tied_accumulator(op: Op) -> bool {
    matches!(
        op,
        Op::V_FMAC_F32
            | Op::V_FMAC_F16
            | Op::V_FMAC_DX9_ZERO_F32
            | Op::V_DOT2ACC_F32_F16
            | Op::V_DOT2ACC_F32_BF16
            | Op::V_PK_FMAC_F16
    )
}

/// Whether `op` is a compare that writes EXEC (`v_cmpx_*`).
pub fn is_cmpx(op: Op) -> bool {
    op.name().starts_with("v_cmpx_")
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

    /// The operand slots of `op` on this target.
    fn operands(&self, op: Op) -> [OperandSpec; 4] {
        op.info().operands_on(self.target)
    }

    fn decode(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        if w == 0 {
            return Ok(Self::base(Op::V_ILLEGAL, Format::Vop2, 4));
        }
        match bits(w, 31, 23) {
            0x17D => return self.sop1(),
            0x17E => return self.sopc(),
            0x17F => return self.sopp(),
            _ => {}
        }
        if bits(w, 31, 28) == 0b1011 {
            return self.sopk();
        }
        if bits(w, 31, 30) == 0b10 {
            return self.sop2();
        }
        match bits(w, 31, 25) {
            0b011_1111 => return self.vop1(),
            0b011_1110 => return self.vopc(),
            _ => {}
        }
        if !bit(w, 31) {
            return self.vop2();
        }
        if bits(w, 31, 24) == 0xCC {
            return self.vop3p();
        }
        if self.gfx12 {
            match bits(w, 31, 24) {
                0xEC => return self.flat12(Format::Flat),
                0xED => return self.flat12(Format::Scratch),
                0xEE => return self.flat12(Format::Global),
                _ => {}
            }
        }
        match bits(w, 31, 26) {
            0b11_1101 => self.smem(),
            0b11_0101 => self.vop3(),
            0b11_0010 => self.vopd(),
            0b11_0110 => self.ds(),
            0b11_0111 if !self.gfx12 => self.flat11(),
            0b11_1000 if !self.gfx12 => self.mubuf11(),
            0b11_0001 if self.gfx12 => self.vbuffer12(),
            _ => Err(self.unknown()),
        }
    }

    fn base(op: Op, format: Format, len: u8) -> Instruction {
        Instruction {
            op,
            format,
            len,
            dst: Operand::NONE,
            sdst: Operand::NONE,
            src: [Operand::NONE; 3],
            mods: Modifiers::default(),
            ext: Ext::None,
            fields: Fields::default(),
            dual: None,
        }
    }

    /// A source operand (8- or 9-bit source code) of the given shape; a literal is read from dword
    /// `literal_at` (and `len` grows to include it).
    fn src(
        &self,
        code: u16,
        spec: OperandSpec,
        literal_at: usize,
        len: &mut u8,
    ) -> Result<Operand, DecodeError> {
        let kind = match code {
            0..=127 => OperandKind::Sgpr(sreg(u32::from(code))),
            128..=208 => OperandKind::Inline {
                code,
                value: inline_int(code, spec),
            },
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
                *len = (*len).max((literal_at as u8 + 1) * 4);
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
        let dwords = match kind {
            OperandKind::Sgpr(_) | OperandKind::Vgpr(_) | OperandKind::Special(_) => spec.dwords(),
            _ => 1,
        };
        Ok(Operand::new(kind, dwords))
    }

    /// A scalar ALU source: 16-bit operands are read as 32-bit values.
    fn ssrc(&self, code: u32, spec: OperandSpec, len: &mut u8) -> Result<Operand, DecodeError> {
        let spec = if spec.bits < 32 {
            OperandSpec {
                bits: 32,
                ty: NumType::Int,
                ..spec
            }
        } else {
            spec
        };
        self.src(code as u16, spec, 1, len)
    }

    fn sgpr(code: u32, spec: OperandSpec) -> Operand {
        Operand::new(OperandKind::Sgpr(sreg(code)), spec.dwords())
    }

    fn vgpr(index: u32, spec: OperandSpec) -> Operand {
        Operand::new(OperandKind::Vgpr(index as u8), spec.dwords())
    }

    /// A lane-mask SGPR operand.
    fn mask(&self, code: u32) -> Operand {
        Operand::new(OperandKind::Sgpr(sreg(code)), self.mask_dwords)
    }

    /// VCC as a lane mask.
    fn vcc(&self) -> Operand {
        Operand::new(OperandKind::Sgpr(VCC), self.mask_dwords)
    }

    /// An 8-bit VGPR field of a VOP1/VOP2/VOPC encoding: for a 16-bit operand the top bit selects
    /// the register's high half (recorded in `op_sel` bit `sel`).
    fn vgpr_field(field: u32, spec: OperandSpec, i: &mut Instruction, sel: u8) -> Operand {
        if is_16bit(spec) && field >= 128 {
            i.mods.op_sel |= 1 << sel;
            Self::vgpr(field & 0x7f, spec)
        } else {
            Self::vgpr(field, spec)
        }
    }

    fn sop1(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sop1, bits(w, 15, 8))?;
        let [dst, s0, ..] = self.operands(op);
        let mut len = 4;
        let mut i = Self::base(op, Format::Sop1, 4);
        if dst.kind != RegKind::None {
            i.dst = Self::sgpr(bits(w, 22, 16), dst);
        }
        match s0.kind {
            RegKind::None => {}
            RegKind::Imm => i.fields.imm = bits(w, 7, 0) as i32,
            _ => i.src[0] = self.ssrc(bits(w, 7, 0), s0, &mut len)?,
        }
        i.len = len;
        Ok(i)
    }

    fn sop2(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sop2, bits(w, 29, 23))?;
        let [dst, s0, s1, _] = self.operands(op);
        let mut len = 4;
        let mut i = Self::base(op, Format::Sop2, 4);
        i.dst = Self::sgpr(bits(w, 22, 16), dst);
        i.src[0] = self.ssrc(bits(w, 7, 0), s0, &mut len)?;
        i.src[1] = self.ssrc(bits(w, 15, 8), s1, &mut len)?;
        // gfx12's scalar FMAs with a constant K: K is the literal dword after the instruction
        // (shared with a literal source). Operands as LLVM prints them: `s_fmamk_f32 d, s0, K,
        // s1` (d = s0 * K + s1) and `s_fmaak_f32 d, s0, s1, K` (d = s0 * s1 + K).
        match op {
            Op::S_FMAMK_F32 => {
                i.src[2] = i.src[1];
                i.src[1] = self.kimm(1, &mut len)?;
            }
            Op::S_FMAAK_F32 => i.src[2] = self.kimm(1, &mut len)?,
            _ => {}
        }
        i.len = len;
        Ok(i)
    }

    fn sopc(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopc, bits(w, 22, 16))?;
        let [_, s0, s1, _] = self.operands(op);
        let mut len = 4;
        let mut i = Self::base(op, Format::Sopc, 4);
        i.src[0] = self.ssrc(bits(w, 7, 0), s0, &mut len)?;
        i.src[1] = self.ssrc(bits(w, 15, 8), s1, &mut len)?;
        i.len = len;
        Ok(i)
    }

    fn sopk(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopk, bits(w, 27, 23))?;
        let [dst, ..] = self.operands(op);
        let mut i = Self::base(op, Format::Sopk, 4);
        i.fields.imm = bits(w, 15, 0) as i32;
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Sgpr,
        };
        match op {
            Op::S_SETREG_IMM32_B32 => {
                let raw = self.word(1)?;
                i.src[0] = Operand::new(
                    OperandKind::Literal {
                        raw,
                        value: u64::from(raw),
                    },
                    1,
                );
                i.len = 8;
            }
            Op::S_CALL_B64 => i.dst = Self::sgpr(bits(w, 22, 16), OperandSpec { bits: 64, ..b32 }),
            _ => i.dst = Self::sgpr(bits(w, 22, 16), if dst.bits > 0 { dst } else { b32 }),
        }
        Ok(i)
    }

    fn sopp(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.sopp, bits(w, 22, 16))?;
        let mut i = Self::base(op, Format::Sopp, 4);
        i.fields.imm = bits(w, 15, 0) as i32;
        Ok(i)
    }

    fn smem(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let number = if self.gfx12 {
            bits(w, 18, 13)
        } else {
            bits(w, 25, 18)
        };
        let op = self.op(self.tables.smem, number)?;
        let [dst, sbase, _, _] = self.operands(op);
        let mut i = Self::base(op, Format::Smem, 8);
        let f = &mut i.fields;
        if self.gfx12 {
            f.nv = bit(w, 20);
            f.scope = bits(w, 22, 21) as u8;
            f.th = bits(w, 24, 23) as u8;
            f.imm = sign_extend(bits(w1, 23, 0), 24);
        } else {
            f.glc = bit(w, 14);
            f.dlc = bit(w, 13);
            f.imm = sign_extend(bits(w1, 20, 0), 21);
        }
        if dst.kind != RegKind::None {
            i.dst = Self::sgpr(bits(w, 12, 6), dst);
        }
        if sbase.kind != RegKind::None {
            i.src[0] = Self::sgpr(bits(w, 5, 0) << 1, sbase);
            i.src[1] = Operand::new(OperandKind::Sgpr(sreg(bits(w1, 31, 25))), 1);
        }
        Ok(i)
    }

    /// src0 of a VOP1/VOP2/VOPC encoding, with its DPP dword if any.
    fn vop_src0(&self, i: &mut Instruction, spec: OperandSpec) -> Result<(), DecodeError> {
        let code = bits(self.w0, 8, 0) as u16;
        if let Some(vgpr) = self.dpp(code, 1, i)? {
            i.src[0] = Self::vgpr_field(vgpr, spec, i, 0);
            i.len = 8;
            return Ok(());
        }
        let mut len = i.len;
        let o = if code >= 256 {
            Self::vgpr_field(u32::from(code - 256), spec, i, 0)
        } else {
            self.src(code, spec, 1, &mut len)?
        };
        i.src[0] = o;
        i.len = len;
        Ok(())
    }

    /// Reads the DPP dword at `at` if source code `code` asks for one; returns src0's VGPR field.
    fn dpp(&self, code: u16, at: usize, i: &mut Instruction) -> Result<Option<u32>, DecodeError> {
        match code {
            SRC_DPP16 => {
                let d = self.word(at)?;
                i.ext = Ext::Dpp16(Dpp16 {
                    ctrl: bits(d, 16, 8) as u16,
                    fetch_inactive: bit(d, 18),
                    bound_ctrl: bit(d, 19),
                    bank_mask: bits(d, 27, 24) as u8,
                    row_mask: bits(d, 31, 28) as u8,
                });
                if matches!(i.format, Format::Vop1 | Format::Vop2 | Format::Vopc) {
                    i.mods.neg = (bits(d, 20, 20) | bits(d, 22, 22) << 1) as u8;
                    i.mods.abs = (bits(d, 21, 21) | bits(d, 23, 23) << 1) as u8;
                }
                Ok(Some(bits(d, 7, 0)))
            }
            SRC_DPP8 | SRC_DPP8_FI => {
                let d = self.word(at)?;
                let mut lanes = [0u8; 8];
                for (k, l) in lanes.iter_mut().enumerate() {
                    *l = bits(d, 10 + 3 * k as u32, 8 + 3 * k as u32) as u8;
                }
                i.ext = Ext::Dpp8(Dpp8 {
                    lanes,
                    fetch_inactive: code == SRC_DPP8_FI,
                });
                Ok(Some(bits(d, 7, 0)))
            }
            _ => Ok(None),
        }
    }

    fn vop1(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vop1, bits(w, 16, 9))?;
        let [dst, s0, _, _] = self.operands(op);
        let mut i = Self::base(op, Format::Vop1, 4);
        match dst.kind {
            RegKind::Sgpr => i.dst = Self::sgpr(bits(w, 24, 17), dst),
            RegKind::None => {}
            _ => i.dst = Self::vgpr_field(bits(w, 24, 17), dst, &mut i, 3),
        }
        if s0.kind != RegKind::None {
            self.vop_src0(&mut i, s0)?;
        }
        Ok(i)
    }

    fn vop2(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vop2, bits(w, 30, 25))?;
        let [dst, s0, s1, _] = self.operands(op);
        let mut i = Self::base(op, Format::Vop2, 4);
        i.dst = Self::vgpr_field(bits(w, 24, 17), dst, &mut i, 3);
        i.src[1] = Self::vgpr_field(bits(w, 16, 9), s1, &mut i, 1);
        self.vop_src0(&mut i, s0)?;
        // K is the one literal dword after the instruction; a literal src0 is that same dword
        // (GFX10+ encodes one literal per instruction, however many operands read it).
        match op {
            Op::V_FMAMK_F32 | Op::V_FMAMK_F16 => {
                // vsrc1 is the addend: its 16-bit half moves with it to source 2.
                i.src[2] = i.src[1];
                i.src[1] = self.kimm(1, &mut i.len)?;
                i.mods.op_sel = i.mods.op_sel & !0b110 | (i.mods.op_sel & 0b10) << 1;
            }
            Op::V_FMAAK_F32 | Op::V_FMAAK_F16 => {
                i.src[2] = self.kimm(1, &mut i.len)?;
            }
            Op::V_CNDMASK_B32 => i.src[2] = self.vcc(),
            Op::V_ADD_CO_CI_U32 | Op::V_SUB_CO_CI_U32 | Op::V_SUBREV_CO_CI_U32 => {
                i.sdst = self.vcc();
                i.src[2] = self.vcc();
            }
            _ if is_tied_accumulator(op) => {
                // The accumulator is the destination, the same 16-bit half included.
                i.src[2] = i.dst;
                i.mods.op_sel |= (i.mods.op_sel >> 3 & 1) << 2;
            }
            _ => {}
        }
        Ok(i)
    }

    /// The K constant of FMAMK/FMAAK: a literal dword at `at`.
    fn kimm(&self, at: usize, len: &mut u8) -> Result<Operand, DecodeError> {
        let k = self.word(at)?;
        *len = (*len).max((at as u8 + 1) * 4);
        Ok(Operand::new(
            OperandKind::Literal {
                raw: k,
                value: u64::from(k),
            },
            1,
        ))
    }

    fn vopc(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let op = self.op(self.tables.vopc, bits(w, 24, 17))?;
        let [_, s0, s1, _] = self.operands(op);
        let mut i = Self::base(op, Format::Vopc, 4);
        if !is_cmpx(op) {
            i.dst = self.vcc();
        }
        i.src[1] = Self::vgpr_field(bits(w, 16, 9), s1, &mut i, 1);
        self.vop_src0(&mut i, s0)?;
        Ok(i)
    }

    fn vop3(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.vop3, bits(w, 25, 16))?;
        let info = op.info();
        let [dst, s0, s1, s2] = self.operands(op);
        let format = if info.vop3sd {
            Format::Vop3sd
        } else {
            Format::Vop3
        };
        let mut i = Self::base(op, format, 8);
        let vdst = bits(w, 7, 0);
        i.dst = if info.is_lane_mask(0) {
            if is_cmpx(op) {
                Operand::NONE
            } else {
                self.mask(vdst)
            }
        } else {
            match dst.kind {
                RegKind::Sgpr => Self::sgpr(vdst, dst),
                RegKind::None => Operand::NONE,
                _ => Self::vgpr(vdst, dst),
            }
        };
        if format == Format::Vop3sd {
            i.sdst = self.mask(bits(w, 14, 8));
        } else {
            i.mods.abs = bits(w, 10, 8) as u8;
            i.mods.op_sel = bits(w, 14, 11) as u8;
        }
        i.mods.clamp = bit(w, 15);
        i.mods.omod = bits(w1, 28, 27) as u8;
        i.mods.neg = bits(w1, 31, 29) as u8;
        self.vop3_sources(&mut i, w1, [s0, s1, s2])?;
        if is_tied_accumulator(op) && !i.src[2].is_some() {
            i.src[2] = i.dst;
        }
        Ok(i)
    }

    /// The three 9-bit sources of a VOP3/VOP3P encoding (with a DPP dword when src0 asks for one).
    fn vop3_sources(
        &self,
        i: &mut Instruction,
        w1: u32,
        specs: [OperandSpec; 3],
    ) -> Result<(), DecodeError> {
        let codes = [bits(w1, 8, 0), bits(w1, 17, 9), bits(w1, 26, 18)];
        let mut len = i.len;
        for k in 0..3 {
            if specs[k].kind == RegKind::None {
                continue;
            }
            if k == 0
                && let Some(vgpr) = self.dpp(codes[0] as u16, 2, i)?
            {
                i.src[0] = Self::vgpr(vgpr, specs[0]);
                len = 12;
                continue;
            }
            i.src[k] = if i.op.info().is_lane_mask(k + 1) {
                self.mask(codes[k])
            } else {
                self.src(codes[k] as u16, specs[k], 2, &mut len)?
            };
        }
        i.len = len;
        Ok(())
    }

    fn vop3p(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.vop3p, bits(w, 22, 16))?;
        let [dst, s0, s1, s2] = self.operands(op);
        let mut i = Self::base(op, Format::Vop3p, 8);
        if dst.kind != RegKind::None {
            i.dst = Self::vgpr(bits(w, 7, 0), dst);
        }
        i.mods.neg_hi = bits(w, 10, 8) as u8;
        i.mods.op_sel = bits(w, 13, 11) as u8;
        i.mods.op_sel_hi = (bits(w1, 28, 27) | bits(w, 14, 14) << 2) as u8;
        i.mods.clamp = bit(w, 15);
        i.mods.neg = bits(w1, 31, 29) as u8;
        self.vop3_sources(&mut i, w1, [s0, s1, s2])?;
        if is_tied_accumulator(op) && !i.src[2].is_some() {
            i.src[2] = i.dst;
        }
        if self.mask_dwords == 2 && op.name().starts_with("v_wmma_") {
            // Wave64 spreads the matrices over twice the lanes: C and D take half the registers,
            // and so do A and B on gfx12.
            let halve = |o: &mut Operand| {
                if let OperandKind::Vgpr(_) = o.kind {
                    o.dwords = (o.dwords / 2).max(1);
                }
            };
            halve(&mut i.dst);
            halve(&mut i.src[2]);
            if self.gfx12 {
                halve(&mut i.src[0]);
                halve(&mut i.src[1]);
            }
        }
        Ok(i)
    }

    fn vopd(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let opx = self.op(self.tables.vopdx, bits(w, 25, 22))?;
        let opy = self.op(self.tables.vopdy, bits(w, 21, 17))?;
        let mut len = 8;
        let vdstx = bits(w1, 31, 24);
        let vdsty = bits(w1, 23, 17) << 1 | ((vdstx & 1) ^ 1);
        let x = self.vopd_half(opx, vdstx, bits(w, 8, 0), bits(w, 16, 9), &mut len)?;
        let y = self.vopd_half(opy, vdsty, bits(w1, 8, 0), bits(w1, 16, 9), &mut len)?;
        let mut i = Self::base(opx, Format::Vopd, len);
        i.dst = x.dst;
        i.src = x.src;
        i.dual = Some(y);
        Ok(i)
    }

    /// One half of a VOPD instruction.
    fn vopd_half(
        &self,
        op: Op,
        vdst: u32,
        src0: u32,
        vsrc1: u32,
        len: &mut u8,
    ) -> Result<Dual, DecodeError> {
        let [dst, s0, s1, _] = self.operands(op);
        let mut d = Dual {
            op,
            dst: Self::vgpr(vdst, dst),
            src: [Operand::NONE; 3],
        };
        d.src[0] = self.src(src0 as u16, s0, 2, len)?;
        if op != Op::V_MOV_B32 {
            d.src[1] = Self::vgpr(vsrc1, s1);
        }
        match op {
            Op::V_FMAMK_F32 => {
                d.src[2] = d.src[1];
                d.src[1] = self.kimm(2, len)?;
            }
            Op::V_FMAAK_F32 => d.src[2] = self.kimm(2, len)?,
            Op::V_CNDMASK_B32 => d.src[2] = self.vcc(),
            _ if is_tied_accumulator(op) => d.src[2] = d.dst,
            _ => {}
        }
        Ok(d)
    }

    fn ds(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.ds, bits(w, 25, 18))?;
        let [dst, addr, data0, data1] = self.operands(op);
        let mut i = Self::base(op, Format::Ds, 8);
        i.fields.imm = bits(w, 7, 0) as i32;
        i.fields.offset1 = bits(w, 15, 8) as u8;
        i.fields.gds = !self.gfx12 && bit(w, 17);
        if dst.kind != RegKind::None {
            i.dst = Self::vgpr(bits(w1, 31, 24), dst);
        }
        if addr.kind != RegKind::None {
            i.src[0] = Self::vgpr(bits(w1, 7, 0), addr);
        }
        if data0.kind != RegKind::None {
            i.src[1] = Self::vgpr(bits(w1, 15, 8), data0);
        }
        if data1.kind != RegKind::None {
            i.src[2] = Self::vgpr(bits(w1, 23, 16), data1);
        }
        Ok(i)
    }

    /// Operands of a FLAT/GLOBAL/SCRATCH instruction from its register fields.
    fn flat_operands(&self, i: &mut Instruction, vaddr: u32, data: u32, saddr: u32, vdst: u32) {
        let [dst, _, data_spec, _] = self.operands(i.op);
        let saddr_off = saddr == NULL_CODE || saddr == 0x7f;
        let addr_dwords = match i.format {
            Format::Flat => 2,
            Format::Global if saddr_off => 2,
            _ => 1,
        };
        if i.format != Format::Scratch || i.fields.sve {
            i.src[0] = Operand::new(OperandKind::Vgpr(vaddr as u8), addr_dwords);
        }
        if data_spec.kind != RegKind::None {
            i.src[1] = Self::vgpr(data, data_spec);
        }
        if i.format != Format::Flat && !saddr_off {
            let dwords = if i.format == Format::Global { 2 } else { 1 };
            i.src[2] = Operand::new(OperandKind::Sgpr(sreg(saddr)), dwords);
        }
        let name = i.op.name();
        let returns = !name.contains("_atomic_") || self.atomic_returns(&i.fields);
        if dst.kind != RegKind::None && returns {
            i.dst = Self::vgpr(vdst, dst);
        }
    }

    /// Whether an atomic returns the pre-op value (gfx11: glc; gfx12: th bit 0).
    fn atomic_returns(&self, f: &Fields) -> bool {
        if self.gfx12 { f.th & 1 == 1 } else { f.glc }
    }

    fn flat11(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let (format, table) = match bits(w, 17, 16) {
            0 => (Format::Flat, self.tables.flat),
            1 => (Format::Scratch, self.tables.scratch),
            2 => (Format::Global, self.tables.global),
            _ => return Err(self.unknown()),
        };
        let op = self.op(table, bits(w, 24, 18))?;
        let mut i = Self::base(op, format, 8);
        let f = &mut i.fields;
        f.dlc = bit(w, 13);
        f.glc = bit(w, 14);
        f.slc = bit(w, 15);
        f.sve = bit(w1, 23);
        f.imm = if format == Format::Flat {
            bits(w, 11, 0) as i32
        } else {
            sign_extend(bits(w, 12, 0), 13)
        };
        self.flat_operands(
            &mut i,
            bits(w1, 7, 0),
            bits(w1, 15, 8),
            bits(w1, 22, 16),
            bits(w1, 31, 24),
        );
        Ok(i)
    }

    fn flat12(&self, format: Format) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let w2 = self.word(2)?;
        let table = match format {
            Format::Flat => self.tables.flat,
            Format::Scratch => self.tables.scratch,
            _ => self.tables.global,
        };
        let op = self.op(table, bits(w, 21, 14))?;
        let mut i = Self::base(op, format, 12);
        let f = &mut i.fields;
        f.nv = bit(w, 7);
        f.sve = bit(w1, 17);
        f.scope = bits(w1, 19, 18) as u8;
        f.th = bits(w1, 22, 20) as u8;
        f.imm = sign_extend(bits(w2, 31, 8), 24);
        self.flat_operands(
            &mut i,
            bits(w2, 7, 0),
            bits(w1, 30, 23),
            bits(w, 6, 0),
            bits(w1, 7, 0),
        );
        Ok(i)
    }

    /// Operands of a buffer instruction from its register fields.
    fn buffer_operands(
        &self,
        i: &mut Instruction,
        vaddr: u32,
        vdata: u32,
        rsrc: u32,
        soffset: Operand,
    ) {
        let [vdata_spec, ..] = self.operands(i.op);
        let addr_dwords = u8::from(i.fields.offen) + u8::from(i.fields.idxen);
        if addr_dwords > 0 {
            i.src[0] = Operand::new(OperandKind::Vgpr(vaddr as u8), addr_dwords);
        }
        if vdata_spec.kind != RegKind::None {
            i.dst = Self::vgpr(vdata, vdata_spec);
            i.src[1] = Operand::new(OperandKind::Sgpr(rsrc as u8), 4);
            i.src[2] = soffset;
        }
    }

    fn mubuf11(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let op = self.op(self.tables.mubuf, bits(w, 25, 18))?;
        let mut i = Self::base(op, Format::Mubuf, 8);
        let f = &mut i.fields;
        f.imm = bits(w, 11, 0) as i32;
        f.slc = bit(w, 12);
        f.dlc = bit(w, 13);
        f.glc = bit(w, 14);
        f.tfe = bit(w1, 21);
        f.offen = bit(w1, 22);
        f.idxen = bit(w1, 23);
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Src,
        };
        let mut len = 8;
        let soffset = self.src(bits(w1, 31, 24) as u16, b32, 2, &mut len)?;
        self.buffer_operands(
            &mut i,
            bits(w1, 7, 0),
            bits(w1, 15, 8),
            bits(w1, 20, 16) << 2,
            soffset,
        );
        Ok(i)
    }

    fn vbuffer12(&self) -> Result<Instruction, DecodeError> {
        let w = self.w0;
        let w1 = self.word(1)?;
        let w2 = self.word(2)?;
        let op = self.op(self.tables.mubuf, bits(w, 21, 14))?;
        let mut i = Self::base(op, Format::Mubuf, 12);
        let f = &mut i.fields;
        f.nv = bit(w, 7);
        f.tfe = bit(w, 22);
        f.scope = bits(w1, 19, 18) as u8;
        f.th = bits(w1, 22, 20) as u8;
        f.offen = bit(w1, 30);
        f.idxen = bit(w1, 31);
        f.imm = sign_extend(bits(w2, 31, 8), 24);
        let soffset = Operand::new(OperandKind::Sgpr(sreg(bits(w, 6, 0))), 1);
        self.buffer_operands(
            &mut i,
            bits(w2, 7, 0),
            bits(w1, 7, 0),
            bits(w1, 17, 9),
            soffset,
        );
        Ok(i)
    }
}

/// Whether an operand of this shape is a 16-bit register operand (a VGPR half).
pub(crate) fn is_16bit(spec: OperandSpec) -> bool {
    spec.bits == 16
        && !matches!(
            spec.ty,
            NumType::PackedFloat | NumType::PackedInt | NumType::PackedBFloat
        )
}
