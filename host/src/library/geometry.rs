//! What every family shares: checking buffers against shapes, converting sizes to the kernels'
//! 32-bit arguments, and choosing launch geometry for the kernel layouts (flat kernels whose grid
//! covers the array, grid-stride streaming kernels, and one workgroup per row).

use super::error::LibraryError;
use crate::device::{DeviceBuffer, DeviceProperties, TypedKernel};
use crate::launch::LaunchConfig;
use iron_kernels::flat;

/// Work-items per workgroup of the streaming kernels (their declared maximum, a multiple of
/// both wave sizes).
pub(crate) const STREAMING_BLOCK: u32 = 256;

/// Workgroups per compute unit a streaming launch uses at most; further elements are covered by
/// the kernels' grid-stride loops.
const STREAMING_WORKGROUPS_PER_CU: u32 = 32;

/// Row elements each work-item of a row kernel should own (the block grows with the row up to
/// the kernel's maximum; rows of up to 32 elements per work-item stay in registers).
const ROW_ELEMENTS_PER_WORKITEM: usize = 8;

/// Errors unless `buffer` holds at least `needs` elements (`shape` says where `needs` comes
/// from, e.g. `rows * cols`).
pub(crate) fn check_holds<T>(
    operation: &'static str,
    name: &'static str,
    buffer: &DeviceBuffer<T>,
    shape: &'static str,
    needs: usize,
) -> Result<(), LibraryError> {
    if buffer.len() < needs {
        return Err(LibraryError::BufferTooShort {
            operation,
            buffer: name,
            holds: buffer.len(),
            shape,
            needs,
        });
    }
    Ok(())
}

/// `rows * cols`, or an error naming the operation when it overflows.
pub(crate) fn elements_of(
    operation: &'static str,
    rows: usize,
    cols: usize,
) -> Result<usize, LibraryError> {
    rows.checked_mul(cols)
        .ok_or_else(|| LibraryError::ShapeOverflow {
            operation,
            shape: "rows * cols",
            value: format!("{rows} * {cols}"),
        })
}

/// `value` as a kernel's `u32` argument, or an error when it does not fit below `limit`.
pub(crate) fn to_u32(
    operation: &'static str,
    what: &'static str,
    value: usize,
    limit: u32,
) -> Result<u32, LibraryError> {
    u32::try_from(value)
        .ok()
        .filter(|&v| v <= limit)
        .ok_or(LibraryError::TooLarge {
            operation,
            what,
            value: value as u64,
            limit: u64::from(limit),
        })
}

/// Errors unless a row of `cols` elements of `element_size` bytes is below 4 GiB (the row
/// kernels address within a row in 32 bits).
pub(crate) fn check_row_bytes(
    operation: &'static str,
    cols: usize,
    element_size: usize,
) -> Result<(), LibraryError> {
    let bytes = (cols as u128) * (element_size as u128);
    if bytes >= 1 << 32 {
        return Err(LibraryError::TooLarge {
            operation,
            what: "cols * element size (bytes per row)",
            value: u64::try_from(bytes).unwrap_or(u64::MAX),
            limit: u64::from(u32::MAX),
        });
    }
    Ok(())
}

/// The geometry of a grid-stride streaming kernel that wants `work_items` work-items (one per
/// chunk it moves): workgroups of [`STREAMING_BLOCK`], enough to give each work-item one chunk,
/// capped at [`STREAMING_WORKGROUPS_PER_CU`] per compute unit, at least one.
pub(crate) fn streaming(device: &DeviceProperties, work_items: usize) -> LaunchConfig {
    let cap = device
        .compute_units
        .max(1)
        .saturating_mul(STREAMING_WORKGROUPS_PER_CU);
    let wanted = work_items.div_ceil(STREAMING_BLOCK as usize).max(1);
    let workgroups = u32::try_from(wanted).unwrap_or(u32::MAX).min(cap);
    LaunchConfig::new([workgroups, 1, 1], [STREAMING_BLOCK, 1, 1])
}

/// The geometry of a flat kernel (`iron_kernels::flat`: fill, copy, saxpy, elementwise, casts)
/// over `n` elements in chunks of `per_chunk`: each work-item moves `flat::CHUNKS` chunks (the
/// kernels have no loop); see [`spans`].
pub(crate) fn flat(n: usize, per_chunk: usize) -> LaunchConfig {
    spans(n, (flat::BLOCK * flat::CHUNKS) as usize * per_chunk)
}

/// The geometry of a flat kernel whose workgroups each own `per_workgroup` consecutive elements
/// of `n`: workgroups of the block the kernels are compiled for, enough to cover the array, at
/// least one.
pub(crate) fn spans(n: usize, per_workgroup: usize) -> LaunchConfig {
    let workgroups = u32::try_from(n.div_ceil(per_workgroup).max(1)).unwrap_or(u32::MAX);
    LaunchConfig::new([workgroups, 1, 1], [flat::BLOCK, 1, 1])
}

/// The geometry of a row kernel over `rows` rows of `cols` elements: one workgroup per row, a
/// 1-D block that is a multiple of the kernel's wave size, grown with the row (about
/// [`ROW_ELEMENTS_PER_WORKITEM`] elements per work-item) up to the kernel's and the device's
/// maximum, and the dynamic LDS the kernel declares for that block.
pub(crate) fn rows<F>(
    kernel: &TypedKernel<F>,
    device: &DeviceProperties,
    rows: u32,
    cols: usize,
) -> LaunchConfig {
    let metadata = kernel.kernel().metadata();
    let wave = metadata.wavefront_size.max(1);
    let largest = metadata
        .max_flat_workgroup_size
        .min(device.max_threads_per_block);
    let block = row_block(cols, wave, largest);
    let block = [block, 1, 1];
    LaunchConfig::new([rows, 1, 1], block).with_dynamic_lds(kernel.dynamic_lds_for(block))
}

/// The shape of a held-row instance: the chunks each work-item holds, and the workgroup's size
/// in waves when the instance fixes it (its `w<n>` suffix; 0 for any whole number of waves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldShape {
    /// Chunks per work-item.
    pub(crate) chunks: u32,
    /// The workgroup's waves, or 0 for any number.
    pub(crate) waves: u32,
}

impl HeldShape {
    /// An instance holding `chunks` chunks per work-item in a workgroup of any whole number of
    /// waves.
    pub(crate) const fn any(chunks: u32) -> Self {
        Self { chunks, waves: 0 }
    }

    /// Instances of any size holding each of `chunks` chunks per work-item, in that order.
    pub(crate) const fn any_of<const N: usize>(chunks: [u32; N]) -> [Self; N] {
        let mut shapes = [Self::any(0); N];
        let mut k = 0;
        while k < N {
            shapes[k] = Self::any(chunks[k]);
            k += 1;
        }
        shapes
    }

    /// An instance holding `chunks` chunks per work-item in a workgroup of exactly one wave,
    /// whose reductions need no LDS and whose chunk offsets are constants.
    pub(crate) const fn one_wave(chunks: u32) -> Self {
        Self { chunks, waves: 1 }
    }
}

/// The held-row instance (from `kernels`, of shape `shapes[k]`) and its geometry for `rows` rows
/// of `cols` elements of `pack` elements per chunk, when one covers the row exactly: `cols =
/// chunks * pack * block` with the block a multiple of the wave size, within the kernel's and the
/// device's maximum, and of the instance's waves when it fixes them. The last matching entry of
/// `shapes` wins: the tables list the any-size instances by increasing chunks per work-item
/// (fewer waves per row), then the one-wave ones. `None` leaves the row to the general kernel.
pub(crate) fn held_rows<'k, F, const N: usize>(
    kernels: &'k [TypedKernel<F>; N],
    shapes: [HeldShape; N],
    device: &DeviceProperties,
    rows: u32,
    cols: usize,
    pack: usize,
) -> Option<(&'k TypedKernel<F>, LaunchConfig)> {
    let (k, block) = (0..N).rev().find_map(|k| {
        let metadata = kernels[k].kernel().metadata();
        let largest = metadata
            .max_flat_workgroup_size
            .min(device.max_threads_per_block);
        let wave = metadata.wavefront_size;
        let block = held_block(cols, pack * shapes[k].chunks as usize, wave, largest)?;
        let waves = shapes[k].waves;
        (waves == 0 || block == waves * wave).then_some((k, block))
    })?;
    let kernel = &kernels[k];
    let block = [block, 1, 1];
    let config =
        LaunchConfig::new([rows, 1, 1], block).with_dynamic_lds(kernel.dynamic_lds_for(block));
    Some((kernel, config))
}

/// The kernel and geometry for `rows` rows of `cols` elements of `pack` elements per chunk: the
/// held-row instance that covers the row exactly ([`held_rows`]), else `general` with the
/// geometry of [`rows`].
pub(crate) fn held_or_general<'k, F, const N: usize>(
    general: &'k TypedKernel<F>,
    held: &'k [TypedKernel<F>; N],
    shapes: [HeldShape; N],
    device: &DeviceProperties,
    rows: u32,
    cols: usize,
    pack: usize,
) -> (&'k TypedKernel<F>, LaunchConfig) {
    held_rows(held, shapes, device, rows, cols, pack)
        .unwrap_or_else(|| (general, self::rows(general, device, rows, cols)))
}

/// The block that gives each work-item exactly `per_workitem` elements of a row of `cols`, if it
/// is a whole number of waves of `wave` and at most `largest`.
fn held_block(cols: usize, per_workitem: usize, wave: u32, largest: u32) -> Option<u32> {
    if cols == 0 || !cols.is_multiple_of(per_workitem) {
        return None;
    }
    let block = u32::try_from(cols / per_workitem).ok()?;
    (wave > 0 && block.is_multiple_of(wave) && block <= largest).then_some(block)
}

/// The workgroup size of a row kernel for rows of `cols` elements: about
/// [`ROW_ELEMENTS_PER_WORKITEM`] elements per work-item, a multiple of `wave`, at least one wave
/// and at most `largest` (rounded down to whole waves).
fn row_block(cols: usize, wave: u32, largest: u32) -> u32 {
    let largest = (largest / wave * wave).max(wave);
    let wanted = cols
        .div_ceil(ROW_ELEMENTS_PER_WORKITEM)
        .next_multiple_of(wave as usize);
    u32::try_from(wanted)
        .unwrap_or(u32::MAX)
        .clamp(wave, largest)
}

/// A `[rows, cols]` shape checked against the row kernels' limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowShape {
    /// Rows, as the kernels' argument.
    pub(crate) rows: u32,
    /// Columns, as the kernels' argument.
    pub(crate) cols: u32,
}

/// `rows` and `cols` as the row kernels' `u32` arguments, with rows of elements of `T` shorter
/// than 4 GiB.
pub(crate) fn row_shape<T>(
    operation: &'static str,
    rows: usize,
    cols: usize,
) -> Result<RowShape, LibraryError> {
    let shape = RowShape {
        rows: to_u32(operation, "rows", rows, u32::MAX)?,
        cols: to_u32(operation, "cols", cols, u32::MAX)?,
    };
    check_row_bytes(operation, cols, size_of::<T>())?;
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_object::TargetId;

    fn device(compute_units: u32) -> DeviceProperties {
        DeviceProperties {
            name: "test".to_owned(),
            target: TargetId::new("gfx950"),
            wave_size: 64,
            compute_units,
            lds_per_workgroup: 65536,
            max_threads_per_block: 1024,
            global_memory: 1 << 30,
        }
    }

    #[test]
    fn row_blocks_are_whole_waves_grown_with_the_row() {
        for (cols, wave, block) in [
            (0, 64, 64),
            (1, 64, 64),
            (512, 64, 64),
            (513, 64, 128),
            (1000, 64, 128),
            (4100, 64, 576),
            (8192, 64, 1024),
            (1 << 20, 64, 1024),
            (100, 32, 32),
            (1000, 32, 128),
            (usize::MAX, 32, 1024),
        ] {
            assert_eq!(
                row_block(cols, wave, 1024),
                block,
                "cols {cols}, wave {wave}"
            );
        }
        assert_eq!(
            row_block(1 << 20, 64, 1000),
            960,
            "largest rounded down to whole waves"
        );
        assert_eq!(row_block(1 << 20, 64, 40), 64, "never below one wave");
    }

    #[test]
    fn held_blocks_cover_the_row_exactly_in_whole_waves() {
        assert_eq!(held_block(4096, 64, 64, 1024), Some(64));
        assert_eq!(held_block(4096, 64, 32, 1024), Some(64));
        assert_eq!(held_block(4096, 32, 64, 1024), Some(128));
        assert_eq!(
            held_block(4096, 8, 64, 256),
            None,
            "block above the largest"
        );
        assert_eq!(held_block(8192, 8, 64, 1024), Some(1024));
        assert_eq!(
            held_block(3072, 64, 64, 1024),
            None,
            "48 is not whole waves"
        );
        assert_eq!(held_block(3072, 16, 64, 1024), Some(192));
        assert_eq!(held_block(4100, 8, 64, 1024), None, "not a multiple");
        assert_eq!(held_block(256, 8, 64, 1024), None, "less than a wave");
        assert_eq!(held_block(0, 8, 64, 1024), None);
    }

    #[test]
    fn flat_grids_cover_the_array_without_a_cap() {
        let per_workgroup = (flat::BLOCK * flat::CHUNKS) as usize;
        for (n, per_chunk) in [
            (1, 4),
            (4, 4),
            (1000, 4),
            (1 << 20, 8),
            (u32::MAX as usize, 4),
        ] {
            let config = flat(n, per_chunk);
            assert_eq!(config.block, [flat::BLOCK, 1, 1]);
            let covered = config.grid[0] as usize * per_workgroup * per_chunk;
            assert!(covered >= n, "{n}: {config:?}");
            assert!(covered - n < per_workgroup * per_chunk, "{n}: {config:?}");
        }
        assert_eq!(flat(0, 4).grid, [1, 1, 1]);
    }

    #[test]
    fn streaming_grids_cover_the_work_up_to_a_cap() {
        let config = streaming(&device(4), 1000);
        assert_eq!((config.grid, config.block), ([4, 1, 1], [256, 1, 1]));
        assert_eq!(streaming(&device(4), 0).grid, [1, 1, 1]);
        assert_eq!(streaming(&device(4), 1 << 30).grid, [128, 1, 1]);
        assert_eq!(streaming(&device(0), 1 << 30).grid, [32, 1, 1]);
        assert_eq!(config.dynamic_lds, 0);
    }

    #[test]
    fn sizes_beyond_the_kernels_are_errors() {
        assert_eq!(to_u32("op", "n", 7, 7), Ok(7));
        assert_eq!(
            to_u32("op", "n", 8, 7).unwrap_err().to_string(),
            "op: n = 8 exceeds the kernel's limit of 7"
        );
        assert!(to_u32("op", "n", 1 << 32, u32::MAX).is_err());
        assert!(check_row_bytes("op", (1 << 30) - 1, 4).is_ok());
        assert_eq!(
            check_row_bytes("op", 1 << 30, 4).unwrap_err().to_string(),
            "op: cols * element size (bytes per row) = 4294967296 exceeds the kernel's limit of 4294967295"
        );
        assert_eq!(
            elements_of("op", usize::MAX, 2).unwrap_err().to_string(),
            format!("op: rows * cols = {} * 2 overflows", usize::MAX)
        );
        assert!(row_shape::<f32>("op", 3, 5).is_ok());
    }
}
