//! Convolutions (`device/kernels/src/conv1d.rs`, `conv2d.rs`, `conv_gemm.rs`), f32, f16 or bf16
//! in and out with f32 accumulation:
//! - [`Library::conv1d_causal`]: causal depthwise 1-D convolution of `[batch, channels, length]`
//!   with a `[channels, width]` filter (width 1 to 8), optional bias and fused SiLU: the short
//!   convolution of state-space and gated-delta models;
//! - [`Library::conv1d_causal_step`]: its streaming (decode) form over a few new steps, carrying
//!   the last `width - 1` inputs of each channel in a state updated in place;
//! - [`Library::conv2d`]: 2-D convolution (cross-correlation), NCHW or NHWC, any stride,
//!   padding (each side separately), dilation and group count, optional bias. f16 and bf16 run
//!   as an implicit GEMM on the matrix cores ([`Conv2dPath::ImplicitGemm`]) when the library's
//!   code object has those kernels and the groups are wide enough to fill its tiles; everything
//!   else runs the direct kernel ([`Conv2dPath::Direct`]). [`Library::conv2d_on`] takes the
//!   path explicitly.
//!
//! Every method computes the output shape on the host ([`Conv2dShape::output`]), checks the
//! buffers against the shapes and the sizes against the kernels' limits (tensors below 2^32
//! elements; 2-D: input and output height and width below 2^16; filter size, stride, dilation,
//! top and left padding below 256), and launches nothing when the output is empty.
//!
//! ```no_run
//! use iron::library::{Conv2dShape, ConvLayout, Filter, Library, f16};
//! use iron::{Device, DeviceBuffer};
//!
//! let device = Device::hip(0)?;
//! let library = Library::load_built(&device)?;
//! let stream = device.default_stream();
//! let shape = Conv2dShape::new(ConvLayout::Nhwc, 8, [32, 32], 64, 128, [3, 3]).with_padding(1);
//! let x = DeviceBuffer::from_slice(&device, &vec![f16::ONE; shape.input_len()?])?;
//! let w = DeviceBuffer::from_slice(&device, &vec![f16::ONE; shape.weight_len()?])?;
//! let mut y = DeviceBuffer::<f16>::alloc(&device, shape.output_len()?)?;
//! library.conv2d(&stream, &x, Filter::new(&w), &mut y, &shape)?;
//! # Ok::<(), iron::library::LibraryError>(())
//! ```

use iron_intrinsics::launch::KernelDecl;
use iron_kernels::conv::{FLAG_SILU, MAX_WIDTH, pack_bytes, pack_pair};
use iron_kernels::{conv_gemm, conv1d, conv2d};

use super::Library;
use super::dtype::{Float, bf16, f16};
use super::error::LibraryError;
use super::geometry::check_holds;
use crate::device::{DeviceBuffer, Stream, TypedKernel};
use crate::launch::{LaunchArg, LaunchConfig};

/// How a 2-D convolution's tensors are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvLayout {
    /// `x` `[batch, C, H, W]`, `w` `[K, C / groups, R, S]`, `y` `[batch, K, OH, OW]`.
    Nchw,
    /// `x` `[batch, H, W, C]`, `w` `[K, R, S, C / groups]`, `y` `[batch, OH, OW, K]`.
    Nhwc,
}

/// The kernel a 2-D convolution runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conv2dPath {
    /// One output element per work-item: every gfx and type.
    Direct,
    /// Implicit GEMM on the matrix cores: f16 and bf16, where the code object has the kernels.
    ImplicitGemm,
}

/// The activation fused into a 1-D convolution's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Activation {
    /// The convolution as it is.
    #[default]
    None,
    /// `v / (1 + e^-v)`.
    Silu,
}

/// A convolution's filter: its weights and optional bias (one value per output channel).
#[derive(Debug, Clone, Copy)]
pub struct Filter<'a, T> {
    /// The weights, in the layout the operation documents.
    pub weight: &'a DeviceBuffer<T>,
    /// The bias, or none.
    pub bias: Option<&'a DeviceBuffer<T>>,
}

impl<'a, T> Filter<'a, T> {
    /// Weights without a bias.
    pub fn new(weight: &'a DeviceBuffer<T>) -> Self {
        Filter { weight, bias: None }
    }

    /// The same weights with `bias`.
    pub fn with_bias(self, bias: &'a DeviceBuffer<T>) -> Self {
        Filter {
            bias: Some(bias),
            ..self
        }
    }
}

/// The shape of a causal depthwise 1-D convolution: `x` and `y` `[batch, channels, length]`,
/// the filter `[channels, width]`. For the streaming form `length` is the number of new steps
/// and the state is `[batch, channels, width - 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv1dShape {
    /// Sequences.
    pub batch: usize,
    /// Channels (each with its own filter).
    pub channels: usize,
    /// Time steps per sequence.
    pub length: usize,
    /// Filter taps, 1 to 8.
    pub width: usize,
}

/// The shape of a 2-D convolution. Padding is given per side; output sizes follow
/// ([`Conv2dShape::output`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv2dShape {
    /// The tensors' layout.
    pub layout: ConvLayout,
    /// Images.
    pub batch: usize,
    /// Input height and width.
    pub input: [usize; 2],
    /// Input channels `C`.
    pub in_channels: usize,
    /// Output channels `K`.
    pub out_channels: usize,
    /// Groups: dividing `C` and `K`; `groups = C = K` is depthwise.
    pub groups: usize,
    /// Filter height `R` and width `S`.
    pub kernel: [usize; 2],
    /// Vertical and horizontal stride.
    pub stride: [usize; 2],
    /// Zero rows `(top, bottom)` and columns `(left, right)` around the input.
    pub padding: [(usize, usize); 2],
    /// Vertical and horizontal dilation.
    pub dilation: [usize; 2],
}

impl Conv2dShape {
    /// A convolution of `batch` images of `input` (height, width) with `in_channels` channels
    /// into `out_channels` channels with a `kernel` (height, width) filter: stride 1, no
    /// padding, dilation 1, one group.
    pub fn new(
        layout: ConvLayout,
        batch: usize,
        input: [usize; 2],
        in_channels: usize,
        out_channels: usize,
        kernel: [usize; 2],
    ) -> Self {
        Conv2dShape {
            layout,
            batch,
            input,
            in_channels,
            out_channels,
            groups: 1,
            kernel,
            stride: [1, 1],
            padding: [(0, 0); 2],
            dilation: [1, 1],
        }
    }

    /// The same shape with `pad` zeros on every side.
    pub fn with_padding(self, pad: usize) -> Self {
        Conv2dShape {
            padding: [(pad, pad); 2],
            ..self
        }
    }

    /// The output height and width:
    /// `(input + before + after - dilation * (kernel - 1) - 1) / stride + 1` for each, or an
    /// error when a parameter is 0, the groups do not divide the channels, or the dilated
    /// filter is larger than the padded input.
    pub fn output(&self) -> Result<[usize; 2], LibraryError> {
        let bad = |detail: String| LibraryError::BadShape {
            operation: "conv2d",
            detail,
        };
        if self.groups == 0
            || !self.in_channels.is_multiple_of(self.groups)
            || !self.out_channels.is_multiple_of(self.groups)
        {
            return Err(bad(format!(
                "groups = {} must be positive and divide in_channels = {} and out_channels = {}",
                self.groups, self.in_channels, self.out_channels
            )));
        }
        let mut out = [0; 2];
        for (axis, name) in ["height", "width"].into_iter().enumerate() {
            let (kernel, stride, dilation) =
                (self.kernel[axis], self.stride[axis], self.dilation[axis]);
            if kernel == 0 || stride == 0 || dilation == 0 {
                return Err(bad(format!(
                    "kernel {name} = {kernel}, stride = {stride} and dilation = {dilation} must be positive"
                )));
            }
            let (before, after) = self.padding[axis];
            let padded = self.input[axis]
                .checked_add(before)
                .and_then(|v| v.checked_add(after));
            let span = (kernel - 1)
                .checked_mul(dilation)
                .and_then(|v| v.checked_add(1));
            match (padded, span) {
                (Some(padded), Some(span)) if span <= padded => {
                    out[axis] = (padded - span) / stride + 1;
                }
                _ => {
                    return Err(bad(format!(
                        "the dilated filter {name} {} exceeds the padded input {name} {}",
                        (kernel as u128 - 1) * dilation as u128 + 1,
                        self.input[axis] as u128 + before as u128 + after as u128
                    )));
                }
            }
        }
        Ok(out)
    }

    /// Elements of `x`: `batch * C * H * W`.
    pub fn input_len(&self) -> Result<usize, LibraryError> {
        product(
            "batch * in_channels * height * width",
            &[self.batch, self.in_channels, self.input[0], self.input[1]],
        )
    }

    /// Elements of the weights: `K * (C / groups) * R * S`.
    pub fn weight_len(&self) -> Result<usize, LibraryError> {
        self.output()?;
        product(
            "out_channels * in_channels / groups * R * S",
            &[
                self.out_channels,
                self.in_channels / self.groups,
                self.kernel[0],
                self.kernel[1],
            ],
        )
    }

    /// Elements of `y`: `batch * K * OH * OW`.
    pub fn output_len(&self) -> Result<usize, LibraryError> {
        let [oh, ow] = self.output()?;
        product(
            "batch * out_channels * out_height * out_width",
            &[self.batch, self.out_channels, oh, ow],
        )
    }
}

/// The product of `factors`, or an error naming `shape` when it overflows.
fn product(shape: &'static str, factors: &[usize]) -> Result<usize, LibraryError> {
    factors
        .iter()
        .try_fold(1usize, |p, &f| p.checked_mul(f))
        .ok_or_else(|| LibraryError::ShapeOverflow {
            operation: "conv",
            shape,
            value: factors
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" * "),
        })
}

/// Errors unless `value <= limit` (a kernel's field width).
fn check_limit(
    operation: &'static str,
    what: &'static str,
    value: usize,
    limit: u32,
) -> Result<u32, LibraryError> {
    u32::try_from(value)
        .ok()
        .filter(|&v| v <= limit)
        .ok_or(LibraryError::TooLarge {
            operation,
            what,
            value: value as u64,
            limit: u64::from(limit),
        })
}

/// The signature of `conv1d_causal_<t>`.
type Conv1d<T> = fn(*const T, *const T, *const T, *mut T, u32, u32, u32, u32, u32);
/// The signature of `conv1d_causal_step_<t>`.
type Conv1dStep<T> = fn(*const T, *const T, *const T, *mut T, *mut T, u32, u32, u32, u32, u32);
/// The signature of every 2-D convolution kernel.
type Conv2d<T> = fn(*const T, *const T, *const T, *mut T, u32, u32, u32, u32, u32, u32, u32, u32);

/// A float type of the convolution kernels: f32, f16, bf16.
pub trait ConvFloat: Float + sealed::ConvDecls {}

impl ConvFloat for f32 {}
impl ConvFloat for f16 {}
impl ConvFloat for bf16 {}

pub(crate) mod sealed {
    use super::*;

    /// The convolution kernels of one type.
    pub trait ConvDecls: Sized + 'static {
        /// `conv1d_causal_<t>`.
        const CONV1D: KernelDecl<Conv1d<Self>>;
        /// `conv1d_causal_step_<t>`.
        const CONV1D_STEP: KernelDecl<Conv1dStep<Self>>;
        /// `conv2d_direct_{nchw,nhwc}_<t>`.
        const DIRECT: [KernelDecl<Conv2d<Self>>; 2];
        /// `conv2d_gemm_{nchw,nhwc}_<t>`, for the 16-bit types.
        const GEMM: Option<[KernelDecl<Conv2d<Self>>; 2]>;
    }

    macro_rules! conv_decls {
        ($t:ident: $full:ident $step:ident [$nchw:ident $nhwc:ident] $gemm:expr) => {
            impl ConvDecls for $t {
                const CONV1D: KernelDecl<Conv1d<$t>> = conv1d::$full;
                const CONV1D_STEP: KernelDecl<Conv1dStep<$t>> = conv1d::$step;
                const DIRECT: [KernelDecl<Conv2d<$t>>; 2] = [conv2d::$nchw, conv2d::$nhwc];
                const GEMM: Option<[KernelDecl<Conv2d<$t>>; 2]> = $gemm;
            }
        };
    }

    conv_decls!(f32: conv1d_causal_f32 conv1d_causal_step_f32
        [conv2d_direct_nchw_f32 conv2d_direct_nhwc_f32] None);
    conv_decls!(f16: conv1d_causal_f16 conv1d_causal_step_f16
        [conv2d_direct_nchw_f16 conv2d_direct_nhwc_f16]
        Some([conv_gemm::conv2d_gemm_nchw_f16, conv_gemm::conv2d_gemm_nhwc_f16]));
    conv_decls!(bf16: conv1d_causal_bf16 conv1d_causal_step_bf16
        [conv2d_direct_nchw_bf16 conv2d_direct_nhwc_bf16]
        Some([conv_gemm::conv2d_gemm_nchw_bf16, conv_gemm::conv2d_gemm_nhwc_bf16]));
}

/// Work-items per workgroup of the 1-D and direct 2-D kernels at most (their declared bound).
const BLOCK: u32 = 256;
/// Largest grid dimension in y.
const MAX_GRID_Y: usize = 65535;
/// Channels per group (and reduction length) below which [`Library::conv2d`] runs the direct
/// kernel even where the implicit GEMM exists: its 64 x 64 tiles would be mostly empty.
const GEMM_MIN_CHANNELS: usize = 16;

/// The launch argument of a device buffer.
fn buffer_arg<T>(buffer: &DeviceBuffer<T>) -> LaunchArg<'_> {
    LaunchArg::Buffer {
        address: buffer.address(),
        device: buffer.device(),
    }
}

/// The launch argument of an optional bias: its buffer, or a null pointer on `device_of`'s
/// device.
fn bias_arg<'a, T>(
    bias: Option<&'a DeviceBuffer<T>>,
    device_of: &'a DeviceBuffer<T>,
) -> LaunchArg<'a> {
    bias.map_or(
        LaunchArg::Buffer {
            address: 0,
            device: device_of.device(),
        },
        buffer_arg,
    )
}

/// A `u32` launch argument.
fn u32_arg(value: u32) -> LaunchArg<'static> {
    LaunchArg::value(&value.to_le_bytes())
}

/// The wave size a resolved kernel was built for.
fn wave_of<F>(kernel: &TypedKernel<F>) -> u32 {
    kernel.kernel().metadata().wavefront_size.max(1)
}

/// A 1-D workgroup of up to [`BLOCK`] work-items for `items` parallel work-items: whole waves.
fn block_for(items: usize, wave: u32) -> u32 {
    let wave = wave.max(1);
    u32::try_from(items.next_multiple_of(wave as usize))
        .unwrap_or(BLOCK)
        .clamp(wave, BLOCK)
}

impl Library {
    /// Checks a 1-D convolution's shape and filter: `(rows, channels, length, width)` as the
    /// kernels' arguments.
    fn conv1d_args<T>(
        operation: &'static str,
        shape: &Conv1dShape,
        filter: &Filter<'_, T>,
    ) -> Result<(u32, u32, u32, u32, usize), LibraryError> {
        let Conv1dShape {
            batch,
            channels,
            length,
            width,
        } = *shape;
        if !(1..=MAX_WIDTH as usize).contains(&width) {
            return Err(LibraryError::BadShape {
                operation,
                detail: format!("width = {width} must be 1 to {MAX_WIDTH}"),
            });
        }
        let rows = product("batch * channels", &[batch, channels])?;
        let elements = product("batch * channels * length", &[rows, length])?;
        let taps = product("channels * width", &[channels, width])?;
        check_holds(operation, "weight", filter.weight, "channels * width", taps)?;
        if let Some(bias) = filter.bias {
            check_holds(operation, "bias", bias, "channels", channels)?;
        }
        Ok((
            check_limit(operation, "batch * channels", rows, u32::MAX)?,
            check_limit(operation, "channels", channels, u32::MAX)?,
            check_limit(operation, "length", length, u32::MAX - BLOCK)?,
            width as u32,
            check_limit(operation, "batch * channels * length", elements, u32::MAX)? as usize,
        ))
    }

    /// Causal depthwise 1-D convolution: `y[b][c][t] = act(bias[c] + sum_j w[c][j] *
    /// x[b][c][t - (width - 1) + j])`, inputs before `t = 0` zero; `x` and `y`
    /// `[batch, channels, length]`, the filter's weight `[channels, width]`, its bias
    /// `[channels]`.
    pub fn conv1d_causal<T: ConvFloat>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        filter: Filter<'_, T>,
        y: &mut DeviceBuffer<T>,
        shape: Conv1dShape,
        activation: Activation,
    ) -> Result<(), LibraryError> {
        const OP: &str = "conv1d_causal";
        let (rows, channels, length, width, elements) = Self::conv1d_args(OP, &shape, &filter)?;
        check_holds(OP, "x", x, "batch * channels * length", elements)?;
        check_holds(OP, "y", y, "batch * channels * length", elements)?;
        if elements == 0 {
            return Ok(());
        }
        let kernel = self.module().kernel(T::CONV1D)?;
        // Each work-item computes CAUSAL_OUTPUTS consecutive outputs of a row.
        let items = length.div_ceil(conv1d::CAUSAL_OUTPUTS);
        let block = block_for(items as usize, wave_of(&kernel));
        let grid = [items.div_ceil(block), rows.min(MAX_GRID_Y as u32), 1];
        let args = [
            buffer_arg(x),
            buffer_arg(filter.weight),
            bias_arg(filter.bias, filter.weight),
            buffer_arg(y),
            u32_arg(rows),
            u32_arg(channels),
            u32_arg(length),
            u32_arg(width),
            u32_arg(activation_flags(activation)),
        ];
        // SAFETY: conv1d_causal_<t> reads x and writes y (rows * length elements each), reads
        // channels * width weights and channels biases when a bias is given; every buffer holds
        // that (checked above), starts 16-byte aligned (device allocations do) and y is distinct
        // from the inputs. Workgroups are whole waves; rows are looped over in y.
        unsafe {
            stream.launch_untyped(
                kernel.kernel(),
                LaunchConfig::new(grid, [block, 1, 1]),
                &args,
            )?
        };
        Ok(())
    }

    /// Streaming causal depthwise 1-D convolution over `shape.length` new steps: `x` and `y`
    /// `[batch, channels, length]`, `state` `[batch, channels, width - 1]` the last inputs of
    /// each channel before `x` (oldest first; zeros at the start of a sequence), updated in place
    /// to the last inputs after it. The outputs equal [`Library::conv1d_causal`]'s over the
    /// whole sequence.
    #[allow(
        clippy::too_many_arguments,
        reason = "the convolution's operands, its state and shape"
    )]
    pub fn conv1d_causal_step<T: ConvFloat>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        filter: Filter<'_, T>,
        state: &mut DeviceBuffer<T>,
        y: &mut DeviceBuffer<T>,
        shape: Conv1dShape,
        activation: Activation,
    ) -> Result<(), LibraryError> {
        const OP: &str = "conv1d_causal_step";
        let (rows, channels, steps, width, elements) = Self::conv1d_args(OP, &shape, &filter)?;
        check_holds(OP, "x", x, "batch * channels * steps", elements)?;
        check_holds(OP, "y", y, "batch * channels * steps", elements)?;
        let held = product(
            "batch * channels * (width - 1)",
            &[rows as usize, shape.width - 1],
        )?;
        check_holds(OP, "state", state, "batch * channels * (width - 1)", held)?;
        check_limit(OP, "batch * channels * (width - 1)", held, u32::MAX)?;
        if elements == 0 {
            return Ok(());
        }
        let kernel = self.module().kernel(T::CONV1D_STEP)?;
        let block = block_for(rows as usize, wave_of(&kernel));
        let grid = [rows.div_ceil(block), 1, 1];
        let args = [
            buffer_arg(x),
            buffer_arg(filter.weight),
            bias_arg(filter.bias, filter.weight),
            buffer_arg(state),
            buffer_arg(y),
            u32_arg(rows),
            u32_arg(channels),
            u32_arg(steps),
            u32_arg(width),
            u32_arg(activation_flags(activation)),
        ];
        // SAFETY: conv1d_causal_step_<t> reads x and writes y (rows * steps elements each),
        // reads and writes state (rows * (width - 1)), reads the weights and the bias as the
        // full kernel does; every buffer holds that and the mutable ones are distinct.
        unsafe {
            stream.launch_untyped(
                kernel.kernel(),
                LaunchConfig::new(grid, [block, 1, 1]),
                &args,
            )?
        };
        Ok(())
    }

    /// The path [`Library::conv2d`] takes for `shape` with element type `T`: the implicit GEMM
    /// for f16 and bf16 where the code object has its kernels and both the channels per group
    /// (in and out) and the reduction length `C / groups * R * S` are at least 16; the direct
    /// kernel otherwise.
    pub fn conv2d_path<T: ConvFloat>(
        &self,
        shape: &Conv2dShape,
    ) -> Result<Conv2dPath, LibraryError> {
        shape.output()?;
        let per_group = (
            shape.in_channels / shape.groups,
            shape.out_channels / shape.groups,
        );
        let reduction = per_group
            .0
            .saturating_mul(shape.kernel[0])
            .saturating_mul(shape.kernel[1]);
        let wide = per_group.1 >= GEMM_MIN_CHANNELS && reduction >= GEMM_MIN_CHANNELS;
        Ok(if wide && self.gemm_kernel::<T>(shape.layout).is_some() {
            Conv2dPath::ImplicitGemm
        } else {
            Conv2dPath::Direct
        })
    }

    /// The implicit-GEMM kernel of `T` in `layout`, when the code object has it.
    fn gemm_kernel<T: ConvFloat>(&self, layout: ConvLayout) -> Option<KernelDecl<Conv2d<T>>> {
        let decl = T::GEMM?[layout_index(layout)];
        self.module().kernel(decl).ok().map(|_| decl)
    }

    /// 2-D convolution on the path [`Library::conv2d_path`] picks: `x`, the filter's weight and
    /// `y` in `shape.layout` ([`ConvLayout`]), the bias `[out_channels]`.
    pub fn conv2d<T: ConvFloat>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        filter: Filter<'_, T>,
        y: &mut DeviceBuffer<T>,
        shape: &Conv2dShape,
    ) -> Result<(), LibraryError> {
        let path = self.conv2d_path::<T>(shape)?;
        self.conv2d_on(stream, path, x, filter, y, shape)
    }

    /// 2-D convolution on `path`: [`Conv2dPath::Direct`] on every gfx and type,
    /// [`Conv2dPath::ImplicitGemm`] for f16 and bf16 where the code object has the kernels (an
    /// error otherwise). Both compute the same convolution ([`Library::conv2d`]).
    pub fn conv2d_on<T: ConvFloat>(
        &self,
        stream: &Stream,
        path: Conv2dPath,
        x: &DeviceBuffer<T>,
        filter: Filter<'_, T>,
        y: &mut DeviceBuffer<T>,
        shape: &Conv2dShape,
    ) -> Result<(), LibraryError> {
        const OP: &str = "conv2d";
        let [oh, ow] = shape.output()?;
        let (input, weights, output) =
            (shape.input_len()?, shape.weight_len()?, shape.output_len()?);
        check_holds(OP, "x", x, "batch * in_channels * height * width", input)?;
        check_holds(
            OP,
            "weight",
            filter.weight,
            "out_channels * in_channels / groups * R * S",
            weights,
        )?;
        if let Some(bias) = filter.bias {
            check_holds(OP, "bias", bias, "out_channels", shape.out_channels)?;
        }
        check_holds(
            OP,
            "y",
            y,
            "batch * out_channels * out_height * out_width",
            output,
        )?;
        for (what, value) in [
            ("x elements", input),
            ("weight elements", weights),
            ("y elements", output),
        ] {
            check_limit(OP, what, value, u32::MAX)?;
        }
        let packed = pack_window(shape, [oh, ow])?;
        if output == 0 {
            return Ok(());
        }
        let (kernel, config) = match path {
            Conv2dPath::Direct => {
                let kernel = self
                    .module()
                    .kernel(T::DIRECT[layout_index(shape.layout)])?;
                let pixels = oh * ow;
                let block = block_for(pixels, wave_of(&kernel));
                let pairs = shape.batch * shape.out_channels;
                let grid = [
                    pixels.div_ceil(block as usize) as u32,
                    pairs.min(MAX_GRID_Y) as u32,
                    1,
                ];
                (kernel, LaunchConfig::new(grid, [block, 1, 1]))
            }
            Conv2dPath::ImplicitGemm => {
                let decl = self.gemm_kernel::<T>(shape.layout).ok_or_else(|| LibraryError::BadShape {
                    operation: OP,
                    detail: format!(
                        "the implicit GEMM needs f16 or bf16 and a code object with its kernels; this is {} on {}",
                        std::any::type_name::<T>(),
                        self.module().code_object().target().processor
                    ),
                })?;
                let block = conv_gemm::BLOCK as usize;
                let tiles_y = shape.groups * (shape.out_channels / shape.groups).div_ceil(block);
                let grid = [
                    check_limit(
                        OP,
                        "ceil(batch * out_height * out_width / 64) (row tiles)",
                        (shape.batch * oh * ow).div_ceil(block),
                        u32::MAX / conv_gemm::THREADS,
                    )?,
                    check_limit(
                        OP,
                        "groups * ceil(out_channels / groups / 64)",
                        tiles_y,
                        MAX_GRID_Y as u32,
                    )?,
                    1,
                ];
                let config = LaunchConfig::new(grid, [conv_gemm::THREADS, 1, 1])
                    .with_dynamic_lds(conv_gemm::LDS_BYTES);
                (self.module().kernel(decl)?, config)
            }
        };
        let mut args = vec![
            buffer_arg(x),
            buffer_arg(filter.weight),
            bias_arg(filter.bias, filter.weight),
            buffer_arg(y),
        ];
        args.extend(packed.map(u32_arg));
        // SAFETY: the kernels read x, the weights and (when given) the bias and write y within
        // the element counts checked above; every buffer holds them, y is distinct from the
        // inputs, and the packed window matches the shape the counts came from.
        unsafe { stream.launch_untyped(kernel.kernel(), config, &args)? };
        Ok(())
    }
}

/// Position of a layout in the kernel tables.
fn layout_index(layout: ConvLayout) -> usize {
    match layout {
        ConvLayout::Nchw => 0,
        ConvLayout::Nhwc => 1,
    }
}

/// The flags of the 1-D kernels for `activation`.
fn activation_flags(activation: Activation) -> u32 {
    match activation {
        Activation::None => 0,
        Activation::Silu => FLAG_SILU,
    }
}

/// The 2-D kernels' scalar arguments after the buffers: batch, channels, groups and the packed
/// window (`device/kernels/src/conv.rs`), checked against their field widths.
fn pack_window(shape: &Conv2dShape, [oh, ow]: [usize; 2]) -> Result<[u32; 8], LibraryError> {
    const OP: &str = "conv2d";
    const PAIR: u32 = u16::MAX as u32;
    const BYTE: u32 = u8::MAX as u32;
    let pair = |what, [a, b]: [usize; 2]| -> Result<u32, LibraryError> {
        Ok(pack_pair(
            check_limit(OP, what, a, PAIR)?,
            check_limit(OP, what, b, PAIR)?,
        ))
    };
    let bytes = |what, values: [usize; 4]| -> Result<u32, LibraryError> {
        let mut v = [0; 4];
        for (slot, value) in v.iter_mut().zip(values) {
            *slot = check_limit(OP, what, value, BYTE)?;
        }
        Ok(pack_bytes(v[0], v[1], v[2], v[3]))
    };
    Ok([
        check_limit(OP, "batch", shape.batch, u32::MAX)?,
        check_limit(OP, "in_channels", shape.in_channels, u32::MAX)?,
        check_limit(OP, "out_channels", shape.out_channels, u32::MAX)?,
        check_limit(OP, "groups", shape.groups, u32::MAX)?,
        pair("input height and width", shape.input)?,
        pair("output height and width", [oh, ow])?,
        bytes(
            "kernel size and stride",
            [
                shape.kernel[0],
                shape.kernel[1],
                shape.stride[0],
                shape.stride[1],
            ],
        )?,
        bytes(
            "top and left padding and dilation",
            [
                shape.padding[0].0,
                shape.padding[1].0,
                shape.dilation[0],
                shape.dilation[1],
            ],
        )?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Conv2dShape {
        Conv2dShape::new(ConvLayout::Nchw, 2, [7, 9], 6, 4, [3, 2])
    }

    #[test]
    fn output_sizes_follow_padding_stride_and_dilation() {
        assert_eq!(shape().output(), Ok([5, 8]));
        let s = Conv2dShape {
            stride: [2, 3],
            padding: [(1, 2), (0, 1)],
            dilation: [2, 1],
            ..shape()
        };
        // height: (7 + 3 - 5) / 2 + 1 = 3; width: (9 + 1 - 2) / 3 + 1 = 3.
        assert_eq!(s.output(), Ok([3, 3]));
        assert_eq!(s.output_len(), Ok(2 * 4 * 3 * 3));
        assert_eq!(s.weight_len(), Ok(4 * 6 * 3 * 2));
        assert_eq!(s.input_len(), Ok(2 * 6 * 7 * 9));
    }

    #[test]
    fn bad_shapes_are_errors() {
        let groups = Conv2dShape {
            groups: 4,
            ..shape()
        };
        assert!(
            groups
                .output()
                .unwrap_err()
                .to_string()
                .contains("groups = 4")
        );
        let big = Conv2dShape {
            kernel: [8, 2],
            ..shape()
        };
        assert_eq!(
            big.output().unwrap_err().to_string(),
            "conv2d: the dilated filter height 8 exceeds the padded input height 7"
        );
        let zero = Conv2dShape {
            stride: [0, 1],
            ..shape()
        };
        assert!(zero.output().is_err());
        let wide = Conv2dShape {
            padding: [(300, 0), (0, 0)],
            ..shape()
        };
        assert_eq!(
            pack_window(&wide, wide.output().unwrap())
                .unwrap_err()
                .to_string(),
            "conv2d: top and left padding and dilation = 300 exceeds the kernel's limit of 255"
        );
    }

    #[test]
    fn windows_pack_into_the_kernels_fields() {
        let s = Conv2dShape {
            stride: [2, 1],
            padding: [(1, 0), (3, 3)],
            dilation: [1, 2],
            ..shape()
        };
        let [oh, ow] = s.output().unwrap();
        let packed = pack_window(&s, [oh, ow]).unwrap();
        assert_eq!(packed[..4], [2, 6, 4, 1]);
        assert_eq!(packed[4], (7 << 16) | 9);
        assert_eq!(packed[5], ((oh as u32) << 16) | ow as u32);
        assert_eq!(packed[6], 0x0302_0201);
        assert_eq!(packed[7], 0x0103_0102);
    }

    #[test]
    fn blocks_are_whole_waves_up_to_256() {
        assert_eq!(block_for(1, 64), 64);
        assert_eq!(block_for(65, 32), 96);
        assert_eq!(block_for(10_000, 64), 256);
        assert_eq!(block_for(0, 32), 32);
    }
}
