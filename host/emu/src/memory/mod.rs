//! Device memory: a set of allocations addressed by 64-bit device addresses.
//!
//! Every access must lie inside one live allocation; anything else is a fault. Allocations are placed
//! with unmapped guard gaps between them and addresses are never reused, so small overruns and
//! use-after-free are caught. The emulator's own allocations for a dispatch (kernarg segment,
//! dispatch packet, queue, scratch backing store) live in a range of their own, far from the
//! buffers, and a kernel's global accesses may read the first three but write none of them, and
//! reach scratch only through its private aperture.

mod shared;
mod written;

pub(crate) use shared::SharedMemory;
use std::cell::Cell;
use thiserror::Error;

/// Lowest address handed out (everything below is unmapped, including the null page).
pub const FIRST_ADDRESS: u64 = 0x0000_0001_0000_0000;
/// First address of the emulator's own allocations (buffers stay below it).
pub const INTERNAL_FIRST: u64 = 0x0000_7000_0000_0000;
/// Addresses at or above this are never allocated (the LDS and scratch apertures live above).
pub const ADDRESS_LIMIT: u64 = 0x0000_8000_0000_0000;
/// Unmapped bytes left between consecutive allocations.
pub const GUARD_BYTES: u64 = 64 * 1024;
/// Largest single allocation (the memory lives in host RAM).
pub const MAX_ALLOCATION: u64 = 16 << 30;

/// A failed memory operation.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum MemoryError {
    /// The range is not inside one live allocation.
    #[error("{len} bytes at {address:#x} are outside every allocation")]
    OutOfBounds {
        /// First byte of the access.
        address: u64,
        /// Length of the access.
        len: u64,
    },
    /// `free` of an address that does not start a live allocation.
    #[error("{address:#x} is not the start of a live allocation")]
    NotAllocated {
        /// The address passed to `free`.
        address: u64,
    },
    /// The device address space is exhausted or the size is unreasonable.
    #[error("cannot allocate {size} bytes")]
    Exhausted {
        /// The requested size.
        size: u64,
    },
    /// A read of a byte that neither the host nor a kernel ever wrote (initcheck).
    #[error("the byte at {address:#x} was never written")]
    Unwritten {
        /// The first such byte of the access.
        address: u64,
    },
    /// A kernel's global access hit an allocation it may not access that way.
    #[error("{len} bytes at {address:#x} are {what}, which a kernel may not {verb}", verb = if *.write { "write" } else { "read" })]
    Protected {
        /// First byte of the access.
        address: u64,
        /// Length of the access.
        len: u64,
        /// Whether it was a write.
        write: bool,
        /// What the allocation holds.
        what: &'static str,
    },
}

/// How a kernel's global (and scalar) accesses may reach an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A buffer: read and write.
    ReadWrite,
    /// Read only (the kernarg segment, the dispatch packet): a write is a fault.
    ReadOnly(&'static str),
    /// Not at all (scratch's backing store, reached only through the private aperture).
    Hidden(&'static str),
}

struct Allocation {
    base: u64,
    /// The bytes, held in 8-byte words so that a dispatch's threads can access aligned words
    /// whole (see `shared`).
    words: Vec<u64>,
    /// Its length in bytes.
    len: usize,
    /// Which bytes were ever written (initcheck's shadow).
    written: Vec<std::sync::atomic::AtomicU64>,
    access: Access,
}

impl Allocation {
    /// The bytes.
    fn bytes(&self) -> &[u8] {
        // SAFETY: the words are initialised integers, which any byte pattern views validly; u8
        // needs no alignment; `len` is at most 8 bytes per word.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }

    /// The bytes, for writing.
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, with the words borrowed exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

/// The device's memory.
pub struct DeviceMemory {
    allocations: Vec<Allocation>,
    next: u64,
    next_internal: u64,
    last_hit: Cell<usize>,
}

impl Default for DeviceMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceMemory {
    /// An empty memory.
    pub fn new() -> Self {
        DeviceMemory {
            allocations: Vec::new(),
            next: FIRST_ADDRESS,
            next_internal: INTERNAL_FIRST,
            last_hit: Cell::new(0),
        }
    }

    /// Allocates `size` zeroed bytes aligned to `align` (a power of two, at least 256 is used):
    /// a buffer, which kernels read and write.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        let (base, next) = Self::place(self.next, INTERNAL_FIRST, size, align)?;
        self.next = next;
        self.insert(base, size, Access::ReadWrite)
    }

    /// Allocates one of the emulator's own regions in their separate range, with how kernels'
    /// global accesses may reach it.
    pub fn alloc_internal(
        &mut self,
        size: u64,
        align: u64,
        access: Access,
    ) -> Result<u64, MemoryError> {
        let (base, next) = Self::place(self.next_internal, ADDRESS_LIMIT, size, align)?;
        self.next_internal = next;
        self.insert(base, size, access)
    }

    /// Where an allocation of `size` bytes goes at or after `next` (below `limit`), and the next
    /// free address after it and its guard gap.
    fn place(next: u64, limit: u64, size: u64, align: u64) -> Result<(u64, u64), MemoryError> {
        let align = align.max(256).next_power_of_two();
        let base = next.div_ceil(align) * align;
        let end = base
            .checked_add(size.max(1))
            .ok_or(MemoryError::Exhausted { size })?;
        if end + GUARD_BYTES > limit || size > MAX_ALLOCATION {
            return Err(MemoryError::Exhausted { size });
        }
        Ok((base, end + GUARD_BYTES))
    }

    fn insert(&mut self, base: u64, size: u64, access: Access) -> Result<u64, MemoryError> {
        let len = usize::try_from(size).map_err(|_| MemoryError::Exhausted { size })?;
        let at = self.allocations.partition_point(|a| a.base < base);
        self.allocations.insert(
            at,
            Allocation {
                base,
                words: vec![0; len.div_ceil(8)],
                len,
                written: written::none(len),
                access,
            },
        );
        self.last_hit.set(0);
        Ok(base)
    }

    /// Frees the allocation starting at `address`.
    pub fn free(&mut self, address: u64) -> Result<(), MemoryError> {
        let i = self
            .allocations
            .binary_search_by_key(&address, |a| a.base)
            .map_err(|_| MemoryError::NotAllocated { address })?;
        self.allocations.remove(i);
        self.last_hit.set(0);
        Ok(())
    }

    /// Number of live allocations.
    pub fn allocation_count(&self) -> usize {
        self.allocations.len()
    }

    /// Copies `data` to device address `address`.
    pub fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.slice_mut(address, data.len() as u64)?
            .copy_from_slice(data);
        Ok(())
    }

    /// Copies device bytes at `address` into `out`.
    pub fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        out.copy_from_slice(self.slice(address, out.len() as u64)?);
        Ok(())
    }

    /// Reads `len` device bytes at `address`.
    pub fn read_vec(&self, address: u64, len: u64) -> Result<Vec<u8>, MemoryError> {
        Ok(self.slice(address, len)?.to_vec())
    }

    fn find(&self, address: u64, len: u64) -> Result<usize, MemoryError> {
        let fits = |a: &Allocation| {
            address >= a.base
                && address
                    .checked_add(len)
                    .is_some_and(|end| end <= a.base + a.len as u64)
        };
        let hint = self.last_hit.get();
        if self.allocations.get(hint).is_some_and(fits) {
            return Ok(hint);
        }
        let i = match self.allocations.binary_search_by_key(&address, |a| a.base) {
            Ok(i) => i,
            Err(0) => return Err(MemoryError::OutOfBounds { address, len }),
            Err(i) => i - 1,
        };
        if self.allocations.get(i).is_some_and(fits) {
            self.last_hit.set(i);
            Ok(i)
        } else {
            Err(MemoryError::OutOfBounds { address, len })
        }
    }

    /// The bytes `[address, address + len)`, which must lie in one allocation.
    pub fn slice(&self, address: u64, len: u64) -> Result<&[u8], MemoryError> {
        let i = self.find(address, len)?;
        let a = &self.allocations[i];
        let off = (address - a.base) as usize;
        Ok(&a.bytes()[off..off + len as usize])
    }

    /// The bytes `[address, address + len)` for writing, which must lie in one allocation; they
    /// count as written.
    pub fn slice_mut(&mut self, address: u64, len: u64) -> Result<&mut [u8], MemoryError> {
        let i = self.find(address, len)?;
        let a = &mut self.allocations[i];
        let off = (address - a.base) as usize;
        written::mark(&a.written, off, len as usize);
        Ok(&mut a.bytes_mut()[off..off + len as usize])
    }

    /// The view a dispatch's waves share while it runs (no allocation comes or goes meanwhile);
    /// with `initcheck`, a read of bytes never written through it or by the host is an error.
    /// With `passed`, a buffer holding none of those addresses is out of the kernel's reach.
    pub(crate) fn shared(
        &mut self,
        initcheck: bool,
        passed: Option<&[u64]>,
        shadow_words: usize,
    ) -> SharedMemory<'_> {
        SharedMemory::new(
            self.allocations.iter_mut().map(|a| {
                let end = a.base + a.len as u64;
                let access = match (a.access, passed) {
                    (Access::ReadWrite, Some(p))
                        if !p.iter().any(|x| (a.base..end).contains(x)) =>
                    {
                        Access::Hidden("a buffer the launch did not pass to the kernel")
                    }
                    (access, _) => access,
                };
                (
                    a.base,
                    a.len,
                    a.words.as_mut_slice(),
                    &a.written[..],
                    access,
                )
            }),
            initcheck,
            shadow_words,
        )
    }

    /// Reads a little-endian value of `N` bytes.
    pub fn read_le<const N: usize>(&self, address: u64) -> Result<[u8; N], MemoryError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.slice(address, N as u64)?);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_must_stay_inside_one_allocation() {
        let mut m = DeviceMemory::new();
        let a = m.alloc(100, 256).unwrap();
        let b = m.alloc(8, 4096).unwrap();
        assert_eq!(a % 256, 0);
        assert_eq!(b % 4096, 0);
        assert!(b >= a + 100 + GUARD_BYTES);
        m.write(a + 96, &[1, 2, 3, 4]).unwrap();
        assert_eq!(m.read_vec(a + 96, 4).unwrap(), vec![1, 2, 3, 4]);
        assert!(matches!(
            m.write(a + 97, &[0; 4]),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert!(m.read_vec(a - 1, 1).is_err());
        assert!(m.read_vec(0, 1).is_err());
        assert!(m.read_vec(u64::MAX, 2).is_err());
        m.free(a).unwrap();
        assert!(m.read_vec(a, 1).is_err());
        assert!(m.free(a).is_err());
        assert_eq!(m.read_vec(b, 8).unwrap(), vec![0; 8]);
    }

    #[test]
    fn the_emulators_own_regions_are_apart_and_protected_from_kernels() {
        let mut m = DeviceMemory::new();
        let buffer = m.alloc(64, 256).unwrap();
        let kernarg = m
            .alloc_internal(64, 64, Access::ReadOnly("the kernarg segment"))
            .unwrap();
        let scratch = m
            .alloc_internal(256, 256, Access::Hidden("scratch"))
            .unwrap();
        let later = m.alloc(64, 256).unwrap();
        assert!(buffer < INTERNAL_FIRST && later < INTERNAL_FIRST);
        assert!(kernarg >= INTERNAL_FIRST && scratch >= kernarg + 64 + GUARD_BYTES);
        // The host (and the emulator itself) reaches everything.
        m.write(kernarg, &[1, 2, 3, 4]).unwrap();
        m.write(scratch, &[5]).unwrap();
        // A kernel reads the kernarg segment, writes no protected region, and reads no hidden one.
        let view = m.shared(true, None, 0);
        let mut four = [0u8; 4];
        view.kernel_read(kernarg, &mut four).unwrap();
        assert_eq!(four, [1, 2, 3, 4]);
        assert_eq!(
            view.kernel_write(kernarg, &[0]),
            Err(MemoryError::Protected {
                address: kernarg,
                len: 1,
                write: true,
                what: "the kernarg segment",
            })
        );
        assert!(matches!(
            view.kernel_read(scratch, &mut four),
            Err(MemoryError::Protected { write: false, .. })
        ));
        assert!(matches!(
            view.kernel_write(scratch + 8, &[0; 8]),
            Err(MemoryError::Protected { write: true, .. })
        ));
        assert!(matches!(
            view.kernel_update(kernarg, 4, |v| v),
            Err(MemoryError::Protected { write: true, .. })
        ));
        // Buffers placed before and after the internal ones are all found.
        view.kernel_write(buffer, &[9; 64]).unwrap();
        view.kernel_write(later, &[8; 64]).unwrap();
        let mut one = [0u8; 1];
        view.kernel_read(buffer + 63, &mut one).unwrap();
        assert_eq!(one, [9]);
        assert!(matches!(
            view.kernel_read(kernarg + 64, &mut one),
            Err(MemoryError::OutOfBounds { .. })
        ));
        m.free(kernarg).unwrap();
        let view = m.shared(true, None, 0);
        assert!(view.kernel_read(kernarg, &mut one).is_err());
        view.kernel_read(later, &mut one).unwrap();
        assert_eq!(one, [8]);
    }

    #[test]
    fn fresh_allocations_are_zeroed_and_not_reused() {
        let mut m = DeviceMemory::new();
        let a = m.alloc(16, 256).unwrap();
        m.free(a).unwrap();
        let b = m.alloc(16, 256).unwrap();
        assert_ne!(a, b);
        assert_eq!(m.read_vec(b, 16).unwrap(), vec![0; 16]);
    }
}
