//! `cargo xtask test`: install what the suite needs and this machine lacks, build every target,
//! then run every test of the workspace with the build's outputs available (the code-object
//! checks and, where a device exists, the kernel runs); then the library's kernel tests under
//! two more emulator schedules, the projects that use Iron from outside the repository, the
//! documentation's code, a smoke run of the peer benchmark against Triton, the packages and a
//! fuzz smoke run. Tests named `gpu_*` need an AMD GPU: without one they are skipped, and the
//! summary says why.

use crate::build;
use crate::emu_test_objects;
use crate::prerequisites::{self, CARGO_FUZZ, CLANG, HIP_RUNTIME};
use crate::{packaging, projects, rocm_corpus};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

/// When the suite started: each step it announces carries the time since, so a slow step shows
/// in any log of the run.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Announces a step of the suite, with the minutes and seconds since the suite started.
fn step(what: std::fmt::Arguments<'_>) {
    let seconds = STARTED.get_or_init(Instant::now).elapsed().as_secs();
    eprintln!("[{:>2}m{:02}s] {what}", seconds / 60, seconds % 60);
}

/// Every target the test suite covers: the five gfx at their default wave size, and the RDNA
/// targets in wave64.
pub const TEST_TARGETS: &str = "all,gfx1100:w64,gfx1201:w64";

/// The gfx the suite smoke-runs the peer benchmark on.
const PEER_SMOKE_GFX: &str = "gfx950";

/// The targets the documentation's kernels are compiled for: one CDNA (wave64), one RDNA (wave32).
const DOC_BLOCK_TARGETS: &str = "gfx950,gfx1100";

/// Runs the whole suite.
pub fn run_all(root: &Path) -> Result<()> {
    step(format_args!(
        "installing what the suite needs, then building every target"
    ));
    prerequisites::ensure(&[
        &CLANG,
        &HIP_RUNTIME,
        &CARGO_FUZZ,
        &rocm_corpus::ROCM_LIBRARIES,
    ])?;
    let iron_dir = build::target_dir(root).join("iron");
    build::device_crate(root, &build::library_dir(root), TEST_TARGETS, &iron_dir)?;
    let emu_objects = iron_dir.join("emu-tests");
    step(format_args!("building the emulator's test kernels"));
    emu_test_objects::build_all(root, &emu_objects)?;
    let corpus = rocm_corpus::dir(&iron_dir);
    rocm_corpus::extract(&corpus)?;
    step(format_args!(
        "building the kernels of README.md and docs/ for the GPU (tests/doc-blocks)"
    ));
    build::device_crate(
        root,
        &root.join("tests/doc-blocks"),
        DOC_BLOCK_TARGETS,
        &iron_dir.join("doc-blocks"),
    )?;
    step(format_args!(
        "building the stand-in HIP runtime (a test fixture backed by the emulator)"
    ));
    let status = build::workspace_cargo(root)?
        .args(["build", "--quiet", "-p", "iron-hip-stand-in"])
        .status()?;
    if !status.success() {
        bail!("building the stand-in HIP runtime failed");
    }
    let stand_in = build::target_dir(root).join("debug/libiron_hip_stand_in.so");
    let no_gpu = missing_gpu_reason();
    step(format_args!("running the workspace tests"));
    let outputs = TestOutputs {
        iron_dir: iron_dir.clone(),
        stand_in: stand_in.clone(),
        emu_objects,
        corpus,
    };
    let mut cargo = build::workspace_cargo(root)?;
    cargo.args([
        "test",
        "--workspace",
        "--no-fail-fast",
        "--",
        "--include-ignored",
    ]);
    outputs.apply(&mut cargo);
    if no_gpu.is_some() {
        cargo.args(["--skip", GPU_TEST_PREFIX]);
    }
    let status = cargo.status()?;
    if let Some(reason) = &no_gpu {
        eprintln!("skipped: the tests named {GPU_TEST_PREFIX}* (they need an AMD GPU: {reason})");
    }
    if !status.success() {
        bail!("tests failed");
    }
    library_under_other_schedules(root, &outputs)?;
    library_bench_through_stand_in(root, &iron_dir, &stand_in)?;
    docs_build_cleanly(root)?;
    step(format_args!(
        "the performance report on every target, small shapes (cargo xtask report --smoke --strict)"
    ));
    crate::report::run(
        root,
        &crate::report::Options {
            gfx: Some(TEST_TARGETS.into()),
            device: None,
            smoke: true,
            artifacts: Some(iron_dir.clone()),
            strict: true,
            update_budget: false,
        },
    )?;
    step(format_args!(
        "the peer benchmark against Triton on {PEER_SMOKE_GFX}, tiny shapes (cargo xtask bench \
         --peer triton --smoke; installs Triton in a venv on first use)"
    ));
    crate::bench::peer::run(
        root,
        &crate::bench::peer::Options {
            gfx: PEER_SMOKE_GFX.into(),
            smoke: true,
            large: false,
            artifacts: Some(iron_dir.clone()),
            only: None,
        },
    )?;
    step(format_args!(
        "the projects that use Iron from outside the repository, then the packages"
    ));
    for project in projects::PROJECTS {
        projects::check(root, project)?;
    }
    packaging::check(root)?;
    fuzz_smoke(root)?;
    step(format_args!("the suite passed"));
    Ok(())
}

/// What the build made for the tests, and where the tests find it.
struct TestOutputs {
    /// The device build (`IRON_ARTIFACTS`, `IRON_CODE_OBJECT_DIR`).
    iron_dir: std::path::PathBuf,
    /// The stand-in HIP runtime (`IRON_HIP_STAND_IN`).
    stand_in: std::path::PathBuf,
    /// The emulator's test kernels (`IRON_EMU_TEST_OBJECTS`).
    emu_objects: std::path::PathBuf,
    /// The ROCm code-object corpus (`IRON_EMU_CORPUS`).
    corpus: std::path::PathBuf,
}

impl TestOutputs {
    /// Points a test run at the outputs, with every tool required.
    fn apply(&self, cargo: &mut std::process::Command) {
        cargo
            .env("IRON_ARTIFACTS", &self.iron_dir)
            .env("IRON_REQUIRE_TOOLS", "1")
            .env("IRON_HIP_STAND_IN", &self.stand_in)
            .env("IRON_EMU_TEST_OBJECTS", &self.emu_objects)
            .env("IRON_EMU_CORPUS", &self.corpus)
            .env("IRON_CODE_OBJECT_DIR", &self.iron_dir);
    }
}

/// Seeds of the random schedules the library's kernel tests run under again, after the default
/// seed's run of the workspace tests.
const EXTRA_SCHEDULE_SEEDS: [u64; 2] = [2, 3];

/// Runs the library's kernel tests on the emulator (`tests/tests/emu_*.rs`) again under
/// other random schedules ([`iron::emulator::SCHEDULE_VARIABLE`]): a kernel whose result
/// depends on how its waves interleave fails in one of them.
///
/// The test executables the first run built are run directly: a cargo asked for those tests
/// alone unifies the crates' features differently, and would build and store every crate
/// they depend on a second time.
fn library_under_other_schedules(root: &Path, outputs: &TestOutputs) -> Result<()> {
    let executables = library_emulator_tests(root)?;
    for seed in EXTRA_SCHEDULE_SEEDS {
        let schedule = format!("random:{seed}");
        step(format_args!(
            "the library's kernel tests again, under the schedule {schedule} ({} test \
             executables)",
            executables.len()
        ));
        for executable in &executables {
            let mut test = std::process::Command::new(executable);
            test.current_dir(root.join("tests"))
                .args(["--quiet", "--include-ignored"])
                .env(iron::emulator::SCHEDULE_VARIABLE, &schedule);
            outputs.apply(&mut test);
            let status = test
                .status()
                .with_context(|| format!("cannot run {}", executable.display()))?;
            if !status.success() {
                bail!(
                    "the library's kernel tests failed under the schedule {schedule}: {} \
                     ({status}; rerun it with {}={schedule})",
                    executable.display(),
                    iron::emulator::SCHEDULE_VARIABLE
                );
            }
        }
    }
    Ok(())
}

/// The executables of the library's kernel tests (`tests/tests/emu_*.rs`) as the workspace's
/// test run built them: cargo, asked again with the same selection, builds nothing and names
/// them.
fn library_emulator_tests(root: &Path) -> Result<Vec<std::path::PathBuf>> {
    let output = build::workspace_cargo(root)?
        .args([
            "test",
            "--quiet",
            "--workspace",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot run cargo to list the test executables")?;
    if !output.status.success() {
        bail!(
            "cargo could not list the test executables ({})",
            output.status
        );
    }
    let tests_dir = root.join("tests/tests");
    let mut executables = Vec::new();
    for line in output.stdout.split(|&byte| byte == b'\n') {
        let Ok(message) = serde_json::from_slice::<Artifact>(line) else {
            continue;
        };
        let source = Path::new(&message.target.src_path);
        let is_library_emulator_test = message.reason == "compiler-artifact"
            && message.target.kind.iter().any(|kind| kind == "test")
            && source.parent() == Some(tests_dir.as_path())
            && message.target.name.starts_with("emu_");
        if let (true, Some(executable)) = (is_library_emulator_test, message.executable) {
            executables.push(executable);
        }
    }
    if executables.is_empty() {
        bail!(
            "cargo named no test executable under {}: the library's kernel tests are missing",
            tests_dir.display()
        );
    }
    executables.sort();
    Ok(executables)
}

/// The fields of cargo's JSON build message that name a test executable.
#[derive(serde::Deserialize)]
struct Artifact {
    reason: String,
    target: ArtifactTarget,
    executable: Option<std::path::PathBuf>,
}

/// The target an [`Artifact`] was built from.
#[derive(serde::Deserialize)]
struct ArtifactTarget {
    name: String,
    kind: Vec<String>,
    src_path: String,
}

/// Runs the kernel benchmarks (`xtask/benches/library.rs`) once each, at small sizes, on the
/// HIP stand-in: their device-event timing and launches run here as they would on a GPU.
fn library_bench_through_stand_in(root: &Path, iron_dir: &Path, stand_in: &Path) -> Result<()> {
    step(format_args!(
        "the kernel benchmarks once each, small sizes, through the HIP stand-in"
    ));
    let status = build::workspace_cargo(root)?
        .args(["test", "--quiet", "--workspace", "--bench", "library"])
        .env("IRON_BENCH_SIZES", "small")
        .env("IRON_HIP_LIBRARY", stand_in)
        .env("IRON_ARTIFACTS", iron_dir)
        .status()?;
    if !status.success() {
        bail!("the kernel benchmarks failed on the HIP stand-in");
    }
    Ok(())
}

/// Builds the workspace's API documentation with every rustdoc warning an error (broken links,
/// missing docs on public crates).
fn docs_build_cleanly(root: &Path) -> Result<()> {
    step(format_args!(
        "building the API documentation (cargo doc, warnings denied)"
    ));
    let status = build::workspace_cargo(root)?
        .args(["doc", "--quiet", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .status()?;
    if !status.success() {
        bail!("cargo doc reported warnings: fix the doc comments it names");
    }
    for gfx in ["gfx950", "gfx1100"] {
        step(format_args!(
            "documenting iron-intrinsics as {gfx} sees it (warnings denied)"
        ));
        build::document_device(root, gfx, true)?;
    }
    Ok(())
}

/// Seconds each fuzz target runs in the smoke run that ends the suite.
const FUZZ_SMOKE_SECONDS: u32 = 10;

/// Runs every fuzz target briefly (`fuzz/smoke.sh`): a crash, hang or runaway allocation fails
/// the suite.
fn fuzz_smoke(root: &Path) -> Result<()> {
    step(format_args!(
        "fuzzing every target for {FUZZ_SMOKE_SECONDS} s (fuzz/smoke.sh)"
    ));
    let status = iron_build::outside_command(root.join("fuzz/smoke.sh"))
        .arg(FUZZ_SMOKE_SECONDS.to_string())
        .env("CARGO_TARGET_DIR", build::target_dir(root))
        .status()?;
    if !status.success() {
        bail!("the fuzz smoke run failed (a finding's input is in fuzz/artifacts/<target>/)");
    }
    Ok(())
}

/// Tests whose names start with this need a real AMD GPU.
const GPU_TEST_PREFIX: &str = "gpu_";

/// Why the GPU tests cannot run here, or `None` when a HIP device is present.
fn missing_gpu_reason() -> Option<String> {
    match iron::Device::hip_devices() {
        Ok(devices) if !devices.is_empty() => None,
        Ok(_) => Some("the HIP runtime reports no device".into()),
        Err(e) => Some(e.to_string()),
    }
}
