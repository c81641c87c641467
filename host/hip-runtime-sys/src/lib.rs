//! FFI to the HIP runtime (being written).
