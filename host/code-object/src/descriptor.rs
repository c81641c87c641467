//! Kernel descriptors: the 64-byte `<kernel>.kd` records the command processor reads to set
//! up a wave.
//!
//! Byte layout and bit fields follow LLVM AMDGPUUsage, "Kernel Descriptor" (code object v3+)
//! and the `COMPUTE_PGM_RSRC1/2/3` tables, as mirrored in LLVM's
//! `llvm/Support/AMDHSAKernelDescriptor.h`.

use super::error::{CodeObjectError, Result};

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

/// A kernel descriptor with its raw words; the decoded views are methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// Static LDS bytes per workgroup (byte 0).
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item (byte 4).
    pub private_segment_fixed_size: u32,
    /// Kernarg segment bytes (byte 8).
    pub kernarg_size: u32,
    /// Offset of the first instruction from the descriptor's own address (byte 16).
    pub kernel_code_entry_byte_offset: i64,
    /// `COMPUTE_PGM_RSRC3` (byte 44): gfx90a+ and gfx10+ only.
    pub compute_pgm_rsrc3: u32,
    /// `COMPUTE_PGM_RSRC1` (byte 48).
    pub compute_pgm_rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2` (byte 52).
    pub compute_pgm_rsrc2: u32,
    /// Kernel code properties (byte 56): which user SGPRs are set up, wave32.
    pub kernel_code_properties: u16,
    /// Kernarg preload specification (byte 58).
    pub kernarg_preload: u16,
}

fn bits(word: u32, shift: u32, width: u32) -> u32 {
    (word >> shift) & ((1u32 << width) - 1)
}

fn bit(word: u32, shift: u32) -> bool {
    bits(word, shift, 1) == 1
}

impl KernelDescriptor {
    /// Decodes a descriptor from exactly [`KERNEL_DESCRIPTOR_SIZE`] bytes or more (the rest is
    /// ignored).
    pub fn parse(bytes: &[u8]) -> Result<KernelDescriptor> {
        let bytes: &[u8; KERNEL_DESCRIPTOR_SIZE] = bytes
            .get(..KERNEL_DESCRIPTOR_SIZE)
            .and_then(|b| b.try_into().ok())
            .ok_or(CodeObjectError::Truncated {
                what: "kernel descriptor",
                needed: KERNEL_DESCRIPTOR_SIZE as u64,
                available: bytes.len() as u64,
            })?;
        let u32_at = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&bytes[16..24]);
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16_at(56),
            kernarg_preload: u16_at(58),
        })
    }

    /// Encodes the descriptor back into its 64-byte form (reserved bytes zero).
    pub fn to_bytes(&self) -> [u8; KERNEL_DESCRIPTOR_SIZE] {
        let mut out = [0u8; KERNEL_DESCRIPTOR_SIZE];
        out[0..4].copy_from_slice(&self.group_segment_fixed_size.to_le_bytes());
        out[4..8].copy_from_slice(&self.private_segment_fixed_size.to_le_bytes());
        out[8..12].copy_from_slice(&self.kernarg_size.to_le_bytes());
        out[16..24].copy_from_slice(&self.kernel_code_entry_byte_offset.to_le_bytes());
        out[44..48].copy_from_slice(&self.compute_pgm_rsrc3.to_le_bytes());
        out[48..52].copy_from_slice(&self.compute_pgm_rsrc1.to_le_bytes());
        out[52..56].copy_from_slice(&self.compute_pgm_rsrc2.to_le_bytes());
        out[56..58].copy_from_slice(&self.kernel_code_properties.to_le_bytes());
        out[58..60].copy_from_slice(&self.kernarg_preload.to_le_bytes());
        out
    }

    /// Decoded `COMPUTE_PGM_RSRC1`.
    pub fn rsrc1(&self) -> PgmRsrc1 {
        let w = self.compute_pgm_rsrc1;
        PgmRsrc1 {
            granulated_workitem_vgpr_count: bits(w, 0, 6),
            granulated_wavefront_sgpr_count: bits(w, 6, 4),
            priority: bits(w, 10, 2),
            float_round_mode_32: FloatRoundMode::from_bits(bits(w, 12, 2)),
            float_round_mode_16_64: FloatRoundMode::from_bits(bits(w, 14, 2)),
            float_denorm_mode_32: FloatDenormMode::from_bits(bits(w, 16, 2)),
            float_denorm_mode_16_64: FloatDenormMode::from_bits(bits(w, 18, 2)),
            priv_: bit(w, 20),
            dx10_clamp: bit(w, 21),
            debug_mode: bit(w, 22),
            ieee_mode: bit(w, 23),
            bulky: bit(w, 24),
            cdbg_user: bit(w, 25),
            fp16_overflow: bit(w, 26),
            wgp_mode: bit(w, 29),
            mem_ordered: bit(w, 30),
            forward_progress: bit(w, 31),
        }
    }

    /// Decoded `COMPUTE_PGM_RSRC2`.
    pub fn rsrc2(&self) -> PgmRsrc2 {
        let w = self.compute_pgm_rsrc2;
        PgmRsrc2 {
            enable_private_segment: bit(w, 0),
            user_sgpr_count: bits(w, 1, 5),
            enable_trap_handler: bit(w, 6),
            enable_sgpr_workgroup_id_x: bit(w, 7),
            enable_sgpr_workgroup_id_y: bit(w, 8),
            enable_sgpr_workgroup_id_z: bit(w, 9),
            enable_sgpr_workgroup_info: bit(w, 10),
            enable_vgpr_workitem_id: WorkitemIdVgprs::from_bits(bits(w, 11, 2)),
            enable_exception_address_watch: bit(w, 13),
            enable_exception_memory: bit(w, 14),
            granulated_lds_size: bits(w, 15, 9),
            enable_exceptions_fp: bits(w, 24, 7),
        }
    }

    /// `COMPUTE_PGM_RSRC3` as gfx90a/gfx94x/gfx95x define it; meaningless on other targets.
    pub fn rsrc3_cdna(&self) -> PgmRsrc3Cdna {
        let w = self.compute_pgm_rsrc3;
        PgmRsrc3Cdna {
            accum_offset: (bits(w, 0, 6) + 1) * 4,
            tg_split: bit(w, 16),
        }
    }

    /// `COMPUTE_PGM_RSRC3` as gfx10-gfx12 define it; meaningless on other targets.
    pub fn rsrc3_rdna(&self) -> PgmRsrc3Rdna {
        let w = self.compute_pgm_rsrc3;
        PgmRsrc3Rdna {
            shared_vgpr_count: bits(w, 0, 4),
            inst_pref_size_gfx11: bits(w, 4, 6),
            inst_pref_size_gfx12: bits(w, 4, 8),
            trap_on_start: bit(w, 10),
            trap_on_end: bit(w, 11),
            glg_en: bit(w, 13),
            image_op: bit(w, 31),
        }
    }

    /// Decoded kernel code properties.
    pub fn code_properties(&self) -> KernelCodeProperties {
        let w = u32::from(self.kernel_code_properties);
        KernelCodeProperties {
            enable_sgpr_private_segment_buffer: bit(w, 0),
            enable_sgpr_dispatch_ptr: bit(w, 1),
            enable_sgpr_queue_ptr: bit(w, 2),
            enable_sgpr_kernarg_segment_ptr: bit(w, 3),
            enable_sgpr_dispatch_id: bit(w, 4),
            enable_sgpr_flat_scratch_init: bit(w, 5),
            enable_sgpr_private_segment_size: bit(w, 6),
            enable_wavefront_size32: bit(w, 10),
            uses_dynamic_stack: bit(w, 11),
        }
    }

    /// Decoded kernarg preload specification (gfx90a+ kernarg preloading into SGPRs).
    pub fn kernarg_preload_spec(&self) -> KernargPreload {
        let w = u32::from(self.kernarg_preload);
        KernargPreload {
            length_dwords: bits(w, 0, 7),
            offset_dwords: bits(w, 7, 9),
        }
    }

    /// Wave size the descriptor asks for: 32 when `ENABLE_WAVEFRONT_SIZE32` is set, else 64.
    pub fn wave_size(&self) -> u32 {
        if self.code_properties().enable_wavefront_size32 {
            32
        } else {
            64
        }
    }

    /// The user SGPRs the command processor loads, in the order it loads them from s0 on
    /// (AMDGPUUsage, "Initial Kernel Execution State"), followed by preloaded kernargs.
    pub fn user_sgprs(&self) -> Vec<UserSgpr> {
        let p = self.code_properties();
        let enabled = [
            (
                p.enable_sgpr_private_segment_buffer,
                UserSgprKind::PrivateSegmentBuffer,
                4,
            ),
            (p.enable_sgpr_dispatch_ptr, UserSgprKind::DispatchPtr, 2),
            (p.enable_sgpr_queue_ptr, UserSgprKind::QueuePtr, 2),
            (
                p.enable_sgpr_kernarg_segment_ptr,
                UserSgprKind::KernargSegmentPtr,
                2,
            ),
            (p.enable_sgpr_dispatch_id, UserSgprKind::DispatchId, 2),
            (
                p.enable_sgpr_flat_scratch_init,
                UserSgprKind::FlatScratchInit,
                2,
            ),
            (
                p.enable_sgpr_private_segment_size,
                UserSgprKind::PrivateSegmentSize,
                1,
            ),
        ];
        let preload = self.kernarg_preload_spec().length_dwords;
        let mut next = 0;
        let mut out = Vec::new();
        let preloaded = (preload > 0, UserSgprKind::PreloadedKernargs, preload);
        for (on, kind, count) in enabled.into_iter().chain(std::iter::once(preloaded)) {
            if on {
                out.push(UserSgpr {
                    kind,
                    first: next,
                    count,
                });
                next += count;
            }
        }
        out
    }
}

/// Rounding mode field values of `COMPUTE_PGM_RSRC1` (hardware encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatRoundMode {
    /// Round to nearest even (0).
    NearEven,
    /// Round toward +infinity (1).
    PlusInfinity,
    /// Round toward -infinity (2).
    MinusInfinity,
    /// Round toward zero (3).
    Zero,
}

impl FloatRoundMode {
    fn from_bits(value: u32) -> FloatRoundMode {
        match value {
            0 => FloatRoundMode::NearEven,
            1 => FloatRoundMode::PlusInfinity,
            2 => FloatRoundMode::MinusInfinity,
            _ => FloatRoundMode::Zero,
        }
    }
}

/// Denormal mode field values of `COMPUTE_PGM_RSRC1` (hardware encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatDenormMode {
    /// Flush source and destination denormals (0).
    FlushSrcDst,
    /// Flush destination denormals only (1).
    FlushDst,
    /// Flush source denormals only (2).
    FlushSrc,
    /// Keep denormals (3).
    FlushNone,
}

impl FloatDenormMode {
    fn from_bits(value: u32) -> FloatDenormMode {
        match value {
            0 => FloatDenormMode::FlushSrcDst,
            1 => FloatDenormMode::FlushDst,
            2 => FloatDenormMode::FlushSrc,
            _ => FloatDenormMode::FlushNone,
        }
    }
}

/// Which work-item ids the hardware writes into v0 (and v1, v2 unless packed) at wave start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkitemIdVgprs {
    /// X only (0).
    X,
    /// X and Y (1).
    XY,
    /// X, Y and Z (2).
    XYZ,
    /// Undefined (3).
    Undefined,
}

impl WorkitemIdVgprs {
    fn from_bits(value: u32) -> WorkitemIdVgprs {
        match value {
            0 => WorkitemIdVgprs::X,
            1 => WorkitemIdVgprs::XY,
            2 => WorkitemIdVgprs::XYZ,
            _ => WorkitemIdVgprs::Undefined,
        }
    }
}

/// Fields of `COMPUTE_PGM_RSRC1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmRsrc1 {
    /// VGPR blocks minus one, in the target's VGPR encoding granule (bits 0-5).
    pub granulated_workitem_vgpr_count: u32,
    /// SGPR blocks minus one (bits 6-9; gfx10+ writes 0).
    pub granulated_wavefront_sgpr_count: u32,
    /// Wave priority (bits 10-11).
    pub priority: u32,
    /// f32 rounding mode (bits 12-13).
    pub float_round_mode_32: FloatRoundMode,
    /// f16/f64 rounding mode (bits 14-15).
    pub float_round_mode_16_64: FloatRoundMode,
    /// f32 denormal mode (bits 16-17).
    pub float_denorm_mode_32: FloatDenormMode,
    /// f16/f64 denormal mode (bits 18-19).
    pub float_denorm_mode_16_64: FloatDenormMode,
    /// Start the wave in privileged mode (bit 20).
    pub priv_: bool,
    /// DX10 clamp mode on gfx6-gfx11 (bit 21); on gfx12 this bit is `WG_RR_EN`.
    pub dx10_clamp: bool,
    /// Start in debug mode (bit 22).
    pub debug_mode: bool,
    /// IEEE mode on gfx6-gfx11 (bit 23); on gfx12 this bit is `DISABLE_PERF`.
    pub ieee_mode: bool,
    /// Bulky mode (bit 24).
    pub bulky: bool,
    /// Debugger user flag (bit 25).
    pub cdbg_user: bool,
    /// f16 overflow clamps to max finite on gfx9+ (bit 26).
    pub fp16_overflow: bool,
    /// Workgroup processor mode on gfx10+ (bit 29).
    pub wgp_mode: bool,
    /// Memory operations return in order on gfx10+ (bit 30).
    pub mem_ordered: bool,
    /// Forward progress guarantee on gfx10+ (bit 31).
    pub forward_progress: bool,
}

/// Fields of `COMPUTE_PGM_RSRC2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmRsrc2 {
    /// Scratch is set up, with the wave's scratch offset in a system SGPR (bit 0).
    pub enable_private_segment: bool,
    /// Number of user SGPRs loaded at wave start (bits 1-5).
    pub user_sgpr_count: u32,
    /// Trap handler present on gfx6-gfx11 (bit 6); on gfx12 `ENABLE_DYNAMIC_VGPR`.
    pub enable_trap_handler: bool,
    /// Workgroup id X in a system SGPR (bit 7).
    pub enable_sgpr_workgroup_id_x: bool,
    /// Workgroup id Y in a system SGPR (bit 8).
    pub enable_sgpr_workgroup_id_y: bool,
    /// Workgroup id Z in a system SGPR (bit 9).
    pub enable_sgpr_workgroup_id_z: bool,
    /// Workgroup info in a system SGPR (bit 10).
    pub enable_sgpr_workgroup_info: bool,
    /// Work-item ids written to VGPRs (bits 11-12).
    pub enable_vgpr_workitem_id: WorkitemIdVgprs,
    /// Address watch exception (bit 13).
    pub enable_exception_address_watch: bool,
    /// Memory violation exception (bit 14).
    pub enable_exception_memory: bool,
    /// LDS size in hardware granules (bits 15-23), written by the CP at dispatch.
    pub granulated_lds_size: u32,
    /// Floating-point and integer exception enables, bits 24-30 as a 7-bit mask.
    pub enable_exceptions_fp: u32,
}

/// `COMPUTE_PGM_RSRC3` on gfx90a, gfx94x and gfx95x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmRsrc3Cdna {
    /// First AGPR's index in the unified register file: `(ACCUM_OFFSET + 1) * 4`.
    pub accum_offset: u32,
    /// Threadgroup split mode (bit 16).
    pub tg_split: bool,
}

/// `COMPUTE_PGM_RSRC3` on gfx10, gfx11 and gfx12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmRsrc3Rdna {
    /// Shared VGPRs in wave64 on gfx10-gfx11 (bits 0-3).
    pub shared_vgpr_count: u32,
    /// Instruction prefetch size on gfx11 (bits 4-9).
    pub inst_pref_size_gfx11: u32,
    /// Instruction prefetch size on gfx12 (bits 4-11).
    pub inst_pref_size_gfx12: u32,
    /// Trap on wave start, gfx11 (bit 10).
    pub trap_on_start: bool,
    /// Trap on wave end, gfx11 (bit 11).
    pub trap_on_end: bool,
    /// Global launch guard, gfx12 (bit 13).
    pub glg_en: bool,
    /// Kernel uses image instructions, gfx11+ (bit 31).
    pub image_op: bool,
}

/// Kernel code properties: which user SGPRs are loaded, and the wave size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelCodeProperties {
    /// 4 SGPRs: scratch buffer resource (bit 0).
    pub enable_sgpr_private_segment_buffer: bool,
    /// 2 SGPRs: pointer to the dispatch packet (bit 1).
    pub enable_sgpr_dispatch_ptr: bool,
    /// 2 SGPRs: pointer to the queue (bit 2).
    pub enable_sgpr_queue_ptr: bool,
    /// 2 SGPRs: pointer to the kernarg segment (bit 3).
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// 2 SGPRs: 64-bit dispatch id (bit 4).
    pub enable_sgpr_dispatch_id: bool,
    /// 2 SGPRs: flat scratch initialisation (bit 5).
    pub enable_sgpr_flat_scratch_init: bool,
    /// 1 SGPR: scratch bytes per work-item (bit 6).
    pub enable_sgpr_private_segment_size: bool,
    /// Run in wave32 (bit 10, gfx10+).
    pub enable_wavefront_size32: bool,
    /// Dynamically sized stack (bit 11).
    pub uses_dynamic_stack: bool,
}

/// Kernarg preloading: which kernarg dwords the CP copies into user SGPRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernargPreload {
    /// Number of dwords preloaded (bits 0-6).
    pub length_dwords: u32,
    /// First kernarg dword preloaded (bits 7-15).
    pub offset_dwords: u32,
}

/// What a run of user SGPRs holds at wave start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserSgprKind {
    /// Scratch buffer resource descriptor.
    PrivateSegmentBuffer,
    /// Dispatch packet address.
    DispatchPtr,
    /// Queue address.
    QueuePtr,
    /// Kernarg segment address.
    KernargSegmentPtr,
    /// Dispatch id.
    DispatchId,
    /// Flat scratch base and size.
    FlatScratchInit,
    /// Scratch bytes per work-item.
    PrivateSegmentSize,
    /// Kernarg dwords copied into SGPRs.
    PreloadedKernargs,
}

/// One run of user SGPRs: `count` registers from `s[first]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserSgpr {
    /// What the registers hold.
    pub kind: UserSgprKind,
    /// First SGPR index.
    pub first: u32,
    /// Number of SGPRs.
    pub count: u32,
}
