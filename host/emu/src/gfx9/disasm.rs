//! GFX9 disassembler: prints an [`Instruction`] the way `llvm-objdump -d --mcpu=<gfx>` does
//! (mnemonic and operands; the encoding comment is not produced).

use super::decode::is_tied_accumulator;
use super::inst::{Dpp, Ext, Format, Instruction, Operand, OperandKind, Sdwa, Special};
use super::opcodes::Op;
use super::tables::{NumType, OperandSpec};
use crate::{DecodedInstruction, Target};
use std::fmt::{self, Write};

/// Formats an instruction as LLVM's disassembler prints it for `target`. Accepts the instructions
/// of either family (trace events carry a [`DecodedInstruction`]); see [`crate::disassemble`].
pub fn disassemble<'a>(target: Target, inst: impl Into<DecodedInstruction<'a>>) -> String {
    crate::disassemble(target, inst)
}

/// Formats a GFX9 `inst` as LLVM's disassembler prints it for `target`.
pub(crate) fn print(target: Target, inst: &Instruction) -> String {
    let mut s = String::with_capacity(48);
    let _ = Printer {
        target,
        inst,
        out: &mut s,
    }
    .print();
    s
}

struct Printer<'a> {
    target: Target,
    inst: &'a Instruction,
    out: &'a mut String,
}

/// Name of scalar register file entry `i` when it stands alone.
fn sgpr_name(i: u8) -> String {
    match i {
        0..=101 => format!("s{i}"),
        102 => "flat_scratch_lo".into(),
        103 => "flat_scratch_hi".into(),
        104 => "xnack_mask_lo".into(),
        105 => "xnack_mask_hi".into(),
        106 => "vcc_lo".into(),
        107 => "vcc_hi".into(),
        108..=123 => format!("ttmp{}", i - 108),
        124 => "m0".into(),
        125 => "null".into(),
        126 => "exec_lo".into(),
        127 => "exec_hi".into(),
        _ => format!("s{i}"),
    }
}

/// Name of `n` consecutive scalar registers starting at `i`.
pub(crate) fn sgpr_range(i: u8, n: u8) -> String {
    if n <= 1 {
        return sgpr_name(i);
    }
    match (i, n) {
        (102, 2) => "flat_scratch".into(),
        (104, 2) => "xnack_mask".into(),
        (106, 2) => "vcc".into(),
        (126, 2) => "exec".into(),
        (108..=123, _) => format!("ttmp[{}:{}]", i - 108, i - 108 + n - 1),
        _ => format!("s[{}:{}]", i, u16::from(i) + u16::from(n) - 1),
    }
}

fn reg_range(prefix: char, i: u8, n: u8) -> String {
    if n <= 1 {
        format!("{prefix}{i}")
    } else {
        format!("{prefix}[{}:{}]", i, u16::from(i) + u16::from(n) - 1)
    }
}

fn special_name(s: Special) -> String {
    match s {
        Special::FlatScratchBaseLo => "src_flat_scratch_base_lo".into(),
        Special::FlatScratchBaseHi => "src_flat_scratch_base_hi".into(),
        Special::SharedBase => "src_shared_base".into(),
        Special::SharedLimit => "src_shared_limit".into(),
        Special::PrivateBase => "src_private_base".into(),
        Special::PrivateLimit => "src_private_limit".into(),
        Special::PopsExitingWaveId => "src_pops_exiting_wave_id".into(),
        Special::Vccz => "src_vccz".into(),
        Special::Execz => "src_execz".into(),
        Special::Scc => "src_scc".into(),
        Special::LdsDirect => "src_lds_direct".into(),
        Special::Reserved(c) => format!("<reserved {c}>"),
    }
}

pub(crate) fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// Prints a 32-bit immediate the way LLVM does: small integers in decimal, the float inline
/// constants by name, anything else in hex.
pub(crate) fn imm32(v: u32) -> String {
    let s = v as i32;
    if (-16..=64).contains(&s) {
        return s.to_string();
    }
    match v {
        0x3f00_0000 => "0.5".into(),
        0xbf00_0000 => "-0.5".into(),
        0x3f80_0000 => "1.0".into(),
        0xbf80_0000 => "-1.0".into(),
        0x4000_0000 => "2.0".into(),
        0xc000_0000 => "-2.0".into(),
        0x4080_0000 => "4.0".into(),
        0xc080_0000 => "-4.0".into(),
        0x3e22_f983 => "0.15915494".into(),
        _ => hex(u64::from(v)),
    }
}

fn imm16_float(v: u16) -> Option<&'static str> {
    Some(match v {
        0x3800 => "0.5",
        0xb800 => "-0.5",
        0x3c00 => "1.0",
        0xbc00 => "-1.0",
        0x4000 => "2.0",
        0xc000 => "-2.0",
        0x4400 => "4.0",
        0xc400 => "-4.0",
        0x3118 => "0.15915494",
        _ => return None,
    })
}

fn imm64(v: u64, float: bool) -> String {
    let s = v as i64;
    if (-16..=64).contains(&s) {
        return s.to_string();
    }
    match v {
        0x3fe0_0000_0000_0000 => "0.5".into(),
        0xbfe0_0000_0000_0000 => "-0.5".into(),
        0x3ff0_0000_0000_0000 => "1.0".into(),
        0xbff0_0000_0000_0000 => "-1.0".into(),
        0x4000_0000_0000_0000 => "2.0".into(),
        0xc000_0000_0000_0000 => "-2.0".into(),
        0x4010_0000_0000_0000 => "4.0".into(),
        0xc010_0000_0000_0000 => "-4.0".into(),
        0x3fc4_5f30_6dc9_c882 => "0.15915494309189532".into(),
        _ if float => hex(v >> 32),
        _ => hex(v & 0xffff_ffff),
    }
}

/// How a constant operand is to be printed.
#[derive(Clone, Copy)]
pub(crate) struct ConstCtx {
    pub(crate) spec: OperandSpec,
    /// The literal dword, if the constant was encoded as a literal.
    pub(crate) literal: Option<u32>,
    /// The operand is the K constant of v_madmk/v_madak/v_fmamk/v_fmaak (always printed in hex).
    pub(crate) kimm: bool,
}

/// The K constant of v_madmk/v_madak/v_fmamk/v_fmaak as LLVM prints it: a value that is also an
/// inline constant's source code is shown as that constant's value.
fn kimm(raw: u32, half: bool) -> String {
    let v: u64 = match raw {
        128..=192 => u64::from(raw - 128),
        193..=208 => (192 - i64::from(raw)) as u64,
        240..=248 => {
            let f32s = [
                0x3f00_0000u32,
                0xbf00_0000,
                0x3f80_0000,
                0xbf80_0000,
                0x4000_0000,
                0xc000_0000,
                0x4080_0000,
                0xc080_0000,
                0x3e22_f983,
            ];
            let k = (raw - 240) as usize;
            return hex(u64::from(f32s[k]));
        }
        _ => return hex(u64::from(raw)),
    };
    hex(if half { v & 0xffff } else { v & 0xffff_ffff })
}

/// Whether LLVM's text for a constant is one an inline constant could produce.
fn looks_inline(text: &str) -> bool {
    !text.starts_with("0x")
}

/// Prints a constant operand (inline or literal).
pub(crate) fn constant(c: ConstCtx, value: u64) -> String {
    let spec = c.spec;
    if c.kimm {
        return kimm(c.literal.unwrap_or(value as u32), spec.bits == 16);
    }
    let packed16 = matches!(
        spec.ty,
        NumType::PackedFloat | NumType::PackedInt | NumType::PackedBFloat
    );
    if packed16 {
        return match c.literal {
            Some(raw) if raw <= 0xffff && looks_inline(&imm16(raw as u16, false)) => {
                format!("lit({})", hex(u64::from(raw)))
            }
            Some(raw) => hex(u64::from(raw)),
            None => {
                let v = value as u32;
                let lo = v as u16;
                if let Some(name) = imm16_float(lo).filter(|_| v >> 16 == 0) {
                    name.into()
                } else {
                    imm32(v)
                }
            }
        };
    }
    let float = matches!(spec.ty, NumType::Float | NumType::BFloat);
    if spec.bits == 16 {
        if let Some(raw) = c.literal {
            let text = imm16(raw as u16, float);
            return if looks_inline(&text) {
                format!("lit({})", hex(u64::from(raw)))
            } else {
                text
            };
        }
        return imm16(value as u16, float);
    }
    if spec.bits == 64 && !matches!(spec.ty, NumType::PackedFloat32) {
        let text = imm64(value, float);
        return match c.literal {
            Some(raw) if !float && looks_inline(&text) => format!("lit({})", hex(u64::from(raw))),
            _ => text,
        };
    }
    let text = imm32(value as u32);
    match c.literal {
        Some(raw) if looks_inline(&text) => format!("lit({})", hex(u64::from(raw))),
        _ => text,
    }
}

fn imm16(v: u16, float: bool) -> String {
    let s = v as i16;
    if (-16..=64).contains(&s) {
        return s.to_string();
    }
    if let Some(name) = imm16_float(v).filter(|_| float) {
        return name.into();
    }
    hex(u64::from(v))
}

/// A 16-bit immediate field printed the way LLVM prints plain immediates: small values in decimal.
pub(crate) fn imm_field(v: u16) -> String {
    if v <= 64 {
        v.to_string()
    } else {
        hex(u64::from(v))
    }
}

impl Printer<'_> {
    fn print(mut self) -> fmt::Result {
        let i = self.inst;
        match i.format {
            Format::Sop1 | Format::Sop2 | Format::Sopc => self.salu(),
            Format::Sopk => self.sopk(),
            Format::Sopp => self.sopp(),
            Format::Smem => self.smem(),
            Format::Vop1
            | Format::Vop2
            | Format::Vopc
            | Format::Vop3
            | Format::Vop3b
            | Format::Vop3p => self.valu(),
            Format::Mfma => self.mfma(),
            Format::Ds => self.ds(),
            Format::Flat | Format::Global | Format::Scratch => self.flat(),
            Format::Mubuf | Format::Mtbuf => self.buffer(),
            Format::Mimg => self.mimg(),
        }
    }

    fn spec(&self, slot: usize) -> OperandSpec {
        self.inst.op.info().operands[slot]
    }

    fn operand(&self, o: &Operand, spec: OperandSpec) -> String {
        let salu = matches!(
            self.inst.format,
            Format::Sop1 | Format::Sop2 | Format::Sopc | Format::Sopk | Format::Smem
        );
        let spec = if salu && spec.bits < 32 {
            OperandSpec {
                bits: 32,
                ty: NumType::Int,
                ..spec
            }
        } else {
            spec
        };
        let kimm = matches!(
            self.inst.op,
            Op::V_FMAMK_F32
                | Op::V_FMAAK_F32
                | Op::V_MADMK_F32
                | Op::V_MADAK_F32
                | Op::V_MADMK_F16
                | Op::V_MADAK_F16
        );
        match o.kind {
            OperandKind::None => String::new(),
            OperandKind::Sgpr(r) => sgpr_range(r, o.dwords),
            OperandKind::Vgpr(r) => reg_range('v', r, o.dwords),
            OperandKind::Agpr(r) => reg_range('a', r, o.dwords),
            OperandKind::Inline { value, .. } => constant(
                ConstCtx {
                    spec,
                    literal: None,
                    kimm: false,
                },
                value,
            ),
            OperandKind::Literal { raw, value } => {
                let spec = if kimm {
                    let half = matches!(self.inst.op, Op::V_MADMK_F16 | Op::V_MADAK_F16);
                    OperandSpec {
                        bits: if half { 16 } else { 32 },
                        ty: NumType::Float,
                        ..spec
                    }
                } else {
                    spec
                };
                constant(
                    ConstCtx {
                        spec,
                        literal: Some(raw),
                        kimm,
                    },
                    value,
                )
            }
            OperandKind::Special(s) => special_name(s),
        }
    }

    fn list(&mut self, mnemonic: &str, operands: &[String]) -> fmt::Result {
        self.out.push_str(mnemonic);
        let mut first = true;
        for o in operands.iter().filter(|o| !o.is_empty()) {
            self.out.push_str(if first { " " } else { ", " });
            self.out.push_str(o);
            first = false;
        }
        Ok(())
    }

    fn salu(&mut self) -> fmt::Result {
        let i = self.inst;
        let mut ops = Vec::new();
        if !matches!(i.op, Op::S_CBRANCH_G_FORK | Op::S_RFE_RESTORE_B64) {
            ops.push(self.operand(&i.dst, self.spec(0)));
        }
        ops.push(self.operand(&i.src[0], self.spec(1)));
        if i.op == Op::S_SET_GPR_IDX_ON {
            ops.push(gpr_idx_mode((i.fields.imm >> 8) as u16));
        } else {
            ops.push(self.operand(&i.src[1], self.spec(2)));
        }
        self.list(i.op.name(), &ops)
    }

    fn sopk(&mut self) -> fmt::Result {
        let i = self.inst;
        let imm = i.fields.imm as u32 as u16;
        let name = i.op.name();
        match i.op {
            Op::S_GETREG_B32 => {
                let d = self.operand(&i.dst, self.spec(0));
                self.list(name, &[d, hwreg(self.target, imm)])
            }
            Op::S_SETREG_B32 => {
                let d = self.operand(&i.dst, self.spec(0));
                self.list(name, &[hwreg(self.target, imm), d])
            }
            Op::S_SETREG_IMM32_B32 => {
                let lit = match i.src[0].kind {
                    OperandKind::Literal { raw, .. } => imm32(raw),
                    _ => String::new(),
                };
                self.list(name, &[hwreg(self.target, imm), lit])
            }
            Op::S_CALL_B64 | Op::S_CBRANCH_I_FORK => {
                let d = self.operand(
                    &i.dst,
                    OperandSpec {
                        bits: 64,
                        ..self.spec(0)
                    },
                );
                self.list(name, &[d, imm.to_string()])
            }
            _ => {
                let d = self.operand(&i.dst, self.spec(0));
                self.list(name, &[d, hex(u64::from(imm))])
            }
        }
    }

    fn sopp(&mut self) -> fmt::Result {
        let i = self.inst;
        let imm = i.fields.imm as u32 as u16;
        let name = i.op.name();
        let arg = match i.op {
            Op::S_ENDPGM
            | Op::S_BARRIER
            | Op::S_WAKEUP
            | Op::S_ICACHE_INV
            | Op::S_TTRACEDATA
            | Op::S_ENDPGM_SAVED
            | Op::S_SET_GPR_IDX_OFF
            | Op::S_ENDPGM_ORDERED_PS_DONE => {
                if imm == 0 {
                    String::new()
                } else {
                    imm.to_string()
                }
            }
            Op::S_WAITCNT => waitcnt(imm),
            Op::S_SENDMSG | Op::S_SENDMSGHALT => sendmsg(imm),
            Op::S_SET_GPR_IDX_MODE => gpr_idx_mode(imm),
            Op::S_TRAP => imm_field(imm),
            Op::S_BRANCH
            | Op::S_CBRANCH_SCC0
            | Op::S_CBRANCH_SCC1
            | Op::S_CBRANCH_VCCZ
            | Op::S_CBRANCH_VCCNZ
            | Op::S_CBRANCH_EXECZ
            | Op::S_CBRANCH_EXECNZ
            | Op::S_CBRANCH_CDBGSYS
            | Op::S_CBRANCH_CDBGUSER
            | Op::S_CBRANCH_CDBGSYS_OR_USER
            | Op::S_CBRANCH_CDBGSYS_AND_USER => imm.to_string(),
            _ => imm_field(imm),
        };
        self.list(name, &[arg])
    }

    fn smem(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let f = &i.fields;
        let spec = self.spec(0);
        if spec.kind == super::tables::RegKind::None
            && self.spec(1).kind == super::tables::RegKind::None
        {
            return self.list(name, &[]);
        }
        if self.spec(1).kind == super::tables::RegKind::None {
            let d = self.operand(&i.dst, spec);
            return self.list(name, &[d]);
        }
        let probe = matches!(i.op, Op::S_ATC_PROBE | Op::S_ATC_PROBE_BUFFER);
        let first = match i.dst.kind {
            OperandKind::Sgpr(r) if probe => imm_field(u16::from(r)),
            _ => self.operand(&i.dst, spec),
        };
        // The 21-bit offset is signed, except on the buffer forms (unsigned, as LLVM prints).
        let offset = if name.starts_with("s_buffer_") || f.imm >= 0 {
            hex(u64::from(f.imm as u32 & 0x1f_ffff))
        } else {
            format!("-{}", hex(u64::from(f.imm.unsigned_abs())))
        };
        let mut ops = vec![first, self.operand(&i.src[0], self.spec(1))];
        if i.src[1].is_some() {
            ops.push(self.operand(&i.src[1], self.spec(2)));
        } else if f.smem_imm {
            ops.push(offset.clone());
        }
        self.list(name, &ops)?;
        if f.soffset_en && f.smem_imm {
            write!(self.out, " offset:{offset}")?;
        }
        let discard = matches!(i.op, Op::S_DCACHE_DISCARD | Op::S_DCACHE_DISCARD_X2);
        if f.glc && !probe && !discard {
            self.out.push_str(" glc");
        }
        if f.nv {
            self.out.push_str(" nv");
        }
        Ok(())
    }

    /// Source `k` of a VALU instruction with its float (abs/neg) or SDWA (sext) modifiers.
    fn valu_src(&self, k: usize) -> String {
        let i = self.inst;
        let spec = self.spec(k + 1);
        let mut s = self.operand(&i.src[k], spec);
        let abs = i.mods.abs >> k & 1 == 1;
        let neg = i.mods.neg >> k & 1 == 1;
        if let (Ext::Sdwa(sdwa), 0..=1) = (i.ext, k) {
            let sext = if k == 0 {
                sdwa.src0_sext
            } else {
                sdwa.src1_sext
            };
            if sext {
                s = format!("sext({s})");
            }
        }
        let mix = matches!(
            i.op,
            Op::V_FMA_MIX_F32 | Op::V_FMA_MIXLO_F16 | Op::V_FMA_MIXHI_F16
        );
        let (abs, neg) = if mix {
            (i.mods.neg_hi >> k & 1 == 1, neg)
        } else if i.format == Format::Vop3p {
            return s;
        } else if (is_float(spec.ty) && !(is_packed(spec.ty) && matches!(i.ext, Ext::Sdwa(_))))
            || i.op == Op::V_CNDMASK_B32
        {
            (abs, neg)
        } else {
            (false, false)
        };
        let constant = matches!(
            i.src[k].kind,
            OperandKind::Inline { .. } | OperandKind::Literal { .. }
        );
        if abs {
            s = format!("|{s}|");
        }
        if neg {
            s = if constant && !abs {
                format!("neg({s})")
            } else {
                format!("-{s}")
            };
        }
        s
    }

    fn valu(&mut self) -> fmt::Result {
        let i = self.inst;
        let info = i.op.info();
        let mut name = info.name.to_string();
        match i.ext {
            Ext::Dpp(_) => name.push_str("_dpp"),
            Ext::Sdwa(_) => name.push_str("_sdwa"),
            Ext::None if info.suffixed => name.push_str(
                if matches!(i.format, Format::Vop1 | Format::Vop2 | Format::Vopc) {
                    "_e32"
                } else {
                    "_e64"
                },
            ),
            Ext::None => {}
        }
        let mut ops = Vec::new();
        if i.dst.is_some() {
            ops.push(self.operand(&i.dst, self.spec(0)));
        }
        if i.sdst.is_some() {
            ops.push(self.operand(
                &i.sdst,
                OperandSpec {
                    bits: 64,
                    ..self.spec(0)
                },
            ));
        }
        let tied = is_tied_accumulator(i.op);
        let nsrc = i
            .src
            .iter()
            .enumerate()
            .filter(|(k, o)| o.is_some() && !(tied && *k == 2))
            .count();
        for k in 0..3 {
            if !i.src[k].is_some() || (tied && k == 2) {
                continue;
            }
            ops.push(self.valu_src(k));
        }
        self.list(&name, &ops)?;
        match i.ext {
            Ext::Dpp(dpp) => self.dpp(dpp),
            Ext::Sdwa(sdwa) => self.sdwa(sdwa),
            Ext::None if matches!(i.op, Op::V_BITOP3_B16 | Op::V_BITOP3_B32) => {
                let m = i.mods;
                let ttbl = u16::from(m.neg) | u16::from(m.abs) << 3 | u16::from(m.omod) << 6;
                if ttbl != 0 {
                    write!(
                        self.out,
                        " bitop3:{}",
                        if ttbl < 10 {
                            ttbl.to_string()
                        } else {
                            hex(u64::from(ttbl))
                        }
                    )?;
                }
                if m.op_sel != 0 && has_op_sel(i.op) {
                    let list = (m.op_sel & 7) | (m.op_sel >> 3 & 1) << 3;
                    write!(self.out, " op_sel:{}", bitlist(list, 4))?;
                }
                Ok(())
            }
            Ext::None
                if matches!(i.op, Op::V_PERMLANE16_SWAP_B32 | Op::V_PERMLANE32_SWAP_B32)
                    && i.format == Format::Vop3 =>
            {
                if i.mods.op_sel & 2 != 0 {
                    self.out.push_str(" bound_ctrl:1");
                }
                if i.mods.op_sel & 1 != 0 {
                    self.out.push_str(" fi:1");
                }
                Ok(())
            }
            Ext::None => self.vop3_mods(nsrc),
        }
    }

    fn vop3_mods(&mut self, nsrc: usize) -> fmt::Result {
        let i = self.inst;
        let m = i.mods;
        if i.format == Format::Vop3p {
            let mix = matches!(
                i.op,
                Op::V_FMA_MIX_F32 | Op::V_FMA_MIXLO_F16 | Op::V_FMA_MIXHI_F16
            );
            let defaults_hi = if mix { 0 } else { (1u8 << nsrc) - 1 };
            let name = i.op.name();
            let no_sel = name.starts_with("v_dot4") || name.starts_with("v_dot8");
            if !no_sel && m.op_sel & ((1 << nsrc) - 1) != 0 {
                write!(self.out, " op_sel:{}", bitlist(m.op_sel, nsrc))?;
            }
            if !no_sel && m.op_sel_hi & ((1 << nsrc) - 1) != defaults_hi {
                write!(self.out, " op_sel_hi:{}", bitlist(m.op_sel_hi, nsrc))?;
            }
            if !mix && m.neg & ((1 << nsrc) - 1) != 0 {
                write!(self.out, " neg_lo:{}", bitlist(m.neg, nsrc))?;
            }
            if !mix && m.neg_hi & ((1 << nsrc) - 1) != 0 {
                write!(self.out, " neg_hi:{}", bitlist(m.neg_hi, nsrc))?;
            }
            if m.clamp {
                self.out.push_str(" clamp");
            }
            return Ok(());
        }
        if matches!(i.format, Format::Vop3 | Format::Vop3b) {
            if m.op_sel != 0 && has_op_sel(i.op) {
                let n = if tied_scale_conversion(i.op) {
                    nsrc.max(3)
                } else {
                    nsrc
                };
                let list = (m.op_sel & ((1 << n) - 1)) | (m.op_sel >> 3 & 1) << n;
                write!(self.out, " op_sel:{}", bitlist(list, n + 1))?;
            }
            if m.clamp {
                self.out.push_str(" clamp");
            }
            match m.omod {
                1 => self.out.push_str(" mul:2"),
                2 => self.out.push_str(" mul:4"),
                3 => self.out.push_str(" div:2"),
                _ => {}
            }
        }
        Ok(())
    }

    fn dpp(&mut self, dpp: Dpp) -> fmt::Result {
        let c = dpp.ctrl;
        let ctrl = match c {
            0x000..=0x0ff => format!(
                "quad_perm:[{},{},{},{}]",
                c & 3,
                c >> 2 & 3,
                c >> 4 & 3,
                c >> 6 & 3
            ),
            0x101..=0x10f => format!("row_shl:{}", c & 0xf),
            0x111..=0x11f => format!("row_shr:{}", c & 0xf),
            0x121..=0x12f => format!("row_ror:{}", c & 0xf),
            0x130 => "wave_shl:1".into(),
            0x134 => "wave_rol:1".into(),
            0x138 => "wave_shr:1".into(),
            0x13c => "wave_ror:1".into(),
            0x140 => "row_mirror".into(),
            0x141 => "row_half_mirror".into(),
            0x142 => "row_bcast:15".into(),
            0x143 => "row_bcast:31".into(),
            0x150..=0x15f => format!("row_newbcast:{}", c & 0xf),
            _ => format!("<invalid dpp_ctrl {c:#x}>"),
        };
        write!(
            self.out,
            " {ctrl} row_mask:{:#x} bank_mask:{:#x}",
            dpp.row_mask, dpp.bank_mask
        )?;
        if dpp.bound_ctrl {
            self.out.push_str(" bound_ctrl:1");
        }
        Ok(())
    }

    fn sdwa(&mut self, sdwa: Sdwa) -> fmt::Result {
        let i = self.inst;
        if i.mods.clamp {
            self.out.push_str(" clamp");
        }
        match i.mods.omod {
            1 => self.out.push_str(" mul:2"),
            2 => self.out.push_str(" mul:4"),
            3 => self.out.push_str(" div:2"),
            _ => {}
        }
        let fp8_cvt = matches!(
            i.op,
            Op::V_CVT_F32_FP8 | Op::V_CVT_F32_BF8 | Op::V_CVT_PK_F32_FP8 | Op::V_CVT_PK_F32_BF8
        );
        if i.format != Format::Vopc && !fp8_cvt {
            write!(
                self.out,
                " dst_sel:{} dst_unused:{}",
                sel_name(sdwa.dst_sel),
                unused_name(sdwa.dst_unused)
            )?;
        }
        write!(self.out, " src0_sel:{}", sel_name(sdwa.src0_sel))?;
        if i.format != Format::Vop1 {
            write!(self.out, " src1_sel:{}", sel_name(sdwa.src1_sel))?;
        }
        Ok(())
    }

    fn mfma(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let mut ops = vec![self.operand(&i.dst, self.spec(0))];
        for k in 0..3 {
            if i.src[k].is_some() {
                ops.push(self.operand(&i.src[k], self.spec(k + 1)));
            }
        }
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: super::tables::RegKind::Src,
        };
        for s in &i.scale {
            if s.is_some() {
                ops.push(self.operand(s, b32));
            }
        }
        self.list(name, &ops)?;
        let f = &i.fields;
        if i.scale[0].is_some() {
            if i.mods.op_sel != 0 {
                write!(self.out, " op_sel:{}", bitlist(i.mods.op_sel, 3))?;
            }
            write!(self.out, " op_sel_hi:{}", bitlist(i.mods.op_sel_hi, 3))?;
        }
        if f.cbsz != 0 {
            write!(self.out, " cbsz:{}", f.cbsz)?;
        }
        if f.abid != 0 && !i.scale[0].is_some() {
            write!(self.out, " abid:{}", f.abid)?;
        }
        if f.blgp != 0 {
            if self.target.sc_bits() && name.starts_with("v_mfma_f64") {
                write!(self.out, " neg:{}", bitlist(f.blgp, 3))?;
            } else {
                write!(self.out, " blgp:{}", f.blgp)?;
            }
        }
        Ok(())
    }

    fn cache_bits(&mut self) {
        let mut f = self.inst.fields;
        // gfx90a's buffer_wbl2 has no cache-policy operand (llvm-objdump prints none of its
        // bits); its invalidations print without slc.
        if self.inst.op == Op::BUFFER_WBL2 && !self.target.sc_bits() {
            return;
        }
        if matches!(
            self.inst.op,
            Op::BUFFER_WBL2
                | Op::BUFFER_INV
                | Op::BUFFER_INVL2
                | Op::BUFFER_WBINVL1
                | Op::BUFFER_WBINVL1_VOL
        ) {
            f.slc = false;
        }
        if self.target.sc_bits() {
            if f.glc {
                self.out.push_str(" sc0");
            }
            if f.slc {
                self.out.push_str(" nt");
            }
            if f.scc {
                self.out.push_str(" sc1");
            }
        } else {
            if f.glc {
                self.out.push_str(" glc");
            }
            if f.slc {
                self.out.push_str(" slc");
            }
            if f.scc {
                self.out.push_str(" scc");
            }
        }
    }

    fn ds(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let mut ops = Vec::new();
        if i.dst.is_some() {
            ops.push(self.operand(&i.dst, self.spec(0)));
        }
        for k in 0..3 {
            if i.src[k].is_some() {
                ops.push(self.operand(&i.src[k], self.spec(k + 1)));
            }
        }
        self.list(name, &ops)?;
        let f = &i.fields;
        let two_offsets = ["ds_read2", "ds_write2", "ds_wrxchg2"]
            .iter()
            .any(|p| name.starts_with(p));
        if two_offsets {
            if f.imm != 0 {
                write!(self.out, " offset0:{}", f.imm)?;
            }
            if f.offset1 != 0 {
                write!(self.out, " offset1:{}", f.offset1)?;
            }
        } else {
            let off = (f.imm as u32) | u32::from(f.offset1) << 8;
            if i.op == Op::DS_SWIZZLE_B32 && off != 0 {
                write!(self.out, " offset:{}", swizzle(off as u16))?;
            } else if off != 0 {
                write!(self.out, " offset:{off}")?;
            }
        }
        if f.gds {
            self.out.push_str(" gds");
        }
        Ok(())
    }

    fn flat(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let mut ops = Vec::new();
        if i.dst.is_some() {
            ops.push(self.operand(&i.dst, self.spec(0)));
        }
        let addr = if i.src[0].is_some() {
            self.operand(&i.src[0], self.spec(1))
        } else {
            "off".to_string()
        };
        ops.push(addr);
        if i.src[1].is_some() {
            ops.push(self.operand(&i.src[1], self.spec(2)));
        }
        if i.format != Format::Flat {
            ops.push(if i.src[2].is_some() {
                self.operand(&i.src[2], self.spec(3))
            } else {
                "off".to_string()
            });
        }
        self.list(name, &ops)?;
        if i.fields.imm != 0 {
            write!(self.out, " offset:{}", i.fields.imm)?;
        }
        self.cache_bits();
        if i.fields.lds {
            self.out.push_str(" lds");
        }
        Ok(())
    }

    fn buffer(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let f = i.fields;
        let mut ops = Vec::new();
        let no_operands = !i.dst.is_some() && self.spec(1).kind == super::tables::RegKind::None;
        if !no_operands {
            if i.dst.is_some() {
                ops.push(self.operand(&i.dst, self.spec(0)));
            }
            ops.push(if i.src[0].is_some() {
                self.operand(&i.src[0], self.spec(1))
            } else {
                "off".to_string()
            });
            ops.push(self.operand(&i.src[1], self.spec(2)));
            if i.format == Format::Mtbuf {
                ops.push(format!(
                    "format:{}",
                    u32::from(f.dfmt) | u32::from(f.nfmt) << 4
                ));
            }
            ops.push(self.operand(
                &i.src[2],
                OperandSpec {
                    bits: 32,
                    ty: NumType::Int,
                    kind: super::tables::RegKind::Src,
                },
            ));
        }
        self.list(name, &ops)?;
        if !no_operands {
            if f.idxen {
                self.out.push_str(" idxen");
            }
            if f.offen {
                self.out.push_str(" offen");
            }
            if f.imm != 0 {
                write!(self.out, " offset:{}", f.imm)?;
            }
        }
        self.cache_bits();
        if f.lds {
            self.out.push_str(" lds");
        }
        Ok(())
    }
}

impl Printer<'_> {
    /// An image instruction as LLVM prints it for gfx90a: `vdata, vaddr, srsrc[, ssamp]`, then
    /// dmask, unorm, the cache bits, a16, lwe, da and d16.
    fn mimg(&mut self) -> fmt::Result {
        use super::inst::mimg;
        let i = self.inst;
        let f = i.fields;
        let reg = |o: &Operand| match o.kind {
            OperandKind::Vgpr(r) => reg_range('v', r, o.dwords),
            OperandKind::Agpr(r) => reg_range('a', r, o.dwords),
            OperandKind::Sgpr(r) => sgpr_range(r, o.dwords),
            _ => String::new(),
        };
        let ops: Vec<String> = [i.dst, i.src[0], i.src[1], i.src[2]]
            .iter()
            .filter(|o| o.is_some())
            .map(reg)
            .collect();
        self.list(i.op.name(), &ops)?;
        if f.dmask != 0 {
            write!(self.out, " dmask:{:#x}", f.dmask)?;
        }
        if f.mimg_flags & mimg::UNORM != 0 {
            self.out.push_str(" unorm");
        }
        self.cache_bits();
        for (flag, name) in [
            (mimg::A16, " a16"),
            (mimg::LWE, " lwe"),
            (mimg::DA, " da"),
            (mimg::D16, " d16"),
        ] {
            if f.mimg_flags & flag != 0 {
                self.out.push_str(name);
            }
        }
        Ok(())
    }
}

pub(crate) fn bitlist(bits: u8, n: usize) -> String {
    let items: Vec<String> = (0..n).map(|k| (bits >> k & 1).to_string()).collect();
    format!("[{}]", items.join(","))
}

fn sel_name(sel: u8) -> &'static str {
    match sel {
        0 => "BYTE_0",
        1 => "BYTE_1",
        2 => "BYTE_2",
        3 => "BYTE_3",
        4 => "WORD_0",
        5 => "WORD_1",
        6 => "DWORD",
        _ => "<invalid sel>",
    }
}

fn unused_name(u: u8) -> &'static str {
    match u {
        0 => "UNUSED_PAD",
        1 => "UNUSED_SEXT",
        2 => "UNUSED_PRESERVE",
        _ => "<invalid unused>",
    }
}

/// `s_waitcnt` operand: vmcnt is bits 3:0 and 15:14, expcnt 6:4, lgkmcnt 11:8.
fn waitcnt(imm: u16) -> String {
    let vm = (imm & 0xf) | (imm >> 14 & 3) << 4;
    let exp = imm >> 4 & 7;
    let lgkm = imm >> 8 & 0xf;
    let mut parts = Vec::new();
    if vm != 0x3f {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0xf {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        return format!("vmcnt({vm}) expcnt({exp}) lgkmcnt({lgkm})");
    }
    parts.join(" ")
}

fn hwreg(target: Target, imm: u16) -> String {
    let id = imm & 0x3f;
    let offset = imm >> 6 & 0x1f;
    let size = (imm >> 11 & 0x1f) + 1;
    let name = match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        4 => "HW_REG_HW_ID",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        16 => "HW_REG_TBA_LO",
        17 => "HW_REG_TBA_HI",
        18 => "HW_REG_TMA_LO",
        19 => "HW_REG_TMA_HI",
        20 if target.sc_bits() => "HW_REG_XCC_ID",
        21 if target.sc_bits() => "HW_REG_SQ_PERF_SNAPSHOT_DATA",
        22 if target.sc_bits() => "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
        23 if target.sc_bits() => "HW_REG_SQ_PERF_SNAPSHOT_PC_LO",
        24 if target.sc_bits() => "HW_REG_SQ_PERF_SNAPSHOT_PC_HI",
        _ => "",
    };
    let reg = if name.is_empty() {
        id.to_string()
    } else {
        name.to_string()
    };
    if offset == 0 && size == 32 {
        format!("hwreg({reg})")
    } else {
        format!("hwreg({reg}, {offset}, {size})")
    }
}

fn sendmsg(imm: u16) -> String {
    let id = imm & 0xf;
    let op = imm >> 4 & 7;
    let stream = imm >> 8 & 3;
    let simple = match id {
        1 => "MSG_INTERRUPT",
        4 => "MSG_SAVEWAVE",
        5 => "MSG_STALL_WAVE_GEN",
        6 => "MSG_HALT_WAVES",
        7 => "MSG_ORDERED_PS_DONE",
        8 => "MSG_EARLY_PRIM_DEALLOC",
        9 => "MSG_GS_ALLOC_REQ",
        10 => "MSG_GET_DOORBELL",
        _ => "",
    };
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    const SYS_OPS: [&str; 5] = [
        "",
        "SYSMSG_OP_ECC_ERR_INTERRUPT",
        "SYSMSG_OP_REG_RD",
        "SYSMSG_OP_HOST_TRAP_ACK",
        "SYSMSG_OP_TTRACE_PC",
    ];
    match id {
        2 | 3 if op < 4 && (op != 0 || (id == 3 && stream == 0)) => {
            let name = if id == 2 { "MSG_GS" } else { "MSG_GS_DONE" };
            if op == 0 {
                format!("sendmsg({name}, {})", GS_OPS[0])
            } else {
                format!("sendmsg({name}, {}, {stream})", GS_OPS[usize::from(op)])
            }
        }
        15 if matches!(op, 1 | 2 | 4) && stream == 0 => {
            format!("sendmsg(MSG_SYSMSG, {})", SYS_OPS[usize::from(op)])
        }
        _ if !simple.is_empty() && op == 0 && stream == 0 => format!("sendmsg({simple})"),
        // The numeric form needs the reserved bits (7 and 15:10) clear.
        0 if imm & 0xfc80 == 0 => format!("sendmsg({id}, {op}, {stream})"),
        8..=14 if imm & 0xfc80 == 0 && op <= 4 => format!("sendmsg({id}, {op}, {stream})"),
        2 | 15 if op == 0 && stream == 0 && imm & 0xfc80 == 0 => format!("sendmsg({id}, 0, 0)"),
        _ => imm.to_string(),
    }
}

fn gpr_idx_mode(imm: u16) -> String {
    if imm > 15 {
        return hex(u64::from(imm));
    }
    let names = ["SRC0", "SRC1", "SRC2", "DST"];
    let on: Vec<&str> = (0..4)
        .filter(|k| imm >> k & 1 == 1)
        .map(|k| names[k])
        .collect();
    format!("gpr_idx({})", on.join(","))
}

/// `ds_swizzle_b32` offset: quad permute, bit-mask permute (with its SWAP/REVERSE/BROADCAST forms),
/// rotate or FFT mode.
pub(crate) fn swizzle(off: u16) -> String {
    if off & 0xff00 == 0x8000 {
        let l = |k: u16| off >> (2 * k) & 3;
        return format!("swizzle(QUAD_PERM,{},{},{},{})", l(0), l(1), l(2), l(3));
    }
    if off & 0xe000 == 0xc000 {
        return format!("swizzle(ROTATE,{},{})", off >> 10 & 1, off >> 5 & 0x1f);
    }
    if off & 0xe000 == 0xe000 {
        return format!("swizzle(FFT,{})", off & 0x1f);
    }
    if off & 0x8000 != 0 {
        return off.to_string();
    }
    let and = off & 0x1f;
    let or = off >> 5 & 0x1f;
    let xor = off >> 10 & 0x1f;
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        return format!("swizzle(SWAP,{xor})");
    }
    if and == 0x1f && or == 0 && xor > 1 && (xor + 1).is_power_of_two() {
        return format!("swizzle(REVERSE,{})", xor + 1);
    }
    let group = 32 - and.leading_zeros() as u16 + 16 - 32;
    let group_size = 1u16 << (and.trailing_zeros().min(5));
    let _ = group;
    if xor == 0 && group_size > 1 && and == 0x1f & !(group_size - 1) && or < group_size {
        return format!("swizzle(BROADCAST,{group_size},{or})");
    }
    let mask: String = (0..5)
        .rev()
        .map(|b| {
            let (a, o, x) = (and >> b & 1, or >> b & 1, xor >> b & 1);
            match (a, o, x) {
                (0, o, x) => {
                    if o ^ x == 1 {
                        '1'
                    } else {
                        '0'
                    }
                }
                (_, 1, x) => {
                    if x == 0 {
                        '1'
                    } else {
                        '0'
                    }
                }
                (_, _, 0) => 'p',
                _ => 'i',
            }
        })
        .collect();
    format!("swizzle(BITMASK_PERM,\"{mask}\")")
}

fn is_float(ty: NumType) -> bool {
    matches!(
        ty,
        NumType::Float
            | NumType::BFloat
            | NumType::PackedFloat
            | NumType::PackedBFloat
            | NumType::PackedFloat32
    )
}

/// Whether LLVM prints `op_sel` for the VOP3 form of `op` (VOP3-only instructions with 16-bit operands,
/// and the conversions that select a byte or word of their destination).
fn has_op_sel(op: Op) -> bool {
    let info = op.info();
    if info.suffixed || info.name.contains("_legacy_") {
        return false;
    }
    if matches!(op, Op::V_ALIGNBYTE_B32 | Op::V_ALIGNBIT_B32) {
        return true;
    }
    let n = info.name;
    if (n.starts_with("v_cvt_scalef32_") && !n.contains("pk32") && !n.contains("2xpk16"))
        || n.starts_with("v_cvt_sr_")
    {
        return true;
    }
    info.operands.iter().any(|o| o.bits == 16)
}

/// Scaled conversions that write part of their destination and keep the rest (their `op_sel` list
/// has an entry for the tied destination input).
fn tied_scale_conversion(op: Op) -> bool {
    let n = op.name();
    n.starts_with("v_cvt_scalef32_pk_fp4_")
        || matches!(op, Op::V_CVT_SR_FP8_F32 | Op::V_CVT_SR_BF8_F32)
}

fn is_packed(ty: NumType) -> bool {
    matches!(
        ty,
        NumType::PackedFloat | NumType::PackedBFloat | NumType::PackedInt | NumType::PackedFloat32
    )
}
