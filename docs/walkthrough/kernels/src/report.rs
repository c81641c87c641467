//! A kernel that prints: every element of a vector that is not finite, with its index.

use iron_intrinsics::id::global_id_x;
use iron_intrinsics::kernel;
use iron_intrinsics::println;

/// Prints `x[i] = value` for every `i < n` whose `x[i]` is infinite or NaN.
#[kernel(max_threads = 256)]
pub fn report_nonfinite(x: *const f32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: i < n, and the host passes x of at least n elements.
        let v = unsafe { *x.add(i as usize) };
        if !v.is_finite() {
            println!("x[{}] = {}", i, v);
        }
    }
}
