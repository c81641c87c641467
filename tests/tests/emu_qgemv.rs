//! The quantized GEMV kernels (`qgemv_<format>_<x>_<y>`) on the emulator for every emulated gfx,
//! against the oracle's f64 products of the decoded weights: every weight format with x in f32,
//! f16 and bf16 to f32, and the f16/bf16 outputs; seeded random codes (finite ones, so that rows
//! stay comparable) and scales, shapes with one and several K chunks (and a partial last one),
//! batches 1 to 8, workgroups of one and four waves and grids small enough to loop over rows. A
//! NaN block scale must poison exactly its row, and the weights must be read once per batch
//! group.

use iron::library::Float;
use iron::{DeviceBuffer, LaunchConfig};
use iron_intrinsics::launch::KernelDecl;
use iron_kernels::dtype::{bf16, f16};
use iron_kernels::qgemv as q;
use iron_tests::devices::{TestDevice, emulated_devices};
use iron_tests::oracle::Format;
use iron_tests::oracle::dequant::{BlockFormat, block_values};
use iron_tests::oracle::qgemv::qgemv as reference;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An MX-format GEMV kernel.
type MxFn<X, Y> = fn(*const u8, *const u8, *const X, *mut Y, u32, u32, u32);
/// The NVFP4 GEMV kernel.
type Nvfp4Fn<X, Y> = fn(*const u8, *const u8, f32, *const X, *mut Y, u32, u32, u32);
/// A plain FP8 GEMV kernel.
type Fp8Fn<X, Y> = fn(*const u8, *const f32, *const X, *mut Y, u32, u32, u32);

/// An element type of `x` or `y`: its format and conversions.
trait Elem: Float {
    const FORMAT: Format;
    fn from_f64(v: f64) -> Self;
    fn bits(self) -> u32;
}

impl Elem for f32 {
    const FORMAT: Format = Format::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl Elem for f16 {
    const FORMAT: Format = Format::F16;
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
}

impl Elem for bf16 {
    const FORMAT: Format = Format::Bf16;
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
}

/// (m, k, batch) cases for blocks of 32: one unit row, several K chunks with a partial last one,
/// full batches, more rows than a grid covers at once.
const SHAPES: [(usize, usize, usize); 6] = [
    (1, 32, 1),
    (7, 64, 3),
    (33, 1024, 8),
    (5, 2080, 2),
    (70, 96, 5),
    (9, 4096, 1),
];

/// (workgroup size, grid) launch shapes for `m` rows: one wave per workgroup with one workgroup
/// per row, and four waves per workgroup with a grid of 2 (rows loop).
fn configs(m: usize, batch: usize) -> [LaunchConfig; 2] {
    let lds = 4096 * batch.min(8) as u32;
    [
        LaunchConfig::new([m as u32, 1, 1], [64, 1, 1]).with_dynamic_lds(lds),
        LaunchConfig::new([2, 1, 1], [256, 1, 1]).with_dynamic_lds(lds),
    ]
}

/// A random code of `format` that is finite (no NaN or infinity codes).
fn finite_code(rng: &mut StdRng, format: BlockFormat) -> u8 {
    loop {
        let code: u8 = rng.random();
        if format.element(u32::from(code)).is_finite() {
            return code;
        }
    }
}

/// Random packed codes of `blocks` blocks, every code finite.
fn finite_codes(rng: &mut StdRng, format: BlockFormat, blocks: usize) -> Vec<u8> {
    let len = format.block_len();
    let mut packed = vec![0u8; blocks * format.block_bytes()];
    for i in 0..blocks * len {
        let code = u32::from(finite_code(rng, format)) & ((1 << format.bits()) - 1);
        for b in 0..format.bits() as usize {
            let bit = i * format.bits() as usize + b;
            packed[bit / 8] |= (((code >> b) & 1) as u8) << (bit % 8);
        }
    }
    packed
}

/// `x` as `[batch, k]` random values of type `X`, and their f64 values.
fn random_x<X: Elem>(rng: &mut StdRng, batch: usize, k: usize) -> (Vec<X>, Vec<f64>) {
    let x: Vec<X> = (0..batch * k)
        .map(|_| X::from_f64(rng.random_range(-2.0..2.0)))
        .collect();
    let values = x.iter().map(|v| X::FORMAT.decode(v.bits())).collect();
    (x, values)
}

/// Compares `y` with the oracle's expectations.
fn check<Y: Elem>(d: &TestDevice, what: &str, got: &[Y], want: &[iron_tests::oracle::Expected]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        let value = Y::FORMAT.decode(g.bits());
        assert!(
            e.accepts(value),
            "{} {what} y[{i}]: got {value:e}, want {e:?}",
            d.gfx
        );
    }
}

/// Runs an MX-format kernel over every shape.
fn run_mx<X: Elem, Y: Elem>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: BlockFormat,
    decl: KernelDecl<MxFn<X, Y>>,
) {
    let kernel = d.module.kernel(decl).unwrap();
    for (m, k, batch) in SHAPES {
        for cfg in configs(m, batch) {
            let blocks = m * k / format.block_len();
            let packed = finite_codes(rng, format, blocks);
            let mut scales: Vec<u8> = (0..blocks).map(|_| rng.random_range(121..=133)).collect();
            // A NaN scale in the middle of the last row, when there is more than one row.
            if m > 1 {
                scales[blocks - 1 - (k / format.block_len()) / 2] = 0xFF;
            }
            let (x, xv) = random_x::<X>(rng, batch, k);
            let w = block_values(format, &packed, &scales, 1.0);
            let want = reference(&w, &xv, &vec![1.0; m], (m, k, batch), Y::FORMAT);
            let dw = DeviceBuffer::from_slice(&d.device, &packed).unwrap();
            let ds = DeviceBuffer::from_slice(&d.device, &scales).unwrap();
            let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            let mut dy = DeviceBuffer::<Y>::zeros(&d.device, batch * m).unwrap();
            let args = (&dw, &ds, &dx, &mut dy, m as u32, k as u32, batch as u32);
            // SAFETY: the kernel reads the m x k weights, their scales and batch x k inputs, and
            // writes batch x m outputs; every buffer holds exactly that.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, args)
                    .unwrap()
            };
            check(d, decl.name, &dy.to_vec().unwrap(), &want);
        }
    }
}

/// Runs an NVFP4 kernel over every shape.
fn run_nvfp4<X: Elem, Y: Elem>(d: &TestDevice, rng: &mut StdRng, decl: KernelDecl<Nvfp4Fn<X, Y>>) {
    let kernel = d.module.kernel(decl).unwrap();
    let format = BlockFormat::Nvfp4;
    let shapes = SHAPES.iter().copied().chain([(3, 16, 2), (4, 48, 7)]);
    for (m, k, batch) in shapes {
        for (cfg, tensor_scale) in configs(m, batch).into_iter().zip([0.05f32, 3.0]) {
            let blocks = m * k / format.block_len();
            let packed = finite_codes(rng, format, blocks);
            // E4M3 scales from 2^-6 to 448, finite.
            let scales: Vec<u8> = (0..blocks).map(|_| rng.random_range(0x08..=0x7E)).collect();
            let (x, xv) = random_x::<X>(rng, batch, k);
            let w = block_values(format, &packed, &scales, 1.0);
            let scale = vec![f64::from(tensor_scale); m];
            let want = reference(&w, &xv, &scale, (m, k, batch), Y::FORMAT);
            let dw = DeviceBuffer::from_slice(&d.device, &packed).unwrap();
            let ds = DeviceBuffer::from_slice(&d.device, &scales).unwrap();
            let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            let mut dy = DeviceBuffer::<Y>::zeros(&d.device, batch * m).unwrap();
            let args = (
                &dw,
                &ds,
                tensor_scale,
                &dx,
                &mut dy,
                m as u32,
                k as u32,
                batch as u32,
            );
            // SAFETY: as for the MX formats.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, args)
                    .unwrap()
            };
            check(d, decl.name, &dy.to_vec().unwrap(), &want);
        }
    }
}

/// Runs a plain FP8 kernel over every shape.
fn run_fp8<X: Elem, Y: Elem>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: Format,
    decl: KernelDecl<Fp8Fn<X, Y>>,
) {
    let kernel = d.module.kernel(decl).unwrap();
    let shapes = SHAPES.iter().copied().chain([(3, 16, 2), (4, 48, 7)]);
    for (m, k, batch) in shapes {
        for cfg in configs(m, batch) {
            let codes: Vec<u8> = (0..m * k)
                .map(|_| {
                    loop {
                        let c: u8 = rng.random();
                        if format.decode(u32::from(c)).is_finite() {
                            break c;
                        }
                    }
                })
                .collect();
            let row_scales: Vec<f32> = (0..m).map(|_| rng.random_range(-0.01..0.02)).collect();
            let (x, xv) = random_x::<X>(rng, batch, k);
            let w: Vec<f64> = codes.iter().map(|&c| format.decode(u32::from(c))).collect();
            let scale: Vec<f64> = row_scales.iter().map(|&s| f64::from(s)).collect();
            let want = reference(&w, &xv, &scale, (m, k, batch), Y::FORMAT);
            let dw = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
            let ds = DeviceBuffer::from_slice(&d.device, &row_scales).unwrap();
            let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            let mut dy = DeviceBuffer::<Y>::zeros(&d.device, batch * m).unwrap();
            let args = (&dw, &ds, &dx, &mut dy, m as u32, k as u32, batch as u32);
            // SAFETY: as for the MX formats, with m row scales.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, args)
                    .unwrap()
            };
            check(d, decl.name, &dy.to_vec().unwrap(), &want);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mx_formats_multiply_with_f32_f16_and_bf16_inputs() {
    let mut rng = StdRng::seed_from_u64(51);
    for d in emulated_devices() {
        let r = &mut rng;
        let fp4 = BlockFormat::MxFp4;
        run_mx(&d, r, fp4, q::qgemv_mxfp4_f32_f32);
        run_mx(&d, r, fp4, q::qgemv_mxfp4_f16_f32);
        run_mx(&d, r, fp4, q::qgemv_mxfp4_bf16_f32);
        run_mx(&d, r, fp4, q::qgemv_mxfp4_f16_f16);
        run_mx(&d, r, fp4, q::qgemv_mxfp4_bf16_bf16);
        let e2m3 = BlockFormat::MxFp6E2M3;
        run_mx(&d, r, e2m3, q::qgemv_mxfp6_e2m3_f32_f32);
        run_mx(&d, r, e2m3, q::qgemv_mxfp6_e2m3_f16_f32);
        run_mx(&d, r, e2m3, q::qgemv_mxfp6_e2m3_bf16_f32);
        let e3m2 = BlockFormat::MxFp6E3M2;
        run_mx(&d, r, e3m2, q::qgemv_mxfp6_e3m2_f32_f32);
        run_mx(&d, r, e3m2, q::qgemv_mxfp6_e3m2_f16_f32);
        run_mx(&d, r, e3m2, q::qgemv_mxfp6_e3m2_bf16_f32);
        let e4m3 = BlockFormat::MxFp8E4M3;
        run_mx(&d, r, e4m3, q::qgemv_mxfp8_e4m3_f32_f32);
        run_mx(&d, r, e4m3, q::qgemv_mxfp8_e4m3_f16_f32);
        run_mx(&d, r, e4m3, q::qgemv_mxfp8_e4m3_bf16_f32);
        let e5m2 = BlockFormat::MxFp8E5M2;
        run_mx(&d, r, e5m2, q::qgemv_mxfp8_e5m2_f32_f32);
        run_mx(&d, r, e5m2, q::qgemv_mxfp8_e5m2_f16_f32);
        run_mx(&d, r, e5m2, q::qgemv_mxfp8_e5m2_bf16_f32);
        let int8 = BlockFormat::MxInt8;
        run_mx(&d, r, int8, q::qgemv_mxint8_f32_f32);
        run_mx(&d, r, int8, q::qgemv_mxint8_f16_f32);
        run_mx(&d, r, int8, q::qgemv_mxint8_bf16_f32);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn nvfp4_multiplies_with_its_tensor_scale() {
    let mut rng = StdRng::seed_from_u64(52);
    for d in emulated_devices() {
        run_nvfp4(&d, &mut rng, q::qgemv_nvfp4_f32_f32);
        run_nvfp4(&d, &mut rng, q::qgemv_nvfp4_f16_f32);
        run_nvfp4(&d, &mut rng, q::qgemv_nvfp4_bf16_f32);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn plain_fp8_multiplies_with_row_scales() {
    let mut rng = StdRng::seed_from_u64(53);
    for d in emulated_devices() {
        let r = &mut rng;
        let (e4m3, e5m2) = (Format::E4m3fn, Format::E5m2);
        let (e4m3z, e5m2z) = (Format::E4m3fnuz, Format::E5m2fnuz);
        run_fp8(&d, r, e4m3, q::qgemv_fp8_e4m3fn_f32_f32);
        run_fp8(&d, r, e4m3, q::qgemv_fp8_e4m3fn_f16_f32);
        run_fp8(&d, r, e4m3, q::qgemv_fp8_e4m3fn_bf16_f32);
        run_fp8(&d, r, e4m3, q::qgemv_fp8_e4m3fn_f16_f16);
        run_fp8(&d, r, e4m3, q::qgemv_fp8_e4m3fn_bf16_bf16);
        run_fp8(&d, r, e5m2, q::qgemv_fp8_e5m2_f32_f32);
        run_fp8(&d, r, e5m2, q::qgemv_fp8_e5m2_f16_f32);
        run_fp8(&d, r, e5m2, q::qgemv_fp8_e5m2_bf16_f32);
        run_fp8(&d, r, e5m2, q::qgemv_fp8_e5m2_f16_f16);
        run_fp8(&d, r, e5m2, q::qgemv_fp8_e5m2_bf16_bf16);
        run_fp8(&d, r, e4m3z, q::qgemv_fp8_e4m3fnuz_f32_f32);
        run_fp8(&d, r, e4m3z, q::qgemv_fp8_e4m3fnuz_f16_f32);
        run_fp8(&d, r, e4m3z, q::qgemv_fp8_e4m3fnuz_bf16_f32);
        run_fp8(&d, r, e5m2z, q::qgemv_fp8_e5m2fnuz_f32_f32);
        run_fp8(&d, r, e5m2z, q::qgemv_fp8_e5m2fnuz_f16_f32);
        run_fp8(&d, r, e5m2z, q::qgemv_fp8_e5m2fnuz_bf16_f32);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn weights_are_read_once_for_the_whole_batch() {
    let mut rng = StdRng::seed_from_u64(54);
    for d in emulated_devices() {
        let kernel = d.module.kernel(q::qgemv_fp8_e4m3fn_f16_f32).unwrap();
        let (m, k, batch) = (64usize, 2048usize, 8usize);
        let codes: Vec<u8> = (0..m * k).map(|_| rng.random_range(0..0x70)).collect();
        let (x, _) = random_x::<f16>(&mut rng, batch, k);
        let dw = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
        let ds = DeviceBuffer::from_slice(&d.device, &vec![1.0f32; m]).unwrap();
        let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
        let mut dy = DeviceBuffer::<f32>::zeros(&d.device, batch * m).unwrap();
        // One wave per row: a workgroup of 256 work-items covers 256 / WAVE rows.
        let rows_per_group = 256 / d.wave as usize;
        let cfg = LaunchConfig::new([(m / rows_per_group) as u32, 1, 1], [256, 1, 1])
            .with_dynamic_lds(32_768);
        let args = (&dw, &ds, &dx, &mut dy, m as u32, k as u32, batch as u32);
        // SAFETY: as above.
        unsafe {
            d.device
                .default_stream()
                .launch(&kernel, cfg, args)
                .unwrap()
        };
        let counters = d.emulator.take_counters();
        let (_, c) = counters.last().expect("the launch ran");
        // Weights once (m * k bytes), x once per workgroup, the row scales, the dispatch packet
        // and kernel arguments: well under two reads of the weights.
        let x_bytes = (m / rows_per_group * batch * k * 2) as u64;
        let read = c.global_bytes_read;
        assert!(read >= (m * k) as u64 + x_bytes, "{}: {read}", d.gfx);
        assert!(
            read < (m * k) as u64 + x_bytes + 64 * 1024,
            "{}: {read}",
            d.gfx
        );
        // Weight codes and staged x move in 16-byte accesses.
        let [w1, w2, _, w8, w12, w16] = c.global_access_widths;
        assert_eq!((w1, w2, w8, w12), (0, 0, 0, 0), "{}", d.gfx);
        assert!(w16 > 0, "{}", d.gfx);
        eprintln!(
            "{}: qgemv fp8 {m}x{k} batch {batch}: {} bytes read, LDS bank-conflict cycles {} in \
             {} LDS instructions",
            d.gfx, read, c.lds_bank_conflict_cycles, c.lds_accesses
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_multiplies_quantized_tensors_and_checks_shapes() {
    use iron::library::quant::host::QuantizedTensor;
    use iron::library::quant::{MxFp4, Nvfp4};
    use iron::library::{DeviceQuantizedTensor, Fp8Format, Library, LibraryError};
    let mut rng = StdRng::seed_from_u64(55);
    for d in emulated_devices() {
        let library = Library::from_module(d.module.clone()).unwrap();
        let stream = d.device.default_stream();
        let (m, k, batch) = (40usize, 1088usize, 4usize);
        let dense: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (x, xv) = random_x::<f16>(&mut rng, batch, k);
        let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();

        // MXFP4 through the host quantizer, f16 in and out.
        let host = QuantizedTensor::<MxFp4>::quantize(&dense, m, k).unwrap();
        let w = block_values(BlockFormat::MxFp4, host.elements(), host.scales(), 1.0);
        let want = reference(&w, &xv, &vec![1.0; m], (m, k, batch), Format::F16);
        let tensor = DeviceQuantizedTensor::upload(&d.device, &host).unwrap();
        let mut dy = DeviceBuffer::<f16>::zeros(&d.device, batch * m).unwrap();
        library
            .qgemv(&stream, &tensor, &dx, &mut dy, batch)
            .unwrap();
        check(&d, "qgemv mxfp4", &dy.to_vec().unwrap(), &want);

        // NVFP4 with its tensor scale, f32 out.
        let host = QuantizedTensor::<Nvfp4>::quantize(&dense, m, k).unwrap();
        let ts = host.tensor_scale();
        let w = block_values(BlockFormat::Nvfp4, host.elements(), host.scales(), 1.0);
        let want = reference(&w, &xv, &vec![f64::from(ts); m], (m, k, batch), Format::F32);
        let tensor = DeviceQuantizedTensor::upload(&d.device, &host).unwrap();
        let mut dy = DeviceBuffer::<f32>::zeros(&d.device, batch * m).unwrap();
        library
            .qgemv(&stream, &tensor, &dx, &mut dy, batch)
            .unwrap();
        check(&d, "qgemv nvfp4", &dy.to_vec().unwrap(), &want);

        // Plain FP8 with row scales.
        let codes: Vec<u8> = (0..m * k).map(|_| rng.random_range(0..0x7E)).collect();
        let row_scales: Vec<f32> = (0..m).map(|_| rng.random_range(0.001..0.01)).collect();
        let w: Vec<f64> = codes
            .iter()
            .map(|&c| Format::E4m3fn.decode(u32::from(c)))
            .collect();
        let scale: Vec<f64> = row_scales.iter().map(|&s| f64::from(s)).collect();
        let want = reference(&w, &xv, &scale, (m, k, batch), Format::F32);
        let dw = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
        let ds = DeviceBuffer::from_slice(&d.device, &row_scales).unwrap();
        let mut dy = DeviceBuffer::<f32>::zeros(&d.device, batch * m).unwrap();
        library
            .qgemv_fp8(
                &stream,
                Fp8Format::E4M3Fn,
                &dw,
                &ds,
                (m, k),
                &dx,
                &mut dy,
                batch,
            )
            .unwrap();
        check(&d, "qgemv_fp8", &dy.to_vec().unwrap(), &want);

        // What the kernels do not take.
        let error = library
            .qgemv(&stream, &tensor, &dx, &mut dy, 9)
            .unwrap_err();
        assert_eq!(error.to_string(), "qgemv: batch = 9 exceeds the kernels' 8");
        let mut dy16 = DeviceBuffer::<f16>::zeros(&d.device, batch * m).unwrap();
        let error = library
            .qgemv_fp8(
                &stream,
                Fp8Format::E4M3Fnuz,
                &dw,
                &ds,
                (m, k),
                &dx,
                &mut dy16,
                batch,
            )
            .unwrap_err();
        assert!(matches!(error, LibraryError::BadShape { .. }), "{error}");
        let error = library
            .qgemv_fp8(
                &stream,
                Fp8Format::E5M2,
                &dw,
                &ds,
                (m, k - 8),
                &dx,
                &mut dy,
                batch,
            )
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("qgemv_fp8: k = {} is not a multiple of 16", k - 8)
        );
        let error = library
            .qgemv(&stream, &tensor, &dx, &mut dy, batch + 1)
            .unwrap_err();
        assert!(
            matches!(error, LibraryError::BufferTooShort { buffer: "x", .. }),
            "{error}"
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn nan_and_infinity_codes_reach_their_rows() {
    let mut rng = StdRng::seed_from_u64(56);
    // (format, kernel, special codes): E4M3FN NaNs, E5M2 infinities and NaNs, FNUZ NaN.
    let cases = [
        (
            Format::E4m3fn,
            q::qgemv_fp8_e4m3fn_f32_f32,
            vec![0x7F, 0xFF],
        ),
        (
            Format::E5m2,
            q::qgemv_fp8_e5m2_f32_f32,
            vec![0x7C, 0xFC, 0x7D, 0xFE],
        ),
        (Format::E4m3fnuz, q::qgemv_fp8_e4m3fnuz_f32_f32, vec![0x80]),
        (Format::E5m2fnuz, q::qgemv_fp8_e5m2fnuz_f32_f32, vec![0x80]),
    ];
    for d in emulated_devices() {
        for (format, decl, specials) in &cases {
            let kernel = d.module.kernel(*decl).unwrap();
            let (m, k, batch) = (6usize, 256usize, 2usize);
            let mut codes: Vec<u8> = (0..m * k)
                .map(|_| {
                    loop {
                        let c: u8 = rng.random();
                        if format.decode(u32::from(c)).is_finite() {
                            break c;
                        }
                    }
                })
                .collect();
            // Row r < specials.len() holds special code r at a random column; the others none.
            for (r, &code) in specials.iter().enumerate() {
                codes[r * k + rng.random_range(0..k)] = code;
            }
            let (x, xv) = random_x::<f32>(&mut rng, batch, k);
            let w: Vec<f64> = codes.iter().map(|&c| format.decode(u32::from(c))).collect();
            let want = reference(&w, &xv, &vec![1.0; m], (m, k, batch), Format::F32);
            let dw = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
            let ds = DeviceBuffer::from_slice(&d.device, &vec![1.0f32; m]).unwrap();
            let dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            let mut dy = DeviceBuffer::<f32>::zeros(&d.device, batch * m).unwrap();
            let cfg = configs(m, batch)[1];
            let args = (&dw, &ds, &dx, &mut dy, m as u32, k as u32, batch as u32);
            // SAFETY: as above.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, args)
                    .unwrap()
            };
            let got = dy.to_vec().unwrap();
            check(&d, decl.name, &got, &want);
            assert!(
                got.iter().filter(|v| !v.is_finite()).count() >= specials.len(),
                "{} {}: every special code reaches its row",
                d.gfx,
                decl.name
            );
        }
    }
}
