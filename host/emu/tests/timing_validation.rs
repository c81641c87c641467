//! The timing model against published measurements: streaming bandwidth and pointer-chase
//! latency per cache level, each run here on the model with a kernel like the one measured and
//! set against the published figure. Each row states how far off the model is allowed to be, so
//! a change that moves the model away from the hardware fails here; `--nocapture` prints the
//! table `docs/performance.md` shows.

mod common;

use common::{Args, AsmKernel};
use iron_emu::Checks;
use iron_emu::timing::Device;

/// The vector-memory syntax of a family: a scalar pointer load, a dword load, the two waits.
struct Syntax {
    load_pointer: &'static str,
    load_count: &'static str,
    load: &'static str,
    wait_scalar: &'static str,
    wait_vector: &'static str,
}

fn syntax(gfx: &str) -> Syntax {
    if gfx.starts_with("gfx9") {
        Syntax {
            load_pointer: "s_load_dwordx2 s[4:5], s[0:1], 0x0",
            load_count: "s_load_dword s6, s[0:1], 0x8",
            load: "global_load_dword v1, v1, s[4:5]",
            wait_scalar: "s_waitcnt lgkmcnt(0)",
            wait_vector: "s_waitcnt vmcnt(0)",
        }
    } else {
        Syntax {
            load_pointer: "s_load_b64 s[4:5], s[0:1], 0x0",
            load_count: "s_load_b32 s6, s[0:1], 0x8",
            load: "global_load_b32 v1, v1, s[4:5]",
            wait_scalar: "s_waitcnt lgkmcnt(0)",
            wait_vector: "s_waitcnt vmcnt(0)",
        }
    }
}

/// Assembles `lines` for `gfx`, timed on `device`, with every check off.
fn timed(gfx: &str, device: &'static Device, lines: &[&str]) -> Option<AsmKernel> {
    let mut k = AsmKernel::new(gfx, lines)?;
    k.gpu.set_checks(Checks::NONE);
    k.gpu.set_timing(Some(device)).unwrap();
    Some(k)
}

/// Cycles one lane takes to follow `steps` pointers around a ring of `lines` cache lines of
/// 128 bytes (each holding the byte offset of the next).
fn chase(gfx: &str, device: &'static Device, lines: u32, steps: u32) -> Option<f64> {
    let s = syntax(gfx);
    let code = [
        s.load_pointer,
        s.load_count,
        s.wait_scalar,
        "v_mov_b32 v1, 0",
        "loop:",
        s.load,
        s.wait_vector,
        "s_sub_u32 s6, s6, 1",
        "s_cmp_lg_u32 s6, 0",
        "s_cbranch_scc1 loop",
        "s_endpgm",
    ];
    let mut k = timed(gfx, device, &code)?;
    let mut ring = vec![0u8; lines as usize * 128];
    for l in 0..lines {
        let next = (l + 1) % lines * 128;
        ring[l as usize * 128..][..4].copy_from_slice(&next.to_le_bytes());
    }
    let base = k.gpu.memory_mut().alloc(ring.len() as u64, 4096).unwrap();
    k.gpu.memory_mut().write(base, &ring).unwrap();
    let args = Args::default().ptr(base).u32(steps).0;
    let c = k.run(&args, [1, 1, 1], [1, 1, 1]).unwrap();
    Some(c.timing.unwrap().cycles as f64)
}

/// Cycles per step of a chase around a ring of `lines` lines once it is warm (the difference
/// between three rounds and one, over two rounds), and per step of the first, cold round.
fn chase_steps(gfx: &str, device: &'static Device, lines: u32) -> Option<(f64, f64)> {
    let one = chase(gfx, device, lines, lines)?;
    let three = chase(gfx, device, lines, 3 * lines)?;
    Some(((three - one) / f64::from(2 * lines), one / f64::from(lines)))
}

/// Bytes per second a copy of `groups` x 4 KiB (one 16-byte load and store per lane) moves.
fn copy_bandwidth(gfx: &str, device: &'static Device, groups: u32) -> Option<f64> {
    let (load, store, wait) = if gfx.starts_with("gfx9") {
        (
            "global_load_dwordx4 v[2:5], v1, s[6:7]",
            "global_store_dwordx4 v1, v[2:5], s[4:5]",
            "s_waitcnt vmcnt(0)",
        )
    } else {
        (
            "global_load_b128 v[2:5], v1, s[6:7]",
            "global_store_b128 v1, v[2:5], s[4:5]",
            "s_waitcnt vmcnt(0)",
        )
    };
    let pointers = if gfx.starts_with("gfx9") {
        "s_load_dwordx4 s[4:7], s[0:1], 0x0"
    } else {
        "s_load_b128 s[4:7], s[0:1], 0x0"
    };
    let code = [
        pointers,
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v1, 4, v0",
        "s_lshl_b32 s8, s2, 12",
        "v_add_nc_u32 v1, s8, v1",
        load,
        wait,
        store,
        "s_endpgm",
    ];
    let mut code = code.to_vec();
    if gfx.starts_with("gfx9") {
        code[4] = "v_add_u32 v1, s8, v1";
    }
    let mut k = timed(gfx, device, &code)?;
    let bytes = u64::from(groups) * 4096;
    let input = k.gpu.memory_mut().alloc(bytes, 4096).unwrap();
    k.gpu
        .memory_mut()
        .write(input, &vec![1; bytes as usize])
        .unwrap();
    let output = k.gpu.memory_mut().alloc(bytes, 4096).unwrap();
    let args = Args::default().ptr(output).ptr(input).0;
    let c = k.run(&args, [groups, 1, 1], [256, 1, 1]).unwrap();
    Some((2 * bytes) as f64 / c.timing.unwrap().seconds())
}

/// One published figure and the model's value for it.
struct Row {
    device: &'static str,
    what: &'static str,
    published: f64,
    unit: &'static str,
    model: f64,
    /// How far off (as a fraction) the model may be.
    allowed: f64,
    source: &'static str,
}

const MT4G: &str = "MT4G sample results (github.com/caps-tum/mt4g)";
const GPU_BENCHES: &str = "gpu-benches (github.com/te42kyfo/gpu-benches)";
const AZURE: &str = "Azure AI-benchmarking-guide, ND MI300X v5 (BabelStream)";
const CNC_MI300X: &str = "Chips and Cheese, Testing AMD's Giant MI300X";
const CNC_RDNA3: &str = "Chips and Cheese, Latency Testing is Hard: RDNA 3 Power Saving";

#[test]
fn the_model_stays_within_its_stated_error_of_published_measurements() {
    let mi300x = Device::by_name("MI300X").unwrap();
    let mi210 = Device::by_name("MI210").unwrap();
    let xtx = Device::by_name("RX 7900 XTX").unwrap();
    let ns = |d: &Device, cycles: f64| cycles / d.cycles_per_ns();
    let Some((l1, _)) = chase_steps("gfx942", mi300x, 8) else {
        return;
    };
    let (l2, dram) = chase_steps("gfx942", mi300x, 8192).unwrap();
    let (mall, _) = chase_steps("gfx942", mi300x, 131_072).unwrap();
    let (l1_210, _) = chase_steps("gfx90a", mi210, 8).unwrap();
    let (l2_210, dram_210) = chase_steps("gfx90a", mi210, 8192).unwrap();
    let (_, dram_xtx) = chase_steps("gfx1100", xtx, 8192).unwrap();
    let (mall_xtx, _) = chase_steps("gfx1100", xtx, 262_144).unwrap();
    let rows = [
        Row {
            device: "MI300X",
            what: "copy bandwidth",
            published: 4.11e12,
            unit: "B/s",
            model: copy_bandwidth("gfx942", mi300x, 16384).unwrap(),
            allowed: 0.10,
            source: AZURE,
        },
        Row {
            device: "MI210",
            what: "scale bandwidth (read + write)",
            published: 1.399e12,
            unit: "B/s",
            model: copy_bandwidth("gfx90a", mi210, 8192).unwrap(),
            allowed: 0.10,
            source: GPU_BENCHES,
        },
        Row {
            device: "MI300X",
            what: "L1 latency",
            published: 116.0,
            unit: "cycles",
            model: l1,
            allowed: 0.15,
            source: MT4G,
        },
        Row {
            device: "MI300X",
            what: "L2 latency",
            published: 287.5,
            unit: "cycles",
            model: l2,
            allowed: 0.10,
            source: MT4G,
        },
        Row {
            device: "MI300X",
            what: "Infinity Cache latency",
            published: 218.0,
            unit: "ns",
            model: ns(mi300x, mall),
            allowed: 0.10,
            source: CNC_MI300X,
        },
        Row {
            device: "MI300X",
            what: "HBM latency",
            published: 899.7,
            unit: "cycles",
            model: dram,
            allowed: 0.10,
            source: MT4G,
        },
        Row {
            device: "MI210",
            what: "L1 latency",
            published: 125.1,
            unit: "cycles",
            model: l1_210,
            allowed: 0.15,
            source: GPU_BENCHES,
        },
        Row {
            device: "MI210",
            what: "L2 latency",
            published: 237.0,
            unit: "cycles",
            model: l2_210,
            allowed: 0.40,
            source: GPU_BENCHES,
        },
        Row {
            device: "MI210",
            what: "HBM latency (1.5 GB)",
            published: 657.0,
            unit: "cycles",
            model: dram_210,
            allowed: 0.20,
            source: GPU_BENCHES,
        },
        Row {
            device: "RX 7900 XTX",
            what: "Infinity Cache latency (vector)",
            published: 150.3,
            unit: "ns",
            model: ns(xtx, mall_xtx),
            allowed: 0.10,
            source: CNC_RDNA3,
        },
        Row {
            device: "RX 7900 XTX",
            what: "DRAM latency (vector)",
            published: 234.55,
            unit: "ns",
            model: ns(xtx, dram_xtx),
            allowed: 0.10,
            source: CNC_RDNA3,
        },
    ];
    println!("| device | measurement | published | model | error | allowed | source |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | --- |");
    let mut outside = Vec::new();
    for r in &rows {
        let error = r.model / r.published - 1.0;
        let (published, model) = if r.unit == "B/s" {
            (
                format!("{:.2} TB/s", r.published / 1e12),
                format!("{:.2} TB/s", r.model / 1e12),
            )
        } else {
            (
                format!("{:.0} {}", r.published, r.unit),
                format!("{:.0} {}", r.model, r.unit),
            )
        };
        println!(
            "| {} | {} | {published} | {model} | {:+.1}% | {:.0}% | {} |",
            r.device,
            r.what,
            100.0 * error,
            100.0 * r.allowed,
            r.source
        );
        if error.abs() > r.allowed {
            outside.push(format!("{} {}: {:+.1}%", r.device, r.what, 100.0 * error));
        }
    }
    assert!(outside.is_empty(), "outside the stated error: {outside:?}");
}
