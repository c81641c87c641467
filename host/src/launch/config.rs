//! Launch geometry: how many workgroups, how large, and how much dynamic LDS.

/// The geometry of one launch: grid in workgroups, workgroup size in work-items, dynamic LDS.
///
/// The common case is one helper call ([`LaunchConfig::for_elements`]); the general case is the
/// struct itself. Nothing is checked here: a launch checks the geometry against the kernel and
/// the device and says what is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Work-items per workgroup in x, y, z.
    pub block: [u32; 3],
    /// Dynamic LDS bytes per workgroup, on top of the kernel's static LDS.
    pub dynamic_lds: u32,
}

impl LaunchConfig {
    /// A grid of `grid` workgroups of `block` work-items, without dynamic LDS.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> LaunchConfig {
        LaunchConfig {
            grid,
            block,
            dynamic_lds: 0,
        }
    }

    /// One work-item per element in x: `ceil(n / block)` workgroups of `block` work-items, at
    /// least one workgroup (so that `n == 0` is a valid launch of a kernel that checks `n`).
    ///
    /// A workgroup count that does not fit in `u32` is saturated, which the launch then refuses
    /// as a grid larger than the hardware's 2^32 - 1 work-items per dimension.
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        let workgroups = (n as u64).div_ceil(u64::from(block.max(1))).max(1);
        LaunchConfig::new(
            [u32::try_from(workgroups).unwrap_or(u32::MAX), 1, 1],
            [block, 1, 1],
        )
    }

    /// The same geometry with `bytes` of dynamic LDS per workgroup.
    pub fn with_dynamic_lds(self, bytes: u32) -> LaunchConfig {
        LaunchConfig {
            dynamic_lds: bytes,
            ..self
        }
    }

    /// Work-items per workgroup (the product of `block`), saturating at `u64::MAX`.
    pub fn threads_per_block(&self) -> u64 {
        self.block
            .iter()
            .fold(1u64, |product, &d| product.saturating_mul(u64::from(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_elements_covers_every_element_with_at_least_one_workgroup() {
        for (n, block, workgroups) in [
            (0, 256, 1),
            (1, 256, 1),
            (256, 256, 1),
            (257, 256, 2),
            (1 << 20, 64, 1 << 14),
            (1000, 1, 1000),
        ] {
            let config = LaunchConfig::for_elements(n, block);
            assert_eq!(config.grid, [workgroups, 1, 1], "n={n} block={block}");
            assert_eq!(config.block, [block, 1, 1]);
            assert_eq!(config.dynamic_lds, 0);
        }
        assert_eq!(LaunchConfig::for_elements(usize::MAX, 2).grid[0], u32::MAX);
        assert_eq!(LaunchConfig::for_elements(10, 0).block, [0, 1, 1]);
        let config = LaunchConfig::new([2, 3, 4], [8, 4, 2]).with_dynamic_lds(96);
        assert_eq!(config.threads_per_block(), 64);
        assert_eq!(config.dynamic_lds, 96);
        assert_eq!(
            LaunchConfig::new([1; 3], [u32::MAX; 3]).threads_per_block(),
            u64::MAX
        );
    }
}
