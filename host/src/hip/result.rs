//! Each HIP call the backend makes, once: its status turned into a `Result`, nothing else.
//!
//! Pointers cross as `*mut c_void`; handles (streams, events, modules, functions) as the
//! runtime's opaque pointer types. Every function is `unsafe` where the runtime trusts its
//! arguments, with the condition stated.

use std::ffi::{CStr, c_int, c_uint, c_void};

use hip_runtime_sys::{
    HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END, HipError,
    HipRuntimeApi, hipEvent_t, hipFunction_t, hipMemcpyKind, hipModule_t, hipStream_t,
};

/// `hipMalloc`.
pub fn malloc(api: &HipRuntimeApi, bytes: usize) -> Result<*mut c_void, HipError> {
    let mut pointer = std::ptr::null_mut();
    // SAFETY: the runtime writes one pointer through a valid out-pointer.
    unsafe { api.hipMalloc(&mut pointer, bytes) }.ok()?;
    Ok(pointer)
}

/// `hipFree`.
///
/// # Safety
/// `pointer` was returned by `hipMalloc` and is not used afterwards.
pub unsafe fn free(api: &HipRuntimeApi, pointer: *mut c_void) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipFree(pointer) }.ok()
}

/// `hipMemcpy` of `bytes` bytes.
///
/// # Safety
/// `dst` and `src` are valid for `bytes` bytes on the sides `kind` says.
pub unsafe fn memcpy(
    api: &HipRuntimeApi,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: hipMemcpyKind,
) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipMemcpy(dst, src, bytes, kind) }.ok()
}

/// `hipMemcpyAsync` of `bytes` bytes on `stream`.
///
/// # Safety
/// `dst` and `src` are valid for `bytes` bytes on the sides `kind` says until the stream has
/// been synchronized; `stream` is null or a live stream.
pub unsafe fn memcpy_async(
    api: &HipRuntimeApi,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipMemcpyAsync(dst, src, bytes, kind, stream) }.ok()
}

/// `hipMemset`.
///
/// # Safety
/// `dst` is device memory valid for `bytes` bytes.
pub unsafe fn memset(
    api: &HipRuntimeApi,
    dst: *mut c_void,
    value: u8,
    bytes: usize,
) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipMemset(dst, c_int::from(value), bytes) }.ok()
}

/// `hipMemsetAsync` on `stream`.
///
/// # Safety
/// `dst` is device memory valid for `bytes` bytes; `stream` is null or a live stream.
pub unsafe fn memset_async(
    api: &HipRuntimeApi,
    dst: *mut c_void,
    value: u8,
    bytes: usize,
    stream: hipStream_t,
) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipMemsetAsync(dst, c_int::from(value), bytes, stream) }.ok()
}

/// `hipModuleLoadData`.
///
/// # Safety
/// `image` points to a complete code object (or bundle) that stays alive while the module is
/// loaded.
pub unsafe fn module_load_data(
    api: &HipRuntimeApi,
    image: *const c_void,
) -> Result<hipModule_t, HipError> {
    let mut module = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the image as the caller guarantees.
    unsafe { api.hipModuleLoadData(&mut module, image) }.ok()?;
    Ok(module)
}

/// `hipModuleUnload`.
///
/// # Safety
/// `module` is a loaded module, not used afterwards.
pub unsafe fn module_unload(api: &HipRuntimeApi, module: hipModule_t) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipModuleUnload(module) }.ok()
}

/// `hipModuleGetFunction`.
///
/// # Safety
/// `module` is a loaded module.
pub unsafe fn module_get_function(
    api: &HipRuntimeApi,
    module: hipModule_t,
    name: &CStr,
) -> Result<hipFunction_t, HipError> {
    let mut function = std::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated name; the module as the caller guarantees.
    unsafe { api.hipModuleGetFunction(&mut function, module, name.as_ptr()) }.ok()?;
    Ok(function)
}

/// `hipModuleGetGlobal`: the device address and size of the module's global `name`.
///
/// # Safety
/// `module` is a loaded module.
pub unsafe fn module_get_global(
    api: &HipRuntimeApi,
    module: hipModule_t,
    name: &CStr,
) -> Result<(u64, usize), HipError> {
    let mut address = std::ptr::null_mut();
    let mut bytes = 0usize;
    // SAFETY: valid out-pointers and NUL-terminated name; the module as the caller guarantees.
    unsafe { api.hipModuleGetGlobal(&mut address, &mut bytes, module, name.as_ptr()) }.ok()?;
    Ok((address.expose_provenance() as u64, bytes))
}

/// `hipModuleLaunchKernel` with the explicit arguments packed in `kernarg`, passed through
/// `extra` as `{HIP_LAUNCH_PARAM_BUFFER_POINTER, kernarg, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
/// HIP_LAUNCH_PARAM_END}`. The runtime copies the arguments before it returns.
///
/// # Safety
/// `function` belongs to a loaded module; `stream` is null or a live stream; `kernarg` holds the
/// kernel's explicit arguments at their metadata offsets, and the kernel, run with them, stays
/// inside memory it may access.
pub unsafe fn module_launch_kernel(
    api: &HipRuntimeApi,
    function: hipFunction_t,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    stream: hipStream_t,
    kernarg: &[u8],
) -> Result<(), HipError> {
    let mut size: usize = kernarg.len();
    let mut extra = [
        HIP_LAUNCH_PARAM_BUFFER_POINTER,
        kernarg.as_ptr().cast_mut().cast::<c_void>(),
        HIP_LAUNCH_PARAM_BUFFER_SIZE,
        (&raw mut size).cast::<c_void>(),
        HIP_LAUNCH_PARAM_END,
    ];
    // SAFETY: `extra` is the terminated key/value array HIP reads (the buffer and its size stay
    // alive for the call, during which the runtime copies them); the rest as the caller
    // guarantees.
    unsafe {
        api.hipModuleLaunchKernel(
            function,
            c_uint::from(grid[0]),
            c_uint::from(grid[1]),
            c_uint::from(grid[2]),
            c_uint::from(block[0]),
            c_uint::from(block[1]),
            c_uint::from(block[2]),
            c_uint::from(dynamic_lds),
            stream,
            std::ptr::null_mut(),
            extra.as_mut_ptr(),
        )
    }
    .ok()
}

/// `hipStreamCreate`.
pub fn stream_create(api: &HipRuntimeApi) -> Result<hipStream_t, HipError> {
    let mut stream = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { api.hipStreamCreate(&mut stream) }.ok()?;
    Ok(stream)
}

/// `hipStreamSynchronize`.
///
/// # Safety
/// `stream` is null or a live stream.
pub unsafe fn stream_synchronize(api: &HipRuntimeApi, stream: hipStream_t) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipStreamSynchronize(stream) }.ok()
}

/// `hipStreamDestroy`.
///
/// # Safety
/// `stream` is a live stream, not used afterwards.
pub unsafe fn stream_destroy(api: &HipRuntimeApi, stream: hipStream_t) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipStreamDestroy(stream) }.ok()
}

/// `hipEventCreate`.
pub fn event_create(api: &HipRuntimeApi) -> Result<hipEvent_t, HipError> {
    let mut event = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { api.hipEventCreate(&mut event) }.ok()?;
    Ok(event)
}

/// `hipEventRecord`.
///
/// # Safety
/// `event` is a live event; `stream` is null or a live stream.
pub unsafe fn event_record(
    api: &HipRuntimeApi,
    event: hipEvent_t,
    stream: hipStream_t,
) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipEventRecord(event, stream) }.ok()
}

/// `hipEventSynchronize`.
///
/// # Safety
/// `event` is a live event.
pub unsafe fn event_synchronize(api: &HipRuntimeApi, event: hipEvent_t) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipEventSynchronize(event) }.ok()
}

/// `hipEventElapsedTime`, in milliseconds.
///
/// # Safety
/// Both events are live and recorded.
pub unsafe fn event_elapsed_time(
    api: &HipRuntimeApi,
    start: hipEvent_t,
    end: hipEvent_t,
) -> Result<f32, HipError> {
    let mut milliseconds = 0.0f32;
    // SAFETY: valid out-pointer; the events as the caller guarantees.
    unsafe { api.hipEventElapsedTime(&mut milliseconds, start, end) }.ok()?;
    Ok(milliseconds)
}

/// `hipEventDestroy`.
///
/// # Safety
/// `event` is a live event, not used afterwards.
pub unsafe fn event_destroy(api: &HipRuntimeApi, event: hipEvent_t) -> Result<(), HipError> {
    // SAFETY: as the caller guarantees.
    unsafe { api.hipEventDestroy(event) }.ok()
}

/// `hipDeviceSynchronize`.
pub fn device_synchronize(api: &HipRuntimeApi) -> Result<(), HipError> {
    // SAFETY: takes no arguments.
    unsafe { api.hipDeviceSynchronize() }.ok()
}

/// `hipGetDeviceCount`, with the raw status (the sys crate's `device_count` folds the
/// no-device codes into 0, and the "no GPU" message names the code).
pub fn get_device_count(api: &HipRuntimeApi) -> (HipError, usize) {
    let mut count: c_int = 0;
    // SAFETY: the runtime writes one int through a valid pointer.
    let status = unsafe { api.hipGetDeviceCount(&mut count) };
    (status, usize::try_from(count).unwrap_or(0))
}
