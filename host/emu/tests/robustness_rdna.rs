//! Nothing an RDNA kernel does may crash or hang the host: random instruction streams (every opcode
//! slot of every encoding, with random fields) must end in a result or an error value, never a
//! panic, in wave32 and wave64.

use iron_emu::rdna::{Encoding, OpcodeTables};
use iron_emu::{Dispatch, Gpu, KernelDescriptor, Target};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `s_endpgm`.
const S_ENDPGM: u32 = 0xbfb0_0000;

/// The words of one instruction of `enc` with opcode `op` and random other fields (followed by
/// random dwords that serve as literals, DPP words or further instructions).
fn instruction(rng: &mut StdRng, target: Target, enc: Encoding, op: u32) -> Vec<u32> {
    let gfx12 = target == Target::Gfx1201;
    let r = |rng: &mut StdRng, bits: u32| rng.random::<u32>() & ((1u64 << bits) - 1) as u32;
    let w0 = match enc {
        Encoding::Sop1 => 0x17D << 23 | r(rng, 7) << 16 | op << 8 | r(rng, 8),
        Encoding::Sop2 => 0b10 << 30 | op << 23 | r(rng, 23),
        Encoding::Sopk => 0b1011 << 28 | op << 23 | r(rng, 23),
        Encoding::Sopc => 0x17E << 23 | op << 16 | r(rng, 16),
        Encoding::Sopp => 0x17F << 23 | op << 16 | r(rng, 16),
        Encoding::Smem if gfx12 => 0b11_1101 << 26 | op << 13 | r(rng, 13),
        Encoding::Smem => 0b11_1101 << 26 | op << 18 | r(rng, 18),
        Encoding::Vop1 => 0b011_1111 << 25 | r(rng, 8) << 17 | op << 9 | r(rng, 9),
        Encoding::Vop2 => op << 25 | r(rng, 25),
        Encoding::Vopc => 0b011_1110 << 25 | op << 17 | r(rng, 17),
        Encoding::Vop3 => 0b11_0101 << 26 | op << 16 | r(rng, 16),
        Encoding::Vop3p => 0xCC << 24 | op << 16 | r(rng, 16),
        Encoding::VopdX => 0b11_0010 << 26 | op << 22 | 8 << 17 | r(rng, 17),
        Encoding::VopdY => 0b11_0010 << 26 | 8 << 22 | op << 17 | r(rng, 17),
        Encoding::Ds => 0b11_0110 << 26 | op << 18 | r(rng, 18),
        Encoding::Flat | Encoding::Global | Encoding::Scratch if gfx12 => {
            let prefix = match enc {
                Encoding::Flat => 0xEC,
                Encoding::Scratch => 0xED,
                _ => 0xEE,
            };
            prefix << 24 | op << 14 | r(rng, 14)
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            let seg = match enc {
                Encoding::Flat => 0,
                Encoding::Scratch => 1,
                _ => 2,
            };
            0b11_0111 << 26 | op << 18 | seg << 16 | r(rng, 16)
        }
        Encoding::Mubuf if gfx12 => 0b11_0001 << 26 | op << 14 | r(rng, 14),
        Encoding::Mubuf => 0b11_1000 << 26 | op << 18 | r(rng, 18),
    };
    vec![w0, rng.random(), rng.random()]
}

/// Runs `words` as a kernel of one 64-work-item workgroup; returns whether it completed.
fn run(target: Target, wave64: bool, words: &[u32], rng: &mut StdRng, name: &str) -> bool {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut gpu = Gpu::new(target);
    gpu.set_instruction_budget(2_000);
    let base = gpu.memory_mut().alloc(bytes.len() as u64, 4096).unwrap();
    let code = gpu.load_code(&bytes, base);
    let descriptor = KernelDescriptor {
        group_segment_fixed_size: 65536,
        private_segment_fixed_size: 64,
        kernarg_size: 64,
        compute_pgm_rsrc1: 3 << 16 | 3 << 18 | 1 << 23,
        compute_pgm_rsrc2: 1 | 2 << 1 | 1 << 7 | 2 << 11,
        kernel_code_properties: 1 << 3 | u16::from(!wave64) << 10,
        ..Default::default()
    };
    let kernarg: Vec<u8> = (0..64).map(|_| rng.random()).collect();
    let d = Dispatch {
        kernel_name: name,
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
        Ok(_) => true,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

#[test]
fn every_rdna_opcode_runs_or_stops_cleanly() {
    let per_op: usize = std::env::var("EMU_ROBUST_PER_OP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for target in [Target::Gfx1100, Target::Gfx1201] {
        let tables = OpcodeTables::for_target(target).unwrap();
        for wave64 in [false, true] {
            let mut rng = StdRng::seed_from_u64(0x0bc0de ^ target as u64 ^ u64::from(wave64));
            let mut outcomes = [0usize; 2];
            for enc in Encoding::ALL {
                for (num, op) in tables.slots(enc) {
                    for _ in 0..per_op {
                        let words: Vec<u32> = instruction(&mut rng, target, enc, num)
                            .into_iter()
                            .chain([S_ENDPGM])
                            .collect();
                        let done = run(target, wave64, &words, &mut rng, op.name());
                        outcomes[usize::from(!done)] += 1;
                    }
                }
            }
            eprintln!(
                "{target} wave64={wave64}: {} programs completed, {} stopped with an error",
                outcomes[0], outcomes[1]
            );
        }
    }
}

#[test]
fn random_rdna_programs_never_panic() {
    let programs: usize = std::env::var("EMU_ROBUST_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    for target in [Target::Gfx1100, Target::Gfx1201] {
        let tables = OpcodeTables::for_target(target).unwrap();
        let slots: Vec<(Encoding, u32)> = Encoding::ALL
            .iter()
            .flat_map(|&e| tables.slots(e).map(move |(n, _)| (e, n)))
            .collect();
        let mut rng = StdRng::seed_from_u64(0xbad5eed ^ target as u64);
        let mut outcomes = [0usize; 2];
        for p in 0..programs {
            let mut words = Vec::new();
            for _ in 0..16 {
                let (enc, num) = slots[rng.random_range(0..slots.len())];
                words.extend(instruction(&mut rng, target, enc, num));
            }
            words.push(S_ENDPGM);
            let done = run(target, p % 2 == 1, &words, &mut rng, "random");
            outcomes[usize::from(!done)] += 1;
        }
        eprintln!(
            "{target}: {} random programs completed, {} stopped with an error",
            outcomes[0], outcomes[1]
        );
    }
}
