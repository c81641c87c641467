//! The instruction budget: a ceiling on the wave-instructions of every run of the report, so that
//! a kernel that gets slower fails `cargo xtask report --strict` (and so the test suite).
//!
//! The ceilings are measurements: `cargo xtask report --update-budget` writes the wave-instructions
//! of every run of that report (per build, kernel and run) to [`BUDGET_FILE`], for the report's
//! size. A later report of the same size judges each run against its entry: more than
//! [`TOLERANCE`] above it is a miss ([`Goal::InstructionBudget`]); a run without an entry is a miss
//! too (a new kernel or shape gets its budget when it lands). A kernel made faster passes and
//! keeps the old ceiling until the budget is written again. The emulator counts instructions
//! deterministically for a given input and schedule, except where a kernel waits on another
//! workgroup (scan's look-back), which [`super::targets::EXCEPTIONS`] lists.

use super::kernels::KernelRow;
use super::targets::{Goal, Miss, exception};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the budget lives, relative to the repository root.
pub const BUDGET_FILE: &str = "xtask/src/report/instruction_budget.json";

/// How far a run may go above its budget: 2%.
pub const TOLERANCE: f64 = 0.02;

/// Wave-instructions per run, by build (`gfx942`, `gfx1100-w64`) and `<kernel> | <run>`, for one
/// report size.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Budget {
    /// The report size the entries were measured at (`smoke` or `full`).
    pub size: String,
    /// Entries by build, then by `<kernel> | <run label>`.
    pub runs: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The key of a run in [`Budget::runs`].
fn key(row: &KernelRow, label: &str) -> String {
    format!("{} | {label}", row.kernel.name)
}

impl Budget {
    /// The budget of `rows`, measured at `size`.
    pub fn measured(size: &str, rows: &[KernelRow]) -> Budget {
        let mut budget = Budget {
            size: size.to_string(),
            runs: BTreeMap::new(),
        };
        for row in rows {
            if let Some(run) = &row.run {
                let entry = budget
                    .runs
                    .entry(row.gfx.clone())
                    .or_default()
                    .entry(key(row, &run.label))
                    .or_default();
                *entry = (*entry).max(run.wave_instructions);
            }
        }
        budget
    }

    /// The budget in `root`'s [`BUDGET_FILE`] (empty when there is none).
    pub fn load(root: &Path) -> Result<Budget> {
        let path = root.join(BUDGET_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not an instruction budget", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Budget::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes this budget to `root`'s [`BUDGET_FILE`], merged over the entries of builds it does
    /// not cover (a report of some builds keeps the others' entries).
    pub fn save_merged(self, root: &Path) -> Result<()> {
        let mut merged = Budget::load(root)?;
        if merged.size != self.size {
            merged = Budget::default();
            merged.size = self.size;
        }
        merged.runs.extend(self.runs);
        let path = root.join(BUDGET_FILE);
        std::fs::write(&path, serde_json::to_string_pretty(&merged)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Every run of `rows` (a report of `size`) above its budget or without one; nothing when the
    /// budget was measured at another size.
    pub fn check(&self, size: &str, rows: &[KernelRow]) -> Vec<Miss> {
        if self.size != size {
            return Vec::new();
        }
        let mut misses = Vec::new();
        for row in rows {
            let Some(run) = &row.run else {
                continue;
            };
            let budget = self
                .runs
                .get(&row.gfx)
                .and_then(|runs| runs.get(&key(row, &run.label)));
            let measured = match budget {
                Some(&b) if run.wave_instructions as f64 <= b as f64 * (1.0 + TOLERANCE) => {
                    continue;
                }
                Some(&b) => format!(
                    "{} wave-instructions, budget {b} (+{:.1}%)",
                    run.wave_instructions,
                    100.0 * (run.wave_instructions as f64 / b as f64 - 1.0)
                ),
                None => format!(
                    "{} wave-instructions, no budget (cargo xtask report{} --update-budget)",
                    run.wave_instructions,
                    if size == "smoke" { " --smoke" } else { "" }
                ),
            };
            misses.push(Miss {
                gfx: row.gfx.clone(),
                kernel: row.kernel.name.clone(),
                run: Some(run.label.clone()),
                goal: Goal::InstructionBudget,
                measured,
                exception: exception(&row.kernel.name, Goal::InstructionBudget),
            });
        }
        misses
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::targets::tests::{measured, row};
    use crate::report::workloads::Family;

    fn run_of(kernel: &str, instructions: u64) -> KernelRow {
        let mut run = measured(Family::Elementwise, 1.0, vec![(16, 8)], 0);
        run.wave_instructions = instructions;
        row(kernel, 0, Some(run))
    }

    #[test]
    fn runs_above_their_budget_or_without_one_miss_it() {
        let budget = Budget::measured("smoke", &[run_of("add_f32", 1000), run_of("scan_u32", 50)]);
        let rows = [
            run_of("add_f32", 1020),
            run_of("add_f32", 1021),
            run_of("scan_u32", 80),
            run_of("new_kernel", 5),
            row("idle", 0, None),
        ];
        let misses = budget.check("smoke", &rows);
        let found: Vec<(&str, &str, bool)> = misses
            .iter()
            .map(|m| {
                (
                    m.kernel.as_str(),
                    m.measured.as_str(),
                    m.exception.is_some(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "add_f32",
                    "1021 wave-instructions, budget 1000 (+2.1%)",
                    false
                ),
                ("scan_u32", "80 wave-instructions, budget 50 (+60.0%)", true),
                (
                    "new_kernel",
                    "5 wave-instructions, no budget (cargo xtask report --smoke --update-budget)",
                    false
                ),
            ]
        );
        assert!(
            budget.check("full", &rows).is_empty(),
            "another size is not judged"
        );
    }
}
