//! Device memory as a dispatch sees it: one view the threads running its waves share.
//!
//! While a dispatch runs, no allocation comes or goes, so the view fixes the allocation list and
//! lets every thread read and write the bytes at once. Each byte is an atomic (release stores,
//! acquire loads): waves that race on a location see some order of each other's stores, as on
//! hardware, without a data race on the host, and a wave that sees another's flag sees what that
//! wave wrote before it, whatever the host's memory model. A read-modify-write (a global atomic) holds one of a set of locks chosen by its
//! address, so concurrent atomics on one location never lose an update. Every store records its
//! bytes as written; under initcheck a read of bytes never written is an error.

use super::{Access, MemoryError, written};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Locks that serialise read-modify-writes, chosen by the 8-byte-aligned address.
const ATOMIC_LOCKS: usize = 64;

/// One allocation's bytes.
struct Region<'m> {
    base: u64,
    bytes: &'m [AtomicU8],
    written: &'m [AtomicU64],
    access: Access,
}

/// The device memory of a running dispatch, shared by the threads that run its waves.
pub(crate) struct SharedMemory<'m> {
    /// By base address.
    regions: Vec<Region<'m>>,
    locks: [Mutex<()>; ATOMIC_LOCKS],
    initcheck: bool,
}

impl<'m> SharedMemory<'m> {
    /// The view of `allocations`: (base, bytes, which bytes were written, access), ordered by
    /// base; `initcheck` makes reads of unwritten bytes errors.
    pub(super) fn new(
        allocations: impl Iterator<Item = (u64, &'m mut [u8], &'m [AtomicU64], Access)>,
        initcheck: bool,
    ) -> Self {
        let regions = allocations
            .map(|(base, bytes, written, access)| Region {
                base,
                // SAFETY: AtomicU8 has the size and alignment of u8, and the exclusive borrow
                // of the bytes for 'm means nothing else reads or writes them meanwhile.
                bytes: unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) },
                written,
                access,
            })
            .collect();
        SharedMemory {
            regions,
            locks: std::array::from_fn(|_| Mutex::new(())),
            initcheck,
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

    /// The region and offset of `[address, address + len)`, which a kernel may reach with
    /// `write` or not.
    fn kernel_region(
        &self,
        address: u64,
        len: u64,
        write: bool,
    ) -> Result<(&Region<'m>, usize), MemoryError> {
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
            _ => Ok((r, off)),
        }
    }

    /// Under initcheck, that `len` bytes at `off` of `r` were all written.
    fn check_written(&self, r: &Region<'m>, off: usize, len: usize) -> Result<(), MemoryError> {
        match written::first_unwritten(r.written, off, len) {
            Some(at) if self.initcheck => Err(MemoryError::Unwritten {
                address: r.base + at as u64,
            }),
            _ => Ok(()),
        }
    }

    /// Reads `out.len()` bytes at `off` of `r`.
    fn read_region(&self, r: &Region<'m>, off: usize, out: &mut [u8]) -> Result<(), MemoryError> {
        self.check_written(r, off, out.len())?;
        load(&r.bytes[off..off + out.len()], out);
        Ok(())
    }

    /// Writes `data` at `off` of `r`.
    fn write_region(r: &Region<'m>, off: usize, data: &[u8]) {
        store(&r.bytes[off..off + data.len()], data);
        written::mark(r.written, off, data.len());
    }

    /// A kernel's global read into `out`: inside one allocation it may read.
    pub fn kernel_read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (r, off) = self.kernel_region(address, out.len() as u64, false)?;
        self.read_region(r, off, out)
    }

    /// A kernel's global write of `data`: inside one allocation it may write.
    pub fn kernel_write(&self, address: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (r, off) = self.kernel_region(address, data.len() as u64, true)?;
        Self::write_region(r, off, data);
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
        let (r, off) = self.kernel_region(address, u64::from(bytes), true)?;
        let mut old = [0u8; 8];
        let _held = self.locks[(address >> 3) as usize % ATOMIC_LOCKS]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.read_region(r, off, &mut old[..bytes as usize])?;
        let old = u64::from_le_bytes(old);
        Self::write_region(r, off, &update(old).to_le_bytes()[..bytes as usize]);
        Ok(old)
    }

    /// Reads any allocation (the emulator's own accesses, such as scratch through its aperture).
    pub fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (r, off) = self.find(address, out.len() as u64)?;
        self.read_region(r, off, out)
    }

    /// Writes any allocation (the emulator's own accesses).
    pub fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (r, off) = self.find(address, data.len() as u64)?;
        Self::write_region(r, off, data);
        Ok(())
    }

    /// Records `[address, address + len)`, a range of one of the emulator's own allocations, as
    /// never written: the scratch of a workgroup about to start, which on hardware holds what an
    /// earlier wave left.
    pub fn forget(&self, address: u64, len: u64) {
        if let Ok((r, off)) = self.find(address, len) {
            written::forget(r.written, off, len as usize);
        }
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
            let view = m.shared(true, None);
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
    fn under_initcheck_reads_of_bytes_never_written_fail() {
        let mut m = DeviceMemory::new();
        let buffer = m.alloc(16, 256).unwrap();
        m.write(buffer, &[1, 2]).unwrap();
        let view = m.shared(true, None);
        let mut out = [0u8; 4];
        assert_eq!(
            view.kernel_read(buffer, &mut out),
            Err(MemoryError::Unwritten {
                address: buffer + 2
            })
        );
        assert!(matches!(
            view.kernel_update(buffer + 4, 4, |v| v),
            Err(MemoryError::Unwritten { .. })
        ));
        view.kernel_write(buffer + 2, &[3, 4]).unwrap();
        view.kernel_read(buffer, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        view.forget(buffer + 1, 1);
        assert_eq!(
            view.read(buffer, &mut out),
            Err(MemoryError::Unwritten {
                address: buffer + 1
            })
        );
        // Without the check the bytes read as they are.
        let view = m.shared(false, None);
        view.kernel_read(buffer + 8, &mut out).unwrap();
        assert_eq!(out, [0; 4]);
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let mut m = DeviceMemory::new();
        let counter = m.alloc(8, 256).unwrap();
        m.write(counter, &[0; 8]).unwrap();
        {
            let view = m.shared(true, None);
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
