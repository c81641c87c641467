//! The representative runs: every library operation at one shape per kernel, called through the
//! library's host API on the emulator, each with what its algorithm needs at least (bytes that
//! must cross the memory bus, FLOPs) so the measured counters can be judged against it.

mod attention;
mod conv;
mod flat;
mod matrix;
mod rows;

use anyhow::Result;
use iron::emulator::Emulator;
use iron::library::{Float, Library, bf16, f16};
use iron::{Device, DeviceBuffer, Stream};
use iron_emu::Counters;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

pub use super::devices::Math;

/// The library's kernel families, as the targets group them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Family {
    /// `fill`, `copy`, `saxpy`.
    Streaming,
    /// `add`, `mul`, `fma`, `scale`, `relu`, `silu`, `gelu`.
    Elementwise,
    /// `cast`, `cast_to_fp8`.
    Cast,
    /// `dequant`, `dequant_half`, `dequant_fp8`.
    Dequant,
    /// `sum`.
    Reduction,
    /// `row_sum`, `row_max`, `row_argmax`.
    RowReduction,
    /// `rmsnorm`, `layernorm`.
    Norm,
    /// `softmax`.
    Softmax,
    /// `gather`.
    Gather,
    /// `transpose`.
    Transpose,
    /// `rope`.
    Rope,
    /// `qgemv`, `qgemv_fp8`.
    Qgemv,
    /// `gemm`, `gemm_fp8`, `gemm_mx`, `gemm_mx_decoded`.
    Gemm,
    /// `attention` on the scalar and matrix-core kernels (prefill): 4 FLOPs per visible (query,
    /// key) pair and head element, with Q, K, V and O moved once: causal f16 at 4 query heads
    /// per KV head does about `0.4 x seq` FLOPs per byte, past every listed device's
    /// 16-bit matrix ridge (110 to 320) from about 800 rows, so bound by arithmetic at scale
    /// (at the report's 256 rows it is about 100). Like GEMM, its query blocks re-read K and V
    /// by design (flash attention's tiling, an L2 hit), so its traffic is not judged.
    Attention,
    /// `attention` on the decode kernels (one query row) and their combine kernel: each K and V
    /// element feeds one multiply-add per query head of its group, 4 FLOPs per byte at 4 query
    /// heads per KV head in f16, below every listed device's FP32 vector ridge (14 to 75):
    /// bound by memory.
    AttentionDecode,
    /// `conv1d_causal`, `conv1d_causal_step`: depthwise, 2 FLOPs per tap and output against
    /// 2 x 2 to 4 bytes per output (2 FLOPs per byte at width 4 in f16): bound by memory.
    Conv1d,
    /// `conv2d` on the direct kernels, measured at the depthwise 3x3 the library routes there
    /// for 16-bit types: 18 FLOPs per output against 2 x 2 to 4 bytes (4.5 FLOPs per byte in
    /// f16), bound by memory. A dense convolution on them (f32's only path) reaches hundreds
    /// of FLOPs per byte and is bound by arithmetic instead.
    Conv2dDirect,
    /// `conv2d` on the implicit-GEMM kernels: a GEMM with `K = C / groups x R x S` (576 at 64
    /// channels and 3x3), bound by arithmetic like GEMM, its tiles re-reading the input and
    /// the weights by design.
    ConvGemm,
}

impl Family {
    /// Whether the family's traffic is judged against its minimum: families bound by memory.
    /// GEMM, implicit-GEMM convolution and prefill attention are bound by their arithmetic at
    /// scale, and their tiles re-read inputs that caches serve; every other family moves each
    /// byte once per few FLOPs.
    pub fn memory_bound(self) -> bool {
        !matches!(self, Family::Gemm | Family::ConvGemm | Family::Attention)
    }

    /// Whether the family streams flat arrays, so every access should be 16 bytes wide.
    pub fn streams(self) -> bool {
        matches!(
            self,
            Family::Streaming | Family::Elementwise | Family::Cast | Family::Dequant
        )
    }

    /// Whether the family stages data in LDS in a pattern that should be free of bank conflicts.
    pub fn conflict_free_lds(self) -> bool {
        matches!(self, Family::Transpose | Family::Norm | Family::Gemm)
    }
}

/// What one operation at one shape needs at least.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Demand {
    /// The operation and shape, e.g. `add f16 n=1048576`.
    pub label: String,
    /// Bytes the algorithm must read and write: every input once, every output once.
    pub min_bytes: u64,
    /// Floating-point operations (nominal: 1 per add or multiply, 2 per FMA and per
    /// multiply-accumulate of a matrix product).
    pub flops: u64,
    /// Elements processed, the unit of instructions per element: outputs, inputs for
    /// reductions, visible (query, key) pairs for attention.
    pub elements: u64,
    /// The arithmetic the FLOPs run on.
    pub math: Math,
}

/// One measured run: the kernel the operation launched and its counters.
#[derive(Clone, Debug)]
pub struct Run {
    /// The kernel's name.
    pub kernel: String,
    /// Its family.
    pub family: Family,
    /// What the operation needs.
    pub demand: Demand,
    /// The emulator's counters, summed over the operation's dispatches.
    pub counters: Counters,
    /// Dispatches the operation made.
    pub dispatches: usize,
    /// Host seconds the operation took on the emulator (inputs made and uploaded included).
    pub host_seconds: f64,
}

/// How large the representative shapes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The report's shapes: large enough that per-launch costs fade (half a million elements
    /// for flat operations).
    Full,
    /// A sixteenth of the elements, for a quick check in CI.
    Smoke,
}

impl Size {
    /// `full` elements, or a sixteenth for a smoke run (at least `floor`).
    pub fn scale(self, full: usize, floor: usize) -> usize {
        match self {
            Size::Full => full,
            Size::Smoke => (full / 16).max(floor),
        }
    }
}

/// Runs operations on one emulated gfx and collects what they launched.
pub struct Runner<'a> {
    /// The library, loaded on the emulator.
    pub library: &'a Library,
    /// The emulator's device.
    pub device: Device,
    /// The stream every operation runs on.
    pub stream: Stream,
    /// The shapes to use.
    pub size: Size,
    emulator: &'a Emulator,
    rng: StdRng,
    runs: Vec<Run>,
    /// Per family, the operations that failed and the first failure's message.
    failures: Vec<(Family, usize, String)>,
}

impl<'a> Runner<'a> {
    /// A runner for `library`, loaded on `emulator`'s device.
    pub fn new(emulator: &'a Emulator, library: &'a Library, size: Size) -> Runner<'a> {
        let device = library.device().clone();
        Runner {
            library,
            stream: device.default_stream(),
            device,
            size,
            emulator,
            rng: StdRng::seed_from_u64(0x1205),
            runs: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Runs `op` and records the kernel it launched with its counters; an operation that fails
    /// (e.g. a family the gfx has no kernels for) is recorded as a failure with its message.
    pub fn measure(&mut self, family: Family, op: impl FnOnce(&mut Self) -> Result<Demand>) {
        self.measure_stages(family, |r| op(r).map(|demand| (demand, Vec::new())));
    }

    /// Runs `op`, an operation that may launch several kernels one after the other. Its demand
    /// is judged on the first kernel launched, with the counters of all its dispatches (what
    /// the operation costs); each later kernel, in launch order, gets a run of its own with the
    /// family and demand `op` gives for it, measured on that kernel's dispatches alone.
    pub fn measure_stages(
        &mut self,
        family: Family,
        op: impl FnOnce(&mut Self) -> Result<(Demand, Vec<(Family, Demand)>)>,
    ) {
        self.emulator.take_counters();
        let started = std::time::Instant::now();
        let result = op(self).and_then(|demands| {
            self.stream.synchronize()?;
            Ok(demands)
        });
        let dispatches = self.emulator.take_counters();
        let host_seconds = started.elapsed().as_secs_f64();
        let (demand, stages) = match result {
            Ok(demands) => demands,
            Err(e) => return self.fail(family, format!("{e:#}")),
        };
        let mut kernels: Vec<&str> = Vec::new();
        for (kernel, _) in &dispatches {
            if !kernels.contains(&kernel.as_str()) {
                kernels.push(kernel);
            }
        }
        let Some(first) = kernels.first() else {
            return self.fail(family, format!("{}: launched nothing", demand.label));
        };
        if kernels.len() != stages.len() + 1 {
            let message = format!(
                "{}: launched {} but {} stage(s) were expected",
                demand.label,
                kernels.join(", "),
                stages.len() + 1
            );
            return self.fail(family, message);
        }
        let run = |kernel: &str, family, demand, only: Option<&str>| {
            let mut counters = Counters::default();
            let mut count = 0;
            for (_, c) in dispatches
                .iter()
                .filter(|(k, _)| only.is_none_or(|o| k == o))
            {
                counters += c;
                count += 1;
            }
            Run {
                kernel: kernel.to_string(),
                family,
                demand,
                counters,
                dispatches: count,
                host_seconds,
            }
        };
        self.runs.push(run(first, family, demand, None));
        for (kernel, (family, demand)) in kernels[1..].iter().zip(stages) {
            self.runs.push(run(kernel, family, demand, Some(kernel)));
        }
    }

    /// Records a failed operation of `family`: the first message in full up to its first
    /// parenthesis (a missing kernel's message lists the whole module), later ones counted.
    fn fail(&mut self, family: Family, message: String) {
        match self.failures.iter_mut().find(|(f, _, _)| *f == family) {
            Some((_, count, _)) => *count += 1,
            None => {
                let short = message.split(" (").next().unwrap_or(&message).to_string();
                self.failures.push((family, 1, short));
            }
        }
    }

    /// `n` seeded random values in `[-4, 4)` as `T`.
    pub fn floats<T: Sample>(&mut self, n: usize) -> Vec<T> {
        (0..n)
            .map(|_| T::from_f32(self.rng.random_range(-4.0..4.0)))
            .collect()
    }

    /// `n` seeded random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.rng.random()).collect()
    }

    /// `n` seeded random indices below `bound`.
    pub fn indices(&mut self, n: usize, bound: u32) -> Vec<u32> {
        (0..n).map(|_| self.rng.random_range(0..bound)).collect()
    }

    /// `values` uploaded to the emulator.
    pub fn upload<T: bytemuck::Pod>(&self, values: &[T]) -> Result<DeviceBuffer<T>> {
        Ok(DeviceBuffer::from_slice(&self.device, values)?)
    }

    /// [`Runner::floats`] on the device.
    pub fn device_floats<T: Sample>(&mut self, n: usize) -> Result<DeviceBuffer<T>> {
        let values = self.floats::<T>(n);
        self.upload(&values)
    }

    /// [`Runner::bytes`] on the device.
    pub fn device_bytes(&mut self, n: usize) -> Result<DeviceBuffer<u8>> {
        let values = self.bytes(n);
        self.upload(&values)
    }

    /// `n` values on the device repeating a block of 4096 seeded random ones: much quicker to
    /// make than [`Runner::device_floats`] for the large K and V of attention, and as good for
    /// the counters, which no kernel's traffic ties to the values.
    pub fn device_floats_tiled<T: Sample>(&mut self, n: usize) -> Result<DeviceBuffer<T>> {
        let block = self.floats::<T>(n.min(4096));
        let values: Vec<T> = block.iter().copied().cycle().take(n).collect();
        self.upload(&values)
    }

    /// `n` seeded random bytes in `range` on the device.
    pub fn device_bytes_in(
        &mut self,
        n: usize,
        range: std::ops::Range<u8>,
    ) -> Result<DeviceBuffer<u8>> {
        let values: Vec<u8> = (0..n)
            .map(|_| self.rng.random_range(range.clone()))
            .collect();
        self.upload(&values)
    }

    /// [`Runner::indices`] on the device.
    pub fn device_indices(&mut self, n: usize, bound: u32) -> Result<DeviceBuffer<u32>> {
        let values = self.indices(n, bound);
        self.upload(&values)
    }

    /// A zeroed device buffer of `n` elements.
    pub fn zeros<T: bytemuck::Pod>(&self, n: usize) -> Result<DeviceBuffer<T>> {
        Ok(DeviceBuffer::from_slice(
            &self.device,
            &vec![T::zeroed(); n],
        )?)
    }

    /// The runs, and per family the operations that did not run with the first reason.
    pub fn finish(self) -> (Vec<Run>, Vec<String>) {
        let failures = self
            .failures
            .into_iter()
            .map(|(family, count, first)| {
                format!("{family:?}: {count} operation(s) did not run; the first: {first}")
            })
            .collect();
        (self.runs, failures)
    }
}

/// The library's float types, made from an f32 sample.
pub trait Sample: Float + iron::library::quant::half_float::ToF32 {
    /// Bytes per element.
    const SIZE: u64;
    /// The type's name in labels.
    const TYPE_NAME: &'static str;
    /// `v` rounded to the type.
    fn from_f32(v: f32) -> Self;
}

impl Sample for f32 {
    const SIZE: u64 = 4;
    const TYPE_NAME: &'static str = "f32";
    fn from_f32(v: f32) -> Self {
        v
    }
}

impl Sample for f16 {
    const SIZE: u64 = 2;
    const TYPE_NAME: &'static str = "f16";
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}

impl Sample for bf16 {
    const SIZE: u64 = 2;
    const TYPE_NAME: &'static str = "bf16";
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

/// Runs every operation of the library at its representative shape.
pub fn run_all(emulator: &Emulator, library: &Library, size: Size) -> (Vec<Run>, Vec<String>) {
    let mut runner = Runner::new(emulator, library, size);
    flat::run(&mut runner);
    rows::run(&mut runner);
    matrix::run(&mut runner);
    attention::run(&mut runner);
    conv::run(&mut runner);
    runner.finish()
}
