//! The roofline chart of one gfx as SVG: each device's roofs (bandwidth slope, FP32 vector and
//! 16-bit matrix ceilings) and every run as a point at its arithmetic intensity and the FLOP/s
//! its lower bound allows on the gfx's first device.

use super::devices::Device;
use super::kernels::KernelRow;
use anyhow::{Result, anyhow};
use plotters::prelude::*;
use std::path::Path;

/// Intensity (FLOP per byte) at which runs without arithmetic are drawn (a log axis has no 0).
const NO_FLOPS_INTENSITY: f64 = 1e-3;
/// The x axis: FLOP per byte.
const INTENSITY: std::ops::Range<f64> = 1e-3..1e4;
/// The y axis: FLOP/s.
const RATE: std::ops::Range<f64> = 1e8..3e16;

/// A run's place on the chart: intensity and attainable FLOP/s on `device`.
pub fn point(row: &KernelRow, device: &Device) -> Option<(f64, f64)> {
    let run = row.run.as_ref()?;
    let moved = (run.vector_bytes_read + run.bytes_written).max(1) as f64;
    let estimate = run.estimates.iter().find(|e| e.device == device.name)?;
    if run.flops == 0 {
        let y = NO_FLOPS_INTENSITY * device.bandwidth;
        return Some((NO_FLOPS_INTENSITY, y));
    }
    let x = (run.flops as f64 / moved).clamp(INTENSITY.start, INTENSITY.end);
    Some((x, estimate.attainable_flops.max(RATE.start)))
}

/// A distinct colour for series `i`.
fn colour(i: usize) -> PaletteColor<Palette99> {
    Palette99::pick(i)
}

/// An axis value in scientific notation, e.g. `1e12`.
fn scientific(v: &f64) -> String {
    format!("{v:.0e}")
}

/// Writes the chart of `gfx`'s `rows` to `path`, with the roofs of `devices`.
pub fn draw(gfx: &str, devices: &[&Device], rows: &[&KernelRow], path: &Path) -> Result<()> {
    let first = *devices
        .first()
        .ok_or_else(|| anyhow!("no device of {gfx} in the device table"))?;
    let root = SVGBackend::new(path, (1100, 750)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{gfx}: kernels on the roofline of {}", first.name),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(INTENSITY.log_scale(), RATE.log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("FLOP per byte moved (runs without FLOPs at 0.001)")
        .y_desc("FLOP/s")
        .x_label_formatter(&scientific)
        .y_label_formatter(&scientific)
        .draw()
        .map_err(plot_error)?;
    for (i, device) in devices.iter().enumerate() {
        let style = ShapeStyle::from(&colour(i)).stroke_width(2);
        for (ceiling, what) in [
            (device.fp32_vector, "FP32 vector"),
            (device.matrix16, "16-bit matrix"),
        ] {
            let ridge = ceiling / device.bandwidth;
            let line = vec![
                (INTENSITY.start, INTENSITY.start * device.bandwidth),
                (ridge, ceiling),
                (INTENSITY.end, ceiling),
            ];
            chart
                .draw_series(std::iter::once(PathElement::new(line, style)))
                .map_err(plot_error)?
                .label(format!("{} {what}", device.name))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    let families = {
        let mut f: Vec<_> = rows
            .iter()
            .filter_map(|r| r.run.as_ref().map(|run| run.family))
            .collect();
        f.sort();
        f.dedup();
        f
    };
    for (i, family) in families.iter().enumerate() {
        let style = ShapeStyle::from(&colour(i + devices.len())).filled();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.run.as_ref().is_some_and(|run| run.family == *family))
            .filter_map(|r| point(r, first))
            .collect();
        chart
            .draw_series(points.into_iter().map(|p| Circle::new(p, 4, style)))
            .map_err(plot_error)?
            .label(format!("{family:?}"))
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)?;
    root.present().map_err(plot_error)?;
    Ok(())
}

/// plotters' errors as one-line messages.
fn plot_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("drawing the roofline chart: {e}")
}
