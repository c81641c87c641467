//! Runs one side of a comparison on the emulator, Iron's library operation or one compiled
//! Triton kernel, on the same prepared inputs: poisons the output, runs, reads the emulator's
//! counters into the report's measurements and checks the output against the reference.

use super::triton_env::Compiled;
use super::workloads::Prepared;
use crate::report::kernels::{self, KernelStatic, Measured, Scope};
use crate::report::workloads::Run;
use anyhow::{Context, Result, bail};
use iron::emulator::{Checks, Emulator};
use iron::launch::LaunchArg;
use iron::library::{GemmTile, Library};
use iron::{Device, DeviceBuffer, LaunchConfig};
use iron_emu::Counters;
use iron_emu::timing::Device as TimingDevice;
use serde::Serialize;
use std::time::Instant;

/// One side's result on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// `iron` (the library's choices), `iron <tile>` (a GEMM in the block the library did not
    /// choose), or the Triton configuration's name.
    pub config: String,
    /// The kernel that ran (the first one, for an operation that launches several).
    pub kernel: String,
    /// For Triton: warps, stages and LDS of the configuration.
    pub triton: Option<TritonConfig>,
    /// The kernel's static resources and code shape.
    pub statics: KernelStatic,
    /// What the emulator counted.
    pub measured: Measured,
    /// `None` when the output matched the reference, else the first mismatch.
    pub mismatch: Option<String>,
    /// For a Triton configuration the emulator's LDS race check stopped: the fault it
    /// reported, after which the configuration ran again without that check.
    pub lds_race: Option<String>,
    /// Estimated seconds on each timing device of the gfx (the emulator's cycle model).
    pub estimated: Vec<(&'static str, f64)>,
}

/// A Triton configuration's launch parameters.
#[derive(Clone, Debug, Serialize)]
pub struct TritonConfig {
    pub num_warps: u32,
    pub num_stages: u32,
    pub block: u32,
    pub grid: [u32; 3],
    /// LDS bytes, as Triton's metadata (`shared`) says.
    pub lds_bytes: u32,
}

/// The emulator a gfx's comparisons run on, and where their numbers are joined.
pub struct Bench<'a> {
    pub emulator: &'a Emulator,
    /// The emulator's device as the library holds it (buffers, modules and streams of one
    /// device handle).
    pub device: Device,
    pub scope: Scope<'a>,
    /// The devices whose time each side's run is estimated on.
    pub timing: Vec<&'static TimingDevice>,
}

impl Bench<'_> {
    /// Runs `launch` on `prepared` and measures it, `statics` giving a kernel's static numbers.
    fn measure(
        &self,
        config: String,
        prepared: &mut Prepared,
        statics: impl Fn(&str) -> Result<KernelStatic>,
        launch: impl Fn(&mut Prepared) -> Result<()>,
    ) -> Result<Side> {
        prepared.poison()?;
        self.emulator.take_counters();
        let started = Instant::now();
        launch(prepared)?;
        let dispatches = self.emulator.take_counters();
        let host_seconds = started.elapsed().as_secs_f64();
        let Some((kernel, _)) = dispatches.first() else {
            bail!("{} ({config}) launched nothing", prepared.op.label());
        };
        let mut counters = Counters::default();
        for (_, c) in &dispatches {
            counters += c;
        }
        let statics = statics(kernel)?;
        let mismatch = prepared.check()?;
        let mut estimated = Vec::new();
        for &device in &self.timing {
            estimated.push((device.name, self.estimate(device, prepared, &launch)?));
        }
        let run = Run {
            kernel: kernel.clone(),
            family: prepared.op.family(),
            demand: prepared.demand.clone(),
            counters,
            dispatches: dispatches.len(),
            host_seconds,
        };
        Ok(Side {
            config,
            kernel: kernel.clone(),
            triton: None,
            measured: kernels::measure(&self.scope, &statics, &run, 0),
            statics,
            mismatch,
            lds_race: None,
            estimated,
        })
    }

    /// Runs `launch` again in timing mode on `device`; returns its estimated seconds.
    fn estimate(
        &self,
        device: &'static TimingDevice,
        prepared: &mut Prepared,
        launch: &impl Fn(&mut Prepared) -> Result<()>,
    ) -> Result<f64> {
        self.emulator.set_timing(Some(device))?;
        prepared.poison()?;
        self.emulator.take_counters();
        let ran = launch(prepared);
        let dispatches = self.emulator.take_counters();
        self.emulator.set_timing(None)?;
        ran?;
        Ok(dispatches
            .iter()
            .filter_map(|(_, c)| c.timing.as_ref())
            .map(|t| t.seconds())
            .sum())
    }

    /// Iron's side: the library operation, configuration `config` (`iron`: the library's
    /// choices), a 16-bit or FP8 GEMM in blocks of `tile`.
    pub fn iron(
        &self,
        library: &Library,
        statics: &[KernelStatic],
        prepared: &mut Prepared,
        (config, tile): (&str, GemmTile),
    ) -> Result<Side> {
        let stream = library.device().default_stream();
        let find = |name: &str| {
            statics
                .iter()
                .find(|k| k.name == name)
                .cloned()
                .with_context(|| format!("{name} is not in the library's code object"))
        };
        self.measure(config.into(), prepared, find, |p| {
            p.run_iron(library, &stream, tile)?;
            Ok(stream.synchronize()?)
        })
    }

    /// Triton's side: one compiled configuration, launched as Triton's launcher launches it.
    ///
    /// Some of Triton's kernels have several waves store to one LDS dword at one instruction
    /// with no barrier between them, which the emulator's race check stops. Such a configuration runs again with every
    /// other check on, and the fault is kept in [`Side::lds_race`]; its output is still checked.
    pub fn triton(&self, compiled: &Compiled, prepared: &mut Prepared) -> Result<Side> {
        match self.triton_once(compiled, prepared) {
            Err(e) if format!("{e:#}").contains("LDS race") => {
                self.emulator.set_checks(Checks {
                    lds_races: false,
                    ..Checks::ALL
                });
                let side = self.triton_once(compiled, prepared);
                self.emulator.set_checks(Checks::ALL);
                let mut side = side?;
                side.lds_race = Some(format!("{e:#}"));
                Ok(side)
            }
            side => side,
        }
    }

    /// One run of [`Bench::triton`].
    fn triton_once(&self, compiled: &Compiled, prepared: &mut Prepared) -> Result<Side> {
        let image = std::fs::read(&compiled.path)
            .with_context(|| format!("cannot read {}", compiled.path.display()))?;
        let (_, statics) = kernels::read_static(&image)
            .with_context(|| format!("reading {}", compiled.path.display()))?;
        let device = &self.device;
        let module = device.load_module(&image)?;
        let kernel = module.kernel_by_name(&compiled.kernel)?;
        // Triton 3.x passes two trailing pointers: global scratch and profile scratch, each
        // `size x programs` bytes (null when 0; a small zeroed buffer stands in for null).
        let programs: u64 = compiled.grid.iter().map(|&g| u64::from(g)).product();
        let scratch = |per_program: u64| -> Result<DeviceBuffer<u8>> {
            let bytes = usize::try_from((per_program * programs).max(256))?;
            Ok(DeviceBuffer::zeros(device, bytes)?)
        };
        let (global, profile) = (
            scratch(compiled.global_scratch_size)?,
            scratch(compiled.profile_scratch_size)?,
        );
        let find = |name: &str| {
            statics
                .iter()
                .find(|k| k.name == name)
                .cloned()
                .with_context(|| format!("{name} is not in {}", compiled.path.display()))
        };
        let label = prepared.op.label();
        let mut side = self.measure(compiled.config.clone(), prepared, find, |p| {
            let mut values = Vec::new();
            for arg in &compiled.args {
                let bytes = match (arg.kind.as_str(), arg.value) {
                    ("buffer", _) => None,
                    ("i32", Some(v)) => Some((v as i32).to_le_bytes().to_vec()),
                    ("fp32", Some(v)) => Some((v as f32).to_le_bytes().to_vec()),
                    (kind, _) => bail!("{label}: argument {} of kind {kind}", arg.name),
                };
                values.push(bytes);
            }
            let mut args = Vec::new();
            for (arg, value) in compiled.args.iter().zip(&values) {
                args.push(match value {
                    Some(bytes) => LaunchArg::value(bytes),
                    None => {
                        let buffer = p.buffer(&arg.name).with_context(|| {
                            format!("{label}: the workload has no buffer `{}`", arg.name)
                        })?;
                        LaunchArg::Buffer {
                            address: buffer.address(),
                            device,
                        }
                    }
                });
            }
            args.push(LaunchArg::Buffer {
                address: global.address(),
                device,
            });
            args.push(LaunchArg::Buffer {
                address: profile.address(),
                device,
            });
            if compiled.zero_output {
                p.zero_output()?;
            }
            // Triton's launcher passes the kernel's LDS (`shared`) as dynamic LDS.
            let config = LaunchConfig::new(compiled.grid, [compiled.block, 1, 1])
                .with_dynamic_lds(compiled.lds_bytes);
            let stream = device.default_stream();
            // SAFETY: the emulator checks every access against its allocations; the grid and
            // the buffers are the ones the Triton kernel was written for.
            unsafe { stream.launch_untyped(&kernel, config, &args)? };
            Ok(stream.synchronize()?)
        })?;
        side.triton = Some(TritonConfig {
            num_warps: compiled.num_warps,
            num_stages: compiled.num_stages,
            block: compiled.block,
            grid: compiled.grid,
            lds_bytes: compiled.lds_bytes,
        });
        Ok(side)
    }
}
