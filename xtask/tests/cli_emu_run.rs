//! `cargo xtask emu run` on code objects Iron did not build (HIP C++ compiled by clang-22) and on
//! Iron's own, and its answers to bad input: one clear line and a non-zero exit, never a panic.

mod common;

use common::{assert_one_line_error, emu_test_object, library_code_object, xtask};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch_dir(name: &str) -> PathBuf {
    common::scratch_dir("emu-run", name)
}

/// Compiles `tests/hip/<name>.hip` for `gfx` with clang-22, as a HIP user would.
fn compile_hip(name: &str, gfx: &str, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let source = root.join("tests/hip").join(format!("{name}.hip"));
    let out = dir.join(format!("{name}-{gfx}.co"));
    let status = Command::new("clang-22")
        .args([
            "-x",
            "hip",
            &format!("--offload-arch={gfx}"),
            "-nogpulib",
            "-nogpuinc",
        ])
        .args(["--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c"])
        .arg("-I")
        .arg(root.join("tests/hip"))
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang-22 is installed (Debian package clang-22; .ci/run installs it)");
    assert!(status.success(), "clang-22 failed on {}", source.display());
    out
}

fn write_f32(path: &Path, values: &[f32]) {
    std::fs::write(
        path,
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn read_u32(path: &Path) -> Vec<u32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Deterministic inputs without an RNG crate: a small LCG.
fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

#[test]
#[ignore = "needs clang-22: run `cargo xtask test`"]
fn a_clang_built_hip_kernel_runs_and_is_right_on_every_cdna_target() {
    for gfx in ["gfx90a", "gfx942", "gfx950"] {
        let dir = scratch_dir(gfx);
        let co = compile_hip("block_reduce", gfx, &dir);
        let (n, groups, block) = (1000usize, 3usize, 192usize);
        let x = inputs(n, 7);
        write_f32(&dir.join("x.bin"), &x);
        write_f32(&dir.join("sums.bin"), &vec![f32::NAN; groups]);
        write_f32(&dir.join("total.bin"), &[0.0]);
        std::fs::write(dir.join("counts.bin"), vec![0xffu8; 4 * groups * block]).unwrap();
        let arg = |f: &str| format!("buf:{}", dir.join(f).display());
        let out = xtask(&[
            "emu",
            "run",
            co.to_str().unwrap(),
            "--kernel",
            "block_reduce",
            "--grid",
            &groups.to_string(),
            "--block",
            &block.to_string(),
            "--arg",
            &arg("x.bin"),
            "--arg",
            &arg("sums.bin"),
            "--arg",
            &arg("total.bin"),
            "--arg",
            &arg("counts.bin"),
            "--arg",
            &format!("u32:{n}"),
            "--out-dir",
            dir.to_str().unwrap(),
            "--stats",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{gfx}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("block_reduce: 3 workgroups, 9 waves"),
            "{gfx}: {stdout}"
        );

        // Each work-item sums the grid-stride slice starting at its global index.
        let stride = groups * block;
        let sums = read_f32(&dir.join("arg1.bin"));
        for (g, &got) in sums.iter().enumerate() {
            let want: f64 = (g * block..(g + 1) * block)
                .flat_map(|i| (i..n).step_by(stride))
                .map(|j| f64::from(x[j]))
                .sum();
            assert!(
                (f64::from(got) - want).abs() < 1e-3,
                "{gfx} block {g}: {got} vs {want}"
            );
        }
        let total = read_f32(&dir.join("arg2.bin"))[0];
        let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert!(
            (f64::from(total) - want).abs() < 1e-3,
            "{gfx} total: {total} vs {want}"
        );
        let counts = read_u32(&dir.join("arg3.bin"));
        for (i, &c) in counts.iter().enumerate() {
            let k = (i % block) as u32 % 7;
            assert_eq!(c, k * (k + 1) / 2, "{gfx} counts[{i}]");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn bad_input_is_one_clear_line() {
    let dir = scratch_dir("bad");
    let co = library_code_object();
    let co = co.to_str().unwrap();
    let junk = dir.join("junk.co");
    std::fs::write(&junk, b"definitely not an ELF file").unwrap();
    let a = dir.join("a.bin");
    write_f32(&a, &[1.0; 8]);
    let a = format!("buf:{}", a.display());
    let run = |extra: &[&str]| {
        let mut args = vec!["emu", "run"];
        args.extend_from_slice(extra);
        xtask(&args)
    };
    let add = ["--kernel", "add_f32", "--grid", "1", "--block", "256"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "/nonexistent.co",
                "--kernel",
                "k",
                "--grid",
                "1",
                "--block",
                "1",
            ],
            "cannot read",
        ),
        (
            vec![
                junk.to_str().unwrap(),
                "--kernel",
                "k",
                "--grid",
                "1",
                "--block",
                "1",
            ],
            "ELF",
        ),
        (
            vec![co, "--kernel", "nope", "--grid", "1", "--block", "64"],
            "nope",
        ),
        (
            [&[co][..], &add, &["--arg", &a]].concat(),
            "takes 4 arguments, got 1",
        ),
        (
            [&[co][..], &add, &["--budget", "0"]].concat(),
            "--budget 0 would stop before the first instruction",
        ),
        (
            [&[co][..], &add, &["--schedule", "fifo"]].concat(),
            "unknown schedule `fifo`: expected `in-order`, `random` or `random:SEED`",
        ),
        (
            [&[co][..], &add, &["--check", "uninit"]].concat(),
            "unknown check `uninit`: expected `all`, `none`, or a comma-separated list of `race`",
        ),
        (
            [&[co][..], &add, &["--compute-units", "0"]].concat(),
            "--compute-units 0 would leave no room for a workgroup",
        ),
        (
            [&[co][..], &add, &["--threads", "0"]].concat(),
            "--threads 0 would leave no thread to run the dispatch",
        ),
        (
            [
                &[co][..],
                &add,
                &["--arg", "u32:1", "--arg", &a, "--arg", &a, "--arg", "u32:8"],
            ]
            .concat(),
            "buffer",
        ),
        (
            [
                &[co][..],
                &["--kernel", "add_f32", "--grid", "1", "--block", "512"],
            ]
            .concat(),
            "512",
        ),
        (
            [&[co][..], &add, &["--arg", "u128:3"]].concat(),
            "unknown kind `u128`",
        ),
        (
            [
                &[co][..],
                &["--kernel", "add_f32", "--grid", "0", "--block", "256"],
            ]
            .concat(),
            "at least 1",
        ),
        (
            [
                &[co][..],
                &add,
                &["--arg", &a, "--arg", &a, "--arg", &a, "--arg", "u32:100000"],
            ]
            .concat(),
            "fault",
        ),
    ];
    for (args, needle) in cases {
        assert_one_line_error(&run(&args), &[needle]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn an_iron_kernel_runs_and_traces() {
    let dir = scratch_dir("trace");
    // One whole workgroup span (2048 elements, 16-byte accesses) and a tail of 37.
    let n = 2048 + 37usize;
    let a = inputs(n, 1);
    let b = inputs(n, 2);
    write_f32(&dir.join("a.bin"), &a);
    write_f32(&dir.join("b.bin"), &b);
    write_f32(&dir.join("c.bin"), &vec![f32::NAN; n]);
    let arg = |f: &str| format!("buf:{}", dir.join(f).display());
    let out = xtask(&[
        "emu",
        "run",
        library_code_object().to_str().unwrap(),
        "--kernel",
        "add_f32",
        "--grid",
        "2",
        "--block",
        "256",
        "--arg",
        &arg("a.bin"),
        "--arg",
        &arg("b.bin"),
        "--arg",
        &arg("c.bin"),
        "--arg",
        &format!("u32:{n}"),
        "--out-dir",
        dir.to_str().unwrap(),
        "--trace",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = read_f32(&dir.join("arg2.bin"));
    for i in 0..n {
        assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "c[{i}]");
    }
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(
        trace
            .lines()
            .any(|l| l.contains("wave 0 pc") && l.contains("s_endpgm")),
        "{trace}"
    );
    assert!(
        trace.lines().any(|l| l.contains("global_load_dwordx4")),
        "{trace}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `hip_args.hip` builds the argument tests run on: CDNA with and without kernel arguments
/// preloaded into SGPRs, RDNA in wave32 and wave64.
const HIP_ARGS_OBJECTS: &[&str] = &[
    "hip_args_gfx90a.co",
    "hip_args_preload_gfx942.co",
    "hip_args_gfx950.co",
    "hip_args_gfx1100.co",
    "hip_args_gfx1201_w64.co",
];

/// A seeded generator for the argument values (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_kernel_out_of_budget_says_where_its_waves_stood() {
    let dir = scratch_dir("budget");
    let n = 256usize;
    for (name, seed) in [("a.bin", 1), ("b.bin", 2)] {
        write_f32(&dir.join(name), &inputs(n, seed));
    }
    write_f32(&dir.join("c.bin"), &vec![f32::NAN; n]);
    let arg = |f: &str| format!("buf:{}", dir.join(f).display());
    let co = library_code_object();
    let (a, b, c, len) = (arg("a.bin"), arg("b.bin"), arg("c.bin"), format!("u32:{n}"));
    let run = |schedule: &[&str]| {
        let cli = [
            &[
                "emu",
                "run",
                co.to_str().unwrap(),
                "--kernel",
                "add_f32",
                "--grid",
                "3",
                "--block",
                "256",
                "--arg",
                &a,
                "--arg",
                &b,
                "--arg",
                &c,
                "--arg",
                &len,
                "--out-dir",
                dir.to_str().unwrap(),
                "--budget",
                "8",
            ][..],
            schedule,
        ]
        .concat();
        let out = xtask(&cli);
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // By default all three workgroups are resident; in order only the first has started.
    for (schedule, third_group) in [
        (&[][..], true),
        (&["--schedule", "random:9"][..], true),
        (&["--schedule", "in-order"][..], false),
    ] {
        let err = run(schedule);
        for needle in [
            "instruction budget of 8 wave-instructions exceeded (0 of 3 workgroups finished)",
            "workgroup (0, 0, 0) wave 0 at pc 0x",
            "workgroup (0, 0, 0) wave 1 at pc 0x",
            "running: `",
        ] {
            assert!(err.contains(needle), "`{needle}` missing from:\n{err}");
        }
        assert_eq!(
            err.contains("workgroup (2, 0, 0) wave 1 at pc 0x"),
            third_group,
            "{schedule:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_device_panic_is_one_line_with_its_message_and_values() {
    let Some(co) = emu_test_object("device-probe/gfx950/kernels.co") else {
        return;
    };
    let dir = scratch_dir("panic");
    // `lookup` reads x[x[i]]: lane 37's index is out of bounds.
    let mut x: Vec<u32> = (0..64).map(|i| (i * 7) % 64).collect();
    x[37] = 1234;
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("x.bin"), &bytes).unwrap();
    std::fs::write(dir.join("y.bin"), vec![0u8; bytes.len()]).unwrap();
    let arg = |f: &str| format!("buf:{}", dir.join(f).display());
    let out = run_kernel(
        &co,
        "lookup",
        &[arg("x.bin"), arg("y.bin"), "u32:64".into()],
        &dir,
    );
    // One `error:` line, and not a panic of xtask (a thread's panic message).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("thread '"), "{stderr}");
    let errors: Vec<_> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    for needle in [
        "error: kernel lookup faulted: panicked at ",
        "src/panic.rs:",
        " in workgroup (0, 0, 0) wave 0 lane 37: index out of bounds: the len is 64 but the \
         index is 1234; s_trap 2",
    ] {
        assert!(
            errors[0].contains(needle),
            "`{needle}` not in {}",
            errors[0]
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `kernel` of `co` on one workgroup of 64 work-items with `args`, writing buffers to `dir`.
fn run_kernel(co: &Path, kernel: &str, args: &[String], dir: &Path) -> std::process::Output {
    let mut cli: Vec<&str> = vec![
        "emu",
        "run",
        co.to_str().unwrap(),
        "--kernel",
        kernel,
        "--grid",
        "1",
        "--block",
        "64",
        "--out-dir",
        dir.to_str().unwrap(),
    ];
    for arg in args {
        cli.extend(["--arg", arg]);
    }
    xtask(&cli)
}

fn read_i64(path: &Path) -> Vec<i64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One call of `args_small(char, long long*, unsigned char, short, bool, unsigned short,
/// signed char)`.
struct Small {
    c: i8,
    uc: u8,
    s: i16,
    b: bool,
    us: u16,
    last: i8,
}

#[test]
fn small_integers_and_bools_reach_a_hip_kernel_at_their_offsets() {
    let mut rng = Rng(11);
    let mut cases = vec![
        Small {
            c: i8::MIN,
            uc: u8::MAX,
            s: i16::MIN,
            b: true,
            us: u16::MAX,
            last: i8::MAX,
        },
        Small {
            c: i8::MAX,
            uc: 0,
            s: i16::MAX,
            b: false,
            us: 0,
            last: i8::MIN,
        },
        Small {
            c: -1,
            uc: 1,
            s: -1,
            b: true,
            us: 1,
            last: 0,
        },
    ];
    for _ in 0..3 {
        let r = rng.next();
        cases.push(Small {
            c: r as i8,
            uc: (r >> 8) as u8,
            s: (r >> 16) as i16,
            b: r >> 32 & 1 == 1,
            us: (r >> 40) as u16,
            last: (r >> 56) as i8,
        });
    }
    for file in HIP_ARGS_OBJECTS {
        let Some(co) = emu_test_object(file) else {
            return;
        };
        let dir = scratch_dir(&format!("small-{file}"));
        for (i, case) in cases.iter().enumerate() {
            std::fs::write(dir.join("out.bin"), [0xa5u8; 8 * 8]).unwrap();
            // Booleans alternate between the two spellings.
            let b = if i % 2 == 0 {
                case.b.to_string()
            } else {
                u8::from(case.b).to_string()
            };
            let args = [
                format!("i8:{}", case.c),
                format!("buf:{}", dir.join("out.bin").display()),
                format!("u8:{:#x}", case.uc),
                format!("i16:{}", case.s),
                format!("bool:{b}"),
                format!("u16:{}", case.us),
                format!("i8:{}", case.last),
            ];
            let out = run_kernel(&co, "args_small", &args, &dir);
            assert!(
                out.status.success(),
                "{file} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got = read_i64(&dir.join("arg1.bin"));
            let want = [
                i64::from(case.c),
                i64::from(case.uc),
                i64::from(case.s),
                i64::from(case.b),
                i64::from(case.us),
                i64::from(case.last),
            ];
            assert_eq!(got[..6], want, "{file} {args:?}");
            assert_eq!(
                got[6..],
                [i64::from_le_bytes([0xa5; 8]); 2],
                "{file}: wrote past out[5]"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn buffer_addresses_pass_as_integers_the_kernel_casts_back() {
    let mut rng = Rng(23);
    for file in HIP_ARGS_OBJECTS {
        let Some(co) = emu_test_object(file) else {
            return;
        };
        let dir = scratch_dir(&format!("ptr-{file}"));
        for n in [0usize, 1, 13] {
            let src: Vec<i32> = (0..16).map(|_| rng.next() as i32 >> 2).collect();
            let tag = rng.next() as u8;
            let bytes = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            std::fs::write(dir.join("src.bin"), bytes(&src)).unwrap();
            std::fs::write(dir.join("dst.bin"), bytes(&[-1; 16])).unwrap();
            std::fs::write(dir.join("out.bin"), [0u8; 4 * 8]).unwrap();
            let args = [
                format!("u8:{tag}"),
                format!("ptr:{}", dir.join("src.bin").display()),
                format!("buf:{}", dir.join("out.bin").display()),
                format!("ptr:{}", dir.join("dst.bin").display()),
                format!("u64:{n}"),
            ];
            let out = run_kernel(&co, "args_ptr", &args, &dir);
            assert!(
                out.status.success(),
                "{file} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let dst: Vec<i32> = read_u32(&dir.join("arg3.bin"))
                .into_iter()
                .map(|v| v as i32)
                .collect();
            for (i, &got) in dst.iter().enumerate() {
                let want = if i < n {
                    src[i] * 2 + i32::from(tag)
                } else {
                    -1
                };
                assert_eq!(got, want, "{file} n={n} dst[{i}]");
            }
            let src_back: Vec<i32> = read_u32(&dir.join("arg1.bin"))
                .into_iter()
                .map(|v| v as i32)
                .collect();
            assert_eq!(src_back, src, "{file}: src written back unchanged");
            let got = read_i64(&dir.join("arg2.bin"));
            assert_eq!(got[0], i64::from(tag), "{file}");
            assert_eq!(got[3], n as i64, "{file}");
            assert!(
                got[1] != 0 && got[2] != 0 && got[1] != got[2],
                "{file}: addresses {got:?}"
            );
            assert_eq!(
                (got[1] % 4, got[2] % 4),
                (0, 0),
                "{file}: addresses {got:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `S24 { int a; double d; short e; signed char f; }` of hip_args.hip in memory order, with
/// `fill` in the padding bytes (which the kernel must not read).
fn s24_bytes(a: i32, d: f64, e: i16, f: i8, fill: u8) -> Vec<u8> {
    let mut b = vec![fill; 24];
    b[0..4].copy_from_slice(&a.to_le_bytes());
    b[8..16].copy_from_slice(&d.to_le_bytes());
    b[16..18].copy_from_slice(&e.to_le_bytes());
    b[18] = f as u8;
    b
}

/// `S12 { unsigned char a; int b; unsigned short c; }` in memory order, padding `fill`.
fn s12_bytes(a: u8, b: i32, c: u16, fill: u8) -> Vec<u8> {
    let mut out = vec![fill; 12];
    out[0] = a;
    out[4..8].copy_from_slice(&b.to_le_bytes());
    out[8..10].copy_from_slice(&c.to_le_bytes());
    out
}

#[test]
fn structs_pass_by_value_as_raw_bytes() {
    let mut rng = Rng(37);
    for file in HIP_ARGS_OBJECTS {
        let Some(co) = emu_test_object(file) else {
            return;
        };
        let dir = scratch_dir(&format!("structs-{file}"));
        for round in 0..3 {
            let r = [rng.next(), rng.next(), rng.next()];
            let (a, sa, d, se, sf) = if round == 0 {
                (i16::MIN, i32::MIN, -0.0, i16::MAX, i8::MIN)
            } else {
                (
                    r[0] as i16,
                    (r[0] >> 16) as i32,
                    (r[1] as i32) as f64 / 7.0,
                    (r[0] >> 48) as i16,
                    (r[2] >> 8) as i8,
                )
            };
            let b = round % 2 == 0;
            let (ta, tb, tc) = if round == 0 {
                (u8::MAX, i32::MAX, u16::MAX)
            } else {
                (r[2] as u8, (r[2] >> 16) as i32, (r[1] >> 40) as u16)
            };
            let (ua, ub, uc) = (r[1] as i8, (r[1] >> 8) as u8, round == 1);
            let z = (r[2] >> 56) as i8;
            let fill = (r[2] >> 48) as u8;
            std::fs::write(dir.join("out.bin"), [0u8; 13 * 8]).unwrap();
            let args = [
                format!("i16:{a}"),
                format!("bytes:{}", hex(&s24_bytes(sa, d, se, sf, fill))),
                format!("bool:{b}"),
                format!("bytes:{}", hex(&s12_bytes(ta, tb, tc, fill))),
                format!("bytes:{}", hex(&[ua as u8, ub, u8::from(uc)])),
                format!("buf:{}", dir.join("out.bin").display()),
                format!("i8:{z}"),
            ];
            let out = run_kernel(&co, "args_structs", &args, &dir);
            assert!(
                out.status.success(),
                "{file} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got = read_i64(&dir.join("arg5.bin"));
            let want = [
                i64::from(a),
                i64::from(sa),
                d.to_bits() as i64,
                i64::from(se),
                i64::from(sf),
                i64::from(b),
                i64::from(ta),
                i64::from(tb),
                i64::from(tc),
                i64::from(ua),
                i64::from(ub),
                i64::from(uc),
                i64::from(z),
            ];
            assert_eq!(got, want, "{file} {args:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn bad_arguments_for_a_hip_kernel_are_one_clear_line() {
    for file in ["hip_args_gfx950.co", "hip_args_gfx1100.co"] {
        let Some(co) = emu_test_object(file) else {
            return;
        };
        let dir = scratch_dir(&format!("bad-args-{file}"));
        std::fs::write(dir.join("out.bin"), [0u8; 128]).unwrap();
        let out = format!("buf:{}", dir.join("out.bin").display());
        let ptr = format!("ptr:{}", dir.join("out.bin").display());
        let small = |i: usize, text: &str| {
            let mut args: Vec<String> =
                ["i8:1", &out, "u8:2", "i16:3", "bool:true", "u16:4", "i8:5"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
            args[i] = text.to_string();
            args
        };
        let s24 = format!("bytes:{}", "00".repeat(24));
        let s12 = format!("bytes:{}", "00".repeat(12));
        let structs = |i: usize, text: &str| {
            let mut args: Vec<String> =
                ["i16:1", &s24, "bool:0", &s12, "bytes:010203", &out, "i8:-1"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
            args[i] = text.to_string();
            args
        };
        let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
            (
                "args_small",
                small(0, "u32:1"),
                vec![
                    "--arg 1 `u32:1`",
                    "is 1 byte (by_value), u32 passes 4 bytes",
                    "u8:, i8:, bool:",
                ],
            ),
            (
                "args_small",
                small(3, "u8:1"),
                vec!["--arg 4 `u8:1`", "is 2 bytes (by_value), u8 passes 1 byte"],
            ),
            (
                "args_small",
                small(0, "i8:300"),
                vec!["`i8:300`", "300 is out of range -128..=127"],
            ),
            (
                "args_small",
                small(5, "u16:-1"),
                vec!["`u16:-1`", "not a valid u16"],
            ),
            (
                "args_small",
                small(4, "bool:2"),
                vec!["`bool:2`", "write true, false, 1 or 0"],
            ),
            (
                "args_small",
                small(1, "u64:4096"),
                vec![
                    "--arg 2 `u64:4096`",
                    "is a pointer (global_buffer): pass buf:<PATH>",
                ],
            ),
            (
                "args_small",
                small(1, &ptr),
                vec!["--arg 2", "is a pointer (global_buffer)"],
            ),
            (
                "args_small",
                small(2, &out),
                vec!["--arg 3", "is a by_value argument of 1 byte, not a pointer"],
            ),
            (
                "args_small",
                small(6, &ptr),
                vec!["--arg 7", "is 1 byte (by_value), ptr passes 8 bytes"],
            ),
            (
                "args_small",
                small(0, "i8:1")[..6].to_vec(),
                vec![
                    "kernel args_small takes 7 arguments, got 6 --arg",
                    "pointer",
                ],
            ),
            (
                "args_small",
                [small(0, "i8:1"), vec!["u8:9".to_string()]].concat(),
                vec!["takes 7 arguments, got 8 --arg"],
            ),
            (
                "args_structs",
                structs(1, "bytes:0a0b0c"),
                vec![
                    "--arg 2 `bytes:0a0b0c`",
                    "is 24 bytes (by_value), the hex gives 3 bytes: pass bytes:<48 hex digits>",
                ],
            ),
            (
                "args_structs",
                structs(3, &format!("bytes:{}", "00".repeat(13))),
                vec!["--arg 4", "is 12 bytes (by_value), the hex gives 13 bytes"],
            ),
            (
                "args_structs",
                structs(4, "bytes:0102"),
                vec!["--arg 5", "is 3 bytes (by_value), the hex gives 2 bytes"],
            ),
            (
                "args_structs",
                structs(1, "bytes:0g"),
                vec!["`bytes:0g`", "`g` at position 2 is not a hex digit"],
            ),
            (
                "args_structs",
                structs(1, "bytes:abc"),
                vec!["`bytes:abc`", "3 hex digits: write two per byte"],
            ),
            (
                "args_structs",
                structs(1, "bytes:"),
                vec!["`bytes:`", "no bytes"],
            ),
            (
                "args_structs",
                structs(5, "bytes:0000000000000000"),
                vec!["--arg 6", "is a pointer (global_buffer)"],
            ),
            (
                "args_ptr",
                vec![
                    "u8:1".into(),
                    "u64:4096".into(),
                    out.clone(),
                    ptr.clone(),
                    "u64:1".into(),
                ],
                vec![],
            ),
            (
                "args_ptr",
                vec![
                    "u8:1".into(),
                    ptr.clone(),
                    out.clone(),
                    ptr.clone(),
                    "u32:1".into(),
                ],
                vec![
                    "--arg 5 `u32:1`",
                    "is 8 bytes (by_value), u32 passes 4 bytes",
                    "ptr:<PATH>",
                ],
            ),
            (
                "args_ptr",
                vec![
                    "u8:1".into(),
                    "ptr:/nonexistent.bin".into(),
                    out.clone(),
                    ptr.clone(),
                    "u64:1".into(),
                ],
                vec!["cannot read /nonexistent.bin"],
            ),
        ];
        for (kernel, args, needles) in cases {
            let result = run_kernel(&co, kernel, &args, &dir);
            if needles.is_empty() {
                // An integer where the kernel expects an address is the kernel's to trust: it
                // runs, and reading address 4096 faults with one line.
                assert_one_line_error(&result, &["fault"]);
            } else {
                assert_one_line_error(&result, &needles);
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "needs the emulator's test kernels, built by `cargo xtask test`"]
fn an_lds_race_is_an_error_unless_the_check_is_off() {
    let Some(co) = emu_test_object("hip_concurrency_gfx942.co") else {
        return;
    };
    let dir = scratch_dir("lds-race");
    let out = dir.join("out.bin");
    let run = |check: &[&str]| {
        std::fs::write(&out, [0xeeu8; 4 * 256]).unwrap();
        let arg = format!("buf:{}", out.display());
        let cli = [
            &[
                "emu",
                "run",
                co.to_str().unwrap(),
                "--kernel",
                "lds_read_without_barrier",
                "--grid",
                "1",
                "--block",
                "256",
                "--out-dir",
                dir.to_str().unwrap(),
                "--arg",
                &arg,
            ][..],
            check,
        ]
        .concat();
        xtask(&cli)
    };
    for check in [&["--check", "race"][..], &["--check", "sync,race"]] {
        assert_one_line_error(
            &run(check),
            &["LDS race: lane ", "with no barrier between them"],
        );
    }
    // With the initcheck too, a read that comes before the write finds the slot unwritten.
    for check in [&[][..], &["--check", "all"]] {
        let out = run(check);
        assert_one_line_error(&out, &["faulted: "]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("LDS race: lane ") || err.contains("read of uninitialised LDS: lane "),
            "{err}"
        );
    }
    for check in ["none", "sync"] {
        let result = run(&["--check", check]);
        assert!(
            result.status.success(),
            "{check}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
    assert_eq!(read_u32(&dir.join("arg0.bin")).len(), 256);
    std::fs::remove_dir_all(&dir).unwrap();
}
