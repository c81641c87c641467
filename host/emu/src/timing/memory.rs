//! The memory hierarchy below the compute units: each CU's vector cache, RDNA's shader-array
//! cache, the L2 of each partition, the memory-side cache and DRAM. Each level is a tag array
//! and a port of fixed bandwidth that serves requests in arrival order; a request's data arrives
//! after the latency of the level that holds it plus whatever it queued for on the way.

use super::cache::{Cache, Lookup};
use super::devices::{CacheLevel, Device};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A port that moves a fixed number of bytes per cycle, first come first served.
#[derive(Clone, Copy, Debug)]
struct Port {
    /// When it is next free.
    free: f64,
    cycles_per_byte: f64,
}

impl Port {
    fn new(bytes_per_clock: f64) -> Port {
        Port {
            free: 0.0,
            cycles_per_byte: 1.0 / bytes_per_clock,
        }
    }

    /// Moves `bytes` arriving at `at`; returns when they start moving.
    fn serve(&mut self, at: f64, bytes: f64) -> f64 {
        let start = at.max(self.free);
        self.free = start + bytes * self.cycles_per_byte;
        start
    }
}

/// A cache level: its tags, its port and its hit latency.
struct Level {
    tags: Cache,
    port: Port,
    latency: f64,
}

impl Level {
    fn new(c: &CacheLevel) -> Level {
        Level {
            tags: Cache::new(c),
            port: Port::new(c.bytes_per_clock),
            latency: f64::from(c.latency),
        }
    }
}

/// Misses a CU has in flight, bounded: a miss beyond the bound waits for the oldest to return.
struct InFlight {
    /// Return times (as `f64` bits, which order non-negative times).
    returns: BinaryHeap<Reverse<u64>>,
    limit: usize,
}

impl InFlight {
    /// When a miss wanting to leave at `at` can leave.
    fn admit(&mut self, at: f64) -> f64 {
        let mut at = at;
        while let Some(&Reverse(first)) = self.returns.peek() {
            let first = f64::from_bits(first);
            if first <= at {
                self.returns.pop();
            } else if self.returns.len() >= self.limit {
                self.returns.pop();
                at = first;
            } else {
                break;
            }
        }
        at
    }

    fn push(&mut self, returns: f64) {
        self.returns.push(Reverse(returns.to_bits()));
    }
}

/// When an access's data arrives, and when it would have without queueing anywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Arrival {
    /// With queueing.
    pub done: f64,
    /// With the latencies alone.
    pub unloaded: f64,
}

impl Arrival {
    fn later(self, o: Arrival) -> Arrival {
        Arrival {
            done: self.done.max(o.done),
            unloaded: self.unloaded.max(o.unloaded),
        }
    }
}

/// The memory hierarchy of one device.
pub(crate) struct MemorySystem {
    /// Per compute unit: its vector cache and its misses in flight.
    near: Vec<(Level, InFlight)>,
    /// RDNA's shader-array caches, and how many compute units share one.
    arrays: Vec<Level>,
    per_array: usize,
    /// The L2 of each partition, and how many compute units share one.
    l2: Vec<Level>,
    per_partition: usize,
    mall: Option<Level>,
    dram: Port,
    dram_latency: f64,
    /// The vector cache's line size: the unit every request moves.
    line_bytes: u64,
    /// The L2's line size: what a miss in every cache reads from DRAM.
    fill_bytes: u64,
    /// DRAM bytes moved.
    pub dram_bytes: u64,
}

impl MemorySystem {
    /// The hierarchy of `d`, empty.
    pub fn new(d: &Device) -> MemorySystem {
        let cus = d.compute_units as usize;
        let (arrays, per_array) = match d.array_cache {
            Some((c, per)) => {
                let per = per.max(1) as usize;
                (
                    (0..cus.div_ceil(per)).map(|_| Level::new(&c)).collect(),
                    per,
                )
            }
            None => (Vec::new(), cus.max(1)),
        };
        let partitions = d.l2_partitions.max(1) as usize;
        MemorySystem {
            near: (0..cus)
                .map(|_| {
                    let flight = InFlight {
                        returns: BinaryHeap::new(),
                        limit: d.misses_in_flight.max(1) as usize,
                    };
                    (Level::new(&d.l1), flight)
                })
                .collect(),
            arrays,
            per_array,
            l2: (0..partitions).map(|_| Level::new(&d.l2)).collect(),
            per_partition: cus.div_ceil(partitions),
            mall: d.mall.as_ref().map(Level::new),
            dram: Port::new(d.dram.bytes_per_second * d.dram.efficiency / (d.clock_mhz * 1e6)),
            dram_latency: d.dram.latency_ns * d.cycles_per_ns(),
            line_bytes: u64::from(d.l1.line),
            fill_bytes: u64::from(d.l1.line.max(d.l2.line)),
            dram_bytes: 0,
        }
    }

    /// The vector-cache lines (as line numbers) that the byte ranges `accesses` touch, each once.
    pub fn lines(&self, accesses: impl IntoIterator<Item = (u64, u32)>, out: &mut Vec<u64>) {
        out.clear();
        for (address, len) in accesses {
            let first = address / self.line_bytes;
            let last = (address + u64::from(len.max(1)) - 1) / self.line_bytes;
            out.extend(first..=last);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Reads line `line` for compute unit `cu`, asked at cycle `at`.
    pub fn load(&mut self, cu: usize, line: u64, at: f64) -> Arrival {
        let bytes = self.line_bytes as f64;
        let (near, flight) = &mut self.near[cu];
        let start = near.port.serve(at, bytes);
        let unloaded = at + near.latency;
        if let Lookup::Hit(ready) = near.tags.lookup(line) {
            return Arrival {
                done: (start + near.latency).max(ready),
                unloaded,
            };
        }
        let leave = flight.admit(start);
        let arrival = self.below(cu, line, leave, at);
        let (near, flight) = &mut self.near[cu];
        near.tags.filled(line, arrival.done);
        flight.push(arrival.done);
        arrival
    }

    /// Writes line `line` for compute unit `cu` at cycle `at`: through the vector cache to the
    /// L2, which acknowledges it and holds the line until it is replaced or the kernel ends
    /// (partial stores to one line then reach DRAM once).
    pub fn store(&mut self, cu: usize, line: u64, at: f64) -> Arrival {
        let bytes = self.line_bytes as f64;
        let (near, _) = &mut self.near[cu];
        let start = near.port.serve(at, bytes);
        let l2 = &mut self.l2[cu / self.per_partition];
        let reach = l2.port.serve(start, bytes);
        let tag = l2.tags.line_of(line * self.line_bytes);
        let latency = l2.latency;
        if let Lookup::Miss { writeback } = l2.tags.lookup(tag) {
            l2.tags.filled(tag, reach + latency);
            if writeback {
                self.write_back(reach);
            }
        }
        self.l2[cu / self.per_partition].tags.stored(tag);
        Arrival {
            done: reach + latency,
            unloaded: at + latency,
        }
    }

    /// Writes a replaced L2 line back to DRAM, from cycle `at`.
    fn write_back(&mut self, at: f64) {
        self.dram.serve(at, self.fill_bytes as f64);
        self.dram_bytes += self.fill_bytes;
    }

    /// Writes every L2 line still holding stores back to DRAM at the kernel's end `at` (its
    /// release to the device); returns when DRAM has taken them and everything before.
    pub fn flush(&mut self, at: f64) -> f64 {
        let dirty: u64 = self.l2.iter().map(|l| l.tags.dirty_lines()).sum();
        if dirty > 0 {
            self.dram.serve(at, (dirty * self.fill_bytes) as f64);
            self.dram_bytes += dirty * self.fill_bytes;
        }
        self.dram.free.max(at)
    }

    /// The levels below the vector cache for a miss of `line` leaving `cu` at `leave` (first
    /// asked at `asked`).
    fn below(&mut self, cu: usize, line: u64, leave: f64, asked: f64) -> Arrival {
        let bytes = self.line_bytes as f64;
        let address = line * self.line_bytes;
        let mut t = leave;
        let mut filled: [Option<u64>; 3] = [None; 3];
        let levels: [Option<&mut Level>; 3] = {
            let (arrays, per_array) = (&mut self.arrays, self.per_array);
            let array = arrays.get_mut(cu / per_array);
            let l2 = self.l2.get_mut(cu / self.per_partition);
            [array, l2, self.mall.as_mut()]
        };
        let mut hit = None;
        let mut written_back = false;
        for (k, level) in levels.into_iter().enumerate() {
            let Some(level) = level else { continue };
            t = level.port.serve(t, bytes);
            let tag = level.tags.line_of(address);
            match level.tags.lookup(tag) {
                Lookup::Hit(ready) => {
                    hit = Some(Arrival {
                        done: (t + level.latency).max(ready),
                        unloaded: asked + level.latency,
                    });
                    break;
                }
                Lookup::Miss { writeback } => {
                    filled[k] = Some(tag);
                    if writeback {
                        written_back = true;
                    }
                }
            }
        }
        if written_back {
            self.write_back(t);
        }
        let arrival = hit.unwrap_or_else(|| {
            let start = self.dram.serve(t, self.fill_bytes as f64);
            self.dram_bytes += self.fill_bytes;
            Arrival {
                done: start + self.dram_latency,
                unloaded: asked + self.dram_latency,
            }
        });
        for (k, tag) in filled.into_iter().enumerate() {
            let Some(tag) = tag else { continue };
            let level = match k {
                0 => self.arrays.get_mut(cu / self.per_array),
                1 => self.l2.get_mut(cu / self.per_partition),
                _ => self.mall.as_mut(),
            };
            if let Some(level) = level {
                level.tags.filled(tag, arrival.done);
            }
        }
        arrival
    }

    /// Reads the lines `lines` for `cu` at `at`: when the last arrives.
    pub fn load_all(&mut self, cu: usize, lines: &[u64], at: f64) -> Option<Arrival> {
        lines
            .iter()
            .map(|&l| self.load(cu, l, at))
            .reduce(Arrival::later)
    }

    /// Writes the lines `lines` for `cu` at `at`: when the last is acknowledged.
    pub fn store_all(&mut self, cu: usize, lines: &[u64], at: f64) -> Option<Arrival> {
        lines
            .iter()
            .map(|&l| self.store(cu, l, at))
            .reduce(Arrival::later)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::devices::Device;

    fn mi300x() -> &'static Device {
        Device::by_name("MI300X").unwrap()
    }

    #[test]
    fn a_cold_line_comes_from_dram_and_a_second_read_hits_the_vector_cache() {
        let d = mi300x();
        let mut m = MemorySystem::new(d);
        let cold = m.load(0, 7, 0.0);
        let dram = d.dram.latency_ns * d.cycles_per_ns();
        assert!((cold.unloaded - dram).abs() < 1e-9, "{cold:?}");
        assert!(cold.done >= cold.unloaded);
        let again = m.load(0, 7, cold.done);
        assert_eq!(again.unloaded, cold.done + f64::from(d.l1.latency));
        // Another CU of the same partition finds it in the L2.
        let other = m.load(1, 7, cold.done);
        assert_eq!(other.unloaded, cold.done + f64::from(d.l2.latency));
        assert_eq!(m.dram_bytes, u64::from(d.l1.line));
    }

    #[test]
    fn a_miss_reads_a_whole_l2_line_so_its_neighbour_in_the_line_hits_the_l2() {
        let d = Device::by_name("MI210").unwrap();
        assert_eq!((d.l1.line, d.l2.line), (64, 128));
        let mut m = MemorySystem::new(d);
        let first = m.load(0, 10, 0.0);
        let neighbour = m.load(0, 11, 0.0);
        assert_eq!(m.dram_bytes, 128);
        assert!(neighbour.unloaded < first.unloaded);
        assert!(neighbour.done >= first.done);
    }

    #[test]
    fn dram_bandwidth_bounds_a_stream_of_misses() {
        let d = mi300x();
        let mut m = MemorySystem::new(d);
        let lines = 200_000u64;
        let mut last: f64 = 0.0;
        for l in 0..lines {
            last = last.max(m.load((l % 304) as usize, l, 0.0).done);
        }
        let bytes = (lines * u64::from(d.l1.line)) as f64;
        let sustained = d.dram.bytes_per_second * d.dram.efficiency;
        let bound = bytes / (sustained / (d.clock_mhz * 1e6));
        assert!(last >= bound, "{last} < {bound}");
        assert!(
            last < bound * 1.05 + d.dram.latency_ns * 3.0,
            "{last} vs {bound}"
        );
    }
}
