//! The float element types of the kernel library and how kernels move them: f32, f16 and bf16
//! in memory, f32 in registers.
//!
//! Kernels take f16 and bf16 buffers as `half`'s types (re-exported by `iron-quant`), so host
//! code launches them with typed slices. On the GPU every value is widened to f32 on load and
//! rounded back (to nearest even) on store; `load` and `store` move `V` elements at a time,
//! as 16-byte accesses when `V` elements fill whole 16-byte words.

pub use iron_quant::half_float::{bf16, f16};

/// A float type kernels read and write; arithmetic happens in f32.
pub trait Float: Copy {
    /// Elements in one 16-byte access.
    const PACK: usize;
    /// Whether llc folds the widening of this type into an `fma` that consumes it (f16:
    /// `v_fma_mix_f32`), so that an `fma` is cheaper than widening and multiplying.
    const WIDENS_INTO_FMA: bool = false;
    /// The value as f32 (exact).
    fn into_f32(self) -> f32;
    /// The value nearest to `x` (ties to even; overflow to infinity; NaN stays NaN).
    fn round_from_f32(x: f32) -> Self;
    /// [`Float::round_from_f32`] of `a` and of `b`, for a gfx that converts two at once.
    #[inline(always)]
    fn round_pair_from_f32(a: f32, b: f32) -> [Self; 2] {
        [Self::round_from_f32(a), Self::round_from_f32(b)]
    }
}

impl Float for f32 {
    const PACK: usize = 4;
    #[inline(always)]
    fn into_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn round_from_f32(x: f32) -> Self {
        x
    }
}

impl Float for f16 {
    const PACK: usize = 8;
    const WIDENS_INTO_FMA: bool = true;
    #[inline(always)]
    fn into_f32(self) -> f32 {
        iron_intrinsics::half::f16_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn round_from_f32(x: f32) -> Self {
        f16::from_bits(iron_intrinsics::half::f32_to_f16(x))
    }
    #[inline(always)]
    fn round_pair_from_f32(a: f32, b: f32) -> [Self; 2] {
        let pair = iron_intrinsics::half::f32_pair_to_f16(a, b);
        [
            f16::from_bits(pair as u16),
            f16::from_bits((pair >> 16) as u16),
        ]
    }
}

impl Float for bf16 {
    const PACK: usize = 8;
    #[inline(always)]
    fn into_f32(self) -> f32 {
        iron_intrinsics::half::bf16_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn round_from_f32(x: f32) -> Self {
        bf16::from_bits(iron_intrinsics::half::f32_to_bf16(x))
    }
    #[inline(always)]
    fn round_pair_from_f32(a: f32, b: f32) -> [Self; 2] {
        let pair = iron_intrinsics::half::f32_pair_to_bf16(a, b);
        [
            bf16::from_bits(pair as u16),
            bf16::from_bits((pair >> 16) as u16),
        ]
    }
}

/// `V` elements aligned to 16 bytes: read and written with 16-byte accesses.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Aligned16<A>(A);

/// Whether `V` elements of `T` are read and written as 16-byte accesses.
const fn is_wide<T, const V: usize>() -> bool {
    V > 1 && (V * size_of::<T>()).is_multiple_of(16)
}

/// Elements `V * chunk .. V * chunk + V` of `p`.
///
/// # Safety
/// They must be in bounds; when `V` elements fill whole 16-byte words, `p` must be 16-byte
/// aligned (device allocations are).
#[inline(always)]
pub unsafe fn load<T: Copy, const V: usize>(p: *const T, chunk: usize) -> [T; V] {
    if is_wide::<T, V>() {
        // SAFETY: in bounds and 16-byte aligned, as the caller guarantees; the wrapper has the
        // size of [T; V] since that is a multiple of 16 bytes.
        unsafe { (*(p as *const Aligned16<[T; V]>).add(chunk)).0 }
    } else {
        // SAFETY: in bounds, as the caller guarantees; [T; V] has T's alignment.
        unsafe { *(p.add(V * chunk) as *const [T; V]) }
    }
}

/// Writes `values` to elements `V * chunk .. V * chunk + V` of `p`.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn store<T: Copy, const V: usize>(p: *mut T, chunk: usize, values: [T; V]) {
    if is_wide::<T, V>() {
        // SAFETY: as in `load`.
        unsafe { *(p as *mut Aligned16<[T; V]>).add(chunk) = Aligned16(values) };
    } else {
        // SAFETY: as in `load`.
        unsafe { *(p.add(V * chunk) as *mut [T; V]) = values };
    }
}

/// The f32 values of `V` elements.
#[inline(always)]
pub fn widen<T: Float, const V: usize>(values: [T; V]) -> [f32; V] {
    core::array::from_fn(|k| values[k].into_f32())
}

/// `V` f32 values rounded to `T`.
#[inline(always)]
pub fn narrow<T: Float, const V: usize>(values: [f32; V]) -> [T; V] {
    core::array::from_fn(|k| T::round_from_f32(values[k]))
}

/// [`narrow`], two at a time where the gfx converts pairs: for values loaded as they are (a
/// cast). After arithmetic the pair conversion, opaque to LLVM's vectorizer until iron-build
/// defines it, would keep the arithmetic from using packed f32 instructions (gfx950's f16
/// RMSNorm ran 132 `v_mul_f32` instead of 64 `v_pk_mul_f32` that way).
#[inline(always)]
pub fn narrow_in_pairs<T: Float, const V: usize>(values: [f32; V]) -> [T; V] {
    core::array::from_fn(|k| {
        let first = k & !1;
        if first + 1 < V {
            T::round_pair_from_f32(values[first], values[first + 1])[k - first]
        } else {
            T::round_from_f32(values[k])
        }
    })
}

/// The byte offset of chunk `chunk` of `V` elements of `T`, computed in 32 bits: the address is
/// then a base plus a 32-bit offset, which global loads and stores add themselves (and which
/// takes one register per lane instead of two).
#[inline(always)]
fn offset32<T, const V: usize>(chunk: u32) -> usize {
    (chunk * (V * size_of::<T>()) as u32) as usize
}

/// [`load`] of a chunk less than 4 GiB from `p`.
///
/// # Safety
/// As for [`load`], and `(chunk + 1) * V * size_of::<T>()` must be below 2^32.
#[inline(always)]
pub unsafe fn load_near<T: Copy, const V: usize>(p: *const T, chunk: u32) -> [T; V] {
    // SAFETY: as the caller guarantees.
    unsafe { load::<T, V>(p.byte_add(offset32::<T, V>(chunk)), 0) }
}

/// [`store`] to a chunk less than 4 GiB from `p`.
///
/// # Safety
/// As for [`load_near`].
#[inline(always)]
pub unsafe fn store_near<T: Copy, const V: usize>(p: *mut T, chunk: u32, values: [T; V]) {
    // SAFETY: as the caller guarantees.
    unsafe { store::<T, V>(p.byte_add(offset32::<T, V>(chunk)), 0, values) }
}
