//! racecheck on global memory: two waves, of one workgroup or of two, touching the same global
//! dword with nothing ordering them, one of them writing with a plain store.
//!
//! What orders two accesses is what orders them on hardware under LLVM's AMDGPUUsage memory
//! model, at the agent (device) scope:
//! - program order within a wave;
//! - a barrier that both waves of a workgroup passed between the accesses;
//! - a release by the first wave after its access, then a store or atomic of it (what it
//!   publishes), and an acquire by the second wave after a read that came later, before its
//!   access. The release and acquire are the code sequences of each target: GFX90A
//!   `s_waitcnt vmcnt(0)` / `buffer_wbinvl1_vol`; GFX942 and GFX950 `buffer_wbl2 sc1` then
//!   `s_waitcnt vmcnt(0)` / `buffer_inv sc1`; GFX11 `s_waitcnt_vscnt null, 0` /
//!   `buffer_gl1_inv` then `buffer_gl0_inv`; GFX12 `s_wait_storecnt 0` /
//!   `global_inv scope:SCOPE_DEV`.
//!
//! The check keeps, for each global dword, the last plain write and the last plain read (the
//! wave, its barrier and release counts then, the PC and the bytes of the dword it touched), and
//! for each wave the times at which it published. Accesses of different bytes of a dword do not
//! conflict. Times come from one clock of the dispatch, taken before a publishing store and
//! after every read, so that a read that sees a store comes later than its publication.
//! Where it must guess, it lets the code pass:
//! - which location a wave publishes to is not tracked: an acquire after any read later than
//!   the publication orders the accesses;
//! - atomics and coherent loads and stores (volatile or atomic as the compilers emit them:
//!   GFX9 `glc`/`sc0`/`sc1`, GFX11 `glc`/`dlc`, GFX12 a scope wider than the CU) are not checked,
//!   and an atomic's dword starts afresh. On GFX90A and GFX11 an atomic store at agent scope is a
//!   plain store, so it is checked as one;
//! - one writer and one reader per dword are kept, the last (a wave's accesses of other bytes
//!   replace another wave's);
//! - the check and the update of a dword are not one step, so two host threads can each miss
//!   the other's access (a serial run misses nothing);
//! - a wave's barrier and release counts past 65534 are taken to order everything.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What an instruction does towards an agent-scope release or acquire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AgentSync {
    /// Nothing.
    #[default]
    None,
    /// It writes the L2 back (GFX942 `buffer_wbl2 sc1`): the first half of a release there.
    Writeback,
    /// It waits for every store of the wave to complete: a release, on targets whose release
    /// needs a write-back (`after_writeback`) only after one.
    Release { after_writeback: bool },
    /// It invalidates the L1 (GFX11 `buffer_gl1_inv`): the first half of an acquire there.
    Invalidate,
    /// It invalidates the caches the wave reads through: an acquire, on targets whose acquire
    /// invalidates two levels (`after_invalidate`) only after the first.
    Acquire { after_invalidate: bool },
}

/// The largest barrier or release count a stamp holds; counts past it order everything.
const SATURATED: u64 = 0xffff;

/// Words of shadow per global dword: the last plain write's stamp, and its PC with the bytes it
/// touched in the top four bits; then the same for the last plain read.
pub(crate) const SHADOW_WORDS: usize = 4;

/// Where the bytes an access touched sit in the word that holds its PC.
const BYTES_SHIFT: u32 = 60;

/// When a wave published: the release it published and the clock then.
#[derive(Clone, Copy, Debug)]
struct Publication {
    release: u32,
    time: u64,
}

/// What the waves of a dispatch share for the racecheck on global memory.
#[derive(Debug)]
pub(crate) struct GlobalRaces {
    /// The dispatch's clock.
    clock: AtomicU64,
    /// Per wave id, its publications in order.
    publications: Mutex<HashMap<u32, Vec<Publication>>>,
    waves_per_group: u32,
}

/// The other party of a race the check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// What this access is after the other: "a read after a write", "a write after a read" or
    /// "a write after a write".
    pub what: &'static str,
    /// The other wave's linear workgroup id and its index in the workgroup.
    pub other_group: u64,
    pub other_wave: u32,
    /// The other access's PC.
    pub other_pc: u64,
    /// Whether both are waves of one workgroup.
    pub same_group: bool,
    /// Whether the other wave released after its access (so the acquire is what is missing).
    pub released: bool,
}

/// One wave's part: who it is and how far it has synchronised.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WaveOrder {
    /// Its id in the dispatch, from 1 (0: the check is off).
    id: u32,
    /// Barriers it has passed.
    barriers: u32,
    /// Releases it has made.
    releases: u32,
    /// The release it last published.
    published: u32,
    /// A write-back came since its last release.
    written_back: bool,
    /// An L1 invalidation came since its last acquire.
    invalidated: bool,
    /// The clock after its latest global read.
    read_at: u64,
    /// `read_at` as of its latest acquire.
    acquired: u64,
}

impl GlobalRaces {
    /// The shared part of a dispatch of workgroups of `waves_per_group` waves.
    pub fn new(waves_per_group: u32) -> GlobalRaces {
        GlobalRaces {
            clock: AtomicU64::new(1),
            publications: Mutex::new(HashMap::new()),
            waves_per_group,
        }
    }

    /// The part of wave `index` of the workgroup with linear id `group`, or an unchecked wave if
    /// its id does not fit.
    pub fn wave(&self, group: u64, index: u32) -> WaveOrder {
        let id = group
            .checked_mul(u64::from(self.waves_per_group))
            .and_then(|first| first.checked_add(u64::from(index) + 1))
            .and_then(|id| u32::try_from(id).ok())
            .unwrap_or(0);
        WaveOrder {
            id,
            ..WaveOrder::default()
        }
    }

    /// The linear workgroup id and the index in it of wave `id`.
    fn place(&self, id: u32) -> (u64, u32) {
        let k = id - 1;
        (
            u64::from(k / self.waves_per_group),
            k % self.waves_per_group,
        )
    }

    /// Called by `wave` before each of its global stores and atomics: a first store since a
    /// release publishes it.
    pub fn storing(&self, wave: &mut WaveOrder) {
        if wave.id == 0 || wave.releases == wave.published {
            return;
        }
        let time = self.clock.fetch_add(1, Ordering::AcqRel);
        let mut publications = self.publications.lock().unwrap_or_else(|p| p.into_inner());
        publications.entry(wave.id).or_default().push(Publication {
            release: wave.releases,
            time,
        });
        wave.published = wave.releases;
    }

    /// Called by `wave` after each of its global reads.
    pub fn read(&self, wave: &mut WaveOrder) {
        wave.read_at = self.clock.load(Ordering::Acquire);
    }

    /// Checks `wave`'s plain read of `bytes` (a mask of four) of the dword whose shadow is
    /// `shadow`, at `pc`, and records it.
    pub fn plain_read(
        &self,
        wave: &WaveOrder,
        shadow: &[AtomicU64],
        bytes: u64,
        pc: u64,
    ) -> Result<(), Conflict> {
        if wave.id == 0 {
            return Ok(());
        }
        self.check(wave, shadow, 0, bytes, "a read after a write")?;
        record(wave.stamp(), &shadow[2..4], bytes, pc);
        Ok(())
    }

    /// Checks `wave`'s plain write of `bytes` (a mask of four) of the dword whose shadow is
    /// `shadow`, at `pc`, and records it.
    pub fn plain_write(
        &self,
        wave: &WaveOrder,
        shadow: &[AtomicU64],
        bytes: u64,
        pc: u64,
    ) -> Result<(), Conflict> {
        if wave.id == 0 {
            return Ok(());
        }
        self.check(wave, shadow, 0, bytes, "a write after a write")?;
        self.check(wave, shadow, 2, bytes, "a write after a read")?;
        record(wave.stamp(), &shadow[0..2], bytes, pc);
        Ok(())
    }

    /// Forgets the accesses of the dword whose shadow is `shadow`: an atomic or coherent store
    /// replaced it.
    pub fn synchronised(shadow: &[AtomicU64]) {
        for word in shadow {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// Checks that the access recorded at `shadow[at]` (a stamp, then its PC and bytes) comes
    /// before `wave`'s of `bytes`, if they share a byte.
    fn check(
        &self,
        wave: &WaveOrder,
        shadow: &[AtomicU64],
        at: usize,
        bytes: u64,
        what: &'static str,
    ) -> Result<(), Conflict> {
        let stamp = shadow[at].load(Ordering::Relaxed);
        let other = stamp as u32;
        if other == 0 || other == wave.id {
            return Ok(());
        }
        let where_ = shadow[at + 1].load(Ordering::Relaxed);
        if where_ >> BYTES_SHIFT & bytes == 0 {
            return Ok(());
        }
        let barriers = stamp >> 32 & SATURATED;
        let releases = stamp >> 48;
        let (other_group, other_wave) = self.place(other);
        let same_group = other_group == self.place(wave.id).0;
        if same_group && (barriers == SATURATED || u64::from(wave.barriers) > barriers) {
            return Ok(());
        }
        if releases == SATURATED {
            return Ok(());
        }
        let publication = {
            let publications = self.publications.lock().unwrap_or_else(|p| p.into_inner());
            publications.get(&other).and_then(|list| {
                let later = list.partition_point(|p| u64::from(p.release) <= releases);
                list.get(later).copied()
            })
        };
        if publication.is_some_and(|p| p.time < wave.acquired) {
            return Ok(());
        }
        Err(Conflict {
            what,
            other_group,
            other_wave,
            other_pc: where_ & ((1 << BYTES_SHIFT) - 1),
            same_group,
            released: publication.is_some(),
        })
    }
}

/// Records an access of `bytes` at `pc` by the wave whose stamp is `stamp` in `entry` (stamp,
/// then PC and bytes): the wave's accesses since its last barrier and release add up.
fn record(stamp: u64, entry: &[AtomicU64], bytes: u64, pc: u64) {
    let mut bytes = bytes;
    if entry[0].load(Ordering::Relaxed) == stamp {
        let known = entry[1].load(Ordering::Relaxed);
        let known_bytes = known >> BYTES_SHIFT;
        if known & ((1 << BYTES_SHIFT) - 1) == pc && known_bytes | bytes == known_bytes {
            return;
        }
        bytes |= known_bytes;
    } else {
        entry[0].store(stamp, Ordering::Relaxed);
    }
    entry[1].store(pc | bytes << BYTES_SHIFT, Ordering::Relaxed);
}

impl WaveOrder {
    /// Whether the check runs for this wave.
    pub fn checked(&self) -> bool {
        self.id != 0
    }

    /// Applies what an instruction does (`sync`).
    pub fn step(&mut self, sync: AgentSync) {
        match sync {
            AgentSync::None => {}
            AgentSync::Writeback => self.written_back = true,
            AgentSync::Release { after_writeback } => {
                if !after_writeback || self.written_back {
                    self.releases += 1;
                    self.written_back = false;
                }
            }
            AgentSync::Invalidate => self.invalidated = true,
            AgentSync::Acquire { after_invalidate } => {
                if !after_invalidate || self.invalidated {
                    self.acquired = self.read_at;
                    self.invalidated = false;
                }
            }
        }
    }

    /// The wave passed a barrier.
    pub fn passed_barrier(&mut self) {
        self.barriers += 1;
    }

    /// The wave and its counts, as the shadow keeps them.
    fn stamp(&self) -> u64 {
        let saturate = |n: u32| u64::from(n).min(SATURATED);
        u64::from(self.id) | saturate(self.barriers) << 32 | saturate(self.releases) << 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shadow() -> Vec<AtomicU64> {
        (0..SHADOW_WORDS).map(|_| AtomicU64::new(0)).collect()
    }

    /// Every byte of a dword.
    const ALL: u64 = 0b1111;

    const RELEASE: AgentSync = AgentSync::Release {
        after_writeback: false,
    };
    const ACQUIRE: AgentSync = AgentSync::Acquire {
        after_invalidate: false,
    };

    #[test]
    fn a_plain_write_read_by_another_workgroup_needs_a_release_a_publication_and_an_acquire() {
        let races = GlobalRaces::new(2);
        let (mut writer, mut reader) = (races.wave(0, 0), races.wave(3, 1));
        let data = shadow();
        races.plain_write(&writer, &data, ALL, 0x100).unwrap();
        assert_eq!(
            races.plain_write(&writer, &data, ALL, 0x104),
            Ok(()),
            "its own"
        );
        let race = races.plain_read(&reader, &data, ALL, 0x200).unwrap_err();
        assert_eq!(
            (race.what, race.other_group, race.other_wave),
            ("a read after a write", 0, 0)
        );
        assert_eq!(
            (race.other_pc, race.same_group, race.released),
            (0x104, false, false)
        );
        // A release without a store after it publishes nothing.
        writer.step(RELEASE);
        assert!(
            !races
                .plain_read(&reader, &data, ALL, 0x200)
                .unwrap_err()
                .released
        );
        races.storing(&mut writer);
        // Published, but the reader has not acquired since.
        races.read(&mut reader);
        assert!(
            races
                .plain_read(&reader, &data, ALL, 0x200)
                .unwrap_err()
                .released
        );
        reader.step(ACQUIRE);
        assert_eq!(races.plain_read(&reader, &data, ALL, 0x200), Ok(()));
        // The reader's read is now the dword's: a write must come after it too, even the
        // writer's own.
        let race = races.plain_write(&writer, &data, ALL, 0x300).unwrap_err();
        assert_eq!((race.what, race.other_group), ("a write after a read", 3));
        let third = races.wave(5, 0);
        let race = races.plain_write(&third, &data, ALL, 0x300).unwrap_err();
        assert_eq!((race.what, race.other_group), ("a write after a write", 0));
        // An acquire whose read came before the publication orders nothing.
        let mut early = races.wave(7, 0);
        races.read(&mut early);
        early.step(ACQUIRE);
        let again = shadow();
        races.plain_write(&writer, &again, ALL, 0x108).unwrap();
        writer.step(RELEASE);
        races.storing(&mut writer);
        assert!(races.plain_read(&early, &again, ALL, 0x400).is_err());
        GlobalRaces::synchronised(&again);
        assert_eq!(
            races.plain_read(&early, &again, ALL, 0x400),
            Ok(()),
            "after an atomic"
        );
    }

    #[test]
    fn a_barrier_orders_the_waves_of_one_workgroup_only() {
        let races = GlobalRaces::new(4);
        let (mut a, mut b) = (races.wave(2, 0), races.wave(2, 3));
        let dword = shadow();
        races.plain_write(&a, &dword, ALL, 0x10).unwrap();
        let race = races.plain_read(&b, &dword, ALL, 0x20).unwrap_err();
        assert!(race.same_group);
        a.passed_barrier();
        b.passed_barrier();
        assert_eq!(races.plain_read(&b, &dword, ALL, 0x20), Ok(()));
        let mut other = races.wave(1, 3);
        other.passed_barrier();
        assert!(
            !races
                .plain_write(&other, &dword, ALL, 0x30)
                .unwrap_err()
                .same_group
        );
    }

    #[test]
    fn accesses_of_different_bytes_of_a_dword_do_not_conflict() {
        let races = GlobalRaces::new(1);
        let (a, b) = (races.wave(0, 0), races.wave(1, 0));
        let dword = shadow();
        races.plain_write(&a, &dword, 0b0011, 0x10).unwrap();
        assert_eq!(races.plain_write(&b, &dword, 0b1100, 0x20), Ok(()));
        assert_eq!(
            races.plain_read(&a, &dword, 0b0011, 0x30),
            Ok(()),
            "b's bytes are apart"
        );
        let race = races.plain_read(&a, &dword, 0b0100, 0x30).unwrap_err();
        assert_eq!((race.what, race.other_pc), ("a read after a write", 0x20));
        // A wave's accesses of one dword add up.
        let other = shadow();
        races.plain_write(&a, &other, 0b0001, 0x10).unwrap();
        races.plain_write(&a, &other, 0b0010, 0x14).unwrap();
        let c = races.wave(2, 0);
        let race = races.plain_read(&c, &other, 0b0001, 0x50).unwrap_err();
        assert_eq!(race.other_pc, 0x14);
    }

    #[test]
    fn two_step_releases_and_acquires_count_only_in_order() {
        let races = GlobalRaces::new(1);
        let mut w = races.wave(0, 0);
        w.step(AgentSync::Release {
            after_writeback: true,
        });
        assert_eq!(w.releases, 0, "no write-back before the wait");
        w.step(AgentSync::Writeback);
        w.step(AgentSync::Release {
            after_writeback: true,
        });
        assert_eq!(w.releases, 1);
        races.read(&mut w);
        w.step(AgentSync::Acquire {
            after_invalidate: true,
        });
        assert_eq!(w.acquired, 0, "no L1 invalidation before the L0's");
        w.step(AgentSync::Invalidate);
        w.step(AgentSync::Acquire {
            after_invalidate: true,
        });
        assert_eq!(w.acquired, w.read_at);
    }

    #[test]
    fn waves_whose_id_does_not_fit_are_not_checked() {
        let races = GlobalRaces::new(8);
        assert!(!races.wave(u64::from(u32::MAX), 0).checked());
        assert!(races.wave(1000, 7).checked());
    }
}
