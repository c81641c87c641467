//! The kernel library on a HIP device: one kernel per family at several sizes, timed with device
//! events after criterion's warm-up, each timed launch reading a different copy of its inputs
//! (copies enough to overflow the last-level cache) so caches do not flatter the result; the
//! embedding gather instead reads scattered rows of one table larger than those caches.
//! Criterion reports the throughput; after each size this prints the achieved GB/s (or FLOP/s
//! for GEMM, prefill attention and convolution) and its fraction of the device's published peak
//! (`src/report/devices.rs`).
//!
//! Without a HIP device it says so and measures nothing (`cargo xtask bench` then runs the
//! host-side benchmarks). `IRON_ARTIFACTS` names the build to load, as for the tests.
//!
//! With `IRON_BENCH_SIZES=small` every benchmark runs at a few small sizes instead: how
//! `cargo xtask test` runs this file once through the HIP stand-in (criterion's test mode, one
//! launch per benchmark), so the event timing and launch code runs in CI without a GPU.

#[path = "../src/report/devices.rs"]
#[allow(
    dead_code,
    reason = "the report's device table, shared whole; this uses part of it"
)]
mod devices;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use devices::{Device as Peaks, Math};
use iron::library::{
    AttentionKernel, AttentionOptions, AttentionShape, Conv2dPath, Conv2dShape, ConvLayout,
    DeviceQuantizedTensor, Epilogue, Filter, GemmShape, Layout, Library, RopeShape, RopeStyle,
    bf16, f16, quant::MxFp4,
};
use iron::{Device, DeviceBuffer, Stream};
use std::cell::{Cell, RefCell};
use std::time::Duration;

/// Bytes of input copies a benchmark rotates through: more than any listed device's last-level
/// cache (MI300X's 256 MiB Infinity Cache).
const ROTATION_BYTES: usize = 512 << 20;
/// Most copies of the inputs a benchmark keeps.
const MAX_COPIES: usize = 16;

/// The device, the library on it, and the published peaks when the device is a listed product.
struct Bench {
    device: Device,
    library: Library,
    stream: Stream,
    peaks: Option<&'static Peaks>,
}

/// The listed product whose name the device's name contains (`AMD Instinct MI300X` is MI300X).
fn peaks_of(name: &str) -> Option<&'static Peaks> {
    let squash = |s: &str| s.replace(' ', "").to_lowercase();
    let name = squash(name);
    devices::DEVICES
        .iter()
        .filter(|d| name.contains(&squash(d.name)))
        .max_by_key(|d| d.name.len())
}

/// The first HIP device with the library loaded, or why there is none.
fn open() -> Result<Bench, String> {
    let device = match Device::hip_devices() {
        Ok(devices) => devices
            .into_iter()
            .next()
            .ok_or("the HIP runtime reports no device")?,
        Err(e) => return Err(e.to_string()),
    };
    let library = Library::load_built(&device).map_err(|e| e.to_string())?;
    let name = device.properties().name.clone();
    Ok(Bench {
        stream: device.default_stream(),
        peaks: peaks_of(&name),
        device,
        library,
    })
}

/// How many copies of `bytes` of inputs to rotate through.
fn copies(bytes: usize) -> usize {
    ROTATION_BYTES.div_ceil(bytes.max(1)).clamp(2, MAX_COPIES)
}

/// Copies of `n` elements of `value`, enough to rotate through.
fn rotated<T: bytemuck::Pod>(device: &Device, n: usize, value: T) -> Vec<DeviceBuffer<T>> {
    let host = vec![value; n];
    (0..copies(n * size_of::<T>()))
        .map(|_| DeviceBuffer::from_slice(device, &host).expect("device allocation"))
        .collect()
}

/// What a benchmark moves or computes per launch, for criterion and the peak fraction.
#[derive(Clone, Copy)]
enum Work {
    /// Bytes the algorithm must move.
    Bytes(u64),
    /// FLOPs of the given kind.
    Flops(u64, Math),
}

/// Times `launch(i)` (`i` picks the input copy) with events around a batch of launches; prints
/// the best rate criterion's samples reached and its fraction of the device's peak.
fn time(c: &mut Criterion, b: &Bench, group: &str, size: &str, work: Work, launch: &dyn Fn(usize)) {
    let best = Cell::new(Duration::MAX);
    let mut g = c.benchmark_group(group);
    g.throughput(match work {
        Work::Bytes(n) => Throughput::Bytes(n),
        Work::Flops(n, _) => Throughput::Elements(n),
    });
    g.bench_function(BenchmarkId::from_parameter(size), |bencher| {
        bencher.iter_custom(|iters| {
            let start = b.stream.record_event().expect("event");
            for i in 0..iters {
                launch(i as usize);
            }
            let end = b.stream.record_event().expect("event");
            let total = end.elapsed_since(&start).expect("event timing");
            best.set(best.get().min(total / iters.max(1) as u32));
            total
        });
    });
    g.finish();
    let seconds = best.get().as_secs_f64();
    let (rate, unit, peak) = match work {
        Work::Bytes(n) => (n as f64 / seconds, "B/s", b.peaks.map(|p| p.bandwidth)),
        Work::Flops(n, math) => (
            n as f64 / seconds,
            "FLOP/s",
            b.peaks.map(|p| p.peak_flops(math)),
        ),
    };
    let fraction = match (peak, b.peaks) {
        (Some(peak), Some(p)) => format!("{:.1}% of {}'s peak", 100.0 * rate / peak, p.name),
        _ => "no published peak for this device".to_string(),
    };
    println!("{group}/{size}: {:.1} G{unit} ({fraction})", rate / 1e9);
}

/// The sizes the benchmarks run at.
struct Sizes {
    /// Elements of the flat operations.
    flat: &'static [usize],
    /// `(rows, cols)` of the row operations and the quantized ones.
    rows: &'static [(usize, usize)],
    /// Sides of the square transposes.
    transpose: &'static [usize],
    /// `m = n = k` of the GEMMs.
    gemm: &'static [usize],
    /// Tokens of the embedding gather and the rotary embedding (4096 wide, 32 heads of 128).
    tokens: &'static [usize],
    /// Rows of the embedding table.
    vocab: usize,
    /// Key/value rows per head of attention (32 query and 8 key/value heads of 128): prefill
    /// with as many query rows, and one-token decode.
    seq: &'static [usize],
    /// Height = width of the 3x3 convolutions' images (64 to 64 channels, NHWC).
    image: &'static [usize],
}

/// The benchmark sizes: 1, 16 and 64 Mi flat elements, 4096 rows of 4 to 16 Ki elements,
/// 2 to 8 Ki transposes and 1 to 4 Ki GEMMs.
const FULL: Sizes = Sizes {
    flat: &[1 << 20, 1 << 24, 1 << 26],
    rows: &[(4096, 4096), (4096, 8192), (4096, 16384)],
    transpose: &[2048, 4096, 8192],
    gemm: &[1024, 2048, 4096],
    tokens: &[512, 4096],
    vocab: 32000,
    seq: &[1024, 4096],
    image: &[56, 112],
};

/// Small sizes, odd ones among them, for a run through the HIP stand-in.
const SMALL: Sizes = Sizes {
    flat: &[4096, 5000],
    rows: &[(8, 256), (3, 4096)],
    transpose: &[64, 100],
    gemm: &[128],
    tokens: &[3],
    vocab: 50,
    seq: &[40],
    image: &[6],
};

/// [`SMALL`] when `IRON_BENCH_SIZES` is `small`, else [`FULL`].
fn sizes() -> &'static Sizes {
    match std::env::var("IRON_BENCH_SIZES").as_deref() {
        Ok("small") => &SMALL,
        _ => &FULL,
    }
}

fn streaming(c: &mut Criterion, b: &Bench) {
    for &n in sizes().flat {
        let src = rotated(&b.device, n, 1u32);
        let dst = RefCell::new(DeviceBuffer::<u32>::alloc(&b.device, n).expect("allocation"));
        time(
            c,
            b,
            "copy_u32",
            &n.to_string(),
            Work::Bytes(8 * n as u64),
            &|i| {
                let src = &src[i % src.len()];
                b.library
                    .copy(&b.stream, src, &mut dst.borrow_mut(), n)
                    .expect("copy");
            },
        );
    }
    for &n in sizes().flat {
        let x = rotated(&b.device, n, bf16::ONE);
        let y = rotated(&b.device, n, bf16::ONE);
        let out = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, n).unwrap());
        time(
            c,
            b,
            "add_bf16",
            &n.to_string(),
            Work::Bytes(6 * n as u64),
            &|i| {
                let (x, y) = (&x[i % x.len()], &y[i % y.len()]);
                b.library
                    .add(&b.stream, x, y, &mut out.borrow_mut(), n)
                    .expect("add");
            },
        );
    }
}

fn rows(c: &mut Criterion, b: &Bench) {
    for &(rows, cols) in sizes().rows {
        let n = rows * cols;
        let x = rotated(&b.device, n, bf16::ONE);
        let weight = DeviceBuffer::from_slice(&b.device, &vec![bf16::ONE; cols]).unwrap();
        let y = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, n).unwrap());
        let bytes = 4 * n as u64 + 2 * cols as u64;
        time(
            c,
            b,
            "rmsnorm_bf16",
            &format!("{rows}x{cols}"),
            Work::Bytes(bytes),
            &|i| {
                let x = &x[i % x.len()];
                b.library
                    .rmsnorm(&b.stream, x, &weight, 1e-6, &mut y.borrow_mut(), rows, cols)
                    .expect("rmsnorm");
            },
        );
        let x = rotated(&b.device, n, f16::ONE);
        let y = RefCell::new(DeviceBuffer::<f16>::alloc(&b.device, n).unwrap());
        time(
            c,
            b,
            "softmax_f16",
            &format!("{rows}x{cols}"),
            Work::Bytes(4 * n as u64),
            &|i| {
                let x = &x[i % x.len()];
                b.library
                    .softmax(&b.stream, x, &mut y.borrow_mut(), rows, cols)
                    .expect("softmax");
            },
        );
    }
    for &side in sizes().transpose {
        let n = side * side;
        let src = rotated(&b.device, n, 1u16);
        let dst = RefCell::new(DeviceBuffer::<u16>::alloc(&b.device, n).unwrap());
        time(
            c,
            b,
            "transpose_b16",
            &format!("{side}x{side}"),
            Work::Bytes(4 * n as u64),
            &|i| {
                let src = &src[i % src.len()];
                b.library
                    .transpose(&b.stream, src, &mut dst.borrow_mut(), side, side)
                    .expect("transpose");
            },
        );
    }
}

/// MXFP4 tensors of `rows x cols`, enough copies to rotate through (codes 0x22: 1.0 pairs,
/// scale 127: 1).
fn mxfp4(b: &Bench, rows: usize, cols: usize) -> Vec<DeviceQuantizedTensor<MxFp4>> {
    let blocks = rows * cols / 32;
    (0..copies(blocks * 17))
        .map(|_| {
            let codes = DeviceBuffer::from_slice(&b.device, &vec![0x22u8; blocks * 16]).unwrap();
            let scales = DeviceBuffer::from_slice(&b.device, &vec![127u8; blocks]).unwrap();
            DeviceQuantizedTensor::from_parts(rows, cols, codes, scales, 1.0).unwrap()
        })
        .collect()
}

fn quantized(c: &mut Criterion, b: &Bench) {
    for &(rows, cols) in sizes().rows {
        let w = mxfp4(b, rows, cols);
        let out = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, rows * cols).unwrap());
        let bytes = (rows * cols) as u64 * 17 / 32 + 2 * (rows * cols) as u64;
        time(
            c,
            b,
            "dequant_mxfp4_bf16",
            &format!("{rows}x{cols}"),
            Work::Bytes(bytes),
            &|i| {
                b.library
                    .dequant_half(&b.stream, &w[i % w.len()], &mut out.borrow_mut())
                    .expect("dequant_half");
            },
        );
        let x = DeviceBuffer::from_slice(&b.device, &vec![bf16::ONE; cols]).unwrap();
        let y = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, rows).unwrap());
        let bytes = (rows * cols) as u64 * 17 / 32 + 2 * (rows + cols) as u64;
        time(
            c,
            b,
            "qgemv_mxfp4_bf16_bf16",
            &format!("{rows}x{cols}"),
            Work::Bytes(bytes),
            &|i| {
                b.library
                    .qgemv(&b.stream, &w[i % w.len()], &x, &mut y.borrow_mut(), 1)
                    .expect("qgemv");
            },
        );
    }
}

fn gemm(c: &mut Criterion, b: &Bench) {
    for &side in sizes().gemm {
        let n = side * side;
        let a = rotated(&b.device, n, bf16::ONE);
        let bm = rotated(&b.device, n, bf16::ONE);
        let out = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, n).unwrap());
        let shape = GemmShape {
            m: side,
            n: side,
            k: side,
        };
        let flops = 2 * (side as u64).pow(3);
        let mut probe = out.borrow_mut();
        let supported = b
            .library
            .gemm(
                &b.stream,
                (&a[0], Layout::RowMajor),
                (&bm[0], Layout::RowMajor),
                &mut probe,
                shape,
                Epilogue::default(),
            )
            .map_err(|e| println!("gemm_bf16_bf16_rr: not run on this device: {e}"))
            .is_ok();
        drop(probe);
        if !supported {
            return;
        }
        time(
            c,
            b,
            "gemm_bf16_bf16_rr",
            &format!("{side}^3"),
            Work::Flops(flops, Math::Matrix16),
            &|i| {
                let (a, bm) = (&a[i % a.len()], &bm[i % bm.len()]);
                b.library
                    .gemm(
                        &b.stream,
                        (a, Layout::RowMajor),
                        (bm, Layout::RowMajor),
                        &mut out.borrow_mut(),
                        shape,
                        Epilogue::default(),
                    )
                    .expect("gemm");
            },
        );
    }
}

/// Elements per token of the embeddings (32 heads of 128).
const MODEL_DIM: usize = 4096;
/// Heads of the rotary embedding and of the attention queries.
const HEADS: usize = 32;
/// Key/value heads of attention (grouped-query, 4 query heads per key/value head).
const KV_HEADS: usize = 8;
/// Elements per head.
const HEAD_DIM: usize = 128;

fn casts_and_sums(c: &mut Criterion, b: &Bench) {
    for &n in sizes().flat {
        let x = rotated(&b.device, n, 1.0f32);
        let y = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, n).unwrap());
        time(
            c,
            b,
            "cast_f32_bf16",
            &n.to_string(),
            Work::Bytes(6 * n as u64),
            &|i| {
                b.library
                    .cast(&b.stream, &x[i % x.len()], &mut y.borrow_mut(), n)
                    .expect("cast");
            },
        );
        let total = RefCell::new(DeviceBuffer::<f32>::alloc(&b.device, 1).unwrap());
        time(
            c,
            b,
            "sum_f32",
            &n.to_string(),
            Work::Bytes(4 * n as u64),
            &|i| {
                b.library
                    .sum(&b.stream, &x[i % x.len()], &mut total.borrow_mut(), n)
                    .expect("sum");
            },
        );
    }
    for &(rows, cols) in sizes().rows {
        let n = rows * cols;
        let x = rotated(&b.device, n, f16::ONE);
        let out = RefCell::new(DeviceBuffer::<f32>::alloc(&b.device, rows).unwrap());
        let bytes = 2 * n as u64 + 4 * rows as u64;
        time(
            c,
            b,
            "row_sum_f16",
            &format!("{rows}x{cols}"),
            Work::Bytes(bytes),
            &|i| {
                b.library
                    .row_sum(
                        &b.stream,
                        &x[i % x.len()],
                        &mut out.borrow_mut(),
                        rows,
                        cols,
                    )
                    .expect("row_sum");
            },
        );
        let weight = DeviceBuffer::from_slice(&b.device, &vec![f16::ONE; cols]).unwrap();
        let bias = DeviceBuffer::from_slice(&b.device, &vec![f16::ZERO; cols]).unwrap();
        let y = RefCell::new(DeviceBuffer::<f16>::alloc(&b.device, n).unwrap());
        let bytes = 4 * n as u64 + 4 * cols as u64;
        time(
            c,
            b,
            "layernorm_f16",
            &format!("{rows}x{cols}"),
            Work::Bytes(bytes),
            &|i| {
                b.library
                    .layernorm(
                        &b.stream,
                        &x[i % x.len()],
                        &weight,
                        &bias,
                        1e-5,
                        &mut y.borrow_mut(),
                        rows,
                        cols,
                    )
                    .expect("layernorm");
            },
        );
    }
}

fn embeddings(c: &mut Criterion, b: &Bench) {
    let vocab = sizes().vocab;
    let table = DeviceBuffer::from_slice(&b.device, &vec![bf16::ONE; vocab * MODEL_DIM]).unwrap();
    for &tokens in sizes().tokens {
        let ids: Vec<u32> = (0..tokens).map(|t| (t * 7919 % vocab) as u32).collect();
        let indices = DeviceBuffer::from_slice(&b.device, &ids).unwrap();
        let out = RefCell::new(DeviceBuffer::<bf16>::alloc(&b.device, tokens * MODEL_DIM).unwrap());
        let bytes = 4 * (tokens * MODEL_DIM) as u64 + 4 * tokens as u64;
        time(
            c,
            b,
            "gather_bf16",
            &tokens.to_string(),
            Work::Bytes(bytes),
            &|_| {
                b.library
                    .gather(
                        &b.stream,
                        &table,
                        (vocab, MODEL_DIM),
                        &indices,
                        &mut out.borrow_mut(),
                        tokens,
                    )
                    .expect("gather");
            },
        );
        let shape = RopeShape {
            tokens,
            heads: HEADS,
            head_dim: HEAD_DIM,
            rotary_dim: HEAD_DIM,
        };
        let x = rotated(&b.device, tokens * MODEL_DIM, bf16::ONE);
        let positions: Vec<u32> = (0..tokens as u32).collect();
        let positions = DeviceBuffer::from_slice(&b.device, &positions).unwrap();
        let x: Vec<RefCell<DeviceBuffer<bf16>>> = x.into_iter().map(RefCell::new).collect();
        let bytes = 4 * (tokens * MODEL_DIM) as u64 + 4 * tokens as u64;
        time(
            c,
            b,
            "rope_bf16",
            &tokens.to_string(),
            Work::Bytes(bytes),
            &|i| {
                b.library
                    .rope(
                        &b.stream,
                        &mut x[i % x.len()].borrow_mut(),
                        &positions,
                        shape,
                        10000.0,
                        RopeStyle::NeoX,
                    )
                    .expect("rope");
            },
        );
    }
}

/// Prefill (causal, as many query rows as keys) and one-token decode, f16.
fn attention(c: &mut Criterion, b: &Bench) {
    for &seq in sizes().seq {
        for (label, seq_q, causal) in [("prefill", seq, true), ("decode", 1, false)] {
            let shape = AttentionShape {
                batch: 1,
                heads_q: HEADS,
                heads_kv: KV_HEADS,
                seq_q,
                seq_kv: seq,
                head_dim: HEAD_DIM,
            };
            let options = AttentionOptions {
                causal,
                kernel: AttentionKernel::Auto,
                ..AttentionOptions::default()
            };
            let q = rotated(&b.device, HEADS * seq_q * HEAD_DIM, f16::ONE);
            let kv_len = KV_HEADS * seq * HEAD_DIM;
            let k = rotated(&b.device, kv_len, f16::ONE);
            let v = rotated(&b.device, kv_len, f16::ONE);
            let o = RefCell::new(DeviceBuffer::<f16>::alloc(&b.device, q[0].len()).unwrap());
            let pairs = (HEADS * seq_q * seq) as u64 / if causal { 2 } else { 1 };
            let work = if causal {
                Work::Flops(4 * pairs * HEAD_DIM as u64, Math::Matrix16)
            } else {
                Work::Bytes(2 * (2 * kv_len + 2 * q[0].len()) as u64)
            };
            time(
                c,
                b,
                &format!("attention_{label}_f16"),
                &seq.to_string(),
                work,
                &|i| {
                    b.library
                        .attention(
                            &b.stream,
                            &q[i % q.len()],
                            &k[i % k.len()],
                            &v[i % v.len()],
                            &mut o.borrow_mut(),
                            &shape,
                            &options,
                        )
                        .expect("attention");
                },
            );
        }
    }
}

/// 3x3 convolutions, 64 to 64 channels, NHWC f16, padded to keep the image size.
fn convolutions(c: &mut Criterion, b: &Bench) {
    for &side in sizes().image {
        let shape =
            Conv2dShape::new(ConvLayout::Nhwc, 1, [side, side], 64, 64, [3, 3]).with_padding(1);
        let path = b.library.conv2d_path::<f16>(&shape).expect("conv2d shape");
        let (input, output) = (shape.input_len().unwrap(), shape.output_len().unwrap());
        let x = rotated(&b.device, input, f16::ONE);
        let weight =
            DeviceBuffer::from_slice(&b.device, &vec![f16::ONE; shape.weight_len().unwrap()])
                .unwrap();
        let y = RefCell::new(DeviceBuffer::<f16>::alloc(&b.device, output).unwrap());
        let flops = 2 * (output * 64 * 9) as u64;
        let math = match path {
            Conv2dPath::ImplicitGemm => Math::Matrix16,
            Conv2dPath::Direct => Math::Vector,
        };
        time(
            c,
            b,
            "conv2d_3x3_f16",
            &format!("{side}x{side}"),
            Work::Flops(flops, math),
            &|i| {
                b.library
                    .conv2d(
                        &b.stream,
                        &x[i % x.len()],
                        Filter::new(&weight),
                        &mut y.borrow_mut(),
                        &shape,
                    )
                    .expect("conv2d");
            },
        );
    }
}

fn library(c: &mut Criterion) {
    let b = match open() {
        Ok(b) => b,
        Err(reason) => {
            println!("no HIP device ({reason}): the library benchmarks need one; nothing measured");
            return;
        }
    };
    println!(
        "benchmarking {} ({})",
        b.device.properties().name,
        b.peaks.map_or("no published peaks", |p| p.source)
    );
    streaming(c, &b);
    casts_and_sums(c, &b);
    rows(c, &b);
    embeddings(c, &b);
    quantized(c, &b);
    gemm(c, &b);
    attention(c, &b);
    convolutions(c, &b);
}

criterion_group!(benches, library);
criterion_main!(benches);
