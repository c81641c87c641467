//! One cache's tags: set-associative, least recently used out first, each line knowing when its
//! data arrives (a hit on a line still being filled waits for the fill).

use super::devices::CacheLevel;

/// A line the cache holds.
#[derive(Clone, Copy, Debug, Default)]
struct Way {
    /// Line address + 1 (0: empty).
    tag: u64,
    /// When the line's data is there, in cycles.
    ready: f64,
    /// When it was last used (a count of lookups).
    used: u64,
    /// Whether it holds stores not yet written back.
    dirty: bool,
}

/// The outcome of a lookup.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lookup {
    /// The line is held; its data is there at this cycle (perhaps still on its way).
    Hit(f64),
    /// The line was not held; it now is, and its fill time must be set with [`Cache::filled`].
    /// `writeback`: the line it replaced held stores, which go to the next level now.
    Miss { writeback: bool },
}

/// Sets per chunk of tag storage: a chunk is allocated when one of its sets is first used, so a
/// large cache that a kernel barely touches costs little.
const SETS_PER_CHUNK: usize = 256;

/// The tags of one cache instance.
pub(crate) struct Cache {
    chunks: Vec<Option<Box<[Way]>>>,
    associativity: usize,
    sets: u64,
    line_shift: u32,
    lookups: u64,
    /// Lines holding stores not yet written back.
    dirty: u64,
}

impl Cache {
    /// An empty cache shaped as `level` says.
    pub fn new(level: &CacheLevel) -> Cache {
        let associativity = level.ways as usize;
        let sets = (level.bytes / u64::from(level.line) / associativity as u64).max(1);
        Cache {
            chunks: Vec::new(),
            associativity,
            sets,
            line_shift: level.line.trailing_zeros(),
            lookups: 0,
            dirty: 0,
        }
    }

    /// The line holding byte `address`.
    pub fn line_of(&self, address: u64) -> u64 {
        address >> self.line_shift
    }

    fn set(&mut self, line: u64) -> &mut [Way] {
        if self.chunks.is_empty() {
            self.chunks = vec![None; (self.sets as usize).div_ceil(SETS_PER_CHUNK)];
        }
        let set = (line % self.sets) as usize;
        let ways = self.associativity;
        let chunk = self.chunks[set / SETS_PER_CHUNK]
            .get_or_insert_with(|| vec![Way::default(); SETS_PER_CHUNK * ways].into());
        let first = set % SETS_PER_CHUNK * ways;
        &mut chunk[first..first + ways]
    }

    /// Looks `line` up, making it the most recently used; a miss takes the least recently used
    /// way of its set.
    pub fn lookup(&mut self, line: u64) -> Lookup {
        self.lookups += 1;
        let now = self.lookups;
        let set = self.set(line);
        if let Some(w) = set.iter_mut().find(|w| w.tag == line + 1) {
            w.used = now;
            return Lookup::Hit(w.ready);
        }
        let victim = set
            .iter_mut()
            .min_by_key(|w| w.used)
            .expect("a set has at least one way");
        let writeback = victim.dirty;
        *victim = Way {
            tag: line + 1,
            ready: f64::INFINITY,
            used: now,
            dirty: false,
        };
        self.dirty -= u64::from(writeback);
        Lookup::Miss { writeback }
    }

    /// Marks `line` (held) as holding stores.
    pub fn stored(&mut self, line: u64) {
        if let Some(w) = self.set(line).iter_mut().find(|w| w.tag == line + 1)
            && !w.dirty
        {
            w.dirty = true;
            self.dirty += 1;
        }
    }

    /// Lines holding stores not yet written back.
    pub fn dirty_lines(&self) -> u64 {
        self.dirty
    }

    /// Records that `line`'s data arrives at cycle `ready`.
    pub fn filled(&mut self, line: u64, ready: f64) {
        if let Some(w) = self.set(line).iter_mut().find(|w| w.tag == line + 1) {
            w.ready = ready;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Cache {
        Cache::new(&CacheLevel {
            bytes: 4 * 64,
            ways: 2,
            line: 64,
            latency: 1,
            bytes_per_clock: 1.0,
        })
    }

    #[test]
    fn a_filled_line_hits_at_its_fill_time_until_evicted() {
        let mut c = tiny();
        let line = c.line_of(0x1040);
        assert_eq!(c.lookup(line), Lookup::Miss { writeback: false });
        c.filled(line, 100.0);
        assert_eq!(c.lookup(line), Lookup::Hit(100.0));
        // Two more lines of the same set (2 sets of 2 ways) push it out, least recent first.
        assert_eq!(c.lookup(line + 2), Lookup::Miss { writeback: false });
        c.filled(line + 2, 5.0);
        assert_eq!(c.lookup(line), Lookup::Hit(100.0));
        assert_eq!(c.lookup(line + 4), Lookup::Miss { writeback: false });
        assert_eq!(c.lookup(line + 2), Lookup::Miss { writeback: false });
        assert_eq!(c.lookup(line + 1), Lookup::Miss { writeback: false });
    }

    #[test]
    fn a_stored_line_is_written_back_once_when_replaced() {
        let mut c = tiny();
        let line = c.line_of(0x1000);
        assert_eq!(c.lookup(line), Lookup::Miss { writeback: false });
        c.stored(line);
        c.stored(line);
        assert_eq!(c.dirty_lines(), 1);
        assert_eq!(c.lookup(line + 2), Lookup::Miss { writeback: false });
        assert_eq!(c.lookup(line + 4), Lookup::Miss { writeback: true });
        assert_eq!(c.dirty_lines(), 0);
    }
}
