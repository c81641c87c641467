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
//! `width` is 1 to [`MAX_WIDTH`]; [`FLAG_SILU`] in `flags` applies SiLU to each output. Sums
//! start from the bias (0 without one) and add the taps in order `j = 0..width` with fused
//! multiply-adds; SiLU (when asked) and one rounding to the output type follow.
//!
//! Launch: workgroups of up to 256 work-items, whole waves, no LDS. `conv1d_causal`: a 2-D grid,
//! x over time (each work-item computes [`CAUSAL_OUTPUTS`] consecutive outputs of a row:
//! `ceil(length / (CAUSAL_OUTPUTS * block))` workgroups), y over rows (any count: a workgroup
//! loops over rows `y, y + grid_y, ..`). `conv1d_causal_step`: a 1-D grid over rows (one row per
//! work-item, grid-stride). Element counts below 2^32; `y` distinct from `x`; buffers 16-byte
//! aligned (device allocations are).
//!
//! Memory of `conv1d_causal`: each input is read once. A work-item reads its own
//! [`CAUSAL_OUTPUTS`] inputs (as 16-byte loads when `length` is a multiple of
//! [`CAUSAL_OUTPUTS`], rows then starting 16-byte aligned; element by element otherwise) and
//! takes the `width - 1` inputs before them from the previous lane with wave shuffles; the first
//! lane of each wave loads those few itself. The taps and bias of a row are loaded once per
//! wave (lane `j` loads tap `j`, lane [`MAX_WIDTH`] the bias) and read from those lanes by all.

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::conv::{FLAG_SILU, MAX_WIDTH, silu},
    crate::dtype::{Float, load, narrow, store, widen},
    iron_intrinsics::id::{
        global_id_x, grid_size_x, lane_id, num_workgroups_y, workgroup_id_x, workgroup_id_y,
        workgroup_size_x, workitem_id_x,
    },
    iron_intrinsics::math::mul_add,
    iron_intrinsics::wave::{read_lane, shuffle},
};

/// Consecutive outputs of a row that one work-item of `conv1d_causal` computes: one 16-byte
/// access of a 16-bit type, two of f32; at least `MAX_WIDTH - 1`, so the inputs a work-item
/// needs before its own all belong to the previous work-item.
pub const CAUSAL_OUTPUTS: u32 = 8;

/// [`CAUSAL_OUTPUTS`] as an array length.
const V: usize = CAUSAL_OUTPUTS as usize;

/// The taps and bias of channel `c`, widened.
///
/// # Safety
/// `w` must hold `W` taps for channel `c`; `bias` must be null or hold channel `c`.
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
#[inline(always)]
fn filter<const W: usize>(taps: &[f32; W], b: f32, window: &[f32; W], with_silu: bool) -> f32 {
    let mut acc = b;
    for j in 0..W {
        acc = mul_add(taps[j], window[j], acc);
    }
    if with_silu { silu(acc) } else { acc }
}

/// The taps and bias of channel `c` of a filter of `width` taps (at most [`MAX_TAPS`]),
/// widened, loaded once for the wave: lane `j < width` loads tap `j`, lane [`MAX_TAPS`] the
/// bias. Returns this lane's value (which [`window_outputs`] reads tap by tap from those
/// lanes) and the bias. Wave-wide.
///
/// # Safety
/// `w` must hold `width` taps for channel `c`; `bias` must be null or hold channel `c`.
#[inline(always)]
unsafe fn wave_filter<T: Float>(w: *const T, bias: *const T, c: u32, width: u32) -> (f32, f32) {
    let lane = lane_id();
    let mine = if lane < width {
        // SAFETY: tap `lane` of channel c, as the caller guarantees.
        unsafe { *w.add((c * width + lane) as usize) }.into_f32()
    } else if lane == MAX_TAPS as u32 && !bias.is_null() {
        // SAFETY: as the caller guarantees.
        unsafe { *bias.add(c as usize) }.into_f32()
    } else {
        0.0
    };
    (mine, read_lane(mine, MAX_TAPS as u32))
}

/// [`MAX_WIDTH`] as an array length.
const MAX_TAPS: usize = MAX_WIDTH as usize;

/// The bits of `V` elements as `WORDS` 32-bit words (the same bytes).
#[inline(always)]
fn to_words<T: Float, const WORDS: usize>(values: [T; V]) -> [u32; WORDS] {
    const { assert!(WORDS * 4 == V * size_of::<T>()) };
    // SAFETY: both arrays have the same size (asserted) and every bit pattern is a valid u32.
    unsafe { core::mem::transmute_copy(&values) }
}

/// The `V` elements whose bits `words` holds.
#[inline(always)]
fn from_words<T: Float, const WORDS: usize>(words: [u32; WORDS]) -> [T; V] {
    const { assert!(WORDS * 4 == V * size_of::<T>()) };
    // SAFETY: both arrays have the same size (asserted) and every bit pattern is a valid f32,
    // f16 or bf16, the only `Float` types.
    unsafe { core::mem::transmute_copy(&words) }
}

/// Elements `t0 .. t0 + V` of a row, those at or after `length` zero: one or two 16-byte loads
/// when `WHOLE` (`length` a multiple of `V`), element by element otherwise.
///
/// # Safety
/// `row` must hold `length` elements, start 16-byte aligned when `WHOLE`, and `t0 < length` be a
/// multiple of `V`.
#[inline(always)]
unsafe fn load_inputs<T: Float, const WORDS: usize, const WHOLE: bool>(
    row: *const T,
    t0: u32,
    length: u32,
) -> [T; V] {
    if WHOLE {
        // SAFETY: chunk t0 / V lies inside the row (length a multiple of V), 16-byte aligned.
        unsafe { load::<T, V>(row, (t0 / V as u32) as usize) }
    } else {
        let mut values = from_words::<T, WORDS>([0; WORDS]);
        for (k, value) in values.iter_mut().enumerate() {
            if t0 + (k as u32) < length {
                // SAFETY: element t0 + k of the row, below length.
                *value = unsafe { *row.add(t0 as usize + k) };
            }
        }
        values
    }
}

/// The inputs of a row before `t0` that the outputs from `t0` of a filter of `W` taps need
/// (elements `V - (W - 1) .. V` of the result are those at `t0 - (W - 1) .. t0`; the others,
/// and inputs before the row, are zero). Every lane passes its own inputs (`own`, from `t0`); a lane takes
/// the previous lane's, whose `t0` is `V` before its own, and the wave's first lane (whose
/// `t0` is 0 in the first wave of a row) loads them itself when `t0 > 0`. Wave-wide.
///
/// # Safety
/// `row` must hold at least `t0` elements when `t0 > 0` and this is the wave's first lane.
#[inline(always)]
unsafe fn preceding_inputs<T: Float, const W: usize, const WORDS: usize>(
    row: *const T,
    own: [T; V],
    t0: u32,
) -> [T; V] {
    let lane = lane_id();
    let own_words = to_words::<T, WORDS>(own);
    // The words holding elements V - (W - 1) .. V.
    let first_word = (V + 1 - W) * size_of::<T>() / 4;
    let shuffled: [u32; WORDS] = core::array::from_fn(|i| {
        if i >= first_word {
            shuffle(own_words[i], lane.wrapping_sub(1))
        } else {
            0
        }
    });
    let mut before = from_words::<T, WORDS>(shuffled);
    if lane == 0 {
        before = from_words([0; WORDS]);
        if t0 > 0 {
            for (k, value) in before.iter_mut().enumerate().skip(V + 1 - W) {
                // SAFETY: element t0 - V + k of the row, before t0.
                *value = unsafe { *row.add((t0 as usize - V) + k) };
            }
        }
    }
    before
}

/// The causal convolution (module docs), `WORDS` 32-bit words holding `V` elements.
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments")]
unsafe fn causal<T: Float, const WORDS: usize>(
    x: *const T,
    w: *const T,
    bias: *const T,
    y: *mut T,
    (rows, channels, length): (u32, u32, u32),
    width: u32,
    with_silu: bool,
) {
    let shape = (rows, channels, length);
    // SAFETY: as the caller guarantees; the rows are whole chunks exactly when length is a
    // multiple of V.
    unsafe {
        if length.is_multiple_of(V as u32) {
            causal_rows::<T, WORDS, true>(x, w, bias, y, shape, width, with_silu);
        } else {
            causal_rows::<T, WORDS, false>(x, w, bias, y, shape, width, with_silu);
        }
    }
}

/// The `V` outputs from `t0` of a filter of `W` taps (tap `j` held by lane `j` in `taps`, as
/// [`wave_filter`] loads them; bias `b`) over the row at `row`, this lane's inputs from `t0`
/// being `own` (the inputs before them come from [`preceding_inputs`], given `t0`).
/// Wave-wide.
///
/// # Safety
/// As for [`preceding_inputs`].
#[inline(always)]
unsafe fn window_outputs<T: Float, const W: usize, const WORDS: usize>(
    (taps, b): (f32, f32),
    row: *const T,
    own: [T; V],
    t0: u32,
) -> [f32; V] {
    const { assert!(W <= MAX_TAPS && MAX_TAPS <= V + 1) };
    let taps: [f32; W] = core::array::from_fn(|j| read_lane(taps, j as u32));
    // SAFETY: as the caller guarantees.
    let before = widen(unsafe { preceding_inputs::<T, W, WORDS>(row, own, t0) });
    let own = widen(own);
    core::array::from_fn(|k| {
        let mut acc = b;
        for (j, tap) in taps.iter().enumerate() {
            // Input t0 + k - (W - 1) + j, at index i of `before` followed by `own`.
            let i = V + k + j + 1 - W;
            let input = if i < V { before[i] } else { own[i - V] };
            acc = mul_add(*tap, input, acc);
        }
        acc
    })
}

/// [`causal`] over rows of whole 16-byte chunks (`WHOLE`: `length` a multiple of `V`) or any
/// rows (element by element). The two are separate loops so that neither path's loads leak
/// into the other's; within a loop only the filter's arithmetic depends on the width (a loop
/// per width took 52 to 77 KB of code).
///
/// # Safety
/// The kernel's contract (module docs), and `length` a multiple of `V` when `WHOLE`.
#[inline(always)]
unsafe fn causal_rows<T: Float, const WORDS: usize, const WHOLE: bool>(
    x: *const T,
    w: *const T,
    bias: *const T,
    y: *mut T,
    (rows, channels, length): (u32, u32, u32),
    width: u32,
    with_silu: bool,
) {
    let chunk = workgroup_id_x() * workgroup_size_x() + workitem_id_x();
    let active = chunk < length.div_ceil(V as u32);
    // Only used when active: then below length.
    let t0 = chunk.wrapping_mul(V as u32);
    let mut row = workgroup_id_y();
    while row < rows {
        // SAFETY: row's channel is below `channels`, which w and bias cover.
        let (taps, b) = unsafe { wave_filter::<T>(w, bias, row % channels, width) };
        let start = row as usize * length as usize;
        // SAFETY: the row's first element, inside x and y.
        let (x_row, y_row) = unsafe { (x.add(start), y.add(start)) };
        let own = if active {
            // SAFETY: the row holds length elements, 16-byte aligned when WHOLE (a multiple of
            // V, as the buffer is); t0 < length is a multiple of V.
            unsafe { load_inputs::<T, WORDS, WHOLE>(x_row, t0, length) }
        } else {
            from_words([0; WORDS])
        };
        let from = if active { t0 } else { 0 };
        let filter = (taps, b);
        // SAFETY: a lane reading the row does so below its t0, which is below length when
        // active; inactive lanes read nothing (t0 = 0 is the first wave's first lane).
        let outputs = unsafe {
            match width {
                1 => window_outputs::<T, 1, WORDS>(filter, x_row, own, from),
                2 => window_outputs::<T, 2, WORDS>(filter, x_row, own, from),
                3 => window_outputs::<T, 3, WORDS>(filter, x_row, own, from),
                4 => window_outputs::<T, 4, WORDS>(filter, x_row, own, from),
                5 => window_outputs::<T, 5, WORDS>(filter, x_row, own, from),
                6 => window_outputs::<T, 6, WORDS>(filter, x_row, own, from),
                7 => window_outputs::<T, 7, WORDS>(filter, x_row, own, from),
                // The host refuses other widths.
                _ => window_outputs::<T, 8, WORDS>(filter, x_row, own, from),
            }
        };
        let outputs = outputs.map(|v| if with_silu { silu(v) } else { v });
        if active {
            if WHOLE {
                // SAFETY: chunk t0 / V of the row inside y, 16-byte aligned as in x.
                unsafe { store::<T, V>(y_row, chunk as usize, narrow(outputs)) };
            } else {
                for (k, v) in outputs.iter().enumerate() {
                    if t0 + (k as u32) < length {
                        // SAFETY: element t0 + k of the row, below length.
                        unsafe { *y_row.add(t0 as usize + k) = T::round_from_f32(*v) };
                    }
                }
            }
        }
        row += num_workgroups_y();
    }
}

/// The streaming convolution of width `W` (module docs).
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments")]
#[allow(
    clippy::needless_range_loop,
    reason = "indexed with the unrolled loops' constants, the window stays in registers"
)]
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

/// Calls `$f::<$t, W, $more..>($args)` with `W` the constant equal to `$width` (1 to 8); other
/// widths (refused by the host) write nothing.
macro_rules! with_width {
    ($width:expr, $f:ident::<$t:ty $(, $more:tt)*>($($args:expr),*)) => {
        match $width {
            1 => $f::<$t, 1 $(, $more)*>($($args),*),
            2 => $f::<$t, 2 $(, $more)*>($($args),*),
            3 => $f::<$t, 3 $(, $more)*>($($args),*),
            4 => $f::<$t, 4 $(, $more)*>($($args),*),
            5 => $f::<$t, 5 $(, $more)*>($($args),*),
            6 => $f::<$t, 6 $(, $more)*>($($args),*),
            7 => $f::<$t, 7 $(, $more)*>($($args),*),
            8 => $f::<$t, 8 $(, $more)*>($($args),*),
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
            if width == 0 || width > MAX_WIDTH {
                return;
            }
            // SAFETY: the launch follows the module's contract.
            unsafe {
                causal::<$t, { V * size_of::<$t>() / 4 }>(
                    x, w, bias, y, (rows, channels, length), width, with_silu,
                )
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
