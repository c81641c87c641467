//! The roofline lower bound: a kernel cannot finish before its bytes cross the memory bus at
//! peak bandwidth, nor before its FLOPs run at peak rate; the larger of the two is the bound.

use super::devices::Device;
use super::workloads::Math;
use serde::Serialize;

/// Which resource sets the lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bound {
    /// Moving the bytes takes longer than the arithmetic.
    Memory,
    /// The arithmetic takes longer than moving the bytes.
    Compute,
}

/// The lower-bound time of one run on one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The device's name.
    pub device: &'static str,
    /// Lower-bound seconds for the bytes the kernel moves and the FLOPs it does.
    pub seconds: f64,
    /// Lower-bound seconds had the kernel moved only the algorithm's minimum bytes.
    pub ideal_seconds: f64,
    /// What sets `seconds`.
    pub bound: Bound,
    /// FLOP/s at the bound: the FLOPs over `seconds` (0 for kernels without arithmetic).
    pub attainable_flops: f64,
}

/// The estimate for a run moving `bytes` (the algorithm needing `min_bytes`) and doing `flops`
/// of kind `math` on `device`.
pub fn estimate(device: &Device, bytes: u64, min_bytes: u64, flops: u64, math: Math) -> Estimate {
    let compute = flops as f64 / device.peak_flops(math);
    let memory = bytes as f64 / device.bandwidth;
    let ideal_memory = min_bytes as f64 / device.bandwidth;
    let seconds = memory.max(compute);
    Estimate {
        device: device.name,
        seconds,
        ideal_seconds: ideal_memory.max(compute),
        bound: if memory >= compute {
            Bound::Memory
        } else {
            Bound::Compute
        },
        attainable_flops: if seconds > 0.0 {
            flops as f64 / seconds
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::devices::DEVICES;

    #[test]
    fn the_slower_resource_bounds_the_time() {
        let d = DEVICES[0];
        // One byte per FLOP of vector math: far below the ridge, so memory bound.
        let e = estimate(&d, 1 << 30, 1 << 29, 1 << 30, Math::Vector);
        assert_eq!(e.bound, Bound::Memory);
        assert!((e.seconds - (1u64 << 30) as f64 / d.bandwidth).abs() < 1e-12);
        assert!(e.ideal_seconds < e.seconds);
        // A thousand matrix FLOPs per byte: above every device's ridge.
        let e = estimate(&d, 1 << 20, 1 << 20, 1 << 30, Math::Matrix16);
        assert_eq!(e.bound, Bound::Compute);
        assert!((e.attainable_flops - d.matrix16).abs() / d.matrix16 < 1e-9);
        assert_eq!(e.ideal_seconds, e.seconds);
    }

    #[test]
    fn a_kernel_without_arithmetic_is_memory_bound_at_zero_flops() {
        let e = estimate(&DEVICES[2], 4096, 4096, 0, Math::Vector);
        assert_eq!(e.bound, Bound::Memory);
        assert_eq!(e.attainable_flops, 0.0);
    }
}
