//! Packing the kernarg segment: explicit arguments at their metadata offsets, hidden arguments
//! filled as the HIP runtime fills them for code object v5.
//!
//! Pure functions of the metadata and the launch geometry, shared by every backend: the HIP
//! backend hands the runtime only the explicit prefix (the runtime writes the hidden arguments
//! itself), the emulator uses the whole segment.
//!
//! Hidden values (LLVM AMDGPUUsage, "Code Object V5 Metadata"; the HIP runtime's dispatch
//! code): `hidden_block_count_*` = workgroups per dimension, `hidden_group_size_*` = the block,
//! `hidden_remainder_*` = 0 (HIP grids are whole workgroups), `hidden_global_offset_*` = 0,
//! `hidden_grid_dims` = 3 (`hipModuleLaunchKernel` always dispatches a 3-D range),
//! `hidden_dynamic_lds_size` = the dynamic LDS bytes. Every other hidden argument (printf and
//! hostcall buffers, heap, queue, apertures, ...) is left zero.

use super::check::LaunchError;
use super::config::LaunchConfig;
use crate::code_object::{ArgValueKind, KernelMetadata};

/// `hidden_grid_dims` of a HIP launch: `hipModuleLaunchKernel` always dispatches 3 dimensions.
pub const HIP_GRID_DIMS: u64 = 3;

/// A packed kernarg segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernargSegment {
    /// The whole segment, `.kernarg_segment_size` bytes.
    pub bytes: Vec<u8>,
    /// Bytes at the start holding the explicit arguments (the end of the last one).
    pub explicit_size: usize,
    /// Alignment the segment needs in device memory (`.kernarg_segment_align`).
    pub align: u32,
}

/// The value the host writes for a hidden argument of a launch with geometry `config`, or
/// `None` for an explicit argument. Hidden arguments the host leaves zero give `Some(0)`.
pub fn hidden_arg_value(kind: &ArgValueKind, config: &LaunchConfig) -> Option<u64> {
    let [gx, gy, gz] = config.grid.map(u64::from);
    let [bx, by, bz] = config.block.map(u64::from);
    let value = match kind {
        ArgValueKind::HiddenBlockCountX => gx,
        ArgValueKind::HiddenBlockCountY => gy,
        ArgValueKind::HiddenBlockCountZ => gz,
        ArgValueKind::HiddenGroupSizeX => bx,
        ArgValueKind::HiddenGroupSizeY => by,
        ArgValueKind::HiddenGroupSizeZ => bz,
        ArgValueKind::HiddenGridDims => HIP_GRID_DIMS,
        ArgValueKind::HiddenDynamicLdsSize => u64::from(config.dynamic_lds),
        other if other.is_hidden() => 0,
        _ => return None,
    };
    Some(value)
}

/// Bytes at the start of the segment that hold the explicit arguments: the end of the last one.
pub fn explicit_size(metadata: &KernelMetadata) -> usize {
    metadata
        .explicit_args()
        .map(|arg| arg.offset as usize + arg.size as usize)
        .max()
        .unwrap_or(0)
}

/// Packs a kernarg segment: `explicit[i]` (the bytes of the i-th explicit argument, exactly its
/// `.size` long) at its `.offset`, hidden arguments as [`hidden_arg_value`] says, everything
/// else zero.
///
/// The metadata must come from a validated [`CodeObject`](crate::code_object::CodeObject),
/// which guarantees that every argument lies inside the segment.
pub fn pack_kernarg(
    metadata: &KernelMetadata,
    explicit: &[&[u8]],
    config: &LaunchConfig,
) -> Result<KernargSegment, LaunchError> {
    let explicit_args: Vec<_> = metadata.explicit_args().collect();
    if explicit_args.len() != explicit.len() {
        return Err(LaunchError::ArgumentCount {
            kernel: metadata.name.clone(),
            expected: explicit_args.len(),
            got: explicit.len(),
        });
    }
    let count = explicit_args.len() as u32;
    let explicit_size = explicit_size(metadata);
    let mut bytes = vec![0u8; (metadata.kernarg_segment_size as usize).max(explicit_size)];
    for (position, (arg, value)) in (1..).zip(explicit_args.iter().zip(explicit)) {
        if value.len() != arg.size as usize {
            return Err(LaunchError::ArgumentSize {
                kernel: metadata.name.clone(),
                position,
                count,
                name: arg.name.clone(),
                expected: arg.size,
                got: u32::try_from(value.len()).unwrap_or(u32::MAX),
                rust_type: "raw bytes",
            });
        }
        let start = arg.offset as usize;
        bytes[start..start + value.len()].copy_from_slice(value);
    }
    for arg in &metadata.args {
        let Some(value) = hidden_arg_value(&arg.value_kind, config) else {
            continue;
        };
        let start = arg.offset as usize;
        let end = (start + arg.size as usize).min(bytes.len());
        let width = (end.saturating_sub(start)).min(8);
        if width > 0 {
            bytes[start..start + width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
    }
    Ok(KernargSegment {
        bytes,
        explicit_size,
        align: metadata.kernarg_segment_align,
    })
}
