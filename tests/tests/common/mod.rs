//! What the library's emulator tests share: the library on every emulated gfx, float types as
//! the oracles see them, seeded inputs with edge values, and poisoned outputs with a guard zone.

#![allow(dead_code, reason = "each test file uses part of these helpers")]

use std::fmt::Debug;

use iron::emulator::Emulator;
use iron::library::{Float, Library, bf16, f16};
use iron::{Device, DeviceBuffer};
use iron_tests::devices::{TestDevice, emulated_devices, emulated_devices_with_compute_units};
use iron_tests::oracle::Format;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Elements after the end of every output that must stay untouched.
pub const GUARD: usize = 16;

/// Element counts of the flat kernels: around the wave (32, 64), the 16-byte chunk (4, 8, 16)
/// and the workgroup (256); whole workgroup spans with no element left over (2048 and 8192: a
/// flat workgroup owns 2048 4-byte, 4096 2-byte or 8192 1-byte elements); and many workgroups
/// and a tail.
pub const SIZES: [usize; 13] = [0, 1, 3, 7, 16, 63, 65, 257, 1000, 2048, 4099, 8192, 40_000];

/// Row shapes `[rows, cols]` of the row kernels: empty, tiny, odd widths (single-element
/// accesses), widths that are multiples of 8 (16-byte accesses), and rows longer than
/// `32 * 1024` elements, which the norm and softmax kernels stream instead of holding.
pub const ROW_SHAPES: [(usize, usize); 11] = [
    (0, 5),
    (3, 0),
    (1, 1),
    (3, 5),
    (7, 129),
    (5, 64),
    (4, 1000),
    (2, 4100),
    (3, 4096),
    (1, 33_001),
    (2, 33_024),
];

/// Shapes beyond [`ROW_SHAPES`] for the row kernels with held-row instances: rows of 384 to 65,536
/// elements that pick each instance on both wave sizes (with 1, 2 and 3 waves, and the one-wave
/// instances), and widths that fall back to the general kernel on one wave size or on both (768
/// f16 on wave64, 65536 f32 over a block of 1024).
pub const HELD_ROW_SHAPES: [(usize, usize); 13] = [
    (3, 384),
    (5, 512),
    (3, 1024),
    (2, 1536),
    (5, 2048),
    (5, 3072),
    (2, 6144),
    (2, 768),
    (2, 8192),
    (1, 12_288),
    (2, 16_384),
    (1, 24_576),
    (1, 65_536),
];

/// A family of row kernels with held-row instances `<base>_<t>_c<k>` (any whole number of waves)
/// and `<base>_<t>_c<k>w1` (exactly one wave): the chunks per work-item of its instances and their
/// largest block.
#[derive(Clone, Copy)]
pub struct HeldRows {
    /// The general kernel's name without its type, e.g. `softmax`.
    pub base: &'static str,
    /// The chunks of the instances for any number of waves.
    pub chunks: &'static [usize],
    /// The chunks of the one-wave instances.
    pub one_wave: &'static [usize],
    /// The instances' largest workgroup.
    pub max_block: usize,
}

impl HeldRows {
    /// The kernel the library runs for rows of `cols` elements of `T` on waves of `wave`, and
    /// whether it is a held-row instance: the one-wave instance with the most chunks whose block
    /// is one wave, else the instance with the most chunks whose block is whole waves of at most
    /// `max_block`, else the general kernel.
    pub fn expected_kernel<T: TestFloat>(self, cols: usize, wave: u32) -> (String, bool) {
        let general = kernel_name::<T>(self.base);
        let pack = if T::FORMAT == Format::F32 { 4 } else { 8 };
        for &chunks in self.one_wave.iter().rev() {
            if cols == chunks * pack * wave as usize {
                return (format!("{general}_c{chunks}w1"), true);
            }
        }
        for &chunks in self.chunks.iter().rev() {
            let per_workitem = chunks * pack;
            if cols > 0 && cols.is_multiple_of(per_workitem) {
                let block = cols / per_workitem;
                if block.is_multiple_of(wave as usize) && block <= self.max_block {
                    return (format!("{general}_c{chunks}"), true);
                }
            }
        }
        (general, false)
    }

    /// Panics unless `ran` (the kernels a device ran for `T` over the shapes) holds the general
    /// kernel and every instance.
    pub fn assert_all_ran<T: TestFloat>(self, gfx: &str, ran: &std::collections::BTreeSet<String>) {
        let general = kernel_name::<T>(self.base);
        let every = std::iter::once(general.clone())
            .chain(self.chunks.iter().map(|k| format!("{general}_c{k}")))
            .chain(self.one_wave.iter().map(|k| format!("{general}_c{k}w1")));
        for kernel in every {
            assert!(
                ran.contains(&kernel),
                "{gfx}: no shape ran {kernel}; ran {ran:?}"
            );
        }
    }
}

/// Columns up to which a row stays in registers with the library's geometry (32 elements for
/// each of up to 1024 work-items).
pub const RESIDENT_COLS: usize = 32 * 1024;

/// The library loaded on one emulated GPU.
pub struct LibraryDevice {
    /// The gfx emulated.
    pub gfx: String,
    /// The emulator, for its counters.
    pub emulator: Emulator,
    /// The emulator as a device.
    pub device: Device,
    /// The wave size of the library's code object.
    pub wave: u32,
    /// The library on it.
    pub library: Library,
}

/// What the emulator counted of one dispatch's global memory traffic.
#[derive(Debug, Clone, Copy)]
pub struct Traffic {
    /// Bytes read (vector and scalar loads).
    pub read: u64,
    /// Bytes written.
    pub written: u64,
    /// Waves launched.
    pub waves: u64,
}

impl LibraryDevice {
    /// The traffic of each dispatch since the last call, in order, checking their kernels are
    /// `kernels`.
    pub fn dispatches(&self, kernels: &[&str]) -> Vec<Traffic> {
        let dispatches = self.emulator.take_counters();
        let names: Vec<&str> = dispatches.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, kernels, "{}: the dispatches", self.gfx);
        dispatches
            .iter()
            .map(|(_, c)| Traffic {
                read: c.global_bytes_read,
                written: c.global_bytes_written,
                waves: c.waves,
            })
            .collect()
    }

    /// The traffic of the one dispatch since the last call, checking it ran `kernel`.
    pub fn last_dispatch(&self, kernel: &str) -> Traffic {
        self.dispatches(&[kernel])[0]
    }

    /// Forgets the counters of the dispatches so far.
    pub fn clear_counters(&self) {
        self.emulator.take_counters();
    }
}

/// The library on every emulated gfx of the build.
pub fn library_devices() -> Vec<LibraryDevice> {
    with_library(emulated_devices())
}

/// [`library_devices`] on devices of one compute unit (or WGP) each: the library's grid-stride
/// launches (dequantization, RoPE) are capped at a few workgroups, and their work-items loop.
pub fn one_compute_unit_library_devices() -> Vec<LibraryDevice> {
    with_library(emulated_devices_with_compute_units(1))
}

/// The library loaded on each of `devices`.
fn with_library(devices: Vec<TestDevice>) -> Vec<LibraryDevice> {
    devices
        .into_iter()
        .map(|d| LibraryDevice {
            library: Library::from_module(d.module.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", d.gfx)),
            wave: d.wave,
            gfx: d.gfx,
            emulator: d.emulator,
            device: d.device,
        })
        .collect()
}

/// A float type of the library as the tests handle it.
pub trait TestFloat: Float + Debug + PartialEq {
    /// The oracle's view of the format.
    const FORMAT: Format;
    /// A NaN no kernel writes (a signalling payload), poisoning outputs.
    const POISON: u32;
    /// The value nearest to `x` (ties to even), as the host converts.
    fn from_f32(x: f32) -> Self;
    /// The code.
    fn bits(self) -> u32;
    /// The value of a code.
    fn from_bits(bits: u32) -> Self;
    /// The exact value, decoded by the oracle.
    fn value(self) -> f64 {
        Self::FORMAT.decode(self.bits())
    }
}

impl TestFloat for f32 {
    const FORMAT: Format = Format::F32;
    const POISON: u32 = 0x7FBE_EF01;
    fn from_f32(x: f32) -> Self {
        x
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

impl TestFloat for f16 {
    const FORMAT: Format = Format::F16;
    const POISON: u32 = 0x7D5A;
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn from_bits(bits: u32) -> Self {
        f16::from_bits(bits as u16)
    }
}

impl TestFloat for bf16 {
    const FORMAT: Format = Format::Bf16;
    const POISON: u32 = 0x7FA5;
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn from_bits(bits: u32) -> Self {
        bf16::from_bits(bits as u16)
    }
}

/// A seeded generator, one per test.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `n` values of `T`: uniform in `[-range, range]`, with an edge value at every 11th element:
/// NaN, infinities, subnormals of `T`, signed zeros, the largest finite values and values near
/// `T`'s overflow.
pub fn edgy<T: TestFloat>(rng: &mut StdRng, n: usize, range: f32) -> Vec<T> {
    let format = T::FORMAT;
    let max = format.max_finite() as f32;
    let tiny = format.min_subnormal() as f32;
    let edges = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        tiny,
        -3.0 * tiny,
        max,
        -max,
        max / 3.0,
        1e-30,
    ];
    (0..n)
        .map(|i| {
            let x = if i % 11 == 4 {
                edges[rng.random_range(0..edges.len())]
            } else {
                rng.random_range(-range..=range)
            };
            T::from_f32(x)
        })
        .collect()
}

/// `n` finite values of `T` uniform in `[-range, range]`.
pub fn uniform<T: TestFloat>(rng: &mut StdRng, n: usize, range: f32) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f32(rng.random_range(-range..=range)))
        .collect()
}

/// Checks that an output read back from a poisoned buffer of `n + GUARD` elements kept its poison after element
/// `n` and lost it in every element before (each was written).
pub fn assert_written<T: PartialEq + Debug>(got: &[T], n: usize, poison: &T, context: &str) {
    if let Some(i) = got[..n].iter().position(|v| v == poison) {
        panic!("{context}: element {i} of {n} was not written");
    }
    if let Some(i) = got[n..].iter().position(|v| v != poison) {
        panic!(
            "{context}: guard element {} past the end was overwritten with {:?}",
            i,
            got[n + i]
        );
    }
}

/// [`assert_written`] for float outputs poisoned with `T::POISON`.
pub fn assert_floats_written<T: TestFloat>(got: &[T], n: usize, context: &str) {
    let bits: Vec<u32> = got.iter().map(|v| v.bits()).collect();
    assert_written(&bits, n, &T::POISON, context);
}

/// A device buffer of `n + GUARD` floats, all `T::POISON`.
pub fn poisoned_floats<T: TestFloat>(device: &Device, n: usize) -> DeviceBuffer<T> {
    upload(device, &vec![T::from_bits(T::POISON); n + GUARD])
}

/// Uploads `data`.
pub fn upload<T: TestFloat>(device: &Device, data: &[T]) -> DeviceBuffer<T> {
    DeviceBuffer::from_slice(device, data).expect("upload")
}

/// The kernel name of a float type's variant, e.g. `softmax_bf16`.
pub fn kernel_name<T: TestFloat>(base: &str) -> String {
    let suffix = match T::FORMAT {
        Format::F32 => "f32",
        Format::F16 => "f16",
        Format::Bf16 => "bf16",
        other => panic!("{other:?} is not a kernel float type"),
    };
    format!("{base}_{suffix}")
}

/// Scalar memory reads a dispatch may add to the bytes its vector loads read (kernel arguments
/// and hidden arguments, per wave).
pub const KERNARG_BYTES_PER_WAVE: u64 = 512;
