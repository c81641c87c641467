//! Dequantization of `iron::library` for every block format on every emulated gfx: tensors
//! quantized by `iron_quant`'s host packer from data with edge values, and tensors of random codes
//! (every element and scale code, NaN scales included), decoded on the device and compared with
//! the host decoder bit for bit (itself checked against an independent formula and ml_dtypes
//! golden vectors in `device/quant`), and for MXFP8 also with the oracle's FP8 decoding times the
//! E8M0 scale; poisoned outputs with a guard zone; and the emulator's counts (codes and scales
//! read once, every output byte written once, and, in tensors of whole waves over whole 16-byte
//! chunks of scale codes, every global access 16 bytes wide).

mod common;

use common::{
    GUARD, KERNARG_BYTES_PER_WAVE, LibraryDevice, assert_floats_written, edgy, library_devices,
    one_compute_unit_library_devices, poisoned_floats, rng,
};
use iron::DeviceBuffer;
use iron::library::quant::host::QuantizedTensor;
use iron::library::quant::{
    ElementFormat, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8, Nvfp4,
};
use iron::library::{DequantFormat, DeviceQuantizedTensor};
use iron_tests::oracle::{Expected, Format};
use rand::Rng;
use rand::rngs::StdRng;

/// Tensor shapes `[rows, cols]` in blocks of 32 (NVFP4's 16-element blocks fit them too): no
/// block, one block, block counts that are not multiples of the wave or the workgroup (partial
/// last waves and work-items, scale codes that do not fill the last 16-byte chunk), whole waves
/// over whole chunks of scale codes (128, 416 and 4096 MX blocks), and a larger tensor
/// ([`grid_stride_loops`] decodes a larger one still on one compute unit, where work-items
/// loop).
const SHAPES: [(usize, usize); 10] = [
    (0, 32),
    (1, 32),
    (3, 96),
    (7, 160),
    (1, 32 * 128),
    (5, 32 * 51),
    (13, 1024),
    (2, 32 * 129),
    (32, 4096),
    (4, 40_000),
];

/// The oracle's format of an MXFP8 element, when `B` is one.
fn mxfp8_element(name: &str) -> Option<Format> {
    match name {
        "mxfp8_e4m3" => Some(Format::E4m3fn),
        "mxfp8_e5m2" => Some(Format::E5m2),
        _ => None,
    }
}

/// Decodes `tensor` on the device and checks every value against the host decoder (and, for
/// MXFP8, against the oracle), the guard and the traffic; returns the waves the dispatch ran.
fn check_decoding<B: DequantFormat>(
    d: &LibraryDevice,
    tensor: &QuantizedTensor<B>,
    what: &str,
) -> u64 {
    let (rows, cols) = (tensor.rows(), tensor.cols());
    let n = rows * cols;
    let kernel = format!("dequant_{}_f32", B::NAME);
    let context = format!("{} {kernel} {rows}x{cols} {what}", d.gfx);
    let on_device = DeviceQuantizedTensor::upload(&d.device, tensor).unwrap();
    let mut out = poisoned_floats::<f32>(&d.device, n);
    d.library
        .dequant(&d.device.default_stream(), &on_device, &mut out)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = out.to_vec().unwrap();
    assert_floats_written(&got, n, &context);
    let host = tensor.dequantize();
    for (i, (g, h)) in got.iter().zip(&host).enumerate() {
        assert!(
            g.to_bits() == h.to_bits() || g.is_nan() && h.is_nan(),
            "{context} i={i}: device {g:e}, host {h:e}"
        );
    }
    if let Some(element) = mxfp8_element(B::NAME) {
        for (i, (g, &code)) in got.iter().zip(tensor.elements()).enumerate() {
            let scale = tensor.scales()[i / B::BLOCK_LEN];
            let scale = if scale == 0xFF {
                f64::NAN
            } else {
                2f64.powi(i32::from(scale) - 127)
            };
            let value = element.decode(u32::from(code)) * scale;
            let want = Expected::stored_as(value, 0.0, Format::F32);
            assert!(
                want.accepts(f64::from(*g)),
                "{context} i={i}: got {g:e}, want {want:?}"
            );
        }
    }
    if n == 0 {
        d.dispatches(&[]);
        return 0;
    }
    let counters = d.emulator.take_counters();
    let [(name, traffic)] = counters.as_slice() else {
        panic!("{context}: {} dispatches", counters.len());
    };
    assert_eq!(name, &kernel, "{context}: the dispatch");
    let units = n / 16;
    let per_item = iron_kernels::dequant::units_per_workitem(B::Element::BITS);
    let whole_waves = units.is_multiple_of(per_item * d.wave as usize);
    if whole_waves && tensor.scales().len().is_multiple_of(16) {
        let widths = &traffic.global_access_widths;
        assert!(
            widths[..5].iter().all(|&count| count == 0),
            "{context}: accesses narrower than 16 bytes: {widths:?}"
        );
    }
    let (read, written) = (traffic.global_bytes_read, traffic.global_bytes_written);
    assert_eq!(written, 4 * n as u64, "{context}: bytes written");
    let codes = (tensor.elements().len() + tensor.scales().len()) as u64;
    assert!(
        read >= codes && read <= codes + traffic.waves * KERNARG_BYTES_PER_WAVE,
        "{context}: {read} bytes read for {codes} bytes of codes and scales"
    );
    traffic.waves
}

/// Both kinds of tensor of format `B` in every shape, on every emulated gfx.
fn check_format<B: DequantFormat>(seed: u64) {
    let mut rng: StdRng = rng(seed);
    for d in library_devices() {
        d.clear_counters();
        for (rows, cols) in SHAPES {
            let data: Vec<f32> = edgy::<f32>(&mut rng, rows * cols, 50.0)
                .into_iter()
                .enumerate()
                .map(|(i, v)| if i % 97 == 3 { v * 1e-3 } else { v })
                .collect();
            let quantized = QuantizedTensor::<B>::quantize(&data, rows, cols).unwrap();
            check_decoding(&d, &quantized, "quantized");

            let (elements, scales) = quantized.into_parts();
            let random_codes: Vec<u8> = elements.iter().map(|_| rng.random()).collect();
            let random_scales: Vec<u8> = scales.iter().map(|_| rng.random()).collect();
            let tensor_scale = f32::from_bits(rng.random_range(0x3D00_0000..0x4100_0000));
            let random = QuantizedTensor::<B>::from_parts(
                rows,
                cols,
                random_codes,
                random_scales,
                tensor_scale,
            )
            .unwrap();
            check_decoding(&d, &random, "random codes");
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn grid_stride_loops() {
    // On one compute unit the grid is capped at 32 workgroups of 256 work-items, fewer than the
    // 8 x 40,000 tensor's work needs: work-items loop.
    let mut rng: StdRng = rng(68);
    let (rows, cols) = (8, 40_000);
    for d in one_compute_unit_library_devices() {
        let data: Vec<f32> = edgy::<f32>(&mut rng, rows * cols, 50.0);
        let loops = |waves: u64, bits: u32, format: &str| {
            let per_item = iron_kernels::dequant::units_per_workitem(bits) as u64;
            let units = (rows * cols / 16) as u64;
            assert!(
                waves * u64::from(d.wave) * per_item < units,
                "{} {format}: {waves} waves cover the {units} units without looping",
                d.gfx
            );
        };
        let mxfp4 = QuantizedTensor::<MxFp4>::quantize(&data, rows, cols).unwrap();
        loops(check_decoding(&d, &mxfp4, "one compute unit"), 4, "mxfp4");
        let nvfp4 = QuantizedTensor::<Nvfp4>::quantize(&data, rows, cols).unwrap();
        loops(check_decoding(&d, &nvfp4, "one compute unit"), 4, "nvfp4");
        let mxfp8 = QuantizedTensor::<MxFp8E4M3>::quantize(&data, rows, cols).unwrap();
        loops(check_decoding(&d, &mxfp8, "one compute unit"), 8, "mxfp8");
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxfp4() {
    check_format::<MxFp4>(61);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxfp6_e2m3() {
    check_format::<MxFp6E2M3>(62);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxfp6_e3m2() {
    check_format::<MxFp6E3M2>(63);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxfp8_e4m3() {
    check_format::<MxFp8E4M3>(64);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxfp8_e5m2() {
    check_format::<MxFp8E5M2>(65);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mxint8() {
    check_format::<MxInt8>(66);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn nvfp4() {
    check_format::<Nvfp4>(67);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_that_do_not_fit_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let s = d.device.default_stream();
    let data = vec![1.5f32; 2 * 64];
    let tensor = QuantizedTensor::<MxFp4>::quantize(&data, 2, 64).unwrap();
    let on_device = DeviceQuantizedTensor::upload(&d.device, &tensor).unwrap();
    let mut out = poisoned_floats::<f32>(&d.device, 127 - GUARD);
    let error = d.library.dequant(&s, &on_device, &mut out).unwrap_err();
    assert_eq!(
        error.to_string(),
        "dequant: out holds 127 elements, rows * cols = 128"
    );

    let bytes = |n: usize| DeviceBuffer::from_slice(&d.device, &vec![0u8; n]).unwrap();
    let error = DeviceQuantizedTensor::<MxFp8E4M3>::from_parts(2, 48, bytes(96), bytes(3), 1.0)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "DeviceQuantizedTensor::from_parts: mxfp8_e4m3 needs cols to be a multiple of its block length 32, got 48"
    );
    let error =
        DeviceQuantizedTensor::<Nvfp4>::from_parts(2, 48, bytes(47), bytes(6), 1.0).unwrap_err();
    assert_eq!(
        error.to_string(),
        "DeviceQuantizedTensor::from_parts: elements holds 47 elements, blocks * block bytes = 48"
    );
    let error =
        DeviceQuantizedTensor::<MxInt8>::from_parts(3, 64, bytes(192), bytes(5), 1.0).unwrap_err();
    assert_eq!(
        error.to_string(),
        "DeviceQuantizedTensor::from_parts: scales holds 5 elements, blocks = 6"
    );
    d.dispatches(&[]);
}
