//! Kernarg packing: explicit arguments at their metadata offsets, hidden arguments as the HIP
//! runtime fills them for code object v5, everything else zero. Expected bytes are laid out
//! here from the layout tables, not by the packer.

mod device_common;

use device_common::{built_code_objects, v5_hidden_args};
use iron::code_object::{ArgValueKind, CodeObject, KernelArg, KernelMetadata};
use iron::launch::{
    HIP_GRID_DIMS, KernelSignature, LaunchConfig, LaunchError, ParamSpec, explicit_size,
    hidden_arg_value, pack_kernarg,
};
use iron_intrinsics::launch::KernelDecl;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn kernel_arg(offset: u32, size: u32, kind: &str, name: Option<&str>) -> KernelArg {
    KernelArg {
        name: name.map(str::to_owned),
        ..KernelArg::new(offset, size, ArgValueKind::parse(kind))
    }
}

fn metadata(name: &str, args: Vec<KernelArg>, kernarg_segment_size: u32) -> KernelMetadata {
    KernelMetadata {
        max_flat_workgroup_size: 256,
        ..KernelMetadata::new(name, args, kernarg_segment_size)
    }
}

/// `add_f32`'s explicit arguments, followed by the v5 hidden arguments from offset 32.
fn add_f32_v5() -> KernelMetadata {
    let mut args = vec![
        kernel_arg(0, 8, "global_buffer", Some("a")),
        kernel_arg(8, 8, "global_buffer", Some("b")),
        kernel_arg(16, 8, "global_buffer", Some("c")),
        kernel_arg(24, 4, "by_value", Some("n")),
    ];
    args.extend(
        v5_hidden_args(32)
            .into_iter()
            .map(|(offset, size, kind)| kernel_arg(offset, size, kind, None)),
    );
    metadata("add_f32", args, 32 + 256)
}

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.random()).collect()
}

#[test]
fn explicit_arguments_land_at_their_offsets_and_every_other_byte_is_zero() {
    let mut rng = StdRng::seed_from_u64(0x6b65_726e);
    for case in 0..500 {
        let count = rng.random_range(0..10);
        let mut args = Vec::new();
        let mut end = 0u32;
        for _ in 0..count {
            let size = [1u32, 2, 4, 8][rng.random_range(0..4)];
            let offset = (end + rng.random_range(0..3) * size).next_multiple_of(size);
            let kind = if size == 8 && rng.random_bool(0.5) {
                "global_buffer"
            } else {
                "by_value"
            };
            args.push(kernel_arg(offset, size, kind, None));
            end = offset + size;
        }
        let padding = rng.random_range(0..16);
        let meta = metadata("k", args.clone(), end + padding);
        let values: Vec<Vec<u8>> = args
            .iter()
            .map(|a| random_bytes(&mut rng, a.size as usize))
            .collect();
        let slices: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let config = LaunchConfig::new([rng.random_range(1..100), 1, 1], [64, 1, 1]);
        let segment = pack_kernarg(&meta, &slices, &config).unwrap();

        let mut expected = vec![0u8; (end + padding) as usize];
        for (arg, value) in args.iter().zip(&values) {
            expected[arg.offset as usize..][..value.len()].copy_from_slice(value);
        }
        assert_eq!(segment.bytes, expected, "case {case}");
        assert_eq!(segment.explicit_size, end as usize, "case {case}");
        assert_eq!(explicit_size(&meta), end as usize);
        assert_eq!(segment.align, 8);
    }
}

#[test]
fn hidden_arguments_are_filled_as_the_hip_runtime_fills_them() {
    let meta = add_f32_v5();
    let mut rng = StdRng::seed_from_u64(0x6869_6464);
    for _ in 0..200 {
        let grid = [
            rng.random_range(1..1 << 20),
            rng.random_range(1..64),
            rng.random_range(1..64),
        ];
        let block = [
            rng.random_range(1..=256),
            rng.random_range(1..=4),
            rng.random_range(1..=4),
        ];
        let config = LaunchConfig::new(grid, block).with_dynamic_lds(rng.random_range(0..65536));
        let a = rng.random::<u64>().to_le_bytes();
        let b = rng.random::<u64>().to_le_bytes();
        let c = rng.random::<u64>().to_le_bytes();
        let n = rng.random::<u32>().to_le_bytes();
        let segment = pack_kernarg(&meta, &[&a, &b, &c, &n], &config).unwrap();

        // The v5 implicit-argument layout from offset 32, written out by hand.
        let mut expected = vec![0u8; 288];
        expected[0..8].copy_from_slice(&a);
        expected[8..16].copy_from_slice(&b);
        expected[16..24].copy_from_slice(&c);
        expected[24..28].copy_from_slice(&n);
        for (axis, &count) in grid.iter().enumerate() {
            expected[32 + 4 * axis..][..4].copy_from_slice(&count.to_le_bytes());
        }
        for (axis, &size) in block.iter().enumerate() {
            expected[44 + 2 * axis..][..2].copy_from_slice(&(size as u16).to_le_bytes());
        }
        // Remainders (50..56) and global offsets (72..96) stay zero: whole workgroups, no
        // offset.
        expected[96..98].copy_from_slice(&3u16.to_le_bytes());
        expected[152..156].copy_from_slice(&config.dynamic_lds.to_le_bytes());
        assert_eq!(segment.bytes, expected);
        assert_eq!(segment.explicit_size, 28);
    }
}

#[test]
fn hidden_values_cover_the_v5_kinds_and_skip_explicit_ones() {
    let config = LaunchConfig::new([7, 5, 3], [64, 2, 1]).with_dynamic_lds(1024);
    let value = |kind: &str| hidden_arg_value(&ArgValueKind::parse(kind), &config);
    assert_eq!(value("hidden_block_count_x"), Some(7));
    assert_eq!(value("hidden_block_count_y"), Some(5));
    assert_eq!(value("hidden_block_count_z"), Some(3));
    assert_eq!(value("hidden_group_size_x"), Some(64));
    assert_eq!(value("hidden_group_size_y"), Some(2));
    assert_eq!(value("hidden_group_size_z"), Some(1));
    assert_eq!(value("hidden_remainder_x"), Some(0));
    assert_eq!(value("hidden_global_offset_z"), Some(0));
    assert_eq!(value("hidden_grid_dims"), Some(HIP_GRID_DIMS));
    assert_eq!(value("hidden_dynamic_lds_size"), Some(1024));
    assert_eq!(value("hidden_printf_buffer"), Some(0));
    assert_eq!(value("hidden_queue_ptr"), Some(0));
    assert_eq!(value("hidden_some_future_kind"), Some(0));
    assert_eq!(value("by_value"), None);
    assert_eq!(value("global_buffer"), None);
}

#[test]
fn wrong_argument_count_or_size_is_refused_with_the_kernel_and_argument_named() {
    let meta = add_f32_v5();
    let config = LaunchConfig::for_elements(10, 256);
    let word = [0u8; 8];
    let error = pack_kernarg(&meta, &[&word, &word, &word], &config).unwrap_err();
    assert_eq!(error.to_string(), "kernel add_f32 takes 4 arguments, got 3");
    let error = pack_kernarg(&meta, &[&word, &word, &word, &word], &config).unwrap_err();
    assert!(matches!(
        error,
        LaunchError::ArgumentSize {
            position: 4,
            expected: 4,
            got: 8,
            ..
        }
    ));
    assert_eq!(
        error.to_string(),
        "kernel add_f32 argument 4 of 4 (n): the code object expects 4 bytes, the launch passes 8 bytes (raw bytes)"
    );
}

#[test]
fn a_kernel_without_arguments_packs_an_empty_or_hidden_only_segment() {
    let empty = metadata("nothing", Vec::new(), 0);
    let segment = pack_kernarg(&empty, &[], &LaunchConfig::new([1; 3], [1; 3])).unwrap();
    assert!(segment.bytes.is_empty());
    assert_eq!(segment.explicit_size, 0);

    let hidden = metadata(
        "ids",
        vec![kernel_arg(0, 4, "hidden_block_count_x", None)],
        8,
    );
    let segment = pack_kernarg(&hidden, &[], &LaunchConfig::new([9, 1, 1], [1; 3])).unwrap();
    assert_eq!(segment.bytes, [9, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(segment.explicit_size, 0);
}

/// The parameters a declaration says its kernel takes.
fn params<F: KernelSignature>(_: KernelDecl<F>) -> (&'static str, Vec<ParamSpec>) {
    (std::any::type_name::<F>(), F::params())
}

#[test]
#[ignore = "needs the code objects of `cargo xtask build` (IRON_ARTIFACTS); `cargo xtask test` runs it"]
fn library_kernels_pack_at_the_offsets_their_rust_signatures_give_on_every_built_target() {
    use iron_kernels::{elementwise, reduce};
    let declarations = [
        (elementwise::fill_u32.name, params(elementwise::fill_u32)),
        (elementwise::copy_u32.name, params(elementwise::copy_u32)),
        (elementwise::add_f32.name, params(elementwise::add_f32)),
        (elementwise::saxpy_f32.name, params(elementwise::saxpy_f32)),
        (reduce::sum_f32.name, params(reduce::sum_f32)),
    ];
    let mut rng = StdRng::seed_from_u64(0x7267_6574);
    for (gfx, bytes) in built_code_objects() {
        let code_object = CodeObject::parse(&bytes).unwrap();
        for (name, (signature, specs)) in &declarations {
            let kernel = code_object.kernel(name).unwrap();
            let meta = kernel.metadata();
            // The layout of a C struct of the parameters: each at the next multiple of its size.
            let mut layout = Vec::new();
            let mut end = 0u32;
            for spec in specs {
                let offset = end.next_multiple_of(spec.size);
                layout.push((offset, spec.size));
                end = offset + spec.size;
            }
            let explicit: Vec<(u32, u32)> =
                meta.explicit_args().map(|a| (a.offset, a.size)).collect();
            assert_eq!(explicit, layout, "{gfx} {name}: {signature}");

            let values: Vec<Vec<u8>> = specs
                .iter()
                .map(|s| random_bytes(&mut rng, s.size as usize))
                .collect();
            let slices: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            let config = LaunchConfig::for_elements(rng.random_range(0..1 << 20), 256);
            let segment = pack_kernarg(meta, &slices, &config).unwrap();
            assert_eq!(segment.bytes.len(), meta.kernarg_segment_size as usize);
            assert_eq!(segment.explicit_size, end as usize, "{gfx} {name}");
            let mut expected_explicit = vec![0u8; end as usize];
            for ((offset, _), value) in layout.iter().zip(&values) {
                expected_explicit[*offset as usize..][..value.len()].copy_from_slice(value);
            }
            assert_eq!(&segment.bytes[..end as usize], &expected_explicit[..]);
            println!(
                "{gfx} {name}: {} explicit bytes of a {}-byte segment",
                end, meta.kernarg_segment_size
            );
        }
    }
}
