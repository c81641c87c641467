//! Builds Iron device crates (Rust kernels for AMD GPUs) into code objects and an offload bundle,
//! from a build script or from a tool.
//!
//! A device crate is a `no_std` library whose kernels are marked `#[kernel]`
//! (`iron_intrinsics::kernel`). [`Kernels`] compiles it for each gfx target with Iron's pinned
//! nightly toolchain ([`TOOLCHAIN`], found through rustup whatever toolchain runs the caller),
//! applies each kernel's declared launch bounds after LTO, links one code object per target
//! (code object v5) and bundles them: what HIP's `hipModuleLoadData` and Iron's
//! `Device::load_module` accept.
//!
//! In a host crate's `build.rs`:
//!
//! ```no_run
//! fn main() -> Result<(), iron_build::Error> {
//!     iron_build::Kernels::new("../kernels")
//!         .gfx(["gfx942", "gfx950", "gfx1100"])
//!         .build()?;
//!     Ok(())
//! }
//! ```
//!
//! and in the host crate, `iron::include_kernels!()` is the bundle's bytes, while the typed
//! launch declarations come from the device crate itself, a normal dependency of the host
//! crate (on the host, `#[kernel]` turns each kernel into a `KernelDecl`).
//!
//! In a build script, a relative crate path is taken from the package's directory, the outputs
//! go to `$OUT_DIR/iron/<device package>/`, cargo reruns the script only when a source file of
//! the device crate (or of its path dependencies) changes, and the first error of the device
//! compiler fails the host build. Elsewhere (`cargo xtask build --kernels`), paths are taken
//! from the current directory and [`Kernels::out_dir`] says where to write.

#![deny(missing_docs)]

mod atomics;
mod compile;
mod conversions;
mod docs;
mod error;
mod fences;
mod manifest;
mod opt;
mod panics;
mod post_lto;
mod printf;
mod resources;
mod scratch;
mod script;
mod spec;
mod static_lds;
mod target;
mod toolchain;

pub use error::{Error, Result};
pub use resources::KernelResources;
pub use script::{BUNDLE_ENV, TARGET_DIR_ENV};
pub use target::{Family, Gfx, SUPPORTED, Target, parse_targets};
pub use toolchain::{COMPONENTS, TOOLCHAIN, Tools, outside_command, run};

use compile::{CompiledTarget, DeviceCrate, Layout};
use error::{Context, bail};
use iron_code_object::{Bundle, CodeObject};
use scratch::ScratchCause;
use script::BuildScript;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A device crate to build, and for which targets.
#[derive(Debug, Clone)]
pub struct Kernels {
    crate_dir: PathBuf,
    gfx: Vec<String>,
    wave: Option<u32>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    verbose: bool,
}

impl Kernels {
    /// The device crate in `crate_dir` (relative to the package in a build script, to the
    /// current directory elsewhere).
    pub fn new(crate_dir: impl Into<PathBuf>) -> Kernels {
        Kernels {
            crate_dir: crate_dir.into(),
            gfx: Vec::new(),
            wave: None,
            out_dir: None,
            target_dir: None,
            verbose: false,
        }
    }

    /// The targets: `gfx90a`, `gfx942`, `gfx950`, `gfx1100`, `gfx1201` or `all`, each optionally
    /// with its wave size (`gfx1100:w64`). Adds to the targets given before.
    pub fn gfx<I, S>(mut self, targets: I) -> Kernels
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.gfx
            .extend(targets.into_iter().map(|t| t.as_ref().to_string()));
        self
    }

    /// The wave size of RDNA targets named without their own (CDNA is always 64).
    pub fn wave(mut self, wave: u32) -> Kernels {
        self.wave = Some(wave);
        self
    }

    /// Where the code objects, `kernels.bundle` and `manifest.json` go (default: in a build
    /// script `$OUT_DIR/iron/<package>`, elsewhere `<target dir>/iron/<package>`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Kernels {
        self.out_dir = Some(dir.into());
        self
    }

    /// Cargo's target directory for the device compilation (default: `$IRON_DEVICE_TARGET_DIR`,
    /// else in a build script `iron-device` beside the host build's profiles, elsewhere the
    /// device crate's workspace target directory). Builds that share it share the compiled
    /// `core` of each target.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Kernels {
        self.target_dir = Some(dir.into());
        self
    }

    /// Shows the compiler's whole output as it comes, instead of its first error only (its
    /// warnings are shown either way, once each).
    pub fn verbose(mut self, verbose: bool) -> Kernels {
        self.verbose = verbose;
        self
    }

    /// Cargo's target directory for the device compilation (see [`Kernels::target_dir`]).
    fn device_target_dir(
        &self,
        base: &Path,
        krate: &DeviceCrate,
        script: Option<&BuildScript>,
    ) -> PathBuf {
        match (&self.target_dir, std::env::var_os(TARGET_DIR_ENV), script) {
            (Some(dir), _, _) => base.join(dir),
            (None, Some(dir), _) => PathBuf::from(dir),
            (None, None, Some(script)) => script.default_target_dir(),
            (None, None, None) => krate.workspace_target_dir.clone(),
        }
    }

    /// Documents the device crate as the GPU sees it, for the first target given: the items
    /// compiled for `target_arch = "amdgpu"` alone, which a host `cargo doc` leaves out, with
    /// that target's cfgs. `deny_warnings` makes rustdoc's warnings errors. Returns the path of
    /// the crate's `index.html`.
    ///
    /// ```no_run
    /// let index = iron_build::Kernels::new("device/intrinsics")
    ///     .gfx(["gfx950"])
    ///     .document(false)?;
    /// println!("{}", index.display());
    /// # Ok::<(), iron_build::Error>(())
    /// ```
    pub fn document(self, deny_warnings: bool) -> Result<PathBuf> {
        let base =
            std::env::current_dir().context(|| "cannot read the current directory".into())?;
        let targets = parse_targets(&self.gfx.join(","), self.wave)?;
        let Some(&target) = targets.first() else {
            bail!("no gfx target given: name one to document for, e.g. .gfx([\"gfx950\"])");
        };
        let tools = Tools::locate()?;
        let krate = DeviceCrate::at(&tools, &base.join(&self.crate_dir))?;
        let target_dir = self.device_target_dir(&base, &krate, None);
        docs::document(&tools, &krate, target, &target_dir, deny_warnings)
    }

    /// Builds every target, then writes the bundle and the manifest; prints a progress line
    /// per target and the device compiler's warnings on stderr. In a build script the warnings
    /// go to cargo instead (`cargo::warning`), with the rerun conditions and `IRON_KERNELS`.
    pub fn build(self) -> Result<Built> {
        let script = BuildScript::detect();
        let base = match &script {
            Some(s) => s.manifest_dir.clone(),
            None => {
                std::env::current_dir().context(|| "cannot read the current directory".into())?
            }
        };
        if self.gfx.is_empty() {
            bail!(
                "no gfx target given: name them, e.g. Kernels::new(..).gfx([\"gfx950\", \"gfx1100\"])"
            );
        }
        let targets = parse_targets(&self.gfx.join(","), self.wave)?;
        let tools = Tools::locate()?;
        let krate = DeviceCrate::at(&tools, &base.join(&self.crate_dir))?;
        let target_dir = self.device_target_dir(&base, &krate, script.as_ref());
        let out_dir = match (&self.out_dir, &script) {
            (Some(dir), _) => base.join(dir),
            (None, Some(script)) => script.out_dir.join("iron").join(&krate.package),
            (None, None) => target_dir.join("iron").join(&krate.package),
        };
        let layout = Layout {
            target_dir: std::path::absolute(&target_dir)
                .context(|| format!("cannot resolve {}", target_dir.display()))?,
            out_dir: std::path::absolute(&out_dir)
                .context(|| format!("cannot resolve {}", out_dir.display()))?,
        };
        std::fs::create_dir_all(&layout.out_dir)
            .context(|| format!("cannot create {}", layout.out_dir.display()))?;
        let built = build_targets(&tools, &krate, &targets, &layout, self.verbose)?;
        // A warning shows once, however many targets gave it.
        let mut warnings: Vec<&String> = built.compiled.iter().flat_map(|c| &c.warnings).collect();
        warnings.sort();
        warnings.dedup();
        match &script {
            Some(script) => {
                let mut files: Vec<&Path> = vec![&krate.manifest];
                for compiled in &built.compiled {
                    files.extend(compiled.sources.iter().map(PathBuf::as_path));
                }
                files.sort();
                files.dedup();
                script.rerun_if_changed(files);
                for warning in warnings {
                    script.warn(warning);
                }
                script.export_bundle(&built.built.bundle);
            }
            None => {
                for warning in warnings {
                    eprintln!("{warning}");
                }
            }
        }
        Ok(built.built)
    }
}

/// What a build wrote.
#[derive(Debug, Clone)]
pub struct Built {
    /// The directory holding everything below.
    pub out_dir: PathBuf,
    /// `kernels.bundle`: a clang offload bundle with one code object per gfx (the default-wave
    /// build of a gfx built for both wave sizes).
    pub bundle: PathBuf,
    /// Every target built, in the order asked.
    pub targets: Vec<BuiltTarget>,
}

/// One target's code object and its kernels' resources.
#[derive(Debug, Clone)]
pub struct BuiltTarget {
    /// The target.
    pub target: Target,
    /// `<out_dir>/<target>/kernels.co`.
    pub code_object: PathBuf,
    /// Every kernel's resources, by name.
    pub kernels: Vec<KernelResources>,
}

impl Built {
    /// The resource table `cargo xtask build` prints: per kernel and target, registers, LDS,
    /// scratch, occupancy, code size and the largest workgroup.
    pub fn resource_table(&self) -> String {
        let mut table = format!(
            "{:<24} {:<12} {:>5} {:>5} {:>5} {:>7} {:>8} {:>10} {:>7} {:>8}\n",
            "kernel",
            "target",
            "VGPR",
            "AGPR",
            "SGPR",
            "LDS",
            "scratch",
            "occupancy",
            "code",
            "max_wg"
        );
        for built in &self.targets {
            for r in &built.kernels {
                table.push_str(&format!(
                    "{:<24} {:<12} {:>5} {:>5} {:>5} {:>7} {:>8} {:>10} {:>7} {:>8}\n",
                    r.name,
                    built.target.dir_name(),
                    r.vgpr,
                    r.agpr,
                    r.sgpr,
                    r.lds_bytes,
                    r.scratch_bytes,
                    format!("{}/{} {}", r.occupancy, r.max_waves, r.occupancy_limit),
                    r.code_bytes,
                    r.max_flat_workgroup_size
                ));
            }
        }
        table
    }
}

/// A build's result with what only the build script needs.
struct BuildOutput {
    built: Built,
    compiled: Vec<CompiledTarget>,
}

/// One target's build, or why it failed.
type TargetResult = Result<(BuiltTarget, CompiledTarget)>;

/// Builds `targets`, as many at once as the host has cores (each target is one mostly
/// single-threaded compiler), and returns them in the order given; the first failure, in that
/// order, is the build's.
fn build_targets(
    tools: &Tools,
    krate: &DeviceCrate,
    targets: &[Target],
    layout: &Layout,
    verbose: bool,
) -> Result<BuildOutput> {
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<TargetResult>>> =
        targets.iter().map(|_| Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(targets.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&target) = targets.get(i) else {
                        break;
                    };
                    let step = format!("[{}/{}] {target}", i + 1, targets.len());
                    let result = build_target(tools, krate, target, &step, layout, verbose);
                    let failed = result.is_err();
                    *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
                    if failed {
                        // No target is started after a failure; those under way finish.
                        next.store(targets.len(), Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let mut compiled = Vec::new();
    let mut built = Vec::new();
    // Targets are started in order, so every target before a failed one has a result.
    for result in results {
        match result.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(Ok((target, compiled_target))) => {
                built.push(target);
                compiled.push(compiled_target);
            }
            Some(Err(e)) => return Err(e),
            None => break,
        }
    }
    let bundle = layout.out_dir.join("kernels.bundle");
    write_bundle(&built, &bundle)?;
    manifest::write(&layout.out_dir, "kernels.bundle", &built)?;
    eprintln!(
        "built {} target(s) of {} in {:.1} s: {}",
        built.len(),
        krate.package,
        started.elapsed().as_secs_f64(),
        bundle.display()
    );
    Ok(BuildOutput {
        built: Built {
            out_dir: layout.out_dir.clone(),
            bundle,
            targets: built,
        },
        compiled,
    })
}

/// Compiles one target and collects its kernels' resources, with progress lines headed `step`.
fn build_target(
    tools: &Tools,
    krate: &DeviceCrate,
    target: Target,
    step: &str,
    layout: &Layout,
    verbose: bool,
) -> TargetResult {
    let t0 = Instant::now();
    eprintln!("{step}: compiling {}", krate.package);
    let target_build = compile::compile(tools, krate, target, layout, verbose)?;
    let kernels = resources::collect(&target_build)?;
    eprintln!(
        "{step}: {} kernels in {:.1} s",
        kernels.len(),
        t0.elapsed().as_secs_f64()
    );
    check_scratch(target, &kernels, &target_build.scratch_causes)?;
    let built = BuiltTarget {
        target,
        code_object: target_build.code_object.clone(),
        kernels,
    };
    Ok((built, target_build))
}

/// Fails when a kernel uses scratch without declaring `allow_scratch`, naming the likely cause
/// (`causes`, from the kernel's IR).
fn check_scratch(
    target: Target,
    kernels: &[KernelResources],
    causes: &BTreeMap<String, ScratchCause>,
) -> Result<()> {
    if let Some(k) = kernels
        .iter()
        .find(|k| k.scratch_bytes > 0 && !k.allow_scratch)
    {
        let cause = causes
            .get(&k.name)
            .copied()
            .unwrap_or(ScratchCause::RegisterPressure);
        bail!(
            "kernel `{}` on {target} uses {} bytes of scratch per work-item: {cause}; or declare \
             #[kernel(..., allow_scratch)]",
            k.name,
            k.scratch_bytes
        );
    }
    Ok(())
}

/// Writes the offload bundle of a build: one entry per gfx (a gfx built for both wave sizes
/// contributes its default-wave build).
fn write_bundle(built: &[BuiltTarget], path: &Path) -> Result<()> {
    let mut entries = Vec::new();
    let mut gfx_done: Vec<&str> = Vec::new();
    let mut ordered: Vec<&BuiltTarget> = built.iter().collect();
    ordered.sort_by_key(|b| b.target.wave != b.target.gfx.default_wave());
    for b in ordered {
        if gfx_done.contains(&b.target.gfx.name) {
            continue;
        }
        gfx_done.push(b.target.gfx.name);
        let bytes = std::fs::read(&b.code_object)
            .context(|| format!("cannot read {}", b.code_object.display()))?;
        let code_object =
            CodeObject::parse(&bytes).context(|| format!("reading {}", b.code_object.display()))?;
        entries.push((code_object.target().clone(), bytes));
    }
    let bundle =
        Bundle::for_hip(entries).context(|| "cannot assemble the offload bundle".into())?;
    std::fs::write(path, bundle.write()).context(|| format!("cannot write {}", path.display()))
}
