//! Constants and sizes the HIP ABI fixes, checked against the published values (not against the
//! generated code's own numbers).

use hip_runtime_sys::{
    HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END, HipError,
    hipDeviceAttribute_t as Attr, hipDeviceProp_t, hipDeviceProp_tR0600, hipMemcpyKind,
};
use std::mem::{align_of, offset_of, size_of};

#[test]
fn launch_parameter_keys_are_one_two_three() {
    assert_eq!(HIP_LAUNCH_PARAM_BUFFER_POINTER as usize, 1);
    assert_eq!(HIP_LAUNCH_PARAM_BUFFER_SIZE as usize, 2);
    assert_eq!(HIP_LAUNCH_PARAM_END as usize, 3);
}

#[test]
fn device_attributes_have_their_stable_numbers() {
    let expected = [
        (Attr::hipDeviceAttributeMaxThreadsPerBlock, 56),
        (Attr::hipDeviceAttributeMemoryBusWidth, 59),
        (Attr::hipDeviceAttributeMemoryClockRate, 60),
        (Attr::hipDeviceAttributeMultiprocessorCount, 63),
        (Attr::hipDeviceAttributeMaxSharedMemoryPerBlock, 74),
        (Attr::hipDeviceAttributeWarpSize, 87),
        (Attr::hipDeviceAttributeClockInstructionRate, 10000),
        (
            Attr::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor,
            10002,
        ),
    ];
    for (attribute, number) in expected {
        assert_eq!(attribute.0, number);
    }
}

#[test]
fn memcpy_kinds_have_their_numbers() {
    assert_eq!(hipMemcpyKind::hipMemcpyHostToHost.0, 0);
    assert_eq!(hipMemcpyKind::hipMemcpyHostToDevice.0, 1);
    assert_eq!(hipMemcpyKind::hipMemcpyDeviceToHost.0, 2);
    assert_eq!(hipMemcpyKind::hipMemcpyDeviceToDevice.0, 3);
    assert_eq!(hipMemcpyKind::hipMemcpyDefault.0, 4);
}

#[test]
fn enum_stand_ins_are_four_bytes() {
    assert_eq!(size_of::<HipError>(), 4);
    assert_eq!(align_of::<HipError>(), 4);
    assert_eq!(size_of::<hipMemcpyKind>(), 4);
    assert_eq!(size_of::<Attr>(), 4);
}

#[test]
fn device_property_layouts_match_the_published_sizes() {
    assert_eq!(size_of::<hipDeviceProp_t>(), 792);
    assert_eq!(offset_of!(hipDeviceProp_t, gcnArchName), 396);
    assert_eq!(size_of::<hipDeviceProp_tR0600>(), 1472);
    assert_eq!(offset_of!(hipDeviceProp_tR0600, gcnArchName), 1160);
    assert_eq!(align_of::<hipDeviceProp_tR0600>(), 8);
}
