//! 2-D convolution as an implicit GEMM on the matrix cores, f16 or bf16 in and out with f32
//! accumulation: CDNA's MFMA (gfx90a, gfx942: `v_mfma_f32_16x16x16_{f16,bf16}`; gfx950:
//! `v_mfma_f32_16x16x32_{f16,bf16}`) and RDNA's WMMA (gfx1100, gfx1201, wave32 and wave64:
//! `v_wmma_f32_16x16x16_{f16,bf16}`).
//!
//! Kernels `conv2d_gemm_{nchw,nhwc}_{f16,bf16}` take the arguments, layouts and window of the
//! direct kernels ([`crate::conv2d`]) and compute the same convolution. Per group `g`, the
//! output is the product of an `M x K` matrix A (the im2col view of the input: row
//! `m = (n, oh, ow)` holds the input values under the window of output pixel `(oh, ow)` of image
//! `n`, zero in the padding) and a `K x N` matrix B (the group's weights: column `j` is output
//! channel `g * N + j`, stored K-contiguous), with `M = batch * OH * OW`,
//! `N = out_channels / groups` and `K = (in_channels / groups) * R * S` in the weight's memory
//! order (`(c, r, s)` for NCHW, `(r, s, c)` for NHWC). Nothing is materialized: each K tile of
//! A is gathered from `x` into LDS.
//!
//! Arithmetic: products exact, summed in f32 by the matrix instructions, each over 16 or 32 of a
//! K tile's elements (the hardware's order inside an instruction: consecutive ones where a
//! lane's fragment is 16 or 32 bytes, else interleaved sets, as `gemm_tile::PlainStep` reads
//! them), then the bias is added in f32 and the sum rounded once to the output type. On gfx90a
//! the f16 and bf16 MFMAs flush subnormal inputs and results to zero.
//!
//! Launch: workgroups of exactly [`THREADS`] work-items, 1-D; a grid of
//! `(ceil(M / 64), groups * ceil(N / 64))` workgroups (x over row tiles of 64 output pixels, y
//! over `(group, column tile of 64 channels)`, group-major); dynamic LDS [`LDS_BYTES`].
//!
//! Tiling: each workgroup computes a 64 x 64 tile of the group's output as 16 x 16 instruction
//! tiles: 4 waves of 64 lanes each take a row of 4 tiles, 8 waves of 32 lanes half a row. K is
//! walked in tiles of 32, A's and B's tiles staged in LDS K-contiguous (rows of 64 bytes whose
//! 16-byte chunks are swizzled against bank conflicts, `gemm_stage::swizzled`, read as whole
//! chunks as the GEMM kernels read them, `gemm_tile::PlainStep`), each work-item gathering 8
//! consecutive K elements of one row of A and one column of B: one 16-byte load each when the
//! weights' `K` (for B) or the NHWC channel counts (for A) are multiples of 8, else element by
//! element. The next tile's loads are issued before the current tile is multiplied. Buffers
//! 16-byte aligned (device allocations are).

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::conv::{Channels, Window},
    crate::dtype::Float,
    crate::gemm::{Bf16Core, F16Core},
    crate::gemm_stage::{SWIZZLED_ROW_BYTES, store16, swizzled},
    crate::gemm_tile::PlainStep,
    iron_intrinsics::id::{lane_id, wave_id, workgroup_id_x, workgroup_id_y, workitem_id_x},
    iron_intrinsics::lds,
    iron_intrinsics::matrix::{Accumulate, Fragment, Mma, d_col},
    iron_intrinsics::sync::workgroup_barrier,
    iron_intrinsics::target::WAVE,
};

/// Work-items per workgroup (exactly this many).
pub const THREADS: u32 = 256;
/// Output pixels (rows of A) and output channels (columns of B) per workgroup.
pub const BLOCK: u32 = 64;
/// K elements per LDS tile.
const TILE_K: u32 = 32;
/// Bytes per LDS row of a K tile: 32 elements of 2 bytes without padding, its 16-byte chunks
/// XOR-swizzled per row (`gemm_stage::swizzled`).
const ROW_BYTES: u32 = 2 * TILE_K;
/// Dynamic LDS: A's and B's K tiles, 64 rows each.
pub const LDS_BYTES: u32 = 2 * BLOCK * ROW_BYTES;
/// K elements each work-item gathers per tile (one 16-byte LDS write).
const RUN: u32 = 8;
/// Rows (and columns) of a matrix instruction tile.
const MMA_TILE: u32 = 16;
/// Instruction tiles per wave: the workgroup's 16 over its waves.
const TILES_PER_WAVE: usize = (WAVE / MMA_TILE) as usize;
/// Instruction tiles per row of the workgroup's tile.
const TILES_PER_ROW: u32 = BLOCK / MMA_TILE;

/// `[$value for $t in 0..TILES_PER_WAVE]` (`$t: u32`), written out with constant indices: the
/// accumulators and fragments stay in registers (a loop LLVM does not unroll would put them in
/// scratch memory).
#[cfg(any(iron_wave = "64", not(target_arch = "amdgpu")))]
macro_rules! per_wave_tile {
    (|$t:ident| $value:expr) => {{
        const { assert!(TILES_PER_WAVE == 4) };
        crate::gemm_tile::per_index!(|$t| $value; 0, 1, 2, 3)
    }};
}
/// `[$value for $t in 0..TILES_PER_WAVE]` (see the wave64 definition).
#[cfg(iron_wave = "32")]
macro_rules! per_wave_tile {
    (|$t:ident| $value:expr) => {{
        const { assert!(TILES_PER_WAVE == 2) };
        crate::gemm_tile::per_index!(|$t| $value; 0, 1)
    }};
}

const _: () = assert!(
    ROW_BYTES == SWIZZLED_ROW_BYTES,
    "the staged rows are the GEMM kernels' swizzled rows"
);

/// Eight 16-bit codes, two per word (the lower K index in the low half), moved as one 16-byte
/// access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Run([u32; RUN as usize / 2]);

impl Run {
    /// Nothing: eight zeros.
    const ZERO: Run = Run([0; RUN as usize / 2]);
}

/// Two 16-bit codes in one word, `low` in the low half.
#[inline(always)]
fn pair(low: u16, high: u16) -> u32 {
    u32::from(low) | (u32::from(high) << 16)
}

/// The problem one workgroup works on: the convolution, its group and its tile.
#[derive(Clone, Copy)]
struct Problem {
    ch: Channels,
    win: Window,
    /// Output pixels in all: `batch * OH * OW` (rows of A).
    m: u32,
    /// The reduction length `C * R * S`.
    k: u32,
    /// This workgroup's group.
    group: u32,
    /// Its first row of A.
    row0: u32,
    /// Its first column of B (channel within the group).
    col0: u32,
}

/// An output pixel: image, row, column.
#[derive(Clone, Copy)]
struct Pixel {
    n: u32,
    oh: u32,
    ow: u32,
}

/// A row of A as its gathers read it, worked out once per work-item: the input position under
/// filter tap `(0, 0)` and where the pixel's image and the group's channels start in `x`.
#[derive(Clone, Copy)]
struct RowOrigin {
    /// Input row under filter row 0 (`oh * stride_h - pad_h`, wrapping below 0); for a row
    /// past M, a value that no filter row brings inside the input.
    ih0: u32,
    /// Input column under filter column 0 (`ow * stride_w - pad_w`, wrapping below 0).
    iw0: u32,
    /// Index in `x` of the group's first channel of the pixel's image at input `(0, 0)`.
    base: u32,
}

/// The filter tap of a K index: input channel within the group, filter row and column.
#[derive(Clone, Copy)]
struct Tap {
    c: u32,
    r: u32,
    s: u32,
}

/// The row origin of a row past M: `2^31` plus at most `255 * 255` stays above every input
/// height.
const OUTSIDE: u32 = 1 << 31;

impl Problem {
    /// Output pixel `m` (a row of A).
    #[inline(always)]
    fn pixel(&self, m: u32) -> Pixel {
        let plane = self.win.out_h * self.win.out_w;
        let p = m % plane;
        Pixel {
            n: m / plane,
            oh: p / self.win.out_w,
            ow: p % self.win.out_w,
        }
    }

    /// The gather origin of row `m` of A.
    #[inline(always)]
    fn row_origin<const NHWC: bool>(&self, m: u32) -> RowOrigin {
        let (ch, win) = (&self.ch, &self.win);
        let at = self.pixel(m);
        let channel = self.group * ch.c_per_group;
        let image = win.in_h * win.in_w;
        let base = if NHWC {
            at.n.wrapping_mul(image)
                .wrapping_mul(ch.c_in)
                .wrapping_add(channel)
        } else {
            at.n.wrapping_mul(ch.c_in)
                .wrapping_add(channel)
                .wrapping_mul(image)
        };
        RowOrigin {
            ih0: if m < self.m {
                (at.oh * win.stride_h).wrapping_sub(win.pad_h)
            } else {
                OUTSIDE
            },
            iw0: (at.ow * win.stride_w).wrapping_sub(win.pad_w),
            base,
        }
    }

    /// The filter tap of K index `kk` (in the weight's memory order).
    #[inline(always)]
    fn tap<const NHWC: bool>(&self, kk: u32) -> Tap {
        let (cpg, s) = (self.ch.c_per_group, self.win.s);
        if NHWC {
            let rs = kk / cpg;
            Tap {
                c: kk % cpg,
                r: rs / s,
                s: rs % s,
            }
        } else {
            let cr = kk / s;
            Tap {
                c: cr / self.win.r,
                r: cr % self.win.r,
                s: kk % s,
            }
        }
    }

    /// The tap of the K index after `t`'s.
    #[inline(always)]
    fn next_tap<const NHWC: bool>(&self, t: Tap) -> Tap {
        let (cpg, r_len, s_len) = (self.ch.c_per_group, self.win.r, self.win.s);
        if NHWC {
            let c = t.c + 1;
            let c_wraps = c == cpg;
            let s = t.s + u32::from(c_wraps);
            let s_wraps = s == s_len;
            Tap {
                c: if c_wraps { 0 } else { c },
                r: t.r + u32::from(s_wraps),
                s: if s_wraps { 0 } else { s },
            }
        } else {
            let s = t.s + 1;
            let s_wraps = s == s_len;
            let r = t.r + u32::from(s_wraps);
            let r_wraps = r == r_len;
            Tap {
                c: t.c + u32::from(r_wraps),
                r: if r_wraps { 0 } else { r },
                s: if s_wraps { 0 } else { s },
            }
        }
    }

    /// The index in `x` of tap `t` of the row at `row`, and whether it is inside the input
    /// (else the index is meaningless).
    #[inline(always)]
    fn input_index<const NHWC: bool>(&self, row: RowOrigin, t: Tap) -> (bool, u32) {
        let win = &self.win;
        let ih = row.ih0.wrapping_add(t.r * win.dilation_h);
        let iw = row.iw0.wrapping_add(t.s * win.dilation_w);
        let inside = ih < win.in_h && iw < win.in_w;
        let pixel = ih.wrapping_mul(win.in_w).wrapping_add(iw);
        let index = if NHWC {
            row.base
                .wrapping_add(pixel.wrapping_mul(self.ch.c_in))
                .wrapping_add(t.c)
        } else {
            row.base
                .wrapping_add((t.c * win.in_h).wrapping_mul(win.in_w))
                .wrapping_add(pixel)
        };
        (inside, index)
    }

    /// The index in `y` of output channel `j` of this group at `at`.
    #[inline(always)]
    fn output_index<const NHWC: bool>(&self, at: Pixel, j: u32) -> u32 {
        let (ch, win) = (&self.ch, &self.win);
        let k = self.group * ch.k_per_group + j;
        if NHWC {
            ((at.n * win.out_h + at.oh) * win.out_w + at.ow) * ch.c_out + k
        } else {
            ((at.n * ch.c_out + k) * win.out_h + at.oh) * win.out_w + at.ow
        }
    }
}

/// The `RUN` elements at `p`, one 16-byte access.
///
/// # Safety
/// They must be readable and `p` 16-byte aligned.
#[inline(always)]
unsafe fn read_run(p: *const u16) -> Run {
    // SAFETY: as the caller guarantees.
    unsafe { *(p as *const Run) }
}

/// The `RUN` elements at `p` when `inside`, else zeros. Both cases read, `fallback` in the
/// second, so that the choice is a select rather than a branch around the load: divergent
/// branches cost wave-wide masks in scalar registers.
///
/// # Safety
/// `p` (when `inside`) and `fallback` must be readable for `RUN` elements, 16-byte aligned.
#[inline(always)]
unsafe fn read_run_or_zero(inside: bool, p: *const u16, fallback: *const u16) -> Run {
    // SAFETY: as the caller guarantees.
    let run = unsafe { read_run(if inside { p } else { fallback }) };
    if inside { run } else { Run::ZERO }
}

/// The element at `p` when `inside`, else zero, read as [`read_run_or_zero`] reads.
///
/// # Safety
/// `p` (when `inside`) and `fallback` must be readable.
#[inline(always)]
unsafe fn read_or_zero(inside: bool, p: *const u16, fallback: *const u16) -> u16 {
    // SAFETY: as the caller guarantees.
    let code = unsafe { *(if inside { p } else { fallback }) };
    if inside { code } else { 0 }
}

/// This work-item's `RUN` elements of its row of A (`row`) from K index `k0`, zero outside the
/// matrix. NHWC inputs whose channel counts (per group and in all) are multiples of `RUN` are
/// read as one 16-byte access: the run is then `RUN` consecutive channels of one pixel.
///
/// # Safety
/// `x` must hold the convolution's input, 16-byte aligned, and `w` its weights (`K > 0`
/// elements per output channel, at least `RUN` when `K` is a multiple of `RUN`), 16-byte
/// aligned: `w` is read in place of the padding.
#[inline(always)]
unsafe fn gather_a<const NHWC: bool>(
    (x, w): (*const u16, *const u16),
    p: &Problem,
    row: RowOrigin,
    k0: u32,
) -> Run {
    let mut tap = p.tap::<NHWC>(k0);
    if NHWC && p.ch.c_per_group.is_multiple_of(RUN) && p.ch.c_in.is_multiple_of(RUN) {
        let (inside, i) = p.input_index::<NHWC>(row, tap);
        // SAFETY: when inside, RUN channels of one pixel inside x, starting at a multiple of
        // RUN elements; K, a multiple of RUN, is then also a multiple of RUN.
        return unsafe { read_run_or_zero(inside && k0 < p.k, x.wrapping_add(i as usize), w) };
    }
    let mut codes = [0; RUN as usize];
    for (e, code) in codes.iter_mut().enumerate() {
        let (inside, i) = p.input_index::<NHWC>(row, tap);
        let inside = inside && k0 + (e as u32) < p.k;
        // SAFETY: when inside, an element of x; w holds at least one element.
        *code = unsafe { read_or_zero(inside, x.wrapping_add(i as usize), w) };
        tap = p.next_tap::<NHWC>(tap);
    }
    let mut words = [0; RUN as usize / 2];
    for (i, word) in words.iter_mut().enumerate() {
        *word = pair(codes[2 * i], codes[2 * i + 1]);
    }
    Run(words)
}

/// A column of B as its gathers read it, worked out once per work-item.
#[derive(Clone, Copy)]
struct ColumnOrigin {
    /// The column's first weight (the start of `w` for a column past N).
    start: *const u16,
    /// Its length: `K`, or 0 for a column past N.
    len: u32,
}

/// This work-item's `RUN` elements of its column of B from K index `k0`, zero outside the
/// matrix; one 16-byte access when `K` is a multiple of `RUN`.
///
/// # Safety
/// `w` must hold the convolution's weights (`K > 0` elements per output channel), 16-byte
/// aligned, and `col` must be this convolution's.
#[inline(always)]
unsafe fn gather_b(w: *const u16, p: &Problem, col: ColumnOrigin, k0: u32) -> Run {
    if p.k.is_multiple_of(RUN) {
        // SAFETY: when inside, the run lies inside the column (K is a multiple of RUN), at a
        // multiple of RUN elements from the start of w, which holds at least RUN elements.
        return unsafe { read_run_or_zero(k0 < col.len, col.start.wrapping_add(k0 as usize), w) };
    }
    let mut words = [0; RUN as usize / 2];
    for (i, word) in words.iter_mut().enumerate() {
        let kk = k0 + 2 * i as u32;
        // SAFETY: when inside, weights of the column, inside w; w holds at least one element.
        let code =
            |kk: u32| unsafe { read_or_zero(kk < col.len, col.start.wrapping_add(kk as usize), w) };
        *word = pair(code(kk), code(kk + 1));
    }
    Run(words)
}

/// This work-item's share of K tile `tile`: `RUN` elements of its row of A and of its column of
/// B, zero outside the matrices, as 16-bit codes.
///
/// # Safety
/// `x` and `w` must hold the convolution's input and weights, 16-byte aligned, `K > 0`, and
/// the origins must be this convolution's.
#[inline(always)]
unsafe fn gather<const NHWC: bool>(
    x: *const u16,
    w: *const u16,
    p: &Problem,
    (row, col): (RowOrigin, ColumnOrigin),
    tile: u32,
) -> (Run, Run) {
    let k0 = tile * TILE_K + workitem_id_x() % (TILE_K / RUN) * RUN;
    // SAFETY: as the caller guarantees.
    unsafe {
        (
            gather_a::<NHWC>((x, w), p, row, k0),
            gather_b(w, p, col, k0),
        )
    }
}

/// The implicit GEMM with instruction `I` and output type `T` (module docs).
///
/// # Safety
/// The kernel's contract (module docs).
#[inline(always)]
unsafe fn conv_gemm<I: Mma, T: Float, const NHWC: bool>(
    (x, w, bias, y): (*const u16, *const u16, *const T, *mut T),
    batch: u32,
    ch: Channels,
    win: Window,
) {
    let k = ch.c_per_group * win.r * win.s;
    let col_tiles = ch.k_per_group.div_ceil(BLOCK);
    let p = Problem {
        ch,
        win,
        m: batch * win.out_h * win.out_w,
        k,
        group: workgroup_id_y() / col_tiles,
        row0: workgroup_id_x() * BLOCK,
        col0: workgroup_id_y() % col_tiles * BLOCK,
    };
    let lds_a = lds::dynamic::<u8>();
    // SAFETY: B's tile follows A's in the dynamic LDS (LDS_BYTES).
    let lds_b = unsafe { lds_a.add((BLOCK * ROW_BYTES) as usize) };

    // What this work-item gathers: row `line` of A's tile and column `line` of B's.
    let line = workitem_id_x() / (TILE_K / RUN);
    let row = p.row_origin::<NHWC>(p.row0 + line);
    let col = if p.col0 + line < ch.k_per_group {
        ColumnOrigin {
            // SAFETY: the weights of output channel g * N + col start there.
            start: unsafe { w.add(((p.group * ch.k_per_group + p.col0 + line) * k) as usize) },
            len: k,
        }
    } else {
        ColumnOrigin { start: w, len: 0 }
    };
    // Four work-items a row, one 16-byte chunk each: 8 lanes fill two rows, one bank line.
    let store_at = swizzled(line, workitem_id_x() % (TILE_K / RUN) * RUN * 2) as usize;

    // The instruction tiles of this wave: one row, TILES_PER_WAVE consecutive columns.
    let first_tile = wave_id() * TILES_PER_WAVE as u32;
    let tile_row = first_tile / TILES_PER_ROW;
    let tile_col = first_tile % TILES_PER_ROW;
    let mut acc = [<I::Acc as Accumulate>::zero(); TILES_PER_WAVE];

    // Tile t + 1 is read from global memory while tile t is multiplied.
    let tiles = k.div_ceil(TILE_K);
    // With K = 0 nothing is read: the gathers read w in place of padding, and w may be empty.
    let mut staged = if tiles > 0 {
        // SAFETY: x and w hold the convolution's tensors, K > 0.
        unsafe { gather::<NHWC>(x, w, &p, (row, col), 0) }
    } else {
        (Run::ZERO, Run::ZERO)
    };
    // Each lane reads whole 16-byte chunks of its fragments' rows (gemm_tile::PlainStep): 8
    // consecutive rows at one chunk fall on distinct banks.
    type Step<I> = PlainStep<I, TILE_K>;
    const {
        assert!(TILE_K * I::A_BITS / 8 == ROW_BYTES && I::A_BITS == I::B_BITS);
        assert!(<I::A as Fragment>::BYTES == <I::B as Fragment>::BYTES);
        assert!(I::A_RUNS == 1 && I::B_RUNS == 1);
        assert!(I::M == MMA_TILE && I::N == MMA_TILE);
        assert!(ROW_BYTES.is_multiple_of(Step::<I>::GROUPS * Step::<I>::SPAN));
    };
    let lane = lane_id();
    let group_a = I::a_k(lane, 0) * I::A_BITS / 8 / Step::<I>::FRAGMENT;
    let group_b = I::b_k(lane, 0) * I::B_BITS / 8 / Step::<I>::FRAGMENT;
    for tile in 0..tiles {
        // SAFETY: inside the tiles, 16-byte aligned (a whole chunk of a 64-byte row).
        unsafe {
            store16(lds_a.add(store_at), staged.0.0);
            store16(lds_b.add(store_at), staged.1.0);
        }
        workgroup_barrier();
        if tile + 1 < tiles {
            // SAFETY: as above.
            staged = unsafe { gather::<NHWC>(x, w, &p, (row, col), tile + 1) };
        }
        for span in 0..ROW_BYTES / (Step::<I>::GROUPS * Step::<I>::SPAN) {
            // SAFETY: the instruction tiles' rows lie in the staged tiles, as stored above.
            let sa = unsafe { Step::<I>::span(lds_a, tile_row, group_a, span) };
            // SAFETY: as above.
            let sb =
                per_wave_tile!(|t| unsafe { Step::<I>::span(lds_b, tile_col + t, group_b, span) });
            for step in 0..Step::<I>::SPAN / Step::<I>::FRAGMENT {
                let fa = Step::<I>::fragment::<I::A>(&sa, step);
                let fb = per_wave_tile!(|t| Step::<I>::fragment::<I::B>(&sb[t as usize], step));
                acc = per_wave_tile!(|t| I::mma(fa, fb[t as usize], acc[t as usize]));
            }
        }
        workgroup_barrier();
    }

    for (t, acc) in acc.iter().enumerate() {
        let j = p.col0 + (tile_col + t as u32) * MMA_TILE + d_col::<I>(lane);
        if j >= ch.k_per_group {
            continue;
        }
        let b = if bias.is_null() {
            0.0
        } else {
            // SAFETY: output channel g * N + j < out_channels, which bias holds.
            unsafe { *bias.add((p.group * ch.k_per_group + j) as usize) }.into_f32()
        };
        for i in 0..<I::Acc as Accumulate>::LEN {
            let m = p.row0 + tile_row * MMA_TILE + I::d_row(lane, i as u32);
            if m < p.m {
                let out = p.output_index::<NHWC>(p.pixel(m), j);
                // SAFETY: inside y.
                unsafe { *y.add(out as usize) = T::round_from_f32(acc.element(i) + b) };
            }
        }
    }
}

/// Declares an implicit-GEMM convolution kernel.
macro_rules! gemm_kernel {
    ($name:ident, $t:ident, $core:ident, $nhwc:literal, $layout:literal) => {
        #[doc = concat!("2-D convolution as an implicit GEMM on the matrix cores, ", $layout, ", ", stringify!($t), "; see the module docs.")]
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
            let tensors = (x as *const u16, w as *const u16, bias, y);
            // SAFETY: the launch follows the module's contract.
            unsafe { conv_gemm::<$core, $t, $nhwc>(tensors, batch, ch, win) };
        }
    };
}

gemm_kernel!(conv2d_gemm_nchw_f16, f16, F16Core, false, "NCHW");
gemm_kernel!(conv2d_gemm_nchw_bf16, bf16, Bf16Core, false, "NCHW");
gemm_kernel!(conv2d_gemm_nhwc_f16, f16, F16Core, true, "NHWC");
gemm_kernel!(conv2d_gemm_nhwc_bf16, bf16, Bf16Core, true, "NHWC");
