//! The kernel library (`device/kernels`) as safe Rust calls: one method per operation, generic
//! over the element type, with typed buffers, checked shapes and launch geometry chosen for the
//! device.
//!
//! A [`Library`] is loaded once per device, from a bundle's bytes ([`Library::load`]), from the
//! build's bundle ([`Library::load_built`]) or from an already loaded module
//! ([`Library::from_module`]); every kernel is resolved then, its signature and launch bounds
//! checked against the code object. Each method then
//! - checks every buffer against the shape it is given: a buffer must hold at least the elements
//!   the shape needs, and elements past that are neither read nor written (so buffers may be
//!   allocated for the largest shape and reused); a short buffer is an error naming it, e.g.
//!   `rmsnorm: x holds 100 elements, rows * cols = 128`;
//! - checks the sizes against the kernels' 32-bit arguments (element counts below 2^32, rows
//!   shorter than 4 GiB);
//! - chooses the geometry (grid, workgroup size, dynamic LDS) the kernel's documentation asks
//!   for, with the wave size of the loaded code object;
//! - queues the launch on the given stream and returns; read results back with
//!   [`DeviceBuffer::to_vec`](crate::DeviceBuffer::to_vec) or
//!   [`Stream::read`](crate::Stream::read), which wait for it.
//!
//! An operation with nothing to write launches nothing (`n = 0`, `rows = 0`, norms and softmax
//! of empty rows); `sum` of no elements writes 0 and the row reductions write their empty-row
//! value. Inputs and outputs are distinct buffers (the borrow rules see to that); the kernels'
//! in-place forms are not offered. A `Library` is `Send + Sync`: one per device serves every
//! thread and stream.
//!
//! | family | methods | types |
//! | --- | --- | --- |
//! | streaming | `fill`, `copy`, `saxpy` | any 4-byte [`Word`]; f32 |
//! | elementwise | `add`, `mul`, `fma`, `scale`, `relu`, `silu`, `gelu` | [`Float`]: f32, f16, bf16 |
//! | reduction | `sum` | f32 |
//! | prefix sum | `scan` ([`ScanKind`]: inclusive, exclusive) | [`ScanElement`]: u32, f32 |
//! | row reductions | `row_sum`, `row_max`, `row_argmax` | [`Float`] in; f32 or u32 out |
//! | normalization | `rmsnorm`, `layernorm` | [`Float`] |
//! | softmax | `softmax` | [`Float`] |
//! | casts | `cast` ([`CastTo`]: f32 to and from f16/bf16), `cast_to_fp8` ([`Fp8Format`]) | [`Float`] in |
//! | dequantization | `dequant` ([`DeviceQuantizedTensor`]) | every [`DequantFormat`] of `iron_quant` |
//! | GEMM (CDNA, RDNA) | `gemm`, `gemm_fp8`, `gemm_mx`, `gemm_mx_decoded` | f16/bf16, FP8, MXFP8/6/4 in; [`Float`] out |
//! | dequantization to 16 bits | `dequant_half` ([`DequantHalf`]), `dequant_fp8` ([`Fp8Dequant`]) | every block format to f16/bf16; plain FP8 to f32/f16/bf16 |
//! | embedding lookup | `gather` | any 4- or 2-byte [`Bits`] |
//! | rotary embedding | `rope` ([`RopeShape`], [`RopeStyle`]) | [`RopeFloat`]: f32, f16, bf16 |
//! | transpose | `transpose` | any 4- or 2-byte [`Bits`] |
//! | attention | `attention`, `attention_path` ([`AttentionShape`], [`AttentionOptions`]) | [`AttentionFloat`]: f16, bf16 |
//! | quantized GEMV | `qgemv` ([`Qgemv`]), `qgemv_fp8` ([`Fp8Gemv`]) | every block format and plain FP8; x f32/f16/bf16 |
//! | convolution | `conv1d_causal`, `conv1d_causal_step`, `conv2d`, `conv2d_on` ([`Conv1dShape`], [`Conv2dShape`], [`Conv2dPath`]) | [`ConvFloat`]: f32, f16, bf16 |
//!
//! f16 and bf16 are the `half` crate's types ([`f16`](struct@f16), [`bf16`]), the types the
//! kernels are declared with: `DeviceBuffer<f16>` holds IEEE binary16 values and uploads from a
//! `&[f16]`.
//!
//! ```no_run
//! use iron::library::{Library, f16};
//! use iron::{Device, DeviceBuffer};
//!
//! let device = Device::hip(0)?;
//! let library = Library::load_built(&device)?;
//! let stream = device.default_stream();
//! let (rows, cols) = (4, 4096);
//! let x: Vec<f16> = (0..rows * cols).map(|i| f16::from_f32((i % 7) as f32)).collect();
//! let x = DeviceBuffer::from_slice(&device, &x)?;
//! let weight = DeviceBuffer::from_slice(&device, &vec![f16::ONE; cols])?;
//! let mut y = DeviceBuffer::<f16>::alloc(&device, rows * cols)?;
//! library.rmsnorm(&stream, &x, &weight, 1e-6, &mut y, rows, cols)?;
//! let mut probabilities = DeviceBuffer::<f16>::alloc(&device, rows * cols)?;
//! library.softmax(&stream, &y, &mut probabilities, rows, cols)?;
//! let mut best = DeviceBuffer::<u32>::alloc(&device, rows)?;
//! library.row_argmax(&stream, &probabilities, &mut best, rows, cols)?;
//! println!("{:?}", best.to_vec()?);
//! # Ok::<(), iron::library::LibraryError>(())
//! ```
//!
//! # Launch geometry
//! The flat methods move 16 bytes per access in workgroups of 256. Streaming, elementwise and
//! cast kernels have no loop: the grid covers the array, two 16-byte chunks per work-item (one
//! workgroup per 2048 to 8192 elements); `sum` sums 1024 elements per wave (4096 or 8192 per
//! workgroup) into a partial, and repeats over the partials until one is left. Dequantization
//! and RoPE run grid-stride kernels, one chunk per work-item up to 32 workgroups per compute
//! unit. Row methods launch one workgroup per row, its size a multiple of the wave grown with
//! the row (about 8 elements per work-item, up to 1024 work-items), so rows of up to `32 * 1024`
//! elements are read once into registers; longer rows take the kernels' streamed path (norms and
//! softmax read them again per pass).

mod attention;
mod cast;
mod conv;
mod dequant;
mod dequant_half;
mod dtype;
mod elementwise;
mod error;
mod gather;
mod gemm;
mod geometry;
mod kernels;
mod norm;
mod qgemv;
mod reduce;
mod rope;
mod row_reduce;
mod scan;
mod softmax;
mod streaming;
mod transpose;

use std::fmt;
use std::path::{Path, PathBuf};

pub use attention::{
    AttentionFloat, AttentionKernel, AttentionOptions, AttentionPath, AttentionShape,
};
pub use cast::CastTo;
pub use conv::{Activation, Conv1dShape, Conv2dPath, Conv2dShape, ConvFloat, ConvLayout, Filter};
pub use dequant::{DequantFormat, DeviceQuantizedTensor};
pub use dequant_half::{DequantHalf, Fp8Dequant};
pub use dtype::{Float, Fp8Format, Word, bf16, f16};
pub use error::LibraryError;
pub use gather::Bits;
pub use gemm::{
    Epilogue, Fp8Matrix, GemmInput, GemmOutput, GemmPath, GemmShape, GemmTile, Layout, MxGemmFormat,
};
/// The number formats crate, for [`quant::host::QuantizedTensor`] and the block formats
/// [`Library::dequant`] takes.
pub use iron_quant as quant;
pub use qgemv::{Fp8Gemv, QGEMV_MAX_BATCH, Qgemv};
pub use rope::{RopeFloat, RopeShape, RopeStyle};
pub use scan::{ScanElement, ScanKind};

use crate::device::{Device, Module};
use kernels::Kernels;

/// The bundle's file name in the build's output directory.
const BUNDLE_FILE: &str = "kernels.bundle";

/// The environment variable naming the build's output directory (what `cargo xtask test` sets).
const ARTIFACTS_ENV: &str = "IRON_ARTIFACTS";

/// The build's default output directory: `<workspace>/target/iron`, fixed when this crate is
/// compiled.
const DEFAULT_ARTIFACTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/iron");

/// The kernel library loaded on one device, every kernel resolved.
pub struct Library {
    module: Module,
    kernels: Kernels,
}

impl Library {
    /// Loads the library from a bundle's (or a bare code object's) bytes on `device`, taking
    /// the code object for the device's gfx, and resolves every kernel.
    pub fn load(device: &Device, bundle: &[u8]) -> Result<Library, LibraryError> {
        Library::from_module(device.load_module(bundle)?)
    }

    /// Loads the build's bundle ([`Library::built_bundle_path`]) on `device`.
    ///
    /// # Example
    /// ```no_run
    /// use iron::DeviceBuffer;
    /// use iron::emulator::Emulator;
    /// use iron::library::Library;
    ///
    /// // After `cargo xtask build --gfx gfx950` (without it: an error saying to run it).
    /// let device = Emulator::new("gfx950")?.device();
    /// let library = Library::load_built(&device)?;
    /// let x = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
    /// let mut y = DeviceBuffer::<f32>::alloc(&device, 3)?;
    /// library.scale(&device.default_stream(), 2.0, &x, &mut y, 3)?;
    /// assert_eq!(y.to_vec()?, [2.0, 4.0, 6.0]);
    /// # Ok::<(), iron::library::LibraryError>(())
    /// ```
    pub fn load_built(device: &Device) -> Result<Library, LibraryError> {
        let path = Library::built_bundle_path()?;
        let bytes = std::fs::read(&path).map_err(|e| LibraryError::ReadBundle {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        Library::load(device, &bytes)
    }

    /// The library in a module already loaded from the kernel library's code object; resolves
    /// every kernel (an error names the first one missing or stale).
    pub fn from_module(module: Module) -> Result<Library, LibraryError> {
        let kernels = Kernels::resolve(&module)?;
        Ok(Library { module, kernels })
    }

    /// The directory `cargo xtask build` writes its outputs to, as the library looks for it:
    /// `$IRON_ARTIFACTS` when the variable is set (`cargo xtask test` sets it; `--out-dir`
    /// builds go there), else `$CARGO_TARGET_DIR/iron` when that variable is set (where
    /// `cargo xtask build` writes then), else `<workspace>/target/iron` (`cargo xtask build`'s
    /// default output, a path fixed when this crate is compiled).
    pub fn built_artifacts_dir() -> PathBuf {
        match (
            std::env::var_os(ARTIFACTS_ENV),
            std::env::var_os("CARGO_TARGET_DIR"),
        ) {
            (Some(dir), _) => PathBuf::from(dir),
            (None, Some(target)) => PathBuf::from(target).join("iron"),
            (None, None) => PathBuf::from(DEFAULT_ARTIFACTS),
        }
    }

    /// Where the build's bundle is: `kernels.bundle` in [`Library::built_artifacts_dir`]. An
    /// error lists the path looked at when no file is there.
    pub fn built_bundle_path() -> Result<PathBuf, LibraryError> {
        let dir = Library::built_artifacts_dir();
        let path = dir.join(BUNDLE_FILE);
        if path.is_file() {
            Ok(path)
        } else {
            Err(LibraryError::BundleNotFound {
                tried: display_path(&path),
            })
        }
    }

    /// The module the kernels run from.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The device the library is loaded on.
    pub fn device(&self) -> &Device {
        self.module.device()
    }
}

/// `path` made absolute (against the current directory), for messages.
fn display_path(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("module", &self.module)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shareable<T: Send + Sync>() {}

    #[test]
    fn a_library_is_shared_between_threads() {
        shareable::<Library>();
    }

    #[test]
    fn the_default_bundle_path_is_the_workspace_target() {
        let path = PathBuf::from(DEFAULT_ARTIFACTS).join(BUNDLE_FILE);
        assert!(path.ends_with("host/../target/iron/kernels.bundle"));
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../Cargo.toml")
                .is_file()
        );
    }
}
