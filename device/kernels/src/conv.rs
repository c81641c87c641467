//! What the convolution kernels share: the flag word of the 1-D kernels, the packing of the
//! 2-D kernels' window arguments (one `u32` holds four byte-sized or two 16-bit fields, as a
//! kernel takes at most 12 arguments), and the fused SiLU.
//!
//! The kernels themselves are in [`crate::conv1d`] (causal depthwise 1-D convolution and its
//! streaming form), [`crate::conv2d`] (direct 2-D convolution, every gfx and type) and
//! [`crate::conv_gemm`] (implicit GEMM on the matrix cores, f16 and bf16).

/// Flag of the 1-D kernels: apply SiLU (`v / (1 + e^-v)`) to each output before rounding it.
pub const FLAG_SILU: u32 = 1;

/// Largest 1-D filter width the kernels take.
pub const MAX_WIDTH: u32 = 8;

/// Two 16-bit sizes in one argument: `high` in bits 16..32, `low` in bits 0..16 (each below
/// 2^16).
pub const fn pack_pair(high: u32, low: u32) -> u32 {
    (high << 16) | (low & 0xffff)
}

/// Four byte-sized values in one argument: `a` in bits 24..32, `b` 16..24, `c` 8..16, `d` 0..8
/// (each below 256).
pub const fn pack_bytes(a: u32, b: u32, c: u32, d: u32) -> u32 {
    (a << 24) | ((b & 0xff) << 16) | ((c & 0xff) << 8) | (d & 0xff)
}

/// The two 16-bit fields of a [`pack_pair`] word, `(high, low)`.
#[inline(always)]
pub const fn unpack_pair(word: u32) -> (u32, u32) {
    (word >> 16, word & 0xffff)
}

/// The four byte fields of a [`pack_bytes`] word, `[a, b, c, d]`.
#[inline(always)]
pub const fn unpack_bytes(word: u32) -> [u32; 4] {
    [
        word >> 24,
        (word >> 16) & 0xff,
        (word >> 8) & 0xff,
        word & 0xff,
    ]
}

/// `x * sigmoid(x)`, with `iron_intrinsics::fmath::exp` (within 2 ulp) and a correctly rounded
/// division.
#[inline(always)]
pub(crate) fn silu(x: f32) -> f32 {
    x / (1.0 + iron_intrinsics::fmath::exp(-x))
}

/// The window of a 2-D convolution as the kernels read it from their packed arguments.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    /// Input height and width.
    pub(crate) in_h: u32,
    /// Input width.
    pub(crate) in_w: u32,
    /// Output height.
    pub(crate) out_h: u32,
    /// Output width.
    pub(crate) out_w: u32,
    /// Filter height.
    pub(crate) r: u32,
    /// Filter width.
    pub(crate) s: u32,
    /// Vertical stride.
    pub(crate) stride_h: u32,
    /// Horizontal stride.
    pub(crate) stride_w: u32,
    /// Zero rows before the input (top padding).
    pub(crate) pad_h: u32,
    /// Zero columns before the input (left padding).
    pub(crate) pad_w: u32,
    /// Vertical dilation.
    pub(crate) dilation_h: u32,
    /// Horizontal dilation.
    pub(crate) dilation_w: u32,
}

impl Window {
    /// The window of the packed arguments `input_hw`, `output_hw` ([`pack_pair`]),
    /// `kernel_stride` (`r, s, stride_h, stride_w`) and `pad_dilation`
    /// (`pad_h, pad_w, dilation_h, dilation_w`, [`pack_bytes`]).
    #[inline(always)]
    pub(crate) fn unpack(
        input_hw: u32,
        output_hw: u32,
        kernel_stride: u32,
        pad_dilation: u32,
    ) -> Self {
        let (in_h, in_w) = unpack_pair(input_hw);
        let (out_h, out_w) = unpack_pair(output_hw);
        let [r, s, stride_h, stride_w] = unpack_bytes(kernel_stride);
        let [pad_h, pad_w, dilation_h, dilation_w] = unpack_bytes(pad_dilation);
        Window {
            in_h,
            in_w,
            out_h,
            out_w,
            r,
            s,
            stride_h,
            stride_w,
            pad_h,
            pad_w,
            dilation_h,
            dilation_w,
        }
    }

    /// The input row of filter row `r` for output row `oh`, when inside the input.
    #[inline(always)]
    pub(crate) fn input_row(&self, oh: u32, r: u32) -> Option<u32> {
        inside(
            oh * self.stride_h + r * self.dilation_h,
            self.pad_h,
            self.in_h,
        )
    }

    /// The input column of filter column `s` for output column `ow`, when inside the input.
    #[inline(always)]
    pub(crate) fn input_col(&self, ow: u32, s: u32) -> Option<u32> {
        inside(
            ow * self.stride_w + s * self.dilation_w,
            self.pad_w,
            self.in_w,
        )
    }
}

/// Position `padded` of a padded axis (`pad` zeros before `len` elements) as an index into the
/// axis, when it is inside.
#[inline(always)]
fn inside(padded: u32, pad: u32, len: u32) -> Option<u32> {
    if padded >= pad && padded - pad < len {
        Some(padded - pad)
    } else {
        None
    }
}

/// The channels of a grouped 2-D convolution: input and output channels and the group count.
#[derive(Clone, Copy)]
pub(crate) struct Channels {
    /// Input channels in all.
    pub(crate) c_in: u32,
    /// Output channels in all.
    pub(crate) c_out: u32,
    /// Input channels per group.
    pub(crate) c_per_group: u32,
    /// Output channels per group.
    pub(crate) k_per_group: u32,
}

impl Channels {
    /// The channels of `groups` groups (dividing both counts, as the host checks).
    #[inline(always)]
    pub(crate) fn new(c_in: u32, c_out: u32, groups: u32) -> Self {
        Channels {
            c_in,
            c_out,
            c_per_group: c_in / groups,
            k_per_group: c_out / groups,
        }
    }
}
