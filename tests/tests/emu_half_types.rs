//! `iron_intrinsics::half::{f16, bf16}` on the GPU against the `half` crate on the host (which
//! those names are there): every kernel of `tests/device-probe`'s `half` module runs on every
//! emulated build (CDNA, and RDNA in wave32 and wave64) over seeded random inputs and the edge
//! cases (NaNs, ±∞, ±0, subnormals, the largest values, ties, overflow), and every element it
//! writes is compared with `half` computing the same expression: bit for bit, except that any
//! NaN matches a NaN. Outputs are poisoned with a pattern no kernel writes (a signalling NaN, or
//! bits the comparison mask never sets) and carry a guard zone that must stay untouched;
//! element counts are not multiples of the wave or the workgroup, and one geometry loops.
//!
//! The code objects come from `cargo xtask test`: `$IRON_EMU_TEST_OBJECTS/device-probe/<build>/
//! kernels.co` (`<build>` a gfx, or `<gfx>-w64` for a wave64 RDNA build), so this test is
//! ignored under plain `cargo test`.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::num::FpCategory;
use std::ops::{Add, Div, Mul, Neg, Sub};

use iron::launch::LaunchArg;
use iron::{Device, DeviceBuffer, LaunchConfig, Module};
use iron_intrinsics::half::{bf16, f16};
use iron_tests::fixtures::{self, EMULATED_BUILDS as BUILDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Elements after the end of every output that must stay untouched.
const GUARD: usize = 16;

/// Poison of f32 outputs: a signalling NaN, which no conversion writes.
const F32_POISON: u32 = 0x7FBE_EF01;

/// Poison of the comparison masks, whose top 8 bits are always clear.
const MASK_POISON: u32 = u32::MAX;

/// Random pairs per binary kernel, besides every pair of edge values.
const RANDOM_PAIRS: usize = 6001;

/// Launch geometries of the elementwise kernels: workgroup size and, when capped, the number
/// of workgroups (the kernels then loop; 96 work-items are a partial wave in wave64).
const GEOMETRIES: [(u32, Option<u32>); 2] = [(256, None), (96, Some(3))];

/// Prefix lengths of the inputs also run (with the first geometry): empty, one element, and
/// counts around the wave sizes.
const SHORT: [usize; 4] = [0, 1, 33, 65];

/// A 16-bit float type of `half` as the oracle uses it.
trait Half:
    Copy
    + Debug
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// The kernels' name prefix.
    const NAME: &'static str;
    /// A signalling NaN poisoning outputs: no kernel makes it from the inputs.
    const POISON: u16;
    /// Positive edge values (their negatives are added): zero, subnormals, normals around 1
    /// and the largest values, the half units that make ties, infinity and NaNs.
    const EDGES: &'static [u16];
    fn from_bits(bits: u16) -> Self;
    fn to_bits(self) -> u16;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_normal(self) -> bool;
    fn is_sign_positive(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn classify(self) -> FpCategory;
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering;
    fn min(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    fn copysign(self, sign: Self) -> Self;
    fn signum(self) -> Self;
    /// The constants in the order the `constants` kernel writes them.
    fn constants() -> [u32; 38];
}

/// Implements [`Half`] for one of `half`'s types by forwarding to its inherent methods.
macro_rules! half_type {
    ($t:ident, $name:literal, poison = $poison:literal, edges = $edges:expr) => {
        impl Half for $t {
            const NAME: &'static str = $name;
            const POISON: u16 = $poison;
            const EDGES: &'static [u16] = &$edges;
            fn from_bits(bits: u16) -> Self {
                $t::from_bits(bits)
            }
            fn to_bits(self) -> u16 {
                $t::to_bits(self)
            }
            fn from_f32(x: f32) -> Self {
                $t::from_f32(x)
            }
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            fn is_normal(self) -> bool {
                $t::is_normal(self)
            }
            fn is_sign_positive(self) -> bool {
                $t::is_sign_positive(self)
            }
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            fn classify(self) -> FpCategory {
                $t::classify(self)
            }
            fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
                $t::total_cmp(self, other)
            }
            fn min(self, other: Self) -> Self {
                $t::min(self, other)
            }
            fn max(self, other: Self) -> Self {
                $t::max(self, other)
            }
            fn copysign(self, sign: Self) -> Self {
                $t::copysign(self, sign)
            }
            fn signum(self) -> Self {
                $t::signum(self)
            }
            fn constants() -> [u32; 38] {
                [
                    $t::ZERO.to_bits().into(),
                    $t::NEG_ZERO.to_bits().into(),
                    $t::ONE.to_bits().into(),
                    $t::NEG_ONE.to_bits().into(),
                    $t::EPSILON.to_bits().into(),
                    $t::INFINITY.to_bits().into(),
                    $t::NEG_INFINITY.to_bits().into(),
                    $t::NAN.to_bits().into(),
                    $t::MAX.to_bits().into(),
                    $t::MIN.to_bits().into(),
                    $t::MIN_POSITIVE.to_bits().into(),
                    $t::MIN_POSITIVE_SUBNORMAL.to_bits().into(),
                    $t::MAX_SUBNORMAL.to_bits().into(),
                    $t::E.to_bits().into(),
                    $t::PI.to_bits().into(),
                    $t::FRAC_1_PI.to_bits().into(),
                    $t::FRAC_1_SQRT_2.to_bits().into(),
                    $t::FRAC_2_PI.to_bits().into(),
                    $t::FRAC_2_SQRT_PI.to_bits().into(),
                    $t::FRAC_PI_2.to_bits().into(),
                    $t::FRAC_PI_3.to_bits().into(),
                    $t::FRAC_PI_4.to_bits().into(),
                    $t::FRAC_PI_6.to_bits().into(),
                    $t::FRAC_PI_8.to_bits().into(),
                    $t::LN_10.to_bits().into(),
                    $t::LN_2.to_bits().into(),
                    $t::LOG10_E.to_bits().into(),
                    $t::LOG10_2.to_bits().into(),
                    $t::LOG2_E.to_bits().into(),
                    $t::LOG2_10.to_bits().into(),
                    $t::SQRT_2.to_bits().into(),
                    $t::DIGITS,
                    $t::MANTISSA_DIGITS,
                    $t::MAX_EXP as u32,
                    $t::MIN_EXP as u32,
                    $t::MAX_10_EXP as u32,
                    $t::MIN_10_EXP as u32,
                    $t::RADIX,
                ]
            }
        }
    };
}

half_type!(
    f16,
    "f16",
    poison = 0x7D5A,
    edges = [
        0x0000, // 0
        0x0001, // smallest subnormal
        0x0002, 0x0003, 0x0155, // subnormals
        0x03FF, // largest subnormal
        0x0400, // smallest normal
        0x0401, 0x1000, // 2^-11: half a unit of 1
        0x1001, 0x2E66, // 0.1
        0x3800, // 0.5
        0x3BFF, 0x3C00, // 1
        0x3C01, 0x3C03, 0x3E00, // 1.5: with 0x3C01 and 0x3C03, products that tie
        0x4200, // 3
        0x4C00, // 16: half a unit of MAX
        0x5BFF, 0x7BFE, 0x7BFF, // MAX
        0x7C00, // infinity
        0x7C01, // a signalling NaN
        0x7E00, // the quiet NaN
        0x7FFF, // a quiet NaN with payload
    ]
);

half_type!(
    bf16,
    "bf16",
    poison = 0x7FA5,
    edges = [
        0x0000, // 0
        0x0001, // smallest subnormal
        0x0002, 0x0003, 0x0055, // subnormals
        0x007F, // largest subnormal
        0x0080, // smallest normal
        0x0081, 0x3B80, // 2^-8: half a unit of 1
        0x3B81, 0x3DCD, // 0.1
        0x3F00, // 0.5
        0x3F7F, 0x3F80, // 1
        0x3F81, 0x3F83, 0x3FC0, // 1.5: with 0x3F81 and 0x3F83, products that tie
        0x4040, // 3
        0x7B00, // 2^119: half a unit of MAX
        0x7EFF, 0x7F7E, 0x7F7F, // MAX
        0x7F80, // infinity
        0x7F81, // a signalling NaN
        0x7FC0, // the quiet NaN
        0x7FFF, // a quiet NaN with payload
    ]
);

/// The mask the `compare` kernels write (the fixture's `compare_mask!`, bit 0 first).
fn compare_mask<T: Half>(a: T, b: T) -> u32 {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let bits = [
        a == b,
        a != b,
        a < b,
        a <= b,
        a > b,
        a >= b,
        a.partial_cmp(&b) == Some(Less),
        a.partial_cmp(&b) == Some(Equal),
        a.partial_cmp(&b) == Some(Greater),
        a.partial_cmp(&b).is_none(),
        a.is_nan(),
        a.is_infinite(),
        a.is_finite(),
        a.is_normal(),
        a.is_sign_positive(),
        a.is_sign_negative(),
        a.total_cmp(&b) == Less,
        a.total_cmp(&b) == Equal,
        a.total_cmp(&b) == Greater,
        a.classify() == FpCategory::Nan,
        a.classify() == FpCategory::Infinite,
        a.classify() == FpCategory::Zero,
        a.classify() == FpCategory::Subnormal,
        a.classify() == FpCategory::Normal,
    ];
    bits.iter()
        .enumerate()
        .fold(0, |mask, (k, &bit)| mask | (u32::from(bit) << k))
}

/// The edge values of `T` and their negatives.
fn edges<T: Half>() -> Vec<u16> {
    T::EDGES.iter().flat_map(|&e| [e, e | 0x8000]).collect()
}

/// The binary kernels' operand pairs: every pair of edge values, then random pairs (any bit
/// pattern; values of moderate size; values a few units apart, which cancel), in total a count
/// that is no multiple of 32.
fn pairs<T: Half>(rng: &mut StdRng) -> (Vec<u16>, Vec<u16>) {
    let edges = edges::<T>();
    let (mut a, mut b): (Vec<u16>, Vec<u16>) = edges
        .iter()
        .flat_map(|&x| edges.iter().map(move |&y| (x, y)))
        .unzip();
    let moderate = |rng: &mut StdRng| T::from_f32(rng.random_range(-8.0f32..8.0)).to_bits();
    for k in 0..RANDOM_PAIRS {
        let (x, y) = match k % 3 {
            0 => (rng.random(), rng.random()),
            1 => (moderate(rng), moderate(rng)),
            _ => {
                let x: u16 = moderate(rng);
                (x, x.wrapping_add(rng.random_range(0..5)) ^ 0x8000)
            }
        };
        a.push(x);
        b.push(y);
    }
    if a.len() % 32 == 0 {
        a.push(0x3C00);
        b.push(0x0001);
    }
    (a, b)
}

/// f32 inputs of `from_f32`: for a set of finite values of `T` (the edges and random ones), the
/// value, the midpoint to the next value up (a tie) and the f32 values either side of it; the
/// overflow threshold `MAX + unit / 2` and its neighbours; f32 subnormals, NaNs with payloads,
/// ±∞, ±0; random f32 bit patterns and values.
fn f32_inputs<T: Half>(rng: &mut StdRng) -> Vec<f32> {
    let mut values: Vec<u16> = edges::<T>();
    values.extend((0..2000).map(|_| rng.random::<u16>()));
    let mut out = Vec::new();
    for bits in values {
        let x = T::from_bits(bits);
        if !x.is_finite() {
            continue;
        }
        let next = T::from_bits(bits.wrapping_add(1));
        let up = if next.is_finite() {
            f64::from(next.to_f32())
        } else {
            // Past the largest magnitude: the next value at the same spacing.
            2.0 * f64::from(x.to_f32()) - f64::from(T::from_bits(bits - 1).to_f32())
        };
        let tie = ((f64::from(x.to_f32()) + up) / 2.0) as f32;
        out.extend([
            x.to_f32(),
            tie,
            f32::from_bits(tie.to_bits() + 1),
            f32::from_bits(tie.to_bits().wrapping_sub(1)),
        ]);
    }
    for bits in [
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x807F_FFFF,
        0x0040_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7F80_0001,
        0xFFC0_0001,
        0x7FFF_FFFF,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
    ] {
        out.push(f32::from_bits(bits));
    }
    out.extend((0..3000).map(|_| f32::from_bits(rng.random())));
    out.extend((0..3000).map(|_| rng.random_range(-70_000.0f32..70_000.0)));
    if out.len() % 32 == 0 {
        out.push(1.0);
    }
    out
}

/// The fixture loaded on the emulator of one build.
struct Probe {
    build: &'static str,
    device: Device,
    module: Module,
}

impl Probe {
    /// Loads build `build` (`<gfx>` or `<gfx>-w64`) and checks it holds every `half`
    /// kernel of both types.
    fn load(build: &'static str) -> Probe {
        let (device, module) = fixtures::load("device-probe", build);
        let present: BTreeSet<String> = module
            .kernels()
            .iter()
            .map(|k| k.name().to_owned())
            .filter(|name| name.starts_with("f16_") || name.starts_with("bf16_"))
            .collect();
        let ops = [
            "add",
            "sub",
            "mul",
            "div",
            "sign",
            "assign",
            "compare",
            "min_max",
            "from_f32",
            "to_f32",
            "constants",
        ];
        let expected: BTreeSet<String> = ["f16", "bf16"]
            .iter()
            .flat_map(|t| ops.iter().map(move |op| format!("{t}_{op}")))
            .collect();
        assert_eq!(present, expected, "{build}: the fixture's kernels");
        Probe {
            build,
            device,
            module,
        }
    }

    /// Runs kernel `name` on `inputs` (buffers of `n` elements) with `n` (unless `None`: the
    /// `constants` kernels take no count), writing `out_len` elements of `O` into a buffer of
    /// `out_len + GUARD` elements poisoned with `poison`; returns that buffer.
    fn run<O: bytemuck::Pod>(
        &self,
        name: &str,
        inputs: &[u64],
        n: Option<usize>,
        (out_len, poison): (usize, O),
        (block, cap): (u32, Option<u32>),
    ) -> Vec<O> {
        let kernel = self.module.kernel_by_name(name).unwrap();
        let out = DeviceBuffer::from_slice(&self.device, &vec![poison; out_len + GUARD]).unwrap();
        let buffer = |address| LaunchArg::Buffer {
            address,
            device: &self.device,
        };
        let mut args: Vec<LaunchArg> = inputs.iter().map(|&a| buffer(a)).collect();
        args.push(buffer(out.address()));
        let count = n.unwrap_or(1);
        if let Some(n) = n {
            args.push(LaunchArg::value(&(n as u32).to_le_bytes()));
        }
        let needed = (count as u32).div_ceil(block).max(1);
        let grid = cap.map_or(needed, |cap| cap.min(needed));
        let stream = self.device.default_stream();
        // SAFETY: every input holds the `n` elements the kernel reads and the output the
        // elements it writes; the emulator checks every access against its allocations.
        unsafe {
            stream
                .launch_untyped(
                    &kernel,
                    LaunchConfig::new([grid, 1, 1], [block, 1, 1]),
                    &args,
                )
                .unwrap()
        };
        stream.synchronize().unwrap();
        out.to_vec().unwrap()
    }

    /// `data` on the device.
    fn upload<T: bytemuck::Pod>(&self, data: &[T]) -> DeviceBuffer<T> {
        DeviceBuffer::from_slice(&self.device, data).unwrap()
    }
}

/// Checks `got` (with its guard) against `want`: every element written (not `poison`), equal
/// bit for bit or both NaN; the guard untouched. `inputs(i)` describes element `i`'s inputs.
fn check<B: Copy + Eq + Debug>(
    context: &str,
    (got, poison): (&[B], B),
    want: &[B],
    is_nan: impl Fn(B) -> bool,
    inputs: impl Fn(usize) -> String,
) {
    assert_eq!(got.len(), want.len() + GUARD, "{context}: output length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            g != poison,
            "{context}: element {i} ({}) not written",
            inputs(i)
        );
        let same = g == w || (is_nan(w) && is_nan(g));
        assert!(
            same,
            "{context}: element {i} ({}) = {g:x?}, want {w:x?}",
            inputs(i)
        );
    }
    let guard = &got[want.len()..];
    assert!(
        guard.iter().all(|&g| g == poison),
        "{context}: the guard after {} elements was written: {guard:x?}",
        want.len()
    );
}

/// Whether the bit pattern is a NaN of `T`.
fn nan<T: Half>(bits: u16) -> bool {
    T::from_bits(bits).is_nan()
}

/// A value of `T` as "bits (value)" for failure messages.
fn show<T: Half>(bits: u16) -> String {
    format!("{bits:#06x} ({:?})", T::from_bits(bits))
}

/// The binary kernels (`add`, `sub`, `mul`, `div`, `assign`, `sign`, `min_max`, `compare`) of
/// `T` on `probe` over `a` and `b`, every geometry and the short prefixes.
fn check_binary<T: Half>(probe: &Probe, a: &[u16], b: &[u16]) {
    let (da, db) = (probe.upload(a), probe.upload(b));
    let inputs = [da.address(), db.address()];
    let describe = |i: usize| format!("a = {}, b = {}", show::<T>(a[i]), show::<T>(b[i]));
    let value = |i: usize| (T::from_bits(a[i]), T::from_bits(b[i]));
    type Oracle<T> = fn(T, T) -> Vec<T>;
    let ops: [(&str, Oracle<T>); 7] = [
        ("add", |x, y| vec![x + y]),
        ("sub", |x, y| vec![x - y]),
        ("mul", |x, y| vec![x * y]),
        ("div", |x, y| vec![x / y]),
        ("assign", |x, y| vec![(((x + y) * y) - x) / y]),
        ("sign", |x, y| vec![-x, -x, x.copysign(y), x.signum()]),
        ("min_max", |x, y| vec![x.min(y), x.max(y)]),
    ];
    let runs = GEOMETRIES
        .iter()
        .map(|&g| (a.len(), g))
        .chain(SHORT.iter().map(|&n| (n, GEOMETRIES[0])));
    for (n, geometry) in runs {
        for (op, oracle) in ops {
            let want: Vec<u16> = (0..n)
                .flat_map(|i| {
                    let (x, y) = value(i);
                    oracle(x, y).into_iter().map(T::to_bits)
                })
                .collect();
            let per = want.len().checked_div(n).unwrap_or(1);
            let name = format!("{}_{op}", T::NAME);
            let got = probe.run(&name, &inputs, Some(n), (want.len(), T::POISON), geometry);
            let context = format!("{} {name} n = {n} {geometry:?}", probe.build);
            check(&context, (&got, T::POISON), &want, nan::<T>, |k| {
                describe(k / per)
            });
        }
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let (x, y) = value(i);
                compare_mask(x, y)
            })
            .collect();
        let name = format!("{}_compare", T::NAME);
        let got = probe.run(&name, &inputs, Some(n), (n, MASK_POISON), geometry);
        let context = format!("{} {name} n = {n} {geometry:?}", probe.build);
        check(&context, (&got, MASK_POISON), &want, |_| false, describe);
    }
}

/// `from_f32` over `x`, `to_f32` over every bit pattern, and the constants of `T` on `probe`.
fn check_conversions<T: Half>(probe: &Probe, x: &[f32]) {
    let dx = probe.upload(x);
    let name = format!("{}_from_f32", T::NAME);
    let want: Vec<u16> = x.iter().map(|&v| T::from_f32(v).to_bits()).collect();
    for geometry in GEOMETRIES {
        let got = probe.run(
            &name,
            &[dx.address()],
            Some(x.len()),
            (x.len(), T::POISON),
            geometry,
        );
        let context = format!("{} {name} {geometry:?}", probe.build);
        check(&context, (&got, T::POISON), &want, nan::<T>, |i| {
            format!("x = {:#010x} ({:e})", x[i].to_bits(), x[i])
        });
    }
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let dall = probe.upload(&all);
    let name = format!("{}_to_f32", T::NAME);
    let want: Vec<u32> = all
        .iter()
        .map(|&b| T::from_bits(b).to_f32().to_bits())
        .collect();
    let got = probe.run(
        &name,
        &[dall.address()],
        Some(all.len()),
        (all.len(), F32_POISON),
        GEOMETRIES[1],
    );
    let context = format!("{} {name}", probe.build);
    let f32_nan = |bits: u32| f32::from_bits(bits).is_nan();
    check(&context, (&got, F32_POISON), &want, f32_nan, |i| {
        show::<T>(all[i])
    });
    let name = format!("{}_constants", T::NAME);
    let want = T::constants();
    let got = probe.run(&name, &[], None, (want.len(), MASK_POISON), (64, None));
    let context = format!("{} {name}", probe.build);
    check(
        &context,
        (&got, MASK_POISON),
        &want,
        |_| false,
        |i| format!("constant {i}"),
    );
}

/// Every kernel of `T` on every build.
fn check_type<T: Half>(seed: u64) {
    for build in BUILDS {
        let probe = Probe::load(build);
        let mut rng = StdRng::seed_from_u64(seed);
        let (a, b) = pairs::<T>(&mut rng);
        check_binary::<T>(&probe, &a, &b);
        check_conversions::<T>(&probe, &f32_inputs::<T>(&mut rng));
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn device_f16_matches_the_half_crate_on_every_build() {
    check_type::<f16>(0x0f16_0001);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn device_bf16_matches_the_half_crate_on_every_build() {
    check_type::<bf16>(0x0bf1_6001);
}
