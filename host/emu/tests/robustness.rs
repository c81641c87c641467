//! Nothing a kernel does may crash or hang the host: random instruction streams must end in a
//! result or an error value (never a panic), within the instruction budget.

mod common;

use iron_emu::gfx9::{Encoding, OpcodeTables};
use iron_emu::{Dispatch, Gpu, KernelDescriptor, Target};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A random word biased toward the encodings kernels use (so that most words decode).
fn word(rng: &mut StdRng) -> u32 {
    let prefixes: [(u32, u32); 12] = [
        (0x8000_0000, 0xc000_0000), // SOP2
        (0xbe80_0000, 0xff80_0000), // SOP1
        (0xbf00_0000, 0xff80_0000), // SOPC
        (0xb000_0000, 0xf000_0000), // SOPK
        (0x0000_0000, 0x8000_0000), // VOP2
        (0x7e00_0000, 0xfe00_0000), // VOP1
        (0x7c00_0000, 0xfe00_0000), // VOPC
        (0xd000_0000, 0xfc00_0000), // VOP3
        (0xd380_0000, 0xff80_0000), // VOP3P
        (0xd800_0000, 0xfc00_0000), // DS
        (0xdc00_0000, 0xfc00_0000), // FLAT/GLOBAL/SCRATCH
        (0xe000_0000, 0xfc00_0000), // MUBUF
    ];
    let (p, m) = prefixes[rng.random_range(0..prefixes.len())];
    match rng.random_range(0..10) {
        0 => rng.random(),
        1 => 0xbf80_0000 | rng.random_range(0..32) << 16 | rng.random_range(0..8u32),
        _ => p | (rng.random::<u32>() & !m),
    }
}

#[test]
fn random_programs_never_panic() {
    let programs: usize = std::env::var("EMU_ROBUST_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for target in Target::ALL.into_iter().filter(|t| !t.is_rdna()) {
        let mut rng = StdRng::seed_from_u64(0xbad5eed ^ target as u64);
        let mut outcomes = [0usize; 2];
        let tables = OpcodeTables::for_target(target).unwrap();
        let slots: Vec<_> = Encoding::ALL
            .iter()
            .flat_map(|&e| tables.slots(e).map(move |(n, op)| (e, n, op)))
            // Sparse and XF32 matrix ops are not executed; leaving them out lets programs run
            // further.
            .filter(|(_, _, op)| !op.name().starts_with("v_smfmac") && !op.name().ends_with("xf32"))
            .collect();
        for _ in 0..programs {
            let mut gpu = Gpu::new(target);
            gpu.set_instruction_budget(2_000);
            let mut words: Vec<u32> = Vec::new();
            for _ in 0..24 {
                if rng.random_bool(0.1) {
                    words.push(word(&mut rng));
                } else {
                    let (enc, num, op) = slots[rng.random_range(0..slots.len())];
                    words.extend(common::random_instruction::instruction(
                        &mut rng, enc, num, op,
                    ));
                }
            }
            words.push(0xbf81_0000); // s_endpgm
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let base = gpu.memory_mut().alloc(bytes.len() as u64, 4096).unwrap();
            gpu.memory_mut().write(base, &bytes).unwrap();
            let code = gpu.load_code(&bytes, base);
            let descriptor = KernelDescriptor {
                group_segment_fixed_size: 1024,
                private_segment_fixed_size: 64,
                kernarg_size: 64,
                compute_pgm_rsrc1: 3 << 16 | 3 << 18 | 1 << 23,
                compute_pgm_rsrc2: 1 | 6 << 1 | 1 << 7 | 2 << 11,
                kernel_code_properties: 1 | 1 << 3,
                ..Default::default()
            };
            let kernarg: Vec<u8> = (0..64).map(|_| rng.random()).collect();
            let d = Dispatch {
                kernel_name: "random",
                code,
                entry: base,
                descriptor,
                kernarg: &kernarg,
                grid: [2, 1, 1],
                workgroup_size: [96, 1, 1],
                dynamic_lds: 0,
                buffers: None,
            };
            match gpu.dispatch(&d) {
                Ok(_) => outcomes[0] += 1,
                Err(e) => {
                    let text = e.to_string();
                    assert!(!text.is_empty());
                    if std::env::var("EMU_ROBUST_SHOW").is_ok() {
                        eprintln!("{text}");
                    }
                    outcomes[1] += 1;
                }
            }
        }
        eprintln!(
            "{target}: {} completed, {} stopped with an error",
            outcomes[0], outcomes[1]
        );
    }
}

/// Every opcode of every encoding, with random operands, as a one-instruction program: each one
/// runs, or stops with an error value (unsupported, memory fault, ...), never a panic.
#[test]
fn every_opcode_runs_or_stops_cleanly() {
    let per_op: usize = std::env::var("EMU_ROBUST_PER_OP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    for target in Target::ALL.into_iter().filter(|t| !t.is_rdna()) {
        let tables = OpcodeTables::for_target(target).unwrap();
        let mut rng = StdRng::seed_from_u64(0x0bc0de ^ target as u64);
        let mut outcomes = [0usize; 2];
        for enc in Encoding::ALL {
            for (num, op) in tables.slots(enc) {
                for _ in 0..per_op {
                    let mut words = common::random_instruction::instruction(&mut rng, enc, num, op);
                    if words.is_empty() {
                        continue;
                    }
                    words.push(0xbf81_0000); // s_endpgm
                    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                    let mut gpu = Gpu::new(target);
                    gpu.set_instruction_budget(100);
                    let base = gpu.memory_mut().alloc(bytes.len() as u64, 4096).unwrap();
                    let code = gpu.load_code(&bytes, base);
                    let descriptor = KernelDescriptor {
                        group_segment_fixed_size: 65536,
                        private_segment_fixed_size: 64,
                        kernarg_size: 64,
                        compute_pgm_rsrc1: 3 << 16 | 3 << 18 | 1 << 23,
                        compute_pgm_rsrc2: 1 | 6 << 1 | 1 << 7 | 2 << 11,
                        kernel_code_properties: 1 | 1 << 3,
                        ..Default::default()
                    };
                    let kernarg: Vec<u8> = (0..64).map(|_| rng.random()).collect();
                    let d = Dispatch {
                        kernel_name: op.name(),
                        code,
                        entry: base,
                        descriptor,
                        kernarg: &kernarg,
                        grid: [1, 1, 1],
                        workgroup_size: [64, 1, 1],
                        dynamic_lds: 0,
                        buffers: None,
                    };
                    match gpu.dispatch(&d) {
                        Ok(_) => outcomes[0] += 1,
                        Err(e) => {
                            assert!(!e.to_string().is_empty());
                            outcomes[1] += 1;
                        }
                    }
                }
            }
        }
        eprintln!(
            "{target}: {} single-instruction programs completed, {} stopped with an error",
            outcomes[0], outcomes[1]
        );
    }
}
