//! The sum of a flat f32 array (`device/kernels/src/reduce.rs`): deterministic, no atomics. Each
//! launch sums every 4096 (wave64) or 8192 (wave32) consecutive elements into one partial;
//! launches repeat over the partials until one is left (in wave64 one launch up to 4096
//! elements, two up to 2^24, three beyond).

use super::Library;
use super::error::LibraryError;
use super::geometry::{check_holds, spans, to_u32};
use crate::device::{DeviceBuffer, Stream};
use iron_kernels::reduce::elements_per_workgroup;

impl Library {
    /// `total[0] = x[0] + ... + x[n - 1]` in f32 (0 for `n = 0`); `total` must hold at least one
    /// element. The order of the additions depends only on `n` and the wave size, so a sum is
    /// reproducible on any device of the same wave size.
    ///
    /// Arrays longer than 4096 elements (8192 in wave32) are summed in several launches through
    /// workspaces of one f32 per 4096 (8192) elements of the launch before, allocated for the call
    /// and freed before it returns (freeing waits for the launches, so the call then returns with
    /// the sum computed).
    pub fn sum(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<f32>,
        total: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<(), LibraryError> {
        const OP: &str = "sum";
        check_holds(OP, "x", x, "n", n)?;
        check_holds(OP, "total", total, "", 1)?;
        let kernel = &self.kernels.streaming.sum;
        let per_workgroup = elements_per_workgroup(kernel.kernel().metadata().wavefront_size);
        let mut len = to_u32(OP, "n", n, u32::MAX)?;
        let mut partials: Vec<DeviceBuffer<f32>> = Vec::new();
        loop {
            let mut config = spans(len as usize, per_workgroup as usize);
            config.dynamic_lds = kernel.dynamic_lds_for(config.block);
            let workgroups = config.grid[0];
            let input = partials.last().unwrap_or(x);
            if workgroups == 1 {
                // SAFETY: sum_f32 reads input[0..len] and writes total[0] for its one
                // workgroup; input holds len elements and total one, both 16-byte aligned device
                // allocations; the block is the one the kernel is compiled for, with the
                // dynamic LDS it declares for it.
                unsafe { stream.launch(kernel, config, (input, total, len))? };
                return Ok(());
            }
            let mut next = DeviceBuffer::<f32>::alloc(self.device(), workgroups as usize)?;
            // SAFETY: as above, writing next[g] for each of the grid's workgroups, which next
            // holds.
            unsafe { stream.launch(kernel, config, (input, &mut next, len))? };
            partials.push(next);
            len = workgroups;
        }
    }
}
