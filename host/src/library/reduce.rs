//! The sum of a flat f32 array (`device/kernels/src/reduce.rs`): deterministic, no atomics; one
//! launch for short arrays, two (per-workgroup partial sums, then their sum) for longer ones.

use super::Library;
use super::error::LibraryError;
use super::geometry::{STREAMING_BLOCK, check_holds, streaming, to_u32};
use crate::device::{DeviceBuffer, Stream};
use crate::launch::LaunchConfig;

/// Arrays up to this length are summed by one workgroup in one launch.
const SINGLE_PASS_MAX: usize = 16 * STREAMING_BLOCK as usize;

/// Elements each work-item of the first pass sums at least.
const ELEMENTS_PER_WORKITEM: usize = 16;

impl Library {
    /// `total[0] = x[0] + ... + x[n - 1]` in f32 (0 for `n = 0`); `total` must hold at least one
    /// element.
    ///
    /// Longer arrays are summed in two launches through a workspace of one f32 per workgroup of
    /// the first, allocated for the call and freed before it returns (freeing waits for the
    /// launches, so the call then returns with the sum computed).
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
        let block = [STREAMING_BLOCK, 1, 1];
        let one_workgroup =
            LaunchConfig::new([1, 1, 1], block).with_dynamic_lds(kernel.dynamic_lds_for(block));
        if n <= SINGLE_PASS_MAX {
            // SAFETY: sum_f32 reads x[0..n] with the grid's work-items (n + 256 stays far below
            // 2^32, so its indices do not wrap) and writes total[workgroup] for its one
            // workgroup; x holds n elements (16-byte aligned, as device allocations are) and
            // total one. The block is a multiple of the wave
            // and the LDS holds one f32 per wave, as its workgroup reduction needs.
            unsafe { stream.launch(kernel, one_workgroup, (x, total, n as u32))? };
            return Ok(());
        }
        let mut first = streaming(
            self.device().properties(),
            n.div_ceil(ELEMENTS_PER_WORKITEM),
        );
        first.dynamic_lds = one_workgroup.dynamic_lds;
        let workgroups = first.grid[0];
        let threads = workgroups.saturating_mul(STREAMING_BLOCK);
        let count = to_u32(OP, "n", n, u32::MAX.saturating_sub(threads))?;
        let mut partials = DeviceBuffer::<f32>::alloc(self.device(), workgroups as usize)?;
        // SAFETY: sum_f32 reads x[0..n] (n + the grid's work-items stays below 2^32, so its
        // grid-stride indices do not wrap) and writes partials[g] for each of the grid's
        // workgroups, which partials holds; x and partials are 16-byte aligned device
        // allocations; block and LDS as above.
        unsafe { stream.launch(kernel, first, (x, &mut partials, count))? };
        // SAFETY: reads partials[0..workgroups] and writes total[0]; the same geometry as the
        // one-workgroup launch above.
        unsafe { stream.launch(kernel, one_workgroup, (&partials, total, workgroups))? };
        Ok(())
    }
}
