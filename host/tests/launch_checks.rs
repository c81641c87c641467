//! Typed launches through a fake backend that records what it is asked: the checks made when a
//! typed kernel is resolved (count, kind, size, bounds), those made at every launch (geometry,
//! LDS, devices), and the launch the backend receives (kernarg bytes, geometry, stream).

mod device_common;

use device_common::{
    ADD_F32_ARGS, code_object, fake_device, fake_properties, flat_kernel_spec, kernel_spec,
    with_field,
};
use iron::device::StreamHandle;
use iron::launch::{LaunchArg, LaunchError};
use iron::{Device, DeviceBuffer, DeviceError, LaunchConfig};
use iron_kernels::elementwise::{add_f32, fill_u32, saxpy_f32};
use iron_kernels::reduce::sum_f32;
use iron_kernels::softmax::softmax_f32;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The metadata arguments of the library's `sum_f32` (`x`, `partials`, `n`).
const SUM_F32_ARGS: &[(u32, u32, &str, &str)] = &[
    (0, 8, "global_buffer", "x"),
    (8, 8, "global_buffer", "partials"),
    (16, 4, "by_value", "n"),
];

/// The metadata arguments of the library's `softmax_f32` (`x`, `y`, `rows`, `cols`).
const SOFTMAX_F32_ARGS: &[(u32, u32, &str, &str)] = &[
    (0, 8, "global_buffer", "x"),
    (8, 8, "global_buffer", "y"),
    (16, 4, "by_value", "rows"),
    (20, 4, "by_value", "cols"),
];

/// A gfx950 object holding `add_f32` with the library's signature and v5 hidden arguments.
fn add_f32_object() -> Vec<u8> {
    code_object(vec![flat_kernel_spec("add_f32", ADD_F32_ARGS, true)])
}

fn launch_error(error: DeviceError) -> LaunchError {
    match error {
        DeviceError::Launch(error) => error,
        other => panic!("expected a launch error, got {other:?}"),
    }
}

fn resolve_error(kernels: Vec<device_common::code_object_common::KernelSpec>) -> String {
    let (device, _) = fake_device("gfx950");
    let module = device.load_module(&code_object(kernels)).unwrap();
    module.kernel(add_f32).unwrap_err().to_string()
}

#[test]
fn resolving_checks_argument_count_kind_size_and_bounds() {
    assert_eq!(
        resolve_error(vec![flat_kernel_spec("add_f32", &ADD_F32_ARGS[..3], true)]),
        "kernel add_f32 takes 3 arguments, got 4"
    );
    let mut pointer_n = ADD_F32_ARGS.to_vec();
    pointer_n[3] = (24, 8, "global_buffer", "n");
    assert_eq!(
        resolve_error(vec![flat_kernel_spec("add_f32", &pointer_n, true)]),
        "kernel add_f32 argument 4 of 4 (n): the code object has a global_buffer argument, the launch passes u32 as by_value"
    );
    let mut value_c = ADD_F32_ARGS.to_vec();
    value_c[2] = (16, 8, "by_value", "c");
    assert_eq!(
        resolve_error(vec![flat_kernel_spec("add_f32", &value_c, true)]),
        "kernel add_f32 argument 3 of 4 (c): the code object has a by_value argument, the launch passes *mut f32 as global_buffer"
    );
    let mut wide_n = ADD_F32_ARGS.to_vec();
    wide_n[3] = (24, 8, "by_value", "n");
    assert_eq!(
        resolve_error(vec![flat_kernel_spec("add_f32", &wide_n, true)]),
        "kernel add_f32 argument 4 of 4 (n): the code object expects 8 bytes, the launch passes 4 bytes (u32)"
    );
    assert_eq!(
        resolve_error(vec![kernel_spec("add_f32", ADD_F32_ARGS, true, 1024)]),
        "kernel add_f32 is declared with max_threads = 256 but its code object allows workgroups of 1024: the code object is stale: rebuild it (`cargo build` reruns a build script's iron-build; `cargo xtask build --kernels <crate dir>` another crate; `cargo xtask build --gfx <gfx>` the kernel library)"
    );
    assert_eq!(
        resolve_error(vec![flat_kernel_spec("sum_f32", ADD_F32_ARGS, true)]),
        "no kernel add_f32 in the module (it holds: sum_f32)"
    );
}

#[test]
fn a_typed_launch_hands_the_backend_the_packed_segment() {
    let (device, backend) = fake_device("gfx950");
    let module = device.load_module(&add_f32_object()).unwrap();
    let add = module.kernel(add_f32).unwrap();
    let mut rng = StdRng::seed_from_u64(0x6c61_756e);
    for _ in 0..20 {
        let n: usize = rng.random_range(0..5000);
        let a = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
        let b = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
        let mut c = DeviceBuffer::<f32>::zeros(&device, n).unwrap();
        // add_f32 is compiled for blocks of 256 (launch_kernarg.rs covers other blocks).
        let block = 256;
        let config = LaunchConfig::for_elements(n, block);
        let stream = device.create_stream().unwrap();
        // SAFETY: the fake backend runs nothing.
        unsafe { stream.launch(&add, config, (&a, &b, &mut c, n as u32)) }.unwrap();

        let state = backend.state();
        let launch = state.launches.last().unwrap();
        assert_eq!(launch.kernel, "add_f32");
        assert_eq!(launch.module, module.handle());
        assert_eq!(launch.stream, stream.handle());
        assert_eq!(
            launch.grid,
            [n.div_ceil(block as usize).max(1) as u32, 1, 1]
        );
        assert_eq!(launch.block, [block, 1, 1]);
        assert_eq!(launch.dynamic_lds, 0);
        assert_eq!(launch.kernarg_align, 8);
        assert_eq!(launch.explicit_size, 28);
        assert_eq!(launch.kernarg.len(), 288);
        let word = |at: usize| u64::from_le_bytes(launch.kernarg[at..at + 8].try_into().unwrap());
        assert_eq!(word(0), a.address());
        assert_eq!(word(8), b.address());
        assert_eq!(word(16), c.address());
        assert_eq!(&launch.kernarg[24..28], &(n as u32).to_le_bytes());
        assert_eq!(&launch.kernarg[28..32], &[0; 4]);
        assert_eq!(&launch.kernarg[32..36], &launch.grid[0].to_le_bytes());
        assert_eq!(&launch.kernarg[44..46], &(block as u16).to_le_bytes());
        assert_eq!(&launch.kernarg[96..98], &3u16.to_le_bytes());
    }
}

#[test]
fn every_library_signature_resolves_against_matching_metadata() {
    let (device, backend) = fake_device("gfx950");
    let object = code_object(vec![
        flat_kernel_spec(
            "fill_u32",
            &[
                (0, 8, "global_buffer", "out"),
                (8, 4, "by_value", "value"),
                (12, 4, "by_value", "n"),
            ],
            false,
        ),
        flat_kernel_spec(
            "saxpy_f32",
            &[
                (0, 4, "by_value", "alpha"),
                (8, 8, "global_buffer", "x"),
                (16, 8, "global_buffer", "y"),
                (24, 4, "by_value", "n"),
            ],
            false,
        ),
        flat_kernel_spec("sum_f32", SUM_F32_ARGS, false),
    ]);
    let module = device.load_module(&object).unwrap();
    let fill = module.kernel(fill_u32).unwrap();
    let saxpy = module.kernel(saxpy_f32).unwrap();
    let sum = module.kernel(sum_f32).unwrap();
    let mut out = DeviceBuffer::<u32>::alloc(&device, 100).unwrap();
    let x = DeviceBuffer::<f32>::zeros(&device, 100).unwrap();
    let mut y = DeviceBuffer::<f32>::zeros(&device, 100).unwrap();
    let mut partials = DeviceBuffer::<f32>::zeros(&device, 1).unwrap();
    let stream = device.default_stream();
    let config = LaunchConfig::for_elements(100, 256);
    // SAFETY: the fake backend runs nothing.
    unsafe {
        stream
            .launch(&fill, config, (&mut out, 0xdead_beef, 100))
            .unwrap();
        stream
            .launch(&saxpy, config, (-1.5, &x, &mut y, 100))
            .unwrap();
        stream
            .launch(&sum, config.with_dynamic_lds(32), (&x, &mut partials, 100))
            .unwrap();
    }
    let state = backend.state();
    let [fill, saxpy, sum] = &state.launches[..] else {
        panic!("three launches expected, got {}", state.launches.len());
    };
    assert_eq!(
        &fill.kernarg[8..16],
        &[0xef, 0xbe, 0xad, 0xde, 100, 0, 0, 0]
    );
    assert_eq!(&saxpy.kernarg[0..8], &[0, 0, 0xc0, 0xbf, 0, 0, 0, 0]);
    assert_eq!(&saxpy.kernarg[16..24], &y.address().to_le_bytes());
    assert_eq!(sum.dynamic_lds, 32);
    assert_eq!(&sum.kernarg[8..16], &partials.address().to_le_bytes());
    assert_eq!(sum.kernarg.len(), 20);
}

#[test]
fn a_kernels_declared_contract_is_checked_at_every_typed_launch() {
    let (device, backend) = fake_device("gfx950");
    let spec = kernel_spec("softmax_f32", SOFTMAX_F32_ARGS, false, 1024);
    let module = device.load_module(&code_object(vec![spec])).unwrap();
    let softmax = module.kernel(softmax_f32).unwrap();
    // One f32 per wave of 64.
    assert_eq!(softmax.dynamic_lds_for([256, 1, 1]), 16);
    assert_eq!(softmax.dynamic_lds_for([16, 4, 2]), 8);
    let x = DeviceBuffer::<f32>::zeros(&device, 100).unwrap();
    let mut y = DeviceBuffer::<f32>::zeros(&device, 100).unwrap();
    let stream = device.default_stream();
    let mut try_launch = |config: LaunchConfig| {
        // SAFETY: the fake backend runs nothing.
        unsafe { stream.launch(&softmax, config, (&x, &mut y, 1, 100)) }
            .map_err(launch_error)
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        try_launch(LaunchConfig::for_elements(100, 100).with_dynamic_lds(64)).unwrap_err(),
        "kernel softmax_f32 runs whole waves only: a block of 100 work-items is not a multiple of the wave size 64"
    );
    assert_eq!(
        try_launch(LaunchConfig::for_elements(100, 256).with_dynamic_lds(12)).unwrap_err(),
        "kernel softmax_f32 needs 16 bytes of dynamic LDS for a block of 256 work-items (wave 64), the launch gives 12: use `.with_dynamic_lds(kernel.dynamic_lds_for(block))`"
    );
    assert!(try_launch(LaunchConfig::for_elements(100, 256)).is_err());
    try_launch(LaunchConfig::for_elements(100, 256).with_dynamic_lds(16)).unwrap();
    try_launch(LaunchConfig::new([1, 1, 1], [16, 4, 2]).with_dynamic_lds(8)).unwrap();
    assert_eq!(
        backend.state().launches.len(),
        2,
        "only the launches that keep the contract ran"
    );
}

#[test]
fn a_kernel_compiled_for_one_block_runs_that_block_alone() {
    let (device, backend) = fake_device("gfx950");
    let spec = flat_kernel_spec("sum_f32", SUM_F32_ARGS, false);
    let module = device.load_module(&code_object(vec![spec])).unwrap();
    let sum = module.kernel(sum_f32).unwrap();
    let x = DeviceBuffer::<f32>::zeros(&device, 100).unwrap();
    let mut partials = DeviceBuffer::<f32>::zeros(&device, 1).unwrap();
    let stream = device.default_stream();
    let mut try_launch = |config: LaunchConfig| {
        // SAFETY: the fake backend runs nothing.
        unsafe { stream.launch(&sum, config, (&x, &mut partials, 100)) }
            .map_err(launch_error)
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        try_launch(LaunchConfig::new([1, 1, 1], [64, 1, 1]).with_dynamic_lds(4)).unwrap_err(),
        "kernel sum_f32 requires a block of [256, 1, 1], got [64, 1, 1]"
    );
    assert_eq!(
        try_launch(LaunchConfig::new([1, 1, 1], [64, 4, 1]).with_dynamic_lds(16)).unwrap_err(),
        "kernel sum_f32 requires a block of [256, 1, 1], got [64, 4, 1]"
    );
    try_launch(LaunchConfig::new([3, 1, 1], [256, 1, 1]).with_dynamic_lds(16)).unwrap();
    assert_eq!(backend.state().launches.len(), 1, "only the 256 block ran");
}

#[test]
fn launches_check_geometry_and_lds_before_anything_runs() {
    let (device, backend) = fake_device("gfx950");
    let module = device.load_module(&add_f32_object()).unwrap();
    let add = module.kernel(add_f32).unwrap();
    let a = DeviceBuffer::<f32>::zeros(&device, 4).unwrap();
    let b = DeviceBuffer::<f32>::zeros(&device, 4).unwrap();
    let mut c = DeviceBuffer::<f32>::zeros(&device, 4).unwrap();
    let stream = device.default_stream();
    let mut try_launch = |config: LaunchConfig| {
        // SAFETY: the fake backend runs nothing.
        unsafe { stream.launch(&add, config, (&a, &b, &mut c, 4)) }.map_err(launch_error)
    };

    let error = try_launch(LaunchConfig::for_elements(4, 512)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "block of 512 exceeds add_f32's declared maximum of 256"
    );
    let error = try_launch(LaunchConfig::new([1, 1, 1], [16, 16, 2])).unwrap_err();
    assert!(matches!(
        error,
        LaunchError::BlockTooLarge {
            threads: 512,
            max: 256,
            ..
        }
    ));
    let error = try_launch(LaunchConfig::new([4, 0, 1], [256, 1, 1])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "grid [4, 0, 1] of add_f32 has a zero dimension: launch at least one workgroup in x, y and z"
    );
    let error = try_launch(LaunchConfig::new([1, 1, 1], [64, 1, 0])).unwrap_err();
    assert!(matches!(
        error,
        LaunchError::EmptyBlock {
            block: [64, 1, 0],
            ..
        }
    ));
    let error = try_launch(LaunchConfig::for_elements(4, 0)).unwrap_err();
    assert!(matches!(error, LaunchError::EmptyBlock { .. }));
    let error = try_launch(LaunchConfig::for_elements(usize::MAX, 256)).unwrap_err();
    assert!(
        matches!(
            error,
            LaunchError::GridTooLarge {
                axis: 'x',
                workgroups: u32::MAX,
                block: 256,
                ..
            }
        ),
        "{error}"
    );
    let error = try_launch(LaunchConfig::new([1 << 24, 1, 1], [256, 1, 1])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "grid of add_f32 in x: 16777216 workgroups of 256 work-items exceed the 4294967295 work-items a dimension can hold"
    );
    // 256 bytes of static LDS: the dynamic part may take the rest of the 64 KiB, not one byte
    // more.
    try_launch(LaunchConfig::for_elements(4, 256).with_dynamic_lds(65536 - 256)).unwrap();
    let error =
        try_launch(LaunchConfig::for_elements(4, 256).with_dynamic_lds(65536 - 255)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "add_f32 needs 256 bytes of static and 65281 bytes of dynamic LDS, above the device's 65536 bytes per workgroup"
    );
    let error =
        try_launch(LaunchConfig::for_elements(4, 256).with_dynamic_lds(u32::MAX)).unwrap_err();
    assert!(matches!(error, LaunchError::LdsTooLarge { .. }));
    try_launch(LaunchConfig::new([u32::MAX / 256, 65535, 1], [256, 1, 1])).unwrap();
    assert_eq!(
        backend.state().launches.len(),
        2,
        "only the valid launches ran"
    );
}

#[test]
fn the_device_limits_and_a_required_block_shape_are_enforced() {
    let mut properties = fake_properties("gfx950");
    properties.max_threads_per_block = 128;
    let backend = std::sync::Arc::new(device_common::FakeBackend::new(properties));
    let device = Device::from_backend(backend).unwrap();
    // A code object that requires [64, 1, 1], launched untyped (a typed add_f32 would be
    // refused as stale: it is compiled for [256, 1, 1]).
    let mut spec = kernel_spec("add_f32", ADD_F32_ARGS, false, 256);
    spec.metadata = with_field(
        spec.metadata,
        ".reqd_workgroup_size",
        rmpv::Value::Array(vec![64.into(), 1.into(), 1.into()]),
    );
    let module = device.load_module(&code_object(vec![spec])).unwrap();
    let add = module.kernel_by_name("add_f32").unwrap();
    let a = DeviceBuffer::<f32>::zeros(&device, 1).unwrap();
    let buffer = LaunchArg::Buffer {
        address: a.address(),
        device: &device,
    };
    let n = LaunchArg::value(&1u32.to_le_bytes());
    let stream = device.default_stream();
    let try_launch = |config: LaunchConfig| {
        // SAFETY: the fake backend runs nothing.
        unsafe { stream.launch_untyped(&add, config, &[buffer, buffer, buffer, n]) }
            .map_err(launch_error)
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        try_launch(LaunchConfig::for_elements(1, 256)).unwrap_err(),
        "block of 256 for add_f32 exceeds the device's maximum of 128 work-items"
    );
    assert_eq!(
        try_launch(LaunchConfig::for_elements(1, 32)).unwrap_err(),
        "kernel add_f32 requires a block of [64, 1, 1], got [32, 1, 1]"
    );
    try_launch(LaunchConfig::for_elements(1, 64)).unwrap();
}

#[test]
fn buffers_and_kernels_of_another_device_are_refused() {
    let (device, backend) = fake_device("gfx950");
    let (other, _) = fake_device("gfx950");
    let module = device.load_module(&add_f32_object()).unwrap();
    let add = module.kernel(add_f32).unwrap();
    let a = DeviceBuffer::<f32>::zeros(&device, 4).unwrap();
    let foreign = DeviceBuffer::<f32>::zeros(&other, 4).unwrap();
    let mut c = DeviceBuffer::<f32>::zeros(&device, 4).unwrap();
    let config = LaunchConfig::for_elements(4, 256);
    // SAFETY: the fake backends run nothing.
    let error = unsafe {
        device
            .default_stream()
            .launch(&add, config, (&a, &foreign, &mut c, 4))
    }
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "argument 2 of add_f32 belongs to another device than the stream"
    );
    // SAFETY: as above.
    let error = unsafe {
        other
            .default_stream()
            .launch(&add, config, (&a, &a, &mut c, 4))
    }
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "kernel add_f32 belongs to another device than the stream"
    );
    assert!(backend.state().launches.is_empty());
}

#[test]
fn untyped_launches_check_each_argument_at_launch() {
    let (device, backend) = fake_device("gfx950");
    let module = device.load_module(&add_f32_object()).unwrap();
    let kernel = module.kernel_by_name("add_f32").unwrap();
    let a = DeviceBuffer::<f32>::zeros(&device, 8).unwrap();
    let stream = device.default_stream();
    let buffer = LaunchArg::Buffer {
        address: a.address(),
        device: &device,
    };
    let n = LaunchArg::value(&8u32.to_le_bytes());
    let config = LaunchConfig::for_elements(8, 256);
    // SAFETY: the fake backend runs nothing.
    let launch = |args: &[LaunchArg<'_>]| unsafe { stream.launch_untyped(&kernel, config, args) };
    assert_eq!(
        launch(&[buffer, buffer, n, n]).unwrap_err().to_string(),
        "kernel add_f32 argument 3 of 4 (c): the code object has a global_buffer argument, the launch passes a value as by_value"
    );
    assert_eq!(
        launch(&[buffer, buffer, buffer, LaunchArg::value(&[1, 2])])
            .unwrap_err()
            .to_string(),
        "kernel add_f32 argument 4 of 4 (n): the code object expects 4 bytes, the launch passes 2 bytes (raw bytes)"
    );
    assert_eq!(
        launch(&[buffer]).unwrap_err().to_string(),
        "kernel add_f32 takes 4 arguments, got 1"
    );
    launch(&[buffer, buffer, buffer, n]).unwrap();
    let state = backend.state();
    assert_eq!(state.launches.len(), 1);
    assert_eq!(state.launches[0].stream, StreamHandle::DEFAULT);
    assert_eq!(&state.launches[0].kernarg[24..28], &8u32.to_le_bytes());
}
