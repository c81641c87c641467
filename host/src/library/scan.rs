//! Prefix sums of flat u32 and f32 arrays (`device/kernels/src/scan.rs`): one launch, a
//! decoupled look-back scan whose workgroups hand each other their tiles' sums through a
//! workspace of tile states.

use iron_kernels::scan::{self, ITEMS};

use super::Library;
use super::error::LibraryError;
use super::geometry::{check_holds, to_u32};
use crate::device::{DeviceBuffer, DeviceError, Module, Stream, TypedKernel};
use crate::launch::LaunchConfig;

/// Work-items per workgroup of the scan kernels (their declared maximum).
const SCAN_BLOCK: u32 = 256;

/// Elements one workgroup scans.
const TILE: u32 = SCAN_BLOCK * ITEMS;

/// The signature of `scan_<t>`.
type ScanSignature<T> = fn(*const T, *mut T, u32, u32, *mut u64);

/// Which prefix a scan writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `y[i] = x[0] + ... + x[i]`.
    Inclusive,
    /// `y[i] = x[0] + ... + x[i - 1]`, so `y[0] = 0`.
    Exclusive,
}

/// An element type [`Library::scan`] sums: u32 (wrapping) or f32.
pub trait ScanElement: bytemuck::Pod + sealed::ScanDecl {}

impl ScanElement for u32 {}
impl ScanElement for f32 {}

/// The scan kernels, one per element type.
pub struct ScanKernels {
    u32: TypedKernel<ScanSignature<u32>>,
    f32: TypedKernel<ScanSignature<f32>>,
}

impl ScanKernels {
    /// Resolves the scan kernels in `module`.
    pub(crate) fn resolve(module: &Module) -> Result<ScanKernels, DeviceError> {
        Ok(ScanKernels {
            u32: module.kernel(scan::scan_u32)?,
            f32: module.kernel(scan::scan_f32)?,
        })
    }
}

pub(crate) mod sealed {
    use super::*;

    /// Where the scan kernel of a type is.
    pub trait ScanDecl: Sized + 'static {
        /// This type's resolved kernel in `kernels`.
        fn kernel(kernels: &ScanKernels) -> &TypedKernel<ScanSignature<Self>>;
    }

    impl ScanDecl for u32 {
        fn kernel(kernels: &ScanKernels) -> &TypedKernel<ScanSignature<u32>> {
            &kernels.u32
        }
    }

    impl ScanDecl for f32 {
        fn kernel(kernels: &ScanKernels) -> &TypedKernel<ScanSignature<f32>> {
            &kernels.f32
        }
    }
}

impl Library {
    /// Prefix sums of `x[0..n]` into `y[0..n]`, inclusive or exclusive ([`ScanKind`]); u32 sums
    /// wrap.
    ///
    /// One launch of one workgroup per 2048 elements, which take tiles in order and pass each
    /// other their running sums (a decoupled look-back), through a workspace of one u64 per
    /// tile allocated for the call and freed before it returns (freeing waits for the launch).
    /// f32 sums are grouped by tile and wave, and the grouping depends on timing, so f32 results
    /// can differ between runs by rounding (within the error of a sequential sum).
    ///
    /// ```no_run
    /// use iron::library::{Library, ScanKind};
    /// use iron::{Device, DeviceBuffer};
    ///
    /// let device = Device::hip(0)?;
    /// let library = Library::load_built(&device)?;
    /// let stream = device.default_stream();
    /// let x = DeviceBuffer::from_slice(&device, &[3u32, 1, 4, 1, 5])?;
    /// let mut y = DeviceBuffer::<u32>::zeros(&device, 5)?;
    /// library.scan(&stream, &x, &mut y, 5, ScanKind::Exclusive)?;
    /// assert_eq!(y.to_vec()?, [0, 3, 4, 8, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scan<T: ScanElement>(
        &self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        y: &mut DeviceBuffer<T>,
        n: usize,
        kind: ScanKind,
    ) -> Result<(), LibraryError> {
        const OP: &str = "scan";
        check_holds(OP, "x", x, "n", n)?;
        check_holds(OP, "y", y, "n", n)?;
        let count = to_u32(OP, "n", n, u32::MAX - TILE)?;
        if n == 0 {
            return Ok(());
        }
        let kernel = T::kernel(&self.kernels.scan);
        let tiles = count.div_ceil(TILE);
        let block = [SCAN_BLOCK, 1, 1];
        let config =
            LaunchConfig::new([tiles, 1, 1], block).with_dynamic_lds(kernel.dynamic_lds_for(block));
        let mut state = DeviceBuffer::<u64>::alloc(self.device(), 1 + tiles as usize)?;
        stream.zero(&mut state)?;
        let inclusive = u32::from(kind == ScanKind::Inclusive);
        // SAFETY: scan_<t> reads x[0..n] and writes y[0..n], which both hold, and uses
        // state[0..1 + tiles], zeroed on this stream before it; n + TILE stays below 2^32, so
        // its indices do not wrap. One workgroup per tile of SCAN_BLOCK * ITEMS elements, a
        // block that is a multiple of the wave, and the LDS its module docs ask for: two words
        // and one 4-byte slot per wave. Every tile a workgroup waits for was taken by a
        // workgroup that started earlier, so the launch finishes.
        unsafe { stream.launch(kernel, config, (x, y, count, inclusive, &mut state))? };
        Ok(())
    }
}
