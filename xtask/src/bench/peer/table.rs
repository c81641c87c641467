//! The peer benchmark's results and how they are shown: one comparison per gfx and workload
//! (Iron's runs and every Triton configuration's), a summary table per gfx against Triton's
//! default and its best configuration, and every configuration in detail.
//!
//! Both sides are taken alike: Iron's default (what the library chooses) against Triton's
//! default, Iron's configuration with the fewest wave-instructions against Triton's, and
//! Iron's default time against Triton's fastest configuration's. Iron's configurations are
//! its library's choices, and for a 16-bit or FP8 GEMM the block the library did not choose.

use super::run::Side;
use serde::Serialize;
use std::fmt::Write;

/// Iron and Triton on one workload on one gfx.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub gfx: String,
    pub workload: String,
    /// The library's choices first (`iron`), then the other configurations Iron has.
    pub iron: Vec<Side>,
    /// The default configuration first, then the autotune-style variants.
    pub triton: Vec<Side>,
}

impl Comparison {
    /// Iron's run with the library's choices.
    pub fn iron_default(&self) -> &Side {
        &self.iron[0]
    }

    /// Iron's configuration with the fewest wave-instructions among those whose output is
    /// correct (the default when none is).
    pub fn iron_best(&self) -> &Side {
        self.iron
            .iter()
            .filter(|s| s.mismatch.is_none())
            .min_by_key(|s| s.measured.wave_instructions)
            .unwrap_or(self.iron_default())
    }

    /// Triton's default configuration.
    pub fn default_config(&self) -> Option<&Side> {
        self.triton.iter().find(|s| s.config == "default")
    }

    /// Triton's configuration with the fewest wave-instructions among those whose output is
    /// correct.
    pub fn best(&self) -> Option<&Side> {
        self.triton
            .iter()
            .filter(|s| s.mismatch.is_none())
            .min_by_key(|s| s.measured.wave_instructions)
    }

    /// Triton's correct configuration with the shortest estimated time on `device`, and that
    /// time.
    pub fn fastest(&self, device: &str) -> Option<(&Side, f64)> {
        self.triton
            .iter()
            .filter(|s| s.mismatch.is_none())
            .filter_map(|s| Some((s, estimated(s, device)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Every side whose output did not match the reference.
    pub fn mismatches(&self) -> impl Iterator<Item = &Side> {
        self.iron
            .iter()
            .chain(&self.triton)
            .filter(|s| s.mismatch.is_some())
    }
}

/// Everything `peer.json` holds.
#[derive(Serialize)]
pub struct Results {
    pub triton_version: String,
    pub fp_fusion: String,
    pub size: String,
    pub comparisons: Vec<Comparison>,
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

/// `side`'s estimated seconds on `device`, if it was estimated there.
fn estimated(side: &Side, device: &str) -> Option<f64> {
    side.estimated
        .iter()
        .find(|(d, _)| *d == device)
        .map(|&(_, t)| t)
}

/// Per device, Iron's estimated time (the library's choices) over Triton's fastest correct
/// configuration's there, with the two times and that configuration.
fn time_ratio(c: &Comparison) -> String {
    let cells: Vec<String> = c
        .iron_default()
        .estimated
        .iter()
        .filter_map(|&(device, iron)| {
            let (fast, triton) = c.fastest(device).filter(|&(_, t)| t > 0.0)?;
            Some(format!(
                "{device} {:.2} ({:.1} / {:.1} us, {})",
                iron / triton,
                iron * 1e6,
                triton * 1e6,
                fast.config
            ))
        })
        .collect();
    if cells.is_empty() {
        "-".into()
    } else {
        cells.join("; ")
    }
}

fn occupancy(s: &Side) -> String {
    s.measured
        .launch_occupancy
        .map_or("-".into(), |o| o.to_string())
}

fn check(c: &Comparison) -> String {
    let bad: Vec<String> = c
        .mismatches()
        .map(|s| format!("**{} wrong**", s.config))
        .collect();
    let racy: Vec<&str> = c
        .triton
        .iter()
        .filter(|s| s.lds_race.is_some())
        .map(|s| s.config.as_str())
        .collect();
    let mut text = if bad.is_empty() {
        "ok".to_string()
    } else {
        bad.join(", ")
    };
    if !racy.is_empty() {
        let _ = write!(text, " (LDS race check off: {})", racy.join(", "));
    }
    text
}

/// The whole report as Markdown.
pub fn render(results: &Results) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Iron against Triton {} (`cargo xtask bench --peer triton`)\n",
        results.triton_version
    );
    let _ = writeln!(
        md,
        "Shapes: {}. Triton compiled offline per gfx, `TRITON_DEFAULT_FP_FUSION={}`; both sides run \
         on the emulator on the same inputs and are checked against a CPU reference. Ratios are \
         Iron / Triton (below 1: Iron executes fewer, or takes less time). Estimated times come \
         from the emulator's cycle model of the named device (a model, not a measurement).\n",
        results.size, results.fp_fusion
    );
    let mut gfx_list: Vec<&str> = Vec::new();
    for c in &results.comparisons {
        if !gfx_list.contains(&c.gfx.as_str()) {
            gfx_list.push(&c.gfx);
        }
    }
    for gfx in gfx_list {
        let rows: Vec<&Comparison> = results
            .comparisons
            .iter()
            .filter(|c| c.gfx == gfx)
            .collect();
        let _ = writeln!(md, "## {gfx}\n");
        summary(&mut md, &rows);
        detail(&mut md, &rows);
    }
    md
}

/// Iron against Triton's default and best configuration, one row per workload.
fn summary(md: &mut String, rows: &[&Comparison]) {
    md.push_str(
        "| workload | Iron wave-inst (best) | Triton default | Triton best (config) | Iron / default | \
         Iron best / best | bytes/min Iron / Triton | LDS conflict cycles Iron / Triton | VGPRs Iron / \
         Triton | occupancy Iron / Triton | code bytes Iron / Triton | est. time Iron / Triton \
         fastest, per device (us, config) | check |\n",
    );
    md.push_str(
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for c in rows {
        let i = c.iron_default();
        let Some(d) = c.default_config() else {
            continue;
        };
        let iw = i.measured.wave_instructions;
        let ib = c.iron_best();
        let iron_best = if ib.config == i.config {
            iw.to_string()
        } else {
            format!("{iw} ({} {})", ib.measured.wave_instructions, ib.config)
        };
        let dw = d.measured.wave_instructions;
        let (best, best_ratio) = match c.best() {
            Some(b) => (
                format!("{} ({})", b.measured.wave_instructions, b.config),
                ratio(ib.measured.wave_instructions, b.measured.wave_instructions),
            ),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            md,
            "| {} | {iron_best} | {dw} | {best} | {} | {best_ratio} | {:.3} / {:.3} | {} / {} | {} / {} | \
             {} / {} | {} / {} | {} | {} |",
            c.workload,
            ratio(iw, dw),
            i.measured.bytes_ratio,
            d.measured.bytes_ratio,
            i.measured.lds_bank_conflict_cycles,
            d.measured.lds_bank_conflict_cycles,
            i.statics.resources.vgpr,
            d.statics.resources.vgpr,
            occupancy(i),
            occupancy(d),
            i.statics.resources.code_bytes,
            d.statics.resources.code_bytes,
            time_ratio(c),
            check(c)
        );
    }
    md.push('\n');
}

/// Every side of every workload.
fn detail(md: &mut String, rows: &[&Comparison]) {
    md.push_str(
        "<details><summary>every configuration</summary>\n\n\
         | workload | side | kernel | warps x stages | wave-inst | bytes/min | LDS conflict \
         cycles | VGPR / AGPR / SGPR | LDS bytes | occupancy | code bytes | scratch | est. time | \
         check |\n\
         | --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for c in rows {
        for s in c.iron.iter().chain(&c.triton) {
            let r = &s.statics.resources;
            let shape = s.triton.as_ref().map_or("-".into(), |t| {
                format!("{} x {}", t.num_warps, t.num_stages)
            });
            let side = match s.config.strip_prefix("iron") {
                Some("") => "Iron".to_string(),
                Some(tile) => format!("Iron{tile}"),
                None => format!("Triton {}", s.config),
            };
            let _ = writeln!(
                md,
                "| {} | {side} | `{}` | {shape} | {} | {:.3} | {} | {} / {} / {} | {} | {} | {} | {} | {} | {} |",
                c.workload,
                s.kernel,
                s.measured.wave_instructions,
                s.measured.bytes_ratio,
                s.measured.lds_bank_conflict_cycles,
                r.vgpr,
                r.agpr,
                r.sgpr,
                r.lds_bytes + s.triton.as_ref().map_or(0, |t| t.lds_bytes),
                occupancy(s),
                r.code_bytes,
                r.scratch_bytes,
                s.estimated
                    .iter()
                    .map(|(d, t)| format!("{d} {:.2} us", t * 1e6))
                    .collect::<Vec<_>>()
                    .join(", "),
                match (&s.mismatch, &s.lds_race) {
                    (Some(m), _) => m.clone(),
                    (None, Some(_)) => "ok (run without the LDS race check)".into(),
                    (None, None) => "ok".into(),
                }
            );
        }
    }
    md.push_str("\n</details>\n\n");
}
