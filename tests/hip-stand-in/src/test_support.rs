//! Helpers of the unit tests: calls of the exported functions that must succeed, and the
//! library bundle of the device build.

use std::ffi::{CString, c_void};

use hip_runtime_sys::{HipError, hipFunction_t, hipMemcpyKind, hipModule_t};
use iron::code_object::{Bundle, TargetId};

use crate::memory::{hipFree, hipMalloc, hipMemcpy};
use crate::module::{hipModuleGetFunction, hipModuleLoadData};

/// Asserts that a call returned `hipSuccess`.
pub fn ok(status: HipError) {
    assert_eq!(status, HipError::SUCCESS);
}

/// The library bundle `cargo xtask build` wrote to `$IRON_ARTIFACTS/kernels.bundle`, in
/// 8-byte aligned storage as a loader expects. Panics with instructions when it is missing (the
/// tests using it are ignored unless run by `cargo xtask test`).
pub fn library_bundle() -> Vec<u64> {
    let dir = std::env::var_os("IRON_ARTIFACTS")
        .expect("IRON_ARTIFACTS is not set: run these tests with `cargo xtask test`");
    let bytes = std::fs::read(std::path::Path::new(&dir).join("kernels.bundle"))
        .expect("cannot read kernels.bundle: run `cargo xtask build`");
    aligned(&bytes)
}

/// The bare code object of the library bundle for `gfx`.
pub fn library_code_object(gfx: &str) -> Vec<u8> {
    let bytes: Vec<u8> = library_bundle()
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    let bundle = Bundle::parse(&bytes).expect("the library bundle parses");
    let entry = bundle
        .select(&TargetId::new(gfx))
        .expect("the library bundle holds the emulated gfx");
    entry.data.clone()
}

/// `bytes` copied into 8-byte aligned words (zero-padded).
pub fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    for (index, &byte) in bytes.iter().enumerate() {
        words[index / 8] |= u64::from(byte) << (8 * (index % 8));
    }
    words
}

/// Loads an image with `hipModuleLoadData`, returning the status and the module.
pub fn load(image: &[u64]) -> (HipError, hipModule_t) {
    let mut module = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the image is complete and outlives the call.
    let status = unsafe { hipModuleLoadData(&mut module, image.as_ptr().cast()) };
    (status, module)
}

/// The function `name` of a loaded module.
pub fn function(module: hipModule_t, name: &str) -> hipFunction_t {
    let name = CString::new(name).unwrap();
    let mut function = std::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated name.
    ok(unsafe { hipModuleGetFunction(&mut function, module, name.as_ptr()) });
    function
}

/// A device allocation holding a copy of `data`.
pub fn upload<T: Copy>(data: &[T]) -> *mut c_void {
    let bytes = size_of_val(data);
    let mut device = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { hipMalloc(&mut device, bytes.max(1)) });
    // SAFETY: `data` is host memory of `bytes` bytes; `device` an allocation at least as large.
    ok(unsafe {
        hipMemcpy(
            device,
            data.as_ptr().cast(),
            bytes,
            hipMemcpyKind::hipMemcpyHostToDevice,
        )
    });
    device
}

/// `len` elements copied back from device memory, then the allocation freed.
pub fn download_and_free<T: Copy + Default>(device: *mut c_void, len: usize) -> Vec<T> {
    let mut host = vec![T::default(); len];
    // SAFETY: `host` is writable for `len` elements; `device` holds at least as many.
    ok(unsafe {
        hipMemcpy(
            host.as_mut_ptr().cast(),
            device,
            size_of_val(host.as_slice()),
            hipMemcpyKind::hipMemcpyDeviceToHost,
        )
    });
    // SAFETY: a live allocation, not used afterwards.
    ok(unsafe { hipFree(device) });
    host
}
