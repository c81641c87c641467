//! `iron_intrinsics::half::{f16, bf16}` on the GPU, against the `half` crate on the host
//! (`tests/tests/emu_half_types.rs`): one kernel per operation and type, named `<type>_<op>`.
//!
//! Elementwise kernels take `(inputs.., y, n: u32)` and compute `y[i]` for every `i < n` in a
//! grid-stride loop, so any grid and workgroup size covers any `n`:
//! - `add`, `sub`, `mul`, `div`: `y[i] = a[i] op b[i]`;
//! - `sign`: `y[4i..4i + 4] = [-a[i], -&a[i], a[i].copysign(b[i]), a[i].signum()]` (negation
//!   alone is the same instructions for both types, and LLVM would merge the two kernels into
//!   one symbol, leaving the other without its kernel descriptor);
//! - `assign`: the compound-assignment and by-reference forms, `y[i] = (((a + b) * b) - a) / b`
//!   computed as `x = a; x += b; x *= &b; x -= a; x /= &b` (one rounding after each step);
//! - `compare`: `y[i]` a `u32` mask of the comparisons and predicates (`compare_mask!`);
//! - `min_max`: `y[2i] = a[i].min(b[i])`, `y[2i + 1] = a[i].max(b[i])`;
//! - `from_f32`: `y[i] = T::from_f32(x[i])` from f32 inputs; `to_f32`: `y[i] = a[i].to_f32()`.
//!
//! `constants(y)` writes, from work-item 0 only, the bit patterns of the 31 value constants then
//! the 7 integer constants as `u32` (the order of `constants!`).
use iron_intrinsics::half::{bf16, f16};
use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;

/// `f(i)` for every `i < n`, spread over the grid.
#[inline(always)]
fn each(n: u32, mut f: impl FnMut(usize)) {
    let stride = grid_size_x();
    let mut i = global_id_x();
    while i < n {
        f(i as usize);
        i += stride;
    }
}

/// The bits of the comparisons of `a` with `b` and of the predicates of `a`, bit 0 first:
/// `==`, `!=`, `<`, `<=`, `>`, `>=`, `partial_cmp` is `Less`, `Equal`, `Greater`, `None`,
/// `is_nan`, `is_infinite`, `is_finite`, `is_normal`, `is_sign_positive`, `is_sign_negative`,
/// `total_cmp` is `Less`, `Equal`, `Greater`, `classify` is `Nan`, `Infinite`, `Zero`,
/// `Subnormal`, `Normal`.
macro_rules! compare_mask {
    ($a:expr, $b:expr) => {{
        use core::cmp::Ordering::{Equal, Greater, Less};
        use core::num::FpCategory;
        let (a, b) = ($a, $b);
        // Bit by bit rather than from an array, which LLVM would keep in scratch.
        let mut mask = u32::from(a == b);
        mask |= u32::from(a != b) << 1;
        mask |= u32::from(a < b) << 2;
        mask |= u32::from(a <= b) << 3;
        mask |= u32::from(a > b) << 4;
        mask |= u32::from(a >= b) << 5;
        mask |= u32::from(a.partial_cmp(&b) == Some(Less)) << 6;
        mask |= u32::from(a.partial_cmp(&b) == Some(Equal)) << 7;
        mask |= u32::from(a.partial_cmp(&b) == Some(Greater)) << 8;
        mask |= u32::from(a.partial_cmp(&b).is_none()) << 9;
        mask |= u32::from(a.is_nan()) << 10;
        mask |= u32::from(a.is_infinite()) << 11;
        mask |= u32::from(a.is_finite()) << 12;
        mask |= u32::from(a.is_normal()) << 13;
        mask |= u32::from(a.is_sign_positive()) << 14;
        mask |= u32::from(a.is_sign_negative()) << 15;
        mask |= u32::from(a.total_cmp(&b) == Less) << 16;
        mask |= u32::from(a.total_cmp(&b) == Equal) << 17;
        mask |= u32::from(a.total_cmp(&b) == Greater) << 18;
        mask |= u32::from(a.classify() == FpCategory::Nan) << 19;
        mask |= u32::from(a.classify() == FpCategory::Infinite) << 20;
        mask |= u32::from(a.classify() == FpCategory::Zero) << 21;
        mask |= u32::from(a.classify() == FpCategory::Subnormal) << 22;
        mask |= u32::from(a.classify() == FpCategory::Normal) << 23;
        mask
    }};
}

/// The constants of `$t`, as `constants` writes them.
macro_rules! constants {
    ($t:ident) => {
        [
            $t::ZERO.to_bits() as u32,
            $t::NEG_ZERO.to_bits() as u32,
            $t::ONE.to_bits() as u32,
            $t::NEG_ONE.to_bits() as u32,
            $t::EPSILON.to_bits() as u32,
            $t::INFINITY.to_bits() as u32,
            $t::NEG_INFINITY.to_bits() as u32,
            $t::NAN.to_bits() as u32,
            $t::MAX.to_bits() as u32,
            $t::MIN.to_bits() as u32,
            $t::MIN_POSITIVE.to_bits() as u32,
            $t::MIN_POSITIVE_SUBNORMAL.to_bits() as u32,
            $t::MAX_SUBNORMAL.to_bits() as u32,
            $t::E.to_bits() as u32,
            $t::PI.to_bits() as u32,
            $t::FRAC_1_PI.to_bits() as u32,
            $t::FRAC_1_SQRT_2.to_bits() as u32,
            $t::FRAC_2_PI.to_bits() as u32,
            $t::FRAC_2_SQRT_PI.to_bits() as u32,
            $t::FRAC_PI_2.to_bits() as u32,
            $t::FRAC_PI_3.to_bits() as u32,
            $t::FRAC_PI_4.to_bits() as u32,
            $t::FRAC_PI_6.to_bits() as u32,
            $t::FRAC_PI_8.to_bits() as u32,
            $t::LN_10.to_bits() as u32,
            $t::LN_2.to_bits() as u32,
            $t::LOG10_E.to_bits() as u32,
            $t::LOG10_2.to_bits() as u32,
            $t::LOG2_E.to_bits() as u32,
            $t::LOG2_10.to_bits() as u32,
            $t::SQRT_2.to_bits() as u32,
            $t::DIGITS,
            $t::MANTISSA_DIGITS,
            $t::MAX_EXP as u32,
            $t::MIN_EXP as u32,
            $t::MAX_10_EXP as u32,
            $t::MIN_10_EXP as u32,
            $t::RADIX,
        ]
    };
}

/// Declares the kernels of one type `$t`, named by the caller (`<type>_<op>`).
macro_rules! probes {
    ($t:ident, $add:ident, $sub:ident, $mul:ident, $div:ident, $sign:ident, $assign:ident,
        $compare:ident, $min_max:ident, $from_f32:ident, $to_f32:ident, $constants:ident) => {
        probes!(@binary $t, $add, +);
        probes!(@binary $t, $sub, -);
        probes!(@binary $t, $mul, *);
        probes!(@binary $t, $div, /);

        #[doc = concat!("`y[4i..4i + 4] = [-a[i], -&a[i], a[i].copysign(b[i]), a[i].signum()]` for `",
            stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $sign(a: *const $t, b: *const $t, y: *mut $t, n: u32) {
            each(n, |i| {
                // SAFETY: a and b hold n elements, y 4n.
                unsafe {
                    let (a, b) = (*a.add(i), *b.add(i));
                    *y.add(4 * i) = -a;
                    *y.add(4 * i + 1) = -&a;
                    *y.add(4 * i + 2) = a.copysign(b);
                    *y.add(4 * i + 3) = a.signum();
                }
            });
        }

        #[doc = concat!("`y[i] = (((a + b) * b) - a) / b` through the assigning forms, for `",
            stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $assign(a: *const $t, b: *const $t, y: *mut $t, n: u32) {
            each(n, |i| {
                // SAFETY: every buffer holds n elements.
                let (a, b) = unsafe { (*a.add(i), *b.add(i)) };
                let mut x = a;
                x += b;
                x *= &b;
                x -= a;
                x /= &b;
                // SAFETY: as above.
                unsafe { *y.add(i) = x };
            });
        }

        #[doc = concat!("`y[i]` the comparison mask of `a[i]` and `b[i]`, for `",
            stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $compare(a: *const $t, b: *const $t, y: *mut u32, n: u32) {
            // SAFETY: every buffer holds n elements.
            each(n, |i| unsafe { *y.add(i) = compare_mask!(*a.add(i), *b.add(i)) });
        }

        #[doc = concat!("`y[2i], y[2i + 1]` the `min` and `max` of `a[i]` and `b[i]`, for `",
            stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $min_max(a: *const $t, b: *const $t, y: *mut $t, n: u32) {
            each(n, |i| {
                // SAFETY: a and b hold n elements, y 2n.
                unsafe {
                    let (a, b) = (*a.add(i), *b.add(i));
                    *y.add(2 * i) = a.min(b);
                    *y.add(2 * i + 1) = a.max(b);
                }
            });
        }

        #[doc = concat!("`y[i]` the `", stringify!($t), "` nearest to `x[i]`.")]
        #[kernel(max_threads = 256)]
        pub fn $from_f32(x: *const f32, y: *mut $t, n: u32) {
            // SAFETY: both buffers hold n elements.
            each(n, |i| unsafe { *y.add(i) = $t::from_f32(*x.add(i)) });
        }

        #[doc = concat!("`y[i]` the f32 value of `a[i]`, for `", stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $to_f32(a: *const $t, y: *mut f32, n: u32) {
            // SAFETY: both buffers hold n elements.
            each(n, |i| unsafe { *y.add(i) = (*a.add(i)).to_f32() });
        }

        #[doc = concat!("`y[0..38]` the constants of `", stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $constants(y: *mut u32) {
            if global_id_x() == 0 {
                for (k, value) in constants!($t).into_iter().enumerate() {
                    // SAFETY: y holds 38 elements.
                    unsafe { *y.add(k) = value };
                }
            }
        }
    };
    (@binary $t:ident, $name:ident, $op:tt) => {
        #[doc = concat!("`y[i] = a[i] ", stringify!($op), " b[i]` for `", stringify!($t), "`.")]
        #[kernel(max_threads = 256)]
        pub fn $name(a: *const $t, b: *const $t, y: *mut $t, n: u32) {
            // SAFETY: every buffer holds n elements.
            each(n, |i| unsafe { *y.add(i) = *a.add(i) $op *b.add(i) });
        }
    };
}

probes!(
    f16,
    f16_add,
    f16_sub,
    f16_mul,
    f16_div,
    f16_sign,
    f16_assign,
    f16_compare,
    f16_min_max,
    f16_from_f32,
    f16_to_f32,
    f16_constants
);
probes!(
    bf16,
    bf16_add,
    bf16_sub,
    bf16_mul,
    bf16_div,
    bf16_sign,
    bf16_assign,
    bf16_compare,
    bf16_min_max,
    bf16_from_f32,
    bf16_to_f32,
    bf16_constants
);
