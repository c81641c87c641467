//! Synchronisation within a workgroup, and ordering within a wave.

use crate::arch as amdgpu;
use core::sync::atomic::{Ordering, compiler_fence};

/// Workgroup-wide barrier with the memory semantics LDS code needs: every LDS and global memory
/// access a work-item issued before the barrier has completed and is visible to the whole
/// workgroup after it, and the compiler moves no memory access across it.
///
/// Must be reached by every work-item of the workgroup (workgroup-uniform control flow).
#[inline(always)]
pub fn workgroup_barrier() {
    compiler_fence(Ordering::SeqCst);
    wait_memory();
    // SAFETY: the markers become workgroup-scope fences (iron-build's post-LTO step); a fence
    // has no preconditions. Around the barrier they make this wave's global accesses visible to
    // the other waves of the workgroup, wherever they run: on gfx11/gfx12 in WGP mode a
    // workgroup spans two CUs with their own L0 caches.
    unsafe { crate::llvm::fence::workgroup_release() };
    amdgpu::s_barrier();
    // SAFETY: as above.
    unsafe { crate::llvm::fence::workgroup_acquire() };
    compiler_fence(Ordering::SeqCst);
}

/// Waits until this wave's outstanding memory operations have completed.
#[inline(always)]
fn wait_memory() {
    #[cfg(iron_gfx = "gfx1201")]
    // SAFETY: waiting on counters has no preconditions.
    unsafe {
        crate::llvm::s_wait_loadcnt(0);
        crate::llvm::s_wait_storecnt(0);
        crate::llvm::s_wait_dscnt(0);
    }
    #[cfg(not(iron_gfx = "gfx1201"))]
    // SAFETY: waiting on counters has no preconditions.
    unsafe {
        crate::llvm::s_waitcnt(0)
    }
}

/// Keeps the compiler from moving memory accesses across this point within the wave; lanes of a
/// wave execute in lockstep, so this is all that wave-level LDS exchange needs. Wave-wide.
#[inline(always)]
pub fn wave_barrier() {
    compiler_fence(Ordering::SeqCst);
    amdgpu::wave_barrier();
    compiler_fence(Ordering::SeqCst);
}

/// Keeps the compiler from moving memory accesses (and the instruction scheduler from moving
/// any instruction) across this point. Between groups of matrix instructions it bounds how many
/// operand fragments are loaded ahead (and so live in registers) at once; after loads issued
/// early on purpose (a norm's weight read before the row's reductions) it keeps the scheduler
/// from sinking them to their uses. Emits no instruction. Wave-wide.
#[inline(always)]
pub fn schedule_fence() {
    compiler_fence(Ordering::SeqCst);
    // SAFETY: a scheduling hint; it emits no instruction.
    unsafe { amdgpu::sched_barrier::<0>() }
}
