//! A workgroup's LDS, and the racecheck and initcheck on it: shadow state per dword records which
//! wave last wrote it and which waves read it since the last barrier, so that two waves touching
//! the same dword between two barriers, one of them writing, is found whatever order the schedule
//! ran them in, and so is a read of a dword no wave wrote.

use super::checks::Checks;
use crate::error::{Fault, LdsRace};
use std::ops::Range;

/// Who makes an LDS access: the wave's index in its workgroup, its PC and the lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accessor {
    pub wave: u32,
    pub pc: u64,
    pub lane: usize,
}

/// What an access does to the dwords it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    /// A read-modify-write that the hardware makes atomic: atomics do not race each other.
    Atomic,
}

/// One dword's accesses since the last barrier.
#[derive(Clone, Copy, Debug, Default)]
struct Shadow {
    /// Epoch (barrier count) of the last write.
    write_epoch: u32,
    /// The last writer's wave index + 1 (0: never written).
    writer: u32,
    /// Whether that write was atomic.
    atomic: bool,
    /// The last writer's PC.
    write_pc: u64,
    /// Epoch of `readers`.
    read_epoch: u32,
    /// Waves (bit = wave index) that read the dword in `read_epoch`.
    readers: u64,
    /// The PC of the last read, and its wave.
    read_pc: u64,
    read_wave: u32,
}

/// The LDS of one resident workgroup.
pub(crate) struct Lds {
    bytes: Vec<u8>,
    /// Per dword; empty when neither check is on.
    shadow: Vec<Shadow>,
    races: bool,
    init: bool,
    /// Barriers the workgroup has passed; accesses in different epochs are ordered.
    epoch: u32,
}

impl Lds {
    /// `size` bytes of LDS, with the LDS checks of `checks`.
    pub fn new(size: usize, checks: Checks) -> Lds {
        let shadowed = checks.lds_races || checks.init;
        Lds {
            bytes: vec![0; size],
            shadow: if shadowed {
                vec![Shadow::default(); size.div_ceil(4)]
            } else {
                Vec::new()
            },
            races: checks.lds_races,
            init: checks.init,
            epoch: 1,
        }
    }

    /// Clears the LDS for a new workgroup.
    pub fn reset(&mut self) {
        self.bytes.fill(0);
        self.shadow.fill(Shadow::default());
        self.epoch = 1;
    }

    /// Marks a barrier: accesses after it are ordered after those before it.
    pub fn barrier(&mut self) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes `r` (in range), read by `who`.
    pub fn read(&mut self, r: Range<usize>, who: Accessor) -> Result<&[u8], Fault> {
        self.check(&r, who, Kind::Read)?;
        Ok(&self.bytes[r])
    }

    /// The bytes `r` (in range), to be written by `who`.
    pub fn write(&mut self, r: Range<usize>, who: Accessor) -> Result<&mut [u8], Fault> {
        self.check(&r, who, Kind::Write)?;
        Ok(&mut self.bytes[r])
    }

    /// The bytes `r` (in range), read and written atomically by `who`.
    pub fn atomic(&mut self, r: Range<usize>, who: Accessor) -> Result<&mut [u8], Fault> {
        self.check(&r, who, Kind::Atomic)?;
        Ok(&mut self.bytes[r])
    }

    /// Records the access in the shadow state, or reports the race it makes.
    fn check(&mut self, r: &Range<usize>, who: Accessor, kind: Kind) -> Result<(), Fault> {
        if self.shadow.is_empty() || r.is_empty() {
            return Ok(());
        }
        let (epoch, me) = (self.epoch, who.wave + 1);
        for d in r.start / 4..=(r.end - 1) / 4 {
            let s = &mut self.shadow[d];
            let race = |what: &'static str, wave: u32, pc: Option<u64>| {
                Fault::LdsRace(Box::new(LdsRace {
                    offset: (d * 4) as u64,
                    lane: who.lane as u32,
                    what,
                    other_wave: wave,
                    other_pc: pc,
                }))
            };
            if self.init && s.writer == 0 && kind != Kind::Write {
                return Err(Fault::UninitializedLds {
                    offset: (d * 4) as u64,
                    lane: who.lane as u32,
                });
            }
            let written = self.races && s.writer != 0 && s.writer != me && s.write_epoch == epoch;
            let other_readers = if self.races && s.read_epoch == epoch {
                s.readers & !(1u64 << (who.wave & 63))
            } else {
                0
            };
            match kind {
                Kind::Read if written => {
                    return Err(race("a read after a write", s.writer - 1, Some(s.write_pc)));
                }
                Kind::Write | Kind::Atomic if written && !(kind == Kind::Atomic && s.atomic) => {
                    return Err(race(
                        "a write after a write",
                        s.writer - 1,
                        Some(s.write_pc),
                    ));
                }
                Kind::Write | Kind::Atomic if other_readers != 0 => {
                    let reader = other_readers.trailing_zeros();
                    let pc = (s.read_wave == reader).then_some(s.read_pc);
                    return Err(race("a write after a read", reader, pc));
                }
                _ => {}
            }
            match kind {
                Kind::Read => {
                    if s.read_epoch != epoch {
                        s.read_epoch = epoch;
                        s.readers = 0;
                    }
                    s.readers |= 1u64 << (who.wave & 63);
                    s.read_pc = who.pc;
                    s.read_wave = who.wave;
                }
                Kind::Write | Kind::Atomic => {
                    s.writer = me;
                    s.write_epoch = epoch;
                    s.atomic = kind == Kind::Atomic;
                    s.write_pc = who.pc;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(wave: u32) -> Accessor {
        Accessor {
            wave,
            pc: 0x100 + u64::from(wave),
            lane: 3,
        }
    }

    fn race(r: Result<(), Fault>) -> LdsRace {
        match r {
            Err(Fault::LdsRace(race)) => *race,
            other => panic!("expected a race, got {other:?}"),
        }
    }

    const RACES: Checks = Checks {
        lds_races: true,
        ..Checks::NONE
    };

    #[test]
    fn conflicting_accesses_of_two_waves_between_barriers_are_races() {
        let mut lds = Lds::new(64, RACES);
        lds.write(0..4, at(0)).unwrap();
        let r = race(lds.read(0..4, at(1)).map(drop));
        assert_eq!(
            (r.what, r.other_wave, r.other_pc),
            ("a read after a write", 0, Some(0x100))
        );
        assert_eq!((r.offset, r.lane), (0, 3));

        let mut lds = Lds::new(64, RACES);
        lds.read(8..16, at(2)).unwrap();
        let r = race(lds.write(12..13, at(1)).map(drop));
        assert_eq!(
            (r.what, r.other_wave, r.offset),
            ("a write after a read", 2, 12)
        );

        let mut lds = Lds::new(64, RACES);
        lds.write(4..8, at(0)).unwrap();
        let r = race(lds.atomic(4..8, at(1)).map(drop));
        assert_eq!(r.what, "a write after a write");
    }

    #[test]
    fn barriers_atomics_and_one_wave_order_their_accesses() {
        let mut lds = Lds::new(64, RACES);
        lds.write(0..4, at(0)).unwrap();
        lds.read(0..4, at(0)).unwrap();
        lds.barrier();
        lds.read(0..4, at(1)).unwrap();
        lds.read(0..4, at(2)).unwrap();
        lds.barrier();
        lds.write(0..4, at(3)).unwrap();
        lds.barrier();
        lds.atomic(0..4, at(0)).unwrap();
        lds.atomic(0..4, at(1)).unwrap();
        lds.atomic(0..4, at(2)).unwrap();
        assert!(
            lds.read(0..4, at(3)).is_err(),
            "a plain read of an atomic's dword races"
        );
        // Without the check nothing is recorded.
        let mut off = Lds::new(64, Checks::NONE);
        off.write(0..4, at(0)).unwrap();
        off.read(0..4, at(1)).unwrap();
    }

    #[test]
    fn reading_a_dword_no_wave_wrote_is_an_initcheck_fault() {
        let init = Checks {
            init: true,
            ..Checks::NONE
        };
        let mut lds = Lds::new(64, init);
        lds.write(0..6, at(1)).unwrap();
        lds.read(0..8, at(2)).unwrap();
        assert_eq!(
            lds.read(4..12, at(0)).map(drop),
            Err(Fault::UninitializedLds { offset: 8, lane: 3 })
        );
        assert!(
            lds.atomic(60..64, at(0)).is_err(),
            "an atomic reads the old value"
        );
        lds.reset();
        assert!(
            lds.read(0..4, at(1)).is_err(),
            "a new workgroup starts unwritten"
        );
    }
}
