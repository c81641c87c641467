//! The timing model on kernels whose time is known in advance: a streaming copy reaches the DRAM
//! bound, a loop of matrix instructions the published matrix peak (at the clock of a dense matrix
//! load), a dependent pointer chase
//! takes the latency of the level it hits per step, LDS bank conflicts and barriers cost
//! the cycles the model gives them, and a busy pipe serves the waiting wave of higher `s_setprio`
//! priority next, then the older.

mod common;

use common::{Args, AsmKernel};
use iron_emu::timing::{Device, Stall, TimingSummary};
use iron_emu::{Checks, Counters};

/// Assembles `lines` for `gfx` with `vgprs` VGPRs (and as many AGPRs), to be timed on `device`.
fn kernel(gfx: &str, device: &str, vgprs: u32, lines: &[&str]) -> Option<AsmKernel> {
    let mut k = AsmKernel::new(gfx, lines)?;
    let granules = if gfx.starts_with("gfx9") {
        (vgprs * 2).div_ceil(8) - 1
    } else {
        vgprs.div_ceil(8) - 1
    };
    k.descriptor.compute_pgm_rsrc1 = k.descriptor.compute_pgm_rsrc1 & !0x3f | granules;
    k.gpu.set_checks(Checks::NONE);
    let device = Device::by_name(device).expect("a known device");
    k.gpu.set_timing(Some(device)).expect("the device's target");
    Some(k)
}

fn timing(c: &Counters) -> &TimingSummary {
    c.timing.as_ref().expect("a timed dispatch has an estimate")
}

/// The `N` 64-bit words a kernel stored at `out`.
fn words<const N: usize>(k: &mut AsmKernel, out: u64) -> [u64; N] {
    let bytes = k.gpu.memory_mut().read_vec(out, 8 * N as u64).unwrap();
    std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
}

/// `actual` within `tolerance` (a fraction) of `expected`.
fn assert_near(actual: f64, expected: f64, tolerance: f64, what: &str) {
    let ratio = actual / expected;
    assert!(
        (1.0 - tolerance..=1.0 + tolerance).contains(&ratio),
        "{what}: {actual:.0} against {expected:.0} ({ratio:.3})"
    );
}

#[test]
fn a_streaming_copy_runs_at_the_dram_bound() {
    const GROUPS: u32 = 16384;
    let lines = [
        "s_load_dwordx4 s[4:7], s[0:1], 0x0",
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v1, 4, v0",
        "s_lshl_b32 s8, s2, 12",
        "v_add_u32 v1, s8, v1",
        "global_load_dwordx4 v[2:5], v1, s[6:7]",
        "s_waitcnt vmcnt(0)",
        "global_store_dwordx4 v1, v[2:5], s[4:5]",
        "s_endpgm",
    ];
    let Some(mut k) = kernel("gfx942", "MI300X", 8, &lines) else {
        return;
    };
    let bytes = u64::from(GROUPS) * 4096;
    let mem = k.gpu.memory_mut();
    let input = mem.alloc(bytes, 4096).unwrap();
    mem.write(input, &vec![7; bytes as usize]).unwrap();
    let output = mem.alloc(bytes, 4096).unwrap();
    let args = Args::default().ptr(output).ptr(input).0;
    let c = k.run(&args, [GROUPS, 1, 1], [256, 1, 1]).unwrap();
    let t = timing(&c);
    let d = Device::by_name("MI300X").unwrap();
    let sustained = d.dram.bytes_per_second * d.dram.efficiency;
    let bound = (2 * bytes) as f64 / sustained;
    assert_eq!(t.dram_bytes, 2 * bytes);
    assert!(
        t.seconds() >= bound,
        "{} s beats the bound {bound} s",
        t.seconds()
    );
    assert_near(t.seconds(), bound, 0.10, "copy time (ps)");
    assert!(t.stalled(Stall::Bandwidth) > t.stalled(Stall::Issue));
    // No matrix work: the peak clock.
    assert_near(t.clock_mhz(), d.clock_mhz, 0.001, "copy clock (MHz)");
}

/// A loop of `iterations` x 4 independent `mfma` per wave, on one workgroup of 4 waves per
/// compute unit of `device`; returns the achieved multiply-adds per second.
fn matrix_loop(gfx: &str, device: &str, wave: u32, mfma: [&str; 4]) -> Option<(f64, Counters)> {
    let iterations = 64;
    let count = format!("s_mov_b32 s10, {iterations}");
    let mut lines = vec![count.as_str(), "loop:"];
    lines.extend(mfma);
    lines.extend([
        "s_sub_u32 s10, s10, 1",
        "s_cmp_lg_u32 s10, 0",
        "s_cbranch_scc1 loop",
        "s_endpgm",
    ]);
    let mut k = kernel(gfx, device, 128, &lines)?;
    let d = Device::by_name(device).unwrap();
    let c = k
        .run(&[0; 16], [d.compute_units, 1, 1], [4 * wave, 1, 1])
        .unwrap();
    Some((
        f64::from(iterations * 4 * d.compute_units * 4) / timing(&c).seconds(),
        c,
    ))
}

#[test]
fn matrix_loops_reach_the_published_matrix_peak_at_the_dense_matrix_clock() {
    // Dense 16-bit peaks from AMD's product pages (FLOP/s, two per multiply-add), which are at
    // the peak clock; a loop of nothing but matrix instructions runs at the device's
    // dense-matrix clock where it has one (MI300X 1207 MHz: 751 TFLOP/s; AMD measured 708 in
    // its best BF16 GEMM at that clock).
    let cases = [
        (
            "gfx942",
            "MI300X",
            64,
            "v_mfma_f32_32x32x8_f16",
            "a[{}:{}], v[0:1], v[2:3], a[{}:{}]",
            16,
            32.0 * 32.0 * 8.0,
            1307.4e12,
        ),
        (
            "gfx950",
            "MI355X",
            64,
            "v_mfma_f32_16x16x32_f16",
            "a[{}:{}], v[0:3], v[4:7], a[{}:{}]",
            4,
            16.0 * 16.0 * 32.0,
            2516.6e12,
        ),
        (
            "gfx1100",
            "RX 7900 XTX",
            32,
            "v_wmma_f32_16x16x16_f16",
            "v[{}:{}], v[0:7], v[8:15], v[{}:{}]",
            8,
            16.0 * 16.0 * 16.0,
            122.8e12,
        ),
    ];
    for (gfx, device, wave, op, operands, regs, macs, peak) in cases {
        let first = if gfx.starts_with("gfx9") { 0 } else { 16 };
        let text: Vec<String> = (0..4)
            .map(|k| {
                let (a, b) = (first + k * regs, first + k * regs + regs - 1);
                let o = operands
                    .replacen("{}", &a.to_string(), 1)
                    .replacen("{}", &b.to_string(), 1)
                    .replacen("{}", &a.to_string(), 1)
                    .replacen("{}", &b.to_string(), 1);
                format!("{op} {o}")
            })
            .collect();
        let mfma = [&*text[0], &*text[1], &*text[2], &*text[3]];
        let Some((per_second, c)) = matrix_loop(gfx, device, wave, mfma) else {
            return;
        };
        let t = timing(&c);
        let d = Device::by_name(device).unwrap();
        let clock = d.dense_matrix_clock_mhz.unwrap_or(d.clock_mhz);
        assert_near(t.clock_mhz(), clock, 0.001, device);
        let peak = peak * clock / d.clock_mhz;
        let flops = per_second * macs * 2.0;
        assert!(flops <= peak * 1.001, "{device}: {flops:e} above {peak:e}");
        assert_near(flops, peak, 0.10, device);
        assert!(t.main_loop.is_some(), "{device}: {t:?}");
    }
}

/// One lane follows `steps` pointers through a list at `base` (each element the byte offset of
/// the next); returns the estimate.
fn pointer_chase(list: &[u32], steps: u32) -> Option<(TimingSummary, &'static Device)> {
    let lines = [
        "s_load_dwordx2 s[4:5], s[0:1], 0x0",
        "s_load_dword s6, s[0:1], 0x8",
        "s_waitcnt lgkmcnt(0)",
        "v_mov_b32 v1, 0",
        "loop:",
        "global_load_dword v1, v1, s[4:5]",
        "s_waitcnt vmcnt(0)",
        "s_sub_u32 s6, s6, 1",
        "s_cmp_lg_u32 s6, 0",
        "s_cbranch_scc1 loop",
        "s_endpgm",
    ];
    let mut k = kernel("gfx942", "MI300X", 8, &lines)?;
    let bytes: Vec<u8> = list.iter().flat_map(|v| v.to_le_bytes()).collect();
    let base = k.gpu.memory_mut().alloc(bytes.len() as u64, 4096).unwrap();
    k.gpu.memory_mut().write(base, &bytes).unwrap();
    let args = Args::default().ptr(base).u32(steps).0;
    let c = k.run(&args, [1, 1, 1], [1, 1, 1]).unwrap();
    Some((timing(&c).clone(), Device::by_name("MI300X").unwrap()))
}

#[test]
fn a_pointer_chase_takes_the_latency_of_its_level_per_step() {
    let steps = 200u32;
    // Every step a new line 64 KiB on (cold: DRAM), then the same 8 lines over and over (L1).
    let stride = 16 * 1024u32;
    let mut far = vec![0u32; (stride * (steps + 1)) as usize];
    for s in 0..steps {
        far[(s * stride) as usize] = (s + 1) * stride * 4;
    }
    let Some((t, d)) = pointer_chase(&far, steps) else {
        return;
    };
    // Besides the load's latency, each step issues the load, the subtract, the compare and the
    // branch, one issue period (4 cycles) each.
    let overhead = 16.0;
    let dram = d.dram.latency_ns * d.cycles_per_ns();
    let expected = f64::from(steps) * (dram + overhead);
    assert_near(t.cycles as f64, expected, 0.05, "DRAM chase");
    let ring = 8u32;
    let mut near = vec![0u32; (ring * 32) as usize];
    for s in 0..ring {
        near[(s * 32) as usize] = (s + 1) % ring * 128;
    }
    let (t, d) = pointer_chase(&near, steps).unwrap();
    // The first round misses to DRAM, the rest hit the L1.
    let l1 = f64::from(d.l1.latency);
    let expected = f64::from(ring) * (dram + overhead) + f64::from(steps - ring) * (l1 + overhead);
    assert_near(t.cycles as f64, expected, 0.05, "L1 chase");
}

/// One wave reads LDS `reads` times with lane stride `stride` bytes, waiting for each; returns
/// the counters.
fn lds_reads(stride: u32) -> Option<Counters> {
    let shift = format!("v_mul_u32_u24 v1, {stride}, v0");
    let lines = [
        shift.as_str(),
        "s_mov_b32 s10, 100",
        "v_mov_b32 v2, 0",
        "ds_write_b32 v1, v2",
        "s_waitcnt lgkmcnt(0)",
        "loop:",
        "ds_read_b32 v2, v1",
        "s_waitcnt lgkmcnt(0)",
        "s_sub_u32 s10, s10, 1",
        "s_cmp_lg_u32 s10, 0",
        "s_cbranch_scc1 loop",
        "s_endpgm",
    ];
    let mut k = kernel("gfx942", "MI300X", 8, &lines)?;
    k.descriptor.group_segment_fixed_size = 64 * 1024;
    Some(k.run(&[0; 16], [1, 1, 1], [64, 1, 1]).unwrap())
}

#[test]
fn lds_bank_conflicts_cost_their_counted_cycles() {
    let (Some(free), Some(conflicted)) = (lds_reads(4), lds_reads(128)) else {
        return;
    };
    assert_eq!(free.lds_bank_conflict_cycles, 0);
    let extra = conflicted.lds_bank_conflict_cycles as f64;
    assert!(extra > 0.0);
    let slower = timing(&conflicted).cycles as f64 - timing(&free).cycles as f64;
    assert_near(slower, extra, 0.10, "conflict cycles");
}

/// Four waves run `iterations` loops of a few ALU instructions, with or without a barrier each.
fn barrier_loop(barrier: bool) -> Option<Counters> {
    let sync = if barrier { "s_barrier" } else { "s_nop 0" };
    let lines = [
        "s_mov_b32 s10, 100",
        "loop:",
        "v_add_u32 v1, v1, v0",
        sync,
        "s_sub_u32 s10, s10, 1",
        "s_cmp_lg_u32 s10, 0",
        "s_cbranch_scc1 loop",
        "s_endpgm",
    ];
    let mut k = kernel("gfx942", "MI300X", 8, &lines)?;
    Some(k.run(&[0; 16], [1, 1, 1], [256, 1, 1]).unwrap())
}

#[test]
fn barriers_cost_their_modelled_cycles() {
    let (Some(plain), Some(synced)) = (barrier_loop(false), barrier_loop(true)) else {
        return;
    };
    let t = timing(&synced);
    // Each wave waits at each barrier for the last arrival and the barrier's latency.
    let per_wave = t.stalled(Stall::Barrier) as f64 / 4.0;
    assert!(per_wave >= 100.0 * 16.0, "{t:?}");
    let slower = t.cycles as f64 - timing(&plain).cycles as f64;
    assert_near(slower, per_wave, 0.10, "barrier cycles");
}

/// Eight waves of one workgroup on MI300X (two per SIMD) each run 64 `v_mfma_f32_32x32x8_f16`
/// (32 cycles each), the upper four after `s_setprio 3` when `prioritized`; returns the cycle
/// each wave read `s_memtime` at when it was done.
fn matrix_race(prioritized: bool) -> Option<[u64; 8]> {
    let priority = if prioritized {
        "s_setprio 3"
    } else {
        "s_nop 0"
    };
    let mut lines = vec![
        "s_load_dwordx2 s[4:5], s[0:1], 0x0",
        "v_readfirstlane_b32 s12, v0",
        "s_lshr_b32 s12, s12, 6",
        "s_cmp_lt_u32 s12, 4",
        "s_cbranch_scc1 go",
        priority,
        "go:",
        "s_mov_b32 s10, 16",
        "loop:",
    ];
    let mfma: Vec<String> = (0..4)
        .map(|k| {
            let (a, b) = (k * 16, k * 16 + 15);
            format!("v_mfma_f32_32x32x8_f16 a[{a}:{b}], v[0:1], v[2:3], a[{a}:{b}]")
        })
        .collect();
    lines.extend(mfma.iter().map(String::as_str));
    lines.extend([
        "s_sub_u32 s10, s10, 1",
        "s_cmp_lg_u32 s10, 0",
        "s_cbranch_scc1 loop",
        "s_memtime s[6:7]",
        "s_waitcnt lgkmcnt(0)",
        "s_lshl_b32 s13, s12, 3",
        "v_mov_b32 v4, s13",
        "v_mov_b32 v6, s6",
        "v_mov_b32 v7, s7",
        "global_store_dwordx2 v4, v[6:7], s[4:5]",
        "s_endpgm",
    ]);
    let mut k = kernel("gfx942", "MI300X", 128, &lines)?;
    let out = k.gpu.memory_mut().alloc(64, 16).unwrap();
    k.run(&Args::default().ptr(out).0, [1, 1, 1], [512, 1, 1])
        .unwrap();
    Some(words(&mut k, out))
}

#[test]
fn a_simds_matrix_core_serves_the_higher_priority_then_the_older_wave() {
    let (Some(by_age), Some(by_priority)) = (matrix_race(false), matrix_race(true)) else {
        return;
    };
    // Alone a wave's 64 MFMAs take 64 x 32 = 2048 cycles; two waves share a SIMD's matrix core.
    let (alone, shared) = (2048.0, 4096.0);
    // At equal priority the older wave of a SIMD (the lower four) takes the matrix core whenever
    // it frees, and ends near the time alone; the younger keeps the rest.
    for (wave, &end) in by_age.iter().enumerate() {
        let expected = if wave < 4 { alone } else { shared };
        assert_near(end as f64, expected, 0.05, &format!("wave {wave} by age"));
    }
    // At priority 3 the younger waves go first.
    for (wave, &end) in by_priority.iter().enumerate() {
        let expected = if wave < 4 { shared } else { alone };
        assert_near(
            end as f64,
            expected,
            0.05,
            &format!("wave {wave} by priority"),
        );
    }
}

#[test]
fn a_device_of_another_target_is_refused_by_name() {
    let mut gpu = iron_emu::Gpu::new(iron_emu::Target::Gfx942);
    let e = gpu
        .set_timing(Device::by_name("RX 7900 XTX"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("RX 7900 XTX is a gfx1100 device"), "{e}");
    assert!(e.contains("MI300X, MI325X"), "{e}");
    assert!(gpu.set_timing(Device::by_name("MI325X")).is_ok());
}

/// One RDNA3 wave runs 64 vector adds, each depending on the last when `dependent` (with the
/// `s_delay_alu` the compiler puts there) or on nothing.
fn valu_chain(dependent: bool) -> Option<TimingSummary> {
    let (add, delay) = if dependent {
        ("v_add_f32 v1, v1, v2", "s_delay_alu instid0(VALU_DEP_1)")
    } else {
        ("v_add_f32 v3, v1, v2", "s_nop 0")
    };
    let mut lines = Vec::new();
    for _ in 0..64 {
        lines.extend([add, delay]);
    }
    lines.push("s_endpgm");
    let mut k = kernel("gfx1100", "RX 7900 XTX", 8, &lines)?;
    let c = k.run(&[0; 16], [1, 1, 1], [32, 1, 1]).unwrap();
    Some(timing(&c).clone())
}

#[test]
fn a_dependent_rdna_add_waits_for_the_result_s_delay_alu_names() {
    let (Some(chain), Some(free)) = (valu_chain(true), valu_chain(false)) else {
        return;
    };
    // An add and its delay (or a one-cycle nop) issue in 2 cycles; a dependent add waits for
    // the 5-cycle result of the one before.
    assert_near(free.cycles as f64, 64.0 * 2.0, 0.10, "independent adds");
    assert_near(chain.cycles as f64, 64.0 * 5.0, 0.10, "dependent adds");
    assert!(chain.stalled(Stall::Dependency) > 0);
}

/// One wave reads `s_memtime` and `s_memrealtime`, sleeps `s_sleep 10`, reads both again and
/// stores the four; returns them with the dispatch's estimate.
fn clocks_around_a_sleep() -> Option<([u64; 4], TimingSummary)> {
    let lines = [
        "s_load_dwordx2 s[4:5], s[0:1], 0x0",
        "s_waitcnt lgkmcnt(0)",
        "s_memtime s[6:7]",
        "s_memrealtime s[8:9]",
        "s_sleep 10",
        "s_memtime s[10:11]",
        "s_memrealtime s[12:13]",
        "s_waitcnt lgkmcnt(0)",
        "v_mov_b32 v0, 0",
        "v_mov_b32 v2, s6",
        "v_mov_b32 v3, s7",
        "v_mov_b32 v4, s8",
        "v_mov_b32 v5, s9",
        "v_mov_b32 v6, s10",
        "v_mov_b32 v7, s11",
        "v_mov_b32 v8, s12",
        "v_mov_b32 v9, s13",
        "global_store_dwordx4 v0, v[2:5], s[4:5]",
        "global_store_dwordx4 v0, v[6:9], s[4:5] offset:16",
        "s_endpgm",
    ];
    // gfx90a has both (gfx942 and gfx950 dropped `s_memrealtime`).
    let mut k = kernel("gfx90a", "MI210", 16, &lines)?;
    let out = k.gpu.memory_mut().alloc(32, 16).unwrap();
    let c = k
        .run(&Args::default().ptr(out).0, [1, 1, 1], [64, 1, 1])
        .unwrap();
    Some((words(&mut k, out), timing(&c).clone()))
}

#[test]
fn s_memtime_and_s_memrealtime_read_modelled_time() {
    let Some(([time0, real0, time1, real1], t)) = clocks_around_a_sleep() else {
        return;
    };
    // `s_sleep 10` is 640 cycles; the second `s_memtime` issues after it and after the first
    // `s_memrealtime`'s issue period.
    let slept = time1 - time0;
    assert!(
        (640..=660).contains(&slept),
        "s_memtime moved {slept} cycles"
    );
    assert!(
        time1 < t.cycles,
        "{time1} read after the dispatch's end {}",
        t.cycles
    );
    // The real-time clock counts 100 MHz: 640 cycles at MI210's 1700 MHz are 37.6 ticks.
    let ticks = real1 - real0;
    let expected = slept as f64 * 100.0 / 1700.0;
    assert!(
        (ticks as f64 - expected).abs() <= 1.0,
        "{ticks} ticks against {expected:.1}"
    );
}
