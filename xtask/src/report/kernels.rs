//! The report's rows: each kernel of a code object with its static resources and code shape,
//! joined with the representative runs that launched it and their roofline estimates.

use super::code_stats::{self, CodeStats};
use super::devices::Device;
use super::modelled::Modelled;
use super::roofline::{self, Estimate};
use super::workloads::{Family, Math, Run};
use anyhow::{Context, Result};
use iron::code_object::{CodeObject, occupancy};
use iron_emu::{ACCESS_WIDTHS, InstructionClass, Target, WaveSize};
use serde::Serialize;

/// Registers, memory and occupancy of one kernel, from its code object.
#[derive(Clone, Debug, Serialize)]
pub struct Resources {
    /// VGPRs per lane as the metadata counts them (on gfx90a and later CDNA, AGPRs included).
    pub vgpr: u32,
    /// Accumulation VGPRs per lane (CDNA).
    pub agpr: u32,
    /// SGPRs per wave.
    pub sgpr: u32,
    /// Static LDS per workgroup in bytes.
    pub lds_bytes: u32,
    /// Scratch per work-item in bytes.
    pub scratch_bytes: u32,
    /// Waves per SIMD at the largest workgroup and no dynamic LDS.
    pub occupancy: u32,
    /// The most waves per SIMD the hardware allows.
    pub max_waves: u32,
    /// What limits `occupancy`.
    pub occupancy_limit: String,
    /// Machine code bytes.
    pub code_bytes: u64,
    /// Lanes per wave.
    pub wave: u32,
}

/// One kernel and what its machine code says.
#[derive(Clone, Debug, Serialize)]
pub struct KernelStatic {
    /// The kernel's name.
    pub name: String,
    /// Its resources.
    pub resources: Resources,
    /// Its code's shape.
    pub code: CodeStats,
}

/// What one representative run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// The operation and shape.
    pub label: String,
    /// The kernel's family.
    pub family: Family,
    /// Dispatches the operation made.
    pub dispatches: usize,
    /// Bytes the algorithm must move.
    pub min_bytes: u64,
    /// Bytes vector memory instructions read.
    pub vector_bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes scalar memory instructions read (kernel arguments, wave-uniform data).
    pub scalar_bytes_read: u64,
    /// (vector bytes read + bytes written) / minimum: the headline number.
    pub bytes_ratio: f64,
    /// Nominal FLOPs.
    pub flops: u64,
    /// Arithmetic the FLOPs run on.
    pub math: Math,
    /// Wave-instructions executed.
    pub wave_instructions: u64,
    /// Wave-instructions per element processed (outputs, or inputs for reductions).
    pub instructions_per_element: f64,
    /// Wave-instructions per class, in `InstructionClass::ALL` order.
    pub executed_mix: Vec<u64>,
    /// Vector global memory instructions by access width, `(bytes per lane, count)`.
    pub access_widths: Vec<(u32, u64)>,
    /// Share of vector global memory instructions that move 16 bytes per lane.
    pub wide_access_share: f64,
    /// LDS instructions executed.
    pub lds_accesses: u64,
    /// Extra LDS cycles from bank conflicts.
    pub lds_bank_conflict_cycles: u64,
    /// Waves per SIMD at the launched workgroup size and LDS.
    pub launch_occupancy: Option<u32>,
    /// The lower bound on each device of the gfx.
    pub estimates: Vec<Estimate>,
    /// The estimated time on each device of `estimates` (same order), from the emulator's
    /// cycle model.
    pub modelled: Vec<Modelled>,
    /// Host seconds the emulated run took.
    pub host_seconds: f64,
}

/// One row of the report: a kernel, and one of its runs if any launched it.
#[derive(Clone, Debug, Serialize)]
pub struct KernelRow {
    /// The build target: the gfx, with `-w64` for a wave64 RDNA build.
    pub gfx: String,
    /// The kernel.
    pub kernel: KernelStatic,
    /// The run, if an operation launched this kernel.
    pub run: Option<Measured>,
}

/// Every kernel of `code_object` with its static numbers.
pub fn read_static(code_object: &[u8]) -> Result<(String, Vec<KernelStatic>)> {
    let co = CodeObject::parse(code_object).context("reading the kernel library's code object")?;
    let gfx = co.target().processor.clone();
    let target = Target::from_name(&gfx).with_context(|| format!("the emulator has no {gfx}"))?;
    let max_waves = occupancy::target_limits(&gfx)
        .with_context(|| format!("no occupancy limits known for {gfx}"))?
        .max_waves_per_simd;
    let mut kernels = Vec::new();
    for kernel in co.kernels() {
        let meta = kernel.metadata();
        let occ = occupancy::occupancy(&gfx, &occupancy::KernelResources::from_metadata(meta, 0))
            .with_context(|| format!("occupancy of `{}` on {gfx}", meta.name))?;
        let wave = if meta.wavefront_size == 32 {
            WaveSize::Wave32
        } else {
            WaveSize::Wave64
        };
        kernels.push(KernelStatic {
            name: meta.name.clone(),
            resources: Resources {
                vgpr: meta.vgpr_count,
                agpr: meta.agpr_count.unwrap_or(0),
                sgpr: meta.sgpr_count,
                lds_bytes: meta.group_segment_fixed_size,
                scratch_bytes: meta.private_segment_fixed_size,
                occupancy: occ.waves_per_simd,
                max_waves,
                occupancy_limit: format!("{:?}", occ.limiter).to_lowercase(),
                code_bytes: kernel.code().len() as u64,
                wave: meta.wavefront_size,
            },
            code: code_stats::analyse(target, wave, kernel.code()),
        });
    }
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((gfx, kernels))
}

/// The occupancy of `kernel` launched as `run` launched it.
fn launch_occupancy(gfx: &str, kernel: &KernelStatic, run: &Run) -> Option<u32> {
    let c = &run.counters;
    let waves_per_group = c.waves.checked_div(c.workgroups)?;
    let resources = occupancy::KernelResources {
        wave_size: kernel.resources.wave,
        vgprs: kernel.resources.vgpr,
        sgprs: kernel.resources.sgpr,
        lds_bytes: c.lds_bytes_per_workgroup,
        workgroup_size: u32::try_from(waves_per_group).ok()? * kernel.resources.wave,
    };
    occupancy::occupancy(gfx, &resources)
        .ok()
        .map(|o| o.waves_per_simd)
}

/// The gfx a report covers, and the devices its estimates are for.
pub struct Scope<'a> {
    /// The build target's name, e.g. `gfx1100-w64`.
    pub label: &'a str,
    /// The gfx processor, e.g. `gfx1100`.
    pub processor: &'a str,
    /// The devices to estimate for.
    pub devices: &'a [&'static Device],
    /// Per device of `devices`, the workloads' runs in timing mode (the first gives the
    /// counters).
    pub timed: &'a [Vec<Run>],
}

/// What `run` measured, with its estimates on every device of the scope (the peer benchmark
/// measures Triton's kernels with it too).
pub fn measure(scope: &Scope<'_>, kernel: &KernelStatic, run: &Run, index: usize) -> Measured {
    let c = &run.counters;
    let d = &run.demand;
    let moved = c.vector_bytes_read() + c.global_bytes_written;
    let estimates: Vec<Estimate> = scope
        .devices
        .iter()
        .map(|dev| roofline::estimate(dev, moved, d.min_bytes, d.flops, d.math))
        .collect();
    let vector_accesses: u64 = c.global_access_widths.iter().sum();
    let wide = ACCESS_WIDTHS
        .iter()
        .position(|&w| w == 16)
        .map_or(0, |i| c.global_access_widths[i]);
    Measured {
        label: d.label.clone(),
        family: run.family,
        dispatches: run.dispatches,
        min_bytes: d.min_bytes,
        vector_bytes_read: c.vector_bytes_read(),
        bytes_written: c.global_bytes_written,
        scalar_bytes_read: c.scalar_bytes_read,
        bytes_ratio: moved as f64 / d.min_bytes.max(1) as f64,
        flops: d.flops,
        math: d.math,
        wave_instructions: c.total_instructions(),
        instructions_per_element: c.total_instructions() as f64 / d.elements.max(1) as f64,
        executed_mix: InstructionClass::ALL.iter().map(|&k| c.of(k)).collect(),
        access_widths: ACCESS_WIDTHS
            .iter()
            .copied()
            .zip(c.global_access_widths)
            .filter(|&(_, n)| n > 0)
            .collect(),
        wide_access_share: if vector_accesses == 0 {
            0.0
        } else {
            wide as f64 / vector_accesses as f64
        },
        lds_accesses: c.lds_accesses,
        lds_bank_conflict_cycles: c.lds_bank_conflict_cycles,
        launch_occupancy: launch_occupancy(scope.processor, kernel, run),
        estimates: estimates.clone(),
        modelled: scope
            .timed
            .iter()
            .zip(&estimates)
            .filter_map(|(runs, bound)| {
                let same = |r: &&Run| r.kernel == run.kernel && r.demand.label == d.label;
                let timed = runs
                    .get(index)
                    .filter(same)
                    .or_else(|| runs.iter().find(same))?;
                Some(Modelled::new(timed.counters.timing.as_ref()?, bound))
            })
            .collect(),
        host_seconds: run.host_seconds,
    }
}

/// Joins the kernels of one gfx with its runs: one row per run, and one row without a run for
/// each kernel no operation launched. Runs of kernels missing from the code object are skipped.
pub fn rows(scope: &Scope<'_>, kernels: &[KernelStatic], runs: &[Run]) -> Vec<KernelRow> {
    let mut rows = Vec::new();
    for kernel in kernels {
        let mut launched = false;
        for (index, run) in runs.iter().enumerate() {
            if run.kernel != kernel.name {
                continue;
            }
            launched = true;
            rows.push(KernelRow {
                gfx: scope.label.to_string(),
                kernel: kernel.clone(),
                run: Some(measure(scope, kernel, run, index)),
            });
        }
        if !launched {
            rows.push(KernelRow {
                gfx: scope.label.to_string(),
                kernel: kernel.clone(),
                run: None,
            });
        }
    }
    rows
}
