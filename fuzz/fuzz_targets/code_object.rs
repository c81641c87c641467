//! The code-object reader on arbitrary bytes: parsing, and everything a loader reads from a
//! parsed object, must end in a value or an error, never a panic. An object that parses is also
//! loaded on the emulator of its gfx and each kernel launched once (zeroed arguments, buffers
//! pointing at one small allocation, a small instruction budget): descriptors, segments and
//! addresses taken from the file must not crash or exhaust the host either.
#![no_main]

use iron::code_object::occupancy::{KernelResources, occupancy};
use iron::code_object::{ArgValueKind, CodeObject, TargetId, code_object_for};
use iron::emulator::Emulator;
use iron::launch::LaunchArg;
use iron::{DeviceBuffer, LaunchConfig};
use libfuzzer_sys::fuzz_target;

/// Wave-instructions each fuzzed launch may run.
const BUDGET: u64 = 10_000;

fn launch_every_kernel(data: &[u8], object: &CodeObject) {
    let Ok(emulator) = Emulator::new(&object.target().processor) else {
        return;
    };
    emulator.set_instruction_budget(BUDGET);
    let device = emulator.device();
    let Ok(module) = device.load_module(data) else {
        return;
    };
    let buffer = DeviceBuffer::<u8>::zeros(&device, 4096).expect("a 4 KiB buffer");
    let zeros = [0u8; 8];
    for kernel in module.kernels() {
        let args: Vec<LaunchArg<'_>> = kernel
            .metadata()
            .explicit_args()
            .map(|arg| match arg.value_kind {
                ArgValueKind::GlobalBuffer => LaunchArg::Buffer {
                    address: buffer.address(),
                    device: &device,
                },
                _ => LaunchArg::value(&zeros[..(arg.size as usize).min(8)]),
            })
            .collect();
        let block = kernel.metadata().max_flat_workgroup_size.clamp(1, 64);
        let config = LaunchConfig::new([2, 1, 1], [block, 1, 1]);
        // SAFETY: the emulator checks every access against its allocations, so whatever the
        // kernel does ends in a result or a fault value, never in a host memory access.
        let _ = unsafe {
            device
                .default_stream()
                .launch_untyped(&kernel, config, &args)
        };
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = code_object_for(data, &TargetId::new("gfx950"));
    let Ok(object) = CodeObject::parse(data) else {
        return;
    };
    for kernel in object.kernels() {
        let _ = object.kernel(kernel.name());
        let _ = kernel.descriptor().to_bytes();
        let resources = KernelResources::from_metadata(kernel.metadata(), 0);
        let _ = occupancy(&object.target().processor, &resources);
        let _ = (kernel.code(), kernel.accum_offset(), kernel.wave_size());
    }
    launch_every_kernel(data, &object);
});
