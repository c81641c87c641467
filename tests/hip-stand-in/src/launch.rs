//! `hipModuleLaunchKernel`: the checks HIP makes, the explicit arguments from `extra` or
//! `kernelParams`, the hidden arguments filled by `iron::launch::pack_kernarg`, and a run on the
//! emulator to completion.
//!
//! Statuses follow the HIP runtime's (clr `hipModuleLaunchKernel`): a zero, too large or
//! overflowing geometry, a block over the device's 1024 work-items, dynamic LDS over the
//! device's, both or (for a kernel with arguments) neither of `kernelParams` and `extra`, or a
//! malformed `extra` are `hipErrorInvalidValue`; a block over the kernel's
//! `.max_flat_workgroup_size` is `hipErrorLaunchFailure`; `extra` bytes for a kernel without
//! arguments are `hipErrorLaunchOutOfResources`.

use std::ffi::{c_uint, c_void};

use hip_runtime_sys::{
    HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END, HipError,
    hipFunction_t, hipStream_t,
};
use iron::BackendError;
use iron::code_object::KernelArg;
use iron::device::{KernelLaunch, StreamHandle};
use iron::launch::{LaunchConfig, explicit_size, pack_kernarg};

use crate::device::MAX_GRID;
use crate::errors::{HipResult, guard, refuse};
use crate::ffi::number;
use crate::runtime::{Runtime, runtime};

const NAME: &str = "hipModuleLaunchKernel";

/// Checks the geometry against the device, as HIP does before it looks at the kernel.
fn check_geometry(
    runtime: &Runtime,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
) -> HipResult {
    let device = runtime.device.properties();
    let invalid = |reason: String| Err(refuse(NAME, HipError::INVALID_VALUE, reason));
    if grid.contains(&0) || block.contains(&0) {
        return invalid(format!(
            "a zero dimension in grid {grid:?} or block {block:?}"
        ));
    }
    if grid.iter().zip(MAX_GRID).any(|(&dim, max)| dim > max) {
        return invalid(format!("grid {grid:?} exceeds {MAX_GRID:?} workgroups"));
    }
    if grid
        .iter()
        .zip(block)
        .any(|(&g, b)| u64::from(g) * u64::from(b) > u64::from(u32::MAX))
    {
        return invalid(format!(
            "grid {grid:?} x block {block:?} exceeds 2^32 - 1 work-items"
        ));
    }
    let threads: u64 = block.iter().map(|&dim| u64::from(dim)).product();
    if threads > u64::from(device.max_threads_per_block) {
        return invalid(format!(
            "a block of {threads} work-items exceeds the device's {}",
            device.max_threads_per_block
        ));
    }
    if dynamic_lds > device.lds_per_workgroup {
        return invalid(format!(
            "{dynamic_lds} bytes of dynamic LDS exceed the device's {}",
            device.lds_per_workgroup
        ));
    }
    Ok(())
}

/// The explicit arguments from an `extra` array: `{HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer,
/// HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}`, the buffer holding the arguments
/// at their metadata offsets.
///
/// # Safety
/// `extra` points to 5 readable pointers; when they have the layout above, `size` points to a
/// `usize` and `buffer` to that many readable bytes.
unsafe fn args_from_extra<'a>(
    extra: *const *mut c_void,
    explicit: &[&KernelArg],
    explicit_len: usize,
) -> Result<Vec<&'a [u8]>, HipError> {
    // SAFETY: `extra` holds 5 readable entries, as the caller guarantees.
    let entries = unsafe { std::slice::from_raw_parts(extra, 5) };
    if entries[0] != HIP_LAUNCH_PARAM_BUFFER_POINTER
        || entries[2] != HIP_LAUNCH_PARAM_BUFFER_SIZE
        || entries[4] != HIP_LAUNCH_PARAM_END
    {
        return Err(refuse(
            NAME,
            HipError::INVALID_VALUE,
            "extra is not {BUFFER_POINTER, buffer, BUFFER_SIZE, &size, END}",
        ));
    }
    let (buffer, size) = (entries[1].cast::<u8>(), entries[3].cast::<usize>());
    if size.is_null() {
        return Err(refuse(
            NAME,
            HipError::INVALID_VALUE,
            "extra's size pointer is null",
        ));
    }
    // SAFETY: non-null, and points to a `usize`, as the caller guarantees.
    let size = unsafe { size.read_unaligned() };
    if explicit.is_empty() {
        return if size == 0 {
            Ok(Vec::new())
        } else {
            Err(refuse(
                NAME,
                HipError::LAUNCH_OUT_OF_RESOURCES,
                format!("{size} argument bytes for a kernel without arguments"),
            ))
        };
    }
    if buffer.is_null() || size < explicit_len {
        return Err(refuse(
            NAME,
            HipError::INVALID_VALUE,
            format!(
                "the argument buffer holds {size} bytes, the kernel's arguments {explicit_len}"
            ),
        ));
    }
    // SAFETY: `buffer` holds `size` readable bytes, as the caller guarantees.
    let buffer = unsafe { std::slice::from_raw_parts(buffer, size) };
    Ok(explicit
        .iter()
        .map(|arg| &buffer[arg.offset as usize..(arg.offset + arg.size) as usize])
        .collect())
}

/// The explicit arguments from `kernelParams`: one pointer per explicit argument, each to the
/// argument's bytes.
///
/// # Safety
/// `params` holds a readable pointer per explicit argument, each to `.size` readable bytes.
unsafe fn args_from_params<'a>(
    params: *const *mut c_void,
    explicit: &[&KernelArg],
) -> Result<Vec<&'a [u8]>, HipError> {
    explicit
        .iter()
        .enumerate()
        .map(|(index, arg)| {
            // SAFETY: one readable pointer per explicit argument, as the caller guarantees.
            let value = unsafe { params.add(index).read() }.cast::<u8>();
            if value.is_null() {
                return Err(refuse(
                    NAME,
                    HipError::INVALID_VALUE,
                    format!("kernelParams[{index}] is null"),
                ));
            }
            // SAFETY: the argument's `.size` bytes are readable, as the caller guarantees.
            Ok(unsafe { std::slice::from_raw_parts(value, arg.size as usize) })
        })
        .collect()
}

/// The status a failed emulator launch returns: a memory fault is an illegal address, any other
/// fault or failure a launch failure; the emulator's message goes to stderr.
fn launch_failure(error: BackendError) -> HipError {
    let status = match &error {
        BackendError::KernelFault { detail, .. } if detail.contains("memory fault") => {
            HipError::ILLEGAL_ADDRESS
        }
        BackendError::BadHandle { .. } => HipError::INVALID_HANDLE,
        _ => HipError::LAUNCH_FAILURE,
    };
    refuse(NAME, status, error)
}

/// `hipModuleLaunchKernel`: runs a kernel of a loaded module on the emulator with `grid`
/// workgroups of `block` work-items and `shared_mem_bytes` of dynamic LDS, its explicit
/// arguments from `extra` or `kernel_params`, and returns when it has finished. See the module
/// docs for the statuses.
///
/// # Safety
/// `extra`, when not null, is a HIP `extra` array whose buffer holds the explicit arguments;
/// `kernel_params`, when not null, holds a pointer to each explicit argument's bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "the HIP C signature")]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: hipFunction_t,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    stream: hipStream_t,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    guard(NAME, || {
        let runtime = runtime()?;
        let (grid, block) = ([grid_x, grid_y, grid_z], [block_x, block_y, block_z]);
        let target = {
            let tables = runtime.tables();
            tables.queues.check_stream(number(stream))?;
            check_geometry(runtime, grid, block, shared_mem_bytes)?;
            tables.modules.launch_target(number(function))?
        };
        let metadata = target.kernel().metadata();
        if !kernel_params.is_null() && !extra.is_null() {
            return Err(refuse(
                NAME,
                HipError::INVALID_VALUE,
                "both kernelParams and extra are given",
            ));
        }
        let explicit: Vec<&KernelArg> = metadata.explicit_args().collect();
        if !explicit.is_empty() && kernel_params.is_null() && extra.is_null() {
            return Err(refuse(
                NAME,
                HipError::INVALID_VALUE,
                format!(
                    "kernel {} takes arguments: neither kernelParams nor extra is given",
                    metadata.name
                ),
            ));
        }
        let threads: u32 = block.iter().product();
        if threads > metadata.max_flat_workgroup_size {
            return Err(refuse(
                NAME,
                HipError::LAUNCH_FAILURE,
                format!(
                    "a block of {threads} work-items exceeds kernel {}'s launch bound of {}",
                    metadata.name, metadata.max_flat_workgroup_size
                ),
            ));
        }
        let args = if !extra.is_null() {
            // SAFETY: a HIP `extra` array, as the caller guarantees.
            unsafe { args_from_extra(extra, &explicit, explicit_size(metadata)) }?
        } else if !kernel_params.is_null() {
            // SAFETY: a pointer per explicit argument, as the caller guarantees.
            unsafe { args_from_params(kernel_params, &explicit) }?
        } else {
            Vec::new()
        };
        let config = LaunchConfig {
            grid,
            block,
            dynamic_lds: shared_mem_bytes,
        };
        let segment = pack_kernarg(metadata, &args, &config)
            .map_err(|error| refuse(NAME, HipError::INVALID_VALUE, error))?;
        let launch = KernelLaunch {
            module: target.module,
            kernel: &metadata.name,
            grid,
            block,
            dynamic_lds: shared_mem_bytes,
            kernarg: &segment.bytes,
            kernarg_align: segment.align,
            explicit_size: segment.explicit_size,
            stream: StreamHandle::DEFAULT,
        };
        // SAFETY: the emulator runs the kernel in its own memory, where an access outside the
        // live allocations is a fault it reports, never an access to host memory.
        let ran = unsafe { runtime.device.backend().launch(&launch) };
        runtime.emulator.take_counters();
        ran.map_err(launch_failure)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::hipGetLastError;
    use crate::ffi::pointer;
    use crate::module::hipModuleUnload;
    use crate::runtime::runtime;
    use crate::stream::{hipStreamCreate, hipStreamDestroy};
    use crate::test_support::{
        download_and_free, function, library_bundle, library_code_object, load, ok, upload,
    };
    use hip_runtime_sys::hipModule_t;
    use iron::code_object::{CodeObject, KernelMetadata};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const POISON: f32 = -1234.5;
    const GUARD: usize = 16;

    /// The library's module and the metadata of its kernel `name`.
    fn kernel(name: &str) -> (hipModule_t, hipFunction_t, KernelMetadata) {
        let (status, module) = load(&library_bundle());
        ok(status);
        let code_object = CodeObject::parse(&library_code_object(runtime().unwrap().gfx)).unwrap();
        let metadata = code_object.kernel(name).unwrap().metadata().clone();
        (module, function(module, name), metadata)
    }

    /// The explicit arguments of `metadata` packed at their offsets, as `extra`'s buffer.
    fn buffer(metadata: &KernelMetadata, values: &[&[u8]]) -> Vec<u8> {
        let mut bytes = vec![0u8; explicit_size(metadata)];
        for (arg, value) in metadata.explicit_args().zip(values) {
            bytes[arg.offset as usize..][..value.len()].copy_from_slice(value);
        }
        bytes
    }

    /// Launches through `extra` with the argument buffer `args` of `size` bytes.
    fn launch_extra(
        function: hipFunction_t,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
        size: usize,
    ) -> HipError {
        let mut size = size;
        let mut extra = [
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            args.as_ptr().cast_mut().cast(),
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            (&raw mut size).cast(),
            HIP_LAUNCH_PARAM_END,
        ];
        let [gx, gy, gz] = grid;
        let [bx, by, bz] = block;
        // SAFETY: a well-formed `extra`; the buffer holds at least `size` bytes in these tests.
        unsafe {
            hipModuleLaunchKernel(
                function,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                extra.as_mut_ptr(),
            )
        }
    }

    /// Launches through `kernelParams`.
    fn launch_params(
        function: hipFunction_t,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> HipError {
        // SAFETY: each pointer is to an argument's bytes, or null (refused).
        unsafe {
            hipModuleLaunchKernel(
                function,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    }

    fn address(device: *mut c_void) -> [u8; 8] {
        number(device).to_le_bytes()
    }

    fn random_f32(rng: &mut StdRng, n: usize) -> Vec<f32> {
        (0..n).map(|_| rng.random_range(-100.0f32..100.0)).collect()
    }

    /// The geometries each size is run with, in the workgroups of 256 the kernels are compiled
    /// for: a work-item per 4 elements (workgroups past the end of the array do nothing), and
    /// the least grid that covers the array (2048 elements per workgroup).
    fn geometries(n: usize) -> [([u32; 3], [u32; 3]); 2] {
        let workgroups = n.div_ceil(4).div_ceil(256).max(1) as u32;
        let least = n.div_ceil(2048).max(1) as u32;
        [
            ([workgroups, 1, 1], [256, 1, 1]),
            ([least, 1, 1], [256, 1, 1]),
        ]
    }

    #[test]
    fn an_unknown_function_or_stream_is_an_invalid_handle() {
        let mut args = [0u8; 8];
        let status = launch_extra(pointer(0x7000), [1; 3], [1; 3], &args, args.len());
        assert_eq!(status, HipError::INVALID_HANDLE);
        let status = launch_extra(std::ptr::null_mut(), [1; 3], [1; 3], &args, 8);
        assert_eq!(status, HipError::INVALID_HANDLE);
        let mut params = [args.as_mut_ptr().cast()];
        let status = launch_params(pointer(0x7000), [1; 3], [1; 3], &mut params);
        assert_eq!(status, HipError::INVALID_HANDLE);
    }

    #[test]
    #[ignore = "needs the device build: run cargo xtask test"]
    fn add_and_saxpy_match_the_cpu_through_extra_and_kernel_params() {
        let (module, add, add_meta) = kernel("add_f32");
        let saxpy = function(module, "saxpy_f32");
        let mut rng = StdRng::seed_from_u64(0x5354_414e);
        for n in [0usize, 1, 5, 64, 1000, 4099] {
            for (grid, block) in geometries(n) {
                let (a, b) = (random_f32(&mut rng, n), random_f32(&mut rng, n));
                let (da, db) = (upload(&a), upload(&b));
                let dc = upload(&vec![POISON; n + GUARD]);
                let n32 = (n as u32).to_le_bytes();
                let args = buffer(&add_meta, &[&address(da), &address(db), &address(dc), &n32]);
                ok(launch_extra(add, grid, block, &args, args.len()));
                let c = download_and_free::<f32>(dc, n + GUARD);
                for i in 0..n {
                    assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "add n={n} i={i}");
                }
                assert!(c[n..].iter().all(|&v| v == POISON), "add overran n={n}");

                let alpha: f32 = rng.random_range(-4.0..4.0);
                let dy = upload(&b);
                let (mut alpha_bytes, mut x, mut y, mut count) =
                    (alpha.to_le_bytes(), address(da), address(dy), n32);
                let mut params: [*mut c_void; 4] = [
                    alpha_bytes.as_mut_ptr().cast(),
                    x.as_mut_ptr().cast(),
                    y.as_mut_ptr().cast(),
                    count.as_mut_ptr().cast(),
                ];
                ok(launch_params(saxpy, grid, block, &mut params));
                let y = download_and_free::<f32>(dy, n);
                for i in 0..n {
                    let expected = alpha.mul_add(a[i], b[i]);
                    assert_eq!(y[i].to_bits(), expected.to_bits(), "saxpy n={n} i={i}");
                }
                download_and_free::<f32>(da, n);
                download_and_free::<f32>(db, n);
            }
        }
        // SAFETY: a live module.
        ok(unsafe { hipModuleUnload(module) });
    }

    #[test]
    #[ignore = "needs the device build: run cargo xtask test"]
    fn refused_launches_do_not_run() {
        let (module, add, meta) = kernel("add_f32");
        let n = 100usize;
        let (da, db) = (upload(&vec![1.0f32; n]), upload(&vec![2.0f32; n]));
        let dc = upload(&vec![POISON; n]);
        let args = buffer(
            &meta,
            &[
                &address(da),
                &address(db),
                &address(dc),
                &100u32.to_le_bytes(),
            ],
        );
        let full = args.len();
        let one = [1, 1, 1];
        let block = [128, 1, 1];
        let expect = |status: HipError, wanted: HipError, what: &str| {
            assert_eq!(status, wanted, "{what}");
            // SAFETY: takes no arguments.
            assert_eq!(unsafe { hipGetLastError() }, wanted, "{what}");
        };
        let invalid = HipError::INVALID_VALUE;
        expect(
            launch_extra(add, one, block, &args, full - 1),
            invalid,
            "short buffer",
        );
        expect(
            launch_extra(add, one, block, &args, 0),
            invalid,
            "empty buffer",
        );
        expect(
            launch_extra(add, [0, 1, 1], block, &args, full),
            invalid,
            "zero grid",
        );
        expect(
            launch_extra(add, one, [64, 0, 1], &args, full),
            invalid,
            "zero block",
        );
        expect(
            launch_extra(add, [1, 65537, 1], block, &args, full),
            invalid,
            "grid y",
        );
        expect(
            launch_extra(add, [1 << 31, 1, 1], block, &args, full),
            invalid,
            "grid x",
        );
        expect(
            launch_extra(add, [1 << 24, 1, 1], [256, 1, 1], &args, full),
            invalid,
            "2^32",
        );
        expect(
            launch_extra(add, one, [2048, 1, 1], &args, full),
            invalid,
            "device block",
        );
        let failure = HipError::LAUNCH_FAILURE;
        expect(
            launch_extra(add, one, [512, 1, 1], &args, full),
            failure,
            "kernel bound",
        );
        expect(
            launch_extra(add, one, [16, 16, 2], &args, full),
            failure,
            "kernel bound 3-D",
        );
        let mut params = [std::ptr::null_mut(); 4];
        expect(
            launch_params(add, one, block, &mut params),
            invalid,
            "null kernelParams entry",
        );
        let [gx, gy, gz] = one;
        let mut size = full;
        let mut extra = [
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            (&raw mut size).cast(),
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            args.as_ptr().cast_mut().cast(),
            HIP_LAUNCH_PARAM_END,
        ];
        let mut other = [0u8; 8];
        let mut params = [other.as_mut_ptr().cast::<c_void>(); 4];
        let lds = runtime().unwrap().device.properties().lds_per_workgroup;
        let mut stream = std::ptr::null_mut();
        // SAFETY: `extra` has 5 entries and `params` 4 valid pointers; the stream is created
        // and destroyed here.
        unsafe {
            let launch = |lds: u32,
                          stream: hipStream_t,
                          params: *mut *mut c_void,
                          extra: *mut *mut c_void| {
                hipModuleLaunchKernel(add, gx, gy, gz, 128, 1, 1, lds, stream, params, extra)
            };
            let (no_stream, no_args): (hipStream_t, *mut *mut c_void) =
                (std::ptr::null_mut(), std::ptr::null_mut());
            let out_of_order = launch(0, no_stream, no_args, extra.as_mut_ptr());
            expect(out_of_order, invalid, "extra out of order");
            extra.swap(0, 2);
            extra.swap(1, 3);
            let both = launch(0, no_stream, params.as_mut_ptr(), extra.as_mut_ptr());
            expect(both, invalid, "both");
            expect(launch(0, no_stream, no_args, no_args), invalid, "neither");
            let too_much_lds = launch(lds + 1, no_stream, no_args, extra.as_mut_ptr());
            expect(too_much_lds, invalid, "dynamic LDS");
            let bad_stream = launch(0, pointer(0x3330), no_args, extra.as_mut_ptr());
            expect(bad_stream, HipError::INVALID_HANDLE, "stream");
            extra[3] = std::ptr::null_mut();
            expect(
                launch(0, no_stream, no_args, extra.as_mut_ptr()),
                invalid,
                "null size",
            );
            ok(hipStreamCreate(&mut stream));
            extra[3] = (&raw mut size).cast();
            ok(launch(0, stream, no_args, extra.as_mut_ptr()));
            ok(hipStreamDestroy(stream));
            ok(hipModuleUnload(module));
            let unloaded = launch(0, no_stream, no_args, extra.as_mut_ptr());
            expect(unloaded, HipError::INVALID_HANDLE, "unloaded module");
        }
        // Only the one accepted launch ran: c = a + b over 100 elements.
        assert_eq!(download_and_free::<f32>(dc, n), vec![3.0f32; n]);
        download_and_free::<f32>(da, n);
        download_and_free::<f32>(db, n);
    }

    #[test]
    #[ignore = "needs the device build: run cargo xtask test"]
    fn a_memory_fault_is_an_illegal_address_and_later_launches_still_run() {
        let (module, add, meta) = kernel("add_f32");
        let n = 64usize;
        let (da, db) = (upload(&vec![1.5f32; n]), upload(&vec![2.0f32; n]));
        let dc = upload(&vec![POISON; n]);
        let bogus = 0x10u64.to_le_bytes();
        let count = (n as u32).to_le_bytes();
        let faulting = buffer(&meta, &[&bogus, &address(db), &address(dc), &count]);
        let status = launch_extra(add, [1, 1, 1], [64, 1, 1], &faulting, faulting.len());
        assert_eq!(status, HipError::ILLEGAL_ADDRESS);
        // SAFETY: takes no arguments.
        assert_eq!(unsafe { hipGetLastError() }, HipError::ILLEGAL_ADDRESS);
        let args = buffer(&meta, &[&address(da), &address(db), &address(dc), &count]);
        ok(launch_extra(add, [1, 1, 1], [64, 1, 1], &args, args.len()));
        assert_eq!(download_and_free::<f32>(dc, n), vec![3.5f32; n]);
        download_and_free::<f32>(da, n);
        download_and_free::<f32>(db, n);
        // SAFETY: a live module.
        ok(unsafe { hipModuleUnload(module) });
    }
}
