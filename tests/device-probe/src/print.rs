//! Device printing (`iron_intrinsics::print!`, `tests/tests/emu_print.rs`).
//!
//! - `print_values(x, n)`: every work-item `i < n` prints two lines: its ids and `x[i]` as
//!   integers of every kind, then `x[i]` as floats of four widths, a bool, a string and a
//!   pointer (two calls, so two frames per work-item).
//! - `print_names(n)`: work-item `i < n` prints a string of `i % 23` letters, so that frames
//!   differ in size from lane to lane.
//! - `print_flood(n)`: every work-item prints `n` lines, to fill the buffer.
//! - `copy_checked` and `copy_plain(x, y, n)`: `y[i] = x[i]` for `i < n`; the first also prints
//!   when `x[i]` is `u32::MAX`, which the cost measurement never passes.
use iron_intrinsics::half::{bf16, f16};
use iron_intrinsics::id::{global_id_x, lane_id, wave_id, workgroup_id_x};
use iron_intrinsics::kernel;
use iron_intrinsics::{print, println};

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn print_values(x: *const i32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: i < n, the length of x.
        let v = unsafe { *x.add(i as usize) };
        println!(
            "{} wg {} wave {} lane {}: {} {} {} {:x} {:#X} {:08} [{:<5}] {:+}",
            i,
            workgroup_id_x(),
            wave_id(),
            lane_id(),
            v,
            v as u32,
            v as i64 * 1_000_000_007,
            v,
            v as u64,
            v,
            v % 1000,
            v
        );
        println!(
            "{}: {:.3} {:e} {} {} {} {} {:p}",
            i,
            v as f32 / 7.0,
            v as f64 * 1e-300,
            f16::from_f32(v as f32),
            bf16::from_f32(v as f32 / 3.0),
            v % 2 == 0,
            if v < 0 { "negative" } else { "non-negative" },
            x,
        );
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn print_names(n: u32) {
    let i = global_id_x();
    const LETTERS: &str = "abcdefghijklmnopqrstuvw";
    if i < n {
        // SAFETY: ASCII, so every prefix is UTF-8. (`&LETTERS[..k]` would check char
        // boundaries with a call to core's `slice_error_fail`, which needs a stack.)
        let name =
            unsafe { core::str::from_utf8_unchecked(&LETTERS.as_bytes()[..(i % 23) as usize]) };
        print!("{}:[{}]\n", i, name);
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn print_flood(n: u32) {
    let i = global_id_x();
    for line in 0..n {
        println!("{} {}", i, line);
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn copy_checked(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: i < n, the length of x and y.
        unsafe {
            let v = *x.add(i as usize);
            if v == u32::MAX {
                println!("copy_checked: x[{}] is {:#x}", i, v);
            }
            *y.add(i as usize) = v;
        }
    }
}

/// See the module docs.
#[kernel(max_threads = 256)]
pub fn copy_plain(x: *const u32, y: *mut u32, n: u32) {
    let i = global_id_x();
    if i < n {
        // SAFETY: i < n, the length of x and y.
        unsafe { *y.add(i as usize) = *x.add(i as usize) };
    }
}
