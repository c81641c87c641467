//! Device memory: allocations in the emulator's address space, copies in every direction and
//! fills, all synchronous.
//!
//! Device pointers are emulator addresses, which are not host memory: a pointer is only ever
//! read or written as host memory when the copy's direction says it is host memory and it lies
//! outside the window of device addresses handed out so far.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uchar, c_void};
use std::ops::Range;

use hip_runtime_sys::{HipError, hipDeviceptr_t, hipMemcpyKind, hipStream_t};
use iron::emulator::EMULATOR_MEMORY_BYTES;

use crate::errors::{HipResult, guard};
use crate::ffi::{number, pointer, write_out};
use crate::runtime::{Runtime, Tables, runtime};

/// The live device allocations and the span of every address handed out.
#[derive(Default)]
pub struct Allocations {
    /// Start address to size in bytes.
    live: BTreeMap<u64, u64>,
    /// Bytes allocated and not freed.
    bytes: u64,
    /// From the lowest to past the highest device address ever handed out: a pointer in it is
    /// never treated as host memory, freed or not.
    window: Option<Range<u64>>,
}

impl Allocations {
    /// Records an allocation of `size` bytes at `address`.
    fn add(&mut self, address: u64, size: u64) {
        self.live.insert(address, size);
        self.bytes += size;
        let end = address.saturating_add(size);
        self.window = Some(match self.window.take() {
            Some(window) => window.start.min(address)..window.end.max(end),
            None => address..end,
        });
    }

    /// Forgets the allocation starting at `address`, returning its size.
    fn remove(&mut self, address: u64) -> Option<u64> {
        let size = self.live.remove(&address)?;
        self.bytes -= size;
        Some(size)
    }

    /// The live allocation holding the byte at `address`, as (start, size).
    fn holding(&self, address: u64) -> Option<(u64, u64)> {
        self.live
            .range(..=address)
            .next_back()
            .map(|(&start, &size)| (start, size))
            .filter(|&(start, size)| address - start < size)
    }

    /// Whether `address..address + len` lies inside one live allocation.
    fn contains(&self, address: u64, len: u64) -> bool {
        self.holding(address).is_some_and(|(start, size)| {
            address
                .checked_add(len)
                .is_some_and(|end| end <= start + size)
        })
    }

    /// Whether `address..address + len` touches the device address window.
    fn touches_window(&self, address: u64, len: u64) -> bool {
        let end = address.saturating_add(len.max(1));
        self.window
            .as_ref()
            .is_some_and(|window| address < window.end && window.start < end)
    }
}

/// Which memory one side of a copy is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Host,
    Device,
}

/// The sides (destination, source) of a copy of `kind`; `hipMemcpyDefault` infers each from
/// whether the address lies in a live device allocation.
fn sides(
    allocations: &Allocations,
    kind: hipMemcpyKind,
    dst: u64,
    src: u64,
) -> Result<(Side, Side), HipError> {
    let infer = |address: u64| {
        if allocations.holding(address).is_some() {
            Side::Device
        } else {
            Side::Host
        }
    };
    Ok(match kind {
        hipMemcpyKind::hipMemcpyHostToHost => (Side::Host, Side::Host),
        hipMemcpyKind::hipMemcpyHostToDevice => (Side::Device, Side::Host),
        hipMemcpyKind::hipMemcpyDeviceToHost => (Side::Host, Side::Device),
        hipMemcpyKind::hipMemcpyDeviceToDevice => (Side::Device, Side::Device),
        hipMemcpyKind::hipMemcpyDefault => (infer(dst), infer(src)),
        _ => return Err(HipError::INVALID_MEMCPY_DIRECTION),
    })
}

/// Checks one side of a copy: a device side must lie inside one live allocation, a host side
/// outside the device address window.
fn check_side(allocations: &Allocations, side: Side, address: u64, len: u64) -> HipResult {
    let fits = match side {
        Side::Device => allocations.contains(address, len),
        Side::Host => !allocations.touches_window(address, len),
    };
    if fits {
        Ok(())
    } else {
        Err(HipError::INVALID_VALUE)
    }
}

/// Any failure of the emulator's memory operations: the range was not device memory.
fn memory_error(_: iron::BackendError) -> HipError {
    HipError::INVALID_VALUE
}

/// Copies `len` bytes from `src` to `dst` in the directions `kind` gives or implies.
///
/// # Safety
/// A side that is host memory (by `kind`, or for `hipMemcpyDefault` by not being device memory)
/// is valid for `len` bytes of reading (`src`) or writing (`dst`).
unsafe fn copy(
    runtime: &Runtime,
    tables: &Tables,
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    kind: hipMemcpyKind,
) -> HipResult {
    if len == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let allocations = &tables.allocations;
    let (dst_side, src_side) = sides(allocations, kind, number(dst), number(src))?;
    // A module's globals (`hipModuleGetGlobal`) and constants are device memory too.
    let in_module = |address: u64, len: u64| {
        tables.modules.handles().any(|module| {
            runtime
                .emulator
                .module_memory(module)
                .is_some_and(|(start, size)| {
                    address >= start
                        && address
                            .checked_add(len)
                            .is_some_and(|end| end <= start + size)
                })
        })
    };
    for (side, address) in [(dst_side, number(dst)), (src_side, number(src))] {
        if !(side == Side::Device && in_module(address, len as u64)) {
            check_side(allocations, side, address, len as u64)?;
        }
    }
    let backend = runtime.device.backend();
    match (dst_side, src_side) {
        (Side::Device, Side::Host) => {
            // SAFETY: `src` is host memory readable for `len` bytes, as the caller guarantees.
            let src = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), len) };
            backend.write(number(dst), src).map_err(memory_error)
        }
        (Side::Host, Side::Device) => {
            // SAFETY: `dst` is host memory writable for `len` bytes, as the caller guarantees.
            let dst = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), len) };
            backend.read(number(src), dst).map_err(memory_error)
        }
        (Side::Device, Side::Device) => {
            let mut staging = vec![0u8; len];
            backend
                .read(number(src), &mut staging)
                .map_err(memory_error)?;
            backend.write(number(dst), &staging).map_err(memory_error)
        }
        (Side::Host, Side::Host) => {
            // SAFETY: both are host memory valid for `len` bytes, as the caller guarantees;
            // `copy` allows them to overlap.
            unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), len) };
            Ok(())
        }
    }
}

/// Sets `count` units of `pattern` (1 or 4 bytes, little-endian) at device address `dst`.
fn fill(runtime: &Runtime, tables: &Tables, dst: u64, pattern: &[u8], count: usize) -> HipResult {
    let len = count
        .checked_mul(pattern.len())
        .ok_or(HipError::INVALID_VALUE)?;
    if len == 0 {
        return Ok(());
    }
    if !tables.allocations.contains(dst, len as u64) {
        return Err(HipError::INVALID_VALUE);
    }
    let backend = runtime.device.backend();
    if pattern.iter().all(|&byte| byte == pattern[0]) {
        backend
            .fill(dst, pattern[0], len as u64)
            .map_err(memory_error)
    } else {
        backend
            .write(dst, &pattern.repeat(count))
            .map_err(memory_error)
    }
}

/// `hipMalloc`: `size` bytes of device memory, 256-byte aligned; a null pointer for 0 bytes;
/// `hipErrorOutOfMemory` beyond the emulator's memory.
///
/// # Safety
/// `out` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMalloc(out: *mut *mut c_void, size: usize) -> HipError {
    guard("hipMalloc", || {
        let runtime = runtime()?;
        if out.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let address = if size == 0 {
            0
        } else {
            let mut tables = runtime.tables();
            let address = runtime
                .device
                .backend()
                .alloc(size as u64)
                .map_err(|_| HipError::OUT_OF_MEMORY)?;
            tables.allocations.add(address, size as u64);
            address
        };
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(out, pointer(address)) }
    })
}

/// `hipFree`: frees an allocation by its start address; null is a no-op; anything else is
/// `hipErrorInvalidValue`.
///
/// # Safety
/// None: the pointer is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipFree(device_pointer: *mut c_void) -> HipError {
    guard("hipFree", || {
        let runtime = runtime()?;
        if device_pointer.is_null() {
            return Ok(());
        }
        let mut tables = runtime.tables();
        let address = number(device_pointer);
        tables
            .allocations
            .remove(address)
            .ok_or(HipError::INVALID_VALUE)?;
        runtime.device.backend().free(address).map_err(memory_error)
    })
}

/// `hipMemcpy`: copies `size` bytes host to device, device to host, device to device or host
/// to host, as `kind` says (`hipMemcpyDefault`: inferred per pointer). A device side outside
/// the live allocations, or a host side in the device address window, is
/// `hipErrorInvalidValue`; an unknown kind `hipErrorInvalidMemcpyDirection`.
///
/// # Safety
/// Host sides are valid for `size` bytes of reading (`src`) or writing (`dst`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
) -> HipError {
    guard("hipMemcpy", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        // SAFETY: as the caller guarantees.
        unsafe { copy(runtime, &tables, dst, src, size, kind) }
    })
}

/// `hipMemcpyAsync`: `hipMemcpy` on a stream (null or live), done before it returns.
///
/// # Safety
/// As for `hipMemcpy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> HipError {
    guard("hipMemcpyAsync", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        tables.queues.check_stream(number(stream))?;
        // SAFETY: as the caller guarantees.
        unsafe { copy(runtime, &tables, dst, src, size, kind) }
    })
}

/// `hipMemset`: sets `size` bytes of device memory to the low byte of `value`.
///
/// # Safety
/// None: the range is checked against the live allocations.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> HipError {
    guard("hipMemset", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        fill(runtime, &tables, number(dst), &[value as u8], size)
    })
}

/// `hipMemsetAsync`: `hipMemset` on a stream (null or live), done before it returns.
///
/// # Safety
/// None: the range and the stream are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: hipStream_t,
) -> HipError {
    guard("hipMemsetAsync", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        tables.queues.check_stream(number(stream))?;
        fill(runtime, &tables, number(dst), &[value as u8], size)
    })
}

/// `hipMemsetD8`: sets `count` bytes to `value`.
///
/// # Safety
/// None: the range is checked against the live allocations.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD8(
    dst: hipDeviceptr_t,
    value: c_uchar,
    count: usize,
) -> HipError {
    guard("hipMemsetD8", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        fill(runtime, &tables, number(dst), &[value], count)
    })
}

/// `hipMemsetD32`: sets `count` 32-bit words to `value`.
///
/// # Safety
/// None: the range is checked against the live allocations.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD32(dst: hipDeviceptr_t, value: c_int, count: usize) -> HipError {
    guard("hipMemsetD32", || {
        let runtime = runtime()?;
        let tables = runtime.tables();
        fill(runtime, &tables, number(dst), &value.to_le_bytes(), count)
    })
}

/// `hipMemGetInfo`: the emulator's memory size as the total, minus the live allocations as the
/// free bytes.
///
/// # Safety
/// `free` and `total` are null or valid for one write each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> HipError {
    guard("hipMemGetInfo", || {
        let runtime = runtime()?;
        if free.is_null() || total.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let used = runtime.tables().allocations.bytes;
        let size = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
        // SAFETY: both non-null, and valid for one write as the caller guarantees.
        unsafe {
            write_out(free, size(EMULATOR_MEMORY_BYTES.saturating_sub(used)))?;
            write_out(total, size(EMULATOR_MEMORY_BYTES))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{download_and_free, ok, upload};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const POISON: u8 = 0xa5;

    fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
        (0..len).map(|_| rng.random()).collect()
    }

    fn memcpy(dst: *mut c_void, src: *const c_void, len: usize, kind: hipMemcpyKind) -> HipError {
        // SAFETY: the tests pass host buffers of at least `len` bytes as host sides; device
        // sides are checked by the function under test.
        unsafe { hipMemcpy(dst, src, len, kind) }
    }

    #[test]
    fn allocations_are_aligned_distinct_and_freed_once() {
        let mut pointers = Vec::new();
        for size in [1usize, 3, 256, 4097, 1 << 20] {
            let mut device = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            ok(unsafe { hipMalloc(&mut device, size) });
            assert!(!device.is_null());
            assert_eq!(number(device) % 256, 0, "{size}");
            pointers.push((device, size));
        }
        for (index, &(a, size)) in pointers.iter().enumerate() {
            for &(b, _) in &pointers[index + 1..] {
                assert!(number(b) >= number(a) + size as u64 || number(b) < number(a));
            }
        }
        for &(device, _) in &pointers {
            // SAFETY: a live allocation.
            ok(unsafe { hipFree(device) });
            // SAFETY: only looked up.
            assert_eq!(unsafe { hipFree(device) }, HipError::INVALID_VALUE);
        }
        let mut device = pointer(1);
        // SAFETY: valid out-pointer.
        ok(unsafe { hipMalloc(&mut device, 0) });
        assert!(device.is_null(), "0 bytes give a null pointer");
        // SAFETY: null is a no-op.
        ok(unsafe { hipFree(std::ptr::null_mut()) });
        // SAFETY: a null out-pointer is refused.
        let status = unsafe { hipMalloc(std::ptr::null_mut(), 16) };
        assert_eq!(status, HipError::INVALID_VALUE);
        let mut device = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let status = unsafe { hipMalloc(&mut device, 1 << 40) };
        assert_eq!(status, HipError::OUT_OF_MEMORY);
    }

    #[test]
    fn an_interior_or_unknown_pointer_is_not_freed() {
        let device = upload(&[0u8; 512]);
        let interior = pointer::<c_void>(number(device) + 256);
        // SAFETY: only looked up.
        assert_eq!(unsafe { hipFree(interior) }, HipError::INVALID_VALUE);
        // SAFETY: only looked up.
        assert_eq!(
            unsafe { hipFree(pointer(0x1234_5678)) },
            HipError::INVALID_VALUE
        );
        assert_eq!(download_and_free::<u8>(device, 512), vec![0u8; 512]);
    }

    #[test]
    fn copies_round_trip_in_every_direction() {
        let mut rng = StdRng::seed_from_u64(0x006d_656d);
        for len in [1usize, 7, 256, 1000, 65_537] {
            let data = random_bytes(&mut rng, len);
            let a = upload(&vec![POISON; len + 64]);
            let b = upload(&vec![POISON; len + 64]);
            let host = data.as_ptr().cast();
            ok(memcpy(a, host, len, hipMemcpyKind::hipMemcpyHostToDevice));
            ok(memcpy(b, a, len, hipMemcpyKind::hipMemcpyDeviceToDevice));
            let mut back = vec![POISON; len];
            let out = back.as_mut_ptr().cast();
            ok(memcpy(out, b, len, hipMemcpyKind::hipMemcpyDeviceToHost));
            assert_eq!(back, data, "{len}");
            // Default infers each side: host to device, device to device, device to host.
            let other = random_bytes(&mut rng, len);
            let default = hipMemcpyKind::hipMemcpyDefault;
            ok(memcpy(a, other.as_ptr().cast(), len, default));
            ok(memcpy(b, a, len, default));
            ok(memcpy(back.as_mut_ptr().cast(), b, len, default));
            assert_eq!(back, other, "{len}");
            // Host to host, both ways of saying it.
            let mut copy = vec![0u8; len];
            ok(memcpy(copy.as_mut_ptr().cast(), host, len, default));
            assert_eq!(copy, data);
            copy.fill(0);
            ok(memcpy(
                copy.as_mut_ptr().cast(),
                host,
                len,
                hipMemcpyKind::hipMemcpyHostToHost,
            ));
            assert_eq!(copy, data);
            for device in [a, b] {
                let got = download_and_free::<u8>(device, len + 64);
                assert!(
                    got[len..].iter().all(|&byte| byte == POISON),
                    "overrun at {len}"
                );
            }
        }
    }

    #[test]
    fn copies_at_offsets_inside_an_allocation() {
        let mut rng = StdRng::seed_from_u64(7);
        let data = random_bytes(&mut rng, 300);
        let device = upload(&data);
        let at = |offset: u64| pointer::<c_void>(number(device) + offset);
        // Move bytes 0..100 to 200..300 inside the allocation.
        ok(memcpy(
            at(200),
            at(0),
            100,
            hipMemcpyKind::hipMemcpyDeviceToDevice,
        ));
        let mut expected = data.clone();
        expected.copy_within(0..100, 200);
        let mut middle = [0u8; 50];
        let out = middle.as_mut_ptr().cast();
        ok(memcpy(
            out,
            at(120),
            50,
            hipMemcpyKind::hipMemcpyDeviceToHost,
        ));
        assert_eq!(middle[..], data[120..170]);
        assert_eq!(download_and_free::<u8>(device, 300), expected);
    }

    #[test]
    fn bad_device_ranges_are_refused_and_host_memory_is_untouched() {
        let device = upload(&[1u8; 100]);
        let mut host = vec![POISON; 200];
        let out = host.as_mut_ptr().cast();
        let inside = |offset: u64| pointer::<c_void>(number(device) + offset);
        let d2h = hipMemcpyKind::hipMemcpyDeviceToHost;
        // Past the end, straddling it, before the start, unknown, freed.
        for (src, len) in [(inside(100), 1), (inside(50), 51), (inside(0), 101)] {
            assert_eq!(memcpy(out, src, len, d2h), HipError::INVALID_VALUE);
        }
        let before = pointer::<c_void>(number(device) - 1);
        assert_eq!(memcpy(out, before, 2, d2h), HipError::INVALID_VALUE);
        assert_eq!(memcpy(out, pointer(0x10), 4, d2h), HipError::INVALID_VALUE);
        assert!(host.iter().all(|&byte| byte == POISON));
        // A device address given as host memory is never dereferenced.
        let h2d = hipMemcpyKind::hipMemcpyHostToDevice;
        let other = upload(&[2u8; 100]);
        assert_eq!(memcpy(other, device, 10, h2d), HipError::INVALID_VALUE);
        assert_eq!(memcpy(device, other, 10, d2h), HipError::INVALID_VALUE);
        let h2h = hipMemcpyKind::hipMemcpyHostToHost;
        assert_eq!(memcpy(out, device, 10, h2h), HipError::INVALID_VALUE);
        assert_eq!(download_and_free::<u8>(other, 100), vec![2u8; 100]);
        assert_eq!(download_and_free::<u8>(device, 100), vec![1u8; 100]);
        // Freed now: neither device nor host memory.
        assert_eq!(memcpy(out, device, 10, d2h), HipError::INVALID_VALUE);
        assert_eq!(
            memcpy(out, device, 10, hipMemcpyKind::hipMemcpyDefault),
            HipError::INVALID_VALUE
        );
        assert!(host.iter().all(|&byte| byte == POISON));
        // Null pointers, an unknown direction; nothing to do for 0 bytes.
        let null = std::ptr::null_mut();
        assert_eq!(memcpy(out, null, 4, d2h), HipError::INVALID_VALUE);
        assert_eq!(memcpy(null, out, 4, h2d), HipError::INVALID_VALUE);
        assert_eq!(
            memcpy(out, out, 4, hipMemcpyKind(7)),
            HipError::INVALID_MEMCPY_DIRECTION
        );
        ok(memcpy(null, null, 0, d2h));
    }

    #[test]
    fn fills_set_bytes_and_words_within_the_allocation() {
        let device = upload(&[0u8; 64]);
        let at = |offset: u64| pointer::<c_void>(number(device) + offset);
        // SAFETY: the ranges are checked by the functions under test.
        unsafe {
            ok(hipMemset(at(0), 0x1ab, 8));
            ok(hipMemsetD8(at(8), 0x7f, 8));
            ok(hipMemsetD32(at(16), 0x0403_0201, 4));
            ok(hipMemsetD32(at(32), -1, 2));
            ok(hipMemsetAsync(at(40), 3, 8, std::ptr::null_mut()));
            assert_eq!(hipMemset(at(60), 0, 5), HipError::INVALID_VALUE);
            assert_eq!(hipMemsetD32(at(56), 0, 3), HipError::INVALID_VALUE);
            assert_eq!(hipMemsetD32(at(0), 0, usize::MAX), HipError::INVALID_VALUE);
            assert_eq!(hipMemset(pointer(0x20), 0, 1), HipError::INVALID_VALUE);
            let bad_stream = pointer(0xdead_0000);
            assert_eq!(
                hipMemsetAsync(at(0), 0, 4, bad_stream),
                HipError::INVALID_HANDLE
            );
            ok(hipMemset(std::ptr::null_mut(), 0, 0));
        }
        let got = download_and_free::<u8>(device, 64);
        let mut expected = vec![0u8; 64];
        expected[..8].fill(0xab);
        expected[8..16].fill(0x7f);
        for word in expected[16..32].chunks_mut(4) {
            word.copy_from_slice(&[1, 2, 3, 4]);
        }
        expected[32..40].fill(0xff);
        expected[40..48].fill(3);
        assert_eq!(got, expected);
    }

    #[test]
    fn async_copies_check_the_stream() {
        let device = upload(&[9u8; 16]);
        let mut host = [0u8; 16];
        let out = host.as_mut_ptr().cast();
        let d2h = hipMemcpyKind::hipMemcpyDeviceToHost;
        // SAFETY: `host` is writable for 16 bytes.
        unsafe {
            ok(hipMemcpyAsync(out, device, 16, d2h, std::ptr::null_mut()));
            let status = hipMemcpyAsync(out, device, 16, d2h, pointer(0x7777_0000));
            assert_eq!(status, HipError::INVALID_HANDLE);
        }
        assert_eq!(host, [9u8; 16]);
        download_and_free::<u8>(device, 16);
    }

    #[test]
    fn memory_info_counts_live_allocations() {
        const GIB: usize = 1 << 30;
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers.
        ok(unsafe { hipMemGetInfo(&mut free, &mut total) });
        assert_eq!(total as u64, EMULATOR_MEMORY_BYTES);
        let mut device = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { hipMalloc(&mut device, 2 * GIB) });
        let mut after = 0;
        // SAFETY: valid out-pointers.
        ok(unsafe { hipMemGetInfo(&mut after, &mut total) });
        // Other tests allocate concurrently, but far less than this margin.
        let used = free.abs_diff(after);
        assert!(used.abs_diff(2 * GIB) < 64 << 20, "{used}");
        // SAFETY: a live allocation.
        ok(unsafe { hipFree(device) });
        // SAFETY: null out-pointers are refused.
        let status = unsafe { hipMemGetInfo(std::ptr::null_mut(), &mut total) };
        assert_eq!(status, HipError::INVALID_VALUE);
    }
}
