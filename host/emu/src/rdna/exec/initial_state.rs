//! The RDNA initial wave state (LLVM AMDGPUUsage, "Initial Kernel Execution State").
//!
//! gfx1100 hands the workgroup ids to the kernel as system SGPRs after the user SGPRs, as GFX9 does
//! (LLVM pads the user SGPR count so that the ids land where a hardware bug needs them: with one
//! kernarg pointer and only the x id enabled, the id is s15). gfx1201 has architected workgroup ids
//! instead: x in TTMP9, y and z in the low and high halves of TTMP7, and the wave's index in its
//! workgroup in TTMP8 bits 29:25 (what `llvm.amdgcn.wave.id` reads: `s_bfe_u32 s, ttmp8,
//! 0x50019`). Both targets have architected flat scratch: the hardware holds the wave's scratch
//! base.

use crate::dispatch::Dispatch;
use crate::machine::wave::initialize_common;
use crate::machine::{LaunchState, Wave};
use crate::target::Target;

/// Register file index of TTMP7.
const TTMP7: usize = 108 + 7;
/// Register file index of TTMP8.
const TTMP8: usize = 108 + 8;
/// Register file index of TTMP9.
const TTMP9: usize = 108 + 9;

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
    let r2 = desc.compute_pgm_rsrc2;
    if target == Target::Gfx1201 {
        w.sgpr[TTMP9] = group[0];
        w.sgpr[TTMP7] = group[1] & 0xffff | group[2] << 16;
        w.sgpr[TTMP8] = (index & 0x1f) << 25;
    } else {
        let mut put = |w: &mut Wave, v: u32| {
            if s < 106 {
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
    }
    let scratch = desc.private_segment_enabled() && l.scratch.base != 0;
    let wave_offset = u64::from(scratch_wave) * l.scratch.per_wave();
    w.architected_scratch = Some(if scratch {
        l.scratch.base + wave_offset
    } else {
        0
    });
}
