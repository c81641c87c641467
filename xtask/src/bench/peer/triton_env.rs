//! The peer's toolchain: a Python venv with a pinned Triton under the target directory, made on
//! first use and reused after, and the offline compilation of `kernels.py` for one gfx.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The Triton the benchmark measures.
pub const TRITON_VERSION: &str = "3.9.0";

/// `TRITON_DEFAULT_FP_FUSION`: Triton's default (fuse a multiply and an add into an FMA), set
/// explicitly so that it does not warn.
pub const FP_FUSION: &str = "1";

/// A ready Triton: the venv's interpreter and Triton's cache directory.
pub struct Triton {
    python: PathBuf,
    cache: PathBuf,
}

/// Makes the venv in `dir` with `triton==TRITON_VERSION` unless it is there already.
pub fn prepare(dir: &Path) -> Result<Triton> {
    let venv = dir.join("triton-venv");
    let python = venv.join("bin/python");
    let triton = Triton {
        python: python.clone(),
        cache: dir.join("triton-cache"),
    };
    if installed_version(&python).as_deref() == Some(TRITON_VERSION) {
        return Ok(triton);
    }
    let started = Instant::now();
    eprintln!(
        "peer: installing triton=={TRITON_VERSION} into {} (once; about 1 GB)",
        venv.display()
    );
    let venv_made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    match venv_made {
        Err(e) => {
            bail!("the peer benchmark needs python3 with venv and pip: cannot run python3 ({e})")
        }
        Ok(s) if !s.success() => bail!(
            "python3 -m venv {} failed: install python3's venv module (e.g. apt-get install python3-venv)",
            venv.display()
        ),
        Ok(_) => {}
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", &format!("triton=={TRITON_VERSION}")])
        .status()
        .with_context(|| {
            format!(
                "cannot run pip in {}: is python3's pip installed?",
                venv.display()
            )
        })?;
    if !pip.success() {
        bail!("pip install triton=={TRITON_VERSION} failed (see pip's message above)");
    }
    match installed_version(&python) {
        Some(v) if v == TRITON_VERSION => {}
        other => bail!(
            "the venv at {} imports triton {other:?} after the install, not {TRITON_VERSION}",
            venv.display()
        ),
    }
    eprintln!(
        "peer: triton installed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(triton)
}

/// The Triton version `python` imports, if it runs and has one.
fn installed_version(python: &Path) -> Option<String> {
    let out = Command::new(python)
        .args(["-c", "import triton; print(triton.__version__)"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What `kernels.py` compiled for one gfx.
#[derive(Debug, Deserialize)]
pub struct Manifest {
    /// Triton's version, as it reports it.
    pub triton_version: String,
    /// Every compiled kernel.
    pub kernels: Vec<Compiled>,
}

/// One Triton kernel compiled with one configuration, and how to launch it.
#[derive(Clone, Debug, Deserialize)]
pub struct Compiled {
    /// The workload's identifier.
    pub workload: String,
    /// The configuration's name (`default` first).
    pub config: String,
    /// The code object.
    pub path: PathBuf,
    /// The kernel's symbol.
    pub kernel: String,
    /// Workgroups, as the launch's grid lambda computes them.
    pub grid: [u32; 3],
    /// Work-items per workgroup: `num_warps` x the wave.
    pub block: u32,
    /// The configuration's warps.
    pub num_warps: u32,
    /// Its software-pipelining stages.
    pub num_stages: u32,
    /// Its LDS, bytes.
    pub lds_bytes: u32,
    /// Bytes of global scratch per program, for the first trailing pointer.
    pub global_scratch_size: u64,
    /// Bytes of profile scratch per program, for the second.
    pub profile_scratch_size: u64,
    /// The explicit arguments before the two scratch pointers, in order.
    pub args: Vec<Arg>,
    /// The kernel accumulates into its output (atomic adds), so the output is zeroed before it
    /// runs, as its user's `torch.zeros` would.
    #[serde(default)]
    pub zero_output: bool,
}

/// One kernel argument: a buffer by role, or a scalar by value.
#[derive(Clone, Debug, Deserialize)]
pub struct Arg {
    /// The kernel parameter's name: a workload buffer's role for a buffer.
    pub name: String,
    /// `buffer`, `i32` or `fp32`.
    pub kind: String,
    /// The scalar's value.
    pub value: Option<f64>,
}

impl Triton {
    /// Compiles every configuration of `workloads` (as `kernels.py` reads them) for `gfx`
    /// into `out`.
    pub fn compile(
        &self,
        script: &Path,
        gfx: &str,
        wave: u32,
        workloads: &[serde_json::Value],
        out: &Path,
    ) -> Result<Manifest> {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let request = out.join("request.json");
        let body = serde_json::json!({"gfx": gfx, "wave": wave, "workloads": workloads});
        std::fs::write(&request, serde_json::to_string_pretty(&body)?)
            .with_context(|| format!("cannot write {}", request.display()))?;
        let output = Command::new(&self.python)
            .arg(script)
            .arg(&request)
            .arg(out)
            .env("TRITON_CACHE_DIR", &self.cache)
            .env("TRITON_DEFAULT_FP_FUSION", FP_FUSION)
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("cannot run {}", self.python.display()))?;
        if !output.status.success() {
            bail!("Triton could not compile the peer kernels for {gfx} (its message is above)");
        }
        serde_json::from_slice(&output.stdout)
            .with_context(|| format!("reading the manifest {} printed", script.display()))
    }
}
