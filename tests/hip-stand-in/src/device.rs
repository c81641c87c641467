//! Initialization, versions, the one device, its attributes and properties.

use std::ffi::{c_char, c_int, c_uint};

use hip_runtime_sys::{HipError, hipDeviceAttribute_t, hipDeviceProp_tR0600};

use crate::errors::{HipResult, guard};
use crate::ffi::write_out;
use crate::runtime::{Runtime, reported_target, runtime};

/// The version `hipRuntimeGetVersion` and `hipDriverGetVersion` report: HIP 6.0.0 in HIP's
/// `major * 10_000_000 + minor * 100_000 + patch` encoding, the first version whose ABI
/// (`hipGetDevicePropertiesR0600`) this library exports.
pub const REPORTED_VERSION: c_int = 60_000_000;

/// Engine and memory clock the device reports, in kHz. The emulator has no clock: this is a
/// fixed placeholder so that callers reading it get a positive number.
pub const REPORTED_CLOCK_KHZ: c_int = 1_000_000;

/// Memory bus width the device reports, in bits: a fixed placeholder, as the clocks.
pub const REPORTED_BUS_WIDTH_BITS: c_int = 4096;

/// Largest block dimension in x, y and z (the device's work-item limit per workgroup).
const MAX_BLOCK_DIM: c_int = 1024;

/// Largest grid, in workgroups, per dimension: what `hipModuleLaunchKernel` accepts.
pub const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65536, 65536];

/// Checks that `device` is the one device, ordinal 0.
pub fn check_device(device: c_int) -> HipResult {
    if device == 0 {
        Ok(())
    } else {
        Err(HipError::INVALID_DEVICE)
    }
}

/// The value of a device attribute; `None` for attributes this library does not report.
fn attribute(runtime: &Runtime, attribute: hipDeviceAttribute_t) -> Option<c_int> {
    let props = runtime.device.properties();
    let int = |value: u32| c_int::try_from(value).ok();
    match attribute {
        hipDeviceAttribute_t::hipDeviceAttributeMaxThreadsPerBlock => {
            int(props.max_threads_per_block)
        }
        hipDeviceAttribute_t::hipDeviceAttributeMultiprocessorCount => int(props.compute_units),
        hipDeviceAttribute_t::hipDeviceAttributeMaxSharedMemoryPerBlock => {
            int(props.lds_per_workgroup)
        }
        hipDeviceAttribute_t::hipDeviceAttributeWarpSize => int(props.wave_size),
        hipDeviceAttribute_t::hipDeviceAttributeClockRate
        | hipDeviceAttribute_t::hipDeviceAttributeMemoryClockRate => Some(REPORTED_CLOCK_KHZ),
        hipDeviceAttribute_t::hipDeviceAttributeMemoryBusWidth => Some(REPORTED_BUS_WIDTH_BITS),
        hipDeviceAttribute_t::hipDeviceAttributeMaxBlockDimX
        | hipDeviceAttribute_t::hipDeviceAttributeMaxBlockDimY
        | hipDeviceAttribute_t::hipDeviceAttributeMaxBlockDimZ => Some(MAX_BLOCK_DIM),
        hipDeviceAttribute_t::hipDeviceAttributeMaxGridDimX => int(MAX_GRID[0]),
        hipDeviceAttribute_t::hipDeviceAttributeMaxGridDimY => int(MAX_GRID[1]),
        hipDeviceAttribute_t::hipDeviceAttributeMaxGridDimZ => int(MAX_GRID[2]),
        _ => None,
    }
}

/// Copies `text` into a fixed-size C string field, NUL-terminated (cut if it does not fit).
fn set_c_text(field: &mut [c_char], text: &str) {
    let room = field.len().saturating_sub(1);
    for (slot, &byte) in field.iter_mut().zip(text.as_bytes().iter().take(room)) {
        *slot = c_char::from_ne_bytes([byte]);
    }
    if let Some(end) = field.get_mut(text.len().min(room)) {
        *end = 0;
    }
}

/// The properties of the device, in the HIP 6.0 layout.
fn properties(runtime: &Runtime) -> hipDeviceProp_tR0600 {
    let device = runtime.device.properties();
    let int = |value: u32| c_int::try_from(value).unwrap_or(c_int::MAX);
    let mut props = hipDeviceProp_tR0600::default();
    set_c_text(&mut props.name, &device.name);
    set_c_text(&mut props.gcnArchName, &reported_target(runtime.gfx));
    props.totalGlobalMem = usize::try_from(device.global_memory).unwrap_or(usize::MAX);
    props.sharedMemPerBlock = device.lds_per_workgroup as usize;
    props.maxSharedMemoryPerMultiProcessor = device.lds_per_workgroup as usize;
    props.warpSize = int(device.wave_size);
    props.maxThreadsPerBlock = int(device.max_threads_per_block);
    props.maxThreadsDim = [MAX_BLOCK_DIM; 3];
    props.maxGridSize = MAX_GRID.map(|dim| c_int::try_from(dim).unwrap_or(c_int::MAX));
    props.multiProcessorCount = int(device.compute_units);
    props.clockRate = REPORTED_CLOCK_KHZ;
    props.memoryClockRate = REPORTED_CLOCK_KHZ;
    props.memoryBusWidth = REPORTED_BUS_WIDTH_BITS;
    props
}

/// `hipInit`: makes the emulated device; `hipErrorNoDevice` when `IRON_EMU_GFX` names no
/// emulated gfx. `flags` must be 0.
///
/// # Safety
/// None: takes a number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> HipError {
    guard("hipInit", || {
        if flags != 0 {
            return Err(HipError::INVALID_VALUE);
        }
        runtime().map(|_| ())
    })
}

/// `hipRuntimeGetVersion`: [`REPORTED_VERSION`].
///
/// # Safety
/// `version` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> HipError {
    // SAFETY: as the caller guarantees.
    guard("hipRuntimeGetVersion", || unsafe {
        write_out(version, REPORTED_VERSION)
    })
}

/// `hipDriverGetVersion`: [`REPORTED_VERSION`].
///
/// # Safety
/// `version` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> HipError {
    // SAFETY: as the caller guarantees.
    guard("hipDriverGetVersion", || unsafe {
        write_out(version, REPORTED_VERSION)
    })
}

/// `hipGetDeviceCount`: 1, or 0 with `hipErrorNoDevice` when there is no emulated device.
///
/// # Safety
/// `count` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> HipError {
    guard("hipGetDeviceCount", || {
        let found = runtime();
        // SAFETY: as the caller guarantees.
        unsafe { write_out(count, c_int::from(found.is_ok())) }?;
        found.map(|_| ())
    })
}

/// `hipSetDevice`: only device 0 exists; any other ordinal is `hipErrorInvalidDevice`.
///
/// # Safety
/// None: takes a number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipSetDevice(device: c_int) -> HipError {
    guard("hipSetDevice", || {
        runtime()?;
        check_device(device)
    })
}

/// `hipGetDevice`: always device 0.
///
/// # Safety
/// `device` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDevice(device: *mut c_int) -> HipError {
    guard("hipGetDevice", || {
        runtime()?;
        // SAFETY: as the caller guarantees.
        unsafe { write_out(device, 0) }
    })
}

/// `hipDeviceGetAttribute`: the block, grid, LDS, wave, compute unit and clock attributes;
/// `hipErrorInvalidValue` for any other.
///
/// # Safety
/// `value` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceGetAttribute(
    value: *mut c_int,
    attr: hipDeviceAttribute_t,
    device: c_int,
) -> HipError {
    guard("hipDeviceGetAttribute", || {
        let runtime = runtime()?;
        check_device(device)?;
        let found = attribute(runtime, attr).ok_or(HipError::INVALID_VALUE)?;
        // SAFETY: as the caller guarantees.
        unsafe { write_out(value, found) }
    })
}

/// `hipGetDevicePropertiesR0600`: the HIP 6.0 properties layout, with the name, `gcnArchName`
/// (`gfx950:sramecc+:xnack-`), memory, LDS, wave, block, grid and clock fields filled and every
/// other field zero.
///
/// # Safety
/// `props` is null or valid for one write of `hipDeviceProp_tR0600`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(
    props: *mut hipDeviceProp_tR0600,
    device: c_int,
) -> HipError {
    guard("hipGetDevicePropertiesR0600", || {
        let runtime = runtime()?;
        check_device(device)?;
        // SAFETY: as the caller guarantees.
        unsafe { write_out(props, properties(runtime)) }
    })
}

/// `hipDeviceSynchronize`: all work is done when its call returns, so there is nothing to wait
/// for.
///
/// # Safety
/// None: takes no arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    guard("hipDeviceSynchronize", || runtime().map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hip_runtime_sys::DeviceProperties;

    #[test]
    fn one_device_zero_and_no_other() {
        let mut count = -1;
        // SAFETY: valid out-pointers throughout.
        unsafe {
            assert_eq!(hipInit(0), HipError::SUCCESS);
            assert_eq!(hipInit(1), HipError::INVALID_VALUE);
            assert_eq!(hipGetDeviceCount(&mut count), HipError::SUCCESS);
            assert_eq!(count, 1);
            assert_eq!(hipSetDevice(0), HipError::SUCCESS);
            for bad in [-1, 1, 7, c_int::MAX] {
                assert_eq!(hipSetDevice(bad), HipError::INVALID_DEVICE, "{bad}");
            }
            let mut device = -1;
            assert_eq!(hipGetDevice(&mut device), HipError::SUCCESS);
            assert_eq!(device, 0);
            assert_eq!(hipGetDevice(std::ptr::null_mut()), HipError::INVALID_VALUE);
            assert_eq!(
                hipGetDeviceCount(std::ptr::null_mut()),
                HipError::INVALID_VALUE
            );
            let mut version = 0;
            assert_eq!(hipRuntimeGetVersion(&mut version), HipError::SUCCESS);
            assert_eq!(version, REPORTED_VERSION);
            assert_eq!(hipDriverGetVersion(&mut version), HipError::SUCCESS);
            assert_eq!(hipDeviceSynchronize(), HipError::SUCCESS);
        }
    }

    #[test]
    fn attributes_agree_with_the_emulator() {
        let runtime = runtime().unwrap();
        let expected = runtime.device.properties();
        let read = |attr: hipDeviceAttribute_t, device: c_int| {
            let mut value = -1;
            // SAFETY: valid out-pointer.
            let status = unsafe { hipDeviceGetAttribute(&mut value, attr, device) };
            (status, value)
        };
        use hipDeviceAttribute_t as A;
        let ok = |value: u32| (HipError::SUCCESS, value as c_int);
        assert_eq!(
            read(A::hipDeviceAttributeWarpSize, 0),
            ok(expected.wave_size)
        );
        assert_eq!(
            read(A::hipDeviceAttributeMaxThreadsPerBlock, 0),
            ok(expected.max_threads_per_block)
        );
        assert_eq!(
            read(A::hipDeviceAttributeMultiprocessorCount, 0),
            ok(expected.compute_units)
        );
        assert_eq!(
            read(A::hipDeviceAttributeMaxSharedMemoryPerBlock, 0),
            ok(expected.lds_per_workgroup)
        );
        assert_eq!(
            read(A::hipDeviceAttributeMemoryBusWidth, 0),
            (HipError::SUCCESS, REPORTED_BUS_WIDTH_BITS)
        );
        assert_eq!(
            read(A::hipDeviceAttributeWarpSize, 1).0,
            HipError::INVALID_DEVICE
        );
        assert_eq!(
            read(A::hipDeviceAttributeName, 0).0,
            HipError::INVALID_VALUE
        );
        assert_eq!(
            read(hipDeviceAttribute_t(123_456), 0).0,
            HipError::INVALID_VALUE
        );
        let null = std::ptr::null_mut();
        // SAFETY: a null out-pointer is refused before any write.
        let status = unsafe { hipDeviceGetAttribute(null, A::hipDeviceAttributeWarpSize, 0) };
        assert_eq!(status, HipError::INVALID_VALUE);
    }

    #[test]
    fn properties_name_the_emulated_target() {
        let runtime = runtime().unwrap();
        let mut props = Box::<hipDeviceProp_tR0600>::default();
        // SAFETY: a valid, writable struct of the R0600 layout.
        let status = unsafe { hipGetDevicePropertiesR0600(&mut *props, 0) };
        assert_eq!(status, HipError::SUCCESS);
        let read = DeviceProperties::R0600(props.clone());
        assert_eq!(read.name(), format!("Iron emulator ({})", runtime.gfx));
        assert_eq!(
            read.gcn_arch_name(),
            format!("{}:sramecc+:xnack-", runtime.gfx)
        );
        assert_eq!(
            read.total_global_mem() as u64,
            runtime.device.properties().global_memory
        );
        assert_eq!(props.warpSize as u32, runtime.device.properties().wave_size);
        // SAFETY: as above; the ordinal is refused before any write.
        let status = unsafe { hipGetDevicePropertiesR0600(&mut *props, 3) };
        assert_eq!(status, HipError::INVALID_DEVICE);
        // SAFETY: a null struct pointer is refused.
        let status = unsafe { hipGetDevicePropertiesR0600(std::ptr::null_mut(), 0) };
        assert_eq!(status, HipError::INVALID_VALUE);
    }

    #[test]
    fn long_text_is_cut_and_terminated() {
        let mut field = [1 as c_char; 8];
        set_c_text(&mut field, "gfx950:sramecc+");
        assert_eq!(field[7], 0);
        assert_eq!(
            field[..7].iter().map(|&c| c as u8).collect::<Vec<_>>(),
            b"gfx950:"
        );
        set_c_text(&mut field, "ab");
        assert_eq!(&field[..3], &[b'a' as c_char, b'b' as c_char, 0]);
    }
}
