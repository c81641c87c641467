//! The first kernel: every work-item scales some elements of a vector, in f32 or in f16.

use iron_intrinsics::half::f16;
use iron_intrinsics::id::{global_id_x, grid_size_x};
use iron_intrinsics::kernel;

/// An element type `scale` has an instance for: widened to f32 to be multiplied, and rounded
/// back.
pub trait Element: Copy {
    /// The value as f32 (exact).
    fn widen(self) -> f32;
    /// The value nearest to `x`.
    fn narrow(x: f32) -> Self;
}

impl Element for f32 {
    fn widen(self) -> f32 {
        self
    }
    fn narrow(x: f32) -> f32 {
        x
    }
}

impl Element for f16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(x: f32) -> f16 {
        f16::from_f32(x)
    }
}

/// `y[i] = a * x[i]` for `i < n`, computed in f32 and rounded to `T`.
///
/// Launch: any grid and any workgroup size up to 256; each work-item starts at its global id
/// and steps by the size of the whole grid, so every element is visited once.
#[kernel(max_threads = 256, instances = [scale_f32<f32>, scale_f16<f16>])]
pub fn scale<T: Element>(a: f32, x: *const T, y: *mut T, n: u32) {
    let mut i = global_id_x();
    while i < n {
        // SAFETY: i < n, and the host passes x and y of at least n elements.
        unsafe { *y.add(i as usize) = T::narrow(a * (*x.add(i as usize)).widen()) };
        i += grid_size_x();
    }
}
