//! CPU references ("oracles") for the kernel library's elementwise, cast, row-reduction, norm,
//! softmax, gather, RoPE, transpose, dequantization, quantized GEMV, GEMM and scan kernels: plain f64
//! arithmetic (exact integer-free formulas for the number formats), each result paired with the
//! error a correct kernel may make ([`Expected`]), derived from the kernel's documented
//! arithmetic rather than from its output.
//!
//! A test decodes the kernel's inputs to f64 with [`Format::decode`], runs the kernel, decodes
//! its outputs the same way and checks each with [`Expected::accepts`] (casts compare codes with
//! [`cast::cast_matches`]).

pub mod attention;
pub mod cast;
pub mod conv;
pub mod dequant;
pub mod elementwise;
pub mod expected;
pub mod format;
pub mod gather;
pub mod gemm;
pub mod norm;
pub mod qgemv;
pub mod rope;
pub mod row_reduce;
pub mod scan;
pub mod softmax;
pub mod transpose;

pub use expected::Expected;
pub use format::{Format, Overflow};
