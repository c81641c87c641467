//! Kernel descriptor decoding, checked one documented bit field at a time against the
//! positions in LLVM AMDGPUUsage's kernel descriptor and COMPUTE_PGM_RSRC tables.

use iron_code_object::{
    CodeObjectError, FloatDenormMode, FloatRoundMode, KERNEL_DESCRIPTOR_SIZE, KernelDescriptor,
    UserSgpr, UserSgprKind, WorkitemIdVgprs,
};
use rand::{Rng, SeedableRng};

fn with_word(offset: usize, word: u32) -> KernelDescriptor {
    let mut bytes = [0u8; 64];
    bytes[offset..offset + 4].copy_from_slice(&word.to_le_bytes());
    KernelDescriptor::parse(&bytes).unwrap()
}

#[test]
fn fixed_fields_sit_at_their_byte_offsets() {
    let mut bytes = [0u8; 64];
    bytes[0..4].copy_from_slice(&1111u32.to_le_bytes());
    bytes[4..8].copy_from_slice(&2222u32.to_le_bytes());
    bytes[8..12].copy_from_slice(&3333u32.to_le_bytes());
    bytes[16..24].copy_from_slice(&(-4444i64).to_le_bytes());
    bytes[44..48].copy_from_slice(&0x5555u32.to_le_bytes());
    bytes[48..52].copy_from_slice(&0x6666u32.to_le_bytes());
    bytes[52..56].copy_from_slice(&0x7777u32.to_le_bytes());
    bytes[56..58].copy_from_slice(&0x0408u16.to_le_bytes());
    bytes[58..60].copy_from_slice(&0x0183u16.to_le_bytes());
    let kd = KernelDescriptor::parse(&bytes).unwrap();
    assert_eq!(kd.group_segment_fixed_size, 1111);
    assert_eq!(kd.private_segment_fixed_size, 2222);
    assert_eq!(kd.kernarg_size, 3333);
    assert_eq!(kd.kernel_code_entry_byte_offset, -4444);
    assert_eq!(kd.compute_pgm_rsrc3, 0x5555);
    assert_eq!(kd.compute_pgm_rsrc1, 0x6666);
    assert_eq!(kd.compute_pgm_rsrc2, 0x7777);
    assert_eq!(kd.kernel_code_properties, 0x0408);
    assert_eq!(kd.kernarg_preload, 0x0183);
    assert_eq!(kd.kernarg_preload_spec().length_dwords, 3);
    assert_eq!(kd.kernarg_preload_spec().offset_dwords, 3);
    assert_eq!(kd.to_bytes(), bytes);
}

#[test]
fn short_input_is_truncated() {
    assert_eq!(
        KernelDescriptor::parse(&[0u8; 63]).unwrap_err(),
        CodeObjectError::Truncated {
            what: "kernel descriptor",
            needed: KERNEL_DESCRIPTOR_SIZE as u64,
            available: 63
        }
    );
}

#[test]
fn round_trip_of_random_descriptors_keeps_the_defined_fields() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for _ in 0..1000 {
        let mut bytes = [0u8; 64];
        rng.fill(&mut bytes);
        let kd = KernelDescriptor::parse(&bytes).unwrap();
        let again = KernelDescriptor::parse(&kd.to_bytes()).unwrap();
        assert_eq!(kd, again);
        let written = kd.to_bytes();
        for (i, (a, b)) in bytes.iter().zip(written.iter()).enumerate() {
            let reserved = (12..16).contains(&i) || (24..44).contains(&i) || i >= 60;
            assert_eq!(if reserved { 0 } else { *a }, *b, "byte {i}");
        }
    }
}

#[test]
fn rsrc1_fields() {
    let r = with_word(48, 0x3f).rsrc1();
    assert_eq!(r.granulated_workitem_vgpr_count, 63);
    assert_eq!(r.granulated_wavefront_sgpr_count, 0);
    assert_eq!(
        with_word(48, 0xf << 6)
            .rsrc1()
            .granulated_wavefront_sgpr_count,
        15
    );
    assert_eq!(with_word(48, 3 << 10).rsrc1().priority, 3);
    assert_eq!(
        with_word(48, 1 << 12).rsrc1().float_round_mode_32,
        FloatRoundMode::PlusInfinity
    );
    assert_eq!(
        with_word(48, 2 << 14).rsrc1().float_round_mode_16_64,
        FloatRoundMode::MinusInfinity
    );
    assert_eq!(
        with_word(48, 3 << 12).rsrc1().float_round_mode_32,
        FloatRoundMode::Zero
    );
    assert_eq!(
        with_word(48, 0).rsrc1().float_denorm_mode_32,
        FloatDenormMode::FlushSrcDst
    );
    assert_eq!(
        with_word(48, 1 << 16).rsrc1().float_denorm_mode_32,
        FloatDenormMode::FlushDst
    );
    assert_eq!(
        with_word(48, 2 << 18).rsrc1().float_denorm_mode_16_64,
        FloatDenormMode::FlushSrc
    );
    assert_eq!(
        with_word(48, 3 << 18).rsrc1().float_denorm_mode_16_64,
        FloatDenormMode::FlushNone
    );
    let flags = [
        (20, "priv"),
        (21, "dx10_clamp"),
        (22, "debug_mode"),
        (23, "ieee_mode"),
        (24, "bulky"),
        (25, "cdbg_user"),
        (26, "fp16_overflow"),
        (29, "wgp_mode"),
        (30, "mem_ordered"),
        (31, "forward_progress"),
    ];
    for (bit, name) in flags {
        let r = with_word(48, 1 << bit).rsrc1();
        let set = [
            ("priv", r.priv_),
            ("dx10_clamp", r.dx10_clamp),
            ("debug_mode", r.debug_mode),
            ("ieee_mode", r.ieee_mode),
            ("bulky", r.bulky),
            ("cdbg_user", r.cdbg_user),
            ("fp16_overflow", r.fp16_overflow),
            ("wgp_mode", r.wgp_mode),
            ("mem_ordered", r.mem_ordered),
            ("forward_progress", r.forward_progress),
        ];
        for (field, value) in set {
            assert_eq!(value, field == name, "bit {bit} and field {field}");
        }
    }
}

#[test]
fn rsrc2_fields() {
    assert!(with_word(52, 1).rsrc2().enable_private_segment);
    assert_eq!(with_word(52, 0x1f << 1).rsrc2().user_sgpr_count, 31);
    assert!(with_word(52, 1 << 6).rsrc2().enable_trap_handler);
    let r = with_word(52, 1 << 7).rsrc2();
    assert!(r.enable_sgpr_workgroup_id_x && !r.enable_sgpr_workgroup_id_y);
    let r = with_word(52, 1 << 8).rsrc2();
    assert!(r.enable_sgpr_workgroup_id_y && !r.enable_sgpr_workgroup_id_z);
    assert!(with_word(52, 1 << 9).rsrc2().enable_sgpr_workgroup_id_z);
    assert!(with_word(52, 1 << 10).rsrc2().enable_sgpr_workgroup_info);
    assert_eq!(
        with_word(52, 0).rsrc2().enable_vgpr_workitem_id,
        WorkitemIdVgprs::X
    );
    assert_eq!(
        with_word(52, 1 << 11).rsrc2().enable_vgpr_workitem_id,
        WorkitemIdVgprs::XY
    );
    assert_eq!(
        with_word(52, 2 << 11).rsrc2().enable_vgpr_workitem_id,
        WorkitemIdVgprs::XYZ
    );
    assert_eq!(
        with_word(52, 3 << 11).rsrc2().enable_vgpr_workitem_id,
        WorkitemIdVgprs::Undefined
    );
    assert!(
        with_word(52, 1 << 13)
            .rsrc2()
            .enable_exception_address_watch
    );
    assert!(with_word(52, 1 << 14).rsrc2().enable_exception_memory);
    assert_eq!(with_word(52, 0x1ff << 15).rsrc2().granulated_lds_size, 511);
    assert_eq!(with_word(52, 0x7f << 24).rsrc2().enable_exceptions_fp, 0x7f);
    assert_eq!(
        with_word(52, 1 << 31).rsrc2().enable_exceptions_fp,
        0,
        "bit 31 is reserved"
    );
}

#[test]
fn rsrc3_fields() {
    assert_eq!(with_word(44, 0).rsrc3_cdna().accum_offset, 4);
    assert_eq!(with_word(44, 0x3f).rsrc3_cdna().accum_offset, 256);
    assert!(with_word(44, 1 << 16).rsrc3_cdna().tg_split);
    assert!(!with_word(44, 1 << 15).rsrc3_cdna().tg_split);
    let r = with_word(44, 0xf).rsrc3_rdna();
    assert_eq!(r.shared_vgpr_count, 15);
    assert_eq!(r.inst_pref_size_gfx11, 0);
    assert_eq!(
        with_word(44, 0x3f << 4).rsrc3_rdna().inst_pref_size_gfx11,
        63
    );
    assert_eq!(
        with_word(44, 0xff << 4).rsrc3_rdna().inst_pref_size_gfx12,
        255
    );
    assert!(with_word(44, 1 << 10).rsrc3_rdna().trap_on_start);
    assert!(with_word(44, 1 << 11).rsrc3_rdna().trap_on_end);
    assert!(with_word(44, 1 << 13).rsrc3_rdna().glg_en);
    assert!(with_word(44, 1 << 31).rsrc3_rdna().image_op);
}

fn with_properties(properties: u16, preload: u16) -> KernelDescriptor {
    let mut bytes = [0u8; 64];
    bytes[56..58].copy_from_slice(&properties.to_le_bytes());
    bytes[58..60].copy_from_slice(&preload.to_le_bytes());
    KernelDescriptor::parse(&bytes).unwrap()
}

#[test]
fn code_properties_and_wave_size() {
    let p = with_properties(1 << 10, 0);
    assert!(p.code_properties().enable_wavefront_size32);
    assert_eq!(p.wave_size(), 32);
    assert_eq!(with_properties(0, 0).wave_size(), 64);
    assert!(
        with_properties(1 << 11, 0)
            .code_properties()
            .uses_dynamic_stack
    );
    let all = with_properties(0x7f, 0).code_properties();
    assert!(all.enable_sgpr_private_segment_buffer && all.enable_sgpr_private_segment_size);
    assert!(!all.enable_wavefront_size32);
}

fn sgpr(kind: UserSgprKind, first: u32, count: u32) -> UserSgpr {
    UserSgpr { kind, first, count }
}

#[test]
fn user_sgprs_follow_the_initial_state_order() {
    assert_eq!(
        with_properties(0x08, 0).user_sgprs(),
        vec![sgpr(UserSgprKind::KernargSegmentPtr, 0, 2)]
    );
    assert_eq!(
        with_properties(0x7f, 0).user_sgprs(),
        vec![
            sgpr(UserSgprKind::PrivateSegmentBuffer, 0, 4),
            sgpr(UserSgprKind::DispatchPtr, 4, 2),
            sgpr(UserSgprKind::QueuePtr, 6, 2),
            sgpr(UserSgprKind::KernargSegmentPtr, 8, 2),
            sgpr(UserSgprKind::DispatchId, 10, 2),
            sgpr(UserSgprKind::FlatScratchInit, 12, 2),
            sgpr(UserSgprKind::PrivateSegmentSize, 14, 1),
        ]
    );
    assert_eq!(
        with_properties(0x0a, 4).user_sgprs(),
        vec![
            sgpr(UserSgprKind::DispatchPtr, 0, 2),
            sgpr(UserSgprKind::KernargSegmentPtr, 2, 2),
            sgpr(UserSgprKind::PreloadedKernargs, 4, 4),
        ]
    );
}
