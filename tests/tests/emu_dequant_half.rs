//! The dequantization kernels on the emulator for every emulated gfx: every block format to f32,
//! f16 and bf16 (`dequant_<format>_<out>`), and plain FP8 with a per-tensor scale
//! (`dequant_fp8_<format>_<out>`), against the oracle's decoding from the formats' definitions.
//! Inputs are seeded random codes over every code (NaN and infinity codes included) with scale
//! codes across the whole range (extremes and the NaN scale included), sizes with and without a
//! tail (zero blocks, fewer than one wave, partial last waves and work-items, scale buffers whose
//! length is not a multiple of 16), grids of one work-item per step, small looping grids and
//! workgroups that are not a multiple of the wave, and a guard zone after the output that must
//! stay untouched. The emulator's access counts show which waves fetch their scale codes in
//! 16-byte chunks (every access 16 bytes) and which fall back to per-lane bytes.

use iron::library::Float;
use iron::{DeviceBuffer, LaunchConfig};
use iron_intrinsics::launch::KernelDecl;
use iron_kernels::dequant as f32_out;
use iron_kernels::dequant_half as half_out;
use iron_kernels::dtype::{bf16, f16};
use iron_tests::devices::{TestDevice, emulated_devices};
use iron_tests::oracle::Format;
use iron_tests::oracle::dequant::{BlockFormat, dequant_blocks, dequant_plain};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GUARD: usize = 32;

/// An MX-layout dequantization kernel writing `T`.
type MxFn<T> = fn(*const u8, *const u8, *mut T, u32);
/// An NVFP4 dequantization kernel writing `T`.
type Nvfp4Fn<T> = fn(*const u8, *const u8, f32, *mut T, u32);
/// A plain FP8 dequantization kernel writing `T`.
type PlainFn<T> = fn(*const u8, f32, *mut T, u32);
/// Block counts: none, fewer than one wave of work-items, whole waves with scale buffers of
/// whole 16-byte chunks (64, 128), and partial last waves and work-items with scale buffers that
/// are not (odd counts end FP6 and NVFP4 tensors in a partial work-item).
const BLOCK_COUNTS: [usize; 8] = [0, 1, 3, 37, 64, 128, 257, 1000];

/// An output element type: its bits, its format, and a poison value whose bits no kernel
/// result here has (a NaN payload the kernels never produce).
trait Out: Float {
    const FORMAT: Format;
    fn bits(self) -> u32;
    fn poison() -> Self;
}

impl Out for f32 {
    const FORMAT: Format = Format::F32;
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn poison() -> Self {
        f32::from_bits(0x7FA7_A7A7)
    }
}

impl Out for f16 {
    const FORMAT: Format = Format::F16;
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn poison() -> Self {
        f16::from_bits(0x7DA7)
    }
}

impl Out for bf16 {
    const FORMAT: Format = Format::Bf16;
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn poison() -> Self {
        bf16::from_bits(0x7FA7)
    }
}

/// Scale codes: mostly near 1, some at the extremes, some NaN (MX); any E4M3 code (NVFP4).
fn scale_codes(rng: &mut StdRng, format: BlockFormat, blocks: usize) -> Vec<u8> {
    (0..blocks)
        .map(|i| match (format, i % 10) {
            (BlockFormat::Nvfp4, _) => rng.random(),
            (_, 7) => rng.random_range(0..4),
            (_, 8) => rng.random_range(250..=254),
            (_, 9) => 0xFF,
            _ => rng.random_range(117..=137),
        })
        .collect()
}

/// Units of 16 elements per work-item of the block-format kernels for `format`.
fn units_per_workitem(format: BlockFormat) -> usize {
    let bits = 8 * format.block_bytes() / format.block_len();
    iron_kernels::dequant::units_per_workitem(bits as u32)
}

/// The launch shapes for `work_items` work-items: enough for one pass, 2 x 64 (looping), and
/// workgroups that are not a multiple of the wave: 96 (partial waves in wave64, whole ones in
/// wave32), 48 and 200 (a partial wave in each workgroup in both wave sizes).
fn configs(work_items: usize) -> [LaunchConfig; 5] {
    [
        LaunchConfig::for_elements(work_items.max(1), 256),
        LaunchConfig::new([2, 1, 1], [64, 1, 1]),
        LaunchConfig::new([3, 1, 1], [96, 1, 1]),
        LaunchConfig::new([1, 1, 1], [48, 1, 1]),
        LaunchConfig::for_elements(work_items.max(1), 200),
    ]
}

/// The work-items of one pass over `blocks` blocks of `format`.
fn work_items(format: BlockFormat, blocks: usize) -> usize {
    (blocks * format.block_len() / 16).div_ceil(units_per_workitem(format))
}

/// Checks `got` (plus the guard zone) against the oracle's expectations.
fn check<T: Out>(d: &TestDevice, what: &str, got: &[T], want: &[iron_tests::oracle::Expected]) {
    let n = want.len();
    let guard = T::poison().bits();
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        let value = T::FORMAT.decode(g.bits());
        assert!(
            e.accepts(value),
            "{} {what} element {i}: got {value:e}, want {e:?}",
            d.gfx
        );
        assert_ne!(
            g.bits(),
            guard,
            "{} {what} element {i} was not written",
            d.gfx
        );
    }
    assert!(
        got[n..].iter().all(|g| g.bits() == guard),
        "{} {what} overran",
        d.gfx
    );
}

/// Runs an MX-layout dequant kernel over random tensors and checks it.
fn run_blocks<T: Out>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: BlockFormat,
    decl: KernelDecl<MxFn<T>>,
) {
    let kernel = d.module.kernel(decl).unwrap();
    for blocks in BLOCK_COUNTS {
        for cfg in configs(work_items(format, blocks)) {
            let packed: Vec<u8> = (0..blocks * format.block_bytes())
                .map(|_| rng.random())
                .collect();
            let scales = scale_codes(rng, format, blocks);
            let want = dequant_blocks(format, &packed, &scales, 1.0, T::FORMAT);
            let (dp, ds) = (
                DeviceBuffer::from_slice(&d.device, &packed).unwrap(),
                DeviceBuffer::from_slice(&d.device, &scales).unwrap(),
            );
            let mut out =
                DeviceBuffer::from_slice(&d.device, &vec![T::poison(); want.len() + GUARD])
                    .unwrap();
            // SAFETY: the kernel reads `blocks` blocks and scale codes and writes
            // `blocks * BLOCK_LEN` outputs; the buffers hold that much.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, (&dp, &ds, &mut out, blocks as u32))
                    .unwrap()
            };
            check(d, decl.name, &out.to_vec().unwrap(), &want);
        }
    }
}

/// Runs an NVFP4 dequant kernel over random tensors and checks it.
fn run_nvfp4<T: Out>(d: &TestDevice, rng: &mut StdRng, decl: KernelDecl<Nvfp4Fn<T>>) {
    let kernel = d.module.kernel(decl).unwrap();
    let format = BlockFormat::Nvfp4;
    for blocks in BLOCK_COUNTS {
        let scales = [0.37f32, 3.0e-3].into_iter().cycle();
        for (cfg, tensor_scale) in configs(work_items(format, blocks)).into_iter().zip(scales) {
            let packed: Vec<u8> = (0..blocks * format.block_bytes())
                .map(|_| rng.random())
                .collect();
            let scales = scale_codes(rng, format, blocks);
            let want = dequant_blocks(format, &packed, &scales, tensor_scale, T::FORMAT);
            let (dp, ds) = (
                DeviceBuffer::from_slice(&d.device, &packed).unwrap(),
                DeviceBuffer::from_slice(&d.device, &scales).unwrap(),
            );
            let mut out =
                DeviceBuffer::from_slice(&d.device, &vec![T::poison(); want.len() + GUARD])
                    .unwrap();
            // SAFETY: as for the MX formats.
            unsafe {
                d.device
                    .default_stream()
                    .launch(
                        &kernel,
                        cfg,
                        (&dp, &ds, tensor_scale, &mut out, blocks as u32),
                    )
                    .unwrap()
            };
            check(d, decl.name, &out.to_vec().unwrap(), &want);
        }
    }
}

/// Runs a plain FP8 dequant kernel over random codes and checks it.
fn run_plain<T: Out>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: Format,
    decl: KernelDecl<PlainFn<T>>,
) {
    let kernel = d.module.kernel(decl).unwrap();
    for n in [0usize, 1, 15, 16, 17, 100, 1000, 4099] {
        let scales = [1.0f32, -2.5e-3].into_iter().cycle();
        for (cfg, scale) in configs(n / 16 + 16).into_iter().zip(scales) {
            let codes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            let want = dequant_plain(format, &codes, scale, T::FORMAT);
            let dc = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
            let mut out =
                DeviceBuffer::from_slice(&d.device, &vec![T::poison(); n + GUARD]).unwrap();
            // SAFETY: the kernel reads codes[0..n] and writes out[0..n].
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, (&dc, scale, &mut out, n as u32))
                    .unwrap()
            };
            check(d, decl.name, &out.to_vec().unwrap(), &want);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mx_formats_dequantize_to_f32_f16_and_bf16() {
    let mut rng = StdRng::seed_from_u64(31);
    for d in emulated_devices() {
        let r = &mut rng;
        let (fp4, e2m3, e3m2) = (
            BlockFormat::MxFp4,
            BlockFormat::MxFp6E2M3,
            BlockFormat::MxFp6E3M2,
        );
        let (e4m3, e5m2, int8) = (
            BlockFormat::MxFp8E4M3,
            BlockFormat::MxFp8E5M2,
            BlockFormat::MxInt8,
        );
        run_blocks(&d, r, fp4, f32_out::dequant_mxfp4_f32);
        run_blocks(&d, r, fp4, half_out::dequant_mxfp4_f16);
        run_blocks(&d, r, fp4, half_out::dequant_mxfp4_bf16);
        run_blocks(&d, r, e2m3, f32_out::dequant_mxfp6_e2m3_f32);
        run_blocks(&d, r, e2m3, half_out::dequant_mxfp6_e2m3_f16);
        run_blocks(&d, r, e2m3, half_out::dequant_mxfp6_e2m3_bf16);
        run_blocks(&d, r, e3m2, f32_out::dequant_mxfp6_e3m2_f32);
        run_blocks(&d, r, e3m2, half_out::dequant_mxfp6_e3m2_f16);
        run_blocks(&d, r, e3m2, half_out::dequant_mxfp6_e3m2_bf16);
        run_blocks(&d, r, e4m3, f32_out::dequant_mxfp8_e4m3_f32);
        run_blocks(&d, r, e4m3, half_out::dequant_mxfp8_e4m3_f16);
        run_blocks(&d, r, e4m3, half_out::dequant_mxfp8_e4m3_bf16);
        run_blocks(&d, r, e5m2, f32_out::dequant_mxfp8_e5m2_f32);
        run_blocks(&d, r, e5m2, half_out::dequant_mxfp8_e5m2_f16);
        run_blocks(&d, r, e5m2, half_out::dequant_mxfp8_e5m2_bf16);
        run_blocks(&d, r, int8, f32_out::dequant_mxint8_f32);
        run_blocks(&d, r, int8, half_out::dequant_mxint8_f16);
        run_blocks(&d, r, int8, half_out::dequant_mxint8_bf16);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn nvfp4_dequantizes_to_f32_f16_and_bf16() {
    let mut rng = StdRng::seed_from_u64(32);
    for d in emulated_devices() {
        run_nvfp4(&d, &mut rng, f32_out::dequant_nvfp4_f32);
        run_nvfp4(&d, &mut rng, half_out::dequant_nvfp4_f16);
        run_nvfp4(&d, &mut rng, half_out::dequant_nvfp4_bf16);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn plain_fp8_dequantizes_with_a_tensor_scale() {
    let mut rng = StdRng::seed_from_u64(33);
    for d in emulated_devices() {
        let r = &mut rng;
        let (e4m3, e5m2) = (Format::E4m3fn, Format::E5m2);
        let (e4m3z, e5m2z) = (Format::E4m3fnuz, Format::E5m2fnuz);
        run_plain(&d, r, e4m3, half_out::dequant_fp8_e4m3fn_f32);
        run_plain(&d, r, e4m3, half_out::dequant_fp8_e4m3fn_f16);
        run_plain(&d, r, e4m3, half_out::dequant_fp8_e4m3fn_bf16);
        run_plain(&d, r, e5m2, half_out::dequant_fp8_e5m2_f32);
        run_plain(&d, r, e5m2, half_out::dequant_fp8_e5m2_f16);
        run_plain(&d, r, e5m2, half_out::dequant_fp8_e5m2_bf16);
        run_plain(&d, r, e4m3z, half_out::dequant_fp8_e4m3fnuz_f32);
        run_plain(&d, r, e4m3z, half_out::dequant_fp8_e4m3fnuz_f16);
        run_plain(&d, r, e4m3z, half_out::dequant_fp8_e4m3fnuz_bf16);
        run_plain(&d, r, e5m2z, half_out::dequant_fp8_e5m2fnuz_f32);
        run_plain(&d, r, e5m2z, half_out::dequant_fp8_e5m2fnuz_f16);
        run_plain(&d, r, e5m2z, half_out::dequant_fp8_e5m2fnuz_bf16);
    }
}

/// Launches `decl` over `blocks` random blocks of `format` (NaN scales included) with `cfg`,
/// checks every output against the oracle, and returns the launch's global access counts by
/// width ([1, 2, 4, 8, 12, 16] bytes per lane).
fn access_widths<T: Out>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: BlockFormat,
    decl: KernelDecl<MxFn<T>>,
    blocks: usize,
    cfg: LaunchConfig,
) -> [u64; 6] {
    let kernel = d.module.kernel(decl).unwrap();
    let packed: Vec<u8> = (0..blocks * format.block_bytes())
        .map(|_| rng.random())
        .collect();
    let scales = scale_codes(rng, format, blocks);
    let want = dequant_blocks(format, &packed, &scales, 1.0, T::FORMAT);
    let (dp, ds) = (
        DeviceBuffer::from_slice(&d.device, &packed).unwrap(),
        DeviceBuffer::from_slice(&d.device, &scales).unwrap(),
    );
    let mut out =
        DeviceBuffer::from_slice(&d.device, &vec![T::poison(); want.len() + GUARD]).unwrap();
    d.emulator.take_counters();
    // SAFETY: the kernel reads `blocks` blocks and scale codes and writes `blocks * BLOCK_LEN`
    // outputs; the buffers hold that much.
    unsafe {
        d.device
            .default_stream()
            .launch(&kernel, cfg, (&dp, &ds, &mut out, blocks as u32))
            .unwrap()
    };
    let counters = d.emulator.take_counters();
    let (_, c) = counters.last().expect("the launch ran");
    check(d, decl.name, &out.to_vec().unwrap(), &want);
    c.global_access_widths
}

/// Checks that full waves over whole 16-byte chunks of scale codes make only 16-byte accesses
/// (one load of scale chunks per wave, the codes, the values), in one pass and looping, and
/// that partial waves and waves holding the last scale codes fall back to byte loads.
fn check_access_widths<T: Out>(
    d: &TestDevice,
    rng: &mut StdRng,
    format: BlockFormat,
    decl: KernelDecl<MxFn<T>>,
) {
    let wave = d.wave as usize;
    let what = format!("{} {}", d.gfx, decl.name);
    // 256 blocks: whole waves of work-items in every format, 256 scale codes.
    let blocks = 256usize;
    let (per_item, items) = (units_per_workitem(format), work_items(format, blocks));
    let code_loads = per_item * format.block_bytes() * 16 / format.block_len() / 16;
    let stores = per_item * 16 * size_of::<T>() / 16;
    let want = [
        0,
        0,
        0,
        0,
        0,
        (items / wave * (1 + code_loads + stores)) as u64,
    ];
    let one_pass = LaunchConfig::new([(items / 64) as u32, 1, 1], [64, 1, 1]);
    let widths = access_widths(d, rng, format, decl, blocks, one_pass);
    assert_eq!(widths, want, "{what} one pass");
    let looping = LaunchConfig::new([1, 1, 1], [items.min(256) as u32, 1, 1]);
    let widths = access_widths(d, rng, format, decl, blocks, looping);
    assert_eq!(widths, want, "{what} looping");

    // Workgroups of 96: partial waves in wave64.
    let partial = LaunchConfig::new([items.div_ceil(96) as u32, 1, 1], [96, 1, 1]);
    let widths = access_widths(d, rng, format, decl, blocks, partial);
    assert_eq!(
        widths[0] > 0,
        wave == 64,
        "{what} workgroups of 96: {widths:?}"
    );
    // 255 blocks: the wave holding the last 15 scale codes reads them byte by byte, the
    // others in chunks.
    let widths = access_widths(d, rng, format, decl, blocks - 1, one_pass);
    assert!(
        widths[0] > 0 && widths[5] > 0,
        "{what} 255 blocks: {widths:?}"
    );
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn full_waves_move_every_byte_in_16_byte_accesses() {
    let mut rng = StdRng::seed_from_u64(34);
    for d in emulated_devices() {
        let r = &mut rng;
        check_access_widths(&d, r, BlockFormat::MxFp4, f32_out::dequant_mxfp4_f32);
        check_access_widths(&d, r, BlockFormat::MxFp4, half_out::dequant_mxfp4_f16);
        check_access_widths(
            &d,
            r,
            BlockFormat::MxFp6E2M3,
            half_out::dequant_mxfp6_e2m3_bf16,
        );
        check_access_widths(
            &d,
            r,
            BlockFormat::MxFp6E3M2,
            f32_out::dequant_mxfp6_e3m2_f32,
        );
        check_access_widths(
            &d,
            r,
            BlockFormat::MxFp8E4M3,
            half_out::dequant_mxfp8_e4m3_f16,
        );
        check_access_widths(
            &d,
            r,
            BlockFormat::MxFp8E5M2,
            f32_out::dequant_mxfp8_e5m2_f32,
        );
        check_access_widths(&d, r, BlockFormat::MxInt8, half_out::dequant_mxint8_bf16);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_dequantizes_to_16_bits_and_plain_fp8() {
    use iron::library::quant::MxFp6E3M2;
    use iron::library::quant::host::QuantizedTensor;
    use iron::library::{DeviceQuantizedTensor, Fp8Format, Library, LibraryError};
    let mut rng = StdRng::seed_from_u64(35);
    for d in emulated_devices() {
        let library = Library::from_module(d.module.clone()).unwrap();
        let stream = d.device.default_stream();
        let (rows, cols) = (7usize, 96usize);
        let dense: Vec<f32> = (0..rows * cols)
            .map(|_| rng.random_range(-30.0..30.0))
            .collect();
        let host = QuantizedTensor::<MxFp6E3M2>::quantize(&dense, rows, cols).unwrap();
        let want = dequant_blocks(
            BlockFormat::MxFp6E3M2,
            host.elements(),
            host.scales(),
            1.0,
            Format::Bf16,
        );
        let tensor = DeviceQuantizedTensor::upload(&d.device, &host).unwrap();
        let mut out =
            DeviceBuffer::from_slice(&d.device, &vec![bf16::poison(); want.len() + GUARD]).unwrap();
        library.dequant_half(&stream, &tensor, &mut out).unwrap();
        check(&d, "dequant_half", &out.to_vec().unwrap(), &want);

        let n = 1001usize;
        let codes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let dc = DeviceBuffer::from_slice(&d.device, &codes).unwrap();
        let want = dequant_plain(Format::E5m2fnuz, &codes, 0.75, Format::F16);
        let mut out = DeviceBuffer::from_slice(&d.device, &vec![f16::poison(); n + GUARD]).unwrap();
        library
            .dequant_fp8(&stream, Fp8Format::E5M2Fnuz, &dc, 0.75, &mut out, n)
            .unwrap();
        check(&d, "dequant_fp8", &out.to_vec().unwrap(), &want);

        let error = library
            .dequant_fp8(&stream, Fp8Format::E4M3Fn, &dc, 1.0, &mut out, n + 1)
            .unwrap_err();
        assert!(
            matches!(
                error,
                LibraryError::BufferTooShort {
                    buffer: "codes",
                    ..
                }
            ),
            "{error}"
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_gfx_decodes_to_the_same_bits() {
    // gfx950 decodes the MX formats with its hardware conversions, the others in software: the
    // outputs must agree bit for bit (NaNs as NaNs).
    let mut rng = StdRng::seed_from_u64(36);
    let devices = emulated_devices();
    let cases = [
        (BlockFormat::MxFp4, f32_out::dequant_mxfp4_f32),
        (BlockFormat::MxFp6E2M3, f32_out::dequant_mxfp6_e2m3_f32),
        (BlockFormat::MxFp6E3M2, f32_out::dequant_mxfp6_e3m2_f32),
        (BlockFormat::MxFp8E4M3, f32_out::dequant_mxfp8_e4m3_f32),
        (BlockFormat::MxFp8E5M2, f32_out::dequant_mxfp8_e5m2_f32),
    ];
    for (format, decl) in cases {
        let blocks = 300usize;
        let packed: Vec<u8> = (0..blocks * format.block_bytes())
            .map(|_| rng.random())
            .collect();
        let scales = scale_codes(&mut rng, format, blocks);
        let outputs: Vec<(String, Vec<u32>)> = devices
            .iter()
            .map(|d| {
                let kernel = d.module.kernel(decl).unwrap();
                let dp = DeviceBuffer::from_slice(&d.device, &packed).unwrap();
                let ds = DeviceBuffer::from_slice(&d.device, &scales).unwrap();
                let mut out = DeviceBuffer::<f32>::zeros(&d.device, blocks * 32).unwrap();
                let cfg = configs(blocks * 2)[0];
                // SAFETY: as above.
                unsafe {
                    d.device
                        .default_stream()
                        .launch(&kernel, cfg, (&dp, &ds, &mut out, blocks as u32))
                        .unwrap()
                };
                let bits = out.to_vec().unwrap().into_iter().map(|v| {
                    if v.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        v.to_bits()
                    }
                });
                (d.gfx.clone(), bits.collect())
            })
            .collect();
        for (gfx, bits) in &outputs[1..] {
            assert!(
                bits == &outputs[0].1,
                "{} {gfx} and {} disagree",
                decl.name,
                outputs[0].0
            );
        }
    }
}
