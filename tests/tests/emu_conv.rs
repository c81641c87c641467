//! Convolutions of `iron::library` on every emulated gfx against the f64 oracle's per-element
//! bounds (`iron_tests::oracle::conv`: the f32 sum's error bound, then one rounding to the output
//! type, so f16 and bf16 results may be half an ulp of their format off plus the f32 sum's error):
//! causal depthwise 1-D convolutions of every width 1 to 8 with and without bias and SiLU, over row
//! lengths on and off the kernel's 8-output chunks (1, below 8, across waves and workgroups) and
//! more rows than a grid has in y; the streaming form fed in pieces, which must reproduce the full
//! convolution bit for bit and leave the last inputs as its state; 2-D convolutions in both layouts
//! over seeded shapes with odd sizes, per-side padding, strides, dilations, groups and depthwise
//! filters, on the direct kernel and (f16, bf16) on the implicit GEMM; every output poisoned with a
//! guard zone; bad shapes refused before anything runs.

mod common;

use std::time::Instant;

use common::{
    GUARD, LibraryDevice, TestFloat, assert_floats_written, library_devices, poisoned_floats, rng,
    upload,
};
use iron::DeviceBuffer;
use iron::library::{
    Activation, Conv1dShape, Conv2dPath, Conv2dShape, ConvFloat, ConvLayout, Filter, LibraryError,
    bf16, f16,
};
use iron_tests::oracle::Expected;
use iron_tests::oracle::conv::{self, Conv1d, Conv2d};
use rand::Rng;
use rand::rngs::StdRng;

/// A float type under test.
trait ConvTest: TestFloat + ConvFloat {}
impl ConvTest for f32 {}
impl ConvTest for f16 {}
impl ConvTest for bf16 {}

/// `n` values of magnitude between 1/64 and 1, either sign: no subnormals in any type (gfx90a's
/// 16-bit MFMAs would flush them) and sums that cancel.
fn values<T: TestFloat>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            let magnitude = rng.random_range(1.0f32 / 64.0..=1.0);
            T::from_f32(if rng.random_bool(0.5) {
                magnitude
            } else {
                -magnitude
            })
        })
        .collect()
}

/// The exact values of `data`.
fn exact<T: TestFloat>(data: &[T]) -> Vec<f64> {
    data.iter().map(|v| v.value()).collect()
}

/// Checks `got[..expected.len()]` against the oracle and the guard zone after it.
fn check_output<T: TestFloat>(got: &[T], expected: &[Expected], context: &str) {
    assert_floats_written(got, expected.len(), context);
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            e.accepts(g.value()),
            "{context}: element {i} = {} but expected {} +- {}",
            g.value(),
            e.value,
            e.error
        );
    }
}

/// Runs `body` on every device, printing how long each took.
fn on_every_device(test: &str, mut body: impl FnMut(&LibraryDevice)) {
    for d in library_devices() {
        let start = Instant::now();
        body(&d);
        eprintln!(
            "{test} on {}: {:.2} s",
            d.gfx,
            start.elapsed().as_secs_f64()
        );
    }
}

/// A bias of `n` values half of the time.
fn maybe_bias<T: TestFloat>(rng: &mut StdRng, n: usize) -> Option<Vec<T>> {
    rng.random_bool(0.5).then(|| values(rng, n))
}

/// Which optional parts of the 1-D convolution a case uses.
#[derive(Clone, Copy, Debug)]
struct Conv1dParts {
    bias: bool,
    silu: bool,
    /// One input of each row is +infinity, which must reach exactly the outputs whose window
    /// holds it (a filter padded with zero taps would make NaN of the outputs after them).
    infinite: bool,
}

fn conv1d_case<T: ConvTest>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    shape: Conv1dShape,
    parts: Conv1dParts,
) {
    let Conv1dShape {
        batch,
        channels,
        length,
        width,
    } = shape;
    let Conv1dParts {
        bias,
        silu,
        infinite,
    } = parts;
    let context = format!("{} conv1d {:?} {shape:?} {parts:?}", d.gfx, T::FORMAT);
    let n = batch * channels * length;
    let mut x = values::<T>(rng, n);
    if infinite {
        for row in x.chunks_mut(length) {
            row[rng.random_range(0..length)] = T::from_f32(f32::INFINITY);
        }
    }
    let w = values::<T>(rng, channels * width);
    let bias = bias.then(|| values::<T>(rng, channels));
    let stream = d.device.default_stream();
    let (dx, dw) = (upload(&d.device, &x), upload(&d.device, &w));
    let dbias = bias.as_ref().map(|b| upload(&d.device, b));
    let mut y = poisoned_floats::<T>(&d.device, n);
    let filter = Filter {
        weight: &dw,
        bias: dbias.as_ref(),
    };
    let activation = if silu {
        Activation::Silu
    } else {
        Activation::None
    };
    d.library
        .conv1d_causal(&stream, &dx, filter, &mut y, shape, activation)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let (xe, we, be) = (exact(&x), exact(&w), bias.as_deref().map(exact));
    let expected = conv::conv1d_causal(
        &Conv1d {
            x: &xe,
            w: &we,
            bias: be.as_deref(),
            shape: (batch, channels, length, width),
            silu,
        },
        T::FORMAT,
    );
    check_output(&y.to_vec().unwrap(), &expected, &context);
}

/// Row lengths of the 1-D cases: multiples of the 8 outputs a work-item computes (16-byte
/// rows: one chunk, one wave of wave32 and of wave64 and a bit, several workgroups) and others
/// (a single step, less than a chunk, odd sizes across waves and workgroups).
const CONV1D_WHOLE_LENGTHS: [usize; 5] = [8, 64, 264, 520, 4104];
const CONV1D_RAGGED_LENGTHS: [usize; 6] = [1, 3, 17, 70, 300, 2061];

fn conv1d_all<T: ConvTest>(d: &LibraryDevice, seed: u64) {
    let mut rng = rng(seed);
    for width in 1..=8 {
        for (i, lengths) in [&CONV1D_WHOLE_LENGTHS[..], &CONV1D_RAGGED_LENGTHS[..]]
            .into_iter()
            .enumerate()
        {
            let shape = Conv1dShape {
                batch: rng.random_range(1..=3),
                channels: rng.random_range(1..=6),
                length: lengths[(width + seed as usize) % lengths.len()],
                width,
            };
            let parts = Conv1dParts {
                bias: (width + i) % 2 == 0,
                silu: (width / 2 + i) % 2 == 0,
                infinite: false,
            };
            conv1d_case::<T>(d, &mut rng, shape, parts);
        }
    }
    for length in [1, 2, 7, 8, 9] {
        let shape = Conv1dShape {
            batch: 2,
            channels: 3,
            length,
            width: rng.random_range(1..=8),
        };
        let parts = Conv1dParts {
            bias: true,
            silu: length % 2 == 0,
            infinite: false,
        };
        conv1d_case::<T>(d, &mut rng, shape, parts);
    }
}

#[test]
fn conv1d_causal_infinite_inputs_reach_only_their_windows() {
    on_every_device("conv1d_causal infinities", |d| {
        let mut rng = rng(15);
        for width in 1..=8 {
            for length in [64, 70] {
                let shape = Conv1dShape {
                    batch: 2,
                    channels: 3,
                    length,
                    width,
                };
                let parts = Conv1dParts {
                    bias: width % 2 == 0,
                    silu: width % 3 == 0,
                    infinite: true,
                };
                conv1d_case::<f32>(d, &mut rng, shape, parts);
                conv1d_case::<bf16>(d, &mut rng, shape, parts);
            }
        }
    });
}

#[test]
fn conv1d_causal_matches_the_oracle() {
    on_every_device("conv1d_causal", |d| {
        conv1d_all::<f32>(d, 11);
        conv1d_all::<f16>(d, 12);
        conv1d_all::<bf16>(d, 13);
    });
}

#[test]
fn conv1d_causal_loops_over_rows_beyond_the_grid() {
    on_every_device("conv1d_causal rows", |d| {
        let mut rng = rng(14);
        // 65540 rows, more than the 65535 workgroups a grid has in y.
        let shape = Conv1dShape {
            batch: 2,
            channels: 32_770,
            length: 3,
            width: 3,
        };
        let parts = Conv1dParts {
            bias: true,
            silu: true,
            infinite: false,
        };
        conv1d_case::<f16>(d, &mut rng, shape, parts);
    });
}

/// Feeds a sequence to the streaming kernel in pieces and checks it against the full kernel.
fn streaming_case<T: ConvTest>(d: &LibraryDevice, rng: &mut StdRng, width: usize) {
    let (batch, channels, length) = (2, rng.random_range(1..=5), 11);
    let rows = batch * channels;
    let context = format!("{} conv1d step {:?} width {width}", d.gfx, T::FORMAT);
    let x = values::<T>(rng, rows * length);
    let w = values::<T>(rng, channels * width);
    let bias = maybe_bias::<T>(rng, channels);
    let stream = d.device.default_stream();
    let dw = upload(&d.device, &w);
    let dbias = bias.as_ref().map(|b| upload(&d.device, b));
    let filter = Filter {
        weight: &dw,
        bias: dbias.as_ref(),
    };
    let full_shape = Conv1dShape {
        batch,
        channels,
        length,
        width,
    };
    let mut full = poisoned_floats::<T>(&d.device, rows * length);
    d.library
        .conv1d_causal(
            &stream,
            &upload(&d.device, &x),
            filter,
            &mut full,
            full_shape,
            Activation::Silu,
        )
        .unwrap();
    let full = full.to_vec().unwrap();

    let held = width - 1;
    let mut state = upload(&d.device, &vec![T::from_f32(0.0); rows * held + GUARD]);
    let mut streamed = vec![T::from_f32(0.0); rows * length];
    let mut t = 0;
    for steps in [1, 1, 3, 2, 4].into_iter().cycle() {
        let steps = steps.min(length - t);
        let piece: Vec<T> = (0..rows)
            .flat_map(|r| x[r * length + t..r * length + t + steps].to_vec())
            .collect();
        let mut y = poisoned_floats::<T>(&d.device, rows * steps);
        let shape = Conv1dShape {
            length: steps,
            ..full_shape
        };
        d.library
            .conv1d_causal_step(
                &stream,
                &upload(&d.device, &piece),
                filter,
                &mut state,
                &mut y,
                shape,
                Activation::Silu,
            )
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        let y = y.to_vec().unwrap();
        assert_floats_written(&y, rows * steps, &context);
        for r in 0..rows {
            streamed[r * length + t..r * length + t + steps]
                .copy_from_slice(&y[r * steps..(r + 1) * steps]);
        }
        t += steps;
        if t == length {
            break;
        }
    }
    for (i, (s, f)) in streamed.iter().zip(&full).enumerate() {
        assert_eq!(
            s.bits(),
            f.bits(),
            "{context}: output {i} differs from the full kernel's"
        );
    }
    let state = state.to_vec().unwrap();
    for r in 0..rows {
        for j in 0..held {
            let want = x[r * length + length - held + j];
            assert_eq!(
                state[r * held + j].bits(),
                want.bits(),
                "{context}: state {r}, {j}"
            );
        }
    }
    assert!(
        state[rows * held..].iter().all(|v| v.bits() == 0),
        "{context}: guard of the state"
    );
}

#[test]
fn conv1d_streaming_continues_the_full_convolution() {
    on_every_device("conv1d_causal_step", |d| {
        let mut rng = rng(21);
        for width in 1..=8 {
            streaming_case::<f32>(d, &mut rng, width);
        }
        for width in [2, 4, 7] {
            streaming_case::<f16>(d, &mut rng, width);
            streaming_case::<bf16>(d, &mut rng, width);
        }
    });
}

/// A seeded 2-D shape: one of a few kinds (plain, grouped, depthwise, strided and dilated),
/// odd sizes, padding on each side between 0 and 2.
fn random_shape(rng: &mut StdRng, layout: ConvLayout, kind: usize, wide: bool) -> Conv2dShape {
    let groups = match kind % 3 {
        0 => 1,
        1 => 2,
        _ => 3,
    };
    let per_group = if wide {
        (rng.random_range(4..=16), rng.random_range(16..=72))
    } else {
        (rng.random_range(1..=3), rng.random_range(1..=3))
    };
    let (c_group, k_group) = if kind == 3 { (1, 1) } else { per_group };
    let groups = if kind == 3 {
        rng.random_range(3..=6)
    } else {
        groups
    };
    let kernel = [rng.random_range(1..=3), rng.random_range(1..=4)];
    let stride = [rng.random_range(1..=2), rng.random_range(1..=3)];
    let dilation = [rng.random_range(1..=2), rng.random_range(1..=2)];
    let mut pad = || (rng.random_range(0..=2), rng.random_range(0..=2));
    let padding = [pad(), pad()];
    let input = [rng.random_range(3..=9), rng.random_range(4..=11)];
    Conv2dShape {
        layout,
        batch: rng.random_range(1..=2),
        input,
        in_channels: c_group * groups,
        out_channels: k_group * groups,
        groups,
        kernel,
        stride,
        padding,
        dilation,
    }
}

/// Runs one 2-D convolution on `path` and checks it; returns whether the shape was runnable.
fn conv2d_case<T: ConvTest>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    shape: Conv2dShape,
    path: Conv2dPath,
) {
    let context = format!("{} conv2d {path:?} {:?} {shape:?}", d.gfx, T::FORMAT);
    let x = values::<T>(rng, shape.input_len().unwrap());
    let w = values::<T>(rng, shape.weight_len().unwrap());
    let bias = maybe_bias::<T>(rng, shape.out_channels);
    let stream = d.device.default_stream();
    let (dx, dw) = (upload(&d.device, &x), upload(&d.device, &w));
    let dbias = bias.as_ref().map(|b| upload(&d.device, b));
    let n = shape.output_len().unwrap();
    let mut y = poisoned_floats::<T>(&d.device, n);
    let filter = Filter {
        weight: &dw,
        bias: dbias.as_ref(),
    };
    d.library
        .conv2d_on(&stream, path, &dx, filter, &mut y, &shape)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let (xe, we, be) = (exact(&x), exact(&w), bias.as_deref().map(exact));
    let problem = Conv2d {
        x: &xe,
        w: &we,
        bias: be.as_deref(),
        nhwc: shape.layout == ConvLayout::Nhwc,
        batch: shape.batch,
        channels: (shape.in_channels, shape.out_channels),
        groups: shape.groups,
        input: (shape.input[0], shape.input[1]),
        kernel: (shape.kernel[0], shape.kernel[1]),
        stride: (shape.stride[0], shape.stride[1]),
        padding: shape.padding,
        dilation: (shape.dilation[0], shape.dilation[1]),
    };
    let (oh, ow) = problem.output();
    assert_eq!(shape.output().unwrap(), [oh, ow], "{context}: output size");
    check_output(
        &y.to_vec().unwrap(),
        &conv::conv2d(&problem, T::FORMAT),
        &context,
    );
}

fn conv2d_shapes<T: ConvTest>(d: &LibraryDevice, seed: u64, path: Conv2dPath, wide: bool) {
    let mut rng = rng(seed);
    for layout in [ConvLayout::Nchw, ConvLayout::Nhwc] {
        for kind in 0..4 {
            let shape = random_shape(&mut rng, layout, kind, wide);
            conv2d_case::<T>(d, &mut rng, shape, path);
        }
    }
}

#[test]
fn conv2d_direct_matches_the_oracle() {
    on_every_device("conv2d direct", |d| {
        conv2d_shapes::<f32>(d, 31, Conv2dPath::Direct, false);
        conv2d_shapes::<f16>(d, 32, Conv2dPath::Direct, false);
        conv2d_shapes::<bf16>(d, 33, Conv2dPath::Direct, false);
    });
}

/// A shape wide enough for the implicit GEMM.
fn wide_shape(layout: ConvLayout) -> Conv2dShape {
    Conv2dShape::new(layout, 1, [8, 8], 32, 32, [3, 3]).with_padding(1)
}

/// Fixed implicit-GEMM shapes: more output pixels than a row tile (64) and more channels than
/// a column tile (64); channel counts and reductions that are multiples of 8 (the 16-byte
/// gathers) next to ones that are not.
fn gemm_shapes() -> [Conv2dShape; 3] {
    let nhwc = Conv2dShape::new(ConvLayout::Nhwc, 2, [9, 13], 8, 70, [3, 3]).with_padding(1);
    [
        Conv2dShape {
            stride: [1, 2],
            ..nhwc
        },
        Conv2dShape {
            groups: 2,
            in_channels: 16,
            out_channels: 36,
            dilation: [2, 1],
            ..nhwc
        },
        Conv2dShape {
            padding: [(0, 2), (1, 0)],
            ..Conv2dShape::new(ConvLayout::Nchw, 1, [7, 10], 16, 20, [3, 3])
        },
    ]
}

#[test]
fn conv2d_implicit_gemm_matches_the_oracle() {
    on_every_device("conv2d implicit GEMM", |d| {
        let available = d
            .library
            .conv2d_path::<f16>(&wide_shape(ConvLayout::Nchw))
            .unwrap()
            == Conv2dPath::ImplicitGemm;
        assert!(available, "{}: every gfx has the implicit GEMM", d.gfx);
        conv2d_shapes::<f16>(d, 41, Conv2dPath::ImplicitGemm, true);
        conv2d_shapes::<bf16>(d, 42, Conv2dPath::ImplicitGemm, true);
        let mut rng = rng(43);
        for shape in gemm_shapes().into_iter().chain(gemm_edge_shapes()) {
            conv2d_case::<f16>(d, &mut rng, shape, Conv2dPath::ImplicitGemm);
            conv2d_case::<bf16>(d, &mut rng, shape, Conv2dPath::ImplicitGemm);
        }
    });
}

/// The implicit GEMM stages its tiles through LDS without bank conflicts (the emulator's model:
/// 128 bytes of lanes at a time, one dword per bank and cycle), in its stores and its fragment
/// reads, in both layouts: interior shapes whose row, column and K tiles are all whole (128
/// output pixels, 128 channels, K = 64 * 9).
#[test]
fn conv2d_implicit_gemm_stages_without_bank_conflicts() {
    on_every_device("conv2d implicit GEMM LDS", |d| {
        let mut rng = rng(44);
        for (layout, kernel) in [
            (ConvLayout::Nchw, "conv2d_gemm_nchw_f16"),
            (ConvLayout::Nhwc, "conv2d_gemm_nhwc_f16"),
        ] {
            let shape = Conv2dShape::new(layout, 2, [8, 8], 64, 128, [3, 3]).with_padding(1);
            d.clear_counters();
            conv2d_case::<f16>(d, &mut rng, shape, Conv2dPath::ImplicitGemm);
            let dispatches = d.emulator.take_counters();
            let names: Vec<&str> = dispatches.iter().map(|(name, _)| name.as_str()).collect();
            assert_eq!(names, [kernel], "{}: the dispatches", d.gfx);
            let c = &dispatches[0].1;
            assert!(c.lds_accesses > 0, "{} {kernel}: LDS used", d.gfx);
            assert_eq!(
                c.lds_bank_conflict_cycles, 0,
                "{} {kernel}: LDS bank-conflict cycles over {} accesses",
                d.gfx, c.lds_accesses
            );
        }
    });
}

/// Implicit-GEMM edges where the gather reads nothing real: no input channels (`K = 0`: the
/// output is the bias alone), and an input with no rows whose output is all padding.
fn gemm_edge_shapes() -> [Conv2dShape; 3] {
    [
        Conv2dShape::new(ConvLayout::Nchw, 1, [5, 6], 0, 20, [3, 3]).with_padding(1),
        Conv2dShape::new(ConvLayout::Nhwc, 2, [0, 5], 8, 24, [1, 1]).with_padding(1),
        Conv2dShape::new(ConvLayout::Nchw, 1, [0, 3], 16, 16, [1, 3]).with_padding(1),
    ]
}

#[test]
fn conv2d_picks_the_path() {
    for d in library_devices() {
        let library = &d.library;
        let wide = wide_shape(ConvLayout::Nhwc);
        assert_eq!(
            library.conv2d_path::<f32>(&wide).unwrap(),
            Conv2dPath::Direct
        );
        let depthwise = Conv2dShape { groups: 32, ..wide };
        assert_eq!(
            library.conv2d_path::<bf16>(&depthwise).unwrap(),
            Conv2dPath::Direct
        );
        if d.gfx.starts_with("gfx9") {
            assert_eq!(
                library.conv2d_path::<bf16>(&wide).unwrap(),
                Conv2dPath::ImplicitGemm
            );
        }
    }
}

#[test]
fn bad_shapes_are_refused() {
    let d = library_devices().remove(0);
    let stream = d.device.default_stream();
    let small = upload(&d.device, &[1.0f32; 8]);
    let mut out = DeviceBuffer::<f32>::alloc(&d.device, 8).unwrap();
    let shape = Conv1dShape {
        batch: 1,
        channels: 1,
        length: 8,
        width: 9,
    };
    let err = d
        .library
        .conv1d_causal(
            &stream,
            &small,
            Filter::new(&small),
            &mut out,
            shape,
            Activation::None,
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "conv1d_causal: width = 9 must be 1 to 8");
    let shape = Conv1dShape {
        length: 9,
        width: 4,
        ..shape
    };
    let err = d
        .library
        .conv1d_causal(
            &stream,
            &small,
            Filter::new(&small),
            &mut out,
            shape,
            Activation::None,
        )
        .unwrap_err();
    assert!(
        matches!(err, LibraryError::BufferTooShort { buffer: "x", .. }),
        "{err}"
    );
    let grouped = Conv2dShape {
        groups: 3,
        ..Conv2dShape::new(ConvLayout::Nchw, 1, [2, 2], 2, 2, [1, 1])
    };
    let err = d
        .library
        .conv2d(&stream, &small, Filter::new(&small), &mut out, &grouped)
        .unwrap_err();
    assert!(err.to_string().contains("groups = 3"), "{err}");
    let plain = Conv2dShape::new(ConvLayout::Nchw, 1, [2, 2], 2, 2, [1, 1]);
    let err = d
        .library
        .conv2d_on(
            &stream,
            Conv2dPath::ImplicitGemm,
            &small,
            Filter::new(&small),
            &mut out,
            &plain,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("implicit GEMM needs f16 or bf16"),
        "{err}"
    );
}
