//! Rotary position embedding (RoPE), in place, on `x: [tokens, heads, head_dim]` row-major, f32,
//! f16 or bf16, with `positions: [tokens]` (u32).
//!
//! - `rope_neox_<t>(x, positions, tokens, heads, head_dim, rotary_dim, theta)`: GPT-NeoX
//!   convention (split halves): element `j` is paired with element `j + rotary_dim / 2`, for
//!   `j < rotary_dim / 2`.
//! - `rope_gptj_<t>(...)`, same arguments: GPT-J convention (interleaved): element `2j` is paired
//!   with element `2j + 1`, for `j < rotary_dim / 2`.
//!
//! Pair `j` of the token at position `p` is rotated by the angle `p * theta^(-2j / rotary_dim)`:
//! `(a, b) -> (a cos - b sin, a sin + b cos)`. Elements from `rotary_dim` to `head_dim` are left
//! untouched. `rotary_dim` is used rounded down to an even number no larger than `head_dim`;
//! `theta` (the base, e.g. 10000) must be positive and finite. Any `tokens` and `heads`.
//!
//! Arithmetic, all in f32 (inputs widened exactly, results rounded once to the element type):
//! `inv_freq_j = exp2(j * s)` with `s = -2 log2(theta) / rotary_dim` (`log2` and `exp2` from
//! `iron_intrinsics::fmath`, within 1 ulp); the angle `p * inv_freq_j` rounded to f32; its sine
//! and cosine by `fmath::sin_cos` (range-reduced, within 2^-22 absolute below 2^22); the
//! rotation with fused multiply-adds. The angle's relative error is at most about
//! `(4 ln2 |e| + 4) 2^-24`, `e = -2j log2(theta) / rotary_dim` its exponent: as accurate as an
//! f32 computation of `p * inv_freq` can be, and like any f32 RoPE it grows with the position.
//!
//! Work: each work-item takes one token and one chunk of pairs (its sines and cosines computed
//! once) and rotates that chunk in every head of the token. Chunks are 16 bytes (4 f32 or 8
//! f16/bf16 elements: NeoX reads one chunk from each half, GPT-J one chunk of interleaved pairs)
//! when `head_dim` and `rotary_dim / 2` (NeoX) or `rotary_dim` (GPT-J) are multiples of that,
//! and one pair otherwise.
//!
//! Launch: 1-D, any grid (grid-stride over `tokens * chunks per token` work-items), workgroups of
//! up to 256, no dynamic LDS. Buffers must be 16-byte aligned (device allocations are).

use crate::dtype::{bf16, f16};
use iron_intrinsics::kernel;
use {
    crate::dtype::{Float, load, narrow, store, widen},
    iron_intrinsics::{
        fmath::{exp2, log2, sin_cos},
        id::{global_id_x, grid_size_x},
        math::mul_add,
    },
};

/// A RoPE launch's arguments.
#[derive(Clone, Copy)]
struct Rope<T> {
    x: *mut T,
    positions: *const u32,
    tokens: u32,
    heads: u32,
    head_dim: u32,
    rotary_dim: u32,
    theta: f32,
}

/// `(a, b)` rotated by the angle whose cosine and sine are `cos` and `sin`.
#[inline(always)]
fn rotate(a: f32, b: f32, cos: f32, sin: f32) -> (f32, f32) {
    (mul_add(a, cos, -(b * sin)), mul_add(a, sin, b * cos))
}

impl<T: Float> Rope<T> {
    /// Rotates every pair, `V` elements per chunk; NeoX pairing when `NEOX`, else GPT-J.
    #[inline(always)]
    fn run<const V: usize, const NEOX: bool>(self) {
        let half = self.rotary_dim / 2;
        let pairs_per_chunk = if NEOX { V } else { V / 2 } as u32;
        let chunks = half / pairs_per_chunk;
        if chunks == 0 {
            return;
        }
        let step = -2.0 * log2(self.theta) / self.rotary_dim as f32;
        let work = self.tokens * chunks;
        let mut item = global_id_x();
        while item < work {
            let (token, chunk) = (item / chunks, item % chunks);
            // SAFETY: token < tokens, the length of positions.
            let position = unsafe { *self.positions.add(token as usize) } as f32;
            let first_pair = chunk * pairs_per_chunk;
            let (mut cos, mut sin) = ([0.0f32; V], [0.0f32; V]);
            for j in 0..pairs_per_chunk as usize {
                let inv_freq = exp2((first_pair + j as u32) as f32 * step);
                (sin[j], cos[j]) = sin_cos(position * inv_freq);
            }
            for head in 0..self.heads {
                let row =
                    (token as usize * self.heads as usize + head as usize) * self.head_dim as usize;
                // SAFETY: x holds tokens * heads rows of head_dim elements.
                let row = unsafe { self.x.add(row) };
                if NEOX {
                    // SAFETY: the chunk and its partner lie in the first rotary_dim elements
                    // of the row; with V > 1, head_dim and half are multiples of V, so both
                    // start 16-byte aligned.
                    let (a, b) = unsafe {
                        (
                            widen(load::<T, V>(row, chunk as usize)),
                            widen(load::<T, V>(row.add(half as usize), chunk as usize)),
                        )
                    };
                    let rotated: [(f32, f32); V] =
                        core::array::from_fn(|l| rotate(a[l], b[l], cos[l], sin[l]));
                    // SAFETY: as above.
                    unsafe {
                        store::<T, V>(row, chunk as usize, narrow(rotated.map(|r| r.0)));
                        store::<T, V>(
                            row.add(half as usize),
                            chunk as usize,
                            narrow(rotated.map(|r| r.1)),
                        );
                    }
                } else {
                    // SAFETY: the chunk lies in the first rotary_dim elements of the row; with
                    // V > 2, head_dim and rotary_dim are multiples of V (16-byte aligned).
                    let v = widen(unsafe { load::<T, V>(row, chunk as usize) });
                    let out: [f32; V] = core::array::from_fn(|l| {
                        let (a, b) = rotate(v[l & !1], v[l | 1], cos[l / 2], sin[l / 2]);
                        if l % 2 == 0 { a } else { b }
                    });
                    // SAFETY: as above.
                    unsafe { store::<T, V>(row, chunk as usize, narrow(out)) };
                }
            }
            item += grid_size_x();
        }
    }

    /// Rotates with 16-byte chunks when the shape allows, one pair at a time otherwise; `PACK`
    /// is [`Float::PACK`].
    #[inline(always)]
    fn dispatch<const PACK: usize, const NEOX: bool>(mut self) {
        const { assert!(PACK == T::PACK) };
        self.rotary_dim = self.rotary_dim.min(self.head_dim) & !1;
        let span = if NEOX {
            self.rotary_dim / 2
        } else {
            self.rotary_dim
        };
        let wide = self.head_dim.is_multiple_of(PACK as u32) && span.is_multiple_of(PACK as u32);
        match (wide, NEOX) {
            (true, _) => self.run::<PACK, NEOX>(),
            (false, true) => self.run::<1, true>(),
            (false, false) => self.run::<2, false>(),
        }
    }
}

/// Declares the NeoX and GPT-J kernels of one element type.
macro_rules! rope_kernels {
    ($t:ident, $pack:literal, $neox:ident, $gptj:ident) => {
        #[doc = concat!("RoPE, NeoX convention (split halves), ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $neox(
            x: *mut $t,
            positions: *const u32,
            tokens: u32,
            heads: u32,
            head_dim: u32,
            rotary_dim: u32,
            theta: f32,
        ) {
            Rope { x, positions, tokens, heads, head_dim, rotary_dim, theta }
                .dispatch::<$pack, true>();
        }

        #[doc = concat!("RoPE, GPT-J convention (interleaved pairs), ", stringify!($t), "; see the module docs.")]
        #[kernel(max_threads = 256)]
        pub fn $gptj(
            x: *mut $t,
            positions: *const u32,
            tokens: u32,
            heads: u32,
            head_dim: u32,
            rotary_dim: u32,
            theta: f32,
        ) {
            Rope { x, positions, tokens, heads, head_dim, rotary_dim, theta }
                .dispatch::<$pack, false>();
        }
    };
}

rope_kernels!(f32, 4, rope_neox_f32, rope_gptj_f32);
rope_kernels!(f16, 8, rope_neox_f16, rope_gptj_f16);
rope_kernels!(bf16, 8, rope_neox_bf16, rope_gptj_bf16);
