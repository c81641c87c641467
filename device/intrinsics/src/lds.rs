//! LDS (local data share): fast memory shared by a workgroup.
//!
//! Two kinds, usable together:
//! - **Static LDS**: typed arrays declared in the kernel with [`array!`], several per kernel.
//!   Their sizes are known when the kernel is compiled, so the code object carries them
//!   (`.group_segment_fixed_size`) and the host passes nothing for them.
//! - **Dynamic LDS** ([`dynamic`]): one untyped region whose size the launch gives (the host's
//!   launch configuration), placed after the static arrays. A kernel declares how much it needs
//!   with `#[kernel(dynamic_lds = |threads, wave| bytes)]`.
//!
//! LDS starts undefined in every workgroup: write an element before reading it, and separate
//! one work-item's writes from another's reads with a workgroup barrier.

use core::marker::PhantomData;

/// The start of this workgroup's dynamic LDS, typed as `T` (aligned for `T`).
///
/// Every call in a kernel returns the same address, after the kernel's static arrays; the launch
/// must reserve at least as many bytes as the kernel reads or writes through it.
#[inline(always)]
pub fn dynamic<T>() -> *mut T {
    crate::arch::gpu_launch_sized_workgroup_mem::<T>()
}

crate::arch::gpu_extern! { "C" {
    /// The address of the static LDS array of `bytes` bytes aligned to `align` declared at the
    /// source location `site`. Never linked: the build replaces every call by the address of an
    /// LDS variable of that size (one per site, size and alignment), and fails on any call it
    /// cannot resolve. Declared without side effects so that the compiler may merge and hoist
    /// the calls like the address computation they stand for.
    #[gpu(unsafe(ffi_const))]
    #[link_name = "iron.lds.static"]
    fn static_array(bytes: u32, align: u32, site: u64) -> *mut u8;
}}

/// An array of `N` values of `T` in static LDS, shared by the workgroup: see [`array!`].
///
/// A copyable handle to the array's address; it gives raw pointers, since LDS is shared
/// between the workgroup's work-items and Rust's references cannot express that.
pub struct Array<T, const N: usize> {
    base: *mut T,
    element: PhantomData<T>,
}

impl<T, const N: usize> Clone for Array<T, N> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for Array<T, N> {}

impl<T, const N: usize> Array<T, N> {
    /// The number of elements.
    pub const LEN: usize = N;

    /// The array declared at the source location whose id is `site`; written by [`array!`].
    #[doc(hidden)]
    #[inline(always)]
    pub fn at_site(site: u64) -> Self {
        let bytes = core::mem::size_of::<[T; N]>();
        // SAFETY: the build replaces the call by the address of an LDS variable of `bytes`
        // bytes aligned for `T`; the call itself does nothing.
        let base = unsafe { static_array(bytes as u32, core::mem::align_of::<T>() as u32, site) };
        Array {
            base: base.cast(),
            element: PhantomData,
        }
    }

    /// The first element's address.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut T {
        self.base
    }

    /// Element `i`'s address; panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn at(self, i: usize) -> *mut T {
        assert!(i < N, "LDS array index out of bounds");
        // SAFETY: i < N, inside the array.
        unsafe { self.base.add(i) }
    }

    /// Element `i`; panics (traps) when `i >= N`.
    ///
    /// # Safety
    /// The element was written (LDS starts undefined), and no other work-item writes it
    /// concurrently: a workgroup barrier separates their write from this read.
    #[inline(always)]
    pub unsafe fn read(self, i: usize) -> T {
        // SAFETY: in bounds (checked); initialized and race-free as the caller guarantees.
        unsafe { self.at(i).read() }
    }

    /// Writes `value` to element `i`; panics (traps) when `i >= N`.
    ///
    /// # Safety
    /// No other work-item reads or writes element `i` concurrently: a workgroup barrier
    /// separates their accesses from this write.
    #[inline(always)]
    pub unsafe fn write(self, i: usize, value: T) {
        // SAFETY: in bounds (checked); race-free as the caller guarantees.
        unsafe { self.at(i).write(value) }
    }
}

/// A 64-bit id of a source location (`file:line:column`), FNV-1a: distinct static arrays get
/// distinct variables.
#[doc(hidden)]
pub const fn site_id(location: &str) -> u64 {
    let bytes = location.as_bytes();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// Declares a typed array in static LDS: `lds::array!([T; N])` is an [`Array<T, N>`].
///
/// Each use in the source is one array per workgroup: evaluated twice (in a loop, or in a
/// function called twice) it names the same memory, like a `static`. Arrays of different uses
/// never overlap. The build sizes the kernel's static LDS from them, and the launch checks
/// static plus dynamic LDS against the device.
///
/// ```ignore
/// use iron_intrinsics::lds;
/// let tile = lds::array!([f32; 256]);
/// let sums = lds::array!([u32; 16]);
/// unsafe { tile.write(local_linear_id() as usize, x) };
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! __lds_array {
    ([$t:ty; $n:expr]) => {
        $crate::lds::Array::<$t, { $n }>::at_site(
            const { $crate::lds::site_id(concat!(file!(), ":", line!(), ":", column!())) },
        )
    };
}

pub use crate::__lds_array as array;
