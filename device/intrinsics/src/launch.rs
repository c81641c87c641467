//! Launch declarations: what the host knows about a kernel without reading its code object.
//!
//! `#[kernel]` turns each kernel into a [`KernelDecl`] on the host. Its type parameter is the
//! kernel's signature as a function pointer type (`fn(*const f32, *mut f32, u32)`), so a host
//! launcher can check the arguments' types at compile time; the name and the launch bounds are
//! checked again against the code object's metadata at load time, and every typed launch is
//! checked against the kernel's [`LaunchContract`].

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

/// What a kernel requires of every launch, declared next to its source so that a launch that
/// would run it wrongly (a partial wave in a wave-wide reduction, too little LDS) is refused
/// with a one-line error instead of computing wrong results.
#[derive(Clone, Copy, Debug)]
pub struct LaunchContract {
    /// The workgroup is a whole number of waves.
    pub whole_waves: bool,
    /// The workgroup's size is a multiple of this (0: no requirement).
    pub block_multiple: u32,
    /// The one workgroup shape the kernel runs (`None`: any within `max_threads`). The code
    /// object carries it as `.reqd_workgroup_size`.
    pub block: Option<[u32; 3]>,
    /// The least dynamic LDS in bytes the kernel needs for a workgroup of `threads` work-items
    /// and a wave of `wave` lanes (`None`: it uses none, or says so in its documentation).
    pub dynamic_lds: Option<fn(threads: u32, wave: u32) -> u32>,
}

impl LaunchContract {
    /// No requirement beyond the launch bounds.
    pub const NONE: LaunchContract = LaunchContract {
        whole_waves: false,
        block_multiple: 0,
        block: None,
        dynamic_lds: None,
    };
}

/// A kernel of a device crate as seen from the host: its exported name, its signature `F` (a
/// function pointer type), its launch bounds and its launch contract.
pub struct KernelDecl<F> {
    /// The kernel's symbol name in the code object.
    pub name: &'static str,
    /// The launch bounds declared with `#[kernel]`.
    pub bounds: LaunchBounds,
    /// What every launch must satisfy, declared with `#[kernel]`.
    pub contract: LaunchContract,
    signature: PhantomData<F>,
}

impl<F> KernelDecl<F> {
    /// Declares a kernel without a launch contract; used by `#[kernel]` and for kernels other
    /// compilers built.
    pub const fn new(name: &'static str, bounds: LaunchBounds) -> Self {
        Self {
            name,
            bounds,
            contract: LaunchContract::NONE,
            signature: PhantomData,
        }
    }

    /// The same declaration with the launch contract `contract`.
    pub const fn with_contract(self, contract: LaunchContract) -> Self {
        Self {
            name: self.name,
            bounds: self.bounds,
            contract,
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
            .field("contract", &self.contract)
            .finish()
    }
}
