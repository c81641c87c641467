//! The checks a launch passes before anything runs: the declared signature against the code
//! object's metadata (once, when a typed kernel is resolved), and the geometry against the
//! kernel and the device (every launch).

use thiserror::Error;

use iron_intrinsics::launch::{LaunchBounds, LaunchContract};

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
    /// The declaration's required block differs from the code object's `.reqd_workgroup_size`:
    /// it was built from other source.
    #[error(
        "kernel {kernel} is declared with block {declared:?} but its code object requires {compiled:?}: the code object is stale: rebuild it"
    )]
    StaleBlock {
        /// Kernel name.
        kernel: String,
        /// `block` of the `#[kernel]` declaration.
        declared: Option<[u32; 3]>,
        /// `.reqd_workgroup_size` of the code object.
        compiled: Option<[u32; 3]>,
    },
    /// A workgroup that is not a whole number of waves, for a kernel declared `whole_waves`.
    #[error(
        "kernel {kernel} runs whole waves only: a block of {threads} work-items is not a multiple of the wave size {wave}"
    )]
    PartialWave {
        /// Kernel name.
        kernel: String,
        /// Work-items per workgroup asked for.
        threads: u64,
        /// `.wavefront_size`.
        wave: u32,
    },
    /// A workgroup whose size is not a multiple of the kernel's declared `block_multiple`.
    #[error(
        "kernel {kernel} needs a block whose size is a multiple of {multiple}, got {threads} work-items"
    )]
    BlockNotMultiple {
        /// Kernel name.
        kernel: String,
        /// Work-items per workgroup asked for.
        threads: u64,
        /// The declared `block_multiple`.
        multiple: u32,
    },
    /// Less dynamic LDS than the kernel's declared `dynamic_lds` needs for this block.
    #[error(
        "kernel {kernel} needs {needed} bytes of dynamic LDS for a block of {threads} work-items (wave {wave}), the launch gives {given}: use `.with_dynamic_lds(kernel.dynamic_lds_for(block))`"
    )]
    DynamicLdsTooSmall {
        /// Kernel name.
        kernel: String,
        /// Work-items per workgroup asked for.
        threads: u64,
        /// `.wavefront_size`.
        wave: u32,
        /// Bytes the declared `dynamic_lds` gives for this block.
        needed: u32,
        /// Bytes the launch gives.
        given: u32,
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

/// Checks that a `#[kernel]` declaration's bounds and required block are those the code object
/// was built with.
pub fn check_bounds(
    metadata: &KernelMetadata,
    declared: &LaunchBounds,
    contract: &LaunchContract,
) -> Result<(), LaunchError> {
    if declared.max_threads != metadata.max_flat_workgroup_size {
        return Err(LaunchError::StaleBounds {
            kernel: metadata.name.clone(),
            declared: declared.max_threads,
            compiled: metadata.max_flat_workgroup_size,
        });
    }
    if contract.block.is_some() && contract.block != metadata.reqd_workgroup_size {
        return Err(LaunchError::StaleBlock {
            kernel: metadata.name.clone(),
            declared: contract.block,
            compiled: metadata.reqd_workgroup_size,
        });
    }
    Ok(())
}

/// The dynamic LDS in bytes that `contract` asks for a workgroup of `threads` work-items on a
/// wave of `wave` lanes (0 when it declares none). `threads` above 1024 (more than any
/// kernel runs) gives 0: such a launch is refused before the contract is asked.
pub fn contract_dynamic_lds(contract: &LaunchContract, threads: u64, wave: u32) -> u32 {
    match (contract.dynamic_lds, u32::try_from(threads)) {
        (Some(bytes), Ok(threads @ 1..=1024)) => bytes(threads, wave),
        _ => 0,
    }
}

/// Checks a launch's geometry against the kernel's declared contract: whole waves, the block
/// multiple and at least the dynamic LDS it needs. Run after [`check_launch`], which has
/// already refused empty and oversized blocks and a block other than a required one.
pub fn check_contract(
    metadata: &KernelMetadata,
    contract: &LaunchContract,
    config: &LaunchConfig,
) -> Result<(), LaunchError> {
    let kernel = || metadata.name.clone();
    let threads = config.threads_per_block();
    let wave = metadata.wavefront_size;
    if contract.whole_waves && !threads.is_multiple_of(u64::from(wave.max(1))) {
        return Err(LaunchError::PartialWave {
            kernel: kernel(),
            threads,
            wave,
        });
    }
    if contract.block_multiple > 1 && !threads.is_multiple_of(u64::from(contract.block_multiple)) {
        return Err(LaunchError::BlockNotMultiple {
            kernel: kernel(),
            threads,
            multiple: contract.block_multiple,
        });
    }
    let needed = contract_dynamic_lds(contract, threads, wave);
    if config.dynamic_lds < needed {
        return Err(LaunchError::DynamicLdsTooSmall {
            kernel: kernel(),
            threads,
            wave,
            needed,
            given: config.dynamic_lds,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A wave64 kernel's metadata with a 1024-work-item bound.
    fn metadata(wave: u32) -> KernelMetadata {
        let mut metadata = KernelMetadata::new("contracted", Vec::new(), 0);
        metadata.wavefront_size = wave;
        metadata.max_flat_workgroup_size = 1024;
        metadata
    }

    /// One word of LDS per wave plus a 16-byte header.
    fn per_wave(threads: u32, wave: u32) -> u32 {
        16 + 4 * threads / wave
    }

    fn check(contract: &LaunchContract, wave: u32, block: u32, lds: u32) -> Result<(), String> {
        let config = LaunchConfig::new([3, 1, 1], [block, 1, 1]).with_dynamic_lds(lds);
        check_contract(&metadata(wave), contract, &config).map_err(|e| e.to_string())
    }

    #[test]
    fn whole_waves_refuse_a_partial_wave_for_the_kernels_wave_size() {
        let contract = LaunchContract {
            whole_waves: true,
            ..LaunchContract::NONE
        };
        check(&contract, 64, 128, 0).unwrap();
        check(&contract, 32, 96, 0).unwrap();
        assert_eq!(
            check(&contract, 64, 96, 0).unwrap_err(),
            "kernel contracted runs whole waves only: a block of 96 work-items is not a multiple of the wave size 64"
        );
        assert!(check(&contract, 32, 100, 0).is_err());
        check(&LaunchContract::NONE, 64, 100, 0).unwrap();
    }

    #[test]
    fn a_block_multiple_is_enforced_on_the_flat_size() {
        let contract = LaunchContract {
            block_multiple: 48,
            ..LaunchContract::NONE
        };
        check(&contract, 64, 96, 0).unwrap();
        assert_eq!(
            check(&contract, 64, 64, 0).unwrap_err(),
            "kernel contracted needs a block whose size is a multiple of 48, got 64 work-items"
        );
        let config = LaunchConfig::new([1, 1, 1], [8, 6, 2]);
        check_contract(&metadata(64), &contract, &config).unwrap();
    }

    #[test]
    fn dynamic_lds_must_cover_the_declared_function_of_the_block() {
        let contract = LaunchContract {
            dynamic_lds: Some(per_wave),
            ..LaunchContract::NONE
        };
        assert_eq!(contract_dynamic_lds(&contract, 256, 64), 32);
        assert_eq!(contract_dynamic_lds(&contract, 256, 32), 48);
        assert_eq!(contract_dynamic_lds(&contract, 0, 64), 0);
        assert_eq!(contract_dynamic_lds(&contract, 2048, 64), 0);
        assert_eq!(contract_dynamic_lds(&LaunchContract::NONE, 256, 64), 0);
        check(&contract, 64, 256, 32).unwrap();
        check(&contract, 64, 256, 4096).unwrap();
        assert_eq!(
            check(&contract, 32, 256, 32).unwrap_err(),
            "kernel contracted needs 48 bytes of dynamic LDS for a block of 256 work-items (wave 32), the launch gives 32: use `.with_dynamic_lds(kernel.dynamic_lds_for(block))`"
        );
    }

    #[test]
    fn a_declared_block_must_be_the_code_objects_required_one() {
        let bounds = LaunchBounds {
            max_threads: 1024,
            min_waves_per_eu: 0,
            max_waves_per_eu: 0,
            allow_scratch: false,
        };
        let contract = LaunchContract {
            block: Some([16, 4, 1]),
            ..LaunchContract::NONE
        };
        let mut compiled = metadata(64);
        assert_eq!(
            check_bounds(&compiled, &bounds, &contract)
                .unwrap_err()
                .to_string(),
            "kernel contracted is declared with block Some([16, 4, 1]) but its code object requires None: the code object is stale: rebuild it"
        );
        compiled.reqd_workgroup_size = Some([16, 4, 1]);
        check_bounds(&compiled, &bounds, &contract).unwrap();
        compiled.reqd_workgroup_size = Some([64, 1, 1]);
        assert!(check_bounds(&compiled, &bounds, &contract).is_err());
        check_bounds(&compiled, &bounds, &LaunchContract::NONE).unwrap();
    }
}
