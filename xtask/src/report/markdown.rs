//! The report as Markdown: headline ratios per family, the missed targets, then per gfx the
//! static table and the runs with their roofline bounds, and the device table.

use super::Report;
use super::devices::DEVICES;
use super::kernels::KernelRow;
use super::roofline::Bound;
use super::targets::{MAX_BYTES_RATIO, MIN_WIDE_SHARE};
use super::workloads::Family;
use iron_emu::InstructionClass;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The whole report as Markdown.
pub fn render(report: &Report) -> String {
    let mut md = String::new();
    let gfx_list: Vec<&str> = report.gfx.iter().map(String::as_str).collect();
    let _ = writeln!(md, "# Iron kernel performance report\n");
    let _ = writeln!(
        md,
        "Targets: {}. Each run is one call of the library's host API on the emulator at a \
         representative shape ({} shapes). Bounds are roofline lower bounds from the published \
         peaks listed at the end; estimated times come from the emulator's cycle model of each \
         device (a model, not a measurement: docs/performance.md gives its error against \
         published measurements).\n",
        gfx_list.join(", "),
        report.size
    );
    headline(&mut md, report);
    misses(&mut md, report);
    for gfx in &report.gfx {
        let rows: Vec<&KernelRow> = report.rows.iter().filter(|r| &r.gfx == gfx).collect();
        static_table(&mut md, gfx, &rows);
        runs_table(&mut md, &rows);
        modelled_table(&mut md, &rows);
        not_run(&mut md, gfx, &rows, report.failures.get(gfx));
    }
    device_table(&mut md);
    md
}

/// The largest and median bytes ratio per family and gfx.
fn headline(md: &mut String, report: &Report) {
    let _ = writeln!(
        md,
        "## Bytes moved / algorithm minimum (median, worst) per family\n"
    );
    let _ = writeln!(md, "| family | {} |", report.gfx.join(" | "));
    let _ = writeln!(md, "| --- |{}", " --- |".repeat(report.gfx.len()));
    let mut by_family: BTreeMap<Family, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for row in &report.rows {
        if let Some(run) = &row.run {
            by_family
                .entry(run.family)
                .or_default()
                .entry(row.gfx.as_str())
                .or_default()
                .push(run.bytes_ratio);
        }
    }
    for (family, per_gfx) in by_family {
        let cells: Vec<String> = report
            .gfx
            .iter()
            .map(|g| match per_gfx.get(g.as_str()) {
                Some(ratios) => {
                    let mut sorted = ratios.clone();
                    sorted.sort_by(f64::total_cmp);
                    let median = sorted[sorted.len() / 2];
                    let worst = sorted[sorted.len() - 1];
                    format!("{median:.2} / {worst:.2}")
                }
                None => "-".into(),
            })
            .collect();
        let _ = writeln!(md, "| {family:?} | {} |", cells.join(" | "));
    }
    let _ = writeln!(md);
}

fn misses(md: &mut String, report: &Report) {
    let _ = writeln!(
        md,
        "## Targets missed\n\nTargets: zero scratch; bytes moved / minimum <= {MAX_BYTES_RATIO} \
         for memory-bound kernels; >= {:.0}% 16-byte global accesses in streaming kernels; no \
         LDS bank conflicts in transpose, norms and GEMM staging; every run within its \
         instruction budget (xtask/src/report/instruction_budget.json). {} misses, {} of them \
         known exceptions.\n",
        MIN_WIDE_SHARE * 100.0,
        report.misses.len(),
        report
            .misses
            .iter()
            .filter(|m| m.exception.is_some())
            .count()
    );
    if report.misses.is_empty() {
        return;
    }
    let _ = writeln!(md, "| gfx | kernel | run | target | measured | exception |");
    let _ = writeln!(md, "| --- | --- | --- | --- | --- | --- |");
    for m in &report.misses {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:?} | {} | {} |",
            m.gfx,
            m.kernel,
            m.run.as_deref().unwrap_or("-"),
            m.goal,
            m.measured,
            m.exception.unwrap_or("")
        );
    }
    let _ = writeln!(md);
}

/// Non-zero entries of a per-class count, as `valu 12, salu 3`.
pub fn mix(counts: &[u64]) -> String {
    InstructionClass::ALL
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(class, n)| format!("{} {n}", format!("{class:?}").to_lowercase()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn static_table(md: &mut String, gfx: &str, rows: &[&KernelRow]) {
    let _ = writeln!(md, "## {gfx}\n\n### Kernels (static)\n");
    let _ = writeln!(
        md,
        "| kernel | VGPR | AGPR | SGPR | LDS | scratch | occupancy | code B | matrix/iter | \
         instruction mix |"
    );
    let _ = writeln!(
        md,
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |"
    );
    let mut seen = Vec::new();
    for row in rows {
        let k = &row.kernel;
        if seen.contains(&k.name) {
            continue;
        }
        seen.push(k.name.clone());
        let r = &k.resources;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {}/{} {} | {} | {} | {} |",
            k.name,
            r.vgpr,
            r.agpr,
            r.sgpr,
            r.lds_bytes,
            r.scratch_bytes,
            r.occupancy,
            r.max_waves,
            r.occupancy_limit,
            r.code_bytes,
            k.code
                .matrix_per_iteration
                .map_or("-".to_string(), |n| n.to_string()),
            mix(&k.code.mix)
        );
    }
    let _ = writeln!(md);
}

/// Seconds in the unit that reads best.
pub fn duration(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.2} us", seconds * 1e6)
    } else {
        format!("{:.0} ns", seconds * 1e9)
    }
}

fn runs_table(md: &mut String, rows: &[&KernelRow]) {
    let names: Vec<&str> = rows
        .iter()
        .find_map(|r| r.run.as_ref())
        .map(|run| run.estimates.iter().map(|e| e.device).collect())
        .unwrap_or_default();
    let _ = writeln!(md, "### Runs (emulated) and roofline bounds\n");
    let _ = writeln!(
        md,
        "| run | kernel | bytes / min | min bytes | SMEM bytes | inst/elem | access widths | LDS \
         conflicts | occupancy at launch | {} |",
        names.join(" | ")
    );
    let _ = writeln!(
        md,
        "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |{}",
        " --- |".repeat(names.len())
    );
    for row in rows {
        let Some(run) = &row.run else { continue };
        let widths: Vec<String> = run
            .access_widths
            .iter()
            .map(|(w, n)| format!("{w}B:{n}"))
            .collect();
        let bounds: Vec<String> = run
            .estimates
            .iter()
            .map(|e| {
                let bound = match e.bound {
                    Bound::Memory => "mem",
                    Bound::Compute => "compute",
                };
                format!("{} {bound}", duration(e.seconds))
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {:.3} | {} | {} | {:.2} | {} | {} | {} | {} |",
            run.label,
            row.kernel.name,
            run.bytes_ratio,
            run.min_bytes,
            run.scalar_bytes_read,
            run.instructions_per_element,
            widths.join(" "),
            run.lds_bank_conflict_cycles,
            run.launch_occupancy
                .map_or("-".to_string(), |o| o.to_string()),
            bounds.join(" | ")
        );
    }
    let _ = writeln!(md);
}

/// Each run's estimated time per device, its share of the roofline bound, and where the waves
/// waited most, over the run and in its hottest loop.
fn modelled_table(md: &mut String, rows: &[&KernelRow]) {
    let names: Vec<&str> = rows
        .iter()
        .find_map(|r| r.run.as_ref())
        .map(|run| run.modelled.iter().map(|m| m.device).collect())
        .unwrap_or_default();
    if names.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "### Estimated time (cycle model)\n\nPer device: the estimate, the roofline bound's \
         share of it, and the reason waves waited most (over the run; in the hottest loop).\n"
    );
    let _ = writeln!(md, "| run | kernel | {} |", names.join(" | "));
    let _ = writeln!(md, "| --- | --- |{}", " --- |".repeat(names.len()));
    let top = |s: &super::modelled::Stalls| {
        s.top()
            .map_or("-".to_string(), |(r, x)| format!("{r} {:.0}%", 100.0 * x))
    };
    for row in rows {
        let Some(run) = &row.run else { continue };
        let cells: Vec<String> = run
            .modelled
            .iter()
            .map(|m| {
                let lp = m
                    .main_loop
                    .as_ref()
                    .map_or(String::new(), |(_, s)| format!("; loop: {}", top(s)));
                format!(
                    "{} ({:.0}% of bound; {}{lp})",
                    duration(m.seconds),
                    100.0 * m.of_roofline,
                    top(&m.stalls)
                )
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            run.label,
            row.kernel.name,
            cells.join(" | ")
        );
    }
    let _ = writeln!(md);
}

fn not_run(md: &mut String, gfx: &str, rows: &[&KernelRow], failures: Option<&Vec<String>>) {
    let idle: Vec<&str> = rows
        .iter()
        .filter(|r| r.run.is_none())
        .map(|r| r.kernel.name.as_str())
        .collect();
    if !idle.is_empty() {
        let _ = writeln!(
            md,
            "Kernels of {gfx} no representative run launched ({}): {}\n",
            idle.len(),
            idle.join(", ")
        );
    }
    if let Some(failures) = failures.filter(|f| !f.is_empty()) {
        let _ = writeln!(md, "Operations that did not run on {gfx}:\n");
        for f in failures {
            let _ = writeln!(md, "- {f}");
        }
        let _ = writeln!(md);
    }
}

fn device_table(md: &mut String) {
    let _ = writeln!(
        md,
        "## Devices\n\nPeak theoretical, dense; `-`: no such matrix instructions (those formats \
         run decoded on 16-bit matrix cores).\n"
    );
    let _ = writeln!(
        md,
        "| device | gfx | bandwidth TB/s | FP32 vector TFLOP/s | FP16/BF16 matrix | FP8 matrix | \
         MXFP6/FP4 matrix | source |"
    );
    let _ = writeln!(md, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
    let tera = |v: f64| format!("{:.1}", v / 1e12);
    for d in DEVICES {
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {} | {} | {} | {} | {} |",
            d.name,
            d.gfx,
            d.bandwidth / 1e12,
            tera(d.fp32_vector),
            tera(d.matrix16),
            d.matrix8.map_or("-".into(), tera),
            d.matrix_fp4.map_or("-".into(), tera),
            d.source
        );
    }
}
