//! What a device is and can do: its target id, its limits, and the published peaks of its
//! flagship product for roofline estimates.

use crate::code_object::TargetId;

/// A device's identity and the limits launches are checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Marketing name, e.g. "AMD Instinct MI355X" (free text; the emulator names itself).
    pub name: String,
    /// Target id with the device's feature settings, e.g. `gfx942:sramecc+:xnack-`.
    pub target: TargetId,
    /// The device's native wave size (32 on RDNA, 64 on CDNA); code objects built for the other
    /// size on RDNA still run.
    pub wave_size: u32,
    /// Compute units.
    pub compute_units: u32,
    /// LDS bytes one workgroup may use, static and dynamic together.
    pub lds_per_workgroup: u32,
    /// Largest workgroup the device runs, in work-items.
    pub max_threads_per_block: u32,
    /// Device memory in bytes.
    pub global_memory: u64,
}

impl DeviceProperties {
    /// The published peaks of the flagship product of this device's processor, when it is one
    /// of the supported targets.
    pub fn peak(&self) -> Option<&'static PeakRates> {
        peak_rates(&self.target.processor)
    }
}

/// Published peak rates of one product, dense (no sparsity), for roofline estimates.
///
/// Peak bandwidth computed from memory clock and bus width undercounts HBM3 and GDDR6, so these
/// are the vendor's published figures, per product.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakRates {
    /// Processor name, e.g. `gfx950`.
    pub processor: &'static str,
    /// The product the figures are for; other products with the same processor differ.
    pub product: &'static str,
    /// Memory bandwidth in bytes per second.
    pub memory_bandwidth: f64,
    /// FP16/BF16 matrix throughput in FLOP/s.
    pub matrix_f16: Option<f64>,
    /// FP8 matrix throughput in FLOP/s.
    pub matrix_fp8: Option<f64>,
    /// MXFP4 matrix throughput in FLOP/s.
    pub matrix_fp4: Option<f64>,
    /// Where the figures come from.
    pub source: &'static str,
}

const TERA: f64 = 1e12;
const PETA: f64 = 1e15;

/// Published peaks of the flagship product of each supported processor.
pub const PEAK_RATES: &[PeakRates] = &[
    PeakRates {
        processor: "gfx950",
        product: "AMD Instinct MI355X",
        memory_bandwidth: 8.0 * TERA,
        matrix_f16: Some(2.5 * PETA),
        matrix_fp8: Some(5.0 * PETA),
        matrix_fp4: Some(10.0 * PETA),
        source: "AMD Instinct MI355X specifications (HBM3E 8 TB/s; dense matrix FP16 2.5, FP8 5, MXFP4 10 PFLOP/s)",
    },
    PeakRates {
        processor: "gfx942",
        product: "AMD Instinct MI300X",
        memory_bandwidth: 5.3 * TERA,
        matrix_f16: Some(1.31 * PETA),
        matrix_fp8: Some(2.61 * PETA),
        matrix_fp4: None,
        source: "AMD Instinct MI300X data sheet (HBM3 5.3 TB/s; dense matrix FP16 1307, FP8 2615 TFLOP/s)",
    },
    PeakRates {
        processor: "gfx90a",
        product: "AMD Instinct MI250X",
        memory_bandwidth: 3.2 * TERA,
        matrix_f16: Some(383.0 * TERA),
        matrix_fp8: None,
        matrix_fp4: None,
        source: "AMD Instinct MI250X data sheet (HBM2e 3.2 TB/s; matrix FP16/BF16 383 TFLOP/s)",
    },
    PeakRates {
        processor: "gfx1100",
        product: "AMD Radeon RX 7900 XTX",
        memory_bandwidth: 960.0e9,
        matrix_f16: Some(123.0 * TERA),
        matrix_fp8: None,
        matrix_fp4: None,
        source: "AMD Radeon RX 7900 XTX specifications (GDDR6 960 GB/s; FP16 123 TFLOP/s)",
    },
    PeakRates {
        processor: "gfx1201",
        product: "AMD Radeon RX 9070 XT",
        memory_bandwidth: 640.0e9,
        matrix_f16: None,
        matrix_fp8: None,
        matrix_fp4: None,
        source: "AMD Radeon RX 9070 XT specifications (GDDR6 640 GB/s; matrix peaks not confirmed)",
    },
];

/// The published peaks for a processor name (`gfx950`, ...), if it is in [`PEAK_RATES`].
pub fn peak_rates(processor: &str) -> Option<&'static PeakRates> {
    PEAK_RATES.iter().find(|rates| rates.processor == processor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_processor_has_one_row_and_others_none() {
        for processor in ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"] {
            let rows = PEAK_RATES
                .iter()
                .filter(|r| r.processor == processor)
                .count();
            assert_eq!(rows, 1, "{processor}");
        }
        assert_eq!(PEAK_RATES.len(), 5);
        assert!(peak_rates("gfx908").is_none());
        assert_eq!(peak_rates("gfx950").unwrap().memory_bandwidth, 8.0e12);
        assert_eq!(peak_rates("gfx1201").unwrap().memory_bandwidth, 640e9);
        assert!(peak_rates("gfx1201").unwrap().matrix_f16.is_none());
    }

    #[test]
    fn a_device_finds_its_row_whatever_its_feature_settings() {
        let properties = DeviceProperties {
            name: "test".into(),
            target: TargetId::parse("gfx942:sramecc+:xnack-").unwrap(),
            wave_size: 64,
            compute_units: 304,
            lds_per_workgroup: 65536,
            max_threads_per_block: 1024,
            global_memory: 192 << 30,
        };
        let peak = properties.peak().unwrap();
        assert_eq!(peak.product, "AMD Instinct MI300X");
        assert_eq!(peak.memory_bandwidth, 5.3e12);
        assert_eq!(peak.matrix_fp8, Some(2.61e15));
    }
}
