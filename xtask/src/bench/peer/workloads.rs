//! The peer benchmark's workloads: the operations Iron and Triton both run, at the same shapes,
//! with seeded inputs, the CPU reference of each, what its algorithm must move at least, and
//! Iron's side of the run (the library's host API).

use super::oracle::{self, Expected, Tolerance};
use crate::report::workloads::{Demand, Family, Math};
use anyhow::{Context, Result, bail};
use iron::library::quant::element::ElementFormat;
use iron::library::quant::fp8::{E4M3Fn, E4M3Fnuz};
use iron::library::{
    AttentionOptions, AttentionShape, Epilogue, Fp8Format, Fp8Matrix, GemmShape, GemmTile, Layout,
    Library, RopeShape, RopeStyle, bf16, f16,
};
use iron::{Device, DeviceBuffer, Stream};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// An element type of the workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    /// The name in labels and in the Triton request.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }

    fn size(self) -> u64 {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }

    fn tolerance(self) -> Tolerance {
        match self {
            Dtype::F32 => Tolerance::F32,
            Dtype::F16 => Tolerance::F16,
            Dtype::Bf16 => Tolerance::BF16,
        }
    }

    /// `v` rounded to the type (nearest, ties to even) through f32: exact for the f32 values
    /// the workloads use (`half`'s conversions from f64 drop the low bits that decide ties).
    fn round(self, v: f64) -> f64 {
        let v = v as f32;
        match self {
            Dtype::F32 => f64::from(v),
            Dtype::F16 => f64::from(f16::from_f32(v)),
            Dtype::Bf16 => f64::from(bf16::from_f32(v)),
        }
    }
}

/// One operation at one shape.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// `out = x + y` over `n` elements.
    Add { n: usize },
    /// `y = x` converted from one float type to another over `n` elements.
    Cast { from: Dtype, to: Dtype, n: usize },
    /// The sum of `n` f32 into one f32.
    Sum { n: usize },
    /// The sum of each row of an f32 `[rows, cols]` matrix.
    RowSum { rows: usize, cols: usize },
    /// `dst = src^T` for an f32 `[rows, cols]` row-major `src`.
    Transpose { rows: usize, cols: usize },
    /// GPT-NeoX RoPE in place on f16 `[tokens, heads, head_dim]`, every element rotated
    /// (`rotary_dim = head_dim`), a u32 position per token, base [`ROPE_THETA`].
    Rope {
        tokens: usize,
        heads: usize,
        head_dim: usize,
    },
    /// `C (f32) = (scale_a A) (scale_b B)`, FP8 E4M3 codes (FNUZ, gfx942's, or OCP), A
    /// row-major `[m, k]`, B column-major (`[n, k]`), one f32 scale per tensor
    /// ([`FP8_SCALES`]).
    GemmFp8 { side: usize, fnuz: bool },
    /// Attention forward `O = softmax(scale Q K^T (+ causal mask)) V`, f16, one batch entry,
    /// `heads` query and KV heads, `[heads, seq, head_dim]` row-major, scale
    /// `1 / sqrt(head_dim)`.
    Attention {
        heads: usize,
        seq: usize,
        head_dim: usize,
        causal: bool,
    },
    /// Softmax over each row.
    Softmax {
        dtype: Dtype,
        rows: usize,
        cols: usize,
    },
    /// RMSNorm (f16) over each row.
    RmsNorm { rows: usize, cols: usize },
    /// LayerNorm (f16) over each row.
    LayerNorm { rows: usize, cols: usize },
    /// `C (f32) = A B`, f16 or bf16 inputs, A row-major, B row- or column-major.
    Gemm {
        dtype: Dtype,
        side: usize,
        b_col_major: bool,
    },
}

/// The RMSNorm epsilon, both sides.
const RMS_EPS: f32 = 1e-6;
/// The RoPE base, both sides.
const ROPE_THETA: f32 = 10000.0;
/// RoPE positions are drawn from `0..ROPE_MAX_POSITION`.
const ROPE_MAX_POSITION: u32 = 2048;
/// The FP8 GEMM's tensor scales of A and B, both sides.
const FP8_SCALES: (f32, f32) = (0.5, 0.25);
/// The LayerNorm epsilon, both sides.
const LN_EPS: f32 = 1e-5;

impl Op {
    /// The block Iron's library does not take by default (`auto`, what `GemmTile::Auto` takes
    /// for this operation's shape), when the operation has another: a 16-bit or FP8 GEMM runs
    /// in both blocks. With its configuration's name.
    pub fn other_iron_tile(self, auto: GemmTile) -> Option<(&'static str, GemmTile)> {
        match self {
            Op::Gemm { .. } | Op::GemmFp8 { .. } if auto == GemmTile::Block64 => {
                Some(("iron 128", GemmTile::Block128))
            }
            Op::Gemm { .. } | Op::GemmFp8 { .. } => Some(("iron 64", GemmTile::Block64)),
            _ => None,
        }
    }

    /// The shape of a GEMM operation, `None` for the others.
    pub fn gemm_shape(self) -> Option<GemmShape> {
        match self {
            Op::Gemm { side, .. } | Op::GemmFp8 { side, .. } => Some(GemmShape {
                m: side,
                n: side,
                k: side,
            }),
            _ => None,
        }
    }

    /// A short identifier (file names, the Triton request, the inputs' seed): the label with
    /// every character but letters and digits made `_`.
    pub fn id(self) -> String {
        self.label()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }

    /// The label in the table.
    pub fn label(self) -> String {
        match self {
            Op::Add { n } => format!("add f32 n={n}"),
            Op::Cast { from, to, n } => format!("cast {}->{} n={n}", from.name(), to.name()),
            Op::Sum { n } => format!("sum f32 n={n}"),
            Op::RowSum { rows, cols } => format!("row sum f32 {rows}x{cols}"),
            Op::Transpose { rows, cols } => format!("transpose f32 {rows}x{cols}"),
            Op::Rope {
                tokens,
                heads,
                head_dim,
            } => format!("rope NeoX f16 {tokens}x{heads}x{head_dim}"),
            Op::GemmFp8 { side, fnuz } => {
                format!("gemm {}->f32 {side}^3 B col-major", fp8_name(fnuz))
            }
            Op::Attention {
                heads,
                seq,
                head_dim,
                causal,
            } => format!(
                "attention f16 {heads}x{seq}x{head_dim}{}",
                if causal { " causal" } else { "" }
            ),
            Op::Softmax { dtype, rows, cols } => format!("softmax {} {rows}x{cols}", dtype.name()),
            Op::RmsNorm { rows, cols } => format!("rmsnorm f16 {rows}x{cols}"),
            Op::LayerNorm { rows, cols } => format!("layernorm f16 {rows}x{cols}"),
            Op::Gemm {
                dtype,
                side,
                b_col_major,
            } => format!(
                "gemm {}->f32 {side}^3 B {}",
                dtype.name(),
                if b_col_major {
                    "col-major"
                } else {
                    "row-major"
                }
            ),
        }
    }

    /// Whether the operation belongs on `gfx`: FP8 GEMM where the gfx has its format in
    /// hardware (FNUZ on gfx942, OCP on gfx950 and gfx1201), everything else everywhere.
    pub fn runs_on(self, gfx: &str) -> bool {
        match self {
            Op::GemmFp8 { fnuz: true, .. } => gfx == "gfx942",
            Op::GemmFp8 { fnuz: false, .. } => matches!(gfx, "gfx950" | "gfx1201"),
            _ => true,
        }
    }

    /// The report's family of the operation.
    pub fn family(self) -> Family {
        match self {
            Op::Add { .. } => Family::Elementwise,
            Op::Cast { .. } => Family::Cast,
            Op::Sum { .. } => Family::Reduction,
            Op::RowSum { .. } => Family::RowReduction,
            Op::Transpose { .. } => Family::Transpose,
            Op::Rope { .. } => Family::Rope,
            Op::Softmax { .. } => Family::Softmax,
            Op::RmsNorm { .. } | Op::LayerNorm { .. } => Family::Norm,
            Op::Gemm { .. } | Op::GemmFp8 { .. } => Family::Gemm,
            Op::Attention { .. } => Family::Attention,
        }
    }

    /// The workload as `kernels.py` reads it.
    pub fn request(self) -> Value {
        let id = self.id();
        match self {
            Op::Add { n } => json!({"id": id, "family": "add", "dtype": "f32", "n": n}),
            Op::Cast { from, to, n } => json!({"id": id, "family": "cast",
                "dtype": from.name(), "out": to.name(), "n": n}),
            Op::Sum { n } => json!({"id": id, "family": "sum", "dtype": "f32", "n": n}),
            Op::RowSum { rows, cols } => json!({"id": id, "family": "row_sum", "dtype": "f32",
                "rows": rows, "cols": cols}),
            Op::Transpose { rows, cols } => json!({"id": id, "family": "transpose",
                "dtype": "f32", "rows": rows, "cols": cols}),
            Op::Rope {
                tokens,
                heads,
                head_dim,
            } => json!({"id": id, "family": "rope", "dtype": "f16", "tokens": tokens,
                "heads": heads, "head_dim": head_dim, "rotary_dim": head_dim,
                "theta": ROPE_THETA}),
            Op::GemmFp8 { side, fnuz } => json!({"id": id, "family": "gemm_fp8",
                "dtype": if fnuz { "fp8e4b8" } else { "fp8e4nv" }, "out": "f32",
                "m": side, "n": side, "k": side, "b_layout": "col",
                "scale_a": FP8_SCALES.0, "scale_b": FP8_SCALES.1}),
            Op::Attention {
                heads,
                seq,
                head_dim,
                causal,
            } => json!({"id": id, "family": "attention", "dtype": "f16", "batch_heads": heads,
                "seq_q": seq, "seq_kv": seq, "head_dim": head_dim, "causal": causal,
                "scale": attention_scale(head_dim)}),
            Op::Softmax { dtype, rows, cols } => json!({"id": id, "family": "softmax",
                "dtype": dtype.name(), "rows": rows, "cols": cols}),
            Op::RmsNorm { rows, cols } => json!({"id": id, "family": "rmsnorm", "dtype": "f16",
                "rows": rows, "cols": cols, "eps": RMS_EPS}),
            Op::LayerNorm { rows, cols } => json!({"id": id, "family": "layernorm",
                "dtype": "f16", "rows": rows, "cols": cols, "eps": LN_EPS}),
            Op::Gemm {
                dtype,
                side,
                b_col_major,
            } => json!({"id": id, "family": "gemm", "dtype": dtype.name(),
                "out": "f32", "m": side, "n": side, "k": side,
                "b_layout": if b_col_major { "col" } else { "row" }}),
        }
    }

    /// What the algorithm must move at least, as the report counts it.
    fn demand(self) -> Demand {
        let vector = |min_bytes: u64, flops: u64, elements: usize| Demand {
            label: self.label(),
            min_bytes,
            flops,
            elements: elements as u64,
            math: Math::Vector,
        };
        match self {
            Op::Add { n } => vector(12 * n as u64, n as u64, n),
            Op::Cast { from, to, n } => vector((from.size() + to.size()) * n as u64, 0, n),
            Op::Sum { n } => vector(4 * n as u64 + 4, n as u64, n),
            Op::RowSum { rows, cols } => {
                let n = rows * cols;
                vector(4 * (n + rows) as u64, n as u64, n)
            }
            Op::Transpose { rows, cols } => vector(8 * (rows * cols) as u64, 0, rows * cols),
            Op::Rope {
                tokens,
                heads,
                head_dim,
            } => {
                let n = tokens * heads * head_dim;
                vector(4 * n as u64 + 4 * tokens as u64, 3 * n as u64, n)
            }
            Op::Softmax { dtype, rows, cols } => {
                let n = rows * cols;
                vector(2 * dtype.size() * n as u64, 4 * n as u64, n)
            }
            Op::RmsNorm { rows, cols } => {
                let n = rows * cols;
                vector(4 * n as u64 + 2 * cols as u64, 4 * n as u64, n)
            }
            Op::LayerNorm { rows, cols } => {
                let n = rows * cols;
                vector(4 * n as u64 + 4 * cols as u64, 7 * n as u64, n)
            }
            Op::Attention {
                heads,
                seq,
                head_dim,
                causal,
            } => {
                let (h, s, d) = (heads as u64, seq as u64, head_dim as u64);
                // Q, K, V read and O written once; two matrix products per head, halved when
                // causal.
                let flops = 4 * h * s * s * d / if causal { 2 } else { 1 };
                Demand {
                    label: self.label(),
                    min_bytes: 4 * 2 * h * s * d,
                    flops,
                    elements: h * s * d,
                    math: Math::Matrix16,
                }
            }
            Op::GemmFp8 { side, .. } => {
                let s = side as u64;
                Demand {
                    label: self.label(),
                    min_bytes: 2 * s * s + 4 * s * s,
                    flops: 2 * s * s * s,
                    elements: s * s,
                    math: Math::Matrix8,
                }
            }
            Op::Gemm { side, .. } => {
                let s = side as u64;
                Demand {
                    label: self.label(),
                    min_bytes: 2 * 2 * s * s + 4 * s * s,
                    flops: 2 * s * s * s,
                    elements: s * s,
                    math: Math::Matrix16,
                }
            }
        }
    }
}

/// A device buffer of one of the workloads' element types.
pub enum Buf {
    F32(DeviceBuffer<f32>),
    F16(DeviceBuffer<f16>),
    Bf16(DeviceBuffer<bf16>),
    U32(DeviceBuffer<u32>),
    U8(DeviceBuffer<u8>),
}

/// The accessors of [`Buf`]: `name()` is the buffer of that element type, or an error naming
/// the one it holds.
macro_rules! buffer_accessors {
    ($($name:ident: $t:ty => $variant:ident),* $(,)?) => {$(
        fn $name(&self) -> Result<&DeviceBuffer<$t>> {
            match self {
                Buf::$variant(b) => Ok(b),
                b => bail!(
                    concat!("an {} buffer where ", stringify!($name), " was expected"),
                    b.type_name()
                ),
            }
        }
    )*};
}

impl Buf {
    /// `values` rounded to `dtype` and uploaded.
    fn upload(device: &Device, dtype: Dtype, values: &[f64]) -> Result<Buf> {
        Ok(match dtype {
            Dtype::F32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                Buf::F32(DeviceBuffer::from_slice(device, &v)?)
            }
            Dtype::F16 => {
                let v: Vec<f16> = values.iter().map(|&x| f16::from_f32(x as f32)).collect();
                Buf::F16(DeviceBuffer::from_slice(device, &v)?)
            }
            Dtype::Bf16 => {
                let v: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x as f32)).collect();
                Buf::Bf16(DeviceBuffer::from_slice(device, &v)?)
            }
        })
    }

    /// The buffer's device address.
    pub fn address(&self) -> u64 {
        match self {
            Buf::F32(b) => b.address(),
            Buf::F16(b) => b.address(),
            Buf::Bf16(b) => b.address(),
            Buf::U32(b) => b.address(),
            Buf::U8(b) => b.address(),
        }
    }

    /// Fills the buffer with NaN, so an element a kernel does not write fails the check.
    pub fn poison(&mut self) -> Result<()> {
        match self {
            Buf::F32(b) => b.copy_from_slice(&vec![f32::NAN; b.len()])?,
            Buf::F16(b) => b.copy_from_slice(&vec![f16::NAN; b.len()])?,
            Buf::Bf16(b) => b.copy_from_slice(&vec![bf16::NAN; b.len()])?,
            Buf::U32(b) => b.copy_from_slice(&vec![u32::MAX; b.len()])?,
            Buf::U8(b) => b.copy_from_slice(&vec![u8::MAX; b.len()])?,
        }
        Ok(())
    }

    /// The contents as f64.
    pub fn read(&self) -> Result<Vec<f64>> {
        Ok(match self {
            Buf::F32(b) => b.to_vec()?.into_iter().map(f64::from).collect(),
            Buf::F16(b) => b.to_vec()?.into_iter().map(f64::from).collect(),
            Buf::Bf16(b) => b.to_vec()?.into_iter().map(f64::from).collect(),
            Buf::U32(b) => b.to_vec()?.into_iter().map(f64::from).collect(),
            Buf::U8(b) => b.to_vec()?.into_iter().map(f64::from).collect(),
        })
    }

    /// The element type's name, for messages.
    fn type_name(&self) -> &'static str {
        match self {
            Buf::F32(_) => "f32",
            Buf::F16(_) => "f16",
            Buf::Bf16(_) => "bf16",
            Buf::U32(_) => "u32",
            Buf::U8(_) => "u8",
        }
    }

    buffer_accessors! {
        f32: f32 => F32,
        f16: f16 => F16,
        bf16: bf16 => Bf16,
        u32: u32 => U32,
        u8: u8 => U8,
    }
}

/// One operation made ready to run: its inputs and output on the device (named as the Triton
/// kernels name their arguments), the expected output and what it must move.
pub struct Prepared {
    pub op: Op,
    pub inputs: Vec<(&'static str, Buf)>,
    pub output: (&'static str, Buf),
    pub expected: Vec<Expected>,
    pub tolerance: Tolerance,
    pub demand: Demand,
    /// For an in-place operation, the output's contents before it runs (restored instead of
    /// poisoning).
    pub initial: Option<Vec<f64>>,
}

/// The attention scale, both sides: `1 / sqrt(head_dim)`.
fn attention_scale(head_dim: usize) -> f32 {
    1.0 / (head_dim as f32).sqrt()
}

/// The FP8 E4M3 format's name: FNUZ (gfx942) or OCP.
fn fp8_name(fnuz: bool) -> &'static str {
    if fnuz { "fp8 e4m3fnuz" } else { "fp8 e4m3fn" }
}

/// The value of an FP8 E4M3 code.
fn fp8_value(code: u8, fnuz: bool) -> f64 {
    f64::from(if fnuz {
        E4M3Fnuz::decode_to_f32(code)
    } else {
        E4M3Fn::decode_to_f32(code)
    })
}

/// `n` seeded FP8 E4M3 codes of values in `[-4, 4)`.
fn fp8_codes(rng: &mut StdRng, n: usize, fnuz: bool) -> Vec<u8> {
    (0..n)
        .map(|_| {
            let v: f32 = rng.random_range(-4.0..4.0);
            if fnuz {
                E4M3Fnuz::encode_from_f32(v)
            } else {
                E4M3Fn::encode_from_f32(v)
            }
        })
        .collect()
}

/// `n` seeded values in `[-4, 4)`, exactly representable in `dtype`.
fn values(rng: &mut StdRng, n: usize, dtype: Dtype) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let v: f32 = rng.random_range(-4.0..4.0);
            dtype.round(f64::from(v))
        })
        .collect()
}

impl Prepared {
    /// Makes `op`'s inputs (seeded by its identifier) on `device` and its reference.
    pub fn new(device: &Device, op: Op) -> Result<Prepared> {
        let seed = op
            .id()
            .bytes()
            .fold(0x1205u64, |h, b| h.wrapping_mul(31) ^ u64::from(b));
        let rng = &mut StdRng::seed_from_u64(seed);
        let up = |dtype, v: &[f64]| Buf::upload(device, dtype, v);
        let mut initial = None;
        let (inputs, output, expected, tolerance) = match op {
            Op::Add { n } => {
                let (x, y) = (values(rng, n, Dtype::F32), values(rng, n, Dtype::F32));
                let inputs = vec![("x", up(Dtype::F32, &x)?), ("y", up(Dtype::F32, &y)?)];
                let out = ("out", up(Dtype::F32, &vec![0.0; n])?);
                (inputs, out, oracle::add(&x, &y), Tolerance::F32)
            }
            Op::Cast { from, to, n } => {
                // f32 inputs with more bits than the target keeps, so rounding is exercised.
                let x = values(rng, n, from);
                let out = ("y", up(to, &vec![0.0; n])?);
                let expected = oracle::exact(x.iter().map(|&v| to.round(v)));
                (vec![("x", up(from, &x)?)], out, expected, Tolerance::EXACT)
            }
            Op::Sum { n } => {
                let x = values(rng, n, Dtype::F32);
                let out = ("out", up(Dtype::F32, &[0.0])?);
                let expected = oracle::row_sums(&x, n);
                (
                    vec![("x", up(Dtype::F32, &x)?)],
                    out,
                    expected,
                    Tolerance::F32,
                )
            }
            Op::RowSum { rows, cols } => {
                let x = values(rng, rows * cols, Dtype::F32);
                let out = ("out", up(Dtype::F32, &vec![0.0; rows])?);
                let expected = oracle::row_sums(&x, cols);
                (
                    vec![("x", up(Dtype::F32, &x)?)],
                    out,
                    expected,
                    Tolerance::F32,
                )
            }
            Op::Transpose { rows, cols } => {
                let x = values(rng, rows * cols, Dtype::F32);
                let out = ("dst", up(Dtype::F32, &vec![0.0; rows * cols])?);
                let t = (0..rows * cols).map(|i| x[(i % rows) * cols + i / rows]);
                let expected = oracle::exact(t);
                (
                    vec![("src", up(Dtype::F32, &x)?)],
                    out,
                    expected,
                    Tolerance::EXACT,
                )
            }
            Op::Rope {
                tokens,
                heads,
                head_dim,
            } => {
                let x = values(rng, tokens * heads * head_dim, Dtype::F16);
                let positions: Vec<u32> = (0..tokens)
                    .map(|_| rng.random_range(0..ROPE_MAX_POSITION))
                    .collect();
                let expected =
                    oracle::rope_neox(&x, &positions, heads, head_dim, f64::from(ROPE_THETA));
                let inputs = vec![(
                    "positions",
                    Buf::U32(DeviceBuffer::from_slice(device, &positions)?),
                )];
                // In place: the output starts as the input, restored before every run.
                initial = Some(x.clone());
                (inputs, ("x", up(Dtype::F16, &x)?), expected, Tolerance::F16)
            }
            Op::GemmFp8 { side, fnuz } => {
                let n = side * side;
                let (a, b) = (fp8_codes(rng, n, fnuz), fp8_codes(rng, n, fnuz));
                let (sa, sb) = (f64::from(FP8_SCALES.0), f64::from(FP8_SCALES.1));
                let value = |codes: &[u8], scale: f64| -> Vec<f64> {
                    codes.iter().map(|&c| scale * fp8_value(c, fnuz)).collect()
                };
                let expected =
                    oracle::gemm(&value(&a, sa), &value(&b, sb), (side, side, side), true);
                let inputs = vec![
                    ("a", Buf::U8(DeviceBuffer::from_slice(device, &a)?)),
                    ("b", Buf::U8(DeviceBuffer::from_slice(device, &b)?)),
                ];
                let out = ("c", up(Dtype::F32, &vec![0.0; n])?);
                (inputs, out, expected, Tolerance::F32)
            }
            Op::Attention {
                heads,
                seq,
                head_dim,
                causal,
            } => {
                let n = heads * seq * head_dim;
                let (q, k, v) = (
                    values(rng, n, Dtype::F16),
                    values(rng, n, Dtype::F16),
                    values(rng, n, Dtype::F16),
                );
                let scale = f64::from(attention_scale(head_dim));
                let expected = oracle::attention(&q, &k, &v, (seq, head_dim), scale, causal);
                let inputs = vec![
                    ("q", up(Dtype::F16, &q)?),
                    ("k", up(Dtype::F16, &k)?),
                    ("v", up(Dtype::F16, &v)?),
                ];
                let out = ("o", up(Dtype::F16, &vec![0.0; n])?);
                (inputs, out, expected, Tolerance::F16)
            }
            Op::Softmax { dtype, rows, cols } => {
                let x = values(rng, rows * cols, dtype);
                let out = ("out", up(dtype, &vec![0.0; rows * cols])?);
                (
                    vec![("x", up(dtype, &x)?)],
                    out,
                    oracle::softmax(&x, cols),
                    dtype.tolerance(),
                )
            }
            Op::RmsNorm { rows, cols } => {
                let (x, w) = (
                    values(rng, rows * cols, Dtype::F16),
                    values(rng, cols, Dtype::F16),
                );
                let inputs = vec![("x", up(Dtype::F16, &x)?), ("weight", up(Dtype::F16, &w)?)];
                let out = ("out", up(Dtype::F16, &vec![0.0; rows * cols])?);
                let expected = oracle::rmsnorm(&x, &w, f64::from(RMS_EPS));
                (inputs, out, expected, Tolerance::F16)
            }
            Op::LayerNorm { rows, cols } => {
                let x = values(rng, rows * cols, Dtype::F16);
                let (w, b) = (values(rng, cols, Dtype::F16), values(rng, cols, Dtype::F16));
                let inputs = vec![
                    ("x", up(Dtype::F16, &x)?),
                    ("weight", up(Dtype::F16, &w)?),
                    ("bias", up(Dtype::F16, &b)?),
                ];
                let out = ("out", up(Dtype::F16, &vec![0.0; rows * cols])?);
                let expected = oracle::layernorm(&x, &w, &b, f64::from(LN_EPS));
                (inputs, out, expected, Tolerance::F16)
            }
            Op::Gemm {
                dtype,
                side,
                b_col_major,
            } => {
                let n = side * side;
                let (a, b) = (values(rng, n, dtype), values(rng, n, dtype));
                let inputs = vec![("a", up(dtype, &a)?), ("b", up(dtype, &b)?)];
                let out = ("c", up(Dtype::F32, &vec![0.0; n])?);
                let expected = oracle::gemm(&a, &b, (side, side, side), b_col_major);
                (inputs, out, expected, Tolerance::F32)
            }
        };
        Ok(Prepared {
            op,
            inputs,
            output,
            expected,
            tolerance,
            demand: op.demand(),
            initial,
        })
    }

    /// The buffer named `role`.
    pub fn buffer(&self, role: &str) -> Option<&Buf> {
        self.inputs
            .iter()
            .chain(std::iter::once(&self.output))
            .find(|(name, _)| *name == role)
            .map(|(_, b)| b)
    }

    /// Poisons the output (restores an in-place operation's input), or fails.
    pub fn poison(&mut self) -> Result<()> {
        match (&self.initial, &mut self.output.1) {
            (Some(x), Buf::F16(b)) => {
                let v: Vec<f16> = x.iter().map(|&v| f16::from_f32(v as f32)).collect();
                b.copy_from_slice(&v)?;
                Ok(())
            }
            (Some(_), b) => bail!("restoring an in-place {} buffer", b.type_name()),
            (None, b) => b.poison(),
        }
    }

    /// Zeroes the output (for a kernel that accumulates into it).
    pub fn zero_output(&mut self) -> Result<()> {
        match &mut self.output.1 {
            Buf::F32(b) => b.copy_from_slice(&vec![0.0; b.len()])?,
            Buf::F16(b) => b.copy_from_slice(&vec![f16::ZERO; b.len()])?,
            Buf::Bf16(b) => b.copy_from_slice(&vec![bf16::ZERO; b.len()])?,
            Buf::U32(b) => b.copy_from_slice(&vec![0; b.len()])?,
            Buf::U8(b) => b.copy_from_slice(&vec![0; b.len()])?,
        }
        Ok(())
    }

    /// Checks the output against the reference: `None` when it matches.
    pub fn check(&self) -> Result<Option<String>> {
        Ok(oracle::check(
            &self.output.1.read()?,
            &self.expected,
            self.tolerance,
        ))
    }

    /// Runs the operation through Iron's library, a 16-bit or FP8 GEMM in blocks of `tile`.
    pub fn run_iron(&mut self, library: &Library, stream: &Stream, tile: GemmTile) -> Result<()> {
        iron_into(
            library,
            stream,
            (self.op, tile),
            &self.inputs,
            &mut self.output.1,
        )
    }
}

/// The input named `role`.
fn input<'a>(inputs: &'a [(&'static str, Buf)], role: &str) -> Result<&'a Buf> {
    inputs
        .iter()
        .find(|(name, _)| *name == role)
        .map(|(_, b)| b)
        .with_context(|| format!("no input named {role}"))
}

/// Runs `op` through `lib` on `inputs` into `out`.
fn iron_into(
    lib: &Library,
    stream: &Stream,
    (op, tile): (Op, GemmTile),
    inputs: &[(&'static str, Buf)],
    out: &mut Buf,
) -> Result<()> {
    let x = |role| input(inputs, role);
    match (op, out) {
        (Op::Add { n }, Buf::F32(out)) => {
            lib.add(stream, x("x")?.f32()?, x("y")?.f32()?, out, n)?
        }
        (Op::Cast { from, n, .. }, out) => match (from, out) {
            (Dtype::F32, Buf::F16(out)) => lib.cast(stream, x("x")?.f32()?, out, n)?,
            (Dtype::F32, Buf::Bf16(out)) => lib.cast(stream, x("x")?.f32()?, out, n)?,
            (Dtype::F16, Buf::F32(out)) => lib.cast(stream, x("x")?.f16()?, out, n)?,
            (Dtype::Bf16, Buf::F32(out)) => lib.cast(stream, x("x")?.bf16()?, out, n)?,
            (_, out) => bail!(
                "{}: the library has no cast to {}",
                op.label(),
                out.type_name()
            ),
        },
        (Op::Sum { n }, Buf::F32(out)) => lib.sum(stream, x("x")?.f32()?, out, n)?,
        (Op::RowSum { rows, cols }, Buf::F32(out)) => {
            lib.row_sum(stream, x("x")?.f32()?, out, rows, cols)?
        }
        (Op::Transpose { rows, cols }, Buf::F32(out)) => {
            lib.transpose(stream, x("src")?.f32()?, out, rows, cols)?
        }
        (
            Op::Rope {
                tokens,
                heads,
                head_dim,
            },
            Buf::F16(out),
        ) => {
            let shape = RopeShape {
                tokens,
                heads,
                head_dim,
                rotary_dim: head_dim,
            };
            let positions = x("positions")?.u32()?;
            lib.rope(stream, out, positions, shape, ROPE_THETA, RopeStyle::NeoX)?
        }
        (Op::GemmFp8 { side, fnuz }, Buf::F32(out)) => {
            let format = if fnuz {
                Fp8Format::E4M3Fnuz
            } else {
                Fp8Format::E4M3Fn
            };
            let shape = GemmShape {
                m: side,
                n: side,
                k: side,
            };
            let a = Fp8Matrix {
                codes: x("a")?.u8()?,
                format,
                scale: FP8_SCALES.0,
            };
            let b = Fp8Matrix {
                codes: x("b")?.u8()?,
                format,
                scale: FP8_SCALES.1,
            };
            let e = Epilogue {
                tile,
                ..Epilogue::default()
            };
            lib.gemm_fp8(stream, a, b, out, shape, e)?
        }
        (
            Op::Attention {
                heads,
                seq,
                head_dim,
                causal,
            },
            Buf::F16(out),
        ) => {
            let shape = AttentionShape {
                batch: 1,
                heads_q: heads,
                heads_kv: heads,
                seq_q: seq,
                seq_kv: seq,
                head_dim,
            };
            let options = AttentionOptions {
                causal,
                scale: Some(attention_scale(head_dim)),
                ..AttentionOptions::default()
            };
            let (q, k, v) = (x("q")?.f16()?, x("k")?.f16()?, x("v")?.f16()?);
            lib.attention(stream, q, k, v, out, &shape, &options)?;
        }
        (Op::Softmax { rows, cols, .. }, Buf::F32(out)) => {
            lib.softmax(stream, x("x")?.f32()?, out, rows, cols)?
        }
        (Op::Softmax { rows, cols, .. }, Buf::F16(out)) => {
            lib.softmax(stream, x("x")?.f16()?, out, rows, cols)?
        }
        (Op::RmsNorm { rows, cols }, Buf::F16(out)) => {
            let (v, w) = (x("x")?.f16()?, x("weight")?.f16()?);
            lib.rmsnorm(stream, v, w, RMS_EPS, out, rows, cols)?
        }
        (Op::LayerNorm { rows, cols }, Buf::F16(out)) => {
            let (v, w, b) = (x("x")?.f16()?, x("weight")?.f16()?, x("bias")?.f16()?);
            lib.layernorm(stream, v, w, b, LN_EPS, out, rows, cols)?
        }
        (
            Op::Gemm {
                dtype,
                side,
                b_col_major,
            },
            Buf::F32(out),
        ) => {
            let b_layout = if b_col_major {
                Layout::ColMajor
            } else {
                Layout::RowMajor
            };
            let shape = GemmShape {
                m: side,
                n: side,
                k: side,
            };
            let e = Epilogue {
                tile,
                ..Epilogue::default()
            };
            if dtype == Dtype::Bf16 {
                let (a, b) = (x("a")?.bf16()?, x("b")?.bf16()?);
                lib.gemm(stream, (a, Layout::RowMajor), (b, b_layout), out, shape, e)?
            } else {
                let (a, b) = (x("a")?.f16()?, x("b")?.f16()?);
                lib.gemm(stream, (a, Layout::RowMajor), (b, b_layout), out, shape, e)?
            }
        }
        (op, _) => bail!("{}: the output buffer has the wrong type", op.label()),
    }
    Ok(())
}
