//! Host quantize/dequantize throughput of the MX codecs, in bytes of f32 data per second.
//!
//! Run with `cargo bench -p iron-quant --bench codecs -- --warm-up-time 1 --measurement-time 3`.
//! `benches/ml_dtypes_compare.py` times ml_dtypes' element conversions on the same sizes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iron_quant::host::QuantizedTensor;
use iron_quant::{BlockFormat, MxFp4, MxFp6E2M3, MxFp8E4M3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// Tensor shape: 4 Mi f32 values (16 MiB), larger than the caches.
const ROWS: usize = 4096;
const COLS: usize = 1024;

fn bench_format<B: BlockFormat>(c: &mut Criterion, data: &[f32]) {
    let mut group = c.benchmark_group(B::NAME);
    group.throughput(Throughput::Bytes((data.len() * 4) as u64));
    group.bench_function(BenchmarkId::new("quantize", "4Mi"), |b| {
        b.iter(|| QuantizedTensor::<B>::quantize(black_box(data), ROWS, COLS).unwrap())
    });
    let tensor = QuantizedTensor::<B>::quantize(data, ROWS, COLS).unwrap();
    let mut out = vec![0.0f32; data.len()];
    group.bench_function(BenchmarkId::new("dequantize", "4Mi"), |b| {
        b.iter(|| black_box(&tensor).dequantize_into(&mut out).unwrap())
    });
    group.finish();
}

fn codecs(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let data: Vec<f32> = (0..ROWS * COLS)
        .map(|_| rng.random::<f32>() * 8.0 - 4.0)
        .collect();
    bench_format::<MxFp4>(c, &data);
    bench_format::<MxFp8E4M3>(c, &data);
    bench_format::<MxFp6E2M3>(c, &data);
}

criterion_group!(benches, codecs);
criterion_main!(benches);
