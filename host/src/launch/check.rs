//! The checks a launch passes before anything runs: the declared signature against the code
//! object's metadata (once, when a typed kernel is resolved), and the geometry against the
//! kernel and the device (every launch).

use thiserror::Error;

use iron_intrinsics::launch::LaunchBounds;

use super::config::LaunchConfig;
use super::signature::{ParamKind, ParamSpec};
use crate::code_object::{ArgValueKind, KernelMetadata};
use crate::device::DeviceProperties;

/// A launch refused before it ran, with what to change.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LaunchError {
    /// The module has no kernel of that name.
    #[error("no kernel {kernel} in the module (it holds: {available})")]
    NoSuchKernel {
        /// The name asked for.
        kernel: String,
        /// The kernels the module holds, comma-separated.
        available: String,
    },
    /// The launch passes more or fewer arguments than the kernel takes.
    #[error("kernel {kernel} takes {expected} arguments, got {got}")]
    ArgumentCount {
        /// Kernel name.
        kernel: String,
        /// Explicit arguments in the code object's metadata.
        expected: usize,
        /// Arguments the declaration or the caller passes.
        got: usize,
    },
    /// An argument passed as a buffer where the kernel takes a value, or the other way round.
    #[error(
        "kernel {kernel} argument {position} of {count}{}: the code object has a {expected} argument, the launch passes {rust_type} as {got}",
        name_suffix(.name)
    )]
    ArgumentKind {
        /// Kernel name.
        kernel: String,
        /// 1-based position of the argument.
        position: u32,
        /// Number of explicit arguments.
        count: u32,
        /// The argument's source name, when the metadata records it.
        name: Option<String>,
        /// The metadata's `.value_kind`.
        expected: String,
        /// How the launch passes it: `global_buffer` or `by_value`.
        got: &'static str,
        /// The parameter's Rust type in the declaration.
        rust_type: &'static str,
    },
    /// An argument of another size than the kernel's.
    #[error(
        "kernel {kernel} argument {position} of {count}{}: the code object expects {expected} bytes, the launch passes {got} bytes ({rust_type})",
        name_suffix(.name)
    )]
    ArgumentSize {
        /// Kernel name.
        kernel: String,
        /// 1-based position of the argument.
        position: u32,
        /// Number of explicit arguments.
        count: u32,
        /// The argument's source name, when the metadata records it.
        name: Option<String>,
        /// The metadata's `.size`.
        expected: u32,
        /// Bytes the launch passes.
        got: u32,
        /// The parameter's Rust type, or "raw bytes".
        rust_type: &'static str,
    },
    /// The declaration's launch bounds differ from the code object's: it was built from other
    /// source.
    #[error(
        "kernel {kernel} is declared with max_threads = {declared} but its code object allows workgroups of {compiled}: the code object is stale: rebuild it (`cargo build` reruns a build script's iron-build; `cargo xtask build --kernels <crate dir>` another crate; `cargo xtask build --gfx <gfx>` the kernel library)"
    )]
    StaleBounds {
        /// Kernel name.
        kernel: String,
        /// `max_threads` of the `#[kernel]` declaration.
        declared: u32,
        /// `.max_flat_workgroup_size` of the code object.
        compiled: u32,
    },
    /// A grid without workgroups in some dimension.
    #[error(
        "grid {grid:?} of {kernel} has a zero dimension: launch at least one workgroup in x, y and z"
    )]
    EmptyGrid {
        /// Kernel name.
        kernel: String,
        /// The grid asked for.
        grid: [u32; 3],
    },
    /// A workgroup without work-items in some dimension.
    #[error(
        "block {block:?} of {kernel} has a zero dimension: a workgroup needs at least one work-item in x, y and z"
    )]
    EmptyBlock {
        /// Kernel name.
        kernel: String,
        /// The block asked for.
        block: [u32; 3],
    },
    /// A workgroup larger than the kernel was compiled for.
    #[error("block of {threads} exceeds {kernel}'s declared maximum of {max}")]
    BlockTooLarge {
        /// Kernel name.
        kernel: String,
        /// Work-items per workgroup asked for.
        threads: u64,
        /// `.max_flat_workgroup_size`.
        max: u32,
    },
    /// A workgroup larger than the device runs.
    #[error("block of {threads} for {kernel} exceeds the device's maximum of {max} work-items")]
    BlockExceedsDevice {
        /// Kernel name.
        kernel: String,
        /// Work-items per workgroup asked for.
        threads: u64,
        /// The device's maximum.
        max: u32,
    },
    /// A kernel compiled for one workgroup shape, launched with another.
    #[error("kernel {kernel} requires a block of {required:?}, got {block:?}")]
    WrongBlockShape {
        /// Kernel name.
        kernel: String,
        /// `.reqd_workgroup_size`.
        required: [u32; 3],
        /// The block asked for.
        block: [u32; 3],
    },
    /// More work-items in one dimension than a dispatch can describe.
    #[error(
        "grid of {kernel} in {axis}: {workgroups} workgroups of {block} work-items exceed the 4294967295 work-items a dimension can hold"
    )]
    GridTooLarge {
        /// Kernel name.
        kernel: String,
        /// `x`, `y` or `z`.
        axis: char,
        /// Workgroups in that dimension.
        workgroups: u32,
        /// Work-items per workgroup in that dimension.
        block: u32,
    },
    /// More LDS than the device gives a workgroup.
    #[error(
        "{kernel} needs {static_lds} bytes of static and {dynamic_lds} bytes of dynamic LDS, above the device's {limit} bytes per workgroup"
    )]
    LdsTooLarge {
        /// Kernel name.
        kernel: String,
        /// `.group_segment_fixed_size`.
        static_lds: u32,
        /// Dynamic LDS asked for.
        dynamic_lds: u32,
        /// The device's LDS per workgroup.
        limit: u32,
    },
}

fn name_suffix(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
}

/// The metadata kind a parameter of `kind` must have.
fn value_kind_of(kind: ParamKind) -> ArgValueKind {
    match kind {
        ParamKind::Buffer => ArgValueKind::GlobalBuffer,
        ParamKind::Value => ArgValueKind::ByValue,
    }
}

/// Checks a declared signature against a kernel's metadata: as many parameters as explicit
/// arguments, each of the same kind (buffer or value) and size.
pub fn check_signature(metadata: &KernelMetadata, params: &[ParamSpec]) -> Result<(), LaunchError> {
    let explicit: Vec<_> = metadata.explicit_args().collect();
    if explicit.len() != params.len() {
        return Err(LaunchError::ArgumentCount {
            kernel: metadata.name.clone(),
            expected: explicit.len(),
            got: params.len(),
        });
    }
    let count = explicit.len() as u32;
    for (position, (arg, param)) in (1..).zip(explicit.iter().zip(params)) {
        let expected_kind = value_kind_of(param.kind);
        if arg.value_kind != expected_kind {
            return Err(LaunchError::ArgumentKind {
                kernel: metadata.name.clone(),
                position,
                count,
                name: arg.name.clone(),
                expected: arg.value_kind.as_str().to_owned(),
                got: expected_kind_name(param.kind),
                rust_type: param.rust_type,
            });
        }
        if arg.size != param.size {
            return Err(LaunchError::ArgumentSize {
                kernel: metadata.name.clone(),
                position,
                count,
                name: arg.name.clone(),
                expected: arg.size,
                got: param.size,
                rust_type: param.rust_type,
            });
        }
    }
    Ok(())
}

fn expected_kind_name(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Buffer => "global_buffer",
        ParamKind::Value => "by_value",
    }
}

/// Checks that a `#[kernel]` declaration's bounds are those the code object was built with.
pub fn check_bounds(metadata: &KernelMetadata, declared: &LaunchBounds) -> Result<(), LaunchError> {
    if declared.max_threads != metadata.max_flat_workgroup_size {
        return Err(LaunchError::StaleBounds {
            kernel: metadata.name.clone(),
            declared: declared.max_threads,
            compiled: metadata.max_flat_workgroup_size,
        });
    }
    Ok(())
}

/// Checks a launch's geometry against the kernel and the device: a workgroup in every grid
/// dimension, a non-empty block within the kernel's and the device's maximum (and the kernel's
/// required shape, if it has one), at most 2^32 - 1 work-items per dimension, static plus
/// dynamic LDS within the device's limit.
pub fn check_launch(
    metadata: &KernelMetadata,
    config: &LaunchConfig,
    device: &DeviceProperties,
) -> Result<(), LaunchError> {
    let kernel = || metadata.name.clone();
    if config.grid.contains(&0) {
        return Err(LaunchError::EmptyGrid {
            kernel: kernel(),
            grid: config.grid,
        });
    }
    if config.block.contains(&0) {
        return Err(LaunchError::EmptyBlock {
            kernel: kernel(),
            block: config.block,
        });
    }
    let threads = config.threads_per_block();
    if threads > u64::from(metadata.max_flat_workgroup_size) {
        return Err(LaunchError::BlockTooLarge {
            kernel: kernel(),
            threads,
            max: metadata.max_flat_workgroup_size,
        });
    }
    if threads > u64::from(device.max_threads_per_block) {
        return Err(LaunchError::BlockExceedsDevice {
            kernel: kernel(),
            threads,
            max: device.max_threads_per_block,
        });
    }
    if let Some(required) = metadata.reqd_workgroup_size
        && required != config.block
    {
        return Err(LaunchError::WrongBlockShape {
            kernel: kernel(),
            required,
            block: config.block,
        });
    }
    for ((axis, workgroups), block) in ['x', 'y', 'z']
        .into_iter()
        .zip(config.grid)
        .zip(config.block)
    {
        if u64::from(workgroups) * u64::from(block) > u64::from(u32::MAX) {
            return Err(LaunchError::GridTooLarge {
                kernel: kernel(),
                axis,
                workgroups,
                block,
            });
        }
    }
    let lds = u64::from(metadata.group_segment_fixed_size) + u64::from(config.dynamic_lds);
    if lds > u64::from(device.lds_per_workgroup) {
        return Err(LaunchError::LdsTooLarge {
            kernel: kernel(),
            static_lds: metadata.group_segment_fixed_size,
            dynamic_lds: config.dynamic_lds,
            limit: device.lds_per_workgroup,
        });
    }
    Ok(())
}
