//! Modules (code objects loaded on a device) and their kernels, untyped and typed.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use iron_intrinsics::launch::KernelDecl;

use super::Device;
use super::backend::ModuleHandle;
use super::error::DeviceError;
use crate::code_object::{
    self, Bundle, CodeObject, CodeObjectError, KernelMetadata, TargetId, is_bundle,
};
use crate::launch::{
    KernelSignature, LaunchError, check_bounds, check_signature, contract_dynamic_lds,
};

/// A code object loaded on a device, with its parsed metadata; unloaded when the last clone
/// (and the last [`Kernel`] of it) is dropped.
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

struct ModuleInner {
    device: Device,
    handle: ModuleHandle,
    code_object: CodeObject,
}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        // A failure cannot be reported from drop; the backend keeps the module until the
        // device goes away.
        let _ = self.device.backend().unload_module(self.handle);
    }
}

/// Picks the code object a device with target id `target` runs from a bare code object or an
/// offload bundle, returning it parsed and as bytes.
fn select_code_object<'a>(
    image: &'a [u8],
    target: &TargetId,
) -> Result<(CodeObject, Cow<'a, [u8]>), DeviceError> {
    let no_code_object = |held: String| DeviceError::NoCodeObjectForDevice {
        device: target.to_string(),
        processor: target.processor.clone(),
        held,
    };
    if is_bundle(image) {
        let bundle = Bundle::parse(image)?;
        let entry = bundle.select(target).map_err(|error| match error {
            CodeObjectError::NoMatchingTarget { available, .. } => {
                no_code_object(format!("the bundle holds {available}"))
            }
            other => other.into(),
        })?;
        let code_object = CodeObject::parse(&entry.data)?;
        if !code_object.target().can_run_on(target) {
            return Err(no_code_object(format!(
                "the bundle's entry {} holds a code object built for {}",
                entry.id,
                code_object.target()
            )));
        }
        return Ok((code_object, Cow::Owned(entry.data.clone())));
    }
    let code_object = CodeObject::parse(image)?;
    if !code_object.target().can_run_on(target) {
        return Err(no_code_object(format!(
            "the code object is built for {}",
            code_object.target()
        )));
    }
    Ok((code_object, Cow::Borrowed(image)))
}

impl Module {
    /// Loads a bare code object or an offload bundle (the entry for the device's target id is
    /// taken) on `device`.
    pub fn load(device: &Device, image: &[u8]) -> Result<Module, DeviceError> {
        let (code_object, bytes) = select_code_object(image, &device.properties().target)?;
        let handle = device.backend().load_module(&bytes)?;
        Ok(Module {
            inner: Arc::new(ModuleInner {
                device: device.clone(),
                handle,
                code_object,
            }),
        })
    }

    /// The device the module is loaded on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The backend's handle.
    pub fn handle(&self) -> ModuleHandle {
        self.inner.handle
    }

    /// The loaded code object, parsed.
    pub fn code_object(&self) -> &CodeObject {
        &self.inner.code_object
    }

    /// Every kernel of the module, in metadata order.
    pub fn kernels(&self) -> Vec<Kernel> {
        (0..self.code_object().kernels().len())
            .map(|index| Kernel {
                module: self.clone(),
                index,
            })
            .collect()
    }

    /// The kernel called `name`.
    pub fn kernel_by_name(&self, name: &str) -> Result<Kernel, DeviceError> {
        let kernels = self.code_object().kernels();
        let index = kernels
            .iter()
            .position(|kernel| kernel.name() == name)
            .ok_or_else(|| LaunchError::NoSuchKernel {
                kernel: name.to_owned(),
                available: kernels
                    .iter()
                    .map(|kernel| kernel.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(Kernel {
            module: self.clone(),
            index,
        })
    }

    /// The kernel `decl` declares (`#[kernel]` makes one per kernel), after checking its
    /// signature against the metadata: argument count, each argument's kind and size, and the
    /// declared `max_threads` against `.max_flat_workgroup_size`.
    ///
    /// # Example
    /// ```no_run
    /// use iron::emulator::Emulator;
    /// use iron::{Device, Module, TypedKernel};
    /// use iron_kernels::elementwise::add_f32;
    ///
    /// // After `cargo xtask build --gfx gfx950`:
    /// let device = Emulator::new("gfx950")?.device();
    /// let module = device.load_module(&std::fs::read("target/iron/kernels.bundle").unwrap())?;
    /// // `add_f32` is a `KernelDecl<fn(*const f32, *const f32, *mut f32, u32)>`: the kernel is
    /// // named by value, and its signature types the launch's arguments.
    /// let add: TypedKernel<fn(*const f32, *const f32, *mut f32, u32)> = module.kernel(add_f32)?;
    /// println!("{}: {} VGPRs", add.kernel().name(), add.kernel().metadata().vgpr_count);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn kernel<F: KernelSignature>(
        &self,
        decl: KernelDecl<F>,
    ) -> Result<TypedKernel<F>, DeviceError> {
        let kernel = self.kernel_by_name(decl.name)?;
        check_signature(kernel.metadata(), &F::params())?;
        check_bounds(kernel.metadata(), &decl.bounds, &decl.contract)?;
        Ok(TypedKernel { kernel, decl })
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("target", &self.code_object().target().to_string())
            .field("handle", &self.handle())
            .field("kernels", &self.code_object().kernels().len())
            .finish()
    }
}

/// One kernel of a loaded module, with its metadata.
#[derive(Clone)]
pub struct Kernel {
    module: Module,
    index: usize,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        self.code().name()
    }

    /// What the code object's metadata says about the kernel.
    pub fn metadata(&self) -> &KernelMetadata {
        self.code().metadata()
    }

    /// The kernel as the code object holds it: metadata, descriptor, machine code.
    pub fn code(&self) -> &code_object::Kernel {
        &self.module.code_object().kernels()[self.index]
    }

    /// The module the kernel belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name())
            .finish()
    }
}

/// A kernel whose declared signature `F` was checked against its metadata: launched with
/// [`Stream::launch`](super::Stream::launch) and a tuple of arguments of the matching types.
pub struct TypedKernel<F> {
    kernel: Kernel,
    decl: KernelDecl<F>,
}

impl<F> TypedKernel<F> {
    /// The kernel and its metadata.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The declaration it was resolved from.
    pub fn declaration(&self) -> &KernelDecl<F> {
        &self.decl
    }

    /// The dynamic LDS in bytes the kernel declares it needs (`#[kernel(dynamic_lds = ..)]`)
    /// for a workgroup of shape `block` on this code object's wave size: what to pass to
    /// [`LaunchConfig::with_dynamic_lds`](crate::LaunchConfig::with_dynamic_lds). 0 when it
    /// declares none, or for a block no launch accepts (empty or above 1024 work-items).
    ///
    /// # Example
    /// ```no_run
    /// use iron::emulator::Emulator;
    /// use iron::LaunchConfig;
    /// use iron_kernels::scan::scan_u32;
    ///
    /// let device = Emulator::new("gfx950")?.device();
    /// let module = device.load_module(&std::fs::read("target/iron/kernels.bundle").unwrap())?;
    /// let scan = module.kernel(scan_u32)?;
    /// let block = [256, 1, 1];
    /// let config = LaunchConfig::new([1, 1, 1], block).with_dynamic_lds(scan.dynamic_lds_for(block));
    /// assert!(config.dynamic_lds > 0);
    /// # Ok::<(), iron::DeviceError>(())
    /// ```
    pub fn dynamic_lds_for(&self, block: [u32; 3]) -> u32 {
        let threads = block
            .iter()
            .fold(1u64, |product, &d| product.saturating_mul(u64::from(d)));
        contract_dynamic_lds(
            &self.decl.contract,
            threads,
            self.kernel.metadata().wavefront_size,
        )
    }
}

impl<F> Clone for TypedKernel<F> {
    fn clone(&self) -> Self {
        TypedKernel {
            kernel: self.kernel.clone(),
            decl: self.decl,
        }
    }
}

impl<F> fmt::Debug for TypedKernel<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedKernel")
            .field("name", &self.kernel.name())
            .field("signature", &std::any::type_name::<F>())
            .finish()
    }
}
