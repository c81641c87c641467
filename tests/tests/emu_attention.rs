//! Attention (`Library::attention`) on every emulated gfx against the f64 oracle: the scalar
//! kernel, the matrix-core kernel (what `Auto` picks for `seq_q > 1`: MFMA on CDNA, WMMA on
//! RDNA in both wave sizes), and the decode
//! kernels (KV split across workgroups, then combined). Shapes cover several query and key tiles
//! with tails in both sequence lengths, causal masks whose diagonal crosses tile edges (with
//! `seq_q < seq_kv`, `=`, and `>`, where the first rows see no key), grouped queries
//! (`heads_q = 4 heads_kv`) and plain multi-head (`heads_q = heads_kv`), head_dim 64 and 128,
//! f16 and bf16, a given scale and the default one. Outputs start poisoned with a guard zone:
//! every element must be written, nothing past the end.
//!
//! Tolerance: the oracle's bound ([`iron_tests::oracle::attention`]): the output's rounding to
//! f16/bf16 (half an ulp of the result, 2^-11 or 2^-8 relative) dominates; f32 arithmetic
//! adds about 1e-5 relative, the matrix kernel's probabilities rounded to the input type add
//! that type's roundoff times `sum p |v| / l`.

mod common;

use common::{
    LibraryDevice, TestFloat, assert_floats_written, kernel_name, library_devices, poisoned_floats,
    rng, upload,
};
use iron::library::{
    AttentionFloat, AttentionKernel, AttentionOptions, AttentionPath, AttentionShape, bf16, f16,
};
use iron_tests::oracle::Expected;
use iron_tests::oracle::attention::{Arithmetic, Shape, attention as reference};
use rand::Rng;
use rand::rngs::StdRng;

/// One forward case: `(batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal, scale)`.
type Case = (usize, usize, usize, usize, usize, usize, bool, Option<f32>);

/// Forward cases (the matrix kernels' query blocks are 128 rows on CDNA and 64 on RDNA, their
/// key tiles 64; the scalar kernel's are 16 rows and one key per lane, 32 or 64). f16 runs the
/// first three, bf16 the last three: each type sees both head sizes, a causal mask, a given
/// scale, and a scale of 0 (every weight equal) or below 0 (the MFMA kernel flips the
/// queries' signs).
const FORWARD: [Case; 6] = [
    // GQA 4:1, tails in both lengths, two batch entries, default scale.
    (2, 4, 1, 21, 75, 64, false, None),
    // Causal with seq_q < seq_kv: the diagonal starts at key 130, crossing tile edges.
    (1, 2, 1, 20, 150, 128, true, None),
    // One query row (what decode sees, through the forward kernels), scale 0: the mean of V.
    (1, 4, 1, 1, 100, 128, false, Some(0.0)),
    // Square causal over two query blocks and three key tiles with tails, a given scale.
    (1, 2, 2, 150, 150, 128, true, Some(0.2)),
    // Causal with seq_q > seq_kv: the first 20 query rows see no key (zero rows); GQA 4:1; a
    // negative scale.
    (1, 4, 1, 50, 30, 64, true, Some(-0.35)),
    // No mask, plain multi-head, head_dim 64, default scale.
    (2, 2, 2, 17, 40, 64, false, None),
];

/// The cases of each element type.
const F16_CASES: std::ops::Range<usize> = 0..3;
/// The cases of bf16.
const BF16_CASES: std::ops::Range<usize> = 3..6;

/// A decode case: `(batch, heads_q, heads_kv, seq_kv, head_dim, keys per split, scale)`.
type DecodeCase = (usize, usize, usize, usize, usize, usize, Option<f32>);

/// Decode cases; each leaves a shorter last split.
const DECODE: [DecodeCase; 3] = [
    (1, 8, 2, 700, 128, 256, None),
    (2, 4, 4, 300, 64, 128, Some(0.3)),
    (1, 6, 1, 333, 64, 64, None),
];

/// CDNA gfx (MFMA; the others have WMMA).
const CDNA: [&str; 3] = ["gfx90a", "gfx942", "gfx950"];

/// `n` values uniform in `[-range, range]`, rounded to `T`.
fn values<T: TestFloat>(rng: &mut StdRng, n: usize, range: f32) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f32(rng.random_range(-range..=range)))
        .collect()
}

/// The exact values of `x`.
fn decoded<T: TestFloat>(x: &[T]) -> Vec<f64> {
    x.iter().map(|v| v.value()).collect()
}

/// Runs one call on `(q, k, v)` into a poisoned output and checks that it wrote every element
/// and nothing past the end; returns the path taken and the output.
fn run<T: TestFloat + AttentionFloat>(
    d: &LibraryDevice,
    (q, k, v): (&[T], &[T], &[T]),
    shape: &AttentionShape,
    options: &AttentionOptions,
    context: &str,
) -> (AttentionPath, Vec<T>) {
    let mut o = poisoned_floats::<T>(&d.device, q.len());
    let path = d
        .library
        .attention(
            &d.device.default_stream(),
            &upload(&d.device, q),
            &upload(&d.device, k),
            &upload(&d.device, v),
            &mut o,
            shape,
            options,
        )
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let got = o.to_vec().unwrap();
    assert_floats_written(&got, q.len(), context);
    (path, got)
}

/// Runs one call and checks every output against the oracle; returns the path taken.
#[allow(clippy::too_many_arguments, reason = "a test case's parts")]
fn check<T: TestFloat + AttentionFloat>(
    d: &LibraryDevice,
    rng: &mut StdRng,
    shape: AttentionShape,
    causal: bool,
    scale: Option<f32>,
    kernel: AttentionKernel,
    decode_split: Option<usize>,
) -> AttentionPath {
    let context = format!(
        "{} {:?} {shape:?} causal {causal} scale {scale:?} {kernel:?}",
        d.gfx,
        T::FORMAT
    );
    let q_len = shape.batch * shape.heads_q * shape.seq_q * shape.head_dim;
    let kv_len = shape.batch * shape.heads_kv * shape.seq_kv * shape.head_dim;
    let q = values::<T>(rng, q_len, 2.0);
    let k = values::<T>(rng, kv_len, 2.0);
    let v = values::<T>(rng, kv_len, 1.0);
    let options = AttentionOptions {
        causal,
        scale,
        kernel,
        decode_split,
    };
    let (path, got) = run(d, (&q, &k, &v), &shape, &options, &context);
    let (tile_keys, rounded) = match path {
        AttentionPath::Matrix => (64, Some(T::FORMAT)),
        _ => (d.wave as usize, None),
    };
    let splits = match path {
        AttentionPath::Decode { splits, .. } => splits,
        _ => 1,
    };
    let arithmetic = Arithmetic {
        rounded_probabilities: rounded,
        flushes_subnormals: d.gfx == "gfx90a",
        rescales: shape.seq_kv.div_ceil(tile_keys) + splits,
    };
    let scale_value = scale.map_or(1.0 / (shape.head_dim as f64).sqrt(), f64::from);
    let oracle_shape = Shape {
        batch: shape.batch,
        heads_q: shape.heads_q,
        heads_kv: shape.heads_kv,
        seq_q: shape.seq_q,
        seq_kv: shape.seq_kv,
        head_dim: shape.head_dim,
    };
    let want = reference(
        (&decoded(&q), &decoded(&k), &decoded(&v)),
        oracle_shape,
        causal,
        scale_value,
        arithmetic,
        T::FORMAT,
    );
    check_all(&got[..q_len], &want, shape, &context);
    path
}

/// Checks every element, naming the first that misses its bound.
fn check_all<T: TestFloat>(got: &[T], want: &[Expected], shape: AttentionShape, context: &str) {
    let d = shape.head_dim;
    for (at, (g, w)) in got.iter().zip(want).enumerate() {
        let value = g.value();
        assert!(
            w.accepts(value),
            "{context}: row {} (batch/head/query flattened) column {}: got {value:e}, want {w:?}",
            at / d,
            at % d
        );
    }
}

/// The shape of a forward case.
fn forward_shape(case: &Case) -> AttentionShape {
    let &(batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, _, _) = case;
    AttentionShape {
        batch,
        heads_q,
        heads_kv,
        seq_q,
        seq_kv,
        head_dim,
    }
}

/// Forward cases `cases` with element type `T` and `kernel` (`Scalar`, or `Auto`: the matrix
/// cores) on every device, checking the path and the kernel dispatched.
fn forward<T: TestFloat + AttentionFloat>(
    seed: u64,
    cases: std::ops::Range<usize>,
    kernel: AttentionKernel,
) {
    let mut rng = rng(seed);
    for d in library_devices() {
        d.clear_counters();
        for case in &FORWARD[cases.clone()] {
            let (causal, scale) = (case.6, case.7);
            let path = check::<T>(
                &d,
                &mut rng,
                forward_shape(case),
                causal,
                scale,
                kernel,
                None,
            );
            let name = match path {
                AttentionPath::Scalar => "attention",
                AttentionPath::Matrix if is_cdna(&d) => "attention_mfma",
                AttentionPath::Matrix => "attention_wmma",
                AttentionPath::Decode { .. } => panic!("{}: a forward case decoded", d.gfx),
            };
            let want = match kernel {
                AttentionKernel::Auto => AttentionPath::Matrix,
                _ => AttentionPath::Scalar,
            };
            assert_eq!(path, want, "{}: {kernel:?}", d.gfx);
            d.dispatches(&[&kernel_name::<T>(name)]);
        }
    }
}

/// Whether `d` has the matrix-core kernel.
fn is_cdna(d: &LibraryDevice) -> bool {
    CDNA.contains(&d.gfx.as_str())
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scalar_f16_matches_the_oracle() {
    forward::<f16>(71, F16_CASES, AttentionKernel::Scalar);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn scalar_bf16_matches_the_oracle() {
    forward::<bf16>(72, BF16_CASES, AttentionKernel::Scalar);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn matrix_f16_matches_the_oracle() {
    forward::<f16>(73, F16_CASES, AttentionKernel::Auto);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn matrix_bf16_matches_the_oracle() {
    forward::<bf16>(74, BF16_CASES, AttentionKernel::Auto);
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn decode_splits_match_the_oracle() {
    let mut rng = rng(75);
    for d in library_devices() {
        d.clear_counters();
        for (i, &(batch, heads_q, heads_kv, seq_kv, head_dim, split, scale)) in
            DECODE.iter().enumerate()
        {
            let shape = AttentionShape {
                batch,
                heads_q,
                heads_kv,
                seq_q: 1,
                seq_kv,
                head_dim,
            };
            let path = if i % 2 == 0 {
                check::<f16>(
                    &d,
                    &mut rng,
                    shape,
                    i == 0,
                    scale,
                    AttentionKernel::Auto,
                    Some(split),
                )
            } else {
                check::<bf16>(
                    &d,
                    &mut rng,
                    shape,
                    false,
                    scale,
                    AttentionKernel::Decode,
                    Some(split),
                )
            };
            let split_len = split.next_multiple_of(d.wave as usize);
            assert_eq!(
                path,
                AttentionPath::Decode {
                    splits: seq_kv.div_ceil(split_len),
                    split_len
                },
                "{}: decode case {i}",
                d.gfx
            );
            assert!(seq_kv % split_len != 0, "each case ends in a shorter split");
            let t = if i % 2 == 0 { "f16" } else { "bf16" };
            d.dispatches(&[
                &format!("attention_decode_{t}"),
                &format!("attention_combine_{t}"),
            ]);
        }
        let one_split = AttentionShape {
            batch: 1,
            heads_q: 2,
            heads_kv: 1,
            seq_q: 1,
            seq_kv: 40,
            head_dim: 64,
        };
        let path = check::<f16>(
            &d,
            &mut rng,
            one_split,
            false,
            None,
            AttentionKernel::Decode,
            None,
        );
        assert!(
            matches!(path, AttentionPath::Decode { splits: 1, .. }),
            "{path:?}"
        );
        d.clear_counters();
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn shapes_the_kernels_do_not_take_are_refused_before_anything_runs() {
    let devices = library_devices();
    let d = &devices[0];
    let s = d.device.default_stream();
    let shape = AttentionShape {
        batch: 1,
        heads_q: 2,
        heads_kv: 1,
        seq_q: 3,
        seq_kv: 5,
        head_dim: 64,
    };
    let q = upload(&d.device, &[f16::ZERO; 384]);
    let kv = upload(&d.device, &[f16::ZERO; 320]);
    let short = upload(&d.device, &[f16::ZERO; 319]);
    let mut o = upload(&d.device, &[f16::ZERO; 384]);
    let options = AttentionOptions::default();
    let error = |shape: &AttentionShape,
                 k: &iron::DeviceBuffer<f16>,
                 options: &AttentionOptions,
                 o: &mut iron::DeviceBuffer<f16>| {
        d.library
            .attention(&s, &q, k, &kv, o, shape, options)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        error(&shape, &short, &options, &mut o),
        "attention: k holds 319 elements, batch * heads_kv * seq_kv * head_dim = 320"
    );
    let bad_dim = AttentionShape {
        head_dim: 80,
        ..shape
    };
    assert_eq!(
        error(&bad_dim, &kv, &options, &mut o),
        "attention: head_dim = 80 is not 64 or 128"
    );
    let bad_heads = AttentionShape {
        heads_kv: 3,
        heads_q: 4,
        ..shape
    };
    assert_eq!(
        error(&bad_heads, &kv, &options, &mut o),
        "attention: heads_q = 4 is not a multiple of heads_kv = 3"
    );
    let decode = AttentionOptions {
        kernel: AttentionKernel::Decode,
        ..options
    };
    assert_eq!(
        error(&shape, &kv, &decode, &mut o),
        "attention: the decode kernels take seq_q = 1, not 3"
    );
    d.dispatches(&[]);
    for d in &devices {
        let matrix = AttentionOptions {
            kernel: AttentionKernel::Matrix,
            ..options
        };
        assert_eq!(
            d.library.attention_path(&shape, &matrix),
            Ok(AttentionPath::Matrix),
            "{}",
            d.gfx
        );
        assert_eq!(
            d.library.attention_path(&shape, &options),
            Ok(AttentionPath::Matrix),
            "{}: Auto",
            d.gfx
        );
    }
    let empty = AttentionShape { seq_q: 0, ..shape };
    d.library
        .attention(&s, &q, &kv, &kv, &mut o, &empty, &options)
        .unwrap();
    d.dispatches(&[]);
}

/// A NaN in one key row, through the matrix kernel: every row that sees the key gets a NaN
/// score, hence a NaN probability (which the bf16 kernels round without keeping it a NaN) and a
/// NaN row sum, and must come out all NaN; every row that does not see it (causal: rows before
/// it) must come out finite.
fn nan_key_poisons_exactly_the_rows_that_see_it<T: TestFloat + AttentionFloat>(seed: u64) {
    let mut rng = rng(seed);
    let (seq, head_dim, nan_key) = (150, 64, 100);
    let shape = AttentionShape {
        batch: 1,
        heads_q: 2,
        heads_kv: 2,
        seq_q: seq,
        seq_kv: seq,
        head_dim,
    };
    let len = shape.heads_q * seq * head_dim;
    let options = AttentionOptions {
        causal: true,
        ..Default::default()
    };
    for d in library_devices() {
        let q = values::<T>(&mut rng, len, 2.0);
        let mut k = values::<T>(&mut rng, len, 2.0);
        let v = values::<T>(&mut rng, len, 1.0);
        for head in 0..shape.heads_kv {
            k[(head * seq + nan_key) * head_dim + 3] = T::from_f32(f32::NAN);
        }
        let context = format!("{} {:?} NaN key", d.gfx, T::FORMAT);
        let (path, got) = run(&d, (&q, &k, &v), &shape, &options, &context);
        assert_eq!(path, AttentionPath::Matrix, "{context}");
        for (i, x) in got[..len].iter().enumerate() {
            let row = i / head_dim % seq;
            let value = x.value();
            let expected = if row >= nan_key {
                value.is_nan()
            } else {
                value.is_finite()
            };
            assert!(expected, "{context}: row {row} element {i}: {value}");
        }
    }
}

#[test]
#[ignore = "needs the device build: run `cargo xtask test`"]
fn a_nan_key_poisons_exactly_the_rows_that_see_it() {
    nan_key_poisons_exactly_the_rows_that_see_it::<f16>(75);
    nan_key_poisons_exactly_the_rows_that_see_it::<bf16>(76);
}
