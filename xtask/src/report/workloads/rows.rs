//! The row-shaped and indexed operations: reductions, scans, norms, softmax, gather, transpose,
//! RoPE.

use super::{Demand, Family, Math, Runner, Sample};
use iron::library::{RopeFloat, RopeShape, RopeStyle, ScanKind, bf16, f16};

/// Rows of the row operations.
const ROWS: usize = 256;
/// Elements per row: a typical hidden size.
const COLS: usize = 4096;

/// Runs every row and indexed operation.
pub fn run(r: &mut Runner<'_>) {
    let rows = r.size.scale(ROWS, 16);
    sum(r, rows * COLS);
    scans(r, rows * COLS);
    per_float::<f32>(r, rows);
    per_float::<f16>(r, rows);
    per_float::<bf16>(r, rows);
    gather::<u32>(r);
    gather::<u16>(r);
    transpose::<u32>(r);
    transpose::<u16>(r);
}

fn vector(label: String, min_bytes: u64, flops: u64, elements: usize) -> Demand {
    Demand {
        label,
        min_bytes,
        flops,
        elements: elements as u64,
        math: Math::Vector,
    }
}

fn sum(r: &mut Runner<'_>, n: usize) {
    r.measure(Family::Reduction, |r| {
        let x = r.device_floats::<f32>(n)?;
        let mut total = r.zeros::<f32>(1)?;
        r.library.sum(&r.stream, &x, &mut total, n)?;
        Ok(vector(
            format!("sum f32 n={n}"),
            4 * n as u64 + 4,
            n as u64,
            1,
        ))
    });
}

/// An inclusive u32 scan and an exclusive f32 scan of `n` elements (one read and one write of
/// each element; the tile states add 8 bytes per 2048 elements).
fn scans(r: &mut Runner<'_>, n: usize) {
    r.measure(Family::Reduction, |r| {
        let values: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let x = r.upload(&values)?;
        let mut y = r.zeros::<u32>(n)?;
        r.library
            .scan(&r.stream, &x, &mut y, n, ScanKind::Inclusive)?;
        Ok(vector(format!("scan u32 n={n}"), 8 * n as u64, n as u64, n))
    });
    r.measure(Family::Reduction, |r| {
        let x = r.device_floats::<f32>(n)?;
        let mut y = r.zeros::<f32>(n)?;
        r.library
            .scan(&r.stream, &x, &mut y, n, ScanKind::Exclusive)?;
        let label = format!("scan f32 exclusive n={n}");
        Ok(vector(label, 8 * n as u64, n as u64, n))
    });
}

/// The row operations and RoPE over `T`.
fn per_float<T: Sample + RopeFloat>(r: &mut Runner<'_>, rows: usize) {
    row_reductions::<T>(r, rows, COLS);
    norms::<T>(r, rows, COLS);
    softmax::<T>(r, rows, COLS);
    for cols in EXTRA_COLS {
        row_reductions::<T>(r, EXTRA_ROWS, cols);
        norms::<T>(r, EXTRA_ROWS, cols);
        softmax::<T>(r, EXTRA_ROWS, cols);
    }
    rope::<T>(r, rows);
}

/// Rows of the row operations' extra shapes.
const EXTRA_ROWS: usize = 16;

/// Row lengths beside [`COLS`] that take the row operations' other kernels on both wave sizes.
/// The library holds a row of `k * PACK * block` elements in registers: in one wave when a
/// one-wave instance has that `k` (norms: 16, 8, 4; row sum: 16, 8), else with the largest `k`
/// that makes the block whole waves (softmax: 4, 2, 1 up to 1024 work-items; norms: 16 down to
/// 1, row sum: 32 down to 1, row max: 16 down to 1, argmax: 8 down to 1, up to 512), and takes
/// the general kernel for other rows. Together with [`COLS`] these reach every instance on both
/// wave sizes (the report's smoke test checks every kernel has a run); 4100 is general
/// everywhere.
const EXTRA_COLS: [usize; 13] = [
    3072, 1536, 768, 384, 4100, 2048, 8192, 512, 1024, 6144, 12_288, 16_384, 24_576,
];

/// Row sum, maximum and argmax over `rows` rows of `cols` elements of `T`.
fn row_reductions<T: Sample>(r: &mut Runner<'_>, rows: usize, cols: usize) {
    let n = rows * cols;
    let x_bytes = T::SIZE * n as u64;
    let t = T::TYPE_NAME;
    let shape = format!("{rows}x{cols}");
    for name in ["row_sum", "row_max", "row_argmax"] {
        r.measure(Family::RowReduction, |r| {
            let x = r.device_floats::<T>(n)?;
            let lib = r.library;
            if name == "row_argmax" {
                let mut out = r.zeros::<u32>(rows)?;
                lib.row_argmax(&r.stream, &x, &mut out, rows, cols)?;
            } else {
                let mut out = r.zeros::<f32>(rows)?;
                match name {
                    "row_sum" => lib.row_sum(&r.stream, &x, &mut out, rows, cols)?,
                    _ => lib.row_max(&r.stream, &x, &mut out, rows, cols)?,
                }
            }
            let bytes = x_bytes + 4 * rows as u64;
            Ok(vector(format!("{name} {t} {shape}"), bytes, n as u64, n))
        });
    }
}

/// Softmax over `rows` rows of `cols` elements of `T`.
fn softmax<T: Sample>(r: &mut Runner<'_>, rows: usize, cols: usize) {
    let n = rows * cols;
    let x_bytes = T::SIZE * n as u64;
    let t = T::TYPE_NAME;
    r.measure(Family::Softmax, |r| {
        let x = r.device_floats::<T>(n)?;
        let mut y = r.zeros::<T>(n)?;
        r.library.softmax(&r.stream, &x, &mut y, rows, cols)?;
        Ok(vector(
            format!("softmax {t} {rows}x{cols}"),
            2 * x_bytes,
            4 * n as u64,
            n,
        ))
    });
}

/// RMSNorm and LayerNorm over `rows` rows of `cols` elements of `T`.
fn norms<T: Sample>(r: &mut Runner<'_>, rows: usize, cols: usize) {
    let n = rows * cols;
    let x_bytes = T::SIZE * n as u64;
    let weights = T::SIZE * cols as u64;
    let t = T::TYPE_NAME;
    let shape = format!("{rows}x{cols}");
    r.measure(Family::Norm, |r| {
        let x = r.device_floats::<T>(n)?;
        let weight = r.device_floats::<T>(cols)?;
        let mut y = r.zeros::<T>(n)?;
        r.library
            .rmsnorm(&r.stream, &x, &weight, 1e-6, &mut y, rows, cols)?;
        let label = format!("rmsnorm {t} {shape}");
        Ok(vector(label, 2 * x_bytes + weights, 4 * n as u64, n))
    });
    r.measure(Family::Norm, |r| {
        let x = r.device_floats::<T>(n)?;
        let weight = r.device_floats::<T>(cols)?;
        let bias = r.device_floats::<T>(cols)?;
        let mut y = r.zeros::<T>(n)?;
        r.library
            .layernorm(&r.stream, &x, &weight, &bias, 1e-5, &mut y, rows, cols)?;
        let label = format!("layernorm {t} {shape}");
        Ok(vector(label, 2 * x_bytes + 2 * weights, 7 * n as u64, n))
    });
}

/// RoPE over `rows` tokens of 32 heads of 128 elements, fully rotated.
fn rope<T: Sample + RopeFloat>(r: &mut Runner<'_>, tokens: usize) {
    let shape = RopeShape {
        tokens,
        heads: 32,
        head_dim: 128,
        rotary_dim: 128,
    };
    let n = shape.tokens * shape.heads * shape.head_dim;
    for style in [RopeStyle::NeoX, RopeStyle::GptJ] {
        r.measure(Family::Rope, |r| {
            let mut x = r.device_floats::<T>(n)?;
            let positions = r.device_indices(tokens, 8192)?;
            r.library
                .rope(&r.stream, &mut x, &positions, shape, 10000.0, style)?;
            let rotated = (shape.tokens * shape.heads * shape.rotary_dim) as u64;
            let bytes = 2 * T::SIZE * rotated + 4 * tokens as u64;
            let label = format!("rope {style:?} {} {tokens}x32x128", T::TYPE_NAME);
            Ok(vector(label, bytes, 3 * rotated, n))
        });
    }
}

/// Bytes per element of the index-only operations' element types.
trait Width: iron::library::Bits {
    const SIZE: u64;
}

impl Width for u32 {
    const SIZE: u64 = 4;
}

impl Width for u16 {
    const SIZE: u64 = 2;
}

/// 1024 lookups of rows of 1024 elements in a table of 8192 rows.
fn gather<T: Width + Default>(r: &mut Runner<'_>) {
    let (vocab, dim) = (8192, 1024);
    let n = r.size.scale(1024, 64);
    r.measure(Family::Gather, |r| {
        let table = r.zeros::<T>(vocab * dim)?;
        let indices = r.device_indices(n, vocab as u32)?;
        let mut out = r.zeros::<T>(n * dim)?;
        r.library
            .gather(&r.stream, &table, (vocab, dim), &indices, &mut out, n)?;
        let bytes = 2 * T::SIZE * (n * dim) as u64 + 4 * n as u64;
        let label = format!("gather {}-bit {n}x{dim}", 8 * T::SIZE);
        Ok(vector(label, bytes, 0, n * dim))
    });
}

/// A 2048 x 2048 transpose and one of 2045 x 2053 (a quarter of that per side for a smoke run).
fn transpose<T: Width + Default>(r: &mut Runner<'_>) {
    let side = r.size.scale(2048, 512);
    // A square of whole 64 x 64 blocks (the whole-block kernel), and an odd shape with partial
    // tiles (the general kernel).
    for (rows, cols) in [(side, side), (side - 3, side + 5)] {
        let n = rows * cols;
        r.measure(Family::Transpose, |r| {
            let src = r.zeros::<T>(n)?;
            let mut dst = r.zeros::<T>(n)?;
            r.library.transpose(&r.stream, &src, &mut dst, rows, cols)?;
            let label = format!("transpose {}-bit {rows}x{cols}", 8 * T::SIZE);
            Ok(vector(label, 2 * T::SIZE * n as u64, 0, n))
        });
    }
}
