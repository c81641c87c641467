//! Occupancy: how many waves of a kernel fit on one SIMD, and which resource stops more.
//!
//! The per-target numbers come from LLVM's `AMDGPUBaseInfo.cpp` (`getTotalNumVGPRs`,
//! `getVGPRAllocGranule`, `getMaxWavesPerEU`, `getEUsPerCU`, `getLocalMemorySize`,
//! `getMaxWorkGroupsPerCU`, `getOccupancyWithNumSGPRs`) and were checked against the
//! `; Occupancy:` that LLVM 22's `llc` prints for kernels with chosen register and LDS use
//! (see the `code_object_occupancy` tests). LDS allocation granules were read off
//! `llc -mtriple=amdgcn-mesa-mesa3d`'s `granulated_lds_size` for sizes around each boundary.
//!
//! The model counts whole workgroups, since all waves of a workgroup must be resident on one
//! CU (gfx9) or WGP (gfx10+, the default WGP mode) at once: a workgroup of 8 waves with room
//! for 5 waves per SIMD on 4 SIMDs fits once, giving 2 waves per SIMD on average, where LLVM
//! reports 5. For workgroups of 1, 2 or 4 waves both agree.

use thiserror::Error;

use super::metadata::KernelMetadata;

/// The vector register file for one wave size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VgprFile {
    /// VGPRs per lane the SIMD can hand out to all its waves together.
    pub total: u32,
    /// Allocation granule: a wave's VGPR count is rounded up to a multiple of this.
    pub granule: u32,
}

/// Occupancy-relevant facts of one processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetLimits {
    /// Processor name.
    pub processor: &'static str,
    /// Register file in wave64, if the processor runs wave64.
    pub wave64: Option<VgprFile>,
    /// Register file in wave32, if the processor runs wave32.
    pub wave32: Option<VgprFile>,
    /// VGPRs (plus AGPRs on gfx90a+) one wave can address per lane.
    pub max_vgprs_per_wave: u32,
    /// Most waves one SIMD holds.
    pub max_waves_per_simd: u32,
    /// SIMDs that share a workgroup's resources: 4 per CU on gfx9, 4 per WGP on gfx10+.
    pub simds_per_cu: u32,
    /// LDS bytes shared by the workgroups of one CU (gfx9) or WGP (gfx10+).
    pub lds_bytes_per_cu: u32,
    /// Most LDS bytes one workgroup may allocate.
    pub max_lds_bytes_per_workgroup: u32,
    /// LDS allocation granule in bytes.
    pub lds_granule: u32,
    /// Most multi-wave workgroups per CU/WGP (barrier resources).
    pub max_workgroups_per_cu: u32,
    /// Whether SGPR use lowers occupancy (gfx9: 800 SGPRs per SIMD; gfx10+ gives every wave
    /// its full set).
    pub sgpr_limited: bool,
}

/// CDNA (gfx90a, gfx942, gfx950): one 512-entry file per lane holding VGPRs then AGPRs from
/// `accum_offset`, granule 8, 8 waves per SIMD, 4 SIMDs per CU, 16 barriers per CU.
const fn cdna(processor: &'static str, lds_bytes: u32, lds_granule: u32) -> TargetLimits {
    TargetLimits {
        processor,
        wave64: Some(VgprFile {
            total: 512,
            granule: 8,
        }),
        wave32: None,
        max_vgprs_per_wave: 512,
        max_waves_per_simd: 8,
        simds_per_cu: 4,
        lds_bytes_per_cu: lds_bytes,
        max_lds_bytes_per_workgroup: lds_bytes,
        lds_granule,
        max_workgroups_per_cu: 16,
        sgpr_limited: true,
    }
}

/// RDNA3 gfx1100 and RDNA4 gfx1201: LLVM's `Feature1_5xVGPRs` (1536 VGPRs per lane in wave32,
/// 768 in wave64, granule 24 / 12), 16 waves per SIMD, 4 SIMDs and 128 KiB LDS per WGP (64 KiB
/// per workgroup), 32 barriers per WGP.
const fn rdna_1_5x_vgprs(processor: &'static str) -> TargetLimits {
    TargetLimits {
        processor,
        wave64: Some(VgprFile {
            total: 768,
            granule: 12,
        }),
        wave32: Some(VgprFile {
            total: 1536,
            granule: 24,
        }),
        max_vgprs_per_wave: 256,
        max_waves_per_simd: 16,
        simds_per_cu: 4,
        lds_bytes_per_cu: 131072,
        max_lds_bytes_per_workgroup: 65536,
        lds_granule: 512,
        max_workgroups_per_cu: 32,
        sgpr_limited: false,
    }
}

/// The processors Iron builds for. gfx950's 160 KiB LDS is LLVM's
/// `FeatureAddressableLocalMemorySize163840`; its LDS granule (2048 bytes) is what LLVM 22
/// encodes, 512 bytes elsewhere.
const TARGETS: &[TargetLimits] = &[
    cdna("gfx90a", 65536, 512),
    cdna("gfx942", 65536, 512),
    cdna("gfx950", 163840, 2048),
    rdna_1_5x_vgprs("gfx1100"),
    rdna_1_5x_vgprs("gfx1201"),
];

/// The limits of `processor`, if it is one Iron builds for.
pub fn target_limits(processor: &str) -> Option<&'static TargetLimits> {
    TARGETS.iter().find(|t| t.processor == processor)
}

/// Every processor with known limits.
pub fn known_targets() -> &'static [TargetLimits] {
    TARGETS
}

/// What a kernel dispatch uses, the input of [`occupancy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelResources {
    /// 32 or 64.
    pub wave_size: u32,
    /// VGPRs per lane as the metadata's `.vgpr_count` gives them: on gfx90a+ this already
    /// counts the AGPRs (see [`unified_vgpr_count`]).
    pub vgprs: u32,
    /// SGPRs per wave, including VCC and the other reserved SGPRs (`.sgpr_count`).
    pub sgprs: u32,
    /// LDS bytes per workgroup: static plus dynamic.
    pub lds_bytes: u32,
    /// Work-items per workgroup.
    pub workgroup_size: u32,
}

impl KernelResources {
    /// The resources of a kernel launched with its largest workgroup and `dynamic_lds_bytes` of
    /// dynamic LDS.
    pub fn from_metadata(metadata: &KernelMetadata, dynamic_lds_bytes: u32) -> KernelResources {
        KernelResources {
            wave_size: metadata.wavefront_size,
            vgprs: metadata.vgpr_count,
            sgprs: metadata.sgpr_count,
            lds_bytes: metadata
                .group_segment_fixed_size
                .saturating_add(dynamic_lds_bytes),
            workgroup_size: metadata.max_flat_workgroup_size,
        }
    }
}

/// VGPR file entries a wave takes on gfx90a+ when it uses `arch_vgprs` VGPRs and `agprs`
/// AGPRs: AGPRs start at the VGPR count rounded up to 4 (`accum_offset`).
pub fn unified_vgpr_count(arch_vgprs: u32, agprs: u32) -> u32 {
    if agprs == 0 {
        arch_vgprs
    } else {
        arch_vgprs.next_multiple_of(4) + agprs
    }
}

/// The resource that keeps occupancy below the SIMD's maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// Nothing: the SIMD holds as many waves as it can.
    None,
    /// Vector registers.
    Vgprs,
    /// Scalar registers (gfx9 only).
    Sgprs,
    /// LDS per workgroup.
    Lds,
    /// Whole workgroups: barrier count, or wave slots left over that cannot hold another
    /// workgroup.
    Workgroups,
}

/// The result of [`occupancy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// Waves per SIMD on the busiest SIMD when the CU holds as many workgroups as fit
    /// (0: not even one workgroup fits).
    pub waves_per_simd: u32,
    /// Workgroups resident per CU (gfx9) or WGP (gfx10+).
    pub workgroups_per_cu: u32,
    /// Waves resident per CU or WGP.
    pub waves_per_cu: u32,
    /// What stops more waves.
    pub limiter: Limiter,
    /// Waves per SIMD the VGPRs alone allow.
    pub vgpr_waves_per_simd: u32,
    /// Waves per SIMD the SGPRs alone allow.
    pub sgpr_waves_per_simd: u32,
    /// Workgroups per CU the LDS alone allows (`None`: the kernel uses no LDS).
    pub lds_workgroups_per_cu: Option<u32>,
}

/// Why occupancy could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OccupancyError {
    /// No limits are known for the processor.
    #[error("no occupancy limits known for processor '{0}'")]
    UnknownTarget(String),
    /// The processor does not run this wave size.
    #[error("{processor} does not run wave{wave_size}")]
    UnsupportedWaveSize {
        /// Processor name.
        processor: String,
        /// Requested wave size.
        wave_size: u32,
    },
    /// More VGPRs than one wave can address.
    #[error("{vgprs} VGPRs per lane exceed the {max} a wave can address")]
    TooManyVgprs {
        /// Requested VGPRs.
        vgprs: u32,
        /// Addressable maximum.
        max: u32,
    },
    /// More LDS than one workgroup can allocate.
    #[error("{lds_bytes} LDS bytes per workgroup exceed the {max}-byte limit")]
    TooMuchLds {
        /// Requested LDS.
        lds_bytes: u32,
        /// Per-workgroup maximum.
        max: u32,
    },
    /// A workgroup size outside 1..=1024.
    #[error("workgroup size {0} is outside 1..=1024")]
    BadWorkgroupSize(u32),
}

/// Waves per SIMD that SGPR use allows on gfx8/gfx9, LLVM's `getOccupancyWithNumSGPRs`.
fn gfx9_sgpr_waves(sgprs: u32) -> u32 {
    match sgprs {
        0..=80 => 10,
        81..=88 => 9,
        89..=100 => 8,
        _ => 7,
    }
}

/// Computes occupancy of a kernel with `resources` on `processor`.
pub fn occupancy(
    processor: &str,
    resources: &KernelResources,
) -> Result<Occupancy, OccupancyError> {
    let limits =
        target_limits(processor).ok_or_else(|| OccupancyError::UnknownTarget(processor.into()))?;
    let file = match resources.wave_size {
        32 => limits.wave32,
        64 => limits.wave64,
        _ => None,
    }
    .ok_or_else(|| OccupancyError::UnsupportedWaveSize {
        processor: processor.into(),
        wave_size: resources.wave_size,
    })?;
    if resources.vgprs > limits.max_vgprs_per_wave {
        return Err(OccupancyError::TooManyVgprs {
            vgprs: resources.vgprs,
            max: limits.max_vgprs_per_wave,
        });
    }
    if resources.lds_bytes > limits.max_lds_bytes_per_workgroup {
        return Err(OccupancyError::TooMuchLds {
            lds_bytes: resources.lds_bytes,
            max: limits.max_lds_bytes_per_workgroup,
        });
    }
    if !(1..=1024).contains(&resources.workgroup_size) {
        return Err(OccupancyError::BadWorkgroupSize(resources.workgroup_size));
    }

    let max_waves = limits.max_waves_per_simd;
    let vgpr_waves = match resources.vgprs {
        0 => max_waves,
        vgprs => (file.total / vgprs.next_multiple_of(file.granule)).min(max_waves),
    };
    let sgpr_waves = if limits.sgpr_limited {
        gfx9_sgpr_waves(resources.sgprs).min(max_waves)
    } else {
        max_waves
    };
    let waves_per_workgroup = resources.workgroup_size.div_ceil(resources.wave_size);
    let simds = limits.simds_per_cu;
    let workgroups_with = |waves_per_simd: u32| waves_per_simd * simds / waves_per_workgroup;

    let lds_workgroups = (resources.lds_bytes > 0).then(|| {
        limits.lds_bytes_per_cu / resources.lds_bytes.next_multiple_of(limits.lds_granule)
    });
    let barrier_workgroups = if waves_per_workgroup > 1 {
        limits.max_workgroups_per_cu
    } else {
        u32::MAX
    };
    let candidates = [
        (
            Limiter::Vgprs,
            workgroups_with(vgpr_waves),
            vgpr_waves < max_waves,
        ),
        (
            Limiter::Sgprs,
            workgroups_with(sgpr_waves),
            sgpr_waves < max_waves,
        ),
        (Limiter::Lds, lds_workgroups.unwrap_or(u32::MAX), true),
        (Limiter::Workgroups, barrier_workgroups, true),
        (Limiter::Workgroups, workgroups_with(max_waves), true),
    ];
    let workgroups = candidates.iter().map(|(_, n, _)| *n).min().unwrap_or(0);
    let waves_per_cu = workgroups * waves_per_workgroup;
    let waves_per_simd = waves_per_cu.div_ceil(simds);
    let limiter = if waves_per_simd >= max_waves {
        Limiter::None
    } else {
        candidates
            .iter()
            .find(|(_, n, relevant)| *relevant && *n == workgroups)
            .map_or(Limiter::Workgroups, |(limiter, _, _)| *limiter)
    };
    Ok(Occupancy {
        waves_per_simd,
        workgroups_per_cu: workgroups,
        waves_per_cu,
        limiter,
        vgpr_waves_per_simd: vgpr_waves,
        sgpr_waves_per_simd: sgpr_waves,
        lds_workgroups_per_cu: lds_workgroups,
    })
}
