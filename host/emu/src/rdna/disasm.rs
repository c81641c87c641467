//! RDNA disassembler: prints an [`Instruction`] the way `llvm-objdump -d --mcpu=<gfx>` does
//! (mnemonic and operands; the encoding comment is not produced). Wave64 code prints as
//! `llvm-objdump --mattr=+wavefrontsize64` prints it.

use super::decode::{M0, NULL, is_16bit, is_tied_accumulator};
use super::inst::{Dpp8, Dpp16, Ext, Format, Instruction, Operand, OperandKind, Special};
use super::opcodes::Op;
use super::tables::{NumType, OperandSpec, RegKind};
use crate::Target;
use crate::gfx9::disasm::{ConstCtx, bitlist, constant, hex, imm_field, swizzle};
use std::fmt::{self, Write};

/// Formats `inst` as LLVM's disassembler prints it for `target`.
pub fn disassemble(target: Target, inst: &Instruction) -> String {
    let mut s = String::with_capacity(48);
    let _ = Printer {
        target,
        gfx12: target == Target::Gfx1201,
        inst,
        out: &mut s,
    }
    .print();
    s
}

struct Printer<'a> {
    target: Target,
    gfx12: bool,
    inst: &'a Instruction,
    out: &'a mut String,
}

/// Name of register file entry `i` when it stands alone.
fn sgpr_name(i: u8) -> String {
    match i {
        0..=105 => format!("s{i}"),
        106 => "vcc_lo".into(),
        107 => "vcc_hi".into(),
        108..=123 => format!("ttmp{}", i - 108),
        M0 => "m0".into(),
        NULL => "null".into(),
        126 => "exec_lo".into(),
        127 => "exec_hi".into(),
        _ => format!("s{i}"),
    }
}

/// Name of `n` consecutive scalar registers starting at `i`.
fn sgpr_range(i: u8, n: u8) -> String {
    if n <= 1 || i == NULL {
        return sgpr_name(i);
    }
    match i {
        106 if n == 2 => "vcc".into(),
        126 if n == 2 => "exec".into(),
        108..=123 => format!("ttmp[{}:{}]", i - 108, i - 108 + n - 1),
        _ => format!("s[{}:{}]", i, u16::from(i) + u16::from(n) - 1),
    }
}

fn vgpr_range(i: u8, n: u8) -> String {
    if n <= 1 {
        format!("v{i}")
    } else {
        format!("v[{}:{}]", i, u16::from(i) + u16::from(n) - 1)
    }
}

fn special_name(s: Special) -> String {
    match s {
        Special::SharedBase => "src_shared_base".into(),
        Special::SharedLimit => "src_shared_limit".into(),
        Special::PrivateBase => "src_private_base".into(),
        Special::PrivateLimit => "src_private_limit".into(),
        Special::PopsExitingWaveId => "src_pops_exiting_wave_id".into(),
        Special::Vccz => "src_vccz".into(),
        Special::Execz => "src_execz".into(),
        Special::Scc => "src_scc".into(),
        Special::LdsDirect => "src_lds_direct".into(),
        Special::FlatScratchBaseLo => "src_flat_scratch_base_lo".into(),
        Special::FlatScratchBaseHi => "src_flat_scratch_base_hi".into(),
        Special::Reserved(c) => format!("<reserved {c}>"),
    }
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

impl Printer<'_> {
    fn print(mut self) -> fmt::Result {
        match self.inst.format {
            Format::Sop1 | Format::Sop2 | Format::Sopc => self.salu(),
            Format::Sopk => self.sopk(),
            Format::Sopp => self.sopp(),
            Format::Smem => self.smem(),
            Format::Vop1
            | Format::Vop2
            | Format::Vopc
            | Format::Vop3
            | Format::Vop3sd
            | Format::Vop3p => self.valu(),
            Format::Vopd => self.vopd(),
            Format::Ds => self.ds(),
            Format::Flat | Format::Global | Format::Scratch => self.flat(),
            Format::Mubuf => self.buffer(),
        }
    }

    fn spec(&self, slot: usize) -> OperandSpec {
        let specs = self.inst.op.info().operands_on(self.target);
        // FMAMK's register addend sits behind K, in source 2, with the shape of source 1.
        if slot == 3 && matches!(self.inst.op, Op::V_FMAMK_F32 | Op::V_FMAMK_F16) {
            return specs[2];
        }
        specs[slot]
    }

    /// An operand as LLVM prints it; `half` is `Some(high)` for a 16-bit VGPR half.
    fn operand(&self, o: &Operand, spec: OperandSpec, half: Option<bool>) -> String {
        let scalar = matches!(
            self.inst.format,
            Format::Sop1 | Format::Sop2 | Format::Sopc | Format::Sopk | Format::Smem
        );
        let spec = if scalar && spec.bits < 32 {
            OperandSpec {
                bits: 32,
                ty: NumType::Int,
                ..spec
            }
        } else {
            spec
        };
        match o.kind {
            OperandKind::None => String::new(),
            OperandKind::Sgpr(r) => sgpr_range(r, o.dwords),
            OperandKind::Vgpr(r) | OperandKind::Agpr(r) => match half {
                Some(hi) if self.true16() => format!("v{r}.{}", if hi { 'h' } else { 'l' }),
                Some(true)
                    if matches!(self.inst.format, Format::Vop1 | Format::Vop2 | Format::Vopc) =>
                {
                    format!("v{}", u16::from(r) + 128)
                }
                _ => vgpr_range(r, o.dwords),
            },
            OperandKind::Inline { value, .. } => constant(
                ConstCtx {
                    spec,
                    literal: None,
                    kimm: false,
                },
                value,
            ),
            OperandKind::Literal { raw, value } => constant(
                ConstCtx {
                    spec,
                    literal: Some(raw),
                    kimm: false,
                },
                value,
            ),
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
        let mut ops = vec![self.operand(&i.dst, self.spec(0), None)];
        if matches!(i.op, Op::S_SENDMSG_RTN_B32 | Op::S_SENDMSG_RTN_B64) {
            ops.push(sendmsg_rtn(i.fields.imm as u16));
        } else {
            ops.push(self.operand(&i.src[0], self.spec(1), None));
            ops.push(self.operand(&i.src[1], self.spec(2), None));
            ops.push(self.operand(&i.src[2], self.spec(2), None));
        }
        self.list(i.op.name(), &ops)
    }

    fn sopk(&mut self) -> fmt::Result {
        let i = self.inst;
        let imm = i.fields.imm as u32 as u16;
        let name = i.op.name();
        let d = self.operand(&i.dst, self.spec(0), None);
        match i.op {
            Op::S_GETREG_B32 => self.list(name, &[d, hwreg(self.gfx12, imm)]),
            Op::S_SETREG_B32 => self.list(name, &[hwreg(self.gfx12, imm), d]),
            Op::S_SETREG_IMM32_B32 => {
                let lit = match i.src[0].kind {
                    OperandKind::Literal { raw, .. } => hex(u64::from(raw)),
                    _ => String::new(),
                };
                self.list(name, &[hwreg(self.gfx12, imm), lit])
            }
            Op::S_CALL_B64 => self.list(name, &[d, imm.to_string()]),
            Op::S_VERSION => self.list(name, &[hex(u64::from(imm))]),
            _ => self.list(name, &[d, hex(u64::from(imm))]),
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
            | Op::S_ENDPGM_ORDERED_PS_DONE
            | Op::S_CODE_END
            | Op::S_WAIT_IDLE
            | Op::S_BARRIER_LEAVE => {
                if imm == 0 {
                    String::new()
                } else {
                    imm.to_string()
                }
            }
            Op::S_WAITCNT => waitcnt(imm),
            Op::S_WAITCNT_DEPCTR | Op::S_WAIT_ALU => depctr(imm),
            Op::S_DELAY_ALU => delay_alu(imm),
            Op::S_SENDMSG | Op::S_SENDMSGHALT => sendmsg(imm),
            Op::S_NOP | Op::S_SETHALT | Op::S_TRAP | Op::S_SLEEP | Op::S_SETPRIO => imm_field(imm),
            Op::S_DENORM_MODE => imm.to_string(),
            _ if name.starts_with("s_branch") || name.starts_with("s_cbranch") => imm.to_string(),
            _ => hex(u64::from(imm)),
        };
        self.list(name, &[arg])
    }

    fn smem(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let f = &i.fields;
        if !i.src[0].is_some() {
            let d = self.operand(&i.dst, self.spec(0), None);
            return self.list(name, &[d]);
        }
        // The offset is signed (21 bits, gfx12 24), except on the buffer forms (unsigned, as LLVM
        // prints them).
        let offset = if name.starts_with("s_buffer_") || f.imm >= 0 {
            hex(u64::from(
                f.imm as u32 & if self.gfx12 { 0xff_ffff } else { 0x1f_ffff },
            ))
        } else {
            format!("-{}", hex(u64::from(f.imm.unsigned_abs())))
        };
        let mut ops = vec![
            self.operand(&i.dst, self.spec(0), None),
            self.operand(&i.src[0], self.spec(1), None),
        ];
        let soffset = matches!(i.src[1].kind, OperandKind::Sgpr(r) if r != NULL);
        if soffset {
            ops.push(self.operand(&i.src[1], self.spec(2), None));
        } else if f.imm == 0 && !self.gfx12 {
            ops.push("null".into());
        } else {
            ops.push(offset.clone());
        }
        self.list(name, &ops)?;
        if soffset && f.imm != 0 {
            write!(self.out, " offset:{offset}")?;
        }
        self.cache_bits(false);
        Ok(())
    }

    /// Whether operand slot `slot` of the instruction is a 16-bit VGPR half, and which half.
    fn half(&self, slot: usize, o: &Operand) -> Option<bool> {
        let i = self.inst;
        if !matches!(o.kind, OperandKind::Vgpr(_))
            || !is_16bit(self.spec(slot))
            || !matches!(
                i.format,
                Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3
            )
        {
            return None;
        }
        let bit = if slot == 0 { 3 } else { slot - 1 };
        Some(i.mods.op_sel >> bit & 1 == 1)
    }

    /// Source `k` of a VALU instruction with its float (abs/neg) modifiers.
    fn valu_src(&self, k: usize) -> String {
        let i = self.inst;
        let spec = self.spec(k + 1);
        let mut s = self.operand(&i.src[k], spec, self.half(k + 1, &i.src[k]));
        let mix = matches!(
            i.op,
            Op::V_FMA_MIX_F32 | Op::V_FMA_MIXLO_F16 | Op::V_FMA_MIXHI_F16
        );
        let abs = i.mods.abs >> k & 1 == 1;
        let neg = i.mods.neg >> k & 1 == 1;
        let (abs, neg) = if mix {
            (i.mods.neg_hi >> k & 1 == 1, neg)
        } else if i.format == Format::Vop3p {
            return s;
        } else if is_float(spec.ty) || matches!(i.op, Op::V_CNDMASK_B32 | Op::V_CNDMASK_B16) {
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
        let short = matches!(i.format, Format::Vop1 | Format::Vop2 | Format::Vopc);
        if i.ext != Ext::None {
            name.push_str(if short || i.format == Format::Vop3p {
                "_dpp"
            } else {
                "_e64_dpp"
            });
        } else if info.suffixed_on(self.target) {
            name.push_str(if short { "_e32" } else { "_e64" });
        }
        let mut ops = Vec::new();
        if i.dst.is_some() {
            ops.push(self.operand(&i.dst, self.spec(0), self.half(0, &i.dst)));
        }
        if i.sdst.is_some() {
            ops.push(self.operand(&i.sdst, self.spec(0), None));
        }
        let hidden = |k: usize| k == 2 && is_tied_accumulator(i.op);
        let mut nsrc = 0;
        for k in 0..3 {
            if !i.src[k].is_some() || hidden(k) {
                continue;
            }
            nsrc += 1;
            ops.push(self.valu_src(k));
        }
        self.list(&name, &ops)?;
        match i.ext {
            Ext::Dpp16(dpp) => {
                self.vop3_mods(nsrc)?;
                self.dpp16(dpp)
            }
            Ext::Dpp8(dpp) => {
                self.vop3_mods(nsrc)?;
                self.dpp8(dpp)
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
            let mask = (1u8 << nsrc) - 1;
            if m.op_sel & mask != 0 {
                write!(self.out, " op_sel:{}", bitlist(m.op_sel, nsrc))?;
            }
            if m.op_sel_hi & mask != defaults_hi {
                write!(self.out, " op_sel_hi:{}", bitlist(m.op_sel_hi, nsrc))?;
            }
            if !mix && m.neg & mask != 0 {
                write!(self.out, " neg_lo:{}", bitlist(m.neg, nsrc))?;
            }
            if !mix && m.neg_hi & mask != 0 {
                write!(self.out, " neg_hi:{}", bitlist(m.neg_hi, nsrc))?;
            }
            if m.clamp {
                self.out.push_str(" clamp");
            }
            return Ok(());
        }
        if matches!(
            i.op,
            Op::V_PERMLANE16_B32
                | Op::V_PERMLANEX16_B32
                | Op::V_PERMLANE16_VAR_B32
                | Op::V_PERMLANEX16_VAR_B32
        ) {
            // op_sel here holds fetch-inactive (bit 0) and bound_ctrl (bit 1).
            if m.op_sel & 3 != 0 {
                write!(self.out, " op_sel:{}", bitlist(m.op_sel, 2))?;
            }
            return Ok(());
        }
        if matches!(i.format, Format::Vop3 | Format::Vop3sd) {
            self.vop3_op_sel(nsrc)?;
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

    /// Whether LLVM prints the instruction in true16 form (16-bit halves named `v1.l`/`v1.h`):
    /// all of gfx11, and on gfx12 the instructions only its true16 tables hold.
    fn true16(&self) -> bool {
        !self.gfx12 || matches!(self.inst.op, Op::V_MOV_B16 | Op::V_SWAP_B16)
    }

    /// A VOP3 instruction's op_sel (bits 0-2: sources, bit 3: destination) in LLVM's form for it:
    /// gfx11 names 16-bit halves in the registers and also lists op_sel; gfx12 code has no
    /// 16-bit halves in LLVM's view and lists op_sel only for the instructions that had it before
    /// gfx11 (`GFX12_OP_SEL`); the 8-bit float conversions select a byte (`byte_sel`).
    fn vop3_op_sel(&mut self, nsrc: usize) -> fmt::Result {
        let i = self.inst;
        let m = i.mods.op_sel;
        let bit = |k: u8| m >> k & 1;
        let list = |m: u8, n: usize| (m & ((1 << n) - 1)) | (m >> 3 & 1) << n;
        let (sel, n) = match i.op {
            Op::V_CVT_F32_FP8 | Op::V_CVT_F32_BF8 => {
                let byte = bit(0) << 1 | bit(1);
                if byte != 0 {
                    write!(self.out, " byte_sel:{byte}")?;
                }
                return Ok(());
            }
            Op::V_CVT_SR_FP8_F32 | Op::V_CVT_SR_BF8_F32 => {
                let byte = bit(2) | bit(3) << 1;
                if byte != 0 {
                    write!(self.out, " byte_sel:{byte}")?;
                }
                return Ok(());
            }
            // The packed sources are read whole: only the accumulator's and result's halves show.
            Op::V_DOT2_F16_F16 | Op::V_DOT2_BF16_BF16 => (m & 0b1100, 4),
            _ if self.gfx12 && !self.true16() => {
                if !GFX12_OP_SEL.contains(&i.op) {
                    return Ok(());
                }
                (list(m, nsrc), nsrc + 1)
            }
            Op::V_CNDMASK_B16 => return Ok(()),
            _ if !self.inst.op.info().operands.iter().any(|o| is_16bit(*o)) => return Ok(()),
            // A compare that writes EXEC has no destination entry; the 16-bit FMAC's tied
            // accumulator has one.
            _ if i.op.name().starts_with("v_cmpx_") => (m & ((1 << nsrc) - 1), nsrc),
            Op::V_FMAC_F16 => (m, 4),
            _ => (list(m, nsrc), nsrc + 1),
        };
        if sel != 0 {
            write!(self.out, " op_sel:{}", bitlist(sel, n))?;
        }
        Ok(())
    }

    fn dpp16(&mut self, dpp: Dpp16) -> fmt::Result {
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
            0x140 => "row_mirror".into(),
            0x141 => "row_half_mirror".into(),
            0x150..=0x15f => format!("row_share:{}", c & 0xf),
            0x160..=0x16f => format!("row_xmask:{}", c & 0xf),
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
        if dpp.fetch_inactive {
            self.out.push_str(" fi:1");
        }
        Ok(())
    }

    fn dpp8(&mut self, dpp: Dpp8) -> fmt::Result {
        let lanes: Vec<String> = dpp.lanes.iter().map(u8::to_string).collect();
        write!(self.out, " dpp8:[{}]", lanes.join(","))?;
        if dpp.fetch_inactive {
            self.out.push_str(" fi:1");
        }
        Ok(())
    }

    fn vopd(&mut self) -> fmt::Result {
        let i = self.inst;
        let Some(y) = i.dual else {
            return Ok(());
        };
        let x = self.vopd_half(i.op, &i.dst, &i.src);
        let y = self.vopd_half(y.op, &y.dst, &y.src);
        write!(self.out, "{x} :: {y}")
    }

    fn vopd_half(&self, op: Op, dst: &Operand, src: &[Operand; 3]) -> String {
        let [d, s0, s1, s2] = op.info().operands_on(self.target);
        let mut ops = vec![self.operand(dst, d, None), self.operand(&src[0], s0, None)];
        let kimm = |o: &Operand| match o.kind {
            OperandKind::Literal { raw, .. } => hex(u64::from(raw)),
            _ => String::new(),
        };
        match op {
            Op::V_FMAMK_F32 => {
                ops.push(kimm(&src[1]));
                ops.push(self.operand(&src[2], s2, None));
            }
            Op::V_FMAAK_F32 => {
                ops.push(self.operand(&src[1], s1, None));
                ops.push(kimm(&src[2]));
            }
            _ => ops.push(self.operand(&src[1], s1, None)),
        }
        let name = op.name().replacen("v_", "v_dual_", 1);
        let ops: Vec<String> = ops.into_iter().filter(|o| !o.is_empty()).collect();
        format!("{name} {}", ops.join(", "))
    }

    fn cache_bits(&mut self, atomic: bool) {
        let f = self.inst.fields;
        if self.gfx12 {
            if f.th != 0 {
                let th = if atomic {
                    th_atomic(f.th, f.scope)
                } else {
                    th_load_store(f.th, f.scope, self.inst.op.name().contains("_store_"))
                };
                write!(self.out, " th:{th}").ok();
            }
            if f.scope != 0 {
                let scope =
                    ["SCOPE_CU", "SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS"][usize::from(f.scope)];
                write!(self.out, " scope:{scope}").ok();
            }
            if f.nv {
                self.out.push_str(" nv");
            }
        } else {
            if f.glc {
                self.out.push_str(" glc");
            }
            if f.slc {
                self.out.push_str(" slc");
            }
            if f.dlc {
                self.out.push_str(" dlc");
            }
        }
    }

    fn ds(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let mut ops = Vec::new();
        if i.dst.is_some() {
            ops.push(self.operand(&i.dst, self.spec(0), None));
        }
        for k in 0..3 {
            if i.src[k].is_some() {
                ops.push(self.operand(&i.src[k], self.spec(k + 1), None));
            }
        }
        self.list(name, &ops)?;
        let f = &i.fields;
        if name.contains("_2addr_") {
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
        let no_operands = self.spec(1).kind == RegKind::None && !i.dst.is_some();
        if !no_operands {
            let mut ops = Vec::new();
            if i.dst.is_some() {
                ops.push(self.operand(&i.dst, self.spec(0), None));
            }
            ops.push(if i.src[0].is_some() {
                self.operand(&i.src[0], self.spec(1), None)
            } else {
                "off".to_string()
            });
            if i.src[1].is_some() {
                ops.push(self.operand(&i.src[1], self.spec(2), None));
            }
            if i.format != Format::Flat {
                ops.push(if i.src[2].is_some() {
                    self.operand(&i.src[2], self.spec(3), None)
                } else {
                    "off".to_string()
                });
            }
            self.list(name, &ops)?;
        } else {
            self.out.push_str(name);
        }
        if i.fields.imm != 0 {
            write!(self.out, " offset:{}", i.fields.imm)?;
        }
        self.cache_bits(name.contains("_atomic_"));
        Ok(())
    }

    fn buffer(&mut self) -> fmt::Result {
        let i = self.inst;
        let name = i.op.name();
        let f = i.fields;
        if !i.dst.is_some() {
            self.out.push_str(name);
            self.cache_bits(false);
            return Ok(());
        }
        let b32 = OperandSpec {
            bits: 32,
            ty: NumType::Int,
            kind: RegKind::Src,
        };
        let ops = vec![
            self.operand(&i.dst, self.spec(0), None),
            if i.src[0].is_some() {
                self.operand(&i.src[0], self.spec(1), None)
            } else {
                "off".to_string()
            },
            self.operand(&i.src[1], self.spec(2), None),
            self.operand(&i.src[2], b32, None),
        ];
        self.list(name, &ops)?;
        if f.idxen {
            self.out.push_str(" idxen");
        }
        if f.offen {
            self.out.push_str(" offen");
        }
        if f.imm != 0 {
            write!(self.out, " offset:{}", f.imm)?;
        }
        self.cache_bits(name.contains("_atomic_"));
        Ok(())
    }
}

/// The gfx12 VOP3 instructions whose op_sel LLVM prints (the others' 16-bit operands are whole
/// registers in its view of gfx12).
const GFX12_OP_SEL: [Op; 36] = [
    Op::V_ADD_NC_I16,
    Op::V_ADD_NC_U16,
    Op::V_SUB_NC_I16,
    Op::V_SUB_NC_U16,
    Op::V_ALIGNBIT_B32,
    Op::V_ALIGNBYTE_B32,
    Op::V_CVT_PK_BF8_F32,
    Op::V_CVT_PK_FP8_F32,
    Op::V_CVT_PK_F32_BF8,
    Op::V_CVT_PK_F32_FP8,
    Op::V_CVT_PK_NORM_I16_F16,
    Op::V_CVT_PK_NORM_U16_F16,
    Op::V_DIV_FIXUP_F16,
    Op::V_FMA_F16,
    Op::V_MAD_I16,
    Op::V_MAD_U16,
    Op::V_MAD_I32_I16,
    Op::V_MAD_U32_U16,
    Op::V_MAX3_I16,
    Op::V_MAX3_U16,
    Op::V_MAX3_NUM_F16,
    Op::V_MIN3_I16,
    Op::V_MIN3_U16,
    Op::V_MIN3_NUM_F16,
    Op::V_MED3_I16,
    Op::V_MED3_U16,
    Op::V_MED3_NUM_F16,
    Op::V_MAXIMUM3_F16,
    Op::V_MINIMUM3_F16,
    Op::V_MAXIMUM_F16,
    Op::V_MINIMUM_F16,
    Op::V_MAXIMUMMINIMUM_F16,
    Op::V_MINIMUMMAXIMUM_F16,
    Op::V_MAXMIN_NUM_F16,
    Op::V_MINMAX_NUM_F16,
    Op::V_PACK_B32_F16,
];

/// A gfx12 load's or store's temporal hint as LLVM names it. Hint 3 is BYPASS at system scope and
/// LU (loads) or WB (stores) below it; a load's reserved hint 7 prints as a number.
fn th_load_store(th: u8, scope: u8, store: bool) -> String {
    let kind = if store { "STORE" } else { "LOAD" };
    let name = match th & 7 {
        7 if !store => return "0x7".into(),
        1 => "NT",
        2 => "HT",
        3 if scope == 3 => "BYPASS",
        3 if store => "WB",
        3 => "LU",
        4 => "NT_RT",
        5 => "RT_NT",
        6 => "NT_HT",
        7 => "NT_WB",
        _ => "RT",
    };
    format!("TH_{kind}_{name}")
}

/// A gfx12 atomic's temporal hint as LLVM names it: bit 0 asks for the pre-op value, bit 1 is
/// non-temporal, bit 2 cascades (named only at device or system scope, else printed as a number).
fn th_atomic(th: u8, scope: u8) -> String {
    let th = th & 7;
    let name = if th & 4 != 0 {
        if scope >= 2 {
            if th & 2 != 0 {
                "CASCADE_NT"
            } else {
                "CASCADE_RT"
            }
            .to_string()
        } else {
            format!("0x{th:x}")
        }
    } else {
        match th {
            1 => "RETURN",
            2 => "NT",
            3 => "NT_RETURN",
            _ => "RT",
        }
        .to_string()
    };
    format!("TH_ATOMIC_{name}")
}

/// `s_waitcnt` operand on GFX11: vmcnt is bits 15:10, lgkmcnt 9:4, expcnt 2:0.
fn waitcnt(imm: u16) -> String {
    let vm = imm >> 10 & 0x3f;
    let lgkm = imm >> 4 & 0x3f;
    let exp = imm & 7;
    let mut parts = Vec::new();
    if vm != 0x3f {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0x3f {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        return format!("vmcnt({vm}) expcnt({exp}) lgkmcnt({lgkm})");
    }
    parts.join(" ")
}

/// `s_waitcnt_depctr` / `s_wait_alu` operand: the dependency counters that are waited for.
fn depctr(imm: u16) -> String {
    // (name, shift, width), in the order LLVM prints them; a counter at its maximum is not waited for.
    const FIELDS: [(&str, u32, u32); 7] = [
        ("depctr_hold_cnt", 7, 1),
        ("depctr_sa_sdst", 0, 1),
        ("depctr_va_vdst", 12, 4),
        ("depctr_va_sdst", 9, 3),
        ("depctr_va_ssrc", 8, 1),
        ("depctr_va_vcc", 1, 1),
        ("depctr_vm_vsrc", 2, 3),
    ];
    let mut parts = Vec::new();
    let mut known = 0u16;
    for (name, shift, width) in FIELDS {
        let max = (1u16 << width) - 1;
        known |= max << shift;
        let v = imm >> shift & max;
        if v != max {
            parts.push(format!("{name}({v})"));
        }
    }
    if imm & !known != 0 || parts.is_empty() {
        return hex(u64::from(imm));
    }
    parts.join(" ")
}

/// `s_delay_alu` operand: the instruction dependencies the next instructions wait for.
fn delay_alu(imm: u16) -> String {
    const ID: [&str; 12] = [
        "NO_DEP",
        "VALU_DEP_1",
        "VALU_DEP_2",
        "VALU_DEP_3",
        "VALU_DEP_4",
        "TRANS32_DEP_1",
        "TRANS32_DEP_2",
        "TRANS32_DEP_3",
        "FMA_ACCUM_CYCLE_1",
        "SALU_CYCLE_1",
        "SALU_CYCLE_2",
        "SALU_CYCLE_3",
    ];
    const SKIP: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
    let id0 = usize::from(imm & 0xf);
    let skip = usize::from(imm >> 4 & 7);
    let id1 = usize::from(imm >> 7 & 0xf);
    if id0 >= ID.len() || id1 >= ID.len() || skip >= SKIP.len() || imm >> 11 != 0 {
        return hex(u64::from(imm));
    }
    let mut parts = Vec::new();
    if id0 != 0 {
        parts.push(format!("instid0({})", ID[id0]));
    }
    if skip != 0 {
        parts.push(format!("instskip({})", SKIP[skip]));
    }
    if id1 != 0 {
        parts.push(format!("instid1({})", ID[id1]));
    }
    if parts.is_empty() {
        return "0".into();
    }
    parts.join(" | ")
}

/// `s_sendmsg` operand on GFX11/GFX12.
fn sendmsg(imm: u16) -> String {
    let id = imm & 0xff;
    let name = match id {
        1 => "MSG_INTERRUPT",
        2 => "MSG_GS",
        3 => "MSG_DEALLOC_VGPRS",
        4 => "MSG_SAVEWAVE",
        5 => "MSG_STALL_WAVE_GEN",
        6 => "MSG_HALT_WAVES",
        7 => "MSG_ORDERED_PS_DONE",
        8 => "MSG_EARLY_PRIM_DEALLOC",
        9 => "MSG_GS_ALLOC_REQ",
        10 => "MSG_GET_DOORBELL",
        _ => "",
    };
    if !name.is_empty() && imm >> 8 == 0 {
        format!("sendmsg({name})")
    } else {
        imm.to_string()
    }
}

/// `s_sendmsg_rtn_*` operand: the message whose answer is returned.
fn sendmsg_rtn(id: u16) -> String {
    let name = match id {
        128 => "MSG_RTN_GET_DOORBELL",
        129 => "MSG_RTN_GET_DDID",
        130 => "MSG_RTN_GET_TMA",
        131 => "MSG_RTN_GET_REALTIME",
        132 => "MSG_RTN_SAVE_WAVE",
        133 => "MSG_RTN_GET_TBA",
        134 => "MSG_RTN_GET_TBA_TO_PC",
        135 => "MSG_RTN_GET_SE_AID_ID",
        _ => return format!("sendmsg({id}, 0, 0)"),
    };
    format!("sendmsg({name})")
}

/// `hwreg(...)` operand of s_getreg/s_setreg: id (5:0), offset (10:6), size - 1 (15:11).
fn hwreg(gfx12: bool, imm: u16) -> String {
    let id = imm & 0x3f;
    let offset = imm >> 6 & 0x1f;
    let size = (imm >> 11 & 0x1f) + 1;
    let name = match (id, gfx12) {
        (1, false) => "HW_REG_MODE",
        (2, false) => "HW_REG_STATUS",
        (3, false) => "HW_REG_TRAPSTS",
        (5, false) => "HW_REG_GPR_ALLOC",
        (6, false) => "HW_REG_LDS_ALLOC",
        (7, false) => "HW_REG_IB_STS",
        (15, false) => "HW_REG_SH_MEM_BASES",
        (20, false) => "HW_REG_FLAT_SCR_LO",
        (21, false) => "HW_REG_FLAT_SCR_HI",
        (23, false) => "HW_REG_HW_ID1",
        (24, false) => "HW_REG_HW_ID2",
        (29, false) => "HW_REG_SHADER_CYCLES",
        (1, true) => "HW_REG_WAVE_MODE",
        (2, true) => "HW_REG_WAVE_STATUS",
        (4, true) => "HW_REG_WAVE_STATE_PRIV",
        (5, true) => "HW_REG_WAVE_GPR_ALLOC",
        (6, true) => "HW_REG_WAVE_LDS_ALLOC",
        (17, true) => "HW_REG_WAVE_EXCP_FLAG_PRIV",
        (18, true) => "HW_REG_WAVE_EXCP_FLAG_USER",
        (19, true) => "HW_REG_WAVE_TRAP_CTRL",
        (20, true) => "HW_REG_WAVE_SCRATCH_BASE_LO",
        (21, true) => "HW_REG_WAVE_SCRATCH_BASE_HI",
        (23, true) => "HW_REG_WAVE_HW_ID1",
        (24, true) => "HW_REG_WAVE_HW_ID2",
        (29, true) => "HW_REG_SHADER_CYCLES_LO",
        (30, true) => "HW_REG_SHADER_CYCLES_HI",
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
