//! Occupancy: hand-worked cases, and a seeded sweep against the `; Occupancy:` that LLVM's own
//! `llc` reports for kernels with chosen register and LDS use.

mod code_object_common;

use code_object_common::llvm_tool;
use iron_code_object::occupancy::{
    KernelResources, Limiter, OccupancyError, known_targets, occupancy, target_limits,
    unified_vgpr_count,
};
use rand::{Rng, SeedableRng};

fn resources(
    wave_size: u32,
    vgprs: u32,
    sgprs: u32,
    lds_bytes: u32,
    workgroup_size: u32,
) -> KernelResources {
    KernelResources {
        wave_size,
        vgprs,
        sgprs,
        lds_bytes,
        workgroup_size,
    }
}

#[test]
fn hand_worked_cases() {
    // 512 VGPRs per lane / 96 = 5 waves.
    let o = occupancy("gfx942", &resources(64, 96, 20, 0, 256)).unwrap();
    assert_eq!(
        (o.waves_per_simd, o.limiter, o.vgpr_waves_per_simd),
        (5, Limiter::Vgprs, 5)
    );
    // 8 waves per workgroup, room for 5 per SIMD on 4 SIMDs: 20 / 8 = 2 workgroups, 16 waves.
    let o = occupancy("gfx942", &resources(64, 96, 20, 0, 512)).unwrap();
    assert_eq!(
        (o.workgroups_per_cu, o.waves_per_cu, o.waves_per_simd),
        (2, 16, 4)
    );
    assert_eq!(o.limiter, Limiter::Vgprs);
    // Small kernels fill the SIMD.
    let o = occupancy("gfx950", &resources(64, 8, 14, 0, 256)).unwrap();
    assert_eq!((o.waves_per_simd, o.limiter), (8, Limiter::None));
    // 106 SGPRs allow 7 waves on gfx9.
    let o = occupancy("gfx90a", &resources(64, 8, 106, 0, 64)).unwrap();
    assert_eq!(
        (o.waves_per_simd, o.limiter, o.sgpr_waves_per_simd),
        (7, Limiter::Sgprs, 7)
    );
    // gfx950: 160 KiB / 64 KiB = 2 workgroups of 4 waves on 4 SIMDs.
    let o = occupancy("gfx950", &resources(64, 8, 14, 65536, 256)).unwrap();
    assert_eq!(
        (o.waves_per_simd, o.limiter, o.lds_workgroups_per_cu),
        (2, Limiter::Lds, Some(2))
    );
    // gfx942: one byte past 16 KiB rounds to 16.5 KiB: 3 workgroups of one wave.
    let o = occupancy("gfx942", &resources(64, 8, 14, 16385, 64)).unwrap();
    assert_eq!((o.workgroups_per_cu, o.waves_per_simd), (3, 1));
    // gfx1100 wave32: 97 VGPRs round to 120 of 1536: 12 waves.
    let o = occupancy("gfx1100", &resources(32, 97, 0, 0, 32)).unwrap();
    assert_eq!((o.waves_per_simd, o.limiter), (12, Limiter::Vgprs));
    // gfx1201 wave64: 97 VGPRs round to 108 of 768: 7 waves.
    assert_eq!(
        occupancy("gfx1201", &resources(64, 97, 0, 0, 64))
            .unwrap()
            .waves_per_simd,
        7
    );
    // gfx11 SGPRs never limit.
    let o = occupancy("gfx1100", &resources(32, 8, 106, 0, 32)).unwrap();
    assert_eq!((o.waves_per_simd, o.limiter), (16, Limiter::None));
    // Barriers: 1024 work-items of wave32 are 32 waves; 64 wave slots fit 2 workgroups.
    let o = occupancy("gfx1100", &resources(32, 8, 0, 0, 1024)).unwrap();
    assert_eq!((o.workgroups_per_cu, o.waves_per_simd), (2, 16));
    // A workgroup bigger than the register file allows does not fit at all.
    let o = occupancy("gfx942", &resources(64, 512, 20, 0, 1024)).unwrap();
    assert_eq!(
        (o.workgroups_per_cu, o.waves_per_simd, o.limiter),
        (0, 0, Limiter::Vgprs)
    );
}

#[test]
fn errors() {
    let r = resources(64, 8, 8, 0, 64);
    assert_eq!(
        occupancy("gfx1030", &r).unwrap_err(),
        OccupancyError::UnknownTarget("gfx1030".into())
    );
    assert!(matches!(
        occupancy("gfx950", &resources(32, 8, 8, 0, 64)),
        Err(OccupancyError::UnsupportedWaveSize { .. })
    ));
    assert!(matches!(
        occupancy("gfx1100", &resources(32, 257, 8, 0, 64)),
        Err(OccupancyError::TooManyVgprs { max: 256, .. })
    ));
    assert!(
        occupancy("gfx942", &resources(64, 512, 8, 0, 64)).is_ok(),
        "AGPRs make 512 addressable"
    );
    assert!(matches!(
        occupancy("gfx942", &resources(64, 8, 8, 65537, 64)),
        Err(OccupancyError::TooMuchLds { .. })
    ));
    assert!(occupancy("gfx950", &resources(64, 8, 8, 65537, 64)).is_ok());
    assert_eq!(
        occupancy("gfx950", &resources(64, 8, 8, 0, 0)).unwrap_err(),
        OccupancyError::BadWorkgroupSize(0)
    );
    assert!(occupancy("gfx950", &resources(64, 8, 8, 0, 1025)).is_err());
}

#[test]
fn unified_register_counts() {
    assert_eq!(unified_vgpr_count(62, 64), 128);
    assert_eq!(unified_vgpr_count(64, 64), 128);
    assert_eq!(unified_vgpr_count(65, 1), 69);
    assert_eq!(unified_vgpr_count(37, 0), 37);
}

#[test]
fn occupancy_never_rises_with_more_resources() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for limits in known_targets() {
        let wave = if limits.wave64.is_some() { 64 } else { 32 };
        for _ in 0..500 {
            let base = resources(
                wave,
                rng.random_range(0..=limits.max_vgprs_per_wave / 2),
                rng.random_range(0..=100),
                rng.random_range(0..=limits.max_lds_bytes_per_workgroup / 2),
                rng.random_range(1..=1024),
            );
            let more = resources(
                wave,
                base.vgprs + rng.random_range(0..=limits.max_vgprs_per_wave / 2),
                base.sgprs + rng.random_range(0..=10),
                base.lds_bytes + rng.random_range(0..=limits.max_lds_bytes_per_workgroup / 2),
                base.workgroup_size,
            );
            let a = occupancy(limits.processor, &base).unwrap();
            let b = occupancy(limits.processor, &more).unwrap();
            assert!(
                b.waves_per_cu <= a.waves_per_cu,
                "{}: {base:?} -> {more:?}",
                limits.processor
            );
            assert!(a.waves_per_simd <= limits.max_waves_per_simd);
            assert!(a.waves_per_cu <= limits.max_waves_per_simd * limits.simds_per_cu);
        }
    }
}

/// What `llc` says about one generated kernel.
struct LlcReport {
    vgprs: u32,
    sgprs: u32,
    occupancy: u32,
}

/// One generated kernel: clobbered registers, LDS bytes and a fixed workgroup size.
struct LlcCase<'a> {
    cpu: &'a str,
    wave: u32,
    vgprs: u32,
    agprs: u32,
    sgprs: u32,
    lds: u32,
    wg: u32,
}

fn llc_report(llc: &std::path::Path, case: &LlcCase<'_>) -> LlcReport {
    let LlcCase {
        cpu,
        wave,
        vgprs,
        agprs,
        sgprs,
        lds,
        wg,
    } = *case;
    let mut body = String::new();
    for (prefix, count) in [("v", vgprs), ("a", agprs), ("s", sgprs)] {
        if count > 0 {
            body += &format!(
                "  call void asm sideeffect \"\", \"~{{{prefix}{}}}\"()\n",
                count - 1
            );
        }
    }
    let lds_len = lds.max(1);
    let features = if wave == 64 && cpu.starts_with("gfx1") {
        "\"target-features\"=\"+wavefrontsize64\""
    } else {
        ""
    };
    let ir = format!(
        "target triple = \"amdgcn-amd-amdhsa\"\n\
         @lds = internal addrspace(3) global [{lds_len} x i8] poison, align 16\n\
         define amdgpu_kernel void @k() #0 {{\n{body}\
           %g = getelementptr [{lds_len} x i8], ptr addrspace(3) @lds, i32 0, i32 0\n\
           store volatile i8 1, ptr addrspace(3) %g\n\
           ret void\n}}\n\
         attributes #0 = {{ \"amdgpu-flat-work-group-size\"=\"{wg},{wg}\" {features} }}\n"
    );
    let output = std::process::Command::new(llc)
        .args(["-O2", &format!("-mcpu={cpu}"), "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(ir.as_bytes())?;
            child.wait_with_output()
        })
        .expect("llc runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "llc failed:\n{ir}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |name: &str| -> Option<u32> {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("; {name}: ")))
            .map(|v| v.trim().parse().unwrap())
    };
    LlcReport {
        vgprs: field("TotalNumVgprs")
            .or_else(|| field("NumVgprs"))
            .expect("llc reports VGPRs"),
        sgprs: field("TotalNumSgprs").expect("llc reports SGPRs"),
        occupancy: field("Occupancy").expect("llc reports occupancy"),
    }
}

/// For workgroups of 1, 2 or 4 waves and LDS sizes on the allocation granule, the model is
/// LLVM's; for other workgroups it counts whole workgroups and may only report fewer waves.
#[test]
fn agrees_with_llc() {
    let Some(llc) = llvm_tool("llc") else {
        println!("skipped: llc from the pinned toolchain's llvm-tools is not installed");
        return;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x0cc);
    let mut seen = std::collections::BTreeMap::new();
    for limits in known_targets() {
        for wave in [32, 64] {
            let Some(file) = (if wave == 32 {
                limits.wave32
            } else {
                limits.wave64
            }) else {
                continue;
            };
            for case in 0..14 {
                let exact = case < 10;
                let waves_per_group = if exact {
                    [1, 2, 4][rng.random_range(0..3)]
                } else {
                    [3, 8][rng.random_range(0..2)]
                };
                let wg = waves_per_group * wave;
                let vgpr_budget = if exact {
                    limits.max_vgprs_per_wave.min(256)
                } else {
                    48
                };
                let vgprs = rng.random_range(1..=vgpr_budget);
                let agprs = if limits.max_vgprs_per_wave > 256 && exact && rng.random_bool(0.5) {
                    rng.random_range(
                        1..=(limits.max_vgprs_per_wave - vgprs.next_multiple_of(4)).min(256),
                    )
                } else {
                    0
                };
                let sgprs = if limits.sgpr_limited && rng.random_bool(0.3) {
                    rng.random_range(80..=100)
                } else {
                    0
                };
                let lds = match rng.random_range(0..3) {
                    0 => 0,
                    _ if exact => {
                        limits.lds_granule
                            * rng.random_range(
                                1..=limits.max_lds_bytes_per_workgroup / limits.lds_granule,
                            )
                    }
                    _ => rng.random_range(1..=limits.max_lds_bytes_per_workgroup),
                };
                let case = LlcCase {
                    cpu: limits.processor,
                    wave,
                    vgprs,
                    agprs,
                    sgprs,
                    lds,
                    wg,
                };
                let report = llc_report(&llc, &case);
                let ours = occupancy(
                    limits.processor,
                    &resources(wave, report.vgprs, report.sgprs, lds, wg),
                )
                .unwrap();
                let context = format!(
                    "{} wave{wave} vgprs {vgprs}+{agprs} (total {}) sgprs {} lds {lds} wg {wg} (granule {})",
                    limits.processor, report.vgprs, report.sgprs, file.granule
                );
                if exact {
                    assert_eq!(ours.waves_per_simd, report.occupancy, "{context}");
                } else {
                    assert!(
                        ours.waves_per_simd <= report.occupancy,
                        "{context}: {ours:?}"
                    );
                }
                *seen
                    .entry((report.occupancy, ours.limiter == Limiter::Lds))
                    .or_insert(0) += 1;
            }
        }
    }
    println!("(llc occupancy, LDS-limited) -> cases: {seen:?}");
    assert!(seen.values().sum::<u32>() >= 70);
    assert!(seen.len() >= 8, "the sweep covers many occupancies");
    assert!(target_limits("gfx950").is_some());
}
