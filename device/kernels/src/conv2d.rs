//! Direct 2-D convolution (cross-correlation, as deep-learning frameworks define it), f32, f16
//! or bf16 in and out with f32 accumulation, any stride, padding, dilation and group count
//! (depthwise included), on every gfx. Meant for small channel counts; the matrix-core kernels
//! ([`crate::conv_gemm`]) take f16 and bf16 convolutions with many channels.
//!
//! Kernels `conv2d_direct_{nchw,nhwc}_<t>(x, w, bias, y, batch, in_channels, out_channels,
//! groups, input_hw, output_hw, kernel_stride, pad_dilation)`:
//! - NCHW: `x` `[batch, in_channels, H, W]`, `w` `[out_channels, in_channels / groups, R, S]`,
//!   `y` `[batch, out_channels, OH, OW]`;
//! - NHWC: `x` `[batch, H, W, in_channels]`, `w` `[out_channels, R, S, in_channels / groups]`,
//!   `y` `[batch, OH, OW, out_channels]`;
//! - `bias`: `[out_channels]`, or null for none;
//! - `input_hw = pack_pair(H, W)`, `output_hw = pack_pair(OH, OW)` (16 bits each),
//!   `kernel_stride = pack_bytes(R, S, stride_h, stride_w)`,
//!   `pad_dilation = pack_bytes(pad_top, pad_left, dilation_h, dilation_w)` (a byte each; see
//!   [`crate::conv`]). Padding after the input (bottom, right) is implied by `OH` and `OW`:
//!   positions past the input read zero.
//!
//! Output channel `k` belongs to group `g = k / (out_channels / groups)` and reads input
//! channels `g * C .. (g + 1) * C`, `C = in_channels / groups`:
//! `y[n][k][oh][ow] = bias[k] + sum_{c, r, s} w[k][c][r][s] * x[n][g C + c][ih][iw]` with
//! `ih = oh * stride_h - pad_top + r * dilation_h`, `iw = ow * stride_w - pad_left +
//! s * dilation_w`, zero outside the input. Sums start from the bias (0 without one) and add
//! the terms with fused multiply-adds in the weight's memory order; one rounding to the output
//! type follows.
//!
//! Launch: workgroups of up to 256 work-items, no LDS; a 2-D grid, x over output pixels (one per
//! work-item: `ceil(OH * OW / block)` workgroups), y over `(image, output channel)` pairs (any
//! count: a workgroup loops over pairs `y, y + grid_y, ..`, pair `q` being image
//! `q / out_channels`, channel `q % out_channels`). Tensors below 2^32 elements; `y` distinct
//! from the inputs.

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::conv::{Channels, Window},
    crate::dtype::Float,
    iron_intrinsics::id::{
        num_workgroups_y, workgroup_id_x, workgroup_id_y, workgroup_size_x, workitem_id_x,
    },
    iron_intrinsics::math::mul_add,
};

/// One output element of image `n`, channel `k`, pixel `(oh, ow)`, NCHW.
///
/// # Safety
/// The kernel's contract (module docs), with `n`, `k`, `oh`, `ow` inside the output.
#[inline(always)]
unsafe fn dot_nchw<T: Float>(
    x: *const T,
    w: *const T,
    (ch, win): (&Channels, &Window),
    (n, k, oh, ow): (u32, u32, u32, u32),
    mut acc: f32,
) -> f32 {
    let c0 = k / ch.k_per_group * ch.c_per_group;
    for c in 0..ch.c_per_group {
        let plane = (n * ch.c_in + c0 + c) * win.in_h;
        let taps = ((k * ch.c_per_group + c) * win.r) * win.s;
        for r in 0..win.r {
            let Some(ih) = win.input_row(oh, r) else {
                continue;
            };
            for s in 0..win.s {
                let Some(iw) = win.input_col(ow, s) else {
                    continue;
                };
                // SAFETY: inside x and w, as the indices are inside their shapes.
                let (xv, wv) = unsafe {
                    (
                        *x.add(((plane + ih) * win.in_w + iw) as usize),
                        *w.add((taps + r * win.s + s) as usize),
                    )
                };
                acc = mul_add(wv.into_f32(), xv.into_f32(), acc);
            }
        }
    }
    acc
}

/// One output element of image `n`, channel `k`, pixel `(oh, ow)`, NHWC.
///
/// # Safety
/// As for [`dot_nchw`].
#[inline(always)]
unsafe fn dot_nhwc<T: Float>(
    x: *const T,
    w: *const T,
    (ch, win): (&Channels, &Window),
    (n, k, oh, ow): (u32, u32, u32, u32),
    mut acc: f32,
) -> f32 {
    let c0 = k / ch.k_per_group * ch.c_per_group;
    for r in 0..win.r {
        let Some(ih) = win.input_row(oh, r) else {
            continue;
        };
        for s in 0..win.s {
            let Some(iw) = win.input_col(ow, s) else {
                continue;
            };
            let pixel = ((n * win.in_h + ih) * win.in_w + iw) * ch.c_in + c0;
            let taps = ((k * win.r + r) * win.s + s) * ch.c_per_group;
            for c in 0..ch.c_per_group {
                // SAFETY: inside x and w, as the indices are inside their shapes.
                let (xv, wv) =
                    unsafe { (*x.add((pixel + c) as usize), *w.add((taps + c) as usize)) };
                acc = mul_add(wv.into_f32(), xv.into_f32(), acc);
            }
        }
    }
    acc
}

/// The direct convolution, NHWC when `NHWC`, else NCHW (module docs).
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
unsafe fn direct<T: Float, const NHWC: bool>(
    (x, w, bias, y): (*const T, *const T, *const T, *mut T),
    batch: u32,
    ch: Channels,
    win: Window,
) {
    let pixel = workgroup_id_x() * workgroup_size_x() + workitem_id_x();
    if pixel >= win.out_h * win.out_w {
        return;
    }
    let (oh, ow) = (pixel / win.out_w, pixel % win.out_w);
    let mut pair = workgroup_id_y();
    while pair < batch * ch.c_out {
        let (n, k) = (pair / ch.c_out, pair % ch.c_out);
        let start = if bias.is_null() {
            0.0
        } else {
            // SAFETY: k < out_channels, which bias holds.
            unsafe { *bias.add(k as usize) }.into_f32()
        };
        let at = (n, k, oh, ow);
        // SAFETY: the indices are inside the output, as the kernel's contract guarantees.
        let (v, out) = unsafe {
            if NHWC {
                (
                    dot_nhwc(x, w, (&ch, &win), at, start),
                    ((n * win.out_h + oh) * win.out_w + ow) * ch.c_out + k,
                )
            } else {
                (
                    dot_nchw(x, w, (&ch, &win), at, start),
                    ((n * ch.c_out + k) * win.out_h + oh) * win.out_w + ow,
                )
            }
        };
        // SAFETY: inside y.
        unsafe { *y.add(out as usize) = T::round_from_f32(v) };
        pair += num_workgroups_y();
    }
}

/// Declares a direct 2-D convolution kernel.
macro_rules! direct_kernel {
    ($name:ident, $t:ident, $nhwc:literal, $layout:literal) => {
        #[doc = concat!("Direct 2-D convolution, ", $layout, ", ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $name(
            x: *const $t,
            w: *const $t,
            bias: *const $t,
            y: *mut $t,
            batch: u32,
            in_channels: u32,
            out_channels: u32,
            groups: u32,
            input_hw: u32,
            output_hw: u32,
            kernel_stride: u32,
            pad_dilation: u32,
        ) {
            let ch = Channels::new(in_channels, out_channels, groups);
            let win = Window::unpack(input_hw, output_hw, kernel_stride, pad_dilation);
            // SAFETY: the launch follows the module's contract.
            unsafe { direct::<$t, $nhwc>((x, w, bias, y), batch, ch, win) };
        }
    };
}

direct_kernel!(conv2d_direct_nchw_f32, f32, false, "NCHW");
direct_kernel!(conv2d_direct_nchw_f16, f16, false, "NCHW");
direct_kernel!(conv2d_direct_nchw_bf16, bf16, false, "NCHW");
direct_kernel!(conv2d_direct_nhwc_f32, f32, true, "NHWC");
direct_kernel!(conv2d_direct_nhwc_f16, f16, true, "NHWC");
direct_kernel!(conv2d_direct_nhwc_bf16, bf16, true, "NHWC");
