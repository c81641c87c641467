//! Atomic read-modify-write operations on global memory, relaxed ordering, visible device-wide.
//!
//! They do not order other memory accesses: pair them with [`crate::sync::workgroup_barrier`] or
//! use them for independent accumulations (counters, histograms, reductions). Each may be called
//! by any subset of lanes.

use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// Adds `value` to `*ptr`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid, aligned and point to global memory.
#[inline(always)]
pub unsafe fn add_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller guarantees a valid, aligned pointer.
    unsafe { AtomicU32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
}

/// Stores the larger of `*ptr` and `value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid, aligned and point to global memory.
#[inline(always)]
pub unsafe fn max_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller guarantees a valid, aligned pointer.
    unsafe { AtomicU32::from_ptr(ptr) }.fetch_max(value, Ordering::Relaxed)
}

/// Stores the smaller of `*ptr` and `value`, returning the previous value.
///
/// # Safety
/// `ptr` must be valid, aligned and point to global memory.
#[inline(always)]
pub unsafe fn min_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller guarantees a valid, aligned pointer.
    unsafe { AtomicU32::from_ptr(ptr) }.fetch_min(value, Ordering::Relaxed)
}

/// Adds `value` to `*ptr` (wrapping), returning the previous value.
///
/// # Safety
/// `ptr` must be valid, aligned and point to global memory.
#[inline(always)]
pub unsafe fn add_i32(ptr: *mut i32, value: i32) -> i32 {
    // SAFETY: the caller guarantees a valid, aligned pointer.
    unsafe { AtomicI32::from_ptr(ptr) }.fetch_add(value, Ordering::Relaxed)
}

/// Adds `value` to `*ptr` in f32 (`global_atomic_add_f32`), returning the previous value.
///
/// # Safety
/// `ptr` must be valid, aligned and point to global memory.
#[inline(always)]
pub unsafe fn add_f32(ptr: *mut f32, value: f32) -> f32 {
    // SAFETY: the caller guarantees a valid, aligned global pointer.
    unsafe { crate::llvm::global_atomic_fadd_f32(ptr, value) }
}
