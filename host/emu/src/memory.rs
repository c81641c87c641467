//! Device memory: a set of allocations addressed by 64-bit device addresses.
//!
//! Every access must lie inside one live allocation; anything else is a fault. Allocations are placed
//! with unmapped guard gaps between them and addresses are never reused, so small overruns and
//! use-after-free are caught.

use std::cell::Cell;
use thiserror::Error;

/// Lowest address handed out (everything below is unmapped, including the null page).
pub const FIRST_ADDRESS: u64 = 0x0000_0001_0000_0000;
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
}

struct Allocation {
    base: u64,
    bytes: Vec<u8>,
}

/// The device's memory.
pub struct DeviceMemory {
    allocations: Vec<Allocation>,
    next: u64,
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
            last_hit: Cell::new(0),
        }
    }

    /// Allocates `size` zeroed bytes aligned to `align` (a power of two, at least 256 is used).
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        let align = align.max(256).next_power_of_two();
        let base = self.next.div_ceil(align) * align;
        let end = base
            .checked_add(size.max(1))
            .ok_or(MemoryError::Exhausted { size })?;
        let len = usize::try_from(size).map_err(|_| MemoryError::Exhausted { size })?;
        if end + GUARD_BYTES > ADDRESS_LIMIT || size > MAX_ALLOCATION {
            return Err(MemoryError::Exhausted { size });
        }
        self.allocations.push(Allocation {
            base,
            bytes: vec![0; len],
        });
        self.next = end + GUARD_BYTES;
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
                    .is_some_and(|end| end <= a.base + a.bytes.len() as u64)
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
        Ok(&a.bytes[off..off + len as usize])
    }

    /// The bytes `[address, address + len)` for writing, which must lie in one allocation.
    pub fn slice_mut(&mut self, address: u64, len: u64) -> Result<&mut [u8], MemoryError> {
        let i = self.find(address, len)?;
        let a = &mut self.allocations[i];
        let off = (address - a.base) as usize;
        Ok(&mut a.bytes[off..off + len as usize])
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
    fn fresh_allocations_are_zeroed_and_not_reused() {
        let mut m = DeviceMemory::new();
        let a = m.alloc(16, 256).unwrap();
        m.free(a).unwrap();
        let b = m.alloc(16, 256).unwrap();
        assert_ne!(a, b);
        assert_eq!(m.read_vec(b, 16).unwrap(), vec![0; 16]);
    }
}
