//! `iron_intrinsics::atomic` on every CDNA and RDNA build of the Rust test kernels
//! (`tests/data/rust`): each read-modify-write, compare-and-swap, load and store at each scope
//! and ordering gives what sequentially applied operations give, whatever the schedule; and
//! agent-scope fences order a last-block reduction as the global racecheck requires, which
//! fails it without them.
mod common;

use common::variant::{CDNA, RDNA, Variant};
use common::{Args, Loaded, bytes_of, data, from_bytes, last_block, load};
use iron_emu::{Checks, EmuError, Fault, Schedule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The Rust builds, each loaded fresh.
fn builds() -> impl Iterator<Item = (&'static Variant, Loaded)> {
    CDNA.iter().chain(RDNA.iter()).filter_map(|v| {
        let path = data(&format!("rust_kernels_{}.elf", v.name));
        common::variant::built(&path).then(|| (v, load(&path)))
    })
}

/// The schedules each test runs under.
const SCHEDULES: [Schedule; 3] = [
    Schedule::InOrder,
    Schedule::Random { seed: 11 },
    Schedule::Random { seed: 12 },
];

/// Initial values of the counters `scoped_atomics` shares between workgroups.
const INTS: [u32; 10] = [0, 0, u32::MAX, 0, 0, u32::MAX, 1000, 5, 0, 77];
const SIGNED: [i32; 2] = [10, i32::MIN];
const WIDE: [u64; 4] = [3, 0, 0, 0x0123_4567_89ab_cdef];
const FLOATS: [f32; 3] = [0.0, -1.0e30, 1.0e30];
const DOUBLES: [f64; 1] = [0.5];

/// What `scoped_atomics` leaves in its counters after `n` work-items, applied one by one.
struct Expected {
    ints: [u32; 9],
    signed: [i32; 2],
    wide: [u64; 4],
    floats: [f32; 3],
    doubles: [f64; 1],
}

fn expected(n: u32) -> Expected {
    let mut e = Expected {
        ints: INTS[..9].try_into().unwrap(),
        signed: SIGNED,
        wide: WIDE,
        floats: FLOATS,
        doubles: DOUBLES,
    };
    for i in 0..n {
        let x = &mut e.ints;
        x[0] += 1;
        x[1] = x[1].max(i);
        x[2] = x[2].min(i ^ 0x55);
        x[3] |= 1 << (i % 32);
        x[4] ^= i.wrapping_mul(0x9e37_79b9);
        x[5] &= !(1 << (i % 32));
        x[6] = x[6].wrapping_sub(3);
        x[7] = x[7].wrapping_add(i);
        x[8] += 2;
        e.signed[0] = e.signed[0].wrapping_sub(i as i32);
        e.signed[1] = e.signed[1].max(i as i32 - 300);
        e.wide[0] = e.wide[0].wrapping_add((1 << 33) + u64::from(i));
        e.wide[1] = e.wide[1].max(u64::from(i) << 40);
        e.wide[2] = (e.wide[2] as i64).min(-(i64::from(i) << 36)) as u64;
        e.wide[3] ^= 1 << (i % 64);
        e.floats[0] += 0.5;
        e.floats[1] = e.floats[1].max(i as f32 * 0.25);
        e.floats[2] = e.floats[2].min(-(i as f32));
        e.doubles[0] += f64::from(i) * 0.125;
    }
    e
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn scoped_atomics_give_what_operations_applied_in_turn_give() {
    for (v, mut k) in builds() {
        let wave = v.lanes;
        for groups in [1u32, 3, 7] {
            let n = groups * 256;
            let want = expected(n);
            for schedule in SCHEDULES {
                k.gpu.set_schedule(schedule);
                let context = format!("{} {schedule} {groups} workgroups", v.name);
                let ints = k.upload(&bytes_of(&INTS));
                let signed = k.upload(&bytes_of(&SIGNED));
                let wide = k.upload(&bytes_of(&WIDE));
                let floats = k.upload(&bytes_of(&FLOATS));
                let doubles = k.upload(&bytes_of(&DOUBLES));
                let olds = k.upload(&vec![0xee; 4 * n as usize]);
                let per_group = k.upload(&vec![0; 4 * groups as usize]);
                let per_wave = k.upload(&vec![0; 4 * n as usize / wave]);
                let args = Args::default()
                    .ptr(ints)
                    .ptr(signed)
                    .ptr(wide)
                    .ptr(floats)
                    .ptr(doubles)
                    .ptr(olds)
                    .ptr(per_group)
                    .ptr(per_wave);
                k.launch("scoped_atomics", &args.0, [groups, 1, 1], [256, 1, 1], 0)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let got: Vec<u32> = from_bytes(&k.download(ints, 40));
                assert_eq!(got[..9], want.ints, "{context}");
                assert_eq!(
                    from_bytes::<i32>(&k.download(signed, 8)),
                    want.signed,
                    "{context}"
                );
                assert_eq!(
                    from_bytes::<u64>(&k.download(wide, 32)),
                    want.wide,
                    "{context}"
                );
                assert_eq!(
                    from_bytes::<f32>(&k.download(floats, 12)),
                    want.floats,
                    "{context}"
                );
                assert_eq!(
                    from_bytes::<f64>(&k.download(doubles, 8)),
                    want.doubles,
                    "{context}"
                );
                // The swaps form a chain: what each found, and what the last left, are the
                // initial value and every work-item's index, each once.
                let mut chain: Vec<u32> = from_bytes(&k.download(olds, 4 * n as usize));
                chain.push(got[9]);
                chain.sort_unstable();
                let mut all: Vec<u32> = (0..n).collect();
                all.push(INTS[9]);
                all.sort_unstable();
                assert_eq!(chain, all, "{context}");
                let group_counts: Vec<u32> =
                    from_bytes(&k.download(per_group, 4 * groups as usize));
                assert_eq!(group_counts, vec![256; groups as usize], "{context}");
                let wave_sums: Vec<u32> = from_bytes(&k.download(per_wave, 4 * n as usize / wave));
                let want_sums: Vec<u32> = (0..n as usize / wave)
                    .map(|w| (w * wave..(w + 1) * wave).map(|i| i as u32).sum())
                    .collect();
                assert_eq!(wave_sums, want_sums, "{context}");
            }
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn agent_scope_fences_order_a_last_block_reduction() {
    let mut rng = StdRng::seed_from_u64(301);
    for (v, mut k) in builds() {
        k.gpu.set_checks(Checks::ALL);
        for (chunks, schedule) in [(29, SCHEDULES[0]), (29, SCHEDULES[1]), (64, SCHEDULES[2])] {
            k.gpu.set_schedule(schedule);
            let input: Vec<u32> = (0..16 * chunks)
                .map(|_| rng.random_range(0..1000))
                .collect();
            let sum: u32 = input.iter().sum();
            let context = format!("{} {schedule} {chunks} chunks", v.name);
            assert_eq!(
                last_block(&mut k, "last_block_sum_scoped", &input, true)
                    .unwrap_or_else(|e| panic!("{context}: {e}")),
                sum,
                "{context}"
            );
            match last_block(&mut k, "last_block_sum_scoped", &input, false) {
                Err(EmuError::Execution {
                    fault: Fault::GlobalRace(race),
                    workgroup,
                    ..
                }) => {
                    assert_eq!(race.what, "a read after a write", "{context}: {race}");
                    assert_ne!(race.other_workgroup, workgroup, "{context}");
                    assert!(race.missing.contains("release"), "{context}: {race}");
                }
                other => panic!("{context}: expected a global race: {other:?}"),
            }
        }
    }
}
