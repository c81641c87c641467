//! The concurrency kernels on every CDNA and RDNA build, in HIP C++
//! (`tests/data/src/hip_concurrency.hip`, built by clang-22) and, for all but the two written in
//! inline assembly, in Rust too (`tests/data/rust`): spins that finish only when the workgroup
//! they wait for is resident, a chained scan, races whose outcome depends on how waves
//! interleave, races on global memory between waves and between workgroups (a plain
//! read-modify-write, a last-block reduction with and without its fences), barriers, reads of
//! memory never written (LDS, scratch, device memory), a store one element past a buffer, a load
//! used before its wait, a wide store's data overwritten too soon after it, generic pointers to
//! LDS and scratch, global memory shared across a barrier with and without the fences WGP
//! mode needs, and workgroups of uneven work on one and two host threads (slots change
//! workers). Each runs under seeded random schedules (every workgroup that fits resident), most
//! also under the in-order schedule (one workgroup at a time), and gives what hardware could give
//! under each, or the error of the check that finds it. The load used before its wait and the
//! store-data overwrite are HIP only: Rust's `asm!` lists no AMDGPU support. The Rust kernels
//! hide a pointer from the compiler with `core::hint::black_box`, where the HIP ones use an empty
//! `asm`.
mod common;

use common::variant::{CDNA, RDNA, Variant};
use common::{Args, Loaded, bytes_of, data, from_bytes, last_block, load};
use iron_emu::{
    Checks, EmuError, Fault, Progress, Schedule, StoreDataHazard, WaitcntHazard, WaveStatus,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};

/// Seeds of the random schedules every test runs under.
const SEEDS: [u64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// The HIP builds, each loaded fresh.
fn builds() -> impl Iterator<Item = (&'static Variant, Loaded)> {
    objects(&["hip_concurrency_{}.co"])
}

/// The HIP and the Rust builds of the kernels both have (`spin_on_flag`, `racy_increment`,
/// `lds_read_without_barrier`, `plain_increment`, `last_block_sum`, `divergent_barrier`,
/// `exit_before_barrier`, `lds_read_uninitialised`, `global_exchange`, `chained_scan`,
/// `generic_lds`, `generic_scratch`).
fn hip_and_rust_builds() -> impl Iterator<Item = (&'static Variant, Loaded)> {
    objects(&["hip_concurrency_{}.co", "rust_kernels_{}.elf"])
}

fn objects(patterns: &'static [&'static str]) -> impl Iterator<Item = (&'static Variant, Loaded)> {
    CDNA.iter().chain(RDNA.iter()).flat_map(move |v| {
        patterns.iter().filter_map(move |pattern| {
            let file = pattern.replace("{}", v.name);
            let path = data(&file);
            common::variant::built(&path).then(|| {
                eprintln!("{file}");
                (v, load(&path))
            })
        })
    })
}

/// Runs `spin_on_flag` with `groups` workgroups of one wave, workgroups `waiters` waiting for
/// `setter`; returns what each wrote, or the error.
fn spin(
    k: &mut Loaded,
    v: &Variant,
    groups: u32,
    waiters: std::ops::Range<u32>,
    setter: u32,
) -> Result<Vec<u32>, EmuError> {
    let flag = k.upload(&[0; 4]);
    let out = k.upload(&vec![0xff; 4 * groups as usize]);
    let args = Args::default()
        .ptr(flag)
        .ptr(out)
        .u32(waiters.start)
        .u32(waiters.end)
        .u32(setter);
    k.launch(
        "spin_on_flag",
        &args.0,
        [groups, 1, 1],
        [v.lanes as u32, 1, 1],
        0,
    )?;
    Ok(from_bytes(&k.download(out, 4 * groups as usize)))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_spin_on_a_later_workgroup_finishes_when_both_are_resident() {
    for (v, mut k) in hip_and_rust_builds() {
        let all: Vec<u32> = (1..=8).collect();
        for seed in SEEDS {
            k.gpu.set_schedule(Schedule::Random { seed });
            assert_eq!(spin(&mut k, v, 8, 0..1, 7).unwrap(), all, "seed {seed}");
        }
        // One workgroup at a time, the waiter never lets the setter start.
        k.gpu.set_schedule(Schedule::InOrder);
        k.gpu.set_instruction_budget(200_000);
        match spin(&mut k, v, 8, 0..1, 7) {
            Err(EmuError::BudgetExceeded {
                finished_workgroups: 0,
                workgroups: 8,
                waves,
                ..
            }) => {
                assert_eq!(waves.len(), 1, "{waves:?}");
                assert_eq!(waves[0].workgroup, [0, 0, 0]);
                assert_eq!(waves[0].status, WaveStatus::Running);
            }
            other => panic!("{}: expected the in-order spin to hang: {other:?}", v.name),
        }
        // One compute unit (CDNA) or WGP (RDNA) holds 32 or 64 one-wave workgroups: when they
        // all wait for the last of 128, it never starts, as on hardware.
        k.gpu.set_schedule(Schedule::default());
        k.gpu.set_compute_units(1);
        match spin(&mut k, v, 128, 0..127, 127) {
            Err(EmuError::BudgetExceeded {
                finished_workgroups: 0,
                waves,
                ..
            }) => {
                let resident = if v.rdna { 64 } else { 32 };
                assert_eq!(waves.len(), resident, "{}", v.name);
            }
            other => panic!("{}: expected a hang on one compute unit: {other:?}", v.name),
        }
        // With all of them resident the spin ends. How long the waiters spin before the setter
        // runs depends on the host threads' timing, so the budget is the default again.
        k.gpu
            .set_instruction_budget(iron_emu::DEFAULT_INSTRUCTION_BUDGET);
        k.gpu.set_compute_units(4);
        assert_eq!(
            spin(&mut k, v, 128, 0..127, 127).unwrap(),
            (1..=128).collect::<Vec<_>>()
        );
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_spin_on_an_earlier_workgroup_finishes_in_every_schedule() {
    for (v, mut k) in hip_and_rust_builds() {
        let all: Vec<u32> = (1..=8).collect();
        for schedule in SEEDS
            .map(|seed| Schedule::Random { seed })
            .into_iter()
            .chain([Schedule::InOrder])
        {
            k.gpu.set_schedule(schedule);
            assert_eq!(spin(&mut k, v, 8, 7..8, 0).unwrap(), all, "{schedule}");
        }
    }
}

/// `uneven_loop`'s result for work-item `i` (workgroups of 256).
fn uneven_loop_of(x: &[u32], i: usize, n: usize, stride: usize, heavy: u32) -> u64 {
    let rounds = if (i / 256) % 2 == 1 { heavy } else { 1 };
    let mut acc = 0u64;
    for _ in 0..rounds {
        for &v in x[..n].iter().skip(i).step_by(stride) {
            let v = u64::from(v);
            acc = acc.wrapping_mul(31).wrapping_add(v * v) ^ (acc >> 7);
        }
    }
    acc
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn workgroups_of_uneven_work_give_the_same_results_on_one_and_two_threads() {
    // Odd workgroups run 7 times the loop: the worker holding them keeps busy slots after the
    // other ran out, and hands some over between turns. The progress hook hears every workgroup
    // finish once, whichever thread ran it.
    let (groups, heavy) = (16u32, 7);
    let items = 256 * groups as usize;
    let n = 3 * items + 5;
    let mut rng = StdRng::seed_from_u64(9);
    let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let want: Vec<u64> = (0..items)
        .map(|i| uneven_loop_of(&x, i, n, items, heavy))
        .collect();
    for (v, mut k) in objects(&["rust_kernels_{}.elf"]) {
        for threads in [1, 2] {
            k.gpu.set_threads(threads);
            for seed in [1, 2] {
                k.gpu.set_schedule(Schedule::Random { seed });
                let input = k.upload(&bytes_of(&x));
                let out = k.upload(&vec![0xff; 8 * items]);
                let args = Args::default()
                    .ptr(input)
                    .ptr(out)
                    .u32(n as u32)
                    .u32(items as u32)
                    .u32(heavy);
                let heard = Arc::new(Mutex::new(Vec::new()));
                let hook = heard.clone();
                k.gpu.set_progress(Some(Arc::new(move |p: Progress| {
                    hook.lock().unwrap().push(p);
                })));
                k.launch("uneven_loop", &args.0, [groups, 1, 1], [256, 1, 1], 0)
                    .unwrap_or_else(|e| panic!("{} {threads} threads: {e}", v.name));
                let mut heard = std::mem::take(&mut *heard.lock().unwrap());
                heard.sort_by_key(|p| p.finished_workgroups);
                let each: Vec<Progress> = (1..=u64::from(groups))
                    .map(|finished_workgroups| Progress {
                        finished_workgroups,
                        workgroups: u64::from(groups),
                    })
                    .collect();
                assert_eq!(heard, each, "{} on {threads} threads", v.name);
                let got: Vec<u64> = from_bytes(&k.download(out, 8 * items));
                assert!(
                    got == want,
                    "{} on {threads} threads, seed {seed}: work-item {} differs",
                    v.name,
                    (0..items).find(|&i| got[i] != want[i]).unwrap_or(0)
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_chained_scan_gives_the_prefix_sums_in_every_schedule() {
    let mut rng = StdRng::seed_from_u64(200);
    for (_, mut k) in hip_and_rust_builds() {
        for (chunks, schedule) in [40u32, 1, 7, 33]
            .into_iter()
            .zip([Schedule::InOrder, Schedule::Random { seed: 1 }])
            .chain(SEEDS.map(|seed| (40, Schedule::Random { seed })))
        {
            k.gpu.set_schedule(schedule);
            let n = 64 * chunks as usize;
            let input: Vec<u32> = (0..n).map(|_| rng.random_range(0..1000)).collect();
            let expected: Vec<u32> = input
                .iter()
                .scan(0, |s, x| {
                    *s += x;
                    Some(*s)
                })
                .collect();
            let pin = k.upload(&bytes_of(&input));
            let out = k.upload(&vec![0xa5; 4 * n]);
            let published = k.upload(&vec![0; 4 * chunks as usize]);
            let ticket = k.upload(&[0; 4]);
            let args = Args::default().ptr(pin).ptr(out).ptr(published).ptr(ticket);
            // The Rust kernel's LDS is dynamic: the ticket, the carry and 64 values.
            k.launch("chained_scan", &args.0, [chunks, 1, 1], [64, 1, 1], 4 * 66)
                .unwrap_or_else(|e| panic!("{schedule}: {e}"));
            assert_eq!(
                from_bytes::<u32>(&k.download(out, 4 * n)),
                expected,
                "{schedule}, {chunks} chunks"
            );
        }
    }
}

/// Runs `racy_increment` on `groups` workgroups of `waves` waves; returns the final count.
fn racy_count(k: &mut Loaded, v: &Variant, groups: u32, waves: u32) -> u32 {
    let counter = k.upload(&[0; 4]);
    k.launch(
        "racy_increment",
        &Args::default().ptr(counter).0,
        [groups, 1, 1],
        [waves * v.lanes as u32, 1, 1],
        0,
    )
    .unwrap();
    from_bytes::<u32>(&k.download(counter, 4))[0]
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_plain_read_modify_write_loses_updates_when_waves_interleave() {
    for (v, mut k) in hip_and_rust_builds() {
        // Its accesses are volatile, coherent ones the global racecheck leaves alone, except
        // GFX90A's store: a volatile store is a plain one there.
        k.gpu.set_checks(Checks {
            global_races: false,
            ..Checks::ALL
        });
        for (groups, waves) in [(64, 1), (1, 16)] {
            let total = groups * waves;
            k.gpu.set_schedule(Schedule::InOrder);
            assert_eq!(racy_count(&mut k, v, groups, waves), total);
            let counts: Vec<u32> = SEEDS
                .iter()
                .map(|&seed| {
                    k.gpu.set_schedule(Schedule::Random { seed });
                    racy_count(&mut k, v, groups, waves)
                })
                .collect();
            assert!(
                counts.iter().all(|&c| (1..=total).contains(&c)),
                "{counts:?}"
            );
            assert!(
                counts.iter().any(|&c| c < total),
                "{}: {groups} workgroups of {waves} waves never lost an update: {counts:?}",
                v.name
            );
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn an_lds_read_without_a_barrier_is_a_race_in_every_schedule() {
    let threads = 256usize;
    let run = |k: &mut Loaded, schedule| {
        k.gpu.set_schedule(schedule);
        let out = k.upload(&vec![0xee; 4 * threads]);
        // The Rust kernel's LDS is dynamic; the HIP kernel's is static (and gets more).
        k.launch(
            "lds_read_without_barrier",
            &Args::default().ptr(out).0,
            [1, 1, 1],
            [threads as u32, 1, 1],
            4 * threads as u32,
        )
        .map(|_| from_bytes::<u32>(&k.download(out, 4 * threads)))
    };
    for (v, mut k) in hip_and_rust_builds() {
        // With every check on, a read that comes first finds the slot unwritten (initcheck).
        for seed in SEEDS {
            match run(&mut k, Schedule::Random { seed }) {
                Err(EmuError::Execution {
                    fault: Fault::LdsRace(_) | Fault::UninitializedLds { .. },
                    ..
                }) => {}
                other => panic!(
                    "{} seed {seed}: expected a check's error: {other:?}",
                    v.name
                ),
            }
        }
        // The racecheck alone finds it whichever wave runs first.
        k.gpu.set_checks(Checks {
            lds_races: true,
            ..Checks::NONE
        });
        for schedule in SEEDS
            .map(|seed| Schedule::Random { seed })
            .into_iter()
            .chain([Schedule::InOrder])
        {
            match run(&mut k, schedule) {
                Err(EmuError::Execution {
                    fault: Fault::LdsRace(race),
                    wave,
                    instruction,
                    ..
                }) => {
                    assert_ne!(race.other_wave, wave, "{schedule}");
                    assert!(
                        race.what == "a read after a write" || race.what == "a write after a read",
                        "{schedule}: {race}"
                    );
                    // LDS through its own instructions, or a flat pointer into its aperture.
                    assert!(
                        instruction.starts_with("ds_") || instruction.starts_with("flat_"),
                        "{instruction}"
                    );
                }
                other => panic!("{} {schedule}: expected an LDS race: {other:?}", v.name),
            }
        }
        // Unchecked, the read sees the write or, too early, the LDS as the workgroup started.
        k.gpu.set_checks(Checks::NONE);
        let wave = v.lanes;
        let expected: Vec<u32> = (0..threads)
            .map(|t| if t >= wave { t - wave + 1 } else { t + 1 } as u32)
            .collect();
        assert_eq!(run(&mut k, Schedule::InOrder).unwrap(), expected);
        let early: Vec<usize> = SEEDS
            .iter()
            .map(|&seed| {
                let got = run(&mut k, Schedule::Random { seed }).unwrap();
                for (t, (&g, &e)) in got.iter().zip(&expected).enumerate() {
                    assert!(g == e || g == 0, "{}: work-item {t} read {g}", v.name);
                }
                got.iter().zip(&expected).filter(|(g, e)| g != e).count()
            })
            .collect();
        assert!(
            early.iter().any(|&n| n > 0),
            "{}: no read came before its write: {early:?}",
            v.name
        );
    }
}

/// Runs a one-workgroup kernel of 256 work-items writing one word each; returns the words.
fn one_group(k: &mut Loaded, kernel: &str) -> Result<Vec<u32>, EmuError> {
    one_group_with(k, kernel, &[])
}

/// [`one_group`] for a kernel with 32-bit arguments `words` after its output pointer. The
/// launch has a dword of dynamic LDS per work-item, which the Rust kernels' LDS is (the HIP
/// kernels' is static).
fn one_group_with(k: &mut Loaded, kernel: &str, words: &[u32]) -> Result<Vec<u32>, EmuError> {
    let out = k.upload(&[0xee; 4 * 256]);
    let args = words
        .iter()
        .fold(Args::default().ptr(out), |args, &w| args.u32(w));
    k.launch(kernel, &args.0, [1, 1, 1], [256, 1, 1], 4 * 256)?;
    Ok(from_bytes(&k.download(out, 4 * 256)))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn waves_at_different_barriers_are_a_synccheck_error() {
    for (v, mut k) in hip_and_rust_builds() {
        for schedule in [Schedule::InOrder, Schedule::Random { seed: 4 }] {
            k.gpu.set_schedule(schedule);
            match one_group(&mut k, "divergent_barrier") {
                Err(EmuError::Execution {
                    fault: Fault::DivergentBarrier(waiting),
                    instruction,
                    ..
                }) => {
                    let waves = 256 / v.lanes as u32;
                    assert_eq!(waiting.len() as u32, waves, "{}: {waiting:?}", v.name);
                    let first = waiting[0].1;
                    assert!(waiting[1..].iter().all(|&(_, pc)| pc != first));
                    assert!(instruction.contains("barrier"), "{instruction}");
                }
                other => panic!(
                    "{} {schedule}: expected a divergent barrier: {other:?}",
                    v.name
                ),
            }
        }
        // Without the check the barriers pair up, as on hardware.
        k.gpu.set_checks(Checks::NONE);
        let got = one_group(&mut k, "divergent_barrier").unwrap();
        let expected: Vec<u32> = (0..256)
            .map(|t| if t < v.lanes { 11 } else { 22 })
            .collect();
        assert_eq!(got, expected, "{}", v.name);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_barrier_completes_when_the_other_waves_have_ended() {
    for (v, mut k) in hip_and_rust_builds() {
        for schedule in SEEDS
            .map(|seed| Schedule::Random { seed })
            .into_iter()
            .chain([Schedule::InOrder])
        {
            k.gpu.set_schedule(schedule);
            let got = one_group(&mut k, "exit_before_barrier").unwrap();
            let expected: Vec<u32> = (0..256).map(|t| if t < v.lanes { 2 } else { 1 }).collect();
            assert_eq!(got, expected, "{} {schedule}", v.name);
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_read_of_lds_no_wave_wrote_is_an_initcheck_error() {
    for (v, mut k) in hip_and_rust_builds() {
        match one_group(&mut k, "lds_read_uninitialised") {
            Err(EmuError::Execution {
                fault: Fault::UninitializedLds { offset, lane },
                wave,
                ..
            }) => {
                // The first access: the lane's own dword.
                assert_eq!(
                    offset,
                    4 * u64::from(lane + wave * v.lanes as u32),
                    "{}",
                    v.name
                );
            }
            other => panic!("{}: expected an initcheck error: {other:?}", v.name),
        }
        k.gpu.set_checks(Checks {
            init: false,
            ..Checks::ALL
        });
        assert_eq!(
            one_group(&mut k, "lds_read_uninitialised").unwrap(),
            [0; 256]
        );
    }
}

/// Runs the copy of `len` u32 from `input` on one workgroup of 256 work-items: the HIP
/// `global_read_uninitialised`, or the Rust `fmath`, which reads `x[i]` for `i < n`.
fn copy_from(k: &mut Loaded, rust: bool, input: u64) -> Result<(), EmuError> {
    let out = k.upload(&[0xee; 4 * 256]);
    let (kernel, args) = if rust {
        ("fmath", Args::default().ptr(input).ptr(out).u32(256).0)
    } else {
        (
            "global_read_uninitialised",
            Args::default().ptr(input).ptr(out).0,
        )
    };
    k.launch(kernel, &args, [1, 1, 1], [256, 1, 1], 0)
        .map(|_| ())
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_read_of_device_memory_nobody_wrote_is_an_initcheck_error() {
    for (v, mut k) in hip_and_rust_builds() {
        let rust = k.kernels.iter().any(|(name, ..)| name == "fmath");
        for written in [0usize, 128] {
            // A buffer the host allocated and wrote only the first `written` elements of.
            let input = k.gpu.memory_mut().alloc(4 * 256, 256).unwrap();
            k.gpu
                .memory_mut()
                .write(input, &vec![0x3f; 4 * written])
                .unwrap();
            match copy_from(&mut k, rust, input) {
                Err(EmuError::Execution {
                    fault: Fault::UninitializedMemory { address, lane },
                    wave,
                    ..
                }) => {
                    // The lane's own element, one the host did not write.
                    let element = u64::from(wave) * v.lanes as u64 + u64::from(lane.unwrap());
                    assert_eq!(address, input + 4 * element, "{}", v.name);
                    assert!(element >= written as u64, "{}", v.name);
                }
                other => panic!("{}: expected an initcheck error: {other:?}", v.name),
            }
            // Written whole, the copy runs.
            k.gpu.memory_mut().write(input, &[0x3f; 4 * 256]).unwrap();
            copy_from(&mut k, rust, input).unwrap();
        }
        // Without the check a fresh allocation reads as zeros.
        k.gpu.set_checks(Checks {
            init: false,
            ..Checks::ALL
        });
        let input = k.gpu.memory_mut().alloc(4 * 256, 256).unwrap();
        copy_from(&mut k, rust, input).unwrap();
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_read_of_scratch_the_work_item_never_wrote_is_an_initcheck_error() {
    for (v, mut k) in builds() {
        let expected: Vec<u32> = (0..256).map(|t| t % 64 + t).collect();
        assert_eq!(
            one_group_with(&mut k, "scratch_read_uninitialised", &[64]).unwrap(),
            expected,
            "{}",
            v.name
        );
        match one_group_with(&mut k, "scratch_read_uninitialised", &[32]) {
            Err(EmuError::Execution {
                fault: Fault::UninitializedScratch { offset, lane },
                wave,
                ..
            }) => {
                let t = wave * v.lanes as u32 + lane;
                assert!(t % 64 >= 32, "{}: work-item {t} wrote its element", v.name);
                assert!(offset < 4 * 64 + 64, "{}: offset {offset:#x}", v.name);
            }
            other => panic!("{}: expected an initcheck error: {other:?}", v.name),
        }
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_store_one_element_past_a_buffer_faults_and_leaves_its_neighbour_alone() {
    for (v, mut k) in hip_and_rust_builds() {
        let rust = k.kernels.iter().any(|(name, ..)| name == "fmath");
        let input = k.upload(&[0x3f; 4 * 256]);
        // 256 work-items copy into 255 elements, with another buffer allocated right after.
        let out = k.upload(&[0xee; 4 * 255]);
        let neighbour = k.upload(&[0x55; 64]);
        let (kernel, args) = if rust {
            ("fmath", Args::default().ptr(input).ptr(out).u32(256).0)
        } else {
            (
                "global_read_uninitialised",
                Args::default().ptr(input).ptr(out).0,
            )
        };
        match k.launch(kernel, &args, [1, 1, 1], [256, 1, 1], 0) {
            Err(EmuError::Execution {
                fault:
                    Fault::Memory {
                        address,
                        write: true,
                        ..
                    },
                ..
            }) => assert_eq!(address, out + 4 * 255, "{}", v.name),
            other => panic!("{}: expected a memory fault: {other:?}", v.name),
        }
        assert_eq!(k.download(neighbour, 64), [0x55; 64], "{}", v.name);
    }
}

/// Runs `use_before_waitcnt` on one workgroup over `input`, the copy after the wait or
/// (`wait` false) before it; returns the copy.
fn copy_through_asm(k: &mut Loaded, input: &[u32], wait: bool) -> Result<Vec<u32>, EmuError> {
    let from = k.upload(&bytes_of(input));
    let out = k.upload(&[0xee; 4 * 256]);
    let args = Args::default().ptr(from).ptr(out).u32(u32::from(wait));
    k.launch("use_before_waitcnt", &args.0, [1, 1, 1], [256, 1, 1], 0)?;
    Ok(from_bytes(&k.download(out, 4 * 256)))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_load_used_before_its_wait_is_a_waitcnt_hazard() {
    let mut rng = StdRng::seed_from_u64(20);
    let input: Vec<u32> = (0..256).map(|_| rng.random()).collect();
    for (v, mut k) in builds() {
        assert_eq!(
            copy_through_asm(&mut k, &input, true).unwrap(),
            input,
            "{}",
            v.name
        );
        match copy_through_asm(&mut k, &input, false) {
            Err(EmuError::Execution {
                fault: Fault::WaitcntHazard(hazard),
                pc,
                instruction,
                ..
            }) => {
                let WaitcntHazard {
                    registers,
                    load_pc,
                    load,
                    counter,
                } = *hazard;
                // The copy right after the load names the load's destination.
                assert!(
                    instruction.starts_with("v_mov_b32"),
                    "{}: {instruction}",
                    v.name
                );
                assert!(
                    instruction.ends_with(&registers),
                    "{}: {instruction}",
                    v.name
                );
                assert!(load.starts_with("global_load"), "{}: {load}", v.name);
                assert!(
                    load.contains(&format!("{registers},")),
                    "{}: {load}",
                    v.name
                );
                let gfx12 = v.name.starts_with("gfx12");
                // The load's encoding: 64 bits, 96 on GFX12.
                assert_eq!(pc - load_pc, if gfx12 { 12 } else { 8 }, "{}", v.name);
                assert_eq!(counter, if gfx12 { "loadcnt" } else { "vmcnt" });
            }
            other => panic!("{}: expected a waitcnt hazard: {other:?}", v.name),
        }
        // With the check off, the emulator completes the load inside its instruction.
        k.gpu.set_checks(Checks {
            waits: false,
            ..Checks::ALL
        });
        assert_eq!(
            copy_through_asm(&mut k, &input, false).unwrap(),
            input,
            "{}",
            v.name
        );
    }
}

/// Runs `store_data_overwrite` on one workgroup, the overwrite of v10 right after the store or
/// (`nops`) two wait states later; returns the stored words.
fn store_then_overwrite(k: &mut Loaded, nops: bool) -> Result<Vec<u32>, EmuError> {
    let out = k.upload(&[0xee; 16 * 256]);
    let args = Args::default().ptr(out).u32(u32::from(nops));
    k.launch("store_data_overwrite", &args.0, [1, 1, 1], [256, 1, 1], 0)?;
    Ok(from_bytes(&k.download(out, 16 * 256)))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_wide_stores_data_overwritten_too_soon_is_a_store_data_hazard_on_gfx9() {
    let stored: Vec<u32> = (0..4 * 256).map(|k| k / 4 + k % 4).collect();
    for (v, mut k) in builds() {
        assert_eq!(
            store_then_overwrite(&mut k, true).unwrap(),
            stored,
            "{}",
            v.name
        );
        let result = store_then_overwrite(&mut k, false);
        if v.rdna {
            // GFX10 and later interlock the store's data registers.
            assert_eq!(result.unwrap(), stored, "{}", v.name);
            continue;
        }
        match result {
            Err(EmuError::Execution {
                fault: Fault::StoreDataHazard(hazard),
                pc,
                instruction,
                ..
            }) => {
                let StoreDataHazard {
                    registers,
                    store_pc,
                    store,
                    wait_states,
                } = *hazard;
                assert!(
                    instruction.starts_with("v_mov_b32") && registers == "v10",
                    "{}: {instruction}, {registers}",
                    v.name
                );
                assert!(
                    store.starts_with("global_store_dwordx4") && store.contains("v[10:13]"),
                    "{}: {store}",
                    v.name
                );
                assert_eq!(
                    pc - store_pc,
                    8,
                    "{}: the overwrite follows the store",
                    v.name
                );
                let needs = if v.name == "gfx90a" { 1 } else { 2 };
                assert_eq!(wait_states, needs, "{}", v.name);
            }
            other => panic!("{}: expected a store data hazard: {other:?}", v.name),
        }
        // With the check off, the emulator reads the data as the store issues.
        k.gpu.set_checks(Checks {
            waits: false,
            ..Checks::ALL
        });
        assert_eq!(
            store_then_overwrite(&mut k, false).unwrap(),
            stored,
            "{}",
            v.name
        );
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn generic_pointers_reach_lds_and_scratch_under_every_check() {
    for (v, mut k) in hip_and_rust_builds() {
        let neighbours: Vec<u32> = (0..256).map(|t| 3 * ((t + 1) % 256) + 1).collect();
        let own: Vec<u32> = (0..256).map(|t| t + t % 16).collect();
        for schedule in [Schedule::InOrder, Schedule::Random { seed: 5 }] {
            k.gpu.set_schedule(schedule);
            let lds = one_group_with(&mut k, "generic_lds", &[256]).unwrap();
            assert_eq!(lds, neighbours, "{} {schedule}", v.name);
            let scratch = one_group_with(&mut k, "generic_scratch", &[16]).unwrap();
            assert_eq!(scratch, own, "{} {schedule}", v.name);
        }
        // Work-item 9 skips its write; work-item 8 reads the element through a flat load.
        match one_group_with(&mut k, "generic_lds", &[9]) {
            Err(EmuError::Execution {
                fault: Fault::UninitializedLds { offset, lane },
                wave,
                instruction,
                ..
            }) => {
                assert_eq!(wave * v.lanes as u32 + lane, 8, "{}", v.name);
                assert_eq!(offset % 1024, 4 * 9, "{}", v.name);
                assert!(
                    instruction.starts_with("flat_load"),
                    "{}: {instruction}",
                    v.name
                );
            }
            other => panic!("{}: expected an initcheck error: {other:?}", v.name),
        }
        match one_group_with(&mut k, "generic_scratch", &[8]) {
            Err(EmuError::Execution {
                fault: Fault::UninitializedScratch { offset, lane },
                wave,
                instruction,
                ..
            }) => {
                let t = wave * v.lanes as u32 + lane;
                assert!(t % 16 >= 8, "{}: work-item {t} wrote its element", v.name);
                assert!(
                    instruction.starts_with("flat_load"),
                    "{}: {instruction}",
                    v.name
                );
                assert!(offset < 64 * 4, "{}: offset {offset:#x}", v.name);
            }
            other => panic!("{}: expected an initcheck error: {other:?}", v.name),
        }
    }
}

/// Runs `global_exchange` on one workgroup, through the fenced barrier or the bare one.
fn exchange(k: &mut Loaded, fenced: bool) -> Result<Vec<u32>, EmuError> {
    let buf = k.upload(&[0xcd; 4 * 256]);
    let out = k.upload(&[0xee; 4 * 256]);
    let args = Args::default().ptr(buf).ptr(out).u32(u32::from(fenced));
    k.launch("global_exchange", &args.0, [1, 1, 1], [256, 1, 1], 0)?;
    Ok(from_bytes(&k.download(out, 4 * 256)))
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_global_exchange_through_a_bare_barrier_breaks_the_wgp_visibility_rule() {
    for (v, mut k) in hip_and_rust_builds() {
        let lanes = v.lanes as u32;
        let expected: Vec<u32> = (0..256).map(|t| 7 * ((t + lanes) % 256) + 3).collect();
        for schedule in [Schedule::InOrder, Schedule::Random { seed: 6 }] {
            k.gpu.set_schedule(schedule);
            let fenced = exchange(&mut k, true).unwrap();
            assert_eq!(fenced, expected, "{} {schedule}", v.name);
            let bare = exchange(&mut k, false);
            if !v.rdna {
                // A CDNA workgroup runs on one CU: the barrier alone suffices.
                assert_eq!(bare.unwrap(), expected, "{} {schedule}", v.name);
                continue;
            }
            match bare {
                Err(EmuError::Execution {
                    fault: Fault::WgpVisibility(f),
                    wave,
                    instruction,
                    ..
                }) => {
                    assert!(
                        instruction.starts_with("global_load")
                            || instruction.starts_with("flat_load"),
                        "{instruction}"
                    );
                    assert_ne!(f.writer_wave, wave, "{}", v.name);
                    assert!(
                        f.missing.starts_with("the writer's release"),
                        "{}",
                        f.missing
                    );
                    let t = wave * lanes + f.lane;
                    assert_eq!(f.writer_wave, (t + lanes) % 256 / lanes, "{}", v.name);
                }
                other => panic!(
                    "{} {schedule}: expected a visibility error: {other:?}",
                    v.name
                ),
            }
        }
        // With the check off the emulator's memory has no caches: the store is seen.
        k.gpu.set_checks(Checks {
            wgp: false,
            ..Checks::ALL
        });
        assert_eq!(exchange(&mut k, false).unwrap(), expected, "{}", v.name);
    }
}

/// Runs `plain_increment` on `groups` workgroups of `waves` waves; returns the final count.
fn plain_count(k: &mut Loaded, v: &Variant, groups: u32, waves: u32) -> Result<u32, EmuError> {
    let counter = k.upload(&[0; 4]);
    k.launch(
        "plain_increment",
        &Args::default().ptr(counter).0,
        [groups, 1, 1],
        [waves * v.lanes as u32, 1, 1],
        0,
    )?;
    Ok(from_bytes::<u32>(&k.download(counter, 4))[0])
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_plain_read_modify_write_by_several_waves_is_a_global_race_in_every_schedule() {
    for (v, mut k) in hip_and_rust_builds() {
        for (groups, waves) in [(64, 1), (1, 16)] {
            for schedule in [Schedule::InOrder, Schedule::Random { seed: 2 }] {
                k.gpu.set_schedule(schedule);
                match plain_count(&mut k, v, groups, waves) {
                    Err(EmuError::Execution {
                        fault: Fault::GlobalRace(race),
                        workgroup,
                        wave,
                        instruction,
                        ..
                    }) => {
                        let context = format!("{} {schedule} {groups}x{waves}: {race}", v.name);
                        assert_ne!((race.other_workgroup, race.other_wave), (workgroup, wave));
                        assert!(
                            [
                                "a read after a write",
                                "a write after a read",
                                "a write after a write"
                            ]
                            .contains(&race.what),
                            "{context}"
                        );
                        assert!(
                            instruction.starts_with("global_") || instruction.starts_with("flat_"),
                            "{context}: {instruction}"
                        );
                        if groups == 1 {
                            assert_eq!(race.missing, "a barrier between them", "{context}");
                        } else {
                            assert!(race.missing.contains("release"), "{context}");
                        }
                        assert_eq!(race.lane, 0, "{context}");
                    }
                    other => panic!("{} {schedule}: expected a global race: {other:?}", v.name),
                }
            }
        }
        // Without the check, updates are lost as the waves interleave.
        k.gpu.set_checks(Checks {
            global_races: false,
            ..Checks::ALL
        });
        k.gpu.set_schedule(Schedule::Random { seed: 2 });
        let count = plain_count(&mut k, v, 64, 1).unwrap();
        assert!((1..=64).contains(&count), "{}: {count}", v.name);
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn a_last_block_reduction_without_its_fences_is_a_global_race() {
    let mut rng = StdRng::seed_from_u64(300);
    for (v, mut k) in hip_and_rust_builds() {
        for (chunks, schedule) in [
            (1, Schedule::Random { seed: 1 }),
            (37, Schedule::InOrder),
            (37, Schedule::Random { seed: 3 }),
            (64, Schedule::Random { seed: 5 }),
        ] {
            k.gpu.set_schedule(schedule);
            let input: Vec<u32> = (0..16 * chunks)
                .map(|_| rng.random_range(0..1000))
                .collect();
            let sum: u32 = input.iter().sum();
            let context = format!("{} {schedule} {chunks} chunks", v.name);
            assert_eq!(
                last_block(&mut k, "last_block_sum", &input, true).unwrap(),
                sum,
                "{context}"
            );
            let unfenced = last_block(&mut k, "last_block_sum", &input, false);
            if chunks == 1 {
                // One workgroup reads only what it wrote itself.
                assert_eq!(unfenced.unwrap(), sum, "{context}");
                continue;
            }
            match unfenced {
                Err(EmuError::Execution {
                    fault: Fault::GlobalRace(race),
                    workgroup,
                    ..
                }) => {
                    assert_eq!(race.what, "a read after a write", "{context}: {race}");
                    assert_ne!(race.other_workgroup, workgroup, "{context}");
                    assert!(race.missing.contains("release"), "{context}: {race}");
                    // The dword read is the other workgroup's partial sum.
                    assert_eq!(race.other_wave, 0, "{context}");
                }
                other => panic!("{context}: expected a global race: {other:?}"),
            }
        }
        // Without the check, the emulator's memory has no caches: the sum comes out right.
        k.gpu.set_checks(Checks {
            global_races: false,
            ..Checks::ALL
        });
        let input: Vec<u32> = (0..16 * 9).collect();
        let sum = input.iter().sum();
        assert_eq!(
            last_block(&mut k, "last_block_sum", &input, false).unwrap(),
            sum,
            "{}",
            v.name
        );
    }
}
