//! The WGP-mode visibility rule of GFX11 and GFX12: the visibility check.
//!
//! In WGP mode (COMPUTE_PGM_RSRC1.WGP_MODE, `.workgroup_processor_mode: 1`) the waves of a
//! workgroup run on either CU of the workgroup processor, and each CU has its own L0 cache. A
//! wave's global store becomes visible to a wave on the other CU only when the writer has
//! waited for its stores to complete (a release: `s_waitcnt_vscnt null, 0` on GFX11,
//! `s_wait_storecnt 0` on GFX12) and, after that, the reader has invalidated its L0 (an acquire:
//! `buffer_gl0_inv`, `global_inv scope:SCOPE_SE` or wider). These are the code sequences of
//! LLVM's AMDGPUUsage memory model for a workgroup-scope release and acquire in WGP mode; a
//! barrier orders the waves but carries neither. The emulator has no caches, so every store is
//! visible at once; with the check on, a workgroup keeps which wave wrote each global dword and
//! when, and a vector read of a dword another wave of the workgroup wrote without that protocol
//! is a fault. Which CU a wave runs on is the hardware's choice, so any two waves count as on
//! different CUs.
//!
//! Reads that bypass the L0 (GFX11 `glc`, GFX12 scope SE or wider: volatile and atomic loads)
//! are not checked, nor are dwords last changed by an atomic, which completes in the L2. Not covered: reads by scalar memory
//! instructions (the scalar cache is another matter), and stores by other workgroups (agent
//! scope).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// What an instruction does for the visibility of global stores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Sync {
    /// Nothing.
    #[default]
    None,
    /// It waits for the wave's stores to complete: they are released.
    Release,
    /// It invalidates the wave's L0 cache: released stores of other waves become visible.
    Acquire,
}

/// Hashes a dword address with one multiplication (the map is hit on every global access).
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (x >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The last store of a global byte within the workgroup.
#[derive(Clone, Copy, Debug)]
struct Store {
    wave: u32,
    time: u64,
    pc: u64,
}

/// The last stores of the four bytes of a dword (`None`: not stored by the workgroup).
type Dword = [Option<Store>; 4];

/// A read that the memory model does not make see another wave's store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stale {
    /// The byte's address.
    pub address: u64,
    /// The wave that stored it.
    pub writer: u32,
    /// The PC of the store.
    pub writer_pc: u64,
    /// Whether the writer released the store (so the reader's acquire is what is missing).
    pub released: bool,
}

/// One workgroup's record of its global stores, for the visibility check.
#[derive(Clone, Debug, Default)]
pub(crate) struct Visibility {
    /// Whether the check runs for this dispatch (WGP mode, check on).
    enabled: bool,
    /// The workgroup's instruction count: the order of its waves' events.
    clock: u64,
    /// By dword address.
    stores: HashMap<u64, Dword, BuildHasherDefault<AddressHasher>>,
    /// Per wave: when it released its stores, in ascending order.
    releases: Vec<Vec<u64>>,
    /// Per wave: when it last invalidated its L0 (0: never).
    acquired: Vec<u64>,
}

impl Visibility {
    /// A record for workgroups of `waves` waves; `enabled` says whether the check runs.
    pub fn new(enabled: bool, waves: usize) -> Visibility {
        Visibility {
            enabled: enabled && waves > 1,
            releases: vec![Vec::new(); waves],
            acquired: vec![0; waves],
            ..Visibility::default()
        }
    }

    /// Whether the check runs.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Forgets everything (the slot takes a new workgroup).
    pub fn reset(&mut self) {
        self.clock = 0;
        self.stores.clear();
        self.releases.iter_mut().for_each(Vec::clear);
        self.acquired.fill(0);
    }

    /// Counts an instruction of the workgroup, and applies what it does (`sync`) for `wave`.
    pub fn step(&mut self, wave: u32, sync: Sync) {
        self.clock += 1;
        let w = wave as usize;
        match sync {
            Sync::None => {}
            Sync::Release => self.releases[w].push(self.clock),
            Sync::Acquire => self.acquired[w] = self.clock,
        }
    }

    /// Records `wave`'s store (or atomic) of `[address, address + len)` at `pc`.
    pub fn stored(&mut self, wave: u32, pc: u64, address: u64, len: usize) {
        let store = Store {
            wave,
            time: self.clock,
            pc,
        };
        for (dword, bytes) in dwords(address, len) {
            let d = self.stores.entry(dword).or_default();
            d[bytes].fill(Some(store));
        }
    }

    /// Records an atomic's update of `[address, address + len)`: it happens in the L2, and a
    /// read that misses it (a compare-and-swap loop's first load) is a race the code tolerates
    /// or a race, not a missing release, so the dwords are no longer checked.
    pub fn updated(&mut self, address: u64, len: usize) {
        for (dword, bytes) in dwords(address, len) {
            if let Some(d) = self.stores.get_mut(&dword) {
                d[bytes].fill(None);
            }
        }
    }

    /// Checks `wave`'s read of `[address, address + len)`.
    pub fn read(&self, wave: u32, address: u64, len: usize) -> Result<(), Stale> {
        let acquired = self.acquired[wave as usize];
        for (dword, bytes) in dwords(address, len) {
            let Some(d) = self.stores.get(&dword) else {
                continue;
            };
            for byte in bytes {
                let Some(s) = d[byte].filter(|s| s.wave != wave) else {
                    continue;
                };
                let releases = &self.releases[s.wave as usize];
                let release = releases[releases.partition_point(|&t| t <= s.time)..].first();
                if !release.is_some_and(|&r| r < acquired) {
                    return Err(Stale {
                        address: dword + byte as u64,
                        writer: s.wave,
                        writer_pc: s.pc,
                        released: release.is_some(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The dwords `[address, address + len)` touches, each with the range of its bytes touched.
pub(crate) fn dwords(
    address: u64,
    len: usize,
) -> impl Iterator<Item = (u64, std::ops::Range<usize>)> {
    let end = address + len as u64;
    (address & !3..end).step_by(4).map(move |dword| {
        let first = address.max(dword) - dword;
        let last = end.min(dword + 4) - dword;
        (dword, first as usize..last as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_visible_to_another_wave_after_its_release_and_a_later_acquire() {
        let mut v = Visibility::new(true, 2);
        v.step(0, Sync::None);
        v.stored(0, 0x100, 0x1000, 8);
        assert_eq!(v.read(0, 0x1004, 4), Ok(()), "the writer's own store");
        let stale = v.read(1, 0x1004, 4).unwrap_err();
        assert_eq!(
            (stale.address, stale.writer, stale.released),
            (0x1004, 0, false)
        );
        v.step(1, Sync::Acquire);
        assert!(
            v.read(1, 0x1000, 4).is_err(),
            "an acquire before the release"
        );
        v.step(0, Sync::Release);
        assert!(v.read(1, 0x1000, 4).unwrap_err().released);
        v.step(1, Sync::Acquire);
        assert_eq!(v.read(1, 0x1000, 8), Ok(()));
        // A store after the release needs a release of its own.
        v.step(0, Sync::None);
        v.stored(0, 0x108, 0x1000, 4);
        v.step(1, Sync::Acquire);
        assert!(v.read(1, 0x1000, 4).is_err());
        assert_eq!(v.read(1, 0x2000, 4), Ok(()), "never stored");
        // Bytes are tracked apart: another wave's half of a dword is not this one's.
        v.stored(0, 0x110, 0x3000, 2);
        assert_eq!(v.read(1, 0x3002, 2), Ok(()));
        assert_eq!(v.read(1, 0x3000, 4).unwrap_err().address, 0x3000);
        v.updated(0x1000, 4);
        assert_eq!(v.read(1, 0x1000, 4), Ok(()), "an atomic's result");
        v.reset();
        assert_eq!(v.read(1, 0x1000, 4), Ok(()));
    }

    #[test]
    fn one_wave_workgroups_are_not_checked() {
        assert!(!Visibility::new(true, 1).enabled());
        assert!(!Visibility::new(false, 4).enabled());
        assert!(Visibility::new(true, 4).enabled());
    }
}
