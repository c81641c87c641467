//! `cargo xtask emu run`: runs one kernel of any code object (Iron's or clang's) on the emulator.

use crate::emu_args::{ArgSpec, check_args, parse_dims};
use anyhow::{Context, Result, bail};
use iron::code_object::{Bundle, CodeObject, is_bundle};
use iron::emulator::{Emulator, Progress, ProgressHook, emulated_targets};
use iron::launch::{LaunchArg, check_launch};
use iron::{DeviceBuffer, LaunchConfig};
use iron_emu::timing::{DEVICES, Device, Stall, TimingSummary};
use iron_emu::{ACCESS_WIDTHS, Counters, InstructionClass, Target};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a running dispatch says how far it has come.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// What `cargo xtask emu run` was asked to do.
pub struct RunRequest {
    /// A code object or offload bundle.
    pub code_object: PathBuf,
    /// The kernel's name.
    pub kernel: String,
    /// `X[,Y[,Z]]` workgroups.
    pub grid: String,
    /// `X[,Y[,Z]]` work-items per workgroup.
    pub block: String,
    /// Dynamic LDS bytes.
    pub lds: u32,
    /// The gfx to emulate (picks the bundle entry).
    pub gfx: Option<String>,
    /// Where buffer arguments are written back.
    pub out_dir: PathBuf,
    /// Print the counters.
    pub stats: bool,
    /// Print every executed instruction.
    pub trace: bool,
    /// The instruction budget (wave-instructions), when not the default.
    pub budget: Option<u64>,
    /// The schedule, when not the default.
    pub schedule: Option<iron_emu::Schedule>,
    /// The emulated device's compute units, when not the target's.
    pub compute_units: Option<u32>,
    /// Estimate the time: on the named device, or (`Some(None)`) the gfx's first.
    pub timing: Option<Option<String>>,
    /// The host threads, when not one per core.
    pub threads: Option<u32>,
    /// The sanitizer checks, when not all.
    pub checks: Option<iron_emu::Checks>,
    /// The explicit arguments, in order.
    pub args: Vec<String>,
}

/// Picks the gfx to emulate from the file and `--gfx`.
fn choose_gfx(image: &[u8], requested: Option<&str>) -> Result<String> {
    let held: Vec<String> = if is_bundle(image) {
        Bundle::parse(image)?
            .entries()
            .iter()
            .filter_map(|e| e.id.target_id.as_ref().map(|t| t.processor.clone()))
            .collect()
    } else {
        vec![CodeObject::parse(image)?.target().processor.clone()]
    };
    let gfx = match (requested, held.as_slice()) {
        (Some(gfx), _) => gfx.to_string(),
        (None, [only]) => only.clone(),
        (None, []) => bail!("the file holds no AMDGPU code object"),
        (None, many) => bail!(
            "the bundle holds several targets ({}): choose one with --gfx",
            many.join(", ")
        ),
    };
    if !held.contains(&gfx) {
        bail!("the file holds code for {}, not {gfx}", held.join(", "));
    }
    if !emulated_targets().contains(&gfx.as_str()) {
        bail!(
            "the emulator does not run {gfx} yet: it runs {}",
            emulated_targets().join(", ")
        );
    }
    Ok(gfx)
}

/// Runs the request; prints the counters or the trace when asked.
pub fn run(req: &RunRequest) -> Result<()> {
    let image = std::fs::read(&req.code_object)
        .with_context(|| format!("cannot read {}", req.code_object.display()))?;
    let gfx = choose_gfx(&image, req.gfx.as_deref())
        .with_context(|| format!("{}", req.code_object.display()))?;
    let grid = parse_dims(&req.grid, "grid")?;
    let block = parse_dims(&req.block, "block")?;
    let specs: Vec<ArgSpec> = req
        .args
        .iter()
        .map(|a| ArgSpec::parse(a))
        .collect::<Result<_>>()?;

    let emulator = Emulator::new(&gfx)?;
    if let Some(budget) = req.budget {
        if budget == 0 {
            bail!("--budget 0 would stop before the first instruction: give a positive number");
        }
        emulator.set_instruction_budget(budget);
    }
    if let Some(schedule) = req.schedule {
        emulator.set_schedule(schedule);
    }
    if let Some(compute_units) = req.compute_units {
        if compute_units == 0 {
            bail!("--compute-units 0 would leave no room for a workgroup: give a positive number");
        }
        emulator.set_compute_units(compute_units);
    }
    if let Some(threads) = req.threads {
        if threads == 0 {
            bail!("--threads 0 would leave no thread to run the dispatch: give a positive number");
        }
        emulator.set_threads(threads);
    }
    if let Some(checks) = req.checks {
        emulator.set_checks(checks);
    }
    if let Some(name) = &req.timing {
        emulator.set_timing(Some(timing_device(&gfx, name.as_deref())?))?;
    }
    emulator.set_progress(Some(progress_printer()));
    if req.trace {
        emulator.set_trace(Box::new(|line: &str| println!("{line}")));
    }
    let device = emulator.device();
    let module = device.load_module(&image)?;
    let kernel = module.kernel_by_name(&req.kernel)?;
    let config = LaunchConfig::new(grid, block).with_dynamic_lds(req.lds);
    // The geometry first, as a launch checks it, then the arguments with messages that name
    // the `--arg` to change.
    check_launch(kernel.metadata(), &config, device.properties())?;
    check_args(kernel.metadata(), &req.args, &specs)?;

    let mut buffers = Vec::new();
    for path in specs.iter().filter_map(ArgSpec::file) {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        buffers.push(DeviceBuffer::<u8>::from_slice(&device, &bytes)?);
    }
    let values: Vec<Option<Vec<u8>>> = specs.iter().map(ArgSpec::value_bytes).collect();
    let mut next_buffer = buffers.iter();
    let args: Vec<LaunchArg<'_>> = specs
        .iter()
        .zip(&values)
        .map(|(spec, value)| match (spec, value) {
            (_, Some(bytes)) => LaunchArg::Bytes(bytes),
            (ArgSpec::Address(_), None) => {
                LaunchArg::address_of(next_buffer.next().expect("one buffer per ptr: argument"))
            }
            (_, None) => LaunchArg::Buffer {
                address: next_buffer
                    .next()
                    .expect("one buffer per buf: argument")
                    .address(),
                device: &device,
            },
        })
        .collect();
    let stream = device.default_stream();
    // SAFETY: the emulator checks every access against its allocations, so a kernel that strays
    // outside its buffers faults instead of touching host memory.
    unsafe { stream.launch_untyped(&kernel, config, &args)? };
    stream.synchronize()?;

    write_buffers(&specs, &buffers, &req.out_dir)?;
    let dispatches = emulator.take_counters();
    if req.stats {
        for (name, counters) in &dispatches {
            println!("{}", format_counters(name, counters));
        }
    }
    for (name, counters) in &dispatches {
        if let Some(t) = &counters.timing {
            println!("{}", format_timing(name, t));
        }
    }
    Ok(())
}

/// The timing device `name` (or `gfx`'s first), checked to be a `gfx` device.
/// A hook that prints the workgroups finished on stderr every [`PROGRESS_EVERY`] at most, so
/// that a long run (a timed 8192^3 GEMM takes most of an hour) shows it is moving.
fn progress_printer() -> ProgressHook {
    let started = Instant::now();
    let said = Mutex::new(started);
    Arc::new(move |p: Progress| {
        let mut said = said.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if said.elapsed() >= PROGRESS_EVERY {
            *said = Instant::now();
            eprintln!(
                "emu: {} of {} workgroups finished after {:.0} s",
                p.finished_workgroups,
                p.workgroups,
                started.elapsed().as_secs_f64()
            );
        }
    })
}

fn timing_device(gfx: &str, name: Option<&str>) -> Result<&'static Device> {
    let of_gfx = || {
        Device::of_target(Target::from_name(gfx).expect("an emulated gfx"))
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(name) = name else {
        return Device::of_target(Target::from_name(gfx).expect("an emulated gfx"))
            .next()
            .context("no timing device for this gfx");
    };
    Device::by_name(name).with_context(|| {
        format!(
            "no device `{name}` in the timing model: {gfx} has {}; all: {}",
            of_gfx(),
            DEVICES.map(|d| d.name).join(", ")
        )
    })
}

/// An estimate as a few labelled lines: the time, where the waves waited, the hottest loop.
fn format_timing(kernel: &str, t: &TimingSummary) -> String {
    let waited: u64 = t.stalls.iter().sum();
    let share = |cycles: u64| 100.0 * cycles as f64 / waited.max(1) as f64;
    let reasons: Vec<String> = Stall::ALL
        .iter()
        .filter(|&&s| t.stalled(s) > 0)
        .map(|&s| format!("{} {:.0}%", s.name(), share(t.stalled(s))))
        .collect();
    let mut text = format!(
        "{kernel}: estimated {:.2} us on {} ({} cycles at {:.0} MHz; a model, not a \
         measurement)\n  waves waited {} wave-cycles: {}\n  DRAM: {} bytes",
        t.seconds() * 1e6,
        t.device,
        t.cycles,
        t.clock_mhz(),
        waited,
        if reasons.is_empty() {
            "-".to_string()
        } else {
            reasons.join(", ")
        },
        t.dram_bytes
    );
    if let Some(l) = &t.main_loop {
        let looped: u64 = l.stalls.iter().sum();
        let top = Stall::ALL
            .iter()
            .max_by_key(|&&s| l.stalls[s as usize])
            .map_or("-", |s| s.name());
        text.push_str(&format!(
            "\n  main loop {:#x}..={:#x}: {} wave-instructions, waited {} wave-cycles (most: {top})",
            l.first_pc, l.last_pc, l.instructions, looped
        ));
    }
    text
}

/// Writes the buffer of argument `i` (`buf:` or `ptr:`; `i` is its position among all
/// arguments) to `<dir>/arg<i>.bin`.
fn write_buffers(specs: &[ArgSpec], buffers: &[DeviceBuffer<u8>], dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut buffers = buffers.iter();
    for (i, spec) in specs.iter().enumerate() {
        if spec.file().is_some() {
            let buffer = buffers
                .next()
                .expect("one buffer per buf: or ptr: argument");
            let path = dir.join(format!("arg{i}.bin"));
            std::fs::write(&path, buffer.to_vec()?)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// The counters of one dispatch as a few labelled lines.
fn format_counters(kernel: &str, c: &Counters) -> String {
    let classes: Vec<String> = InstructionClass::ALL
        .iter()
        .filter(|&&class| c.of(class) > 0)
        .map(|&class| format!("{class:?} {}", c.of(class)).to_lowercase())
        .collect();
    let widths: Vec<String> = ACCESS_WIDTHS
        .iter()
        .zip(c.global_access_widths)
        .filter(|(_, count)| *count > 0)
        .map(|(width, count)| format!("{width} B: {count}"))
        .collect();
    format!(
        "{kernel}: {} workgroups, {} waves, {} barriers\n  wave-instructions: {} ({})\n  \
         global memory: {} bytes read, {} bytes written; accesses by width: {}\n  \
         LDS: {} accesses, {} bytes, {} bank-conflict cycles",
        c.workgroups,
        c.waves,
        c.barriers,
        c.total_instructions(),
        classes.join(", "),
        c.global_bytes_read,
        c.global_bytes_written,
        if widths.is_empty() {
            "none".to_string()
        } else {
            widths.join(", ")
        },
        c.lds_accesses,
        c.lds_bytes,
        c.lds_bank_conflict_cycles
    )
}
