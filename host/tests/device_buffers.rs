//! Device buffers, streams and events over a fake backend whose memory is host vectors: copies
//! round-trip, lengths are checked with clear errors, memory is freed on drop, streams and
//! events are created, used and destroyed.

mod device_common;

use std::time::Duration;

use device_common::{ADD_F32_ARGS, code_object, fake_device, flat_kernel_spec};
use iron::{DeviceBuffer, DeviceError, LaunchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn copies_round_trip_for_several_element_types() {
    let (device, _) = fake_device("gfx950");
    let mut rng = StdRng::seed_from_u64(0x6275_6666);
    for _ in 0..50 {
        let len = rng.random_range(0..3000);
        let floats: Vec<f32> = (0..len).map(|_| rng.random()).collect();
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let pairs: Vec<[u16; 2]> = (0..len).map(|_| rng.random()).collect();
        let wide: Vec<u64> = (0..len).map(|_| rng.random()).collect();
        assert_eq!(
            DeviceBuffer::from_slice(&device, &floats)
                .unwrap()
                .to_vec()
                .unwrap(),
            floats
        );
        assert_eq!(
            DeviceBuffer::from_slice(&device, &bytes)
                .unwrap()
                .to_vec()
                .unwrap(),
            bytes
        );
        assert_eq!(
            DeviceBuffer::from_slice(&device, &pairs)
                .unwrap()
                .to_vec()
                .unwrap(),
            pairs
        );
        let mut buffer = DeviceBuffer::from_slice(&device, &wide).unwrap();
        assert_eq!(buffer.len(), len);
        assert_eq!(buffer.size_bytes(), 8 * len);
        let mut out = vec![0u64; len];
        buffer.copy_to_slice(&mut out).unwrap();
        assert_eq!(out, wide);
        let replacement: Vec<u64> = (0..len).map(|_| rng.random()).collect();
        buffer.copy_from_slice(&replacement).unwrap();
        assert_eq!(buffer.to_vec().unwrap(), replacement);
    }
}

#[test]
fn zeros_are_zero_even_though_fresh_memory_is_not() {
    let (device, _) = fake_device("gfx950");
    let fresh = DeviceBuffer::<u32>::alloc(&device, 64).unwrap();
    assert!(fresh.to_vec().unwrap().iter().all(|&w| w == 0xa5a5_a5a5));
    let zeros = DeviceBuffer::<u32>::zeros(&device, 64).unwrap();
    assert_eq!(zeros.to_vec().unwrap(), vec![0; 64]);
    let mut filled = DeviceBuffer::from_slice(&device, &[7u8; 33]).unwrap();
    filled.zero().unwrap();
    assert_eq!(filled.to_vec().unwrap(), vec![0; 33]);
}

#[test]
fn copies_of_another_length_are_refused_and_leave_the_buffer_unchanged() {
    let (device, _) = fake_device("gfx950");
    let mut buffer = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0]).unwrap();
    let error = buffer.copy_from_slice(&[9.0; 4]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "copy_from_slice: the device buffer holds 3 elements, the host slice 4"
    );
    assert!(matches!(
        error,
        DeviceError::LengthMismatch {
            buffer: 3,
            host: 4,
            ..
        }
    ));
    let error = buffer.copy_to_slice(&mut [0.0; 2]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "copy_to_slice: the device buffer holds 3 elements, the host slice 2"
    );
    let stream = device.default_stream();
    let error = stream.write(&mut buffer, &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Stream::write: the device buffer holds 3 elements, the host slice 0"
    );
    let error = stream.read(&buffer, &mut [0.0; 5]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Stream::read: the device buffer holds 3 elements, the host slice 5"
    );
    assert_eq!(buffer.to_vec().unwrap(), [1.0, 2.0, 3.0]);
}

#[test]
fn empty_buffers_own_no_memory_and_oversized_ones_are_refused() {
    let (device, backend) = fake_device("gfx950");
    let empty = DeviceBuffer::<f64>::from_slice(&device, &[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.address(), 0);
    assert_eq!(empty.to_vec().unwrap(), Vec::<f64>::new());
    drop(empty);
    assert!(backend.state().memory.is_empty());
    assert!(backend.state().freed.is_empty());

    let error = DeviceBuffer::<u64>::alloc(&device, usize::MAX / 4).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "a buffer of {} elements of 8 bytes is larger than memory can be",
            usize::MAX / 4
        )
    );
    let error = DeviceBuffer::<u8>::alloc(&device, 2 << 30).unwrap_err();
    assert_eq!(
        error.to_string(),
        "out of device memory: cannot allocate 2147483648 bytes"
    );
}

#[test]
fn dropping_frees_each_allocation_once() {
    let (device, backend) = fake_device("gfx950");
    let a = DeviceBuffer::<u32>::zeros(&device, 10).unwrap();
    let b = DeviceBuffer::<u32>::zeros(&device, 1000).unwrap();
    let (a_address, b_address) = (a.address(), b.address());
    assert_ne!(a_address, b_address);
    assert_eq!(a_address % 256, 0);
    assert_eq!(b_address % 256, 0);
    assert_eq!(backend.state().memory.len(), 2);
    drop(b);
    assert_eq!(backend.state().freed, [b_address]);
    drop(a);
    assert_eq!(backend.state().freed, [b_address, a_address]);
    assert!(backend.state().memory.is_empty());
}

#[test]
fn streams_copy_in_order_and_are_destroyed_on_drop_but_the_default_is_not() {
    let (device, backend) = fake_device("gfx950");
    let stream = device.create_stream().unwrap();
    let handle = stream.handle();
    let mut buffer = DeviceBuffer::<i32>::alloc(&device, 5).unwrap();
    stream.write(&mut buffer, &[5, -4, 3, -2, 1]).unwrap();
    let mut out = [0; 5];
    stream.read(&buffer, &mut out).unwrap();
    assert_eq!(out, [5, -4, 3, -2, 1]);
    stream.zero(&mut buffer).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap(), [0; 5]);
    assert_eq!(backend.state().synchronized_streams, [handle; 3]);
    drop(stream);
    assert_eq!(backend.state().destroyed_streams, [handle]);
    drop(device.default_stream());
    assert_eq!(backend.state().destroyed_streams, [handle]);
}

#[test]
fn events_time_the_work_between_them() {
    let (device, backend) = fake_device("gfx950");
    let module = device
        .load_module(&code_object(vec![flat_kernel_spec(
            "add_f32",
            ADD_F32_ARGS,
            false,
        )]))
        .unwrap();
    let add = module.kernel(iron_kernels::elementwise::add_f32).unwrap();
    let a = DeviceBuffer::<f32>::zeros(&device, 16).unwrap();
    let mut c = DeviceBuffer::<f32>::zeros(&device, 16).unwrap();
    let stream = device.create_stream().unwrap();
    let start = stream.record_event().unwrap();
    for _ in 0..3 {
        // SAFETY: the fake backend runs nothing.
        unsafe {
            stream.launch(
                &add,
                LaunchConfig::for_elements(16, 256),
                (&a, &a, &mut c, 16),
            )
        }
        .unwrap();
    }
    let end = stream.record_event().unwrap();
    // The fake clock ticks one millisecond per launch.
    assert_eq!(end.elapsed_since(&start).unwrap(), Duration::from_millis(3));
    let (start_handle, end_handle) = (start.handle(), end.handle());
    drop(start);
    drop(end);
    assert_eq!(backend.state().destroyed_events, [start_handle, end_handle]);

    let (other, _) = fake_device("gfx950");
    let foreign = other.default_stream().record_event().unwrap();
    let here = device.default_stream().record_event().unwrap();
    assert_eq!(
        here.elapsed_since(&foreign).unwrap_err().to_string(),
        "the start event belongs to another device than the end event"
    );
}

#[test]
fn stream_copies_refuse_buffers_of_another_device() {
    let (device, _) = fake_device("gfx950");
    let (other, _) = fake_device("gfx950");
    let mut foreign = DeviceBuffer::<u8>::zeros(&other, 4).unwrap();
    let error = device
        .default_stream()
        .write(&mut foreign, &[1, 2, 3, 4])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the destination buffer belongs to another device than the stream"
    );
    assert_eq!(foreign.to_vec().unwrap(), [0; 4]);
}
