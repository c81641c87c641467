//! Where a work-item is: its ids within the workgroup, the workgroup's ids within the grid, and
//! the launch's sizes. Sizes come from the HSA dispatch packet the runtime writes for each launch.
//! None of these need convergence.

use crate::arch as amdgpu;
use crate::target::WAVE;

/// The HSA kernel dispatch packet (`hsa_kernel_dispatch_packet_t`), as far as kernels read it.
/// The 16-bit workgroup sizes are read as the 32-bit words holding them: gfx12 has 16-bit loads
/// and llc then reads them with a per-lane vector load, where a 32-bit word is one scalar load.
#[repr(C)]
struct DispatchPacket {
    header_setup: u32,
    workgroup_size_xy: u32,
    workgroup_size_z: u32,
    grid_size: [u32; 3],
}

#[inline(always)]
fn dispatch_packet() -> &'static DispatchPacket {
    // SAFETY: the runtime passes every kernel a valid, aligned dispatch packet that outlives it.
    unsafe { &*(amdgpu::amdgpu_dispatch_ptr() as *const DispatchPacket) }
}

/// The work-item's index within its workgroup, x dimension.
#[inline(always)]
pub fn workitem_id_x() -> u32 {
    amdgpu::workitem_id_x()
}

/// The work-item's index within its workgroup, y dimension.
#[inline(always)]
pub fn workitem_id_y() -> u32 {
    amdgpu::workitem_id_y()
}

/// The work-item's index within its workgroup, z dimension.
#[inline(always)]
pub fn workitem_id_z() -> u32 {
    amdgpu::workitem_id_z()
}

/// The workgroup's index within the grid, x dimension.
#[inline(always)]
pub fn workgroup_id_x() -> u32 {
    amdgpu::workgroup_id_x()
}

/// The workgroup's index within the grid, y dimension.
#[inline(always)]
pub fn workgroup_id_y() -> u32 {
    amdgpu::workgroup_id_y()
}

/// The workgroup's index within the grid, z dimension.
#[inline(always)]
pub fn workgroup_id_z() -> u32 {
    amdgpu::workgroup_id_z()
}

/// Work-items per workgroup in x, as launched.
#[inline(always)]
pub fn workgroup_size_x() -> u32 {
    dispatch_packet().workgroup_size_xy & 0xffff
}

/// Work-items per workgroup in y, as launched.
#[inline(always)]
pub fn workgroup_size_y() -> u32 {
    dispatch_packet().workgroup_size_xy >> 16
}

/// Work-items per workgroup in z, as launched.
#[inline(always)]
pub fn workgroup_size_z() -> u32 {
    dispatch_packet().workgroup_size_z & 0xffff
}

/// Work-items in the whole grid in x (workgroups times workgroup size).
#[inline(always)]
pub fn grid_size_x() -> u32 {
    dispatch_packet().grid_size[0]
}

/// Work-items in the whole grid in y.
#[inline(always)]
pub fn grid_size_y() -> u32 {
    dispatch_packet().grid_size[1]
}

/// Work-items in the whole grid in z.
#[inline(always)]
pub fn grid_size_z() -> u32 {
    dispatch_packet().grid_size[2]
}

/// Workgroups in the grid in x.
#[inline(always)]
pub fn num_workgroups_x() -> u32 {
    grid_size_x().div_ceil(workgroup_size_x())
}

/// Workgroups in the grid in y.
#[inline(always)]
pub fn num_workgroups_y() -> u32 {
    grid_size_y().div_ceil(workgroup_size_y())
}

/// The work-item's index within the whole grid, x dimension.
#[inline(always)]
pub fn global_id_x() -> u32 {
    workgroup_id_x() * workgroup_size_x() + workitem_id_x()
}

/// The work-item's index within the whole grid, y dimension.
#[inline(always)]
pub fn global_id_y() -> u32 {
    workgroup_id_y() * workgroup_size_y() + workitem_id_y()
}

/// The work-item's linear index within its workgroup (x fastest).
#[inline(always)]
pub fn local_linear_id() -> u32 {
    (workitem_id_z() * workgroup_size_y() + workitem_id_y()) * workgroup_size_x() + workitem_id_x()
}

/// The lane of this work-item within its wave, `0..WAVE`.
#[inline(always)]
pub fn lane_id() -> u32 {
    let low = amdgpu::mbcnt_lo(u32::MAX, 0);
    if WAVE == 64 {
        amdgpu::mbcnt_hi(u32::MAX, low)
    } else {
        low
    }
}

/// The index of this work-item's wave within its workgroup.
#[inline(always)]
pub fn wave_id() -> u32 {
    local_linear_id() / WAVE
}
