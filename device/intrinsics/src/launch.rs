//! Launch declarations: what the host knows about a kernel without reading its code object.
//!
//! `#[kernel]` turns each kernel into a [`KernelDecl`] on the host. Its type parameter is the
//! kernel's signature as a function pointer type (`fn(*const f32, *mut f32, u32)`), so a host
//! launcher can check the arguments' types at compile time; the name and the launch bounds are
//! checked again against the code object's metadata at load time.

use core::marker::PhantomData;

/// Launch bounds a kernel declares next to its source, applied by the build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The largest workgroup (in work-items) the kernel may be launched with.
    pub max_threads: u32,
    /// Minimum waves per execution unit the compiler should keep room for (0: no hint).
    pub min_waves_per_eu: u32,
    /// Maximum waves per execution unit (0: no hint).
    pub max_waves_per_eu: u32,
    /// Whether the kernel may use scratch memory (spills, stack).
    pub allow_scratch: bool,
}

/// A kernel of a device crate as seen from the host: its exported name, its signature `F` (a
/// function pointer type) and its launch bounds.
pub struct KernelDecl<F> {
    /// The kernel's symbol name in the code object.
    pub name: &'static str,
    /// The launch bounds declared with `#[kernel]`.
    pub bounds: LaunchBounds,
    signature: PhantomData<F>,
}

impl<F> KernelDecl<F> {
    /// Declares a kernel; used by `#[kernel]`.
    pub const fn new(name: &'static str, bounds: LaunchBounds) -> Self {
        Self {
            name,
            bounds,
            signature: PhantomData,
        }
    }
}

impl<F> Clone for KernelDecl<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for KernelDecl<F> {}

impl<F> core::fmt::Debug for KernelDecl<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KernelDecl")
            .field("name", &self.name)
            .field("bounds", &self.bounds)
            .finish()
    }
}
