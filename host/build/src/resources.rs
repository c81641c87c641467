//! The per-kernel resource rows of the build's table and manifest, read from the code object with
//! the host crate's reader.

use crate::compile::CompiledTarget;
use crate::error::{Context, Result};
use iron_code_object::{CodeObject, occupancy};
use serde::Serialize;

/// What one kernel uses on one target.
#[derive(Clone, Debug, Serialize)]
pub struct KernelResources {
    /// Kernel name.
    pub name: String,
    /// Launch bounds declared in the source (max work-items per workgroup).
    pub declared_max_threads: u32,
    /// Whether the source allows scratch.
    pub allow_scratch: bool,
    /// Launch contract: the workgroup must be a whole number of waves.
    pub whole_waves: bool,
    /// Launch contract: the workgroup's size must be a multiple of this (0: nothing).
    pub block_multiple: u32,
    /// Launch contract: the one workgroup shape the kernel runs (`.reqd_workgroup_size`).
    pub required_block: Option<[u32; 3]>,
    /// Architected VGPRs per lane.
    pub vgpr: u32,
    /// Accumulation VGPRs per lane (CDNA).
    pub agpr: u32,
    /// SGPRs per wave.
    pub sgpr: u32,
    /// Static LDS per workgroup in bytes (dynamic LDS comes on top at launch).
    pub lds_bytes: u32,
    /// Scratch per work-item in bytes.
    pub scratch_bytes: u32,
    /// Waves per SIMD the kernel can keep resident.
    pub occupancy: u32,
    /// The most waves per SIMD the hardware allows.
    pub max_waves: u32,
    /// What limits the occupancy.
    pub occupancy_limit: String,
    /// Machine code size in bytes.
    pub code_bytes: u64,
    /// `.max_flat_workgroup_size` in the metadata.
    pub max_flat_workgroup_size: u32,
    /// `.wavefront_size` in the metadata.
    pub wavefront_size: u32,
}

/// Reads the resource rows of every kernel of a built target.
pub fn collect(built: &CompiledTarget) -> Result<Vec<KernelResources>> {
    let path = &built.code_object;
    let bytes = std::fs::read(path).context(|| format!("cannot read {}", path.display()))?;
    let co = CodeObject::parse(&bytes).context(|| format!("reading {}", path.display()))?;
    let mut rows = Vec::new();
    let gfx = built.target.gfx.name;
    let max_waves = occupancy::target_limits(gfx)
        .ok_or_else(|| crate::Error::new(format!("no occupancy limits known for {gfx}")))?
        .max_waves_per_simd;
    for kernel in co.kernels() {
        let meta = kernel.metadata();
        let declared = built.bounds.get(&meta.name);
        let agpr = meta.agpr_count.unwrap_or(0);
        let occ = occupancy::occupancy(gfx, &occupancy::KernelResources::from_metadata(meta, 0))
            .context(|| format!("occupancy of `{}` on {gfx}", meta.name))?;
        rows.push(KernelResources {
            name: meta.name.clone(),
            declared_max_threads: declared.map_or(0, |b| b.max_threads),
            allow_scratch: declared.is_some_and(|b| b.allow_scratch),
            whole_waves: declared.is_some_and(|b| b.whole_waves),
            block_multiple: declared.map_or(0, |b| b.block_multiple),
            required_block: meta.reqd_workgroup_size,
            vgpr: meta.vgpr_count,
            agpr,
            sgpr: meta.sgpr_count,
            lds_bytes: meta.group_segment_fixed_size,
            scratch_bytes: meta.private_segment_fixed_size,
            occupancy: occ.waves_per_simd,
            max_waves,
            occupancy_limit: format!("{:?}", occ.limiter).to_lowercase(),
            code_bytes: kernel.code().len() as u64,
            max_flat_workgroup_size: meta.max_flat_workgroup_size,
            wavefront_size: meta.wavefront_size,
        });
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(rows)
}
