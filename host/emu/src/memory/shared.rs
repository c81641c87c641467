//! Device memory as a dispatch sees it: one view the threads running its waves share.
//!
//! While a dispatch runs, no allocation comes or goes, so the view fixes the allocation list and
//! lets every thread read and write the bytes at once. The bytes are held in 8-byte words, each
//! an atomic (release stores, acquire loads; a store of part of a word replaces those bytes in
//! one compare-and-swap): waves that race on a location see some order of each other's stores,
//! as on hardware, without a data race on the host; an access of up to 8 bytes within an
//! aligned word is never torn, as the hardware's aligned accesses are not; and a wave that sees
//! another's flag sees what that wave wrote before it, whatever the host's memory model. A read-modify-write (a global atomic) holds one of a set of locks chosen by its
//! address, so concurrent atomics on one location never lose an update. Every store records its
//! bytes as written; under initcheck a read of bytes never written is an error.

use super::{Access, MemoryError, written};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Locks that serialise read-modify-writes, chosen by the 8-byte-aligned address.
const ATOMIC_LOCKS: usize = 64;

/// One allocation's bytes.
struct Region<'m> {
    base: u64,
    /// Its length in bytes.
    len: usize,
    /// The bytes, 8 to a word in the host's byte order.
    words: &'m [AtomicU64],
    written: &'m [AtomicU64],
    access: Access,
    /// The racecheck's words for each of its dwords, made when a kernel first reaches it (if
    /// the racecheck runs and a kernel may write it).
    shadow: OnceLock<Box<[AtomicU64]>>,
}

/// The device memory of a running dispatch, shared by the threads that run its waves.
pub(crate) struct SharedMemory<'m> {
    /// By base address.
    regions: Vec<Region<'m>>,
    locks: [Mutex<()>; ATOMIC_LOCKS],
    initcheck: bool,
    /// Words of racecheck shadow per dword (0: none kept).
    shadow_words: usize,
}

impl<'m> SharedMemory<'m> {
    /// The view of `allocations`: (base, length, the bytes in words, which bytes were written,
    /// access), ordered by base; `initcheck` makes reads of unwritten bytes errors, and
    /// `shadow_words` words of racecheck shadow, zeroed, are kept for each dword a kernel may
    /// write.
    pub(super) fn new(
        allocations: impl Iterator<Item = (u64, usize, &'m mut [u64], &'m [AtomicU64], Access)>,
        initcheck: bool,
        shadow_words: usize,
    ) -> Self {
        const { assert!(align_of::<AtomicU64>() == align_of::<u64>()) };
        let regions = allocations
            .map(|(base, len, words, written, access)| Region {
                base,
                len,
                // SAFETY: AtomicU64 has the size of u64 and (checked above) its alignment, and
                // the exclusive borrow of the words for 'm means nothing else reads or writes
                // them meanwhile.
                words: unsafe { &*(words as *mut [u64] as *const [AtomicU64]) },
                written,
                access,
                shadow: OnceLock::new(),
            })
            .collect();
        SharedMemory {
            regions,
            locks: std::array::from_fn(|_| Mutex::new(())),
            initcheck,
            shadow_words,
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
        if end > r.base + r.len as u64 {
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

    /// The racecheck shadow of the dwords `[address, address + len)` touches, `shadow_words`
    /// words each, if kept there.
    pub fn shadow(&self, address: u64, len: usize) -> Option<&[AtomicU64]> {
        if self.shadow_words == 0 {
            return None;
        }
        let (r, off) = self.find(address, len as u64).ok()?;
        if r.access != Access::ReadWrite {
            return None;
        }
        let words = r
            .shadow
            .get_or_init(|| zeroed_words(r.len.div_ceil(4) * self.shadow_words));
        let first = off / 4 * self.shadow_words;
        let last = (off + len).div_ceil(4) * self.shadow_words;
        words.get(first..last)
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
        load(r.words, off, out);
        Ok(())
    }

    /// Writes `data` at `off` of `r`.
    fn write_region(r: &Region<'m>, off: usize, data: &[u8]) {
        store(r.words, off, data);
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

/// `n` atomic words, zero, allocated zeroed: the system hands out a large allocation's pages
/// as they are first touched, so shadow of bytes no kernel reaches costs little.
fn zeroed_words(n: usize) -> Box<[AtomicU64]> {
    let zeroed = vec![0u64; n].into_boxed_slice();
    // SAFETY: AtomicU64 has the size and alignment of u64 (asserted in `new`), and a zero u64
    // is a zero AtomicU64; the box is moved, so nothing else refers to the memory.
    unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU64]) }
}

/// The pieces of `[off, off + len)` within one word each: (word, first byte in it, bytes,
/// offset into the range).
fn pieces(off: usize, len: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let mut k = 0;
    std::iter::from_fn(move || {
        (k < len).then(|| {
            let at = off + k;
            let n = (8 - at % 8).min(len - k);
            let piece = (at / 8, at % 8, n, k);
            k += n;
            piece
        })
    })
}

/// Reads the bytes at `off` into `out`, each word whole.
fn load(words: &[AtomicU64], off: usize, out: &mut [u8]) {
    for (w, first, n, k) in pieces(off, out.len()) {
        let bytes = words[w].load(Ordering::Acquire).to_ne_bytes();
        out[k..k + n].copy_from_slice(&bytes[first..first + n]);
    }
}

/// Writes `data` at `off`, each word whole: a part of a word replaces its bytes in one
/// compare-and-swap, so that no reader sees half of it.
fn store(words: &[AtomicU64], off: usize, data: &[u8]) {
    for (w, first, n, k) in pieces(off, data.len()) {
        let piece = &data[k..k + n];
        if n == 8 {
            let mut whole = [0u8; 8];
            whole.copy_from_slice(piece);
            words[w].store(u64::from_ne_bytes(whole), Ordering::Release);
            continue;
        }
        let mut current = words[w].load(Ordering::Relaxed);
        loop {
            let mut bytes = current.to_ne_bytes();
            bytes[first..first + n].copy_from_slice(piece);
            let new = u64::from_ne_bytes(bytes);
            match words[w].compare_exchange_weak(current, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
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
            let view = m.shared(true, None, 0);
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
        let view = m.shared(true, None, 0);
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
        let view = m.shared(false, None, 0);
        view.kernel_read(buffer + 8, &mut out).unwrap();
        assert_eq!(out, [0; 4]);
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let mut m = DeviceMemory::new();
        let counter = m.alloc(8, 256).unwrap();
        m.write(counter, &[0; 8]).unwrap();
        {
            let view = m.shared(true, None, 0);
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

    #[test]
    fn aligned_accesses_within_a_word_are_never_torn_between_threads() {
        let mut m = DeviceMemory::new();
        let buffer = m.alloc(16, 256).unwrap();
        m.write(buffer, &[0; 16]).unwrap();
        let view = m.shared(true, None, 0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for k in 0..200_000u32 {
                    let fill = if k % 2 == 0 { 0xff } else { 0 };
                    view.kernel_write(buffer + 4, &[fill; 4]).unwrap();
                    view.kernel_write(buffer + 8, &[fill; 8]).unwrap();
                }
            });
            for _ in 0..200_000 {
                let mut half = [0u8; 4];
                view.kernel_read(buffer + 4, &mut half).unwrap();
                assert!(half == [0; 4] || half == [0xff; 4], "{half:?}");
                let mut whole = [0u8; 8];
                view.kernel_read(buffer + 8, &mut whole).unwrap();
                assert!(whole == [0; 8] || whole == [0xff; 8], "{whole:?}");
            }
        });
    }
}
