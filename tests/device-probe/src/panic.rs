//! Panic messages (`tests/tests/emu_panic.rs`): kernels whose checks fail for chosen inputs.
//! Each reads `v = x[i]` for `i < n` and writes `y[i]`.
//!
//! - `lookup`: `y[i] = x[x[i]]` through a slice of `x`'s `n` elements, so an `x[i] >= n`
//!   fails the bounds check.
//! - `checked_divide`: `y[i] = 1000 / v` after `core::assert!(v != 7, ...)` (a constant
//!   message) and `core::assert!(v != 1, "{}", ..)` (a message with arguments, which `core`'s
//!   macro does not record), so a 7 or a 1 fails an assertion and a 0 the division's check.
//! - `slice_sum`: `y[i]` is the sum of `x[s..e]` with `s = v & 0xffff`, `e = v >> 16`, so a
//!   range outside `x` or reversed fails the slice's check.
//! - `checked_quarter`: `y[i] = quarter(i, v)`: `v / 4` after `assert!(v < 1_000_000, ...)`
//!   with an integer and a float argument.
//! - `checked_residues`: `y[i] = residue(i, v)`: `v / 8` after `assert_eq!(v % 2, 0)`,
//!   `assert_ne!(v % 8, 4, ...)` and `assert_eq!` of two values of a type the record does not
//!   take (which fails when `v % 8` is 2 or 6).
//! - `flagged`: `y[i] = flag(i, v, wave, lane)`: `v + 1`, but `panic!` with arguments
//!   (integers in hex, a `bool` and a `&str`) for `v == u32::MAX`, and `unreachable!` with
//!   arguments for `v == u32::MAX - 1`.
//! - `unwrapped`: `y[i] = 1000 / v + (v - 1)`, through `checked_div(..).expect(..)` (which
//!   fails for 0), `u8::try_from(v - 1).expect(..)` (for 257 and above) and, with `w = v >> 16`
//!   when `v` is at least 65536, `copy_from_slice` of `x[..w]` into two elements (for
//!   `w != 2`).
//!
//! The Iron assertions are imported over `core`'s prelude macros, as a kernel crate would, and
//! used in functions the host compiles too (`quarter`, `residue`, `flag`), where they are
//! `core`'s.
use iron_intrinsics::id::{global_id_x, lane_id, wave_id};
use iron_intrinsics::kernel;
use iron_intrinsics::{assert, assert_eq, assert_ne, panic, unreachable};

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
        ::core::assert!(v != 7, "seven is not a divisor here");
        ::core::assert!(v != 1, "x[{}] is one", i);
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = 1000 / v };
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn slice_sum(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x holds n elements and y at least n.
        let table = unsafe { core::slice::from_raw_parts(x, n as usize) };
        let v = table[i as usize];
        let range = &table[(v & 0xffff) as usize..(v >> 16) as usize];
        let sum = range.iter().fold(0u32, |s, &t| s.wrapping_add(t));
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = sum };
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn checked_quarter(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x and y hold n elements.
        let v = unsafe { *x.add(i as usize) };
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = quarter(i, v) };
    }
}

/// `v / 4`, for `v` below a million: see the module docs.
#[inline(always)]
pub fn quarter(i: u32, v: u32) -> u32 {
    assert!(
        v < 1_000_000,
        "x[{}] = {} is too large (a quarter: {:.2})",
        i,
        v,
        v as f32 * 0.25
    );
    v / 4
}

/// A value the panic record does not take (neither an integer nor a float...). `Debug` is for
/// the host, whose `assert_eq!` is `core`'s.
#[derive(PartialEq, Debug)]
pub struct Residue(pub u32);

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn checked_residues(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x and y hold n elements.
        let v = unsafe { *x.add(i as usize) };
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = residue(i, v) };
    }
}

/// `v / 8`, for `v` a multiple of 8: see the module docs.
#[inline(always)]
pub fn residue(i: u32, v: u32) -> u32 {
    assert_eq!(v % 2, 0);
    assert_ne!(v % 8, 4, "x[{}] = {}", i, v);
    assert_eq!(Residue(v % 4), Residue(0), "x[{}]", i);
    v / 8
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn flagged(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x and y hold n elements.
        let v = unsafe { *x.add(i as usize) };
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = flag(i, v, wave_id(), lane_id()) };
    }
}

/// `v + 1`, for `v` below `u32::MAX - 1`: see the module docs.
#[inline(always)]
pub fn flag(i: u32, v: u32, wave: u32, lane: u32) -> u32 {
    if v == u32::MAX {
        panic!(
            "x[{}] = {:#x} in wave {} lane {}: {} ({})",
            i,
            v,
            wave,
            lane,
            v > 5,
            "all ones"
        );
    }
    if v == u32::MAX - 1 {
        unreachable!("x[{}] = {}", i, v);
    }
    v + 1
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn unwrapped(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: x holds n elements and y at least n.
        let table = unsafe { core::slice::from_raw_parts(x, n as usize) };
        let v = table[i as usize];
        let mut out = 0;
        if v >= 0x1_0000 {
            let mut pair = [0u32; 2];
            pair.copy_from_slice(&table[..((v >> 16) as usize).min(table.len())]);
            out = pair[0] ^ pair[1];
        } else {
            let q = 1000u32.checked_div(v).expect("a zero divisor");
            let b = u8::try_from(v - 1).expect("v - 1 fits in a byte");
            out += q + u32::from(b);
        }
        // SAFETY: i < n.
        unsafe { *y.add(i as usize) = out };
    }
}
