//! Loading modules: the code object for the device's target id is picked from a bundle (or a
//! bare code object is checked), with an error naming the device's gfx and what the image holds;
//! the backend receives the chosen code object's bytes and unloads it with the last handle.

mod device_common;

use device_common::{
    ADD_F32_ARGS, built_bundle, built_code_objects, code_object, fake_device, flat_kernel_spec,
};
use iron::DeviceError;
use iron::code_object::{Bundle, CodeObject, TargetId};
use iron_kernels::{elementwise, reduce};

fn sample_object() -> Vec<u8> {
    code_object(vec![
        flat_kernel_spec("add_f32", ADD_F32_ARGS, false),
        flat_kernel_spec("sum_f32", &ADD_F32_ARGS[1..], true),
    ])
}

/// A bundle with one entry per target id, every entry holding `object`.
fn bundle_of(targets: &[&str], object: &[u8]) -> Vec<u8> {
    Bundle::for_hip(
        targets
            .iter()
            .map(|t| (TargetId::parse(t).unwrap(), object.to_vec())),
    )
    .unwrap()
    .write()
}

#[test]
fn a_bare_code_object_loads_on_its_target_and_keeps_its_metadata() {
    let (device, backend) = fake_device("gfx950:sramecc+:xnack-");
    let object = sample_object();
    let module = device.load_module(&object).unwrap();
    assert_eq!(backend.state().modules[&module.handle().0], object);
    let names: Vec<String> = module
        .kernels()
        .iter()
        .map(|k| k.name().to_owned())
        .collect();
    assert_eq!(names, ["add_f32", "sum_f32"]);
    let sum = module.kernel_by_name("sum_f32").unwrap();
    assert_eq!(sum.metadata().explicit_args().count(), 3);
    assert_eq!(sum.metadata().kernarg_segment_size, 288);
    assert_eq!(sum.code().wave_size(), 64);
    let error = module.kernel_by_name("mul_f32").unwrap_err();
    assert_eq!(
        error.to_string(),
        "no kernel mul_f32 in the module (it holds: add_f32, sum_f32)"
    );
}

#[test]
fn a_bare_code_object_for_another_gfx_is_refused_with_both_named() {
    let (device, backend) = fake_device("gfx1100");
    let error = device.load_module(&sample_object()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no code object for this gfx1100 device: the code object is built for gfx950; build one with `cargo xtask build --gfx gfx1100`"
    );
    assert!(backend.state().modules.is_empty());
}

#[test]
fn the_bundle_entry_for_the_device_is_loaded() {
    let object = sample_object();
    let bundle = bundle_of(&["gfx942", "gfx950", "gfx1100"], &object);
    for target in ["gfx950", "gfx950:sramecc+:xnack-", "gfx950:xnack+"] {
        let (device, backend) = fake_device(target);
        let module = device.load_module(&bundle).unwrap();
        assert_eq!(
            backend.state().modules[&module.handle().0],
            object,
            "{target}: the backend gets the entry, not the bundle"
        );
        assert_eq!(module.code_object().target().processor, "gfx950");
    }
}

#[test]
fn a_bundle_without_the_device_gfx_is_refused_with_what_it_holds() {
    let bundle = bundle_of(&["gfx942", "gfx950"], &sample_object());
    let (device, backend) = fake_device("gfx1201");
    let error = device.load_module(&bundle).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no code object for this gfx1201 device: the bundle holds gfx942, gfx950; build one with `cargo xtask build --gfx gfx1201`"
    );
    assert!(matches!(error, DeviceError::NoCodeObjectForDevice { .. }));
    assert!(backend.state().modules.is_empty());

    let picky = bundle_of(&["gfx942:sramecc+"], &sample_object());
    let (device, _) = fake_device("gfx942:sramecc-");
    assert_eq!(
        device.load_module(&picky).unwrap_err().to_string(),
        "no code object for this gfx942:sramecc- device: the bundle holds gfx942:sramecc+; build one with `cargo xtask build --gfx gfx942`"
    );

    let host_only = Bundle::for_hip(Vec::new()).unwrap().write();
    assert_eq!(
        device.load_module(&host_only).unwrap_err().to_string(),
        "no code object for this gfx942:sramecc- device: the bundle holds no device code objects; build one with `cargo xtask build --gfx gfx942`"
    );
}

#[test]
fn a_mislabelled_bundle_entry_is_caught_before_loading() {
    // The gfx942 entry holds a gfx950 object.
    let bundle = bundle_of(&["gfx942"], &sample_object());
    let (device, backend) = fake_device("gfx942");
    assert_eq!(
        device.load_module(&bundle).unwrap_err().to_string(),
        "no code object for this gfx942 device: the bundle's entry hipv4-amdgcn-amd-amdhsa--gfx942 holds a code object built for gfx950; build one with `cargo xtask build --gfx gfx942`"
    );
    assert!(backend.state().modules.is_empty());
}

#[test]
fn broken_images_are_code_object_errors() {
    let (device, _) = fake_device("gfx950");
    let error = device.load_module(b"not a code object").unwrap_err();
    assert!(matches!(error, DeviceError::CodeObject(_)), "{error:?}");
    let mut truncated = bundle_of(&["gfx950"], &sample_object());
    truncated.truncate(100);
    let error = device.load_module(&truncated).unwrap_err();
    assert!(matches!(error, DeviceError::CodeObject(_)), "{error:?}");
}

#[test]
fn a_module_is_unloaded_after_its_last_kernel_goes() {
    let (device, backend) = fake_device("gfx950");
    let module = device.load_module(&sample_object()).unwrap();
    let handle = module.handle();
    let add = module.kernel(elementwise::add_f32).unwrap();
    let add_again = add.clone();
    drop(module);
    drop(add);
    assert!(backend.state().unloaded.is_empty());
    assert_eq!(add_again.kernel().name(), "add_f32");
    drop(add_again);
    assert_eq!(backend.state().unloaded, [handle]);
}

#[test]
#[ignore = "needs the code objects of `cargo xtask build` (IRON_ARTIFACTS); `cargo xtask test` runs it"]
fn the_built_bundle_serves_every_built_target_and_every_library_kernel_resolves() {
    let bundle = built_bundle();
    for (gfx, object) in built_code_objects() {
        let target = CodeObject::parse(&object).unwrap().target().clone();
        let (device, backend) = fake_device(&target.to_string());
        let module = device.load_module(&bundle).unwrap();
        let loaded = backend.state().modules[&module.handle().0].clone();
        let loaded_target = CodeObject::parse(&loaded).unwrap().target().clone();
        assert!(loaded_target.can_run_on(&target), "{gfx}");
        let wave = module.code_object().kernels()[0].wave_size();
        // A wave64 build of an RDNA target shares its processor with the wave32 build.
        if !gfx.ends_with("-w64") {
            assert_eq!(
                loaded, object,
                "{gfx}: the bundle's entry is the built object"
            );
        }
        module.kernel(elementwise::fill_u32).unwrap();
        module.kernel(elementwise::copy_u32).unwrap();
        module.kernel(elementwise::add_f32).unwrap();
        module.kernel(elementwise::saxpy_f32).unwrap();
        module.kernel(reduce::sum_f32).unwrap();
        println!("{gfx}: 5 typed kernels resolved (wave{wave})");
    }
    let (device, _) = fake_device("gfx908");
    let error = device.load_module(&bundle).unwrap_err().to_string();
    assert!(
        error.starts_with("no code object for this gfx908 device: the bundle holds ")
            && error.contains("gfx950"),
        "{error}"
    );
}
