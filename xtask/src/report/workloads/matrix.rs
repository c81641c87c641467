//! The matrix operations: every GEMM kernel of the gfx and every quantized GEMV.

use super::flat::{FP8_FORMATS, quantized, quantized_bytes};
use super::{Demand, Family, Math, Runner, Sample};
use iron::library::quant::{MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4};
use iron::library::{
    Epilogue, Fp8Format, Fp8Gemv, Fp8Matrix, GemmInput, GemmOutput, GemmPath, GemmShape, GemmTile,
    Layout, MxGemmFormat, Qgemv, bf16, f16,
};

/// `m = n = k` of the GEMMs: two 128-wide workgroup tiles in M and N, several K steps.
const GEMM_SIDE: usize = 256;
/// Rows of the GEMV weights.
const GEMV_ROWS: usize = 256;
/// Columns of the GEMV weights (the input length).
const GEMV_COLS: usize = 4096;

/// Runs every matrix operation.
pub fn run(r: &mut Runner<'_>) {
    let side = r.size.scale(GEMM_SIDE, 128);
    let shape = GemmShape {
        m: side,
        n: side,
        k: side,
    };
    per_output::<f32>(r, shape);
    per_output::<f16>(r, shape);
    per_output::<bf16>(r, shape);
    gemvs(r);
}

/// Every GEMM writing `O`: both 16-bit inputs, the FP8 encodings the gfx multiplies natively
/// (in blocks of 128 and of 64), every MX format on the gfx's own path, and MXFP4 on the
/// decoding path.
fn per_output<O: GemmOutput + Sample>(r: &mut Runner<'_>, shape: GemmShape) {
    gemm16::<f16, O>(r, shape);
    gemm16::<bf16, O>(r, shape);
    for format in FP8_FORMATS {
        if r.library.fp8_gemm_path(format, format).ok() == Some(GemmPath::Fp8Hardware) {
            for tile in [GemmTile::Block128, GemmTile::Block64] {
                gemm_fp8::<O>(r, format, shape, tile);
            }
        }
    }
    gemm_mx::<MxFp8E4M3, O>(r, shape, false);
    gemm_mx::<MxFp8E5M2, O>(r, shape, false);
    gemm_mx::<MxFp6E2M3, O>(r, shape, false);
    gemm_mx::<MxFp6E3M2, O>(r, shape, false);
    gemm_mx::<MxFp4, O>(r, shape, false);
    gemm_mx::<MxFp4, O>(r, shape, true);
}

/// The demand of an `m x n x k` product reading `a_bytes` and `b_bytes` and writing `O`.
fn gemm_demand<O: Sample>(label: String, shape: GemmShape, operands: u64, math: Math) -> Demand {
    let GemmShape { m, n, k } = shape;
    Demand {
        label,
        min_bytes: operands + O::SIZE * (m * n) as u64,
        flops: 2 * (m * n * k) as u64,
        elements: (m * n) as u64,
        math,
    }
}

fn shape_label(s: GemmShape) -> String {
    format!("{}x{}x{}", s.m, s.n, s.k)
}

/// The layout pairs of the 16-bit GEMM, each its own kernel, with the letters of its name
/// (`r` row-major, `c` column-major; A's first).
const LAYOUT_PAIRS: [(Layout, Layout, &str); 4] = [
    (Layout::RowMajor, Layout::RowMajor, "rr"),
    (Layout::RowMajor, Layout::ColMajor, "rc"),
    (Layout::ColMajor, Layout::RowMajor, "cr"),
    (Layout::ColMajor, Layout::ColMajor, "cc"),
];

/// The 16-bit GEMM of `T` into `O` in every layout pair, in blocks of 128 and of 64 (each its
/// own kernel).
fn gemm16<T: GemmInput + Sample, O: GemmOutput + Sample>(r: &mut Runner<'_>, shape: GemmShape) {
    for tile in [GemmTile::Block128, GemmTile::Block64] {
        for (a_layout, b_layout, letters) in LAYOUT_PAIRS {
            gemm16_in::<T, O>(r, shape, (a_layout, b_layout), letters, tile);
        }
    }
}

/// The 16-bit GEMM of `T` into `O` with A and B in `layouts` in blocks of `tile`, labelled with
/// the pair's letters.
fn gemm16_in<T: GemmInput + Sample, O: GemmOutput + Sample>(
    r: &mut Runner<'_>,
    shape: GemmShape,
    (a_layout, b_layout): (Layout, Layout),
    letters: &str,
    tile: GemmTile,
) {
    let GemmShape { m, n, k } = shape;
    r.measure(Family::Gemm, |r| {
        let a = r.device_floats::<T>(m * k)?;
        let b = r.device_floats::<T>(k * n)?;
        let mut c = r.zeros::<O>(m * n)?;
        r.library.gemm(
            &r.stream,
            (&a, a_layout),
            (&b, b_layout),
            &mut c,
            shape,
            Epilogue {
                tile,
                ..Epilogue::default()
            },
        )?;
        let label = format!(
            "gemm {}->{} {} {letters}",
            T::TYPE_NAME,
            O::TYPE_NAME,
            shape_label(shape)
        );
        let operands = T::SIZE * (m * k + k * n) as u64;
        Ok(gemm_demand::<O>(label, shape, operands, Math::Matrix16))
    });
}

/// The FP8 GEMM of `format` codes into `O` in blocks of `tile`.
fn gemm_fp8<O: GemmOutput + Sample>(
    r: &mut Runner<'_>,
    format: Fp8Format,
    shape: GemmShape,
    tile: GemmTile,
) {
    let GemmShape { m, n, k } = shape;
    r.measure(Family::Gemm, |r| {
        let a = r.device_bytes(m * k)?;
        let b = r.device_bytes(n * k)?;
        let mut c = r.zeros::<O>(m * n)?;
        let matrix = |codes| Fp8Matrix {
            codes,
            format,
            scale: 0.25,
        };
        r.library.gemm_fp8(
            &r.stream,
            matrix(&a),
            matrix(&b),
            &mut c,
            shape,
            Epilogue {
                tile,
                ..Epilogue::default()
            },
        )?;
        let label = format!(
            "gemm_fp8 {format:?}->{} {}",
            O::TYPE_NAME,
            shape_label(shape)
        );
        Ok(gemm_demand::<O>(
            label,
            shape,
            (m * k + k * n) as u64,
            Math::Matrix8,
        ))
    });
}

/// An MX GEMM on the gfx's path for `F`, or on the decoding path when `decoded`.
fn gemm_mx<F: MxGemmFormat, O: GemmOutput + Sample>(
    r: &mut Runner<'_>,
    shape: GemmShape,
    decoded: bool,
) {
    let GemmShape { m, n, k } = shape;
    let hardware = !decoded && r.library.mx_gemm_path::<F, F>().ok() == Some(GemmPath::MxHardware);
    if !hardware && !decoded {
        return;
    }
    r.measure(Family::Gemm, |r| {
        let a = quantized::<F>(r, m, k)?;
        let b = quantized::<F>(r, n, k)?;
        let mut c = r.zeros::<O>(m * n)?;
        let math = if decoded {
            r.library
                .gemm_mx_decoded(&r.stream, &a, &b, &mut c, Epilogue::default())?;
            Math::Matrix16
        } else {
            r.library
                .gemm_mx(&r.stream, &a, &b, &mut c, Epilogue::default())?;
            if F::BLOCK_BYTES * 8 / F::BLOCK_LEN == 8 {
                Math::Matrix8
            } else {
                Math::MatrixFp4
            }
        };
        let path = if decoded {
            "gemm_mx_decoded"
        } else {
            "gemm_mx"
        };
        let label = format!(
            "{path} {}->{} {}",
            F::NAME,
            O::TYPE_NAME,
            shape_label(shape)
        );
        let operands = quantized_bytes::<F>(m, k) + quantized_bytes::<F>(n, k);
        Ok(gemm_demand::<O>(label, shape, operands, math))
    });
}

/// Every quantized GEMV kernel, at batch 1.
fn gemvs(r: &mut Runner<'_>) {
    let m = r.size.scale(GEMV_ROWS, 32);
    macro_rules! each_x {
        ($($format:ty),*) => {$(
            qgemv::<$format, f32, f32>(r, m);
            qgemv::<$format, f16, f32>(r, m);
            qgemv::<$format, bf16, f32>(r, m);
        )*};
    }
    each_x!(
        MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4
    );
    qgemv::<MxFp4, f16, f16>(r, m);
    qgemv::<MxFp4, bf16, bf16>(r, m);
    for format in FP8_FORMATS {
        qgemv_fp8::<f32, f32>(r, format, m);
        qgemv_fp8::<f16, f32>(r, format, m);
        qgemv_fp8::<bf16, f32>(r, format, m);
    }
    for format in [Fp8Format::E4M3Fn, Fp8Format::E5M2] {
        qgemv_fp8::<f16, f16>(r, format, m);
        qgemv_fp8::<bf16, bf16>(r, format, m);
    }
}

/// The demand of `y = W x` for `m x k` weights of `weight_bytes`, batch 1.
fn gemv_demand<X: Sample, Y: Sample>(label: String, m: usize, weight_bytes: u64) -> Demand {
    let k = GEMV_COLS;
    Demand {
        label,
        min_bytes: weight_bytes + X::SIZE * k as u64 + Y::SIZE * m as u64,
        flops: 2 * (m * k) as u64,
        elements: (m * k) as u64,
        math: Math::Vector,
    }
}

fn qgemv<B: Qgemv<X, Y>, X: Sample, Y: Sample>(r: &mut Runner<'_>, m: usize) {
    let k = GEMV_COLS;
    r.measure(Family::Qgemv, |r| {
        let w = quantized::<B>(r, m, k)?;
        let x = r.device_floats::<X>(k)?;
        let mut y = r.zeros::<Y>(m)?;
        r.library.qgemv(&r.stream, &w, &x, &mut y, 1)?;
        let label = format!(
            "qgemv {} {}->{} {m}x{k}",
            B::NAME,
            X::TYPE_NAME,
            Y::TYPE_NAME
        );
        Ok(gemv_demand::<X, Y>(label, m, quantized_bytes::<B>(m, k)))
    });
}

fn qgemv_fp8<X: Fp8Gemv<Y> + Sample, Y: Sample>(r: &mut Runner<'_>, format: Fp8Format, m: usize) {
    let k = GEMV_COLS;
    r.measure(Family::Qgemv, |r| {
        let w = r.device_bytes(m * k)?;
        let scales = r.device_floats::<f32>(m)?;
        let x = r.device_floats::<X>(k)?;
        let mut y = r.zeros::<Y>(m)?;
        r.library
            .qgemv_fp8(&r.stream, format, &w, &scales, (m, k), &x, &mut y, 1)?;
        let label = format!(
            "qgemv_fp8 {format:?} {}->{} {m}x{k}",
            X::TYPE_NAME,
            Y::TYPE_NAME
        );
        let weights = (m * k) as u64 + 4 * m as u64;
        Ok(gemv_demand::<X, Y>(label, m, weights))
    });
}
