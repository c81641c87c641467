//! Iron's host runtime: reading AMD GPU code objects, and (in modules still to come) devices,
//! buffers and typed, checked kernel launches.
//!
//! [`code_object`] is the validated view of compiled kernels that everything else builds on.

pub mod code_object;
