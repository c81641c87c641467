//! Code-object handling on the host: parsing the kernel library's code object (ELF, metadata
//! note, every kernel descriptor), splitting its offload bundle, and computing every kernel's
//! occupancy. Reads the build named by `IRON_ARTIFACTS` (as the tests do; `cargo xtask bench`
//! sets it), else `target/iron`; without a build it says so and measures nothing.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iron::code_object::{Bundle, CodeObject, occupancy};
use iron::library::Library;

fn code_objects(c: &mut Criterion) {
    let bundle = match Library::built_bundle_path().map(std::fs::read) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            println!("code-object benchmarks: skipped (cannot read the bundle: {e})");
            return;
        }
        Err(e) => {
            println!("code-object benchmarks: skipped ({e})");
            return;
        }
    };
    let mut g = c.benchmark_group("code_object");
    g.throughput(Throughput::Bytes(bundle.len() as u64));
    g.bench_function("split the library bundle", |b| {
        b.iter(|| Bundle::parse(&bundle).expect("bundle").entries().len())
    });
    let parsed = Bundle::parse(&bundle).expect("bundle");
    // The device entries (the bundle's host entry is empty).
    for entry in parsed.entries() {
        let Some(target) = &entry.id.target_id else {
            continue;
        };
        let gfx = target.processor.clone();
        let image = entry.data.as_slice();
        g.throughput(Throughput::Bytes(image.len() as u64));
        g.bench_function(format!("parse the {gfx} code object"), |b| {
            b.iter(|| {
                CodeObject::parse(image)
                    .expect("code object")
                    .kernels()
                    .len()
            })
        });
        let co = CodeObject::parse(image).expect("code object");
        g.throughput(Throughput::Elements(co.kernels().len() as u64));
        g.bench_function(format!("occupancy of every {gfx} kernel"), |b| {
            b.iter(|| {
                co.kernels()
                    .iter()
                    .filter_map(|k| {
                        let resources = occupancy::KernelResources::from_metadata(k.metadata(), 0);
                        occupancy::occupancy(&gfx, &resources).ok()
                    })
                    .map(|o| o.waves_per_simd)
                    .sum::<u32>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, code_objects);
criterion_main!(benches);
