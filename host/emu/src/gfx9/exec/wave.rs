//! Wave state (registers, PC, mode) and its initialisation from the kernel descriptor
//! (LLVM AMDGPUUsage, "Initial Kernel Execution State").

use super::super::decode::{EXEC, FLAT_SCRATCH, M0, VCC};
use super::super::inst::{Operand, OperandKind, Special};
use super::{LaunchState, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use crate::dispatch::Dispatch;
use crate::error::Fault;
use crate::target::Target;

/// Vector registers per lane (architected and accumulation files each).
pub const VGPRS: usize = 256;

/// MODE.GPR_IDX_EN (bit 27): VALU VGPR operands selected by M0[15:12] are offset by M0[7:0].
pub const MODE_GPR_IDX_EN: u32 = 1 << 27;

/// Scheduling state of a wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Running,
    Barrier,
    Done,
}

/// One wave: 64 lanes of vector registers, the scalar register file, SCC, PC and MODE.
pub(crate) struct Wave {
    /// Scalar register file indexed by source code: s0-s101, flat_scratch (102), xnack_mask (104),
    /// vcc (106), ttmp0-15 (108), m0 (124), exec (126).
    pub sgpr: [u32; 128],
    /// Architected vector registers, lane-major per register.
    pub vgpr: Vec<[u32; 64]>,
    /// Accumulation registers.
    pub agpr: Vec<[u32; 64]>,
    pub scc: bool,
    pub pc: u64,
    /// HW_REG_MODE: round (3:0), denorm (7:4), DX10 clamp (8), IEEE (9), FP16 overflow (23).
    pub mode: u32,
    pub state: State,
}

impl Wave {
    pub fn new() -> Wave {
        Wave {
            sgpr: [0; 128],
            vgpr: vec![[0; 64]; VGPRS],
            agpr: vec![[0; 64]; VGPRS],
            scc: false,
            pc: 0,
            mode: 0,
            state: State::Done,
        }
    }

    pub fn exec(&self) -> u64 {
        self.sgpr64(EXEC)
    }

    pub fn set_exec(&mut self, v: u64) {
        self.set_sgpr64(EXEC, v);
    }

    pub fn vcc(&self) -> u64 {
        self.sgpr64(VCC)
    }

    pub fn sgpr64(&self, i: u8) -> u64 {
        let i = usize::from(i);
        u64::from(self.sgpr[i]) | u64::from(self.sgpr[(i + 1) & 127]) << 32
    }

    pub fn set_sgpr64(&mut self, i: u8, v: u64) {
        let i = usize::from(i);
        self.sgpr[i] = v as u32;
        self.sgpr[(i + 1) & 127] = (v >> 32) as u32;
    }

    /// Denormal mode for f32 (0 flush in and out, 1 flush out, 2 flush in, 3 keep).
    pub fn denorm32(&self) -> u32 {
        self.mode >> 4 & 3
    }

    /// Denormal mode for f16 and f64.
    pub fn denorm16_64(&self) -> u32 {
        self.mode >> 6 & 3
    }

    /// IEEE mode (signalling NaN inputs are quieted by min/max).
    pub fn ieee(&self) -> bool {
        self.mode >> 9 & 1 == 1
    }

    /// DX10 clamp mode (clamped NaN becomes 0).
    pub fn dx10_clamp(&self) -> bool {
        self.mode >> 8 & 1 == 1
    }

    /// Reads a scalar source (register pair for 64-bit operands); `Vgpr`/`Agpr` are not scalar.
    pub fn scalar(&self, o: &Operand) -> Result<u64, Fault> {
        match o.kind {
            OperandKind::Sgpr(r) => {
                if o.dwords >= 2 {
                    check_sgpr(r, 2)?;
                    Ok(self.sgpr64(r))
                } else {
                    Ok(self.sgpr_read(r))
                }
            }
            OperandKind::Inline { value, .. } | OperandKind::Literal { value, .. } => Ok(value),
            OperandKind::Special(s) => Ok(self.special(s)),
            OperandKind::None => Ok(0),
            OperandKind::Vgpr(_) | OperandKind::Agpr(_) => Err(Fault::Register(
                "vector register used as a scalar operand".into(),
            )),
        }
    }

    /// A 32-bit scalar register read; `null` (125) reads as zero.
    pub fn sgpr_read(&self, r: u8) -> u64 {
        if r == 125 {
            0
        } else {
            u64::from(self.sgpr[usize::from(r & 127)])
        }
    }

    pub fn special(&self, s: Special) -> u64 {
        match s {
            Special::SharedBase | Special::SharedLimit => u64::from(SHARED_APERTURE_HI),
            Special::PrivateBase | Special::PrivateLimit => u64::from(PRIVATE_APERTURE_HI),
            Special::FlatScratchBaseLo => u64::from(self.sgpr[usize::from(FLAT_SCRATCH)]),
            Special::FlatScratchBaseHi => u64::from(self.sgpr[usize::from(FLAT_SCRATCH) + 1]),
            Special::Vccz => u64::from(self.vcc() == 0),
            Special::Execz => u64::from(self.exec() == 0),
            Special::Scc => u64::from(self.scc),
            Special::PopsExitingWaveId | Special::LdsDirect | Special::Reserved(_) => 0,
        }
    }

    /// Writes a scalar destination of `dwords` registers (writes to `null` are dropped).
    pub fn write_scalar(&mut self, o: &Operand, v: u64) -> Result<(), Fault> {
        match o.kind {
            OperandKind::Sgpr(125) => Ok(()),
            OperandKind::Sgpr(r) => {
                check_sgpr(r, o.dwords.max(1))?;
                self.sgpr[usize::from(r)] = v as u32;
                if o.dwords >= 2 {
                    self.sgpr[usize::from(r) + 1] = (v >> 32) as u32;
                }
                Ok(())
            }
            OperandKind::None => Ok(()),
            _ => Err(Fault::Register(
                "scalar destination is not a scalar register".into(),
            )),
        }
    }

    /// The vector register file an operand names, and its first index (checked for `dwords`).
    pub fn vreg(&self, o: &Operand) -> Result<(&[[u32; 64]], usize), Fault> {
        match o.kind {
            OperandKind::Vgpr(r) => {
                check_vgpr(r, o.dwords)?;
                Ok((&self.vgpr, usize::from(r)))
            }
            OperandKind::Agpr(r) => {
                check_vgpr(r, o.dwords)?;
                Ok((&self.agpr, usize::from(r)))
            }
            _ => Err(Fault::Register("not a vector register".into())),
        }
    }

    /// Mutable access to the vector register file an operand names.
    pub fn vreg_mut(&mut self, o: &Operand) -> Result<(&mut [[u32; 64]], usize), Fault> {
        match o.kind {
            OperandKind::Vgpr(r) => {
                check_vgpr(r, o.dwords)?;
                Ok((&mut self.vgpr, usize::from(r)))
            }
            OperandKind::Agpr(r) => {
                check_vgpr(r, o.dwords)?;
                Ok((&mut self.agpr, usize::from(r)))
            }
            _ => Err(Fault::Register("not a vector register".into())),
        }
    }
}

fn check_sgpr(r: u8, n: u8) -> Result<(), Fault> {
    if usize::from(r) + usize::from(n) <= 128 {
        Ok(())
    } else {
        Err(Fault::Register(format!("s{r} (+{n})")))
    }
}

fn check_vgpr(r: u8, n: u8) -> Result<(), Fault> {
    if usize::from(r) + usize::from(n.max(1)) <= VGPRS {
        Ok(())
    } else {
        Err(Fault::Register(format!("v{r} (+{n})")))
    }
}

/// Sets up wave `index` of workgroup `group` as the hardware does before the first instruction.
pub(crate) fn initialize(
    w: &mut Wave,
    target: Target,
    d: &Dispatch<'_>,
    l: &LaunchState,
    group: [u32; 3],
    index: u32,
) {
    let desc = &d.descriptor;
    w.sgpr = [0; 128];
    w.scc = false;
    w.pc = d.entry;
    w.state = State::Running;
    let r1 = desc.compute_pgm_rsrc1;
    w.mode = (r1 >> 12 & 0xf)
        | (r1 >> 16 & 0xf) << 4
        | (r1 >> 21 & 1) << 8
        | (r1 >> 23 & 1) << 9
        | (r1 >> 26 & 1) << 23;
    let wave_offset = u64::from(index) * l.scratch.per_wave();

    // User SGPRs, in the order AMDGPUUsage gives, each present if its property bit is set.
    let props = desc.kernel_code_properties;
    let mut user: Vec<u32> = Vec::with_capacity(16);
    let push64 = |u: &mut Vec<u32>, v: u64| {
        u.push(v as u32);
        u.push((v >> 32) as u32);
    };
    if props & 1 != 0 {
        user.extend_from_slice(&private_segment_buffer(l));
    }
    if props & 2 != 0 {
        push64(&mut user, l.packet_address);
    }
    if props & 4 != 0 {
        push64(&mut user, l.queue_address);
    }
    if props & 8 != 0 {
        push64(&mut user, l.kernarg_address);
    }
    if props & 16 != 0 {
        push64(&mut user, l.dispatch_id);
    }
    if props & 32 != 0 {
        push64(&mut user, l.scratch.base);
    }
    let preload_len = u32::from(desc.kernarg_preload & 0x7f);
    let preload_off = u32::from(desc.kernarg_preload >> 7);
    for k in 0..preload_len {
        let o = ((preload_off + k) * 4) as usize;
        let v = d
            .kernarg
            .get(o..o + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        user.push(v);
    }
    if props & 64 != 0 {
        user.push(l.scratch.per_lane);
    }
    let n_user = (desc.user_sgpr_count() as usize).min(16);
    for (k, v) in user.iter().take(n_user).enumerate() {
        w.sgpr[k] = *v;
    }

    // System SGPRs follow the user SGPRs.
    let r2 = desc.compute_pgm_rsrc2;
    let mut s = desc.user_sgpr_count() as usize;
    let mut put = |w: &mut Wave, v: u32| {
        if s < 102 {
            w.sgpr[s] = v;
        }
        s += 1;
    };
    for (bit, id) in [(7, group[0]), (8, group[1]), (9, group[2])] {
        if r2 >> bit & 1 != 0 {
            put(w, id);
        }
    }
    if r2 >> 10 & 1 != 0 {
        let first = u32::from(index == 0) << 31;
        put(w, first | (l.waves_per_group & 0x3f));
    }
    if desc.private_segment_enabled() && !target.architected_flat_scratch() {
        put(w, wave_offset as u32);
    }
    if target.architected_flat_scratch() && desc.private_segment_enabled() && l.scratch.base != 0 {
        w.set_sgpr64(FLAT_SCRATCH, l.scratch.base + wave_offset);
    }

    // EXEC covers the lanes that have work-items; v0 holds the packed work-item ids.
    let first_thread = index * 64;
    let lanes = l.threads_per_group.saturating_sub(first_thread).min(64);
    w.set_exec(if lanes == 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    });
    w.sgpr[usize::from(M0)] = 0;
    let [sx, sy, _] = d.workgroup_size;
    let ids = desc.vgpr_workitem_ids();
    for lane in 0..64u32 {
        let t = first_thread + lane;
        let (x, y, z) = (t % sx, t / sx % sy, t / (sx * sy));
        let y = if ids >= 1 { y } else { 0 };
        let z = if ids >= 2 { z } else { 0 };
        w.vgpr[0][lane as usize] = if t < l.threads_per_group {
            x | y << 10 | z << 20
        } else {
            0
        };
    }
}

/// The scratch buffer resource (V#) handed to kernels that use buffer instructions for scratch:
/// swizzled, one dword element per lane, 64-lane index stride, lane index added to the index.
fn private_segment_buffer(l: &LaunchState) -> [u32; 4] {
    let base = l.scratch.base;
    let word1 = (base >> 32) as u32 & 0xffff | 1 << 31; // swizzle enable
    let word3 = 1 << 19 | 3 << 21 | 1 << 23; // element size 4, index stride 64, add tid
    [base as u32, word1, u32::MAX, word3]
}
