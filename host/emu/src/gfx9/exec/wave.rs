//! The GFX9 initial wave state (LLVM AMDGPUUsage, "Initial Kernel Execution State"): the system
//! SGPRs after the user SGPRs and FLAT_SCRATCH. The wave state itself is the shared machine model's.

use super::super::decode::FLAT_SCRATCH;
use crate::dispatch::Dispatch;
use crate::machine::LaunchState;
use crate::machine::wave::initialize_common;
use crate::target::Target;

pub(crate) use crate::machine::wave::{MODE_GPR_IDX_EN, VGPRS, Wave};

/// Sets up wave `index` of workgroup `group` as the hardware does before the first instruction,
/// its private memory at wave `scratch_wave` of the scratch backing store.
pub(crate) fn initialize(
    w: &mut Wave,
    target: Target,
    d: &Dispatch<'_>,
    l: &LaunchState,
    group: [u32; 3],
    index: u32,
    scratch_wave: u32,
) {
    let desc = &d.descriptor;
    let mut s = initialize_common(w, d, l, index);
    let wave_offset = u64::from(scratch_wave) * l.scratch.per_wave();

    // System SGPRs follow the user SGPRs.
    let r2 = desc.compute_pgm_rsrc2;
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
}
