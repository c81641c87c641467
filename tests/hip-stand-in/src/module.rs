//! Modules: code objects loaded on the emulator, picked from a bundle as HIP picks them, and the
//! functions (kernels) looked up in them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;

use hip_runtime_sys::{HipError, hipDeviceptr_t, hipFunction_t, hipModule_t};
use iron::code_object::{Bundle, CodeObject, CodeObjectError, Kernel, TargetId, is_bundle};
use iron::device::ModuleHandle;

use crate::errors::{guard, refuse};
use crate::ffi::{number, pointer, write_out};
use crate::image::image_at;
use crate::runtime::runtime;

/// A module: the emulator's handle, the parsed code object, and the functions handed out.
struct LoadedModule {
    backend: ModuleHandle,
    code_object: Arc<CodeObject>,
    /// Kernel name to function handle.
    functions: HashMap<String, u64>,
}

/// A function handle's kernel: its module and its index in the code object.
struct Function {
    module: u64,
    kernel: usize,
}

/// The live modules and functions.
#[derive(Default)]
pub struct Modules {
    modules: HashMap<u64, LoadedModule>,
    functions: HashMap<u64, Function>,
}

/// What a launch needs of a function: where it is loaded and its kernel.
pub struct LaunchTarget {
    /// The emulator's module.
    pub module: ModuleHandle,
    code_object: Arc<CodeObject>,
    kernel: usize,
}

impl LaunchTarget {
    /// The kernel: metadata, descriptor, code.
    pub fn kernel(&self) -> &Kernel {
        &self.code_object.kernels()[self.kernel]
    }
}

impl Modules {
    /// The emulator's handles of the live modules.
    pub fn handles(&self) -> impl Iterator<Item = ModuleHandle> + '_ {
        self.modules.values().map(|loaded| loaded.backend)
    }

    /// The launch target of a live function (`hipErrorInvalidHandle` for any other handle).
    pub fn launch_target(&self, function: u64) -> Result<LaunchTarget, HipError> {
        let function = self
            .functions
            .get(&function)
            .ok_or(HipError::INVALID_HANDLE)?;
        let module = self
            .modules
            .get(&function.module)
            .ok_or(HipError::INVALID_HANDLE)?;
        Ok(LaunchTarget {
            module: module.backend,
            code_object: module.code_object.clone(),
            kernel: function.kernel,
        })
    }
}

/// The code object for a device of target id `target` in `image` (a bare code object, or an
/// offload bundle whose best matching entry is taken), or the status and reason to refuse it.
fn select<'a>(image: &'a [u8], target: &TargetId) -> Result<Cow<'a, [u8]>, (HipError, String)> {
    let invalid = |error: CodeObjectError| (HipError::INVALID_IMAGE, error.to_string());
    if !is_bundle(image) {
        return Ok(Cow::Borrowed(image));
    }
    let bundle = Bundle::parse(image).map_err(invalid)?;
    match bundle.select(target) {
        Ok(entry) => Ok(Cow::Owned(entry.data.clone())),
        Err(error @ CodeObjectError::NoMatchingTarget { .. }) => {
            Err((HipError::NO_BINARY_FOR_GPU, error.to_string()))
        }
        Err(error) => Err(invalid(error)),
    }
}

/// `hipModuleLoadData`: loads a code object, or the entry of an offload bundle for the emulated
/// gfx. An image that does not parse is `hipErrorInvalidImage`; one without code for the
/// device `hipErrorNoBinaryForGpu` (the reason on stderr).
///
/// # Safety
/// `module` is null or valid for one write; `image` is null or points to a complete code object
/// or bundle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut hipModule_t,
    image: *const c_void,
) -> HipError {
    const NAME: &str = "hipModuleLoadData";
    guard(NAME, || {
        let runtime = runtime()?;
        if module.is_null() || image.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: the image is complete, as the caller guarantees.
        let image = unsafe { image_at(image.cast()) }
            .map_err(|reason| refuse(NAME, HipError::INVALID_IMAGE, reason))?;
        let chosen = select(image, &runtime.target)
            .map_err(|(error, reason)| refuse(NAME, error, reason))?;
        let code_object = CodeObject::parse(&chosen)
            .map_err(|error| refuse(NAME, HipError::INVALID_IMAGE, error))?;
        if !code_object.target().can_run_on(&runtime.target) {
            return Err(refuse(
                NAME,
                HipError::NO_BINARY_FOR_GPU,
                format!(
                    "the code object is built for {}, the device is {}",
                    code_object.target(),
                    runtime.target
                ),
            ));
        }
        let mut tables = runtime.tables();
        let backend = runtime
            .device
            .backend()
            .load_module(&chosen)
            .map_err(|error| refuse(NAME, HipError::INVALID_IMAGE, error))?;
        let handle = tables.new_handle();
        tables.modules.modules.insert(
            handle,
            LoadedModule {
                backend,
                code_object: Arc::new(code_object),
                functions: HashMap::new(),
            },
        );
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(module, pointer(handle)) }
    })
}

/// `hipModuleGetGlobal`: the device address and size of a module's global variable (an
/// object symbol of its code object); `hipErrorNotFound` when it has none of that name.
///
/// # Safety
/// `dptr` and `bytes` are null or valid for one write; `name` is null or a NUL-terminated
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut hipDeviceptr_t,
    bytes: *mut usize,
    module: hipModule_t,
    name: *const c_char,
) -> HipError {
    guard("hipModuleGetGlobal", || {
        let runtime = runtime()?;
        if name.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: non-null and NUL-terminated, as the caller guarantees.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| HipError::NOT_FOUND)?;
        let tables = runtime.tables();
        let loaded = tables
            .modules
            .modules
            .get(&number(module))
            .ok_or(HipError::INVALID_HANDLE)?;
        let (address, size) = runtime
            .emulator
            .module_global(loaded.backend, name)
            .ok_or(HipError::NOT_FOUND)?;
        if !dptr.is_null() {
            // SAFETY: non-null and valid for one write, as the caller guarantees.
            unsafe { dptr.write(pointer(address)) };
        }
        if !bytes.is_null() {
            // SAFETY: as above.
            unsafe { bytes.write(size as usize) };
        }
        Ok(())
    })
}

/// `hipModuleGetFunction`: the kernel called `name` in a live module (the same handle each
/// time); `hipErrorNotFound` when the module has no such kernel.
///
/// # Safety
/// `function` is null or valid for one write; `name` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut hipFunction_t,
    module: hipModule_t,
    name: *const c_char,
) -> HipError {
    guard("hipModuleGetFunction", || {
        let runtime = runtime()?;
        if function.is_null() || name.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: non-null and NUL-terminated, as the caller guarantees.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| HipError::NOT_FOUND)?;
        let mut tables = runtime.tables();
        let module_handle = number(module);
        let loaded = tables
            .modules
            .modules
            .get(&module_handle)
            .ok_or(HipError::INVALID_HANDLE)?;
        let handle = match loaded.functions.get(name) {
            Some(&handle) => handle,
            None => {
                let kernel = loaded
                    .code_object
                    .kernels()
                    .iter()
                    .position(|kernel| kernel.name() == name)
                    .ok_or(HipError::NOT_FOUND)?;
                let handle = tables.new_handle();
                let modules = &mut tables.modules;
                modules.functions.insert(
                    handle,
                    Function {
                        module: module_handle,
                        kernel,
                    },
                );
                if let Some(loaded) = modules.modules.get_mut(&module_handle) {
                    loaded.functions.insert(name.to_owned(), handle);
                }
                handle
            }
        };
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(function, pointer(handle)) }
    })
}

/// `hipModuleUnload`: unloads a live module; its functions become invalid handles.
///
/// # Safety
/// None: the handle is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleUnload(module: hipModule_t) -> HipError {
    guard("hipModuleUnload", || {
        let runtime = runtime()?;
        let mut tables = runtime.tables();
        let loaded = tables
            .modules
            .modules
            .remove(&number(module))
            .ok_or(HipError::INVALID_HANDLE)?;
        for handle in loaded.functions.values() {
            tables.modules.functions.remove(handle);
        }
        runtime
            .device
            .backend()
            .unload_module(loaded.backend)
            .map_err(|_| HipError::INVALID_HANDLE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::runtime;
    use crate::test_support::{aligned, function, library_bundle, library_code_object, load, ok};

    #[test]
    fn images_that_are_not_code_objects_are_refused() {
        let (status, module) = load(&aligned(b"definitely not a code object, nor a bundle"));
        assert_eq!(status, HipError::INVALID_IMAGE);
        assert!(module.is_null());
        let mut truncated_elf = b"\x7fELF\x02\x01\x01\x40".to_vec();
        truncated_elf.resize(64, 0);
        truncated_elf[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
        truncated_elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        assert_eq!(load(&aligned(&truncated_elf)).0, HipError::INVALID_IMAGE);
        let mut module = std::ptr::null_mut();
        // SAFETY: null arguments are refused before any use.
        unsafe {
            let status = hipModuleLoadData(&mut module, std::ptr::null());
            assert_eq!(status, HipError::INVALID_VALUE);
            let image = aligned(b"x");
            let status = hipModuleLoadData(std::ptr::null_mut(), image.as_ptr().cast());
            assert_eq!(status, HipError::INVALID_VALUE);
        }
    }

    #[test]
    fn unknown_module_handles_are_refused() {
        let mut function = std::ptr::null_mut();
        // SAFETY: valid out-pointer and name; the handle is only looked up.
        unsafe {
            let status = hipModuleGetFunction(&mut function, pointer(0x4242_0000), c"k".as_ptr());
            assert_eq!(status, HipError::INVALID_HANDLE);
            assert_eq!(
                hipModuleUnload(pointer(0x4242_0000)),
                HipError::INVALID_HANDLE
            );
            assert_eq!(
                hipModuleUnload(std::ptr::null_mut()),
                HipError::INVALID_HANDLE
            );
        }
    }

    #[test]
    #[ignore = "needs the device build: run cargo xtask test"]
    fn the_bundle_loads_and_names_its_kernels() {
        let (status, module) = load(&library_bundle());
        ok(status);
        let add = function(module, "add_f32");
        assert_eq!(function(module, "add_f32"), add, "one handle per kernel");
        assert_ne!(function(module, "saxpy_f32"), add);
        let mut found = std::ptr::null_mut();
        // SAFETY: valid out-pointer and names.
        unsafe {
            let status = hipModuleGetFunction(&mut found, module, c"no_such_kernel".as_ptr());
            assert_eq!(status, HipError::NOT_FOUND);
            let status = hipModuleGetFunction(&mut found, module, c"add_f32.kd".as_ptr());
            assert_eq!(status, HipError::NOT_FOUND);
            let status = hipModuleGetFunction(&mut found, module, std::ptr::null());
            assert_eq!(status, HipError::INVALID_VALUE);
            ok(hipModuleUnload(module));
            assert_eq!(hipModuleUnload(module), HipError::INVALID_HANDLE);
            let status = hipModuleGetFunction(&mut found, module, c"add_f32".as_ptr());
            assert_eq!(status, HipError::INVALID_HANDLE);
        }
    }

    #[test]
    #[ignore = "needs the device build: run cargo xtask test"]
    fn code_for_other_gfx_only_is_no_binary_for_this_gpu() {
        let gfx = runtime().unwrap().gfx;
        let bytes: Vec<u8> = library_bundle()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let bundle = Bundle::parse(&bytes).unwrap();
        let mut others = Bundle::new();
        let mut other_code_object = None;
        for entry in bundle.entries() {
            let processor = entry.id.target_id.as_ref().map(|t| t.processor.as_str());
            if processor != Some(gfx) {
                others.push(entry.id.clone(), entry.data.clone()).unwrap();
                if processor.is_some() {
                    other_code_object = Some(entry.data.clone());
                }
            }
        }
        let (status, module) = load(&aligned(&others.write()));
        assert_eq!(status, HipError::NO_BINARY_FOR_GPU);
        assert!(module.is_null());
        let other = other_code_object.expect("the build holds another gfx");
        assert_eq!(load(&aligned(&other)).0, HipError::NO_BINARY_FOR_GPU);
        // The bare code object for this gfx loads.
        let (status, module) = load(&aligned(&library_code_object(gfx)));
        ok(status);
        // SAFETY: a live module.
        ok(unsafe { hipModuleUnload(module) });
    }
}
