//! How many workgroups of a dispatch the device holds at once: occupancy per compute unit (or
//! WGP) from the kernel's descriptor, times the device's compute units.

use crate::dispatch::KernelDescriptor;
use crate::target::{Target, WaveSize};
use iron_code_object::occupancy::{KernelResources, occupancy};

/// Workgroups resident at once on `compute_units` CUs (CDNA) or WGPs (RDNA) for a kernel with
/// `desc`, `threads` work-items per workgroup and `lds_bytes` of LDS each. At least one: a
/// workgroup too big for the occupancy model still runs.
pub(crate) fn resident_workgroups(
    target: Target,
    desc: &KernelDescriptor,
    wave: WaveSize,
    threads: u32,
    lds_bytes: u32,
    compute_units: u32,
) -> u32 {
    let rsrc1 = desc.compute_pgm_rsrc1;
    // GRANULATED_WORKITEM_VGPR_COUNT and GRANULATED_WAVEFRONT_SGPR_COUNT (AMDGPUUsage): VGPRs
    // in granules of 8 (4 for RDNA wave64); SGPRs in granules of 8 on GFX9, unused on GFX10+.
    let vgpr_granule = if target.is_rdna() && wave == WaveSize::Wave64 {
        4
    } else {
        8
    };
    let resources = KernelResources {
        wave_size: wave.lanes(),
        vgprs: ((rsrc1 & 0x3f) + 1) * vgpr_granule,
        sgprs: ((rsrc1 >> 6 & 0xf) + 1) * 8,
        lds_bytes,
        workgroup_size: threads,
    };
    let per_cu = occupancy(target.name(), &resources).map_or(1, |o| o.workgroups_per_cu.max(1));
    per_cu.saturating_mul(compute_units.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(vgpr_granules: u32) -> KernelDescriptor {
        KernelDescriptor {
            compute_pgm_rsrc1: vgpr_granules,
            ..KernelDescriptor::default()
        }
    }

    #[test]
    fn residency_is_occupancy_times_compute_units() {
        // 8 VGPRs, 256 work-items (4 waves) on gfx942: 16 barriers per CU limit it to 8 groups.
        let small = descriptor(0);
        assert_eq!(
            resident_workgroups(Target::Gfx942, &small, WaveSize::Wave64, 256, 0, 304),
            8 * 304
        );
        // 256 VGPRs: 2 waves per SIMD, 8 per CU, two 4-wave groups.
        let big = descriptor(31);
        assert_eq!(
            resident_workgroups(Target::Gfx942, &big, WaveSize::Wave64, 256, 0, 10),
            2 * 10
        );
        // 40 KiB of LDS: one group per CU, whatever the registers.
        assert_eq!(
            resident_workgroups(Target::Gfx90a, &small, WaveSize::Wave64, 64, 40 << 10, 3),
            3
        );
        // 1024 work-items of 256 VGPRs do not fit; one still runs.
        assert_eq!(
            resident_workgroups(Target::Gfx942, &big, WaveSize::Wave64, 1024, 0, 1),
            1
        );
    }
}
