//! Block formats and bit packing against simple references written here: a bit-by-bit
//! packer, and MX / NVFP4 quantizers that follow the documented algorithm in f64 with a
//! brute-force nearest-value search.

use iron_quant::half_float::{bf16, f16};
use iron_quant::host::{QuantError, QuantizedTensor, decode_elements, encode_elements};
use iron_quant::pack::{code_at, pack_codes, unpack_codes};
use iron_quant::{
    BlockFormat, E2M1, E4M3Fn, ElementFormat, MxFp4, MxFp6E2M3, MxFp6E3M2, MxFp8E4M3, MxFp8E5M2,
    MxInt8, Nvfp4,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Packs codes into a little-endian bit stream one bit at a time.
fn reference_pack(bits: u32, codes: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; (codes.len() * bits as usize).div_ceil(8)];
    for (i, &code) in codes.iter().enumerate() {
        for b in 0..bits as usize {
            let bit = (code >> b) & 1;
            let k = i * bits as usize + b;
            out[k / 8] |= bit << (k % 8);
        }
    }
    out
}

/// Reads code `i` back from a little-endian bit stream one bit at a time.
fn reference_code(bits: u32, bytes: &[u8], i: usize) -> u8 {
    (0..bits as usize).fold(0, |code, b| {
        let k = i * bits as usize + b;
        code | (((bytes[k / 8] >> (k % 8)) & 1) << b)
    })
}

#[test]
fn packing_matches_a_bit_by_bit_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for bits in [4u32, 6, 8] {
        for len in [1usize, 2, 3, 4, 5, 7, 31, 32, 33, 100] {
            let codes: Vec<u8> = (0..len)
                .map(|_| rng.random::<u8>() & ((1u16 << bits) - 1) as u8)
                .collect();
            let want = reference_pack(bits, &codes);
            let mut got = vec![0xEEu8; want.len()];
            pack_codes(bits, &codes, &mut got);
            assert_eq!(got, want, "bits {bits} len {len}");
            let mut back = vec![0u8; len];
            unpack_codes(bits, &got, &mut back);
            assert_eq!(back, codes);
            for (i, &code) in codes.iter().enumerate() {
                assert_eq!(code_at(&got, bits, i), code);
            }
        }
    }
}

/// Nearest finite value of format `F` to `x`, saturating, ties to the even code; zero
/// keeps the sign of `x` where the format has a negative zero.
fn nearest_code<F: ElementFormat>(x: f64) -> u8 {
    let values: Vec<f64> = (0..1u16 << F::BITS)
        .map(|c| F::decode_to_f32(c as u8) as f64)
        .collect();
    let has_negative_zero = values.iter().any(|v| *v == 0.0 && v.is_sign_negative());
    let mut best: Option<(f64, u8)> = None;
    for (code, &v) in values.iter().enumerate() {
        let wrong_zero =
            has_negative_zero && v == 0.0 && v.is_sign_negative() != x.is_sign_negative();
        if !v.is_finite() || wrong_zero {
            continue;
        }
        let d = (v - x).abs();
        best = match best {
            Some((bd, bc)) if bd < d || (bd == d && bc & 1 == 0) => Some((bd, bc)),
            _ => Some((d, code as u8)),
        };
    }
    best.unwrap().1
}

/// The MX algorithm of the specification, in f64: returns (scale code, element codes).
fn reference_mx_block<E: ElementFormat>(values: &[f32]) -> (u8, Vec<u8>) {
    if values.iter().any(|v| !v.is_finite()) {
        return (0xFF, vec![0; values.len()]);
    }
    let amax = values.iter().map(|v| (*v as f64).abs()).fold(0.0, f64::max);
    let floor_log2 = if amax == 0.0 {
        -127
    } else {
        amax.log2().floor() as i32
    };
    let shared = (floor_log2 - E::EMAX).clamp(-127, 127);
    let codes = values
        .iter()
        .map(|&v| nearest_code::<E>(v as f64 / 2f64.powi(shared)))
        .collect();
    ((shared + 127) as u8, codes)
}

/// Random rows whose blocks span many magnitudes, with some all-zero, tiny, tie-heavy and
/// non-finite blocks.
fn random_tensor(rng: &mut ChaCha8Rng, rows: usize, cols: usize, block: usize) -> Vec<f32> {
    let mut data = Vec::with_capacity(rows * cols);
    for _ in 0..rows * cols / block {
        let kind = rng.random_range(0..20);
        let magnitude = 2f64.powi(rng.random_range(-135..100));
        for _ in 0..block {
            let x = match kind {
                0 => 0.0,
                1 => f32::from_bits(rng.random_range(0..0x0080_0000)) as f64,
                // Few significant bits: many exact ties between element values.
                3 | 4 => rng.random_range(-64..64) as f64 / 16.0 * magnitude,
                _ => (rng.random::<f64>() * 2.0 - 1.0) * magnitude,
            };
            data.push(x as f32);
        }
        if kind == 2 {
            let n = data.len();
            data[n - 1 - rng.random_range(0..block)] =
                [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][rng.random_range(0..3)];
        }
    }
    data
}

fn check_mx<B: BlockFormat>(rng: &mut ChaCha8Rng) {
    let (rows, cols) = (24, 128);
    let data = random_tensor(rng, rows, cols, B::BLOCK_LEN);
    let tensor = QuantizedTensor::<B>::quantize(&data, rows, cols).unwrap();
    assert_eq!(tensor.scales().len(), rows * cols / 32);
    assert_eq!(
        tensor.elements().len(),
        rows * cols * B::Element::BITS as usize / 8
    );
    let out = tensor.dequantize();
    for (b, block) in data.chunks(32).enumerate() {
        let (scale, codes) = reference_mx_block::<B::Element>(block);
        assert_eq!(tensor.scales()[b], scale, "{} block {b}", B::NAME);
        let packed = &tensor.elements()[b * B::BLOCK_BYTES..(b + 1) * B::BLOCK_BYTES];
        for (i, &want) in codes.iter().enumerate() {
            let got = reference_code(B::Element::BITS, packed, i);
            assert_eq!(got, want, "{} block {b} element {i}: {}", B::NAME, block[i]);
            let value = &out[b * 32 + i];
            if scale == 0xFF {
                assert!(value.is_nan());
            } else {
                let want = B::Element::decode_to_f32(want) as f64 * 2f64.powi(scale as i32 - 127);
                assert_eq!(
                    *value,
                    want as f32,
                    "{} dequantized block {b} element {i}",
                    B::NAME
                );
            }
        }
    }
}

#[test]
fn mx_formats_match_the_specification_algorithm() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    check_mx::<MxFp8E4M3>(&mut rng);
    check_mx::<MxFp8E5M2>(&mut rng);
    check_mx::<MxFp6E2M3>(&mut rng);
    check_mx::<MxFp6E3M2>(&mut rng);
    check_mx::<MxFp4>(&mut rng);
    check_mx::<MxInt8>(&mut rng);
}

#[test]
fn mx_quantization_error_is_within_half_a_step() {
    // Values of moderate range: error bounded by half the element step at the block scale,
    // except where the largest elements saturate.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let data: Vec<f32> = (0..64 * 64)
        .map(|_| rng.random::<f32>() * 2.0 - 1.0)
        .collect();
    let tensor = QuantizedTensor::<MxFp8E4M3>::quantize(&data, 64, 64).unwrap();
    let out = tensor.dequantize();
    for (b, (block, back)) in data.chunks(32).zip(out.chunks(32)).enumerate() {
        let scale = 2f32.powi(tensor.scales()[b] as i32 - 127);
        for (&x, &y) in block.iter().zip(back) {
            let scaled = (x / scale).abs();
            let step = 2f32.powi(scaled.log2().floor().max(-6.0) as i32 - 3) * scale;
            assert!((x - y).abs() <= step / 2.0 || scaled > 448.0, "{x} -> {y}");
        }
    }
}

/// NVFP4 as documented, with the f32 operations done in f64 and rounded once (which gives
/// the same f32 results for these single operations).
fn reference_nvfp4(data: &[f32]) -> (f32, Vec<u8>, Vec<u8>) {
    let amax = data
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| v.abs())
        .fold(0.0f32, f32::max);
    let ts = (amax as f64 / 2688.0) as f32;
    let ts = if ts >= f32::MIN_POSITIVE && ts.is_finite() {
        ts
    } else {
        1.0
    };
    let mut scales = Vec::new();
    let mut codes = Vec::new();
    for block in data.chunks(16) {
        if block.iter().any(|v| !v.is_finite()) {
            scales.push(0x7F);
            codes.extend([0u8; 16]);
            continue;
        }
        let amax_b = block.iter().map(|v| v.abs()).fold(0.0f32, f32::max);
        let denominator = (6.0 * ts as f64) as f32;
        let s = nearest_code::<E4M3Fn>((amax_b as f64 / denominator as f64) as f32 as f64);
        scales.push(s);
        let divisor = (E4M3Fn::decode_to_f32(s) as f64 * ts as f64) as f32;
        for &x in block {
            codes.push(if divisor > 0.0 {
                nearest_code::<E2M1>((x as f64 / divisor as f64) as f32 as f64)
            } else {
                0
            });
        }
    }
    (ts, scales, codes)
}

#[test]
fn nvfp4_matches_the_documented_algorithm() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for round in 0..4 {
        let (rows, cols) = (16, 64);
        let mut data: Vec<f32> = (0..rows * cols)
            .map(|i| {
                let block_magnitude = 2f32.powi((i / 16 % 13) as i32 - 6 + round);
                (rng.random::<f32>() * 2.0 - 1.0) * block_magnitude
            })
            .collect();
        if round == 3 {
            data[37] = f32::NAN;
            data[100..116].fill(0.0);
        }
        let tensor = QuantizedTensor::<Nvfp4>::quantize(&data, rows, cols).unwrap();
        let (ts, scales, codes) = reference_nvfp4(&data);
        assert_eq!(tensor.tensor_scale(), ts);
        assert_eq!(tensor.scales(), &scales[..]);
        let got: Vec<u8> = (0..rows * cols)
            .map(|i| reference_code(4, tensor.elements(), i))
            .collect();
        assert_eq!(got, codes);
        let out = tensor.dequantize();
        for (i, &y) in out.iter().enumerate() {
            let s = scales[i / 16];
            if s == 0x7F {
                assert!(y.is_nan());
                continue;
            }
            let e = E2M1::decode_to_f32(codes[i]) as f64 * E4M3Fn::decode_to_f32(s) as f64;
            assert_eq!(y, (e * ts as f64) as f32, "element {i}");
        }
    }
}

#[test]
fn f16_and_bf16_inputs_quantize_like_their_f32_values() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let data: Vec<f32> = (0..4 * 64)
        .map(|_| rng.random::<f32>() * 100.0 - 50.0)
        .collect();
    let halves: Vec<f16> = data.iter().map(|&x| f16::from_f32(x)).collect();
    let widened: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
    assert_eq!(
        QuantizedTensor::<MxFp4>::quantize(&halves, 4, 64).unwrap(),
        QuantizedTensor::<MxFp4>::quantize(&widened, 4, 64).unwrap()
    );
    let brains: Vec<bf16> = data.iter().map(|&x| bf16::from_f32(x)).collect();
    let widened: Vec<f32> = brains.iter().map(|h| h.to_f32()).collect();
    assert_eq!(
        QuantizedTensor::<Nvfp4>::quantize(&brains, 4, 64).unwrap(),
        QuantizedTensor::<Nvfp4>::quantize(&widened, 4, 64).unwrap()
    );
}

#[test]
fn rows_are_laid_out_one_after_another() {
    let data: Vec<f32> = (0..3 * 64).map(|i| (i % 7) as f32 - 3.0).collect();
    let whole = QuantizedTensor::<MxFp6E2M3>::quantize(&data, 3, 64).unwrap();
    for r in 0..3 {
        let row =
            QuantizedTensor::<MxFp6E2M3>::quantize(&data[r * 64..(r + 1) * 64], 1, 64).unwrap();
        assert_eq!(&whole.elements()[r * 48..(r + 1) * 48], row.elements());
        assert_eq!(&whole.scales()[r * 2..(r + 1) * 2], row.scales());
    }
    let parts = QuantizedTensor::<MxFp6E2M3>::from_parts(
        3,
        64,
        whole.elements().to_vec(),
        whole.scales().to_vec(),
        1.0,
    )
    .unwrap();
    assert_eq!(parts, whole);
}

#[test]
fn host_api_rejects_shapes_that_do_not_fit() {
    let data = vec![0.0f32; 96];
    assert_eq!(
        QuantizedTensor::<MxFp8E4M3>::quantize(&data, 2, 48).unwrap_err(),
        QuantError::ColsNotMultipleOfBlock {
            format: "mxfp8_e4m3",
            cols: 48,
            block: 32
        }
    );
    assert_eq!(
        QuantizedTensor::<Nvfp4>::quantize(&data, 2, 16).unwrap_err(),
        QuantError::ShapeMismatch {
            rows: 2,
            cols: 16,
            len: 96
        }
    );
    assert!(QuantizedTensor::<Nvfp4>::quantize(&data, 2, 48).is_ok());
    let tensor = QuantizedTensor::<MxFp4>::quantize(&data[..64], 1, 64).unwrap();
    let mut short = vec![0.0f32; 63];
    assert_eq!(
        tensor.dequantize_into(&mut short).unwrap_err().to_string(),
        "output buffer has 63 entries, the shape needs 64"
    );
}

#[test]
fn element_only_encoding_packs_and_decodes() {
    let data = [0.5f32, -1.0, 3.0, 1000.0, f32::NAN];
    let packed = encode_elements::<E2M1, f32>(&data, false);
    assert_eq!(packed, vec![0x21 | 0x80, 0x75, 0x00]);
    let back = decode_elements::<E2M1>(&packed, 5).unwrap();
    assert_eq!(back, vec![0.5, -1.0, 3.0, 6.0, 0.0]);
    let packed = encode_elements::<E4M3Fn, f32>(&data, false);
    assert_eq!(packed[3], 0x7F);
    assert_eq!(encode_elements::<E4M3Fn, f32>(&data, true)[3], 0x7E);
}

fn check_device_decoders<B: BlockFormat>(rng: &mut ChaCha8Rng) {
    let (rows, cols) = (4, 64);
    let data = random_tensor(rng, rows, cols, B::BLOCK_LEN);
    let tensor = QuantizedTensor::<B>::quantize(&data, rows, cols).unwrap();
    let host = tensor.dequantize();
    let ts = tensor.tensor_scale();
    for (b, expected) in host.chunks(B::BLOCK_LEN).enumerate() {
        let packed = &tensor.elements()[b * B::BLOCK_BYTES..(b + 1) * B::BLOCK_BYTES];
        let scale = tensor.scales()[b];
        let mut block = vec![0.0f32; B::BLOCK_LEN];
        B::decode_block(packed, scale, ts, &mut block);
        for (i, (&want, &got)) in expected.iter().zip(&block).enumerate() {
            let single = B::decode_element(packed, scale, ts, i);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{} block {b} element {i}",
                B::NAME
            );
            assert_eq!(
                single.to_bits(),
                want.to_bits(),
                "{} block {b} element {i}",
                B::NAME
            );
        }
    }
}

#[test]
fn device_decoders_agree_with_the_host_dequantizer() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    check_device_decoders::<MxFp8E4M3>(&mut rng);
    check_device_decoders::<MxFp8E5M2>(&mut rng);
    check_device_decoders::<MxFp6E2M3>(&mut rng);
    check_device_decoders::<MxFp6E3M2>(&mut rng);
    check_device_decoders::<MxFp4>(&mut rng);
    check_device_decoders::<MxInt8>(&mut rng);
    check_device_decoders::<Nvfp4>(&mut rng);
}

#[test]
fn word_decoders_agree_with_element_decoding() {
    use iron_quant::{E2M3, E3M2, E5M2, fp4, fp6, fp8};
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..200 {
        let words: [u32; 3] = [rng.random(), rng.random(), rng.random()];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let fp4_values = fp4::decode_word(words[0]);
        let fp8_values = fp8::decode_word::<E5M2>(words[0]);
        let e2m3_values = fp6::decode_words::<E2M3>(words);
        let e3m2_values = fp6::decode_words::<E3M2>(words);
        for i in 0..16 {
            let c6 = reference_code(6, &bytes, i);
            assert_eq!(e2m3_values[i], E2M3::decode_to_f32(c6));
            assert_eq!(e3m2_values[i], E3M2::decode_to_f32(c6));
            if i < 8 {
                assert_eq!(
                    fp4_values[i],
                    E2M1::decode_to_f32(reference_code(4, &bytes, i))
                );
            }
            if i < 4 {
                let want = E5M2::decode_to_f32(bytes[i]);
                assert!(fp8_values[i] == want || (want.is_nan() && fp8_values[i].is_nan()));
            }
        }
    }
}
