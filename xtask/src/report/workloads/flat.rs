//! The flat operations: streaming, elementwise, casts and dequantization, each over half a
//! million elements (256 workgroups of an f32 elementwise kernel).

use super::{Demand, Family, Math, Runner, Sample};
use iron::library::quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};
use iron::library::{DequantFormat, DequantHalf, DeviceQuantizedTensor, Fp8Format, bf16, f16};

/// Elements of a flat operation at full size.
const FLAT_ELEMENTS: usize = 1 << 19;

/// Every FP8 encoding.
pub const FP8_FORMATS: [Fp8Format; 4] = [
    Fp8Format::E4M3Fn,
    Fp8Format::E5M2,
    Fp8Format::E4M3Fnuz,
    Fp8Format::E5M2Fnuz,
];

/// Runs every flat operation.
pub fn run(r: &mut Runner<'_>) {
    let n = r.size.scale(FLAT_ELEMENTS, 4096);
    streaming(r, n);
    elementwise::<f32>(r, n);
    elementwise::<f16>(r, n);
    elementwise::<bf16>(r, n);
    casts(r, n);
    dequant_all(r, n);
}

/// A demand on vector arithmetic.
fn vector(label: String, min_bytes: u64, flops: u64, elements: usize) -> Demand {
    Demand {
        label,
        min_bytes,
        flops,
        elements: elements as u64,
        math: Math::Vector,
    }
}

fn streaming(r: &mut Runner<'_>, n: usize) {
    let bytes = n as u64 * 4;
    r.measure(Family::Streaming, |r| {
        let mut out = r.zeros::<u32>(n)?;
        r.library.fill(&r.stream, &mut out, 7u32, n)?;
        Ok(vector(format!("fill u32 n={n}"), bytes, 0, n))
    });
    r.measure(Family::Streaming, |r| {
        let src = r.device_indices(n, u32::MAX)?;
        let mut dst = r.zeros::<u32>(n)?;
        r.library.copy(&r.stream, &src, &mut dst, n)?;
        Ok(vector(format!("copy u32 n={n}"), 2 * bytes, 0, n))
    });
    r.measure(Family::Streaming, |r| {
        let x = r.device_floats::<f32>(n)?;
        let mut y = r.device_floats::<f32>(n)?;
        r.library.saxpy(&r.stream, 1.5, &x, &mut y, n)?;
        Ok(vector(
            format!("saxpy f32 n={n}"),
            3 * bytes,
            2 * n as u64,
            n,
        ))
    });
}

/// The seven elementwise operations over `T`.
fn elementwise<T: Sample>(r: &mut Runner<'_>, n: usize) {
    let s = T::SIZE * n as u64;
    let t = T::TYPE_NAME;
    let count = n as u64;
    for (name, inputs, flops) in [("add", 2, 1), ("mul", 2, 1), ("fma", 3, 2)] {
        r.measure(Family::Elementwise, |r| {
            let a = r.device_floats::<T>(n)?;
            let b = r.device_floats::<T>(n)?;
            let c = r.device_floats::<T>(n)?;
            let mut out = r.zeros::<T>(n)?;
            let lib = r.library;
            match name {
                "add" => lib.add(&r.stream, &a, &b, &mut out, n)?,
                "mul" => lib.mul(&r.stream, &a, &b, &mut out, n)?,
                _ => lib.fma(&r.stream, &a, &b, &c, &mut out, n)?,
            }
            let label = format!("{name} {t} n={n}");
            Ok(vector(label, (inputs + 1) * s, flops * count, n))
        });
    }
    // Nominal FLOPs per element: scale 1, relu 1 (a max), silu 4 (x / (1 + exp(-x))), gelu 8
    // (the tanh form).
    for (name, flops) in [("scale", 1), ("relu", 1), ("silu", 4), ("gelu", 8)] {
        r.measure(Family::Elementwise, |r| {
            let x = r.device_floats::<T>(n)?;
            let mut out = r.zeros::<T>(n)?;
            let lib = r.library;
            match name {
                "scale" => lib.scale(&r.stream, 0.5, &x, &mut out, n)?,
                "relu" => lib.relu(&r.stream, &x, &mut out, n)?,
                "silu" => lib.silu(&r.stream, &x, &mut out, n)?,
                _ => lib.gelu(&r.stream, &x, &mut out, n)?,
            }
            Ok(vector(format!("{name} {t} n={n}"), 2 * s, flops * count, n))
        });
    }
}

fn casts(r: &mut Runner<'_>, n: usize) {
    let count = n as u64;
    r.measure(Family::Cast, |r| {
        let x = r.device_floats::<f32>(n)?;
        let mut y = r.zeros::<f16>(n)?;
        r.library.cast(&r.stream, &x, &mut y, n)?;
        Ok(vector(format!("cast f32->f16 n={n}"), 6 * count, 0, n))
    });
    r.measure(Family::Cast, |r| {
        let x = r.device_floats::<f16>(n)?;
        let mut y = r.zeros::<f32>(n)?;
        r.library.cast(&r.stream, &x, &mut y, n)?;
        Ok(vector(format!("cast f16->f32 n={n}"), 6 * count, 0, n))
    });
    r.measure(Family::Cast, |r| {
        let x = r.device_floats::<f32>(n)?;
        let mut y = r.zeros::<bf16>(n)?;
        r.library.cast(&r.stream, &x, &mut y, n)?;
        Ok(vector(format!("cast f32->bf16 n={n}"), 6 * count, 0, n))
    });
    r.measure(Family::Cast, |r| {
        let x = r.device_floats::<bf16>(n)?;
        let mut y = r.zeros::<f32>(n)?;
        r.library.cast(&r.stream, &x, &mut y, n)?;
        Ok(vector(format!("cast bf16->f32 n={n}"), 6 * count, 0, n))
    });
    for format in FP8_FORMATS {
        cast_to_fp8::<f32>(r, format, n);
        cast_to_fp8::<f16>(r, format, n);
        cast_to_fp8::<bf16>(r, format, n);
    }
}

fn cast_to_fp8<T: Sample>(r: &mut Runner<'_>, format: Fp8Format, n: usize) {
    r.measure(Family::Cast, |r| {
        let x = r.device_floats::<T>(n)?;
        let mut y = r.zeros::<u8>(n)?;
        r.library.cast_to_fp8(&r.stream, &x, &mut y, format, n)?;
        let label = format!("cast_to_fp8 {}->{format:?} n={n}", T::TYPE_NAME);
        Ok(vector(label, (T::SIZE + 1) * n as u64, 0, n))
    });
}

/// A `[rows, cols]` tensor in block format `B` on the device: seeded random element codes, and
/// scale codes near 1 (E8M0 codes around 127 for the MX formats; E4M3 codes of 0.5 to 1 for
/// NVFP4, the format with a tensor scale), so every value is finite and of ordinary size.
pub fn quantized<B: DequantFormat>(
    r: &mut Runner<'_>,
    rows: usize,
    cols: usize,
) -> anyhow::Result<DeviceQuantizedTensor<B>> {
    let blocks = rows * cols / B::BLOCK_LEN;
    let elements = r.device_bytes(blocks * B::BLOCK_BYTES)?;
    let scale_codes = if B::USES_TENSOR_SCALE {
        0x30..0x39
    } else {
        120..134
    };
    let scales = r.device_bytes_in(blocks, scale_codes)?;
    Ok(DeviceQuantizedTensor::from_parts(
        rows, cols, elements, scales, 1.0,
    )?)
}

/// Bytes of a `[rows, cols]` tensor in block format `B`: packed codes and one scale byte per
/// block.
pub fn quantized_bytes<B: DequantFormat>(rows: usize, cols: usize) -> u64 {
    let blocks = (rows * cols / B::BLOCK_LEN) as u64;
    blocks * (B::BLOCK_BYTES as u64 + 1)
}

/// Rows of the dequantization tensors: `n` elements in rows of 4096 (whole blocks of every
/// format).
const DEQUANT_COLS: usize = 4096;

fn dequant_all(r: &mut Runner<'_>, n: usize) {
    let rows = (n / DEQUANT_COLS).max(1);
    dequant::<MxFp4>(r, rows);
    dequant::<MxFp6E2M3>(r, rows);
    dequant::<MxFp6E3M2>(r, rows);
    dequant::<MxFp8E4M3>(r, rows);
    dequant::<MxFp8E5M2>(r, rows);
    dequant::<MxInt8>(r, rows);
    dequant::<Nvfp4>(r, rows);
    dequant_half::<MxFp4, f16>(r, rows);
    dequant_half::<MxFp4, bf16>(r, rows);
    dequant_half::<MxFp6E2M3, f16>(r, rows);
    dequant_half::<MxFp6E2M3, bf16>(r, rows);
    dequant_half::<MxFp6E3M2, f16>(r, rows);
    dequant_half::<MxFp6E3M2, bf16>(r, rows);
    dequant_half::<MxFp8E4M3, f16>(r, rows);
    dequant_half::<MxFp8E4M3, bf16>(r, rows);
    dequant_half::<MxFp8E5M2, f16>(r, rows);
    dequant_half::<MxFp8E5M2, bf16>(r, rows);
    dequant_half::<MxInt8, f16>(r, rows);
    dequant_half::<MxInt8, bf16>(r, rows);
    dequant_half::<Nvfp4, f16>(r, rows);
    dequant_half::<Nvfp4, bf16>(r, rows);
    for format in FP8_FORMATS {
        dequant_fp8::<f32>(r, format, n);
        dequant_fp8::<f16>(r, format, n);
        dequant_fp8::<bf16>(r, format, n);
    }
}

fn dequant<B: DequantFormat>(r: &mut Runner<'_>, rows: usize) {
    let n = rows * DEQUANT_COLS;
    r.measure(Family::Dequant, |r| {
        let tensor = quantized::<B>(r, rows, DEQUANT_COLS)?;
        let mut out = r.zeros::<f32>(n)?;
        r.library.dequant(&r.stream, &tensor, &mut out)?;
        let bytes = quantized_bytes::<B>(rows, DEQUANT_COLS) + 4 * n as u64;
        Ok(vector(
            format!("dequant {}->f32 n={n}", B::NAME),
            bytes,
            n as u64,
            n,
        ))
    });
}

fn dequant_half<B: DequantHalf<T>, T: Sample>(r: &mut Runner<'_>, rows: usize) {
    let n = rows * DEQUANT_COLS;
    r.measure(Family::Dequant, |r| {
        let tensor = quantized::<B>(r, rows, DEQUANT_COLS)?;
        let mut out = r.zeros::<T>(n)?;
        r.library.dequant_half(&r.stream, &tensor, &mut out)?;
        let bytes = quantized_bytes::<B>(rows, DEQUANT_COLS) + T::SIZE * n as u64;
        let label = format!("dequant_half {}->{} n={n}", B::NAME, T::TYPE_NAME);
        Ok(vector(label, bytes, n as u64, n))
    });
}

fn dequant_fp8<T: Sample + iron::library::Fp8Dequant>(
    r: &mut Runner<'_>,
    format: Fp8Format,
    n: usize,
) {
    r.measure(Family::Dequant, |r| {
        let codes = r.device_bytes(n)?;
        let mut out = r.zeros::<T>(n)?;
        r.library
            .dequant_fp8(&r.stream, format, &codes, 0.5, &mut out, n)?;
        let label = format!("dequant_fp8 {format:?}->{} n={n}", T::TYPE_NAME);
        Ok(vector(label, (1 + T::SIZE) * n as u64, n as u64, n))
    });
}
