//! `cargo xtask report`: performance you can see. For every library kernel and gfx:
//!
//! - static: registers, LDS, scratch, occupancy and its limiter, code size, the instruction mix
//!   (decoded with the emulator's decoder) and the matrix instructions per main-loop iteration;
//! - dynamic, from one emulated run per operation at a representative shape through the
//!   library's host API: bytes moved against the algorithm's minimum (the headline), scalar
//!   bytes apart, instructions per element, the access-width histogram and LDS bank conflicts;
//! - a roofline lower bound on every known device of the gfx ([`devices::DEVICES`]);
//! - an estimated time on each of those devices from the emulator's cycle model, with where the
//!   waves waited ([`modelled`]): every run is made once per device, in timing mode (`--smoke`:
//!   on the gfx's first device only).
//!
//! It writes `report.md`, `report.json` and one `roofline-<gfx>.svg` per target under
//! `<target dir>/iron/report/`, and lists every kernel that misses a target ([`targets`]).

mod budget;
mod chart;
mod code_stats;
mod devices;
pub(crate) mod kernels;
mod markdown;
mod modelled;
mod roofline;
mod targets;
pub(crate) mod workloads;

use crate::build;
use anyhow::{Context, Result, bail};
use iron::emulator::Emulator;
use iron::library::Library;
use iron_build::{Target, parse_targets};
use kernels::{KernelRow, Scope};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use targets::Miss;
use workloads::Size;

/// What `cargo xtask report` was asked for.
pub struct Options {
    /// `--gfx`: the targets (`None`: every target, or the device's gfx with `--device`).
    pub gfx: Option<String>,
    /// `--device`: estimate for this device only.
    pub device: Option<String>,
    /// `--smoke`: small shapes, for CI.
    pub smoke: bool,
    /// `--artifacts`: use the build in this directory instead of building.
    pub artifacts: Option<PathBuf>,
    /// `--strict`: fail on a miss without a known exception, or an operation that could not run.
    pub strict: bool,
    /// `--update-budget`: write this report's wave-instructions as the instruction budget
    /// instead of judging them against it.
    pub update_budget: bool,
}

/// Everything the report found, as `report.json` holds it.
#[derive(Serialize)]
pub struct Report {
    /// The targets covered, in order.
    pub gfx: Vec<String>,
    /// `full` or `smoke` shapes.
    pub size: String,
    /// One row per run, and one per kernel no run launched.
    pub rows: Vec<KernelRow>,
    /// The targets missed.
    pub misses: Vec<Miss>,
    /// Per target, the operations that could not run and why.
    pub failures: BTreeMap<String, Vec<String>>,
}

/// Runs the report.
pub fn run(root: &Path, options: &Options) -> Result<()> {
    let device = match &options.device {
        Some(name) => Some(devices::by_name(name).with_context(|| {
            let known: Vec<&str> = devices::DEVICES.iter().map(|d| d.name).collect();
            format!(
                "unknown device `{name}`: known devices are {}",
                known.join(", ")
            )
        })?),
        None => None,
    };
    let gfx_list = match (&options.gfx, device) {
        (Some(list), _) => list.clone(),
        (None, Some(d)) => d.gfx.to_string(),
        (None, None) => "all".to_string(),
    };
    let targets = parse_targets(&gfx_list, None)?;
    if let Some(d) = device
        && let Some(other) = targets.iter().find(|t| t.gfx.name != d.gfx)
    {
        bail!(
            "{} is a {} device: --gfx {} does not match it",
            d.name,
            d.gfx,
            other.gfx.name
        );
    }
    let artifacts = match &options.artifacts {
        Some(dir) => dir.clone(),
        None => {
            let dir = build::target_dir(root).join("iron");
            build::device_crate(root, &build::library_dir(root), &gfx_list, &dir)?;
            dir
        }
    };
    let size = if options.smoke {
        Size::Smoke
    } else {
        Size::Full
    };
    let out_dir = build::target_dir(root).join("iron/report");
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;

    let mut report = Report {
        gfx: Vec::new(),
        size: format!("{size:?}").to_lowercase(),
        rows: Vec::new(),
        misses: Vec::new(),
        failures: BTreeMap::new(),
    };
    for target in &targets {
        let started = Instant::now();
        let selected: Vec<&'static devices::Device> = match device {
            Some(d) => vec![d],
            None => devices::of_gfx(target.gfx.name).collect(),
        };
        let (rows, failures) = report_target(&artifacts, *target, &selected, size)?;
        let label = target.dir_name();
        let row_refs: Vec<&KernelRow> = rows.iter().collect();
        let svg = out_dir.join(format!("roofline-{label}.svg"));
        chart::draw(&label, &selected, &row_refs, &svg)?;
        eprintln!(
            "{target}: {} kernels, {} runs in {:.1} s",
            rows.iter()
                .map(|r| &r.kernel.name)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            rows.iter().filter(|r| r.run.is_some()).count(),
            started.elapsed().as_secs_f64()
        );
        for failure in &failures {
            eprintln!("  {failure}");
        }
        report.gfx.push(label.clone());
        report.rows.extend(rows);
        report.failures.insert(label, failures);
    }
    report.misses = targets::check(&report.rows);
    if options.update_budget {
        budget::Budget::measured(&report.size, &report.rows).save_merged(root)?;
        eprintln!(
            "report: wrote the instruction budget of {} to {}",
            report.gfx.join(", "),
            budget::BUDGET_FILE
        );
    } else {
        let budget = budget::Budget::load(root)?;
        report
            .misses
            .extend(budget.check(&report.size, &report.rows));
    }

    let md_path = out_dir.join("report.md");
    std::fs::write(&md_path, markdown::render(&report))
        .with_context(|| format!("cannot write {}", md_path.display()))?;
    let json_path = out_dir.join("report.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let open = report
        .misses
        .iter()
        .filter(|m| m.exception.is_none())
        .count();
    eprintln!(
        "report: {} ({} targets missed, {open} without a known exception), {}, roofline-*.svg in {}",
        md_path.display(),
        report.misses.len(),
        json_path.display(),
        out_dir.display()
    );
    let failed: usize = report.failures.values().map(Vec::len).sum();
    if options.strict && (open > 0 || failed > 0) {
        bail!(
            "{open} target(s) missed without a known exception (listed under \"Targets missed\" \
             in {}) and {failed} operation(s) could not run (listed above)",
            md_path.display()
        );
    }
    Ok(())
}

/// The kernel library of `target` built in `artifacts`, loaded on an emulator of its gfx.
pub struct LoadedLibrary {
    /// The code object's processor (`gfx950`).
    pub processor: String,
    /// Every kernel's resources, from the code object.
    pub statics: Vec<kernels::KernelStatic>,
    /// The emulator the library is loaded on.
    pub emulator: Emulator,
    /// The library.
    pub library: Library,
}

/// Loads the kernel library of `target` from `artifacts` (`<artifacts>/<target>/kernels.co`)
/// on an emulator of its gfx.
pub fn load_library(artifacts: &Path, target: Target) -> Result<LoadedLibrary> {
    let path = artifacts.join(target.dir_name()).join("kernels.co");
    let image = std::fs::read(&path).with_context(|| {
        format!(
            "cannot read {}: build {target} first (cargo xtask build), or drop --artifacts",
            path.display()
        )
    })?;
    let (processor, statics) = kernels::read_static(&image)?;
    let emulator = Emulator::new(&processor)?;
    let library = Library::load(&emulator.device(), &image)
        .with_context(|| format!("loading the library of {target} on the emulator"))?;
    Ok(LoadedLibrary {
        processor,
        statics,
        emulator,
        library,
    })
}

/// The rows of one target and the operations that could not run there.
fn report_target(
    artifacts: &Path,
    target: Target,
    devices: &[&'static devices::Device],
    size: Size,
) -> Result<(Vec<KernelRow>, Vec<String>)> {
    let LoadedLibrary {
        processor,
        statics: kernels,
        emulator,
        library,
    } = load_library(artifacts, target)?;
    // One run per device in timing mode; the first device's also gives the counters. A smoke
    // report (the suite's) estimates on the gfx's first device only.
    let timed_devices = match size {
        Size::Smoke => &devices[..devices.len().min(1)],
        Size::Full => devices,
    };
    let mut timed = Vec::new();
    let mut failures = Vec::new();
    for device in timed_devices {
        let model = iron_emu::timing::Device::by_name(device.name)
            .with_context(|| format!("the timing model has no {}", device.name))?;
        emulator.set_timing(Some(model))?;
        eprintln!("{target}: running the workloads timed on {}", device.name);
        let (runs, failed) = workloads::run_all(&emulator, &library, size);
        if timed.is_empty() {
            failures = failed;
        }
        timed.push(runs);
    }
    let runs = timed.first().map(Vec::as_slice).unwrap_or_default();
    let label = target.dir_name();
    let scope = Scope {
        label: &label,
        processor: &processor,
        devices,
        timed: &timed,
    };
    Ok((kernels::rows(&scope, &kernels, runs), failures))
}
