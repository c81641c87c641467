//! The SIMD vector type matrix-core intrinsics take and return, and the register fragments built
//! on it: operand fragments of f16, bf16 and byte-coded (FP8/FP6/FP4) elements, and f32
//! accumulators.
//!
//! A fragment is what one lane holds of a matrix operand: a run of elements consecutive along K
//! (operands) or the lane's share of the output (accumulators). Where a lane's elements sit in
//! the matrix is the instruction's lane layout ([`super::MatrixCore`]).

// The host's stand-in for the f16 lanes (the primitive type is nightly-only there).
#[cfg(not(target_arch = "amdgpu"))]
use crate::half::f16;

/// An LLVM vector of `N` lanes of `T` (`<N x T>`), as the intrinsics declare their operands
/// (on the host, which only type-checks kernels, an array).
#[cfg_attr(target_arch = "amdgpu", repr(simd))]
pub(crate) struct Vector<T, const N: usize>(pub(crate) [T; N]);

// Written out: the derived `Clone` of a generic `repr(simd)` type makes rustc fail an internal
// check.
impl<T: Copy, const N: usize> Clone for Vector<T, N> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Copy, const N: usize> Copy for Vector<T, N> {}

/// Eight bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Words2([u32; 2]);

/// Sixteen bytes read or written as one access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Words4([u32; 4]);

/// The 4 bytes at `p`.
///
/// # Safety
/// `p` must be readable for 4 bytes and 4-byte aligned.
#[inline(always)]
unsafe fn read4(p: *const u8) -> u32 {
    // SAFETY: as the caller guarantees.
    unsafe { *(p as *const u32) }
}

/// The 8 bytes at `p`.
///
/// # Safety
/// `p` must be readable for 8 bytes and 8-byte aligned.
#[inline(always)]
unsafe fn read8(p: *const u8) -> [u32; 2] {
    // SAFETY: as the caller guarantees.
    unsafe { (*(p as *const Words2)).0 }
}

/// The 16 bytes at `p`.
///
/// # Safety
/// `p` must be readable for 16 bytes and 16-byte aligned.
#[inline(always)]
unsafe fn read16(p: *const u8) -> [u32; 4] {
    // SAFETY: as the caller guarantees.
    unsafe { (*(p as *const Words4)).0 }
}

/// The words of a fragment read from memory, written out per size without loops (so that they
/// stay in registers): one access per 16 bytes of a run, 8 bytes for runs of 8 or 24 bytes, 4
/// bytes for runs of 4.
pub trait ReadWords: Sized {
    /// The words stored as `runs` equal runs (1, or 2 for 2, 4 and 8 words), run `r` at
    /// `p + r * stride`.
    ///
    /// # Safety
    /// Every run must be readable and aligned to 16 bytes (runs of 16 or 32 bytes), 8 bytes
    /// (runs of 8 or 24) or 4 bytes (runs of 4).
    unsafe fn read_words(p: *const u8, runs: u32, stride: u32) -> Self;
}

impl ReadWords for [u32; 1] {
    #[inline(always)]
    unsafe fn read_words(p: *const u8, _runs: u32, _stride: u32) -> Self {
        // SAFETY: as the caller guarantees (one run of 4 bytes).
        [unsafe { read4(p) }]
    }
}

impl ReadWords for [u32; 2] {
    #[inline(always)]
    unsafe fn read_words(p: *const u8, runs: u32, stride: u32) -> Self {
        // SAFETY: as the caller guarantees (one run of 8 bytes, or two of 4).
        unsafe {
            if runs == 1 {
                read8(p)
            } else {
                [read4(p), read4(p.add(stride as usize))]
            }
        }
    }
}

impl ReadWords for [u32; 4] {
    #[inline(always)]
    unsafe fn read_words(p: *const u8, runs: u32, stride: u32) -> Self {
        // SAFETY: as the caller guarantees.
        unsafe {
            if runs == 1 {
                read16(p)
            } else {
                let ([a, b], [c, d]) = (read8(p), read8(p.add(stride as usize)));
                [a, b, c, d]
            }
        }
    }
}

impl ReadWords for [u32; 6] {
    #[inline(always)]
    unsafe fn read_words(p: *const u8, _runs: u32, _stride: u32) -> Self {
        // SAFETY: as the caller guarantees (one run of 24 bytes, 8-byte aligned).
        let ([a, b], [c, d], [e, f]) = unsafe { (read8(p), read8(p.add(8)), read8(p.add(16))) };
        [a, b, c, d, e, f]
    }
}

impl ReadWords for [u32; 8] {
    #[inline(always)]
    unsafe fn read_words(p: *const u8, runs: u32, stride: u32) -> Self {
        let second = if runs == 1 { 16 } else { stride as usize };
        // SAFETY: as the caller guarantees (16-byte runs or halves, 16-byte aligned).
        let ([a, b, c, d], [e, f, g, h]) = unsafe { (read16(p), read16(p.add(second))) };
        [a, b, c, d, e, f, g, h]
    }
}

/// Reinterprets a value as another of the same size.
#[inline(always)]
fn cast<A: Copy, B: Copy>(a: A) -> B {
    const { assert!(size_of::<A>() == size_of::<B>()) };
    // SAFETY: same size (checked at compile time), and every type cast here is plain data for
    // which any bit pattern is valid.
    unsafe { core::mem::transmute_copy(&a) }
}

/// An operand fragment as it sits in memory: `BYTES` bytes in `runs` equal runs of consecutive
/// elements along K (one run for most instructions; see [`super::MatrixCore::A_RUNS`]).
pub trait Fragment: Copy {
    /// Bytes of the fragment in memory (4, 8, 16, 24 or 32).
    const BYTES: u32;

    /// The fragment stored as `runs` runs of `BYTES / runs` bytes, run `r` at `p + r * stride`.
    ///
    /// # Safety
    /// Every run must be readable and aligned to 16 bytes when its length is a multiple of 16,
    /// else to 8 bytes (4 for runs of 4 bytes).
    unsafe fn read(p: *const u8, runs: u32, stride: u32) -> Self;
}

/// `N` f16 operand elements (`N` = 4, 8 or 16), element `i` the `i`-th along K.
#[derive(Clone, Copy)]
pub struct F16Fragment<const N: usize>(pub(crate) Vector<f16, N>);

impl<const N: usize> F16Fragment<N> {
    /// The fragment of these f16 bit patterns.
    #[inline(always)]
    pub fn from_bits(bits: [u16; N]) -> Self {
        Self(Vector(cast::<[u16; N], [f16; N]>(bits)))
    }
}

/// Implements [`Fragment`] for 16-bit fragments of each length `$n`, read as `$words` words.
macro_rules! half_fragments {
    ($fragment:ident: $($n:literal => $words:literal),*) => {$(
        impl Fragment for $fragment<$n> {
            const BYTES: u32 = 2 * $n;
            #[inline(always)]
            unsafe fn read(p: *const u8, runs: u32, stride: u32) -> Self {
                // SAFETY: as the caller guarantees.
                Self(Vector(cast(unsafe {
                    <[u32; $words]>::read_words(p, runs, stride)
                })))
            }
        }
    )*};
}

half_fragments!(F16Fragment: 4 => 2, 8 => 4, 16 => 8);

/// `N` bf16 operand elements as bit patterns (`N` = 4, 8 or 16), element `i` the `i`-th along K.
#[derive(Clone, Copy)]
pub struct Bf16Fragment<const N: usize>(pub(crate) Vector<i16, N>);

impl<const N: usize> Bf16Fragment<N> {
    /// The fragment of these bf16 bit patterns.
    #[inline(always)]
    pub fn from_bits(bits: [u16; N]) -> Self {
        Self(Vector(cast::<[u16; N], [i16; N]>(bits)))
    }
}

half_fragments!(Bf16Fragment: 4 => 2, 8 => 4, 16 => 8);

/// Byte-coded operand elements (FP8, FP6 or FP4 codes) packed into `W` 32-bit words as
/// `iron_quant::pack` packs them: element `i` in bits `b*i .. b*(i+1)` of the little-endian
/// stream for `b`-bit codes. `W` = 1 (4 FP8 codes), 2 (8 FP8 codes), 4 (32 FP4), 6 (32 FP6) or
/// 8 (32 FP8).
#[derive(Clone, Copy)]
pub struct CodeFragment<const W: usize>(pub(crate) [u32; W]);

impl<const W: usize> CodeFragment<W> {
    /// The fragment of these packed words.
    #[inline(always)]
    pub fn from_words(words: [u32; W]) -> Self {
        Self(words)
    }

    /// The packed words.
    #[inline(always)]
    pub fn words(self) -> [u32; W] {
        self.0
    }
}

impl<const W: usize> Fragment for CodeFragment<W>
where
    [u32; W]: ReadWords,
{
    const BYTES: u32 = 4 * W as u32;
    #[inline(always)]
    unsafe fn read(p: *const u8, runs: u32, stride: u32) -> Self {
        // SAFETY: as the caller guarantees.
        Self(unsafe { <[u32; W]>::read_words(p, runs, stride) })
    }
}

/// `N` f32 accumulator (C and D) elements of one lane (`N` = 4, 8 or 16); where element `i` sits
/// in the output tile is the instruction's D layout.
#[derive(Clone, Copy)]
pub struct Accumulator<const N: usize>(pub(crate) Vector<f32, N>);

impl<const N: usize> Accumulator<N> {
    /// All elements zero.
    #[inline(always)]
    pub fn zero() -> Self {
        Self(Vector([0.0; N]))
    }

    /// The elements, in layout order.
    #[inline(always)]
    pub fn to_array(self) -> [f32; N] {
        cast(self.0)
    }

    /// The accumulator holding `values` in layout order.
    #[inline(always)]
    pub fn from_array(values: [f32; N]) -> Self {
        Self(Vector(values))
    }
}
