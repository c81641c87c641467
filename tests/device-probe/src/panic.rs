//! Panic messages (`tests/tests/emu_panic.rs`): kernels whose checks fail for chosen inputs.
//!
//! - `lookup(x, y, n)`: `y[i] = x[x[i]]` for `i < n`, through a slice of `x`'s `n` elements,
//!   so an `x[i] >= n` fails the bounds check (a message with arguments).
//! - `checked_divide(x, y, n)`: `y[i] = 1000 / x[i]` after `assert!(x[i] != 7, ...)`, so a 7
//!   fails the assertion (a constant message) and a 0 the division's check.
use iron_intrinsics::id::global_id_x;
use iron_intrinsics::kernel;

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn lookup(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x holds n elements and y at least n.
        let table = unsafe { core::slice::from_raw_parts(x, n as usize) };
        let v = table[table[i as usize] as usize];
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = v };
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn checked_divide(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x and y hold n elements.
        let v = unsafe { *x.add(i as usize) };
        assert!(v != 7, "seven is not a divisor here");
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = 1000 / v };
    }
}
