//! `cargo xtask report --smoke` on the build `IRON_ARTIFACTS` names (set by `cargo xtask test`):
//! every kernel of the code object is in the report with a run, and the numbers of operations
//! whose traffic is known exactly from their definition come out as the definition says.

use std::path::PathBuf;
use std::process::Command;

/// The build to report on, or `None` (outside `cargo xtask test` the test then says why and
/// passes).
fn artifacts() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("IRON_ARTIFACTS")?);
    dir.join("gfx950/kernels.co").is_file().then_some(dir)
}

/// Kernels the report need not run: none, every library kernel is reachable through the host
/// API (a kernel only another kernel's operation launches gets a run of its own dispatches).
const NEED_NO_RUN: &[&str] = &[];

#[test]
fn the_smoke_report_runs_every_kernel_and_measures_copy_exactly() {
    let Some(artifacts) = artifacts() else {
        // Under `cargo xtask test` (IRON_REQUIRE_TOOLS set) the build exists: its absence fails.
        assert!(
            std::env::var_os("IRON_REQUIRE_TOOLS").is_none(),
            "IRON_ARTIFACTS names no gfx950 build"
        );
        eprintln!("skipped: IRON_ARTIFACTS names no gfx950 build (run under cargo xtask test)");
        return;
    };
    let target = std::env::temp_dir().join(format!("iron-report-test-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["report", "--gfx", "gfx950", "--smoke", "--artifacts"])
        .arg(&artifacts)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("xtask runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = target.join("iron/report");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert!(dir.join("report.md").is_file());
    assert!(
        std::fs::read_to_string(dir.join("roofline-gfx950.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(artifacts.join("manifest.json")).unwrap()).unwrap();
    let built = manifest["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["gfx"] == "gfx950" && t["wave"] == 64)
        .expect("the manifest lists gfx950");
    let rows = json["rows"].as_array().unwrap();
    for kernel in built["kernels"].as_array().unwrap() {
        let name = &kernel["name"];
        assert!(
            rows.iter().any(|r| &r["kernel"]["name"] == name),
            "{name} is missing from the report"
        );
    }
    let unmeasured: Vec<&str> = rows
        .iter()
        .filter(|r| r["run"].is_null())
        .filter_map(|r| r["kernel"]["name"].as_str())
        .filter(|name| !NEED_NO_RUN.contains(name))
        .collect();
    assert!(
        unmeasured.is_empty(),
        "no representative run launched {unmeasured:?}"
    );
    let copy = rows
        .iter()
        .find(|r| r["kernel"]["name"] == "copy_u32")
        .and_then(|r| r["run"].as_object())
        .expect("copy_u32 ran");
    let n = 1u64 << 15;
    assert_eq!(
        copy["min_bytes"],
        8 * n,
        "copy reads and writes 4 bytes per element"
    );
    assert_eq!(copy["vector_bytes_read"], 4 * n);
    assert_eq!(copy["bytes_written"], 4 * n);
    assert_eq!(
        copy["access_widths"],
        serde_json::json!([[16, n / 64 * 2 / 4]])
    );
    std::fs::remove_dir_all(&target).ok();
}
