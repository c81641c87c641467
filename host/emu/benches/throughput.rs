//! Emulator throughput in wave-instructions per second on real kernels (the emulator's Rust
//! test kernels for gfx950, `rust_kernels_gfx950.elf` in `IRON_EMU_TEST_OBJECTS`, which
//! `cargo xtask bench` and `cargo xtask test` build): an integer loop (also with uneven work
//! across workgroups), float math with transcendentals, and an LDS tree reduction, each on one
//! host thread and on one per core.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iron_emu::{CodeId, Dispatch, Gpu, KernelDescriptor, Target};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};

struct Loaded {
    gpu: Gpu,
    code: CodeId,
    kernels: Vec<(String, u64, KernelDescriptor)>,
}

/// The test code object `name` in `IRON_EMU_TEST_OBJECTS`, or why it cannot be read.
fn read_test_object(name: &str) -> Result<Vec<u8>, String> {
    let dir = std::env::var_os("IRON_EMU_TEST_OBJECTS").ok_or(
        "IRON_EMU_TEST_OBJECTS is not set: run `cargo xtask bench`, which builds the test kernels",
    )?;
    let path = std::path::Path::new(&dir).join(name);
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn load(data: &[u8]) -> Loaded {
    let file = object::File::parse(data).expect("ELF");
    let mut gpu = Gpu::new(Target::Gfx950);
    let end = file
        .segments()
        .map(|s| s.address() + s.size())
        .max()
        .unwrap_or(1);
    let base = gpu.memory_mut().alloc(end, 4096).unwrap();
    for seg in file.segments() {
        gpu.memory_mut()
            .write(base + seg.address(), seg.data().unwrap())
            .unwrap();
    }
    let text = file.section_by_name(".text").unwrap();
    let code = gpu.load_code(text.data().unwrap(), base + text.address());
    let mut kernels = Vec::new();
    for sym in file.symbols() {
        if let Some(k) = sym.name().ok().and_then(|n| n.strip_suffix(".kd")) {
            let addr = base + sym.address();
            let kd =
                KernelDescriptor::from_bytes(&gpu.memory().read_vec(addr, 64).unwrap()).unwrap();
            kernels.push((k.to_string(), addr, kd));
        }
    }
    Loaded { gpu, code, kernels }
}

impl Loaded {
    fn buffer(&mut self, bytes: usize, fill: u8) -> u64 {
        let a = self.gpu.memory_mut().alloc(bytes as u64, 256).unwrap();
        self.gpu.memory_mut().write(a, &vec![fill; bytes]).unwrap();
        a
    }

    fn run(&mut self, name: &str, args: &[u8], grid: u32, dynamic_lds: u32) -> u64 {
        let (_, kd_addr, kd) = self.kernels.iter().find(|k| k.0 == name).unwrap().clone();
        let mut kernarg = args.to_vec();
        kernarg.resize(kernarg.len().max(kd.kernarg_size as usize), 0);
        let d = Dispatch {
            kernel_name: name,
            code: self.code,
            entry: kd_addr.wrapping_add(kd.kernel_code_entry_byte_offset as u64),
            descriptor: kd,
            kernarg: &kernarg,
            grid: [grid, 1, 1],
            workgroup_size: [256, 1, 1],
            dynamic_lds,
            buffers: None,
        };
        self.gpu.dispatch(&d).unwrap().total_instructions()
    }
}

fn args(parts: &[u64], words: &[u32]) -> Vec<u8> {
    let mut v = Vec::new();
    for p in parts {
        v.extend_from_slice(&p.to_le_bytes());
    }
    for w in words {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

fn bench(c: &mut Criterion) {
    let data = match read_test_object("rust_kernels_gfx950.elf") {
        Ok(data) => data,
        Err(reason) => {
            println!("emulator throughput: skipped ({reason})");
            return;
        }
    };
    let mut k = load(&data);
    // 64 workgroups of 256 work-items: 256 waves, enough for every host thread to have many.
    let groups = 64u32;
    let items = groups * 256;
    let n = items * 16;
    let x = k.buffer(n as usize * 4, 3);
    let out = k.buffer(items as usize * 8, 0);
    let loop_args = args(&[x, out], &[n, items]);
    let xf = k.buffer(items as usize * 4, 0x3f);
    let yf = k.buffer(items as usize * 4, 0);
    let fmath_args = args(&[xf, yf], &[items]);
    let red_out = k.buffer(groups as usize * 4, 0);
    let reduce_args = args(&[xf, red_out], &[]);
    let uneven_args = args(&[x, out], &[n / 4, items, 7]);
    let cases: [(&str, &str, &[u8], u32); 4] = [
        ("loop_sum", "integer loop", &loop_args, 0),
        ("uneven_loop", "odd workgroups 7x the loop", &uneven_args, 0),
        ("fmath", "f32 transcendentals", &fmath_args, 0),
        ("lds_reduce", "LDS + barriers", &reduce_args, 1024),
    ];
    let cores = k.gpu.threads();
    let mut g = c.benchmark_group("emulator");
    for (name, what, args, lds) in cases {
        let per = k.run(name, args, groups, lds);
        g.throughput(Throughput::Elements(per));
        for threads in [1, cores] {
            k.gpu.set_threads(threads);
            g.bench_function(
                format!("{name} ({what}, 256 waves, {threads} threads)"),
                |b| b.iter(|| k.run(name, args, groups, lds)),
            );
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
