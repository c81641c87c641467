//! The devices the timing model knows: every constant of the model, per product, with where it
//! comes from.
//!
//! Counts, clocks, cache sizes and peak bandwidths are AMD's published figures (product pages,
//! the ROCm GPU specification table, the CDNA whitepapers). Latencies are published
//! pointer-chase measurements (MT4G's results for MI300X and MI210, Chips and Cheese's for
//! MI300X's Infinity Cache and the RX 7900 XTX); a device without its own takes its family's,
//! which its doc says. Sustained DRAM efficiency is calibrated on one published read-bandwidth
//! measurement per family and validated against others (`docs/performance.md`). What no public
//! source states (misses a CU keeps in flight, RDNA's vector-cache latencies) is the model's
//! choice, and marked so.

use crate::target::Target;

/// One cache level as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheLevel {
    /// Capacity of one instance in bytes.
    pub bytes: u64,
    /// Ways per set.
    pub ways: u32,
    /// Line size in bytes.
    pub line: u32,
    /// Load-to-use latency of a hit, in cycles of the engine clock.
    pub latency: u32,
    /// Bytes one instance returns per engine cycle.
    pub bytes_per_clock: f64,
}

/// DRAM (HBM or GDDR).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dram {
    /// Peak bandwidth in bytes per second.
    pub bytes_per_second: f64,
    /// The fraction of the peak a stream of reads sustains (refresh, bank and turnaround
    /// overheads the model does not simulate).
    pub efficiency: f64,
    /// Load-to-use latency of a miss in every cache, in nanoseconds.
    pub latency_ns: f64,
}

/// A product: its compute units, clocks, caches and memory, the constants of the timing model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Device {
    /// The product name (`MI300X`).
    pub name: &'static str,
    /// Its processor.
    pub target: Target,
    /// Compute units (CDNA) or WGPs (RDNA, two CUs sharing an LDS: the unit a workgroup in WGP
    /// mode runs on).
    pub compute_units: u32,
    /// Groups of compute units with an L2 of their own (MI300's and MI350's XCDs); 1 elsewhere.
    pub l2_partitions: u32,
    /// SIMDs per compute unit (per WGP on RDNA).
    pub simds: u32,
    /// Peak engine clock in MHz.
    pub clock_mhz: f64,
    /// The engine clock in MHz under a dense matrix load: the power manager lowers the clock
    /// while the matrix cores run, and a dispatch's estimate takes a clock between this (at
    /// [`MAF_MATRIX_USE`] of the matrix cores' cycles and above) and the peak (none), in
    /// proportion. `None`: no published figure, the peak clock throughout.
    pub dense_matrix_clock_mhz: Option<f64>,
    /// The vector cache nearest the SIMDs: CDNA's L1 per CU, RDNA's L0 (one per CU, so the
    /// WGP's two are modelled as one of twice the size and bandwidth).
    pub l1: CacheLevel,
    /// RDNA3's L1, shared by the WGPs of a shader array, and the WGPs per array; `None` on CDNA
    /// and RDNA4 (which has none).
    pub array_cache: Option<(CacheLevel, u32)>,
    /// The L2 of one partition.
    pub l2: CacheLevel,
    /// The memory-side cache (MI300's and MI350's Infinity Cache, RDNA's), shared by the
    /// whole device.
    pub mall: Option<CacheLevel>,
    /// DRAM.
    pub dram: Dram,
    /// LDS bytes per engine cycle per compute unit.
    pub lds_bytes_per_clock: u32,
    /// LDS load-to-use latency in cycles.
    pub lds_latency: u32,
    /// Scalar-cache load latency in cycles (scalar loads are modelled as hits).
    pub scalar_latency: u32,
    /// Cache-line misses a compute unit keeps in flight at most (the model's choice: no public
    /// figure exists).
    pub misses_in_flight: u32,
    /// Where the figures come from.
    pub sources: &'static [&'static str],
}

/// The share of the matrix cores' cycles AMD's max-achievable-FLOPs GEMMs keep busy (their
/// "software efficiency", up to 94 %; MI300X's BF16 figure, 708 TFLOP/s at a median 1207 MHz,
/// is 94.2 % of the matrix peak at that clock): the matrix use at which a device runs at its
/// [`Device::dense_matrix_clock_mhz`].
pub const MAF_MATRIX_USE: f64 = 0.94;

/// AMD's max-achievable FLOPs: hipBLASLt GEMMs on normally distributed data, with the median
/// engine clock during each (MI300X BF16 at 1207 MHz, FP16 1115, FP8 1230; MI325X BF16 at
/// 1447 MHz, FP16 1354, FP8 1464).
const AMD_MAF: &str = "https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-part2/README.html";

/// The dense-matrix clock of MI350X and MI355X, which AMD has not published: the model's
/// choice is MI325X's ratio to its peak (1447 of 2100 MHz; MI325X and MI350X both take
/// 1000 W, MI355X 1400 W, so MI355X's is likely low).
const fn cdna4_dense_clock(peak_mhz: f64) -> f64 {
    peak_mhz * 1447.0 / 2100.0
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// The ROCm GPU specification table: CU counts, cache sizes and lines, LDS sizes.
const ROCM_SPECS: &str = "https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html";
/// MT4G's pointer-chase results (L1, L2, DRAM, scalar cache and LDS latency; read bandwidths).
const MT4G_MI300X: &str =
    "https://github.com/caps-tum/mt4g/tree/main/sample_results (AMD Instinct MI300X VF)";
const MT4G_MI210: &str =
    "https://github.com/caps-tum/mt4g/tree/main/sample_results (AMD Instinct MI210)";
/// Chips and Cheese on MI300X (Infinity Cache latency) and CDNA3 (L1 of 128 B/clk, L2 slices of
/// 128 B/clk, Infinity Cache slices of 64 B/clk).
const CNC_MI300X: &str = "https://chipsandcheese.com/p/testing-amds-giant-mi300x";
const CNC_CDNA3: &str = "https://chipsandcheese.com/p/amds-cdna-3-compute-architecture";
/// Chips and Cheese on CDNA4 (LDS of 160 KB at 256 B/clk, same L1 and L2 as CDNA3).
const CNC_CDNA4: &str = "https://chipsandcheese.com/p/amds-cdna-4-architecture-announcement";
/// Chips and Cheese on the RX 7900 XTX's caches and its Infinity Cache and DRAM latency.
const CNC_RDNA3: &str =
    "https://chipsandcheese.com/p/microbenchmarking-amds-rdna-3-graphics-architecture";
const CNC_RDNA3_LATENCY: &str =
    "https://chipsandcheese.com/p/latency-testing-is-hard-rdna-3-power-saving";
/// Chips and Cheese on RDNA4 (no L1; L2 of 2 MB per shader engine).
const CNC_RDNA4: &str = "https://chipsandcheese.com/p/amds-rdna4-architecture-video";
/// te42kyfo's gpu-benches: MI210 latency and stream bandwidth.
const GPU_BENCHES: &str = "https://github.com/te42kyfo/gpu-benches";
/// The product pages.
const AMD_MI210: &str = "https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html";
const AMD_MI250X: &str = "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html";
const AMD_MI300X: &str = "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html";
const AMD_MI325X: &str = "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html";
const AMD_MI350X: &str = "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html";
const AMD_MI355X: &str = "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html";
const AMD_7900XTX: &str = "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html";
const AMD_W7900: &str =
    "https://www.amd.com/en/products/graphics/workstations/radeon-pro/w7900.html";
const AMD_9070XT: &str = "https://www.amd.com/en/products/graphics/desktops/radeon/9000-series/amd-radeon-rx-9070xt.html";

/// CDNA2 (MI210, MI250X's GCD): L1 16 KB of 64 B lines at 64 B/clk and 124 cycles (MT4G);
/// L2 8 MB, 302 cycles (MT4G), 32 channels of 128 B/clk (MT4G's 4.3 TB/s read exceeds what 64
/// B/clk would give).
const CDNA2_L1: CacheLevel = CacheLevel {
    bytes: 16 * KIB,
    ways: 4,
    line: 64,
    latency: 124,
    bytes_per_clock: 64.0,
};
const CDNA2_L2: CacheLevel = CacheLevel {
    bytes: 8 * MIB,
    ways: 16,
    line: 128,
    latency: 302,
    bytes_per_clock: 4096.0,
};
/// CDNA2 DRAM: MT4G's pointer chase, 741 cycles at 1.7 GHz; efficiency from gpu-benches' read
/// stream (1366 GB/s of 1638.4).
const CDNA2_DRAM_LATENCY_NS: f64 = 436.0;
const CDNA2_DRAM_EFFICIENCY: f64 = 0.834;

/// CDNA3 and CDNA4: L1 32 KB of 128 B lines at 128 B/clk, 116 cycles (MT4G, MI300X); L2 4 MB
/// per XCD of 16 slices at 128 B/clk, 288 cycles (MT4G); Infinity Cache 256 MB of 128 slices at
/// 64 B/clk, 218 ns (Chips and Cheese).
const CDNA3_L1: CacheLevel = CacheLevel {
    bytes: 32 * KIB,
    ways: 8,
    line: 128,
    latency: 116,
    bytes_per_clock: 128.0,
};
const CDNA3_L2: CacheLevel = CacheLevel {
    bytes: 4 * MIB,
    ways: 16,
    line: 128,
    latency: 288,
    bytes_per_clock: 2048.0,
};
/// The Infinity Cache at MI300X's 2.1 GHz: 218 ns is 458 cycles.
const CDNA3_MALL: CacheLevel = CacheLevel {
    bytes: 256 * MIB,
    ways: 16,
    line: 64,
    latency: 458,
    bytes_per_clock: 8192.0,
};
/// CDNA3 DRAM: MT4G's pointer chase, 900 cycles at 2.1 GHz; efficiency from MT4G's read
/// bandwidth (3.96 TB/s of 5.3).
const CDNA3_DRAM_LATENCY_NS: f64 = 428.0;
const CDNA3_DRAM_EFFICIENCY: f64 = 0.747;

/// RDNA3's and RDNA4's L0: 32 KB per CU of 128 B lines at 128 B/clk (Chips and Cheese), two per
/// WGP. Its latency is the model's choice (published only as a chart).
const RDNA_L0: CacheLevel = CacheLevel {
    bytes: 64 * KIB,
    ways: 32,
    line: 128,
    latency: 60,
    bytes_per_clock: 256.0,
};
/// RDNA3's L1: 256 KB per shader array (Chips and Cheese); latency and bandwidth are the
/// model's choice.
const RDNA3_L1: CacheLevel = CacheLevel {
    bytes: 256 * KIB,
    ways: 16,
    line: 128,
    latency: 120,
    bytes_per_clock: 256.0,
};
/// RDNA DRAM efficiency: no published GDDR6 stream figure was found; the model takes CDNA2's.
const RDNA_DRAM_EFFICIENCY: f64 = 0.834;
/// RDNA DRAM latency: Chips and Cheese's vector pointer chase on the RX 7900 XTX (234.55 ns);
/// RDNA4's is taken to be the same (no published chase).
const RDNA_DRAM_LATENCY_NS: f64 = 234.6;

/// A CDNA2 device (MI210, a GCD of MI250X): its caches and latencies are MI210's.
const fn cdna2(name: &'static str, compute_units: u32, sources: &'static [&'static str]) -> Device {
    Device {
        name,
        target: Target::Gfx90a,
        compute_units,
        l2_partitions: 1,
        simds: 4,
        clock_mhz: 1700.0,
        dense_matrix_clock_mhz: None,
        l1: CDNA2_L1,
        array_cache: None,
        l2: CDNA2_L2,
        mall: None,
        dram: Dram {
            bytes_per_second: 1.6384e12,
            efficiency: CDNA2_DRAM_EFFICIENCY,
            latency_ns: CDNA2_DRAM_LATENCY_NS,
        },
        lds_bytes_per_clock: 128,
        lds_latency: 48,
        scalar_latency: 48,
        misses_in_flight: 256,
        sources,
    }
}

/// A CDNA3 or CDNA4 device of 8 XCDs: its caches and latencies are MI300X's (the same L1, L2
/// and Infinity Cache design; no chase of the others is published), its LDS as wide as given,
/// its clocks the peak and the dense-matrix one.
const fn cdna3(
    name: &'static str,
    target: Target,
    compute_units: u32,
    (clock_mhz, dense_matrix_clock_mhz): (f64, f64),
    dram_bytes_per_second: f64,
    lds_bytes_per_clock: u32,
    sources: &'static [&'static str],
) -> Device {
    Device {
        name,
        target,
        compute_units,
        l2_partitions: 8,
        simds: 4,
        clock_mhz,
        dense_matrix_clock_mhz: Some(dense_matrix_clock_mhz),
        l1: CDNA3_L1,
        array_cache: None,
        l2: CDNA3_L2,
        mall: Some(CDNA3_MALL),
        dram: Dram {
            bytes_per_second: dram_bytes_per_second,
            efficiency: CDNA3_DRAM_EFFICIENCY,
            latency_ns: CDNA3_DRAM_LATENCY_NS,
        },
        lds_bytes_per_clock,
        lds_latency: 52,
        scalar_latency: 48,
        misses_in_flight: 256,
        sources,
    }
}

/// An RDNA3 device (Navi 31): 48 WGPs of four SIMD32, four WGPs per shader array.
const fn rdna3(
    name: &'static str,
    clock_mhz: f64,
    dram_bytes_per_second: f64,
    sources: &'static [&'static str],
) -> Device {
    Device {
        name,
        target: Target::Gfx1100,
        compute_units: 48,
        l2_partitions: 1,
        simds: 4,
        clock_mhz,
        dense_matrix_clock_mhz: None,
        l1: RDNA_L0,
        array_cache: Some((RDNA3_L1, 4)),
        l2: RDNA3_L2,
        mall: Some(RDNA3_MALL),
        dram: Dram {
            bytes_per_second: dram_bytes_per_second,
            efficiency: RDNA_DRAM_EFFICIENCY,
            latency_ns: RDNA_DRAM_LATENCY_NS,
        },
        lds_bytes_per_clock: 128,
        lds_latency: 31,
        scalar_latency: 38,
        misses_in_flight: 256,
        sources,
    }
}

/// Every device the model estimates for, grouped by processor.
pub const DEVICES: [Device; 9] = [
    cdna2(
        "MI210",
        104,
        &[AMD_MI210, ROCM_SPECS, MT4G_MI210, GPU_BENCHES],
    ),
    cdna2(
        "MI250X",
        110,
        &[AMD_MI250X, ROCM_SPECS, MT4G_MI210, GPU_BENCHES],
    ),
    cdna3(
        "MI300X",
        Target::Gfx942,
        304,
        (2100.0, 1207.0),
        5.3e12,
        128,
        &[
            AMD_MI300X,
            ROCM_SPECS,
            MT4G_MI300X,
            CNC_MI300X,
            CNC_CDNA3,
            AMD_MAF,
        ],
    ),
    cdna3(
        "MI325X",
        Target::Gfx942,
        304,
        (2100.0, 1447.0),
        6.0e12,
        128,
        &[
            AMD_MI325X,
            ROCM_SPECS,
            MT4G_MI300X,
            CNC_MI300X,
            CNC_CDNA3,
            AMD_MAF,
        ],
    ),
    cdna3(
        "MI350X",
        Target::Gfx950,
        256,
        (2200.0, cdna4_dense_clock(2200.0)),
        8.0e12,
        256,
        &[AMD_MI350X, ROCM_SPECS, CNC_CDNA4, MT4G_MI300X, AMD_MAF],
    ),
    cdna3(
        "MI355X",
        Target::Gfx950,
        256,
        (2400.0, cdna4_dense_clock(2400.0)),
        8.0e12,
        256,
        &[AMD_MI355X, ROCM_SPECS, CNC_CDNA4, MT4G_MI300X, AMD_MAF],
    ),
    rdna3(
        "RX 7900 XTX",
        2500.0,
        0.96e12,
        &[AMD_7900XTX, ROCM_SPECS, CNC_RDNA3, CNC_RDNA3_LATENCY],
    ),
    rdna3(
        "Radeon PRO W7900",
        2495.0,
        0.864e12,
        &[AMD_W7900, ROCM_SPECS, CNC_RDNA3, CNC_RDNA3_LATENCY],
    ),
    Device {
        name: "RX 9070 XT",
        target: Target::Gfx1201,
        compute_units: 32,
        l2_partitions: 1,
        simds: 4,
        clock_mhz: 2970.0,
        dense_matrix_clock_mhz: None,
        l1: RDNA_L0,
        array_cache: None,
        l2: CacheLevel {
            bytes: 8 * MIB,
            ways: 16,
            line: 128,
            latency: 300,
            bytes_per_clock: 4096.0,
        },
        mall: Some(CacheLevel {
            bytes: 64 * MIB,
            ways: 16,
            line: 64,
            latency: 450,
            bytes_per_clock: 1024.0,
        }),
        dram: Dram {
            bytes_per_second: 0.6446e12,
            efficiency: RDNA_DRAM_EFFICIENCY,
            latency_ns: RDNA_DRAM_LATENCY_NS,
        },
        lds_bytes_per_clock: 128,
        lds_latency: 31,
        scalar_latency: 38,
        misses_in_flight: 256,
        sources: &[AMD_9070XT, ROCM_SPECS, CNC_RDNA4],
    },
];

/// RDNA3's L2: 6 MB, 16-way (Chips and Cheese); latency and bandwidth the model's choice.
const RDNA3_L2: CacheLevel = CacheLevel {
    bytes: 6 * MIB,
    ways: 16,
    line: 128,
    latency: 300,
    bytes_per_clock: 2048.0,
};

/// RDNA3's Infinity Cache: 96 MB; 150.3 ns from a vector load (Chips and Cheese) is 376 cycles at
/// 2.5 GHz; bandwidth the model's choice.
const RDNA3_MALL: CacheLevel = CacheLevel {
    bytes: 96 * MIB,
    ways: 16,
    line: 64,
    latency: 376,
    bytes_per_clock: 1024.0,
};

impl Device {
    /// The device called `name` (case and spaces ignored: `mi300x`, `rx7900xtx`).
    pub fn by_name(name: &str) -> Option<&'static Device> {
        let squash = |s: &str| s.replace(' ', "").to_lowercase();
        DEVICES.iter().find(|d| squash(d.name) == squash(name))
    }

    /// The devices of `target`, the first being the one its builds are measured on by default.
    pub fn of_target(target: Target) -> impl Iterator<Item = &'static Device> {
        DEVICES.iter().filter(move |d| d.target == target)
    }

    /// Engine cycles in one nanosecond at the peak clock.
    pub fn cycles_per_ns(&self) -> f64 {
        self.clock_mhz / 1000.0
    }

    /// The engine clock in MHz of a dispatch that kept `matrix_use` of the matrix cores' cycles
    /// busy: the peak clock without matrix work, the dense-matrix clock from
    /// [`MAF_MATRIX_USE`] on, in proportion between.
    ///
    /// ```
    /// use iron_emu::timing::Device;
    ///
    /// let mi300x = Device::by_name("MI300X").unwrap();
    /// assert_eq!(mi300x.clock_under_matrix_use(0.0), 2100.0); // a copy kernel
    /// assert_eq!(mi300x.clock_under_matrix_use(0.95), 1207.0); // a tuned GEMM
    /// ```
    pub fn clock_under_matrix_use(&self, matrix_use: f64) -> f64 {
        match self.dense_matrix_clock_mhz {
            Some(dense) => {
                let share = (matrix_use / MAF_MATRIX_USE).clamp(0.0, 1.0);
                self.clock_mhz - (self.clock_mhz - dense) * share
            }
            None => self.clock_mhz,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_a_device_and_names_are_found_loosely() {
        for t in Target::ALL {
            assert!(Device::of_target(t).count() > 0, "{t}");
        }
        assert_eq!(
            Device::by_name("rx7900xtx").map(|d| d.target),
            Some(Target::Gfx1100)
        );
        assert!(Device::by_name("MI400").is_none());
    }

    #[test]
    fn every_constant_is_positive_and_every_line_a_power_of_two() {
        for d in DEVICES {
            let mut levels = vec![d.l1, d.l2];
            levels.extend(d.mall);
            levels.extend(d.array_cache.map(|(c, _)| c));
            for c in levels {
                assert!(c.line.is_power_of_two() && c.ways > 0, "{}", d.name);
                assert!(c.bytes % u64::from(c.line * c.ways) == 0, "{}", d.name);
                assert!(c.bytes_per_clock > 0.0 && c.latency > 0, "{}", d.name);
            }
            assert!(d.dram.bytes_per_second > 0.0 && d.dram.latency_ns > 0.0);
            assert!(
                d.dram.efficiency > 0.5 && d.dram.efficiency <= 1.0,
                "{}",
                d.name
            );
            assert!(d.compute_units % d.l2_partitions == 0, "{}", d.name);
            assert!(!d.sources.is_empty());
            if let Some(dense) = d.dense_matrix_clock_mhz {
                assert!(dense > 0.0 && dense < d.clock_mhz, "{}", d.name);
            }
        }
    }

    #[test]
    fn the_clock_falls_with_matrix_use_to_the_dense_clock() {
        let mi300x = Device::by_name("MI300X").unwrap();
        assert_eq!(mi300x.clock_under_matrix_use(0.0), 2100.0);
        assert_eq!(mi300x.clock_under_matrix_use(MAF_MATRIX_USE), 1207.0);
        assert_eq!(mi300x.clock_under_matrix_use(1.0), 1207.0);
        let half = mi300x.clock_under_matrix_use(MAF_MATRIX_USE / 2.0);
        assert!((half - (2100.0 + 1207.0) / 2.0).abs() < 1e-9, "{half}");
        let xtx = Device::by_name("RX 7900 XTX").unwrap();
        assert_eq!(xtx.clock_under_matrix_use(1.0), xtx.clock_mhz);
    }
}
