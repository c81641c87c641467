//! Operations across the lanes of one wave: shuffles, votes, reductions and scans.
//!
//! Unless a function says otherwise it is wave-wide: every lane of the wave must reach it with all
//! lanes active (wave-uniform control flow, and a workgroup size that is a multiple of
//! [`WAVE`]); a kernel handling a tail gives out-of-range lanes the operation's identity instead of
//! branching around the call. Reductions and scans work within rows of 16 lanes with DPP and
//! combine rows with permlane instructions (RDNA) or `v_readlane` (CDNA), for both wave sizes.

use crate::arch as amdgpu;
use crate::id::lane_id;
use crate::target::WAVE;

/// A 32-bit value that can travel between lanes.
pub trait WaveValue: Copy {
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value with these bits.
    fn from_bits(bits: u32) -> Self;
}

impl WaveValue for u32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

impl WaveValue for i32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

impl WaveValue for f32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

/// A number that waves can sum, and take the maximum and minimum of.
pub trait WaveNum: WaveValue {
    /// The identity of addition.
    const ZERO: Self;
    /// The identity of `max` (the smallest value, `-inf` for floats).
    const LOWEST: Self;
    /// The identity of `min` (the largest value, `+inf` for floats).
    const HIGHEST: Self;
    /// `self + other` (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// The larger of the two (for floats: a NaN operand is ignored, as `f32::max` does).
    fn max(self, other: Self) -> Self;
    /// The smaller of the two (for floats: a NaN operand is ignored, as `f32::min` does).
    fn min(self, other: Self) -> Self;
}

impl WaveNum for f32 {
    const ZERO: Self = 0.0;
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f32::max(self, other)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f32::min(self, other)
    }
}

impl WaveNum for u32 {
    const ZERO: Self = 0;
    const LOWEST: Self = 0;
    const HIGHEST: Self = u32::MAX;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Ord::max(self, other)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Ord::min(self, other)
    }
}

impl WaveNum for i32 {
    const ZERO: Self = 0;
    const LOWEST: Self = i32::MIN;
    const HIGHEST: Self = i32::MAX;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Ord::max(self, other)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Ord::min(self, other)
    }
}

/// DPP controls (same encodings on gfx9, gfx11 and gfx12).
mod dpp_ctrl {
    /// quad_perm [1,0,3,2]: swap neighbours.
    pub const QUAD_XOR1: u32 = 0xB1;
    /// quad_perm [2,3,0,1]: swap pairs.
    pub const QUAD_XOR2: u32 = 0x4E;
    /// row_ror:4 (rotate right by 4 within a row of 16).
    pub const ROW_ROR4: u32 = 0x124;
    /// row_ror:8.
    pub const ROW_ROR8: u32 = 0x128;
    /// row_shr:1.
    pub const ROW_SHR1: u32 = 0x111;
    /// row_shr:2.
    pub const ROW_SHR2: u32 = 0x112;
    /// row_shr:4.
    pub const ROW_SHR4: u32 = 0x114;
    /// row_shr:8.
    pub const ROW_SHR8: u32 = 0x118;
}

/// Moves `src` across lanes by the DPP control `CTRL`; lanes with no source keep `old`.
#[inline(always)]
fn dpp<T: WaveValue, const CTRL: u32>(old: T, src: T) -> T {
    // SAFETY: DPP moves need all lanes active, which wave-wide callers guarantee.
    T::from_bits(unsafe {
        amdgpu::update_dpp::<CTRL, 0xF, 0xF, false>(old.to_bits(), src.to_bits())
    })
}

/// Moves `src` across lanes by the DPP control `CTRL`, which gives every lane a source (a quad
/// permutation or a rotation within rows). Written with `bound_ctrl` and all rows and banks
/// enabled, the move can be folded by LLVM into the instruction that uses it (`v_add_f32_dpp`)
/// instead of costing a copy and a `v_mov_b32_dpp`; with a source for every lane, `bound_ctrl`
/// never applies.
#[inline(always)]
fn dpp_every_lane<T: WaveValue, const CTRL: u32>(src: T) -> T {
    // SAFETY: DPP moves need all lanes active, which wave-wide callers guarantee.
    T::from_bits(unsafe { amdgpu::update_dpp::<CTRL, 0xF, 0xF, true>(0, src.to_bits()) })
}

/// The value `x` holds in lane `src_lane` (taken modulo [`WAVE`]). Wave-wide.
#[inline(always)]
pub fn shuffle<T: WaveValue>(x: T, src_lane: u32) -> T {
    // SAFETY: ds_bpermute reads another lane's register through the LDS crossbar; any lane index
    // is valid (it wraps), and it needs no LDS allocation.
    let direct = unsafe { amdgpu::ds_bpermute(src_lane << 2, x.to_bits()) };
    // gfx11's crossbar permutes each half of a wave64 on its own: a lane whose source is in the
    // other half reads the halves swapped by v_permlane64.
    #[cfg(all(iron_gfx = "gfx1100", iron_wave = "64"))]
    {
        // SAFETY: as above; v_permlane64 needs all lanes active, as every wave-wide op does.
        let swapped =
            unsafe { amdgpu::ds_bpermute(src_lane << 2, amdgpu::permlane64_u32(x.to_bits())) };
        if (src_lane ^ lane_id()) & 32 != 0 {
            return T::from_bits(swapped);
        }
    }
    T::from_bits(direct)
}

/// The value `x` holds in lane `lane_id() ^ mask`. Wave-wide.
#[inline(always)]
pub fn shuffle_xor<T: WaveValue>(x: T, mask: u32) -> T {
    shuffle(x, lane_id() ^ mask)
}

/// The value `x` holds in the first active lane (`v_readfirstlane`). Any subset of lanes may call
/// it; the result is wave-uniform.
#[inline(always)]
pub fn broadcast_first<T: WaveValue>(x: T) -> T {
    T::from_bits(amdgpu::readfirstlane_u32(x.to_bits()))
}

/// One bit per lane, set where `predicate` is true and the lane is active (bits above [`WAVE`] are
/// zero). Any subset of lanes may call it; the result is wave-uniform.
#[inline(always)]
pub fn ballot(predicate: bool) -> u64 {
    amdgpu::ballot(predicate)
}

/// Whether `predicate` holds in every active lane.
#[inline(always)]
pub fn all(predicate: bool) -> bool {
    ballot(!predicate) == 0
}

/// Whether `predicate` holds in any active lane.
#[inline(always)]
pub fn any(predicate: bool) -> bool {
    ballot(predicate) != 0
}

/// The value `x` holds in lane `lane` (`v_readlane`: a wave-uniform lane index below [`WAVE`]),
/// wave-uniform. The lane read must hold the value: active, or set while it was.
#[inline(always)]
pub fn read_lane<T: WaveValue>(x: T, lane: u32) -> T {
    // SAFETY: the lane index is uniform and in range by construction at every call site.
    T::from_bits(unsafe { amdgpu::readlane_u32(x.to_bits(), lane) })
}

/// Combines the rows of 16 lanes of `v`, every lane of a row holding the row's result (as
/// [`reduce`] leaves it), into the wave's result, in every lane.
///
/// CDNA (wave64) reads the four rows' values with `v_readlane` and combines them as
/// `(r0 op r1) op (r2 op r3)`: uniform, so the same in every lane, and no trip through the LDS
/// crossbar. RDNA swaps the rows of each half with `v_permlanex16`; a wave64 then combines its
/// halves through `v_readlane` of lanes 0 and 32 (`v_permlane64` would be the natural move, but llc
/// sinks it into a following divergent branch, where it reads lanes the branch left stale).
#[inline(always)]
fn combine_rows<T: WaveNum>(v: T, op: fn(T, T) -> T) -> T {
    #[cfg(iron_family = "rdna")]
    {
        // SAFETY: permlane moves need all lanes active, which wave-wide callers guarantee.
        let other = unsafe {
            amdgpu::permlanex16_u32::<false, false>(
                v.to_bits(),
                v.to_bits(),
                0x7654_3210,
                0xFEDC_BA98,
            )
        };
        let halves = op(v, T::from_bits(other));
        if WAVE == 64 {
            op(read_lane(halves, 0), read_lane(halves, 32))
        } else {
            halves
        }
    }
    #[cfg(not(iron_family = "rdna"))]
    {
        let (r0, r1) = (read_lane(v, 0), read_lane(v, 16));
        let (r2, r3) = (read_lane(v, 32), read_lane(v, 48));
        op(op(r0, r1), op(r2, r3))
    }
}

#[inline(always)]
fn reduce<T: WaveNum>(x: T, op: fn(T, T) -> T) -> T {
    let mut v = op(dpp_every_lane::<T, { dpp_ctrl::QUAD_XOR1 }>(x), x);
    v = op(dpp_every_lane::<T, { dpp_ctrl::QUAD_XOR2 }>(v), v);
    v = op(dpp_every_lane::<T, { dpp_ctrl::ROW_ROR4 }>(v), v);
    v = op(dpp_every_lane::<T, { dpp_ctrl::ROW_ROR8 }>(v), v);
    combine_rows(v, op)
}

#[inline(always)]
fn inclusive_scan<T: WaveNum>(x: T, identity: T, op: fn(T, T) -> T) -> T {
    let mut v = op(x, dpp::<T, { dpp_ctrl::ROW_SHR1 }>(identity, x));
    v = op(v, dpp::<T, { dpp_ctrl::ROW_SHR2 }>(identity, v));
    v = op(v, dpp::<T, { dpp_ctrl::ROW_SHR4 }>(identity, v));
    v = op(v, dpp::<T, { dpp_ctrl::ROW_SHR8 }>(identity, v));
    let row = lane_id() / 16;
    let mut earlier = identity;
    let mut r = 0;
    while r + 1 < WAVE / 16 {
        let row_total = read_lane(v, 16 * r + 15);
        if r < row {
            earlier = op(earlier, row_total);
        }
        r += 1;
    }
    op(earlier, v)
}

/// The sum of `x` over the wave, in every lane. Wave-wide.
#[inline(always)]
pub fn reduce_sum<T: WaveNum>(x: T) -> T {
    reduce(x, T::add)
}

/// The maximum of `x` over the wave, in every lane. Wave-wide.
#[inline(always)]
pub fn reduce_max<T: WaveNum>(x: T) -> T {
    reduce(x, T::max)
}

/// The minimum of `x` over the wave, in every lane. Wave-wide.
#[inline(always)]
pub fn reduce_min<T: WaveNum>(x: T) -> T {
    reduce(x, T::min)
}

/// Inclusive prefix sum: lane `i` gets the sum of `x` over lanes `0..=i`. Wave-wide.
#[inline(always)]
pub fn scan_sum<T: WaveNum>(x: T) -> T {
    inclusive_scan(x, T::ZERO, T::add)
}

/// Inclusive prefix maximum over lanes `0..=i`. Wave-wide.
#[inline(always)]
pub fn scan_max<T: WaveNum>(x: T) -> T {
    inclusive_scan(x, T::LOWEST, T::max)
}

/// Inclusive prefix minimum over lanes `0..=i`. Wave-wide.
#[inline(always)]
pub fn scan_min<T: WaveNum>(x: T) -> T {
    inclusive_scan(x, T::HIGHEST, T::min)
}
