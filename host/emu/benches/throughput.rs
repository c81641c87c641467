//! Emulator throughput in wave-instructions per second on real kernels (the emulator's Rust
//! test kernels for gfx950, `rust_kernels_gfx950.elf` in `IRON_EMU_TEST_OBJECTS`, which
//! `cargo xtask bench` and `cargo xtask test` build): an integer loop, float math with
//! transcendentals, and an LDS tree reduction.

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
    let n = 65536u32;
    let x = k.buffer(n as usize * 4, 3);
    let out = k.buffer(4096 * 8, 0);
    let loop_args = args(&[x, out], &[n, 4096]);
    let per = k.run("loop_sum", &loop_args, 16, 0);
    let mut g = c.benchmark_group("emulator");
    g.throughput(Throughput::Elements(per));
    g.bench_function("loop_sum (integer loop, 64 waves)", |b| {
        b.iter(|| k.run("loop_sum", &loop_args, 16, 0))
    });

    let xf = k.buffer(4096 * 4, 0x3f);
    let yf = k.buffer(4096 * 4, 0);
    let fmath_args = args(&[xf, yf], &[4096]);
    let per = k.run("fmath", &fmath_args, 16, 0);
    g.throughput(Throughput::Elements(per));
    g.bench_function("fmath (f32 transcendentals, 64 waves)", |b| {
        b.iter(|| k.run("fmath", &fmath_args, 16, 0))
    });

    let red_out = k.buffer(16 * 4, 0);
    let reduce_args = args(&[xf, red_out], &[]);
    let per = k.run("lds_reduce", &reduce_args, 16, 1024);
    g.throughput(Throughput::Elements(per));
    g.bench_function("lds_reduce (LDS + barriers, 64 waves)", |b| {
        b.iter(|| k.run("lds_reduce", &reduce_args, 16, 1024))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
