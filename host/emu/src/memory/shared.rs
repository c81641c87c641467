//! Device memory as a dispatch sees it: one view the threads running its waves share.
//!
//! While a dispatch runs, no allocation comes or goes, so the view fixes the allocation list and
//! lets every thread read and write the bytes at once. Each byte is an atomic (release stores,
//! acquire loads): waves that race on a location see some order of each other's stores, as on
//! hardware, without a data race on the host, and a wave that sees another's flag sees what that
//! wave wrote before it, whatever the host's memory model. A read-modify-write (a global atomic) holds one of a set of locks chosen by its
//! address, so concurrent atomics on one location never lose an update.

use super::{Access, MemoryError};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

/// Locks that serialise read-modify-writes, chosen by the 8-byte-aligned address.
const ATOMIC_LOCKS: usize = 64;

/// One allocation's bytes.
struct Region<'m> {
    base: u64,
    bytes: &'m [AtomicU8],
    access: Access,
}

/// The device memory of a running dispatch, shared by the threads that run its waves.
pub(crate) struct SharedMemory<'m> {
    /// By base address.
    regions: Vec<Region<'m>>,
    locks: [Mutex<()>; ATOMIC_LOCKS],
}

impl<'m> SharedMemory<'m> {
    /// The view of `allocations`: (base, bytes, access), ordered by base.
    pub(super) fn new(allocations: impl Iterator<Item = (u64, &'m mut [u8], Access)>) -> Self {
        let regions = allocations
            .map(|(base, bytes, access)| Region {
                base,
                // SAFETY: AtomicU8 has the size and alignment of u8, and the exclusive borrow
                // of the bytes for 'm means nothing else reads or writes them meanwhile.
                bytes: unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) },
                access,
            })
            .collect();
        SharedMemory {
            regions,
            locks: std::array::from_fn(|_| Mutex::new(())),
        }
    }

    /// The region holding all of `[address, address + len)`, and the offset of `address` in it.
    fn find(&self, address: u64, len: u64) -> Result<(&Region<'m>, usize), MemoryError> {
        let out = MemoryError::OutOfBounds { address, len };
        let i = match self.regions.binary_search_by_key(&address, |r| r.base) {
            Ok(i) => i,
            Err(0) => return Err(out),
            Err(i) => i - 1,
        };
        let r = &self.regions[i];
        let end = address.checked_add(len).ok_or(out)?;
        if end > r.base + r.bytes.len() as u64 {
            return Err(out);
        }
        Ok((r, (address - r.base) as usize))
    }

    /// The bytes of `[address, address + len)` a kernel may reach with `write` or not.
    fn kernel_bytes(
        &self,
        address: u64,
        len: u64,
        write: bool,
    ) -> Result<&[AtomicU8], MemoryError> {
        let (r, off) = self.find(address, len)?;
        match (r.access, write) {
            (Access::Hidden(what), _) | (Access::ReadOnly(what), true) => {
                Err(MemoryError::Protected {
                    address,
                    len,
                    write,
                    what,
                })
            }
            _ => Ok(&r.bytes[off..off + len as usize]),
        }
    }

    /// A kernel's global read into `out`: inside one allocation it may read.
    pub fn kernel_read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        load(self.kernel_bytes(address, out.len() as u64, false)?, out);
        Ok(())
    }

    /// A kernel's global write of `data`: inside one allocation it may write.
    pub fn kernel_write(&self, address: u64, data: &[u8]) -> Result<(), MemoryError> {
        store(self.kernel_bytes(address, data.len() as u64, true)?, data);
        Ok(())
    }

    /// A kernel's global read-modify-write of the `bytes` (at most 8) at `address`, atomic
    /// against every other through this view: `update` maps the old little-endian value to the
    /// new one. Returns the old value.
    pub fn kernel_update(
        &self,
        address: u64,
        bytes: u32,
        update: impl FnOnce(u64) -> u64,
    ) -> Result<u64, MemoryError> {
        let cells = self.kernel_bytes(address, u64::from(bytes), true)?;
        let mut old = [0u8; 8];
        let _held = self.locks[(address >> 3) as usize % ATOMIC_LOCKS]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        load(cells, &mut old[..bytes as usize]);
        let old = u64::from_le_bytes(old);
        store(cells, &update(old).to_le_bytes()[..bytes as usize]);
        Ok(old)
    }

    /// Reads any allocation (the emulator's own accesses, such as scratch through its aperture).
    pub fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (r, off) = self.find(address, out.len() as u64)?;
        load(&r.bytes[off..off + out.len()], out);
        Ok(())
    }

    /// Writes any allocation (the emulator's own accesses).
    pub fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (r, off) = self.find(address, data.len() as u64)?;
        store(&r.bytes[off..off + data.len()], data);
        Ok(())
    }
}

fn load(cells: &[AtomicU8], out: &mut [u8]) {
    for (o, c) in out.iter_mut().zip(cells) {
        *o = c.load(Ordering::Acquire);
    }
}

fn store(cells: &[AtomicU8], data: &[u8]) {
    for (c, &d) in cells.iter().zip(data) {
        c.store(d, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use crate::memory::{Access, DeviceMemory, MemoryError};

    #[test]
    fn the_emulators_own_accesses_reach_every_allocation_and_updates_return_the_old_value() {
        let mut m = DeviceMemory::new();
        let buffer = m.alloc(16, 256).unwrap();
        let scratch = m.alloc_internal(8, 64, Access::Hidden("scratch")).unwrap();
        {
            let view = m.shared();
            view.kernel_write(buffer + 12, &[1, 2, 3, 4]).unwrap();
            assert!(matches!(
                view.kernel_write(buffer + 13, &[0; 4]),
                Err(MemoryError::OutOfBounds { .. })
            ));
            let mut b = [0u8; 1];
            view.write(scratch, &[7]).unwrap();
            view.read(scratch, &mut b).unwrap();
            assert_eq!(b, [7]);
            assert!(view.read(buffer - 1, &mut b).is_err());
            let old = view.kernel_update(buffer + 12, 4, |v| v + 1).unwrap();
            assert_eq!(old, 0x0403_0201);
        }
        assert_eq!(m.read_vec(buffer + 12, 4).unwrap(), vec![2, 2, 3, 4]);
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let mut m = DeviceMemory::new();
        let counter = m.alloc(8, 256).unwrap();
        {
            let view = m.shared();
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..10_000 {
                            view.kernel_update(counter, 8, |v| v + 1).unwrap();
                        }
                    });
                }
            });
        }
        assert_eq!(m.read_le::<8>(counter).unwrap(), 40_000u64.to_le_bytes());
    }
}
