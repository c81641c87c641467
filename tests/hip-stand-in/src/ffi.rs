//! Crossing the C boundary: out-pointers, and handles and device addresses as pointers.
//!
//! Handles (modules, functions, streams, events) and device addresses are numbers this library
//! hands out as pointers; it never dereferences them, so they carry no provenance.

use hip_runtime_sys::HipError;

use crate::errors::HipResult;

/// Writes `value` through the out-pointer `out`; `hipErrorInvalidValue` when it is null.
///
/// # Safety
/// `out` is null or valid for one write of `T`.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> HipResult {
    if out.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: non-null, and valid for one write as the caller guarantees.
    unsafe { out.write(value) };
    Ok(())
}

/// The number behind a handle or device pointer.
pub fn number<T>(pointer: *const T) -> u64 {
    pointer.addr() as u64
}

/// A handle or device pointer for a number this library handed out.
pub fn pointer<T>(number: u64) -> *mut T {
    std::ptr::without_provenance_mut(number as usize)
}
