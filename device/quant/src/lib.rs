//! Number formats and block codecs for Iron, one source for the host and the GPU.
//!
//! The crate is `#![no_std]` and free of floating-point library calls: every conversion is
//! core arithmetic and bit manipulation, so the same functions run in kernels
//! (`amdgcn-amd-amdhsa`) and in host tests. The `alloc` feature adds the host tensor API
//! ([`host`]).
//!
//! - Element formats implement [`ElementFormat`]: [`E4M3Fn`], [`E5M2`], [`E4M3Fnuz`],
//!   [`E5M2Fnuz`] (FP8), [`E2M3`], [`E3M2`] (FP6), [`E2M1`] (FP4), [`E8M0`] (scale),
//!   [`Int8`] (MXINT8 element). f16 and bf16 come from the `half` crate ([`half_float`]).
//! - Block formats implement [`BlockFormat`]: the OCP Microscaling v1.0 formats
//!   ([`MxFp8E4M3`], [`MxFp8E5M2`], [`MxFp6E2M3`], [`MxFp6E3M2`], [`MxFp4`], [`MxInt8`]) and
//!   [`Nvfp4`].
//! - [`pack`] documents and implements the bit packing of 4-, 6- and 8-bit codes.
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod block;
pub mod e8m0;
pub mod element;
pub mod fp4;
pub mod fp6;
pub mod fp8;
pub mod half_float;
#[cfg(feature = "alloc")]
pub mod host;
pub mod int8;
mod minifloat;
pub mod mx;
pub mod nvfp4;
pub mod pack;

pub use block::BlockFormat;
pub use e8m0::E8M0;
pub use element::ElementFormat;
pub use fp4::E2M1;
pub use fp6::{E2M3, E3M2};
pub use fp8::{E4M3Fn, E4M3Fnuz, E5M2, E5M2Fnuz};
pub use int8::Int8;
pub use mx::{Mx, MxElement, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2, MxInt8};
pub use nvfp4::Nvfp4;
