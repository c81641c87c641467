//! The one table of published device peaks the roofline uses: memory bandwidth and the FLOP
//! rates of each kind of arithmetic, per product, with the page each number comes from.
//!
//! Rates are AMD's peak theoretical figures for dense math (no structured sparsity), at the
//! boost clock; bandwidth is peak theoretical memory bandwidth. A kind a product has no
//! hardware for (FP8 on MI200 or RDNA3, MX formats before MI350) is `None`: kernels of that kind
//! run there on a slower path, and [`Device::peak_flops`] falls back to the rate of that path.

/// The kind of arithmetic whose peak rate bounds a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Math {
    /// FP32 vector ALU.
    Vector,
    /// FP16/BF16 matrix cores.
    Matrix16,
    /// FP8 matrix cores.
    Matrix8,
    /// MXFP6/MXFP4 block-scaled matrix cores.
    MatrixFp4,
}

/// One product and its published peaks.
#[derive(Clone, Copy, Debug)]
pub struct Device {
    /// The product name.
    pub name: &'static str,
    /// Its gfx processor.
    pub gfx: &'static str,
    /// Peak memory bandwidth in bytes per second.
    pub bandwidth: f64,
    /// Peak FP32 vector FLOP/s (non-matrix).
    pub fp32_vector: f64,
    /// Peak FP16/BF16 matrix FLOP/s.
    pub matrix16: f64,
    /// Peak FP8 matrix FLOP/s, where the hardware has FP8 matrix instructions.
    pub matrix8: Option<f64>,
    /// Peak MXFP6/MXFP4 matrix FLOP/s, where the hardware has block-scaled matrix instructions.
    pub matrix_fp4: Option<f64>,
    /// Where the numbers are published.
    pub source: &'static str,
}

const T: f64 = 1e12;

/// Every device the report estimates for, grouped by gfx.
pub const DEVICES: [Device; 9] = [
    Device {
        name: "MI210",
        gfx: "gfx90a",
        bandwidth: 1.6384 * T,
        fp32_vector: 22.6 * T,
        matrix16: 181.0 * T,
        matrix8: None,
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html",
    },
    Device {
        name: "MI250X",
        gfx: "gfx90a",
        bandwidth: 3.2768 * T,
        fp32_vector: 47.9 * T,
        matrix16: 383.0 * T,
        matrix8: None,
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html",
    },
    Device {
        name: "MI300X",
        gfx: "gfx942",
        bandwidth: 5.3 * T,
        fp32_vector: 163.4 * T,
        matrix16: 1307.4 * T,
        matrix8: Some(2614.9 * T),
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
    },
    Device {
        name: "MI325X",
        gfx: "gfx942",
        bandwidth: 6.0 * T,
        fp32_vector: 163.4 * T,
        matrix16: 1307.4 * T,
        matrix8: Some(2614.9 * T),
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html",
    },
    Device {
        name: "MI350X",
        gfx: "gfx950",
        bandwidth: 8.0 * T,
        fp32_vector: 144.2 * T,
        matrix16: 2306.9 * T,
        matrix8: Some(4613.7 * T),
        matrix_fp4: Some(9227.5 * T),
        source: "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html",
    },
    Device {
        name: "MI355X",
        gfx: "gfx950",
        bandwidth: 8.0 * T,
        fp32_vector: 157.3 * T,
        matrix16: 2516.6 * T,
        matrix8: Some(5033.2 * T),
        matrix_fp4: Some(10066.3 * T),
        source: "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html",
    },
    Device {
        name: "RX 7900 XTX",
        gfx: "gfx1100",
        bandwidth: 0.96 * T,
        fp32_vector: 61.4 * T,
        matrix16: 122.8 * T,
        matrix8: None,
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html",
    },
    Device {
        name: "Radeon PRO W7900",
        gfx: "gfx1100",
        bandwidth: 0.864 * T,
        fp32_vector: 61.3 * T,
        matrix16: 122.6 * T,
        matrix8: None,
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/graphics/workstations/radeon-pro/w7900.html",
    },
    Device {
        name: "RX 9070 XT",
        gfx: "gfx1201",
        bandwidth: 0.6446 * T,
        fp32_vector: 48.7 * T,
        matrix16: 194.7 * T,
        matrix8: Some(389.3 * T),
        matrix_fp4: None,
        source: "https://www.amd.com/en/products/graphics/desktops/radeon/9000-series/amd-radeon-rx-9070xt.html",
    },
];

impl Device {
    /// The peak FLOP/s for arithmetic of kind `math` on this device: the kind's own rate, or,
    /// where the hardware lacks it, the rate of the path the library takes instead (FP8 and MX
    /// formats are decoded into 16-bit matrix math).
    pub fn peak_flops(&self, math: Math) -> f64 {
        match math {
            Math::Vector => self.fp32_vector,
            Math::Matrix16 => self.matrix16,
            Math::Matrix8 => self.matrix8.unwrap_or(self.matrix16),
            Math::MatrixFp4 => self.matrix_fp4.unwrap_or(self.matrix16),
        }
    }
}

/// The devices of `gfx`.
pub fn of_gfx(gfx: &str) -> impl Iterator<Item = &'static Device> {
    DEVICES.iter().filter(move |d| d.gfx == gfx)
}

/// The device called `name` (case and spaces ignored: `mi300x`, `rx7900xtx`).
pub fn by_name(name: &str) -> Option<&'static Device> {
    let squash = |s: &str| s.replace(' ', "").to_lowercase();
    DEVICES.iter().find(|d| squash(d.name) == squash(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_supported_gfx_has_a_device_and_every_rate_is_positive() {
        for gfx in iron_build::SUPPORTED {
            assert!(super::of_gfx(gfx.name).count() > 0, "{}", gfx.name);
        }
        for d in super::DEVICES {
            assert!(d.source.starts_with("https://www.amd.com/"), "{}", d.name);
            let rates = [d.bandwidth, d.fp32_vector, d.matrix16];
            assert!(rates.iter().all(|&r| r > 0.0), "{}", d.name);
            assert!(d.matrix16 > d.fp32_vector, "{}", d.name);
        }
    }

    #[test]
    fn every_device_has_a_timing_model_with_the_same_gfx_and_bandwidth() {
        for d in super::DEVICES {
            let model = iron_emu::timing::Device::by_name(d.name).expect(d.name);
            assert_eq!(model.target.name(), d.gfx, "{}", d.name);
            // The roofline's bandwidth is the whole product's; MI250X's model is one GCD.
            let gcds = if d.name == "MI250X" { 2.0 } else { 1.0 };
            let model_bandwidth = model.dram.bytes_per_second * gcds;
            assert!((model_bandwidth - d.bandwidth).abs() < 1e6, "{}", d.name);
        }
        assert_eq!(iron_emu::timing::DEVICES.len(), super::DEVICES.len());
    }

    #[test]
    fn devices_are_found_by_name_ignoring_case_and_spaces() {
        assert_eq!(super::by_name("rx7900xtx").map(|d| d.gfx), Some("gfx1100"));
        assert_eq!(super::by_name("MI355X").map(|d| d.gfx), Some("gfx950"));
        assert!(super::by_name("MI400").is_none());
    }

    #[test]
    fn missing_matrix_kinds_fall_back_to_the_decoding_path() {
        let mi210 = super::of_gfx("gfx90a").next().unwrap();
        assert_eq!(mi210.peak_flops(super::Math::Matrix8), mi210.matrix16);
        assert_eq!(mi210.peak_flops(super::Math::MatrixFp4), mi210.matrix16);
        let mi355 = super::DEVICES.iter().find(|d| d.name == "MI355X").unwrap();
        assert!(mi355.peak_flops(super::Math::MatrixFp4) > mi355.peak_flops(super::Math::Matrix8));
        let mi300 = super::of_gfx("gfx942").next().unwrap();
        assert_eq!(mi300.peak_flops(super::Math::MatrixFp4), mi300.matrix16);
        assert!(mi300.peak_flops(super::Math::Matrix8) > mi300.matrix16);
    }
}
