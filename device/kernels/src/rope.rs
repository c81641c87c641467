//! Rotary position embedding (RoPE), in place, on `x: [tokens, heads, head_dim]` row-major, f32,
//! f16 or bf16, with `positions: [tokens]` (u32).
//!
//! - `rope_neox_<t>(x, positions, tokens, heads, head_dim, rotary_dim, theta, head_groups)`:
//!   GPT-NeoX convention (split halves): element `j` is paired with element
//!   `j + rotary_dim / 2`, for `j < rotary_dim / 2`.
//! - `rope_gptj_<t>(...)`, same arguments: GPT-J convention (interleaved): element `2j` is paired
//!   with element `2j + 1`, for `j < rotary_dim / 2`.
//!
//! Pair `j` of the token at position `p` is rotated by the angle `p * theta^(-2j / rotary_dim)`:
//! `(a, b) -> (a cos - b sin, a sin + b cos)`. Elements from `rotary_dim` to `head_dim` are left
//! untouched. `rotary_dim` is used rounded down to an even number no larger than `head_dim`;
//! `theta` (the base, e.g. 10000) must be positive and finite. Any `tokens` and `heads`.
//!
//! Arithmetic, all in f32 (inputs widened exactly, results rounded once to the element type):
//! `inv_freq_j = exp2(j * s)` with `s = -2 log2(theta) / rotary_dim` (`log2` and `exp2_normal`
//! from `iron_intrinsics::fmath`, within 1 ulp; an `inv_freq` below `2^-126`, which takes a base
//! beyond `2^63`, is 0, moving the angle by less than `2^-94`); the angle `p * inv_freq_j`
//! rounded to f32; its sine and cosine by `fmath::sin_cos` (range-reduced, within 2^-22 absolute
//! below 2^22); the rotation with fused multiply-adds. The angle's relative error is at most
//! about `(4 ln2 |e| + 4) 2^-24`, `e = -2j log2(theta) / rotary_dim` its exponent: as accurate as
//! an f32 computation of `p * inv_freq` can be, and like any f32 RoPE it grows with the position.
//!
//! Work: the heads of a token are dealt to `head_groups` groups (heads `g`, `g + head_groups`, ...;
//! `head_groups` is clamped to 1..=heads). Each work-item takes one token, one group and one chunk
//! of pairs, computes that chunk's sines and cosines once, and rotates the chunk in every head of
//! its group, reading the group's first head before computing them so that the read's latency
//! overlaps them. More groups mean more work-items to fill the device with; fewer mean sines and
//! cosines shared by more heads. Chunks are 16 bytes (4 f32 or 8 f16/bf16 elements: NeoX reads one
//! chunk from each half, GPT-J one chunk of interleaved pairs) when `head_dim` and `rotary_dim / 2`
//! (NeoX) or `rotary_dim` (GPT-J) are multiples of that, and one pair otherwise. Consecutive
//! work-items take consecutive chunks, then groups, then tokens.
//!
//! Launch: 1-D, any grid (grid-stride over the `tokens * groups * chunks per token` work-items,
//! a count that with the grid's work-items must stay below 2^32), workgroups of up to 256, no
//! dynamic LDS. Buffers must be 16-byte aligned (device allocations are).

use crate::dtype::{bf16, f16};
use crate::wave_read::read_once_per_wave;
use iron_intrinsics::kernel;
use {
    crate::dtype::{Float, load, narrow, store, widen},
    iron_intrinsics::{
        fmath::{exp2_normal, log2, sin_cos},
        id::{global_id_x, grid_size_x},
        math::mul_add,
        sync::schedule_fence,
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
    head_groups: u32,
}

/// `(a, b)` rotated by the angle whose cosine and sine are `cos` and `sin`.
#[inline(always)]
fn rotate(a: f32, b: f32, cos: f32, sin: f32) -> (f32, f32) {
    (mul_add(a, cos, -(b * sin)), mul_add(a, sin, b * cos))
}

/// The sines and cosines of one chunk's pairs.
#[derive(Clone, Copy)]
struct Turn<const V: usize> {
    cos: [f32; V],
    sin: [f32; V],
}

impl<const V: usize> Turn<V> {
    /// A chunk as [`Rope::read`] gives it, widened and rotated: NeoX pairs `(a[l], b[l])` by pair
    /// `l`'s angle, GPT-J pairs `(a[2j], a[2j + 1])` by pair `j`'s.
    #[inline(always)]
    fn apply<T: Float, const NEOX: bool>(&self, (a, b): ([T; V], [T; V])) -> ([f32; V], [f32; V]) {
        let (a, b) = (widen(a), widen(b));
        if NEOX {
            let rotated: [(f32, f32); V] =
                core::array::from_fn(|l| rotate(a[l], b[l], self.cos[l], self.sin[l]));
            (rotated.map(|r| r.0), rotated.map(|r| r.1))
        } else {
            let out = core::array::from_fn(|l| {
                let (x, y) = rotate(a[l & !1], a[l | 1], self.cos[l / 2], self.sin[l / 2]);
                if l % 2 == 0 { x } else { y }
            });
            (out, b)
        }
    }
}

impl<T: Float> Rope<T> {
    /// Rotates every pair, `V` elements per chunk; NeoX pairing when `NEOX`, else GPT-J.
    #[inline(always)]
    fn run<const V: usize, const NEOX: bool>(self) {
        let half = self.rotary_dim / 2;
        let pairs_per_chunk = if NEOX { V } else { V / 2 } as u32;
        let chunks = half / pairs_per_chunk;
        if chunks == 0 || self.heads == 0 {
            return;
        }
        let groups = self.head_groups.clamp(1, self.heads);
        let step = -2.0 * log2(self.theta) / self.rotary_dim as f32;
        let work = self.tokens * groups * chunks;
        let mut item = global_id_x();
        while item < work {
            let (row_group, chunk) = (item / chunks, item % chunks);
            let (token, group) = (row_group / groups, row_group % groups);
            // Read once per token in the wave (its work-items mostly share one), before the
            // heads: the counters wait for reads in order.
            // SAFETY: token < tokens, the length of positions, for every active work-item.
            let position = unsafe { read_once_per_wave(self.positions, token) } as f32;
            // The first head is read before the sines and cosines are computed, so that its
            // latency overlaps them; the fence keeps llc from sinking the read to its use.
            // (Reading each next head before writing back the one before it carried the read
            // across iterations split into elements, which waited for it at once.)
            let first = self.read::<V, NEOX>(token, group, chunk);
            schedule_fence();
            let first_pair = chunk * pairs_per_chunk;
            let (mut cos, mut sin) = ([0.0f32; V], [0.0f32; V]);
            for j in 0..pairs_per_chunk as usize {
                let inv_freq = exp2_normal((first_pair + j as u32) as f32 * step);
                (sin[j], cos[j]) = sin_cos(position * inv_freq);
            }
            let turn = Turn { cos, sin };
            self.write::<V, NEOX>(token, group, chunk, turn.apply::<T, NEOX>(first));
            let mut head = group + groups;
            while head < self.heads {
                let held = self.read::<V, NEOX>(token, head, chunk);
                self.write::<V, NEOX>(token, head, chunk, turn.apply::<T, NEOX>(held));
                head += groups;
            }
            item += grid_size_x();
        }
    }

    /// The first element of head `head` of token `token`.
    #[inline(always)]
    fn row(&self, token: u32, head: u32) -> *mut T {
        let row = (token as usize * self.heads as usize + head as usize) * self.head_dim as usize;
        // SAFETY: callers pass token < tokens and head < heads; x holds tokens * heads rows of
        // head_dim elements.
        unsafe { self.x.add(row) }
    }

    /// Chunk `chunk` of a head as stored: NeoX's `a` (first half) and `b` (second half), or
    /// GPT-J's interleaved pairs in `a` (`b` the same).
    #[inline(always)]
    fn read<const V: usize, const NEOX: bool>(
        &self,
        token: u32,
        head: u32,
        chunk: u32,
    ) -> ([T; V], [T; V]) {
        let row = self.row(token, head);
        if NEOX {
            // SAFETY: the chunk and its partner lie in the first rotary_dim elements of the
            // row; with V > 1, head_dim and half are multiples of V, so both start 16-byte
            // aligned.
            unsafe {
                (
                    load::<T, V>(row, chunk as usize),
                    load::<T, V>(row.add(self.rotary_dim as usize / 2), chunk as usize),
                )
            }
        } else {
            // SAFETY: the chunk lies in the first rotary_dim elements of the row; with V > 2,
            // head_dim and rotary_dim are multiples of V (16-byte aligned).
            let a = unsafe { load::<T, V>(row, chunk as usize) };
            (a, a)
        }
    }

    /// Writes a chunk rotated by [`Turn::apply`] back where [`Rope::read`] read it, rounded to
    /// the element type.
    #[inline(always)]
    fn write<const V: usize, const NEOX: bool>(
        &self,
        token: u32,
        head: u32,
        chunk: u32,
        (a, b): ([f32; V], [f32; V]),
    ) {
        let row = self.row(token, head);
        // SAFETY: as in `read`.
        unsafe {
            store::<T, V>(row, chunk as usize, narrow(a));
            if NEOX {
                store::<T, V>(
                    row.add(self.rotary_dim as usize / 2),
                    chunk as usize,
                    narrow(b),
                );
            }
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
            head_groups: u32,
        ) {
            Rope { x, positions, tokens, heads, head_dim, rotary_dim, theta, head_groups }
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
            head_groups: u32,
        ) {
            Rope { x, positions, tokens, heads, head_dim, rotary_dim, theta, head_groups }
                .dispatch::<$pack, false>();
        }
    };
}

rope_kernels!(f32, 4, rope_neox_f32, rope_gptj_f32);
rope_kernels!(f16, 8, rope_neox_f16, rope_gptj_f16);
rope_kernels!(bf16, 8, rope_neox_bf16, rope_gptj_bf16);
