//! The RoPE kernels (`rope_neox_<t>`, `rope_gptj_<t>`, t in f32, f16, bf16) on the emulator for
//! every emulated gfx, against the oracle's f64 rotation: seeded random inputs, head shapes that
//! do and do not fill 16-byte chunks, partial rotary dimensions (untouched tails), several bases,
//! positions from 0 to far beyond any context, heads dealt to groups evenly, unevenly and out of
//! range, and small looping grids. A separate test measures the device's `sin_cos` through a
//! one-pair RoPE (which rotates `(1, 0)` by exactly `p`), and another checks that an angle
//! beyond f32's range gives NaN.

use iron::library::Float;
use iron::{DeviceBuffer, LaunchConfig};
use iron_intrinsics::launch::KernelDecl;
use iron_kernels::dtype::{bf16, f16};
use iron_kernels::rope;
use iron_tests::devices::{TestDevice, emulated_devices};
use iron_tests::oracle::Format;
use iron_tests::oracle::format::pow2;
use iron_tests::oracle::rope::{Pairing, RopeShape, rope as reference, sin_cos_error};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The RoPE kernel signature.
type RopeFn<T> = fn(*mut T, *const u32, u32, u32, u32, u32, f32, u32);

/// An element type of the RoPE kernels: its format and conversions.
trait Elem: Float {
    const FORMAT: Format;
    fn from_f64(v: f64) -> Self;
    fn bits(self) -> u32;
}

impl Elem for f32 {
    const FORMAT: Format = Format::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl Elem for f16 {
    const FORMAT: Format = Format::F16;
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
}

impl Elem for bf16 {
    const FORMAT: Format = Format::Bf16;
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
}

/// (tokens, heads, head_dim, rotary_dim) cases: wide chunks, partial rotation, narrow heads,
/// shapes that only fit one pair per chunk, no rotation, and an odd rotary dimension (used as
/// the even number below it).
const SHAPES: [(usize, usize, usize, usize); 8] = [
    (3, 4, 64, 64),
    (5, 2, 128, 64),
    (2, 3, 80, 80),
    (4, 2, 6, 4),
    (3, 2, 12, 10),
    (2, 8, 32, 16),
    (2, 2, 16, 0),
    (2, 2, 16, 7),
];

/// Runs one RoPE kernel over every shape and checks it.
fn run<T: Elem>(d: &TestDevice, rng: &mut StdRng, decl: KernelDecl<RopeFn<T>>, pairing: Pairing) {
    let kernel = d.module.kernel(decl).unwrap();
    for (tokens, heads, head_dim, rotary_dim) in SHAPES {
        // Head groups of one head each, of every head, uneven ones, and out-of-range counts
        // (clamped to 1..=heads).
        let cases = [
            (10_000.0f32, 8u32, heads as u32),
            (500_000.0, 1, 1),
            (1.0e6, 3, 2),
            (2.0e4, 2, 0),
            (10_000.0, 5, heads as u32 + 3),
        ];
        for (theta, grid, head_groups) in cases {
            let n = tokens * heads * head_dim;
            let x: Vec<T> = (0..n)
                .map(|_| T::from_f64(rng.random_range(-4.0..4.0)))
                .collect();
            let positions: Vec<u32> = (0..tokens)
                .map(|t| match t {
                    0 => rng.random_range(0..4),
                    1 => rng.random_range(0..8192),
                    _ => [65_535, 1 << 20, u32::MAX][rng.random_range(0..3)],
                })
                .collect();
            let x64: Vec<f64> = x.iter().map(|v| T::FORMAT.decode(v.bits())).collect();
            let shape = RopeShape {
                heads,
                head_dim,
                rotary_dim: rotary_dim & !1,
                theta: f64::from(theta),
            };
            let want = reference(&x64, &positions, shape, pairing, T::FORMAT);
            let mut dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            let dp = DeviceBuffer::from_slice(&d.device, &positions).unwrap();
            let cfg = LaunchConfig::new([grid, 1, 1], [64, 1, 1]);
            let args = (
                &mut dx,
                &dp,
                tokens as u32,
                heads as u32,
                head_dim as u32,
                rotary_dim as u32,
                theta,
                head_groups,
            );
            // SAFETY: the kernel touches x[0..tokens * heads * head_dim] and reads
            // positions[0..tokens]; both buffers hold exactly that.
            unsafe {
                d.device
                    .default_stream()
                    .launch(&kernel, cfg, args)
                    .unwrap()
            };
            let got = dx.to_vec().unwrap();
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                let value = T::FORMAT.decode(g.bits());
                assert!(
                    e.accepts(value),
                    "{} {} shape {:?} theta {theta} head groups {head_groups} element {i} (head \
                     element {}): got {value:e}, want {e:?}",
                    d.gfx,
                    decl.name,
                    (tokens, heads, head_dim, rotary_dim),
                    i % head_dim
                );
            }
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn neox_and_gptj_rotate_every_pair() {
    let mut rng = StdRng::seed_from_u64(41);
    for d in emulated_devices() {
        let r = &mut rng;
        run(&d, r, rope::rope_neox_f32, Pairing::NeoX);
        run(&d, r, rope::rope_neox_f16, Pairing::NeoX);
        run(&d, r, rope::rope_neox_bf16, Pairing::NeoX);
        run(&d, r, rope::rope_gptj_f32, Pairing::GptJ);
        run(&d, r, rope::rope_gptj_f16, Pairing::GptJ);
        run(&d, r, rope::rope_gptj_bf16, Pairing::GptJ);
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn sin_cos_is_within_its_documented_error() {
    let mut rng = StdRng::seed_from_u64(42);
    for d in emulated_devices() {
        let kernel = d.module.kernel(rope::rope_gptj_f32).unwrap();
        // Positions spread over every binade up to 2^32, and all of 0..4096.
        let mut positions: Vec<u32> = (0..4096).collect();
        positions.extend((0..60_000).map(|_| {
            let bits = rng.random_range(1..=32);
            rng.random::<u32>() >> (32 - bits)
        }));
        let tokens = positions.len();
        // One head of one pair (1, 0): rotated by the angle p * theta^0 = p, it becomes
        // (cos p, sin p) of the f32 nearest p.
        let x: Vec<f32> = (0..tokens).flat_map(|_| [1.0, 0.0]).collect();
        let mut dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
        let dp = DeviceBuffer::from_slice(&d.device, &positions).unwrap();
        let cfg = LaunchConfig::new([64, 1, 1], [256, 1, 1]);
        // SAFETY: x holds tokens heads of 2 elements, positions tokens entries.
        unsafe {
            d.device
                .default_stream()
                .launch(
                    &kernel,
                    cfg,
                    (&mut dx, &dp, tokens as u32, 1, 2, 2, 10_000.0, 1),
                )
                .unwrap()
        };
        let got = dx.to_vec().unwrap();
        let (mut worst_small, mut worst_ratio, mut worst_large) = (0.0f64, 0.0f64, 0.0f64);
        for (t, &p) in positions.iter().enumerate() {
            let angle = f64::from(p as f32);
            let (sin, cos) = angle.sin_cos();
            let error = (f64::from(got[2 * t]) - cos)
                .abs()
                .max((f64::from(got[2 * t + 1]) - sin).abs());
            assert!(
                error <= sin_cos_error(angle),
                "{} sin_cos({angle}): error {error:e} above {:e}",
                d.gfx,
                sin_cos_error(angle)
            );
            if angle < pow2(22) {
                worst_small = worst_small.max(error);
            } else {
                worst_large = worst_large.max(error / (angle * pow2(-47)));
            }
            worst_ratio = worst_ratio.max(error / sin_cos_error(angle));
        }
        eprintln!(
            "{}: sin_cos worst absolute error below 2^22: {worst_small:e} ({:.2} x 2^-24); above \
             2^22: {worst_large:.2} x |x| 2^-47; worst error / bound: {worst_ratio:.3}",
            d.gfx,
            worst_small / pow2(-24)
        );
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn an_angle_beyond_f32_gives_nan() {
    // theta = 1e-38 makes inv_freq_j = 2^(j * 2 * 126.2 / 128), up to 2^124; at position
    // 2^32 - 1 the f32 angle of the high pairs overflows to infinity, whose sine and cosine
    // `sin_cos` documents as NaN.
    let (theta, head_dim) = (1.0e-38f32, 128usize);
    let step = -2.0 * f64::from(theta).log2() / head_dim as f64;
    let position = u32::MAX;
    for d in emulated_devices() {
        let kernel = d.module.kernel(rope::rope_neox_f32).unwrap();
        let x = vec![1.0f32; head_dim];
        let mut dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
        let dp = DeviceBuffer::from_slice(&d.device, &[position]).unwrap();
        let args = (
            &mut dx,
            &dp,
            1,
            1,
            head_dim as u32,
            head_dim as u32,
            theta,
            1,
        );
        // SAFETY: x holds one token of one head of head_dim elements, positions one entry.
        unsafe {
            d.device
                .default_stream()
                .launch(&kernel, LaunchConfig::new([1, 1, 1], [64, 1, 1]), args)
                .unwrap()
        };
        let got = dx.to_vec().unwrap();
        let mut overflowed = 0;
        for j in 0..head_dim / 2 {
            // Well past f32's largest value (2^128), away from the rounding of the exponent.
            if f64::from(position as f32) * (j as f64 * step).exp2() > pow2(130) {
                overflowed += 1;
                assert!(
                    got[j].is_nan() && got[j + head_dim / 2].is_nan(),
                    "{} pair {j}: {} and {}, want NaN",
                    d.gfx,
                    got[j],
                    got[j + head_dim / 2]
                );
            }
        }
        assert!(overflowed > 0, "no pair's angle overflowed");
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn the_library_rotates_and_checks_its_arguments() {
    use iron::library::{Library, LibraryError, RopeShape as Shape, RopeStyle};
    let mut rng = StdRng::seed_from_u64(43);
    for d in emulated_devices() {
        let library = Library::from_module(d.module.clone()).unwrap();
        let stream = d.device.default_stream();
        let shape = Shape {
            tokens: 6,
            heads: 4,
            head_dim: 128,
            rotary_dim: 96,
        };
        let n = shape.tokens * shape.heads * shape.head_dim;
        let positions: Vec<u32> = (0..6).map(|_| rng.random_range(0..2048)).collect();
        let dp = DeviceBuffer::from_slice(&d.device, &positions).unwrap();
        for (style, pairing) in [
            (RopeStyle::NeoX, Pairing::NeoX),
            (RopeStyle::GptJ, Pairing::GptJ),
        ] {
            let x: Vec<bf16> = (0..n)
                .map(|_| bf16::from_f64(rng.random_range(-3.0..3.0)))
                .collect();
            let x64: Vec<f64> = x.iter().map(|v| f64::from(v.to_f32())).collect();
            let oracle_shape = RopeShape {
                heads: shape.heads,
                head_dim: shape.head_dim,
                rotary_dim: shape.rotary_dim,
                theta: 10_000.0,
            };
            let want = reference(&x64, &positions, oracle_shape, pairing, Format::Bf16);
            let mut dx = DeviceBuffer::from_slice(&d.device, &x).unwrap();
            library
                .rope(&stream, &mut dx, &dp, shape, 10_000.0, style)
                .unwrap();
            for (i, (g, e)) in dx.to_vec().unwrap().iter().zip(&want).enumerate() {
                let value = f64::from(g.to_f32());
                assert!(
                    e.accepts(value),
                    "{} {style:?} element {i}: {value} vs {e:?}",
                    d.gfx
                );
            }
        }
        let mut dx = DeviceBuffer::<f32>::zeros(&d.device, n).unwrap();
        let odd = Shape {
            rotary_dim: 7,
            ..shape
        };
        let error = library
            .rope(&stream, &mut dx, &dp, odd, 1e4, RopeStyle::NeoX)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "rope: rotary_dim = 7 must be even and at most head_dim = 128"
        );
        let error = library
            .rope(&stream, &mut dx, &dp, shape, 0.0, RopeStyle::GptJ)
            .unwrap_err();
        assert!(matches!(error, LibraryError::BadShape { .. }), "{error}");
        let more = Shape { tokens: 7, ..shape };
        let error = library
            .rope(&stream, &mut dx, &dp, more, 1e4, RopeStyle::GptJ)
            .unwrap_err();
        assert!(
            matches!(error, LibraryError::BufferTooShort { buffer: "x", .. }),
            "{error}"
        );
    }
}
