//! Convolutions: the causal depthwise 1-D convolution and its streaming step (f32, f16, bf16;
//! width 4, bias and SiLU, as in state-space models), the direct 2-D kernels at a depthwise 3x3
//! (the shape the library routes to them for 16-bit types) and the implicit-GEMM kernels at a
//! dense 3x3, each path forced through [`Library::conv2d_on`](iron::library::Library::conv2d_on),
//! NCHW and NHWC.

use super::{Demand, Family, Math, Runner, Sample};
use iron::library::{
    Activation, Conv1dShape, Conv2dPath, Conv2dShape, ConvFloat, ConvLayout, Filter, bf16, f16,
};

/// Channels of the 1-D convolutions.
const CONV1D_CHANNELS: usize = 1024;
/// Time steps of the full 1-D convolution.
const CONV1D_LENGTH: usize = 512;
/// Channels of the streaming step (one sequence, one new token): a large model's inner width.
const STEP_CHANNELS: usize = 8192;
/// Filter taps of the 1-D convolutions.
const CONV1D_WIDTH: usize = 4;
/// Image side of the depthwise 2-D convolution.
const DEPTHWISE_SIDE: usize = 56;
/// Channels (and groups) of the depthwise 2-D convolution.
const DEPTHWISE_CHANNELS: usize = 64;
/// Image side of the dense 2-D convolution.
const DENSE_SIDE: usize = 32;
/// Input channels of the dense 2-D convolution.
const DENSE_IN: usize = 64;
/// Output channels of the dense 2-D convolution.
const DENSE_OUT: usize = 128;

/// Runs every convolution kernel.
pub fn run(r: &mut Runner<'_>) {
    per_type::<f32>(r);
    per_type::<f16>(r);
    per_type::<bf16>(r);
}

fn per_type<T: ConvFloat + Sample>(r: &mut Runner<'_>) {
    conv1d::<T>(r);
    conv1d_step::<T>(r);
    let side = r.size.scale(DEPTHWISE_SIDE, 14);
    let dense_side = r.size.scale(DENSE_SIDE, 8);
    for layout in [ConvLayout::Nchw, ConvLayout::Nhwc] {
        let depthwise = Conv2dShape {
            groups: DEPTHWISE_CHANNELS,
            ..Conv2dShape::new(
                layout,
                1,
                [side, side],
                DEPTHWISE_CHANNELS,
                DEPTHWISE_CHANNELS,
                [3, 3],
            )
            .with_padding(1)
        };
        conv2d::<T>(r, depthwise, Conv2dPath::Direct);
        if T::SIZE == 2 {
            let dense = Conv2dShape::new(
                layout,
                1,
                [dense_side, dense_side],
                DENSE_IN,
                DENSE_OUT,
                [3, 3],
            )
            .with_padding(1);
            conv2d::<T>(r, dense, Conv2dPath::ImplicitGemm);
        }
    }
}

/// A demand on vector arithmetic: `taps` multiply-adds per output.
fn vector(label: String, min_bytes: u64, outputs: usize, taps: usize) -> Demand {
    Demand {
        label,
        min_bytes,
        flops: 2 * (outputs * taps) as u64,
        elements: outputs as u64,
        math: Math::Vector,
    }
}

/// `y = silu(bias + w * x)` over `[1, channels, length]`: x, the filter and the bias read once,
/// y written once.
fn conv1d<T: ConvFloat + Sample>(r: &mut Runner<'_>) {
    let shape = Conv1dShape {
        batch: 1,
        channels: r.size.scale(CONV1D_CHANNELS, 64),
        length: CONV1D_LENGTH,
        width: CONV1D_WIDTH,
    };
    let n = shape.channels * shape.length;
    r.measure(Family::Conv1d, |r| {
        let x = r.device_floats::<T>(n)?;
        let w = r.device_floats::<T>(shape.channels * shape.width)?;
        let b = r.device_floats::<T>(shape.channels)?;
        let mut y = r.zeros::<T>(n)?;
        let filter = Filter::new(&w).with_bias(&b);
        r.library
            .conv1d_causal(&r.stream, &x, filter, &mut y, shape, Activation::Silu)?;
        let filter_bytes = T::SIZE * (shape.channels * (shape.width + 1)) as u64;
        let label = format!(
            "conv1d_causal {} 1x{}x{} width {}",
            T::TYPE_NAME,
            shape.channels,
            shape.length,
            shape.width
        );
        let bytes = 2 * T::SIZE * n as u64 + filter_bytes;
        Ok(vector(label, bytes, n, shape.width))
    });
}

/// One decode step of one sequence: x, the filter, the bias and the state read once, y and the
/// state written once.
fn conv1d_step<T: ConvFloat + Sample>(r: &mut Runner<'_>) {
    let shape = Conv1dShape {
        batch: 1,
        channels: r.size.scale(STEP_CHANNELS, 512),
        length: 1,
        width: CONV1D_WIDTH,
    };
    let channels = shape.channels;
    let held = channels * (shape.width - 1);
    r.measure(Family::Conv1d, |r| {
        let x = r.device_floats::<T>(channels)?;
        let w = r.device_floats::<T>(channels * shape.width)?;
        let b = r.device_floats::<T>(channels)?;
        let mut state = r.device_floats::<T>(held)?;
        let mut y = r.zeros::<T>(channels)?;
        let filter = Filter::new(&w).with_bias(&b);
        r.library.conv1d_causal_step(
            &r.stream,
            &x,
            filter,
            &mut state,
            &mut y,
            shape,
            Activation::Silu,
        )?;
        let label = format!(
            "conv1d_causal_step {} 1x{channels}x1 width {}",
            T::TYPE_NAME,
            shape.width
        );
        let elements = 2 * channels + 2 * held + channels * (shape.width + 1);
        Ok(vector(
            label,
            T::SIZE * elements as u64,
            channels,
            shape.width,
        ))
    });
}

/// A 2-D convolution on `path`: x, the weights and the bias read once, y written once.
fn conv2d<T: ConvFloat + Sample>(r: &mut Runner<'_>, shape: Conv2dShape, path: Conv2dPath) {
    let family = match path {
        Conv2dPath::Direct => Family::Conv2dDirect,
        Conv2dPath::ImplicitGemm => Family::ConvGemm,
    };
    r.measure(family, |r| {
        let (inputs, weights, outputs) =
            (shape.input_len()?, shape.weight_len()?, shape.output_len()?);
        let x = r.device_floats::<T>(inputs)?;
        let w = r.device_floats::<T>(weights)?;
        let b = r.device_floats::<T>(shape.out_channels)?;
        let mut y = r.zeros::<T>(outputs)?;
        let filter = Filter::new(&w).with_bias(&b);
        r.library
            .conv2d_on(&r.stream, path, &x, filter, &mut y, &shape)?;
        let taps = shape.in_channels / shape.groups * shape.kernel[0] * shape.kernel[1];
        let [side, _] = shape.input;
        let label = format!(
            "conv2d {path:?} {:?} {} {side}x{side} {}->{} g{} 3x3",
            shape.layout,
            T::TYPE_NAME,
            shape.in_channels,
            shape.out_channels,
            shape.groups
        );
        let bytes = T::SIZE * (inputs + weights + shape.out_channels + outputs) as u64;
        let mut demand = vector(label, bytes, outputs, taps);
        if path == Conv2dPath::ImplicitGemm {
            demand.math = Math::Matrix16;
        }
        Ok(demand)
    });
}
