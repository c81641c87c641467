//! The matrix-core GEMMs (`Library::gemm`, `gemm_fp8`, `gemm_mx`, `gemm_mx_decoded`) on the
//! emulator for every emulated gfx of the build (CDNA's MFMA; RDNA's WMMA in wave32 and
//! wave64), against the oracle's f64 products of the exact input values: f16 and bf16 inputs in
//! all four layout pairs to f32, bf16 and f16 outputs; FP8 in every encoding (the gfx's own
//! through its FP8 instruction, the others and mixed pairs decoded); the MX formats on gfx950's
//! scaled MFMA and on the decoding path everywhere. Shapes cover one element, tails in every
//! dimension, and several workgroup tiles (128) in M and N and several K tiles; epilogues cover
//! alpha, beta (with `C` read) and the bias, and outputs start poisoned with a guard zone after
//! them. On interior tiles, every kernel family of every gfx (16-bit in all four layout pairs)
//! must read each operand tile once with 16-byte loads and stage it through LDS without bank
//! conflicts, as the emulator counts them.

mod common;

use common::{GUARD, LibraryDevice, TestFloat, library_devices, poisoned_floats, rng, upload};
use iron::DeviceBuffer;
use iron::library::quant::host::QuantizedTensor;
use iron::library::quant::{
    BlockFormat as QuantFormat, E8M0, ElementFormat, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3,
    MxFp8E5M2, pack,
};
use iron::library::{
    DeviceQuantizedTensor, Epilogue, Fp8Format, Fp8Matrix, GemmInput, GemmOutput, GemmPath,
    GemmShape, GemmTile, Layout, LibraryError, MxGemmFormat, bf16, f16,
};
use iron_tests::oracle::dequant::{BlockFormat, block_values};
use iron_tests::oracle::gemm::{Problem, from_col_major, gemm as reference};
use iron_tests::oracle::{Expected, Format, Overflow};
use rand::Rng;
use rand::rngs::StdRng;

/// `(m, n, k)`: one element; tails smaller than an instruction tile; exactly one workgroup tile;
/// tails of a workgroup tile; two and three workgroup tiles in M and N with K tiles of every
/// kind; a workgroup tile inside the matrices in every layout (dimensions multiples of 8) with
/// whole K tiles, beside partial ones.
const SHAPES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (17, 33, 65),
    (64, 64, 64),
    (100, 70, 96),
    (257, 130, 40),
    (130, 260, 33),
    (200, 136, 96),
    (128, 64, 192),
];

/// `(m, n, k)` of the MX tests: `k` a multiple of 32, with one, two and three 128-wide K tiles
/// and partial ones.
const MX_SHAPES: [(usize, usize, usize); 5] = [
    (1, 1, 32),
    (17, 33, 64),
    (64, 64, 128),
    (100, 70, 96),
    (257, 130, 288),
];

/// The gfx of a test device's name (`gfx1100-w64` is a wave64 build of gfx1100).
fn gfx_of(d: &LibraryDevice) -> &str {
    d.gfx.split('-').next().unwrap_or(&d.gfx)
}

/// The epilogue variants, by index: `(alpha, beta, with bias)`.
const EPILOGUES: [(f32, f32, bool); 4] = [
    (1.0, 0.0, false),
    (0.5, -1.5, true),
    (-2.0, 0.0, true),
    (1.25, 1.0, false),
];

/// An epilogue's exact values and bias buffer: the old `C` (whose buffer [`Scene::new`] returns
/// beside it, poisoned when `beta == 0`) and the bias.
struct Scene {
    c_values: Vec<f64>,
    bias: Option<DeviceBuffer<f32>>,
    bias_values: Option<Vec<f64>>,
    alpha: f32,
    beta: f32,
    tile: GemmTile,
}

impl Scene {
    /// Variant `variant` of [`EPILOGUES`] for an `m x n` output, and the output buffer.
    fn new<O: TestFloat>(
        d: &LibraryDevice,
        rng: &mut StdRng,
        (m, n): (usize, usize),
        variant: usize,
    ) -> (DeviceBuffer<O>, Scene) {
        let (alpha, beta, with_bias) = EPILOGUES[variant % EPILOGUES.len()];
        let (c, c_values) = if beta == 0.0 {
            (poisoned_floats::<O>(&d.device, m * n), vec![0.0; m * n])
        } else {
            let mut old: Vec<O> = (0..m * n)
                .map(|_| O::from_f32(rng.random_range(-4.0..4.0)))
                .collect();
            let values = old.iter().map(|v| v.value()).collect();
            old.extend(std::iter::repeat_n(O::from_bits(O::POISON), GUARD));
            (upload(&d.device, &old), values)
        };
        let bias: Option<Vec<f32>> =
            with_bias.then(|| (0..n).map(|_| rng.random_range(-8.0..8.0)).collect());
        let scene = Scene {
            c_values,
            bias_values: bias
                .as_ref()
                .map(|b| b.iter().map(|&x| f64::from(x)).collect()),
            bias: bias.map(|b| DeviceBuffer::from_slice(&d.device, &b).unwrap()),
            alpha,
            beta,
            tile: GemmTile::Auto,
        };
        (c, scene)
    }

    /// The epilogue the library takes.
    fn epilogue(&self) -> Epilogue<'_> {
        Epilogue {
            alpha: self.alpha,
            beta: self.beta,
            bias: self.bias.as_ref(),
            tile: self.tile,
        }
    }

    /// Checks `c` against the oracle for logical row-major `a` (`[m, k]`) and `b` (`[k, n]`),
    /// with `alpha` the f32 the kernel multiplies by, and that the guard after it is untouched.
    fn check<O: TestFloat>(
        &self,
        context: &str,
        c: &DeviceBuffer<O>,
        (a, b): (&[f64], &[f64]),
        alpha: f32,
        shape: (usize, usize, usize),
    ) {
        let (m, n, _) = shape;
        let problem = Problem {
            a,
            b,
            c: &self.c_values,
            bias: self.bias_values.as_deref(),
            alpha: f64::from(alpha),
            beta: f64::from(self.beta),
            shape,
        };
        let want = reference(&problem, O::FORMAT);
        let got = c.to_vec().unwrap();
        check_outputs(context, &got[..m * n], &want);
        if let Some(i) = got[m * n..].iter().position(|v| v.bits() != O::POISON) {
            panic!("{context}: guard element {i} past the end was overwritten");
        }
    }
}

/// Compares outputs with the oracle's expectations.
fn check_outputs<O: TestFloat>(context: &str, got: &[O], want: &[Expected]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        assert_ne!(
            g.bits(),
            O::POISON,
            "{context}: element {i} was not written"
        );
        assert!(
            e.accepts(g.value()),
            "{context}: C[{i}] = {:e}, want {e:?}",
            g.value()
        );
    }
}

/// The value the matrix instructions of `gfx` read for a 16-bit input `v`: gfx90a's f16 and
/// bf16 MFMAs flush subnormal inputs to zero (AMD's "MI200 MFMA behavior specifics"), the others
/// (and RDNA's WMMAs) keep them.
fn matrix_input<T: TestFloat>(gfx: &str, v: T) -> f64 {
    let (value, format) = (v.value(), T::FORMAT);
    let min_normal = format.min_subnormal() * f64::from(1u32 << format.mantissa_bits());
    if gfx == "gfx90a" && value.abs() < min_normal {
        0.0
    } else {
        value
    }
}

/// A random `rows x cols` operand of `T` stored in `layout` (uniform in `[-2, 2]`, with a
/// subnormal of `T` at every 97th element), and its values row-major as `gfx`'s matrix
/// instructions read them.
fn operand<T: TestFloat>(
    gfx: &str,
    rng: &mut StdRng,
    (rows, cols): (usize, usize),
    layout: Layout,
) -> (Vec<T>, Vec<f64>) {
    let tiny = T::FORMAT.min_subnormal() as f32;
    let stored: Vec<T> = (0..rows * cols)
        .map(|i| {
            T::from_f32(if i % 97 == 50 {
                tiny * rng.random_range(1..=5) as f32
            } else {
                rng.random_range(-2.0..2.0)
            })
        })
        .collect();
    let values: Vec<f64> = stored.iter().map(|&v| matrix_input(gfx, v)).collect();
    let logical = match layout {
        Layout::RowMajor => values,
        Layout::ColMajor => from_col_major(&values, rows, cols),
    };
    (stored, logical)
}

/// The four layout pairs of A and B.
const LAYOUT_PAIRS: [(Layout, Layout); 4] = [
    (Layout::RowMajor, Layout::RowMajor),
    (Layout::RowMajor, Layout::ColMajor),
    (Layout::ColMajor, Layout::RowMajor),
    (Layout::ColMajor, Layout::ColMajor),
];

/// `gemm::<T, O>` over every shape, shape `s` in layout pair `(s + seed) % 4` with blocks of 64
/// or 128 by the parity of `s + seed / 2`: over the three outputs of an input type (seeds in a
/// row), every shape meets three of the four pairs, over both input types all four, and every
/// shape and every layout pair meets both tiles.
fn half_gemm<T: TestFloat + GemmInput, O: TestFloat + GemmOutput>(d: &LibraryDevice, seed: u64) {
    let mut rng = rng(seed);
    for (s, &(m, n, k)) in SHAPES.iter().enumerate() {
        let l = (s + seed as usize) % LAYOUT_PAIRS.len();
        let (a_layout, b_layout) = LAYOUT_PAIRS[l];
        let (a, av) = operand::<T>(gfx_of(d), &mut rng, (m, k), a_layout);
        let (b, bv) = operand::<T>(gfx_of(d), &mut rng, (k, n), b_layout);
        let (mut c, mut scene) = Scene::new::<O>(d, &mut rng, (m, n), s + l);
        scene.tile = if (s + seed as usize / 2).is_multiple_of(2) {
            GemmTile::Block64
        } else {
            GemmTile::Block128
        };
        let (a, b) = (upload(&d.device, &a), upload(&d.device, &b));
        d.library
            .gemm(
                &d.device.default_stream(),
                (&a, a_layout),
                (&b, b_layout),
                &mut c,
                GemmShape { m, n, k },
                scene.epilogue(),
            )
            .unwrap();
        let context = format!(
            "{} gemm {:?} -> {:?} {m}x{n}x{k}, A {a_layout:?}, B {b_layout:?}, epilogue {}, {:?}",
            d.gfx,
            T::FORMAT,
            O::FORMAT,
            (s + l) % EPILOGUES.len(),
            scene.tile
        );
        scene.check(&context, &c, (&av, &bv), scene.alpha, (m, n, k));
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn f16_and_bf16_inputs_in_every_layout_to_every_output() {
    for d in library_devices() {
        half_gemm::<f16, f32>(&d, 1);
        half_gemm::<f16, f16>(&d, 2);
        half_gemm::<f16, bf16>(&d, 3);
        half_gemm::<bf16, f32>(&d, 4);
        half_gemm::<bf16, bf16>(&d, 5);
        half_gemm::<bf16, f16>(&d, 6);
    }
}

/// The oracle's format of an FP8 encoding.
fn oracle_format(format: Fp8Format) -> Format {
    match format {
        Fp8Format::E4M3Fn => Format::E4m3fn,
        Fp8Format::E5M2 => Format::E5m2,
        Fp8Format::E4M3Fnuz => Format::E4m3fnuz,
        Fp8Format::E5M2Fnuz => Format::E5m2fnuz,
    }
}

/// `count` random FP8 codes of `format` (values uniform in `[-3, 3]`, rounded, so small ones
/// are subnormal), and their values.
fn fp8_codes(rng: &mut StdRng, format: Fp8Format, count: usize) -> (Vec<u8>, Vec<f64>) {
    let oracle = oracle_format(format);
    let codes: Vec<u8> = (0..count)
        .map(|_| oracle.encode(rng.random_range(-3.0..3.0), Overflow::Saturate) as u8)
        .collect();
    let values = codes.iter().map(|&c| oracle.decode(u32::from(c))).collect();
    (codes, values)
}

/// The path `gemm_fp8` must take on `gfx` for formats `a` and `b`.
fn expected_fp8_path(gfx: &str, a: Fp8Format, b: Fp8Format) -> GemmPath {
    let native = match gfx {
        "gfx942" => [Fp8Format::E4M3Fnuz, Fp8Format::E5M2Fnuz],
        "gfx950" | "gfx1201" => [Fp8Format::E4M3Fn, Fp8Format::E5M2],
        _ => return GemmPath::Decoded,
    };
    if a == b && native.contains(&a) {
        GemmPath::Fp8Hardware
    } else {
        GemmPath::Decoded
    }
}

/// `gemm_fp8::<O>` with A in `fa` and B in `fb` over every shape.
fn fp8_gemm<O: TestFloat + GemmOutput>(
    d: &LibraryDevice,
    seed: u64,
    (fa, fb): (Fp8Format, Fp8Format),
) {
    let mut rng = rng(seed);
    let path = d.library.fp8_gemm_path(fa, fb).unwrap();
    assert_eq!(
        path,
        expected_fp8_path(gfx_of(d), fa, fb),
        "{}: the path of {fa:?} x {fb:?}",
        d.gfx
    );
    for (s, &(m, n, k)) in SHAPES.iter().enumerate() {
        let (a, av) = fp8_codes(&mut rng, fa, m * k);
        let (bt, btv) = fp8_codes(&mut rng, fb, n * k);
        let bv = from_col_major(&btv, k, n);
        let (scale_a, scale_b) = (0.5f32, 3.0f32 + s as f32);
        let (mut c, mut scene) = Scene::new::<O>(d, &mut rng, (m, n), s);
        // The FP8 instructions' path in blocks of 64 or 128 by the parity of `s + seed` (each
        // shape meets both over the two seeds of a gfx's encoding); the decoding path has
        // blocks of 128 only.
        scene.tile = match path {
            GemmPath::Fp8Hardware if (s + seed as usize).is_multiple_of(2) => GemmTile::Block64,
            _ => GemmTile::Block128,
        };
        let (a, bt) = (
            DeviceBuffer::from_slice(&d.device, &a).unwrap(),
            DeviceBuffer::from_slice(&d.device, &bt).unwrap(),
        );
        d.library
            .gemm_fp8(
                &d.device.default_stream(),
                Fp8Matrix {
                    codes: &a,
                    format: fa,
                    scale: scale_a,
                },
                Fp8Matrix {
                    codes: &bt,
                    format: fb,
                    scale: scale_b,
                },
                &mut c,
                GemmShape { m, n, k },
                scene.epilogue(),
            )
            .unwrap();
        let context = format!(
            "{} gemm_fp8 {fa:?} x {fb:?} -> {:?} {m}x{n}x{k}, epilogue {}, {:?}",
            d.gfx,
            O::FORMAT,
            s % EPILOGUES.len(),
            scene.tile
        );
        let alpha = scene.alpha * scale_a * scale_b;
        scene.check(&context, &c, (&av, &bv), alpha, (m, n, k));
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn fp8_inputs_on_the_fp8_instruction_or_decoded() {
    use Fp8Format::{E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz};
    for d in library_devices() {
        fp8_gemm::<f32>(&d, 11, (E4M3Fnuz, E4M3Fnuz));
        fp8_gemm::<bf16>(&d, 12, (E5M2Fnuz, E5M2Fnuz));
        fp8_gemm::<f32>(&d, 13, (E4M3Fn, E4M3Fn));
        fp8_gemm::<f16>(&d, 14, (E5M2, E5M2));
        fp8_gemm::<f32>(&d, 15, (E4M3Fn, E5M2));
        fp8_gemm::<bf16>(&d, 16, (E5M2Fnuz, E4M3Fn));
    }
}

/// An MX format as the tests handle it: the oracle's decoder for it.
trait MxCase: MxGemmFormat {
    /// The oracle's block format.
    const ORACLE: BlockFormat;
}

impl MxCase for MxFp8E4M3 {
    const ORACLE: BlockFormat = BlockFormat::MxFp8E4M3;
}
impl MxCase for MxFp8E5M2 {
    const ORACLE: BlockFormat = BlockFormat::MxFp8E5M2;
}
impl MxCase for MxFp6E2M3 {
    const ORACLE: BlockFormat = BlockFormat::MxFp6E2M3;
}
impl MxCase for MxFp6E3M2 {
    const ORACLE: BlockFormat = BlockFormat::MxFp6E3M2;
}
impl MxCase for MxFp4 {
    const ORACLE: BlockFormat = BlockFormat::MxFp4;
}

/// A random `[rows, cols]` tensor quantized to `B` on the device (row `r` spans about
/// `2^(r % 7 - 3)`, so blocks get different scales), and its exact values row-major, decoded by
/// the oracle.
fn mx_tensor<B: MxCase>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    (rows, cols): (usize, usize),
) -> (DeviceQuantizedTensor<B>, Vec<f64>) {
    let values: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let magnitude = 2f32.powi((i / cols % 7) as i32 - 3);
            rng.random_range(-magnitude..magnitude)
        })
        .collect();
    let tensor = QuantizedTensor::<B>::quantize(&values, rows, cols).unwrap();
    let exact = block_values(B::ORACLE, tensor.elements(), tensor.scales(), 1.0);
    (
        DeviceQuantizedTensor::upload(&d.device, &tensor).unwrap(),
        exact,
    )
}

/// `gemm_mx::<FA, FB, O>` (or `gemm_mx_decoded` when `decoded`) over every MX shape. Where
/// `gemm_mx` takes the decoding path anyway, it runs the single-workgroup shapes only: the
/// decoding kernels' multi-tile shapes are `gemm_mx_decoded`'s test.
fn mx_gemm<FA: MxCase, FB: MxCase, O: TestFloat + GemmOutput>(
    d: &LibraryDevice,
    seed: u64,
    decoded: bool,
) {
    let mut rng = rng(seed);
    let path = if decoded {
        GemmPath::Decoded
    } else {
        d.library.mx_gemm_path::<FA, FB>().unwrap()
    };
    let hardware = gfx_of(d) == "gfx950" && FA::ORACLE == FB::ORACLE;
    if !decoded {
        assert_eq!(
            path == GemmPath::MxHardware,
            hardware,
            "{}: the MX path",
            d.gfx
        );
    }
    let shapes = if decoded || hardware {
        &MX_SHAPES[..]
    } else {
        &MX_SHAPES[..MX_SHAPES.len() - 1]
    };
    for (s, &(m, n, k)) in shapes.iter().enumerate() {
        let (a, av) = mx_tensor::<FA>(d, &mut rng, (m, k));
        let (bt, btv) = mx_tensor::<FB>(d, &mut rng, (n, k));
        let bv = from_col_major(&btv, k, n);
        let (mut c, scene) = Scene::new::<O>(d, &mut rng, (m, n), s + 1);
        let stream = d.device.default_stream();
        if decoded {
            d.library
                .gemm_mx_decoded(&stream, &a, &bt, &mut c, scene.epilogue())
                .unwrap();
        } else {
            d.library
                .gemm_mx(&stream, &a, &bt, &mut c, scene.epilogue())
                .unwrap();
        }
        let context = format!(
            "{} gemm_mx ({path:?}) {:?} x {:?} -> {:?} {m}x{n}x{k}, epilogue {}",
            d.gfx,
            FA::ORACLE,
            FB::ORACLE,
            O::FORMAT,
            (s + 1) % EPILOGUES.len()
        );
        scene.check(&context, &c, (&av, &bv), scene.alpha, (m, n, k));
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mx_formats_on_the_scaled_mfma_or_decoded() {
    for d in library_devices() {
        mx_gemm::<MxFp8E4M3, MxFp8E4M3, f32>(&d, 21, false);
        mx_gemm::<MxFp8E5M2, MxFp8E5M2, bf16>(&d, 22, false);
        mx_gemm::<MxFp6E2M3, MxFp6E2M3, f32>(&d, 23, false);
        mx_gemm::<MxFp6E3M2, MxFp6E3M2, f16>(&d, 24, false);
        mx_gemm::<MxFp4, MxFp4, f32>(&d, 25, false);
        mx_gemm::<MxFp8E4M3, MxFp4, bf16>(&d, 26, false);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn mx_formats_decoded_in_software_everywhere() {
    for d in library_devices() {
        mx_gemm::<MxFp8E4M3, MxFp8E4M3, f32>(&d, 31, true);
        mx_gemm::<MxFp6E3M2, MxFp6E3M2, bf16>(&d, 32, true);
        mx_gemm::<MxFp4, MxFp4, f32>(&d, 33, true);
        mx_gemm::<MxFp4, MxFp6E2M3, f16>(&d, 34, true);
    }
}

/// Checks the decoding kernels' `C[i]` (one column) against the values of A's codes `i`:
/// NaN for NaN, the same value otherwise (either zero for a zero).
fn check_code_values(context: &str, got: &[f32], want: &[f64]) {
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let same = if w.is_nan() {
            g.is_nan()
        } else {
            f64::from(g) == w
        };
        assert!(same, "{context}: code {i:#x} gave {g}, its value is {w}");
    }
}

/// `rows` rows of `k` codes, row `i` holding `first(i)` then zero codes.
fn first_column_codes(rows: usize, k: usize, first: impl Fn(usize) -> u8) -> Vec<u8> {
    (0..rows * k)
        .map(|e| if e % k == 0 { first(e / k) } else { 0 })
        .collect()
}

/// The FP8 decoding kernels over every code of `fa`: A holds code `i` in row `i`'s first
/// column, B (in another format, so that the decoding path runs everywhere) is 1.0 then zeros.
fn fp8_every_code(d: &LibraryDevice, (fa, fb): (Fp8Format, Fp8Format)) {
    assert_eq!(d.library.fp8_gemm_path(fa, fb).unwrap(), GemmPath::Decoded);
    let (m, k) = (256, 32);
    let one = oracle_format(fb).encode(1.0, Overflow::Saturate) as u8;
    let a = first_column_codes(m, k, |i| i as u8);
    let b = first_column_codes(1, k, |_| one);
    let want: Vec<f64> = (0..m as u32).map(|c| oracle_format(fa).decode(c)).collect();
    let (a, b) = (
        DeviceBuffer::from_slice(&d.device, &a).unwrap(),
        DeviceBuffer::from_slice(&d.device, &b).unwrap(),
    );
    let mut c = poisoned_floats::<f32>(&d.device, m);
    let matrix = |codes, format| Fp8Matrix {
        codes,
        format,
        scale: 1.0,
    };
    d.library
        .gemm_fp8(
            &d.device.default_stream(),
            matrix(&a, fa),
            matrix(&b, fb),
            &mut c,
            GemmShape { m, n: 1, k },
            Epilogue::default(),
        )
        .unwrap();
    let got = c.to_vec().unwrap();
    check_code_values(&format!("{} {fa:?}", d.gfx), &got[..m], &want);
}

/// The decoding kernels over every code of MX format `F`'s elements, with unit block scales,
/// as [`fp8_every_code`] lays them out (B in MXFP8 E4M3).
fn mx_every_code<F: MxCase>(d: &LibraryDevice) {
    let bits = <F as QuantFormat>::Element::BITS;
    let (m, k) = (1 << bits, 32);
    let codes = first_column_codes(m, k, |i| i as u8);
    let mut elements = vec![0; pack::packed_len(bits, m * k)];
    pack::pack_codes(bits, &codes, &mut elements);
    let scales = vec![E8M0::ONE; m];
    let want: Vec<f64> = block_values(F::ORACLE, &elements, &scales, 1.0)
        .into_iter()
        .step_by(k)
        .collect();
    let upload = |bytes: &[u8]| DeviceBuffer::from_slice(&d.device, bytes).unwrap();
    let a = DeviceQuantizedTensor::<F>::from_parts(m, k, upload(&elements), upload(&scales), 1.0)
        .unwrap();
    let one = Format::E4m3fn.encode(1.0, Overflow::Saturate) as u8;
    let b = DeviceQuantizedTensor::<MxFp8E4M3>::from_parts(
        1,
        k,
        upload(&first_column_codes(1, k, |_| one)),
        upload(&[E8M0::ONE]),
        1.0,
    )
    .unwrap();
    let mut c = poisoned_floats::<f32>(&d.device, m);
    d.library
        .gemm_mx_decoded(
            &d.device.default_stream(),
            &a,
            &b,
            &mut c,
            Epilogue::default(),
        )
        .unwrap();
    let got = c.to_vec().unwrap();
    check_code_values(&format!("{} {:?}", d.gfx, F::ORACLE), &got[..m], &want);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn every_code_of_every_format_decodes_to_its_value() {
    use Fp8Format::{E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz};
    for d in library_devices() {
        fp8_every_code(&d, (E4M3Fn, E5M2));
        fp8_every_code(&d, (E5M2, E4M3Fn));
        fp8_every_code(&d, (E4M3Fnuz, E5M2Fnuz));
        fp8_every_code(&d, (E5M2Fnuz, E4M3Fnuz));
        mx_every_code::<MxFp6E2M3>(&d);
        mx_every_code::<MxFp6E3M2>(&d);
        mx_every_code::<MxFp4>(&d);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn nan_inputs_poison_their_row_and_beta_zero_never_reads_c() {
    let (m, n, k) = (40, 24, 50);
    for d in library_devices() {
        let mut rng = rng(41);
        let (mut a, _) = operand::<bf16>(gfx_of(&d), &mut rng, (m, k), Layout::RowMajor);
        let (b, _) = operand::<bf16>(gfx_of(&d), &mut rng, (k, n), Layout::RowMajor);
        a[7 * k + 13] = bf16::NAN;
        let (a, b) = (upload(&d.device, &a), upload(&d.device, &b));
        // C holds NaN (the poison) everywhere: with beta = 0 it must not leak into the result.
        let mut c = poisoned_floats::<f32>(&d.device, m * n);
        let shape = GemmShape { m, n, k };
        let stream = d.device.default_stream();
        d.library
            .gemm(
                &stream,
                (&a, Layout::RowMajor),
                (&b, Layout::RowMajor),
                &mut c,
                shape,
                Epilogue::default(),
            )
            .unwrap();
        let got = c.to_vec().unwrap();
        for (i, v) in got[..m * n].iter().enumerate() {
            assert_eq!(v.is_nan(), i / n == 7, "{}: C[{i}] = {v}", d.gfx);
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_nan_block_scale_poisons_its_row_on_both_mx_paths() {
    let (m, n, k) = (20, 18, 96);
    for d in library_devices() {
        let mut rng = rng(44);
        let values: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (elements, mut scales) = QuantizedTensor::<MxFp8E4M3>::quantize(&values, m, k)
            .unwrap()
            .into_parts();
        scales[5 * k / 32 + 1] = 0xFF;
        let a = DeviceQuantizedTensor::<MxFp8E4M3>::from_parts(
            m,
            k,
            DeviceBuffer::from_slice(&d.device, &elements).unwrap(),
            DeviceBuffer::from_slice(&d.device, &scales).unwrap(),
            1.0,
        )
        .unwrap();
        let (b, _) = mx_tensor::<MxFp8E4M3>(&d, &mut rng, (n, k));
        let stream = d.device.default_stream();
        for decoded in [false, true] {
            let mut c = poisoned_floats::<f32>(&d.device, m * n);
            if decoded {
                d.library
                    .gemm_mx_decoded(&stream, &a, &b, &mut c, Epilogue::default())
            } else {
                d.library
                    .gemm_mx(&stream, &a, &b, &mut c, Epilogue::default())
            }
            .unwrap();
            let got = c.to_vec().unwrap();
            for (i, v) in got[..m * n].iter().enumerate() {
                assert_eq!(
                    v.is_nan(),
                    i / n == 5,
                    "{} decoded {decoded}: C[{i}] = {v}",
                    d.gfx
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn empty_products_write_beta_c_plus_bias_and_empty_outputs_nothing() {
    for d in library_devices() {
        let mut rng = rng(42);
        let stream = d.device.default_stream();
        let (m, n) = (70, 33);
        let a = upload(&d.device, &[f16::ONE; 1]);
        let b = upload(&d.device, &[f16::ONE; 1]);
        // k = 0: C = beta * C + bias.
        let (mut c, scene) = Scene::new::<f32>(&d, &mut rng, (m, n), 1);
        let shape = GemmShape { m, n, k: 0 };
        d.library
            .gemm(
                &stream,
                (&a, Layout::ColMajor),
                (&b, Layout::RowMajor),
                &mut c,
                shape,
                scene.epilogue(),
            )
            .unwrap();
        scene.check(
            &format!("{} k = 0", d.gfx),
            &c,
            (&[], &[]),
            scene.alpha,
            (m, n, 0),
        );
        // m = 0 or n = 0: nothing is launched or written.
        for shape in [GemmShape { m: 0, n, k: 0 }, GemmShape { m, n: 0, k: 0 }] {
            let mut c = poisoned_floats::<bf16>(&d.device, 0);
            d.library
                .gemm(
                    &stream,
                    (&a, Layout::RowMajor),
                    (&b, Layout::RowMajor),
                    &mut c,
                    shape,
                    Epilogue::default(),
                )
                .unwrap();
            common::assert_floats_written(&c.to_vec().unwrap(), 0, &format!("{} {shape:?}", d.gfx));
        }
        d.clear_counters();
    }
}

/// `GemmTile`'s documented promise: blocks of 64 and of 128 give the same bits (shapes whose
/// `k` ends a K tile of 64 halfway, and one that fills it; random operands, so no zero sums).
#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn blocks_of_64_and_128_give_the_same_bits() {
    for d in library_devices() {
        let mut rng = rng(61);
        for (m, n, k) in [(100, 70, 96), (130, 65, 128)] {
            for (a_layout, b_layout) in LAYOUT_PAIRS {
                let (a, _) = operand::<bf16>(gfx_of(&d), &mut rng, (m, k), a_layout);
                let (b, _) = operand::<bf16>(gfx_of(&d), &mut rng, (k, n), b_layout);
                let (a, b) = (upload(&d.device, &a), upload(&d.device, &b));
                let bits = |tile| {
                    let mut c = poisoned_floats::<f32>(&d.device, m * n);
                    d.library
                        .gemm(
                            &d.device.default_stream(),
                            (&a, a_layout),
                            (&b, b_layout),
                            &mut c,
                            GemmShape { m, n, k },
                            Epilogue {
                                tile,
                                ..Epilogue::default()
                            },
                        )
                        .unwrap();
                    let c = c.to_vec().unwrap();
                    common::assert_floats_written(&c, m * n, &format!("{} {tile:?}", d.gfx));
                    c[..m * n].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                assert_eq!(
                    bits(GemmTile::Block64),
                    bits(GemmTile::Block128),
                    "{} {m}x{n}x{k} A {a_layout:?} B {b_layout:?}",
                    d.gfx
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_that_do_not_fit_are_refused_before_anything_runs() {
    let d = library_devices().remove(0);
    let stream = d.device.default_stream();
    let a = upload(&d.device, &[f16::ONE; 6]);
    let mut c = poisoned_floats::<f32>(&d.device, 4);
    let shape = GemmShape { m: 2, n: 2, k: 4 };
    let err = d
        .library
        .gemm(
            &stream,
            (&a, Layout::RowMajor),
            (&a, Layout::RowMajor),
            &mut c,
            shape,
            Epilogue::default(),
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "gemm: a holds 6 elements, m * k = 8");
    let bias = DeviceBuffer::from_slice(&d.device, &[0.0f32; 1]).unwrap();
    let b = upload(&d.device, &[f16::ONE; 8]);
    let epilogue = Epilogue {
        bias: Some(&bias),
        ..Epilogue::default()
    };
    let shape = GemmShape { m: 2, n: 2, k: 3 };
    let err = d
        .library
        .gemm(
            &stream,
            (&a, Layout::RowMajor),
            (&b, Layout::RowMajor),
            &mut c,
            shape,
            epilogue,
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "gemm: bias holds 1 elements, n = 2");
    let too_large = [
        (
            GemmShape {
                m: 128 * 65536,
                n: 1,
                k: 0,
            },
            GemmTile::Auto,
            "gemm: ceil(m / 128) (row tiles) = 65536 exceeds the kernel's limit of 65535",
        ),
        (
            GemmShape {
                m: 64 * 65536,
                n: 1,
                k: 0,
            },
            GemmTile::Block64,
            "gemm: ceil(m / 64) (row tiles) = 65536 exceeds the kernel's limit of 65535",
        ),
        (
            GemmShape {
                m: 1,
                n: (1 << 31) / (128 * 4) + 1,
                k: 0,
            },
            GemmTile::Block64,
            "gemm: n = 4194305 exceeds the kernel's limit of 4194304",
        ),
    ];
    for (shape, tile, message) in too_large {
        let mut big = DeviceBuffer::<f32>::alloc(&d.device, shape.m * shape.n).unwrap();
        let err = d
            .library
            .gemm(
                &stream,
                (&a, Layout::RowMajor),
                (&a, Layout::RowMajor),
                &mut big,
                shape,
                Epilogue {
                    tile,
                    ..Epilogue::default()
                },
            )
            .unwrap_err();
        assert!(matches!(err, LibraryError::TooLarge { .. }), "{err}");
        assert_eq!(err.to_string(), message);
    }
    let mut rng = rng(43);
    let (a, _) = mx_tensor::<MxFp4>(&d, &mut rng, (4, 64));
    let (b, _) = mx_tensor::<MxFp4>(&d, &mut rng, (4, 32));
    let err = d
        .library
        .gemm_mx(&stream, &a, &b, &mut c, Epilogue::default())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "gemm_mx: A is [4, 64] and B is [4, 32]: both must have k columns (B is given as [n, k])"
    );
    let (b, _) = mx_tensor::<MxFp4>(&d, &mut rng, (4, 64));
    let small = Epilogue {
        tile: GemmTile::Block64,
        ..Epilogue::default()
    };
    let err = d
        .library
        .gemm_mx(&stream, &a, &b, &mut c, small)
        .unwrap_err();
    assert!(matches!(err, LibraryError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains("blocks of 128 x 128 only"),
        "{err}"
    );
    assert!(d.emulator.take_counters().is_empty(), "nothing ran");
}

/// What the emulator counted of one dispatch.
struct Counted {
    /// Wave-instructions: all, VALU, matrix (MFMA or WMMA), vector memory loads, LDS.
    instructions: [u64; 5],
    /// Global bytes read and written.
    read: u64,
    written: u64,
    /// Vector global accesses by width (1, 2, 4, 8, 12, 16 bytes).
    widths: [u64; 6],
    /// LDS accesses and bank-conflict cycles.
    lds: (u64, u64),
    waves: u64,
}

/// The counters of the one dispatch since the last call, checking it ran `kernel`
/// (instruction classes indexed in the emulator's order: VALU 3, matrix 4, loads 5, LDS 8).
/// The suffix naming a layout pair's 16-bit GEMM kernel: A's layout, then B's.
fn layout_suffix(a: Layout, b: Layout) -> String {
    let letter = |layout| match layout {
        Layout::RowMajor => 'r',
        Layout::ColMajor => 'c',
    };
    [letter(a), letter(b)].into_iter().collect()
}

fn dispatch(d: &LibraryDevice, kernel: &str) -> Counted {
    let mut dispatches = d.emulator.take_counters();
    assert_eq!(dispatches.len(), 1, "{}: one dispatch", d.gfx);
    let (name, c) = dispatches.remove(0);
    assert_eq!(name, kernel, "{}: the kernel", d.gfx);
    let i = c.instructions;
    Counted {
        instructions: [c.total_instructions(), i[3], i[4], i[5], i[8]],
        read: c.global_bytes_read,
        written: c.global_bytes_written,
        widths: c.global_access_widths,
        lds: (c.lds_accesses, c.lds_bank_conflict_cycles),
        waves: c.waves,
    }
}

/// The matrix instruction of the 16-bit GEMM kernels on `gfx` (also the decoding kernels'):
/// `(tile, k_step)` of a `tile x tile x k_step` instruction.
fn half_instruction(gfx: &str) -> (u64, u64) {
    match gfx {
        "gfx950" => (32, 16),
        "gfx90a" | "gfx942" => (32, 8),
        _ => (16, 16),
    }
}

/// Checks one interior dispatch's traffic, in blocks of `block` rows and columns: global reads
/// are the A and B tiles each workgroup stages (A once per column block, B once per row block,
/// plus `extra` bytes) and the kernel arguments; writes are `C` once; the matrix instructions
/// are those of the product's `tile x tile x k_step` tiles. Prints the counters for the record.
#[allow(clippy::too_many_arguments, reason = "a dispatch's expected traffic")]
fn check_traffic(
    d: &LibraryDevice,
    what: &str,
    counted: &Counted,
    (a_bytes, b_bytes, extra): (u64, u64, u64),
    (m, n, k): (u64, u64, u64),
    block: u64,
    (tile, k_step): (u64, u64),
    c_bytes: u64,
) {
    let (row_tiles, col_tiles) = (m.div_ceil(block), n.div_ceil(block));
    let staged = a_bytes * col_tiles + b_bytes * row_tiles + extra;
    let kernarg = common::KERNARG_BYTES_PER_WAVE * counted.waves;
    assert!(
        counted.read >= staged && counted.read <= staged + kernarg,
        "{} {what}: read {} bytes, staging needs {staged}",
        d.gfx,
        counted.read
    );
    assert_eq!(
        counted.written,
        c_bytes * m * n,
        "{} {what}: bytes written",
        d.gfx
    );
    let [total, valu, matrix, loads, lds] = counted.instructions;
    assert_eq!(
        matrix,
        (m / tile) * (n / tile) * (k / k_step),
        "{} {what}: matrix instructions",
        d.gfx
    );
    println!(
        "{} {what} {m}x{n}x{k}: {total} wave-instructions (VALU {valu}, matrix {matrix}, loads {loads}, \
         LDS {lds}), read {} B for {} B of operands, load widths 1/2/4/8/12/16 B {:?}, \
         LDS {} accesses, {} bank-conflict cycles",
        d.gfx,
        counted.read,
        a_bytes + b_bytes,
        counted.widths,
        counted.lds.0,
        counted.lds.1,
    );
}

/// Runs `gemm_mx::<F, F>` (or `gemm_mx_decoded`) on an `m x n x k` product and checks its
/// traffic (`kernel` with `(tile, k_step)` matrix instructions, as [`check_traffic`] takes
/// them; `reads_per_scale`: how often each block's scale code is read), returning its counters.
fn mx_traffic<F: MxCase>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    (m, n, k): (usize, usize, usize),
    decoded: bool,
    (kernel, instruction, reads_per_scale): (&str, (u64, u64), usize),
) -> Counted {
    let (a, _) = mx_tensor::<F>(d, rng, (m, k));
    let (bt, _) = mx_tensor::<F>(d, rng, (n, k));
    let mut c = poisoned_floats::<f32>(&d.device, m * n);
    let stream = d.device.default_stream();
    d.clear_counters();
    if decoded {
        d.library
            .gemm_mx_decoded(&stream, &a, &bt, &mut c, Epilogue::default())
            .unwrap();
    } else {
        d.library
            .gemm_mx(&stream, &a, &bt, &mut c, Epilogue::default())
            .unwrap();
    }
    let counters = dispatch(d, kernel);
    let bits = F::BLOCK_BYTES * 8 / F::BLOCK_LEN;
    let operand = (m * k * bits / 8 + reads_per_scale * m * k / 32) as u64;
    check_traffic(
        d,
        kernel,
        &counters,
        (operand, operand, 0),
        (m as u64, n as u64, k as u64),
        128,
        instruction,
        4,
    );
    counters
}

/// Every GEMM kernel of every gfx on interior tiles (16-bit inputs in all four layout pairs, in
/// blocks of 128 and of 64, the gfx's FP8 path, gfx950's scaled MFMAs, the decoding path): each
/// workgroup reads each of its operand tiles once with 16-byte loads, and stages them through LDS
/// without bank conflicts (the emulator's model: 128 bytes of lanes at a time, one dword per bank
/// and cycle), in its writes and in its fragment reads.
#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn interior_tiles_stage_each_operand_tile_once_with_wide_loads_and_no_bank_conflicts() {
    let (m, n, k) = (256usize, 256usize, 256usize);
    let mut conflicted = Vec::new();
    for d in library_devices() {
        let mut rng = rng(51);
        let stream = d.device.default_stream();
        let gfx = gfx_of(&d);
        let mut check_conflicts = |what: &str, counters: &Counted| {
            if counters.lds.1 != 0 {
                conflicted.push(format!("{} {what}: {} cycles", d.gfx, counters.lds.1));
            }
        };
        let shape = (m as u64, n as u64, k as u64);
        let tiles = [
            (GemmTile::Block128, 128, ""),
            (GemmTile::Block64, 64, "_64"),
        ];
        for ((a_layout, b_layout), (tile, block, suffix)) in LAYOUT_PAIRS
            .into_iter()
            .flat_map(|pair| tiles.map(|tile| (pair, tile)))
        {
            let (a, _) = operand::<f16>(gfx_of(&d), &mut rng, (m, k), a_layout);
            let (b, _) = operand::<f16>(gfx_of(&d), &mut rng, (k, n), b_layout);
            let (a, b) = (upload(&d.device, &a), upload(&d.device, &b));
            let mut c = poisoned_floats::<f32>(&d.device, m * n);
            d.clear_counters();
            d.library
                .gemm(
                    &stream,
                    (&a, a_layout),
                    (&b, b_layout),
                    &mut c,
                    GemmShape { m, n, k },
                    Epilogue {
                        tile,
                        ..Epilogue::default()
                    },
                )
                .unwrap();
            let layouts = layout_suffix(a_layout, b_layout);
            let kernel = format!("gemm_f16_f32_{layouts}{suffix}");
            let counters = dispatch(&d, &kernel);
            let operand_bytes = (m * k * 2) as u64;
            let what = format!("{kernel} A {a_layout:?} B {b_layout:?}");
            check_traffic(
                &d,
                &what,
                &counters,
                (operand_bytes, operand_bytes, 0),
                shape,
                block,
                half_instruction(gfx),
                4,
            );
            // C is written in runs of 4 f32 (16 bytes) per lane where the accumulators hold
            // consecutive columns: everywhere but on gfx11, whose lanes hold every other row.
            let wide_stores = if gfx == "gfx1100" {
                0
            } else {
                (m * n * 4) as u64 / (u64::from(d.wave) * 16)
            };
            assert_eq!(
                counters.widths[5],
                counters.instructions[3] + wide_stores,
                "{}: every load is 16 bytes wide, and so is every store of C but on gfx11",
                d.gfx
            );
            check_conflicts(&what, &counters);
        }
        let format = match gfx {
            "gfx942" => Fp8Format::E4M3Fnuz,
            _ => Fp8Format::E4M3Fn,
        };
        let (a, _) = fp8_codes(&mut rng, format, m * k);
        let (bt, _) = fp8_codes(&mut rng, format, n * k);
        let (a, bt) = (
            DeviceBuffer::from_slice(&d.device, &a).unwrap(),
            DeviceBuffer::from_slice(&d.device, &bt).unwrap(),
        );
        let fp8 = |codes| Fp8Matrix {
            codes,
            format,
            scale: 1.0,
        };
        let (kernel, instruction) = match gfx {
            "gfx90a" | "gfx1100" => ("gemm_decoded_bf16", half_instruction(gfx)),
            "gfx942" => ("gemm_fp8_e4m3fnuz_bf16", (32, 16)),
            "gfx1201" => ("gemm_fp8_e4m3fn_bf16", (16, 16)),
            _ => ("gemm_fp8_e4m3fn_bf16", (32, 16)),
        };
        // The decoding kernels have blocks of 128 only.
        let fp8_tiles = if kernel.starts_with("gemm_decoded") {
            &tiles[..1]
        } else {
            &tiles[..]
        };
        for &(tile, block, suffix) in fp8_tiles {
            let mut c = poisoned_floats::<bf16>(&d.device, m * n);
            d.clear_counters();
            d.library
                .gemm_fp8(
                    &stream,
                    fp8(&a),
                    fp8(&bt),
                    &mut c,
                    GemmShape { m, n, k },
                    Epilogue {
                        tile,
                        ..Epilogue::default()
                    },
                )
                .unwrap();
            let kernel = format!("{kernel}{suffix}");
            let counters = dispatch(&d, &kernel);
            let bytes = (m * k) as u64;
            check_traffic(
                &d,
                &kernel,
                &counters,
                (bytes, bytes, 0),
                (m as u64, n as u64, k as u64),
                block,
                instruction,
                2,
            );
            check_conflicts(&kernel, &counters);
        }
        let shape = (m, n, k);
        // The decoding kernel reads each block's scale code once per 16-element unit: twice.
        let decoded = ("gemm_decoded_f32", half_instruction(gfx), 2);
        let counters = mx_traffic::<MxFp4>(&d, &mut rng, shape, true, decoded);
        check_conflicts("gemm_decoded_f32 MXFP4", &counters);
        if gfx == "gfx950" {
            let kernel = "gemm_mxfp8_e4m3_f32";
            let counters =
                mx_traffic::<MxFp8E4M3>(&d, &mut rng, shape, false, (kernel, (16, 128), 1));
            check_conflicts(kernel, &counters);
            let kernel = "gemm_mxfp6_e2m3_f32";
            let counters =
                mx_traffic::<MxFp6E2M3>(&d, &mut rng, shape, false, (kernel, (16, 128), 1));
            check_conflicts(kernel, &counters);
            let kernel = "gemm_mxfp4_f32";
            let counters = mx_traffic::<MxFp4>(&d, &mut rng, shape, false, (kernel, (16, 128), 1));
            check_conflicts(kernel, &counters);
        }
    }
    assert!(conflicted.is_empty(), "LDS bank conflicts: {conflicted:#?}");
}
