//! The profiler counters that the performance report reads: scalar loads are counted apart from
//! vector loads (both in the global total), and the LDS a workgroup was given is recorded.

mod common;

use common::{Args, AsmKernel};

/// One wave loads 16 kernarg bytes with a scalar load, then every lane loads `loads` dwords and
/// stores one; returns the counters, or `None` without an assembler.
fn run(gfx: &str, lanes: u32, loads: u32, dynamic_lds: u32) -> Option<iron_emu::Counters> {
    // (scalar load, wait for it, vector load, wait for those, vector store)
    let (smem, smem_wait, load, load_wait, store) = match gfx {
        "gfx1201" => (
            "s_load_b128 s[8:11], s[0:1], 0x0",
            "s_wait_kmcnt 0",
            "global_load_b32",
            "s_wait_loadcnt 0",
            "global_store_b32",
        ),
        "gfx1100" => (
            "s_load_b128 s[8:11], s[0:1], 0x0",
            "s_waitcnt lgkmcnt(0)",
            "global_load_b32",
            "s_waitcnt vmcnt(0)",
            "global_store_b32",
        ),
        _ => (
            "s_load_dwordx4 s[8:11], s[0:1], 0x0",
            "s_waitcnt lgkmcnt(0)",
            "global_load_dword",
            "s_waitcnt vmcnt(0)",
            "global_store_dword",
        ),
    };
    let mut lines = vec![
        smem.to_string(),
        smem_wait.to_string(),
        "v_lshlrev_b32 v20, 2, v0".to_string(),
    ];
    for k in 0..loads {
        lines.push(format!("{load} v1, v20, s[10:11] offset:{}", k * 256));
    }
    lines.push(load_wait.to_string());
    lines.push(format!("{store} v20, v1, s[8:9]"));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut k = AsmKernel::new(gfx, &lines)?;
    k.descriptor.group_segment_fixed_size = 512;
    let input = k.gpu.memory_mut().alloc(4096, 256).unwrap();
    k.gpu.memory_mut().write(input, &[0; 4096]).unwrap();
    let output = k.gpu.memory_mut().alloc(4096, 256).unwrap();
    let kernarg = Args::default().ptr(output).ptr(input).0;
    let dispatch = iron_emu::Dispatch {
        kernel_name: "counters",
        code: k.code,
        entry: k.entry,
        descriptor: k.descriptor,
        kernarg: &kernarg,
        grid: [1, 1, 1],
        workgroup_size: [lanes, 1, 1],
        dynamic_lds,
        buffers: None,
    };
    Some(k.gpu.dispatch(&dispatch).unwrap())
}

#[test]
fn scalar_loads_are_split_from_vector_loads() {
    for (gfx, lanes) in [("gfx950", 64), ("gfx1100", 32), ("gfx1201", 32)] {
        for (loads, active) in [(1u32, lanes), (3, lanes), (2, 7)] {
            let Some(c) = run(gfx, active, loads, 0) else {
                return;
            };
            let vector = u64::from(loads * active * 4);
            assert_eq!(c.scalar_bytes_read, 16, "{gfx}: {c:?}");
            assert_eq!(c.vector_bytes_read(), vector, "{gfx}: {c:?}");
            assert_eq!(c.global_bytes_read, vector + 16, "{gfx}: {c:?}");
            assert_eq!(c.global_bytes_written, u64::from(active * 4), "{gfx}");
        }
    }
}

#[test]
fn the_lds_of_a_workgroup_is_recorded_and_summing_keeps_the_largest() {
    let Some(small) = run("gfx950", 64, 1, 0) else {
        return;
    };
    let Some(large) = run("gfx950", 64, 1, 1024) else {
        return;
    };
    assert_eq!(small.lds_bytes_per_workgroup, 512);
    assert_eq!(large.lds_bytes_per_workgroup, 512 + 1024);
    let mut sum = small.clone();
    sum += &large;
    assert_eq!(sum.lds_bytes_per_workgroup, 1536);
    assert_eq!(
        sum.scalar_bytes_read,
        small.scalar_bytes_read + large.scalar_bytes_read
    );
}
