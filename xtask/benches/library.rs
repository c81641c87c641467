//! The kernel library on a HIP device: one kernel per family at several sizes, timed with device
//! events after criterion's warm-up, each timed launch reading a different copy of its inputs
//! (copies enough to overflow the last-level cache) so caches do not flatter the result.
//! Criterion reports the throughput; after each size this prints the achieved GB/s (or FLOP/s
//! for GEMM) and its fraction of the device's published peak (`src/report/devices.rs`).
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
    DeviceQuantizedTensor, Epilogue, GemmShape, Layout, Library, bf16, f16, quant::MxFp4,
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
}

/// The benchmark sizes: 1, 16 and 64 Mi flat elements, 4096 rows of 4 to 16 Ki elements,
/// 2 to 8 Ki transposes and 1 to 4 Ki GEMMs.
const FULL: Sizes = Sizes {
    flat: &[1 << 20, 1 << 24, 1 << 26],
    rows: &[(4096, 4096), (4096, 8192), (4096, 16384)],
    transpose: &[2048, 4096, 8192],
    gemm: &[1024, 2048, 4096],
};

/// Small sizes, odd ones among them, for a run through the HIP stand-in.
const SMALL: Sizes = Sizes {
    flat: &[4096, 5000],
    rows: &[(8, 256), (3, 4096)],
    transpose: &[64, 100],
    gemm: &[128],
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
            .map_err(|e| println!("gemm_bf16_bf16: not run on this device: {e}"))
            .is_ok();
        drop(probe);
        if !supported {
            return;
        }
        time(
            c,
            b,
            "gemm_bf16_bf16",
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
    rows(c, &b);
    quantized(c, &b);
    gemm(c, &b);
}

criterion_group!(benches, library);
criterion_main!(benches);
