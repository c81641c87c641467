//! Wave state: registers, PC, MODE and scheduling state, for waves of 32 or 64 lanes.
//!
//! The scalar register file is indexed as GFX9 encodes it; RDNA's decoder maps its encodings onto
//! the same indices, so both families share this state.

use super::operand::{EXEC, FLAT_SCRATCH, Operand, OperandKind, Special, VCC};
use super::store_data::DataInFlight;
use super::waitcnt::{Footprint, Outstanding, RegisterFile};
use super::{LaunchState, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI};
use crate::dispatch::Dispatch;
use crate::error::Fault;
use crate::timing::model::WaveClock;

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

/// One wave: up to 64 lanes of vector registers, the scalar register file, SCC, PC and MODE.
pub(crate) struct Wave {
    /// Scalar register file indexed by GFX9 source code: s0-s101, flat_scratch (102; s102-s105 on
    /// RDNA), xnack_mask (104), vcc (106), ttmp0-15 (108), m0 (124), null (125), exec (126).
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
    /// Lanes of the wave: 64, or 32 for RDNA wave32 code (EXEC and VCC are then their low halves).
    pub lanes: u32,
    /// The scratch base the hardware holds outside the SGPR file (RDNA); `None` when FLAT_SCRATCH
    /// is the SGPR pair 102-103 (GFX9).
    pub architected_scratch: Option<u64>,
    /// The memory accesses the wave has issued and not waited for (the waitcnt check).
    pub outstanding: Outstanding,
    /// The stores whose data registers the hardware may still be reading (the waitcnt check).
    pub store_data: DataInFlight,
    /// Where the wave stands in time (timing mode).
    pub clock: WaveClock,
}

impl Wave {
    /// A wave holding `rows` VGPRs and AGPRs per lane (more are added as its code names them;
    /// see [`Wave::hold`]).
    pub fn new(rows: VectorRows) -> Wave {
        Wave {
            sgpr: [0; 128],
            vgpr: vec![[0; 64]; usize::from(rows.vgprs)],
            agpr: vec![[0; 64]; usize::from(rows.agprs)],
            scc: false,
            pc: 0,
            mode: 0,
            state: State::Done,
            lanes: 64,
            architected_scratch: None,
            outstanding: Outstanding::default(),
            store_data: DataInFlight::default(),
            clock: WaveClock::default(),
        }
    }

    /// Grows the register files to hold at least `rows`: an instruction's registers, before it
    /// runs. The files start at what the descriptor allocates; registers a kernel names outside
    /// that allocation are added rather than refused.
    pub fn hold(&mut self, rows: VectorRows) {
        if usize::from(rows.vgprs) > self.vgpr.len() {
            self.vgpr.resize(usize::from(rows.vgprs), [0; 64]);
        }
        if usize::from(rows.agprs) > self.agpr.len() {
            self.agpr.resize(usize::from(rows.agprs), [0; 64]);
        }
    }

    /// Bit mask of the wave's lanes.
    pub fn lane_mask(&self) -> u64 {
        if self.lanes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.lanes) - 1
        }
    }

    /// EXEC (in wave32 EXEC_LO).
    pub fn exec(&self) -> u64 {
        self.sgpr64(EXEC) & self.lane_mask()
    }

    /// Writes EXEC (in wave32 EXEC_LO only).
    pub fn set_exec(&mut self, v: u64) {
        self.write_mask(EXEC, v);
    }

    /// VCC (in wave32 VCC_LO).
    pub fn vcc(&self) -> u64 {
        self.sgpr64(VCC) & self.lane_mask()
    }

    /// Writes a lane mask to the register(s) at `i`: one SGPR in wave32, a pair in wave64.
    pub fn write_mask(&mut self, i: u8, v: u64) {
        if self.lanes > 32 {
            self.set_sgpr64(i, v);
        } else {
            self.sgpr[usize::from(i)] = v as u32;
        }
    }

    /// The wave's FLAT_SCRATCH: the architected base, else the SGPR pair 102-103.
    pub fn flat_scratch(&self) -> u64 {
        self.architected_scratch
            .unwrap_or_else(|| self.sgpr64(FLAT_SCRATCH))
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
            OperandKind::Special(s) => Ok(self.special(s, o.dwords >= 2)),
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

    /// A special source's value, read as a 64-bit operand when `wide`. The apertures' bases and
    /// limits are 64-bit addresses whose high dword alone a 32-bit read gives (AMDGPUUsage:
    /// `src_shared_base` is the high half of the LDS aperture's base; LLVM reads the whole base
    /// with `s_mov_b64 s[n:n+1], src_shared_base`).
    pub fn special(&self, s: Special, wide: bool) -> u64 {
        let aperture = |hi: u32, limit: bool| {
            if wide {
                u64::from(hi) << 32 | if limit { 0xffff_ffff } else { 0 }
            } else {
                u64::from(hi)
            }
        };
        match s {
            Special::SharedBase => aperture(SHARED_APERTURE_HI, false),
            Special::SharedLimit => aperture(SHARED_APERTURE_HI, true),
            Special::PrivateBase => aperture(PRIVATE_APERTURE_HI, false),
            Special::PrivateLimit => aperture(PRIVATE_APERTURE_HI, true),
            Special::FlatScratchBaseLo => self.flat_scratch() & 0xffff_ffff,
            Special::FlatScratchBaseHi => self.flat_scratch() >> 32,
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
                check_vgpr(r, o.dwords, self.vgpr.len(), "v")?;
                Ok((&self.vgpr, usize::from(r)))
            }
            OperandKind::Agpr(r) => {
                check_vgpr(r, o.dwords, self.agpr.len(), "a")?;
                Ok((&self.agpr, usize::from(r)))
            }
            _ => Err(Fault::Register("not a vector register".into())),
        }
    }

    /// Mutable access to the vector register file an operand names.
    pub fn vreg_mut(&mut self, o: &Operand) -> Result<(&mut [[u32; 64]], usize), Fault> {
        match o.kind {
            OperandKind::Vgpr(r) => {
                check_vgpr(r, o.dwords, self.vgpr.len(), "v")?;
                Ok((&mut self.vgpr, usize::from(r)))
            }
            OperandKind::Agpr(r) => {
                check_vgpr(r, o.dwords, self.agpr.len(), "a")?;
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

/// Checks that registers `r..r + n` of a file of `held` rows exist. Registers an instruction
/// names are always held (the machine grows the files first), so a miss is an indexed access
/// (GPR index mode, `v_movrel*`) past what the kernel allocates: on hardware another wave's
/// registers or nothing.
fn check_vgpr(r: u8, n: u8, held: usize, file: &str) -> Result<(), Fault> {
    let end = usize::from(r) + usize::from(n.max(1));
    if end > VGPRS {
        Err(Fault::Register(format!("{file}{r} (+{n})")))
    } else if end > held {
        Err(Fault::Register(format!(
            "{file}{r} (+{n}), past the {held} registers of the wave's allocation"
        )))
    } else {
        Ok(())
    }
}

/// Vector registers per lane: how many VGPRs and AGPRs a wave holds or an instruction names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorRows {
    /// Architected VGPRs.
    pub vgprs: u16,
    /// Accumulation registers.
    pub agprs: u16,
}

impl VectorRows {
    /// The rows an instruction's registers (`footprint`) reach.
    pub fn covering(footprint: &Footprint) -> VectorRows {
        let mut rows = VectorRows::default();
        for r in footprint.ranges() {
            let end = (u16::from(r.first) + u16::from(r.count)).min(VGPRS as u16);
            match r.file {
                RegisterFile::Vector => rows.vgprs = rows.vgprs.max(end),
                RegisterFile::Accumulation => rows.agprs = rows.agprs.max(end),
                RegisterFile::Scalar => {}
            }
        }
        rows
    }

    /// What a kernel's descriptor allocates: GRANULATED_WORKITEM_VGPR_COUNT in COMPUTE_PGM_RSRC1
    /// (granule 8; 4 for RDNA wave64). On CDNA the count covers VGPRs and AGPRs together,
    /// the AGPRs from ACCUM_OFFSET (COMPUTE_PGM_RSRC3) on.
    pub fn allocated(desc: &crate::dispatch::KernelDescriptor, rdna: bool, wave32: bool) -> Self {
        let granule = if rdna && !wave32 { 4 } else { 8 };
        let total = ((desc.compute_pgm_rsrc1 & 0x3f) + 1) * granule;
        let clamp = |n: u32| n.min(VGPRS as u32) as u16;
        if rdna {
            return VectorRows {
                vgprs: clamp(total),
                agprs: 0,
            };
        }
        let accum_offset = ((desc.compute_pgm_rsrc3 & 0x3f) + 1) * 4;
        VectorRows {
            vgprs: clamp(total.min(accum_offset.max(4))),
            agprs: clamp(total.saturating_sub(accum_offset)),
        }
    }
}

/// Bytes of the compatibility prologue at the entry of a kernel whose arguments are preloaded
/// into SGPRs. AMDGPUUsage ("Preloaded Kernel Arguments"): when KERNARG_PRELOAD_SPEC_LENGTH is
/// nonzero, CP firmware that supports preloading adds 256 bytes to the entry offset, skipping the
/// prologue the compiler puts there for firmware that does not (it loads the same dwords with
/// `s_load` and branches to entry + 256).
pub(crate) const KERNARG_PRELOAD_PROLOGUE_BYTES: u64 = 256;

/// The parts of the initial state ("Initial Kernel Execution State" in LLVM AMDGPUUsage) that do
/// not depend on the ISA family: registers cleared, PC at the entry (past the preload prologue when
/// kernel arguments are preloaded, as current firmware starts the wave), MODE from
/// COMPUTE_PGM_RSRC1, the user SGPRs, EXEC covering the lanes that have work-items, and v0 holding
/// the packed work-item ids. Returns the number of user SGPRs (the system SGPRs follow them).
pub(crate) fn initialize_common(
    w: &mut Wave,
    d: &Dispatch<'_>,
    l: &LaunchState,
    index: u32,
) -> usize {
    let desc = &d.descriptor;
    w.sgpr = [0; 128];
    w.scc = false;
    let preload_len = u32::from(desc.kernarg_preload & 0x7f);
    let preload_off = u32::from(desc.kernarg_preload >> 7);
    w.pc = if preload_len > 0 {
        d.entry.wrapping_add(KERNARG_PRELOAD_PROLOGUE_BYTES)
    } else {
        d.entry
    };
    w.state = State::Running;
    w.architected_scratch = None;
    let r1 = desc.compute_pgm_rsrc1;
    w.mode = (r1 >> 12 & 0xf)
        | (r1 >> 16 & 0xf) << 4
        | (r1 >> 21 & 1) << 8
        | (r1 >> 23 & 1) << 9
        | (r1 >> 26 & 1) << 23;

    // User SGPRs, in the order AMDGPUUsage's "SGPR Register Set Up Order" gives, each present if
    // its property bit is set; the preloaded kernarg dwords (KERNARG_PRELOAD_SPEC_LENGTH of them,
    // from dword KERNARG_PRELOAD_SPEC_OFFSET of the kernarg segment) follow the flat scratch init
    // and precede the private segment size. Only the first 16 user SGPRs are initialised.
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

    // EXEC covers the lanes that have work-items; v0 holds the packed work-item ids.
    let width = w.lanes;
    let first_thread = index * width;
    let lanes = l.threads_per_group.saturating_sub(first_thread).min(width);
    w.set_exec(if lanes == 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    });
    let [sx, sy, _] = d.workgroup_size;
    let ids = desc.vgpr_workitem_ids();
    for lane in 0..64u32 {
        let t = first_thread + lane;
        let (x, y, z) = (t % sx, t / sx % sy, t / (sx * sy));
        let y = if ids >= 1 { y } else { 0 };
        let z = if ids >= 2 { z } else { 0 };
        w.vgpr[0][lane as usize] = if lane < width && t < l.threads_per_group {
            x | y << 10 | z << 20
        } else {
            0
        };
    }
    desc.user_sgpr_count() as usize
}

/// The scratch buffer resource (V#) handed to kernels that use buffer instructions for scratch:
/// swizzled, one dword element per lane, 64-lane index stride, lane index added to the index.
fn private_segment_buffer(l: &LaunchState) -> [u32; 4] {
    let base = l.scratch.base;
    let word1 = (base >> 32) as u32 & 0xffff | 1 << 31; // swizzle enable
    let word3 = 1 << 19 | 3 << 21 | 1 << 23; // element size 4, index stride 64, add tid
    [base as u32, word1, u32::MAX, word3]
}
