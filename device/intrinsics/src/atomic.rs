//! Atomic operations and fences on device memory, with an ordering and a scope.
//!
//! Every operation takes a [`core::sync::atomic::Ordering`] and a [`Scope`]: the set of waves
//! the ordering holds for. A narrower scope costs less: on gfx942 an agent-scope release writes
//! back the L2 (`buffer_wbl2 sc1`) and a system-scope one also reaches the host, while a
//! workgroup-scope one on CDNA is a wait. [`Scope::Agent`] (every wave of the device) is what
//! inter-workgroup protocols need and is the scope of the shorthands [`add_u32`] and friends.
//! Both the ordering and the scope must be constants known at compile time; an ordering an
//! operation cannot have (a release load, an acquire store) fails the build with an error
//! naming the call.
//!
//! `core::sync::atomic` also works in kernels, always at system scope: its read-modify-writes
//! become `sc0 sc1` accesses on gfx942 and its fences write back and invalidate caches for the
//! host's sake, and its floating-point operations do not exist. Prefer this module.
//!
//! The read-modify-writes here act on device memory (the buffers a launch passes, LDS through a
//! generic pointer) and tell LLVM so, which lets it use the hardware's float atomics. Do not
//! point them at fine-grained host memory.
//!
//! ```ignore
//! use iron_intrinsics::atomic::{self, Ordering, Scope};
//! // Publish a value to later workgroups, then read a predecessor's.
//! unsafe { atomic::store(flag, value, Ordering::Release, Scope::Agent) };
//! let seen = unsafe { atomic::load(other_flag, Ordering::Acquire, Scope::Agent) };
//! ```

// `u32` and `i32` (and `u64` and `i64`) declare the same markers, which LLVM types alike.
#![allow(clashing_extern_declarations)]

pub use core::sync::atomic::Ordering;

/// The waves an atomic operation or fence synchronises with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The lanes of this wave.
    Wave,
    /// The waves of this workgroup.
    Workgroup,
    /// Every wave of the device (LLVM's agent scope).
    Agent,
    /// The device, the host and other devices.
    System,
}

/// The scope's code in the atomic markers (see iron-build's `atomics`).
#[inline(always)]
const fn scope_code(scope: Scope) -> i32 {
    match scope {
        Scope::Wave => 0,
        Scope::Workgroup => 1,
        Scope::Agent => 2,
        Scope::System => 3,
    }
}

/// The ordering's code in the atomic markers; an ordering Rust adds later is taken as SeqCst.
#[inline(always)]
const fn ordering_code(order: Ordering) -> i32 {
    match order {
        Ordering::Relaxed => 0,
        Ordering::Acquire => 1,
        Ordering::Release => 2,
        Ordering::AcqRel => 3,
        _ => 4,
    }
}

/// A type the device can load, store and exchange atomically: `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64`.
pub trait Atomic: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn load(ptr: *const Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn store(ptr: *mut Self, value: Self, order: i32, scope: i32);
    #[doc(hidden)]
    unsafe fn swap(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn add(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn sub(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn max(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn min(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
}

/// An integer the device operates on atomically, bitwise and by compare-and-swap too.
pub trait AtomicInteger: Atomic {
    #[doc(hidden)]
    unsafe fn cmpxchg(
        ptr: *mut Self,
        current: Self,
        new: Self,
        success: i32,
        failure: i32,
        scope: i32,
    ) -> Self;
    #[doc(hidden)]
    unsafe fn and(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn or(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
    #[doc(hidden)]
    unsafe fn xor(ptr: *mut Self, value: Self, order: i32, scope: i32) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

/// Declares the markers of one type and implements [`Atomic`] with them; `$max` and `$min`
/// are the LLVM operations that order it (signed, unsigned or float).
macro_rules! atomic_type {
    ($t:ty, $ll:literal, $add:literal, $sub:literal, $max:literal, $min:literal) => {
        impl sealed::Sealed for $t {}
        impl Atomic for $t {
            #[inline(always)]
            unsafe fn load(ptr: *const $t, order: i32, scope: i32) -> $t {
                crate::arch::gpu_extern! { "C" {
                    #[link_name = concat!("iron.atomic.load.", $ll)]
                    fn marker(ptr: *const $t, order: i32, scope: i32) -> $t;
                }}
                // SAFETY: the marker becomes the atomic load; the caller's contract is its.
                unsafe { marker(ptr, order, scope) }
            }
            #[inline(always)]
            unsafe fn store(ptr: *mut $t, value: $t, order: i32, scope: i32) {
                crate::arch::gpu_extern! { "C" {
                    #[link_name = concat!("iron.atomic.store.", $ll)]
                    fn marker(ptr: *mut $t, value: $t, order: i32, scope: i32);
                }}
                // SAFETY: as for `load`.
                unsafe { marker(ptr, value, order, scope) }
            }
            atomic_type!(@rmw $t, $ll, swap, "xchg");
            atomic_type!(@rmw $t, $ll, add, $add);
            atomic_type!(@rmw $t, $ll, sub, $sub);
            atomic_type!(@rmw $t, $ll, max, $max);
            atomic_type!(@rmw $t, $ll, min, $min);
        }
    };
    (@rmw $t:ty, $ll:literal, $name:ident, $op:literal) => {
        #[inline(always)]
        unsafe fn $name(ptr: *mut $t, value: $t, order: i32, scope: i32) -> $t {
            crate::arch::gpu_extern! { "C" {
                #[link_name = concat!("iron.atomic.rmw.", $op, ".", $ll)]
                fn marker(ptr: *mut $t, value: $t, order: i32, scope: i32) -> $t;
            }}
            // SAFETY: the marker becomes the read-modify-write; the caller's contract is its.
            unsafe { marker(ptr, value, order, scope) }
        }
    };
}

/// Implements [`AtomicInteger`] for an integer type whose markers `atomic_type!` declared.
macro_rules! atomic_integer {
    ($t:ty, $ll:literal) => {
        impl AtomicInteger for $t {
            #[inline(always)]
            unsafe fn cmpxchg(
                ptr: *mut $t,
                current: $t,
                new: $t,
                success: i32,
                failure: i32,
                scope: i32,
            ) -> $t {
                crate::arch::gpu_extern! { "C" {
                    #[link_name = concat!("iron.atomic.cmpxchg.", $ll)]
                    fn marker(
                        ptr: *mut $t,
                        current: $t,
                        new: $t,
                        success: i32,
                        failure: i32,
                        scope: i32,
                    ) -> $t;
                }}
                // SAFETY: the marker becomes the compare-and-swap; the caller's contract is its.
                unsafe { marker(ptr, current, new, success, failure, scope) }
            }
            atomic_type!(@rmw $t, $ll, and, "and");
            atomic_type!(@rmw $t, $ll, or, "or");
            atomic_type!(@rmw $t, $ll, xor, "xor");
        }
    };
}

atomic_type!(u32, "i32", "add", "sub", "umax", "umin");
atomic_type!(i32, "i32", "add", "sub", "max", "min");
atomic_type!(u64, "i64", "add", "sub", "umax", "umin");
atomic_type!(i64, "i64", "add", "sub", "max", "min");
atomic_type!(f32, "f32", "fadd", "fsub", "fmax", "fmin");
atomic_type!(f64, "f64", "fadd", "fsub", "fmax", "fmin");
atomic_integer!(u32, "i32");
atomic_integer!(i32, "i32");
atomic_integer!(u64, "i64");
atomic_integer!(i64, "i64");

/// Reads `*ptr` atomically. `order` is `Relaxed`, `Acquire` or `SeqCst`.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn load<T: Atomic>(ptr: *const T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load(ptr, ordering_code(order), scope_code(scope)) }
}

/// Writes `value` to `*ptr` atomically. `order` is `Relaxed`, `Release` or `SeqCst`.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn store<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) {
    // SAFETY: the caller's contract.
    unsafe { T::store(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores `value` in `*ptr`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn swap<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::swap(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Adds `value` to `*ptr` (integers wrap), returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_add<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::add(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Subtracts `value` from `*ptr` (integers wrap), returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_sub<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::sub(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores the larger of `*ptr` and `value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_max<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::max(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores the smaller of `*ptr` and `value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_min<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::min(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores `*ptr & value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_and<T: AtomicInteger>(
    ptr: *mut T,
    value: T,
    order: Ordering,
    scope: Scope,
) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::and(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores `*ptr | value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_or<T: AtomicInteger>(
    ptr: *mut T,
    value: T,
    order: Ordering,
    scope: Scope,
) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::or(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores `*ptr ^ value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn fetch_xor<T: AtomicInteger>(
    ptr: *mut T,
    value: T,
    order: Ordering,
    scope: Scope,
) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::xor(ptr, value, ordering_code(order), scope_code(scope)) }
}

/// Stores `new` in `*ptr` if it holds `current`: `Ok` with the previous value if it did, `Err`
/// with the value found if not. `failure` is `Relaxed`, `Acquire` or `SeqCst`.
///
/// # Safety
/// `ptr` must be valid and aligned to its size.
#[inline(always)]
pub unsafe fn compare_exchange<T: AtomicInteger + PartialEq>(
    ptr: *mut T,
    current: T,
    new: T,
    success: Ordering,
    failure: Ordering,
    scope: Scope,
) -> Result<T, T> {
    // SAFETY: the caller's contract.
    let found = unsafe {
        T::cmpxchg(
            ptr,
            current,
            new,
            ordering_code(success),
            ordering_code(failure),
            scope_code(scope),
        )
    };
    if found == current {
        Ok(found)
    } else {
        Err(found)
    }
}

/// A memory fence: `Acquire`, `Release`, `AcqRel` or `SeqCst` (`Relaxed` is no fence) among the
/// waves of `scope`.
#[inline(always)]
pub fn fence(order: Ordering, scope: Scope) {
    use crate::llvm::fence as f;
    // SAFETY: a fence has no preconditions.
    unsafe {
        match (order, scope) {
            (Ordering::Relaxed, _) => {}
            (Ordering::Acquire, Scope::Wave) => f::wavefront_acquire(),
            (Ordering::Acquire, Scope::Workgroup) => f::workgroup_acquire(),
            (Ordering::Acquire, Scope::Agent) => f::agent_acquire(),
            (Ordering::Acquire, Scope::System) => f::system_acquire(),
            (Ordering::Release, Scope::Wave) => f::wavefront_release(),
            (Ordering::Release, Scope::Workgroup) => f::workgroup_release(),
            (Ordering::Release, Scope::Agent) => f::agent_release(),
            (Ordering::Release, Scope::System) => f::system_release(),
            (Ordering::AcqRel, Scope::Wave) => f::wavefront_acq_rel(),
            (Ordering::AcqRel, Scope::Workgroup) => f::workgroup_acq_rel(),
            (Ordering::AcqRel, Scope::Agent) => f::agent_acq_rel(),
            (Ordering::AcqRel, Scope::System) => f::system_acq_rel(),
            (_, Scope::Wave) => f::wavefront_seq_cst(),
            (_, Scope::Workgroup) => f::workgroup_seq_cst(),
            (_, Scope::Agent) => f::agent_seq_cst(),
            (_, Scope::System) => f::system_seq_cst(),
        }
    }
}

/// Adds `value` to `*ptr`, returning the previous value (relaxed, agent scope).
///
/// # Safety
/// `ptr` must be valid, aligned and point to device memory.
#[inline(always)]
pub unsafe fn add_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { fetch_add(ptr, value, Ordering::Relaxed, Scope::Agent) }
}

/// Stores the larger of `*ptr` and `value`, returning the previous value (relaxed, agent
/// scope).
///
/// # Safety
/// `ptr` must be valid, aligned and point to device memory.
#[inline(always)]
pub unsafe fn max_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { fetch_max(ptr, value, Ordering::Relaxed, Scope::Agent) }
}

/// Stores the smaller of `*ptr` and `value`, returning the previous value (relaxed, agent
/// scope).
///
/// # Safety
/// `ptr` must be valid, aligned and point to device memory.
#[inline(always)]
pub unsafe fn min_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { fetch_min(ptr, value, Ordering::Relaxed, Scope::Agent) }
}

/// Adds `value` to `*ptr` (wrapping), returning the previous value (relaxed, agent scope).
///
/// # Safety
/// `ptr` must be valid, aligned and point to device memory.
#[inline(always)]
pub unsafe fn add_i32(ptr: *mut i32, value: i32) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { fetch_add(ptr, value, Ordering::Relaxed, Scope::Agent) }
}

/// Adds `value` to `*ptr` in f32, returning the previous value (relaxed, agent scope).
///
/// # Safety
/// `ptr` must be valid, aligned and point to device memory.
#[inline(always)]
pub unsafe fn add_f32(ptr: *mut f32, value: f32) -> f32 {
    // SAFETY: the caller's contract.
    unsafe { fetch_add(ptr, value, Ordering::Relaxed, Scope::Agent) }
}
