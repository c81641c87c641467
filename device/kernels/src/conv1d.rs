//! Causal depthwise 1-D convolution, the short convolution of state-space and gated-delta models
//! and of audio front ends, f32, f16 or bf16 in and out with f32 accumulation:
//! - `conv1d_causal_<t>(x, w, bias, y, rows, channels, length, width, flags)`: `x` and `y`
//!   `[batch, channels, length]` (`rows = batch * channels` rows of `length`), `w`
//!   `[channels, width]`, `bias` `[channels]` or null;
//!   `y[b][c][t] = bias[c] + sum_j w[c][j] * x[b][c][t - (width - 1) + j]`, inputs before `t = 0`
//!   being zero;
//! - `conv1d_causal_step_<t>(x, w, bias, state, y, rows, channels, steps, width, flags)`: the
//!   streaming (decode) form: `x` and `y` `[batch, channels, steps]`, `state`
//!   `[batch, channels, width - 1]` the last `width - 1` inputs of each row before `x` (oldest
//!   first), updated in place to the last `width - 1` inputs after it. Running the full kernel
//!   over a sequence equals running this one over its pieces from a zero state.
//!
//! `width` is 1 to [`MAX_WIDTH`](crate::conv::MAX_WIDTH); [`FLAG_SILU`](crate::conv::FLAG_SILU) in `flags` applies SiLU to each output. Sums
//! start from the bias (0 without one) and add the taps in order `j = 0..width` with fused
//! multiply-adds; SiLU (when asked) and one rounding to the output type follow.
//!
//! Launch: workgroups of up to 256 work-items, no LDS. `conv1d_causal`: a 2-D grid, x over time
//! (one output per work-item: `ceil(length / block)` workgroups), y over rows (any count: a
//! workgroup loops over rows `y, y + grid_y, ..`). `conv1d_causal_step`: a 1-D grid over rows
//! (one row per work-item, grid-stride). Element counts below 2^32; `y` distinct from `x`.

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
#[cfg(target_arch = "amdgpu")]
use {
    crate::conv::{FLAG_SILU, MAX_WIDTH, silu},
    crate::dtype::Float,
    iron_intrinsics::id::{
        global_id_x, grid_size_x, num_workgroups_y, workgroup_id_x, workgroup_id_y,
        workgroup_size_x, workitem_id_x,
    },
    iron_intrinsics::math::mul_add,
};

/// The taps and bias of channel `c`, widened.
///
/// # Safety
/// `w` must hold `W` taps for channel `c`; `bias` must be null or hold channel `c`.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
unsafe fn channel_filter<T: Float, const W: usize>(
    w: *const T,
    bias: *const T,
    c: u32,
) -> ([f32; W], f32) {
    // SAFETY: as the caller guarantees.
    let taps = core::array::from_fn(|j| unsafe { *w.add(c as usize * W + j) }.into_f32());
    let b = if bias.is_null() {
        0.0
    } else {
        // SAFETY: as the caller guarantees.
        unsafe { *bias.add(c as usize) }.into_f32()
    };
    (taps, b)
}

/// The output of one window: `b + sum_j taps[j] * window[j]`, then SiLU when asked.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn filter<const W: usize>(taps: &[f32; W], b: f32, window: &[f32; W], with_silu: bool) -> f32 {
    let mut acc = b;
    for j in 0..W {
        acc = mul_add(taps[j], window[j], acc);
    }
    if with_silu { silu(acc) } else { acc }
}

/// The causal convolution of width `W` (module docs).
///
/// # Safety
/// The kernel's contract (module docs).
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments")]
unsafe fn causal<T: Float, const W: usize>(
    x: *const T,
    w: *const T,
    bias: *const T,
    y: *mut T,
    rows: u32,
    channels: u32,
    length: u32,
    with_silu: bool,
) {
    let t = workgroup_id_x() * workgroup_size_x() + workitem_id_x();
    let mut row = workgroup_id_y();
    while row < rows {
        // SAFETY: row's channel is below `channels`, which w and bias cover.
        let (taps, b) = unsafe { channel_filter::<T, W>(w, bias, row % channels) };
        if t < length {
            let start = row as usize * length as usize;
            let window: [f32; W] = core::array::from_fn(|j| {
                let back = (W - 1 - j) as u32;
                if t >= back {
                    // SAFETY: inside the row: 0 <= t - back < length.
                    unsafe { *x.add(start + (t - back) as usize) }.into_f32()
                } else {
                    0.0
                }
            });
            let v = filter(&taps, b, &window, with_silu);
            // SAFETY: element t of the row, inside y.
            unsafe { *y.add(start + t as usize) = T::round_from_f32(v) };
        }
        row += num_workgroups_y();
    }
}

/// The streaming convolution of width `W` (module docs).
///
/// # Safety
/// The kernel's contract (module docs).
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments")]
unsafe fn step<T: Float, const W: usize>(
    x: *const T,
    w: *const T,
    bias: *const T,
    state: *mut T,
    y: *mut T,
    (rows, channels, steps): (u32, u32, u32),
    with_silu: bool,
) {
    let mut row = global_id_x();
    while row < rows {
        // SAFETY: row's channel is below `channels`, which w and bias cover.
        let (taps, b) = unsafe { channel_filter::<T, W>(w, bias, row % channels) };
        // SAFETY: the row's W - 1 state elements start there.
        let held = unsafe { state.add(row as usize * (W - 1)) };
        // The last slot takes each step's input before it is used.
        let mut window: [f32; W] = core::array::from_fn(|j| {
            if j + 1 < W {
                // SAFETY: state element j of the row.
                unsafe { *held.add(j) }.into_f32()
            } else {
                0.0
            }
        });
        let start = row as usize * steps as usize;
        for s in 0..steps as usize {
            // SAFETY: step s of the row, inside x and y.
            window[W - 1] = unsafe { *x.add(start + s) }.into_f32();
            let v = filter(&taps, b, &window, with_silu);
            // SAFETY: as above.
            unsafe { *y.add(start + s) = T::round_from_f32(v) };
            for j in 0..W - 1 {
                window[j] = window[j + 1];
            }
        }
        for j in 0..W - 1 {
            // SAFETY: the row's state; the value came from a T, so the rounding is exact.
            unsafe { *held.add(j) = T::round_from_f32(window[j]) };
        }
        row += grid_size_x();
    }
}

#[cfg(target_arch = "amdgpu")]
/// Calls `$f::<$t, W>($args)` with `W` the constant equal to `$width` (1 to 8); other widths
/// (refused by the host) write nothing.
macro_rules! with_width {
    ($width:expr, $f:ident::<$t:ty>($($args:expr),*)) => {
        match $width {
            1 => $f::<$t, 1>($($args),*),
            2 => $f::<$t, 2>($($args),*),
            3 => $f::<$t, 3>($($args),*),
            4 => $f::<$t, 4>($($args),*),
            5 => $f::<$t, 5>($($args),*),
            6 => $f::<$t, 6>($($args),*),
            7 => $f::<$t, 7>($($args),*),
            8 => $f::<$t, 8>($($args),*),
            _ => {}
        }
    };
}

/// Declares the causal convolution and its streaming form for one type.
macro_rules! conv1d_kernels {
    ($t:ident, $full:ident, $step:ident) => {
        #[doc = concat!("Causal depthwise 1-D convolution, ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $full(
            x: *const $t,
            w: *const $t,
            bias: *const $t,
            y: *mut $t,
            rows: u32,
            channels: u32,
            length: u32,
            width: u32,
            flags: u32,
        ) {
            const { assert!(MAX_WIDTH == 8) };
            let with_silu = flags & FLAG_SILU != 0;
            // SAFETY: the launch follows the module's contract.
            unsafe {
                with_width!(width, causal::<$t>(x, w, bias, y, rows, channels, length, with_silu))
            };
        }

        #[doc = concat!("Streaming causal depthwise 1-D convolution, ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $step(
            x: *const $t,
            w: *const $t,
            bias: *const $t,
            state: *mut $t,
            y: *mut $t,
            rows: u32,
            channels: u32,
            steps: u32,
            width: u32,
            flags: u32,
        ) {
            let with_silu = flags & FLAG_SILU != 0;
            let shape = (rows, channels, steps);
            // SAFETY: the launch follows the module's contract.
            unsafe { with_width!(width, step::<$t>(x, w, bias, state, y, shape, with_silu)) };
        }
    };
}

conv1d_kernels!(f32, conv1d_causal_f32, conv1d_causal_step_f32);
conv1d_kernels!(f16, conv1d_causal_f16, conv1d_causal_step_f16);
conv1d_kernels!(bf16, conv1d_causal_bf16, conv1d_causal_step_bf16);
