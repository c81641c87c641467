//! Store data read after issue: part of the waitcnt check.
//!
//! On GFX9, a vector-memory store of more than 8 bytes reads its data registers in the wait
//! states after it issues, so a VALU instruction that writes those registers too soon changes
//! the data stored. No counter covers this: the code must leave the wait states between the two
//! (`s_nop`), 1 on GFX90A and 2 on GFX942 and GFX950. Compilers insert them (LLVM's
//! GCNHazardRecognizer, `has12DWordStoreHazard`); inline assembly and hand-written code must.
//! GFX10 and later interlock in hardware (LLVM: `hasNoDataDepHazard`), so there the ISA front
//! end declares no late read. A buffer store whose `soffset` is a register is not affected, as
//! in LLVM's rule.

use super::waitcnt::{Registers, overlap};

/// What one decoded instruction does towards the store-data hazard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StoreData {
    /// How many wait states issuing it takes: `s_nop n` takes `n + 1`, others 1.
    pub wait_states: u8,
    /// The data registers a store reads after it issues, and the wait states they need.
    pub reads_late: Option<LateRead>,
    /// The vector or accumulation registers it writes as a VALU instruction.
    pub valu_writes: Option<Registers>,
}

/// Data registers a store reads after issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LateRead {
    /// The store's data registers.
    pub data: Registers,
    /// The wait states after the store before a VALU instruction may write them.
    pub wait_states: u8,
}

/// A store whose data registers the hardware may still be reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reading {
    data: Registers,
    /// The PC of the store.
    pc: u64,
    /// The wait states still needed.
    left: u8,
    /// The wait states the store needs in all.
    needs: u8,
}

/// An overwrite of store data too soon after the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Overwrite {
    /// The data registers written.
    pub registers: Registers,
    /// The PC of the store.
    pub pc: u64,
    /// The wait states the store needs.
    pub needs: u8,
}

/// Per wave: the stores issued in the last wait states whose data may still be read. Each
/// instruction takes at least one wait state and a store needs at most two, so two suffice.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DataInFlight {
    reading: [Option<Reading>; 2],
}

impl DataInFlight {
    /// The store data that instruction `s` would overwrite too soon, if any.
    pub fn overwrite(&self, s: &StoreData) -> Option<Overwrite> {
        let writes = s.valu_writes?;
        self.reading.iter().flatten().find_map(|r| {
            overlap(r.data, writes).map(|registers| Overwrite {
                registers,
                pc: r.pc,
                needs: r.needs,
            })
        })
    }

    /// Accounts for instruction `s`, at `pc`, having issued.
    pub fn step(&mut self, s: &StoreData, pc: u64) {
        for slot in &mut self.reading {
            if let Some(r) = slot {
                r.left = r.left.saturating_sub(s.wait_states);
                if r.left == 0 {
                    *slot = None;
                }
            }
        }
        if let Some(late) = s.reads_late {
            let reading = Reading {
                data: late.data,
                pc,
                left: late.wait_states,
                needs: late.wait_states,
            };
            // A store needs at most two wait states, so one of the two is free; otherwise the
            // one with the fewest left gives way.
            let slot = (0..self.reading.len())
                .min_by_key(|&k| self.reading[k].map_or(0, |r| r.left))
                .unwrap_or(0);
            self.reading[slot] = Some(reading);
        }
    }

    /// Forgets every store (a new wave starts).
    pub fn clear(&mut self) {
        self.reading = [None; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::waitcnt::RegisterFile;

    fn v(first: u8, count: u8) -> Registers {
        Registers {
            file: RegisterFile::Vector,
            first,
            count,
        }
    }

    fn store(data: Registers, wait_states: u8) -> StoreData {
        StoreData {
            wait_states: 1,
            reads_late: Some(LateRead { data, wait_states }),
            valu_writes: None,
        }
    }

    fn valu(writes: Registers) -> StoreData {
        StoreData {
            wait_states: 1,
            reads_late: None,
            valu_writes: Some(writes),
        }
    }

    fn nop(n: u8) -> StoreData {
        StoreData {
            wait_states: n + 1,
            ..StoreData::default()
        }
    }

    #[test]
    fn a_valu_write_of_store_data_needs_the_wait_states() {
        let mut d = DataInFlight::default();
        d.step(&store(v(4, 4), 2), 0x100);
        let o = d.overwrite(&valu(v(6, 2))).unwrap();
        assert_eq!((o.registers, o.pc, o.needs), (v(6, 2), 0x100, 2));
        assert_eq!(d.overwrite(&valu(v(8, 1))), None, "not the store's data");
        d.step(&nop(0), 0x108);
        assert!(
            d.overwrite(&valu(v(4, 1))).is_some(),
            "one of two wait states"
        );
        d.step(&valu(v(20, 1)), 0x10c);
        assert_eq!(d.overwrite(&valu(v(4, 1))), None);
    }

    #[test]
    fn an_s_nop_gives_its_count_plus_one_wait_states() {
        let mut d = DataInFlight::default();
        d.step(&store(v(0, 3), 2), 0x10);
        d.step(&nop(1), 0x18);
        assert_eq!(d.overwrite(&valu(v(0, 1))), None);
    }

    #[test]
    fn two_stores_in_a_row_are_both_tracked() {
        let mut d = DataInFlight::default();
        d.step(&store(v(0, 4), 2), 0x20);
        d.step(&store(v(8, 4), 2), 0x28);
        assert_eq!(d.overwrite(&valu(v(1, 1))).map(|o| o.pc), Some(0x20));
        assert_eq!(d.overwrite(&valu(v(9, 1))).map(|o| o.pc), Some(0x28));
        d.step(&store(v(16, 4), 2), 0x30);
        assert_eq!(d.overwrite(&valu(v(1, 1))), None, "two wait states since");
        assert_eq!(d.overwrite(&valu(v(9, 1))).map(|o| o.pc), Some(0x28));
        assert_eq!(d.overwrite(&valu(v(17, 1))).map(|o| o.pc), Some(0x30));
    }
}
