//! Bit packing of 4-, 6- and 8-bit codes into bytes and 32-bit words.
//!
//! One rule covers every width: the codes form a little-endian bit stream. Code `i` of
//! width `b` occupies bits `[b*i, b*i + b)` of the stream, where bit `k` of the stream is
//! bit `k % 8` of byte `k / 8` (and so bit `k % 32` of little-endian word `k / 32`).
//!
//! - 8 bits: byte `i` is code `i`.
//! - 4 bits (FP4): byte `i` holds code `2i` in bits 3..0 (low nibble) and code `2i+1` in
//!   bits 7..4. A 32-bit word holds 8 codes, code `j` in bits `4j+3..4j`.
//! - 6 bits (FP6): 4 codes in 3 bytes. In the 24-bit little-endian value of bytes
//!   `3k..3k+3`, code `4k+j` is bits `6j+5..6j`:
//!   byte `3k` = `c1[1:0] c0[5:0]`, byte `3k+1` = `c2[3:0] c1[5:2]`,
//!   byte `3k+2` = `c3[5:0] c2[5:4]` (most significant bits written first).
//!   Three 32-bit words hold 16 codes; codes 5 and 10 straddle a word boundary.
//!
//! Where the layout comes from: the CDNA4 ISA pseudocode of gfx950's conversions.
//! `V_CVT_SCALEF32_PK_F32_FP4` reads the element of bits `[3:0]` of the selected byte into
//! the first result and bits `[7:4]` into the second; `V_CVT_SCALEF32_PK32_F32_FP6` reads
//! element `i` from bits `[6i+5:6i]` of its 192-bit (6-dword) source. The scaled MFMA
//! (`V_MFMA_SCALE_F32_*_F8F6F4`) takes per lane 8/6/4 dwords of FP8/FP6/FP4 elements
//! (LLVM operand types `v8i32`, `v6i32`, `v4i32`, format codes 0..4 = E4M3, E5M2, E2M3,
//! E3M2, E2M1). AMD's published CDNA4 FP4 example loads those dwords straight from memory
//! holding consecutive K elements with element `2i` in the low nibble, i.e. this layout.
//! Not confirmed from a primary source here: the FP6 bit order inside the MFMA operand
//! (assumed to be the conversion instructions' stream order above) and the per-lane K
//! mapping of each MFMA shape (a kernel concern, not a storage one).

/// Number of bytes that hold `count` packed codes of `bits` bits each.
#[inline]
pub const fn packed_len(bits: u32, count: usize) -> usize {
    (count * bits as usize).div_ceil(8)
}

/// Code `index` of a packed buffer of `bits`-bit codes (`bits` is 4, 6 or 8).
///
/// Panics if `bytes` is too short for `index`.
#[inline]
pub fn code_at(bytes: &[u8], bits: u32, index: usize) -> u8 {
    match bits {
        8 => bytes[index],
        4 => (bytes[index / 2] >> ((index & 1) * 4)) & 0x0F,
        _ => {
            let bit = index * 6;
            let shift = bit % 8;
            let low = bytes[bit / 8] as u16;
            let high = if shift > 2 {
                bytes[bit / 8 + 1] as u16
            } else {
                0
            };
            (((high << 8) | low) >> shift) as u8 & 0x3F
        }
    }
}

/// Packs `codes` (each in the low `bits` bits) into `out` (`bits` is 4, 6 or 8).
///
/// Writes `packed_len(bits, codes.len())` bytes; the unused high bits of a last partial
/// byte are zero. Panics if `out` is shorter than that.
#[inline]
pub fn pack_codes(bits: u32, codes: &[u8], out: &mut [u8]) {
    match bits {
        8 => out[..codes.len()].copy_from_slice(codes),
        4 => {
            for (byte, pair) in out.iter_mut().zip(codes.chunks(2)) {
                let high = pair.get(1).copied().unwrap_or(0);
                *byte = (pair[0] & 0x0F) | (high << 4);
            }
        }
        _ => {
            for (triple, quad) in out.chunks_mut(3).zip(codes.chunks(4)) {
                let mut stream = 0u32;
                for (j, &code) in quad.iter().enumerate() {
                    stream |= ((code & 0x3F) as u32) << (6 * j);
                }
                let bytes = stream.to_le_bytes();
                let used = packed_len(6, quad.len());
                triple[..used].copy_from_slice(&bytes[..used]);
            }
        }
    }
}

/// Unpacks `codes.len()` codes of `bits` bits from `bytes` (`bits` is 4, 6 or 8).
///
/// Panics if `bytes` holds fewer than `packed_len(bits, codes.len())` bytes.
#[inline]
pub fn unpack_codes(bits: u32, bytes: &[u8], codes: &mut [u8]) {
    match bits {
        8 => codes.copy_from_slice(&bytes[..codes.len()]),
        4 => {
            for (pair, &byte) in codes.chunks_mut(2).zip(bytes) {
                pair[0] = byte & 0x0F;
                if let Some(high) = pair.get_mut(1) {
                    *high = byte >> 4;
                }
            }
        }
        _ => {
            for (quad, triple) in codes.chunks_mut(4).zip(bytes.chunks(3)) {
                let mut word = [0u8; 4];
                word[..triple.len()].copy_from_slice(triple);
                let stream = u32::from_le_bytes(word);
                for (j, code) in quad.iter_mut().enumerate() {
                    *code = (stream >> (6 * j)) as u8 & 0x3F;
                }
            }
        }
    }
}

/// The 8 FP4 codes of a little-endian word, code `j` from bits `4j+3..4j`.
#[inline]
pub const fn unpack_fp4_word(word: u32) -> [u8; 8] {
    let mut codes = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        codes[j] = ((word >> (4 * j)) & 0x0F) as u8;
        j += 1;
    }
    codes
}

/// Packs 8 FP4 codes into a word, code `j` into bits `4j+3..4j`.
#[inline]
pub const fn pack_fp4_word(codes: [u8; 8]) -> u32 {
    let mut word = 0u32;
    let mut j = 0;
    while j < 8 {
        word |= ((codes[j] & 0x0F) as u32) << (4 * j);
        j += 1;
    }
    word
}

/// FP6 code `j` (`0..16`) of three little-endian words (a 96-bit stream): stream bits
/// `6j+5..6j`, taken across a word boundary for codes 5 and 10.
#[inline]
pub const fn fp6_code_in_words(words: &[u32; 3], j: usize) -> u8 {
    let bit = 6 * j;
    let (word, shift) = (bit / 32, (bit % 32) as u32);
    let low = words[word] >> shift;
    let high = if shift > 26 {
        words[word + 1] << (32 - shift)
    } else {
        0
    };
    ((low | high) & 0x3F) as u8
}

/// The 16 FP6 codes of three little-endian words, code `j` from stream bits `6j+5..6j`.
#[inline]
pub const fn unpack_fp6_words(words: [u32; 3]) -> [u8; 16] {
    let mut codes = [0u8; 16];
    let mut j = 0;
    while j < 16 {
        codes[j] = fp6_code_in_words(&words, j);
        j += 1;
    }
    codes
}

/// Packs 16 FP6 codes into three words, code `j` into stream bits `6j+5..6j`.
#[inline]
pub const fn pack_fp6_words(codes: [u8; 16]) -> [u32; 3] {
    let mut stream = 0u128;
    let mut j = 0;
    while j < 16 {
        stream |= ((codes[j] & 0x3F) as u128) << (6 * j);
        j += 1;
    }
    [stream as u32, (stream >> 32) as u32, (stream >> 64) as u32]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp4_low_nibble_is_the_even_element() {
        let mut out = [0u8; 2];
        pack_codes(4, &[0x1, 0x2, 0x3, 0xF], &mut out);
        assert_eq!(out, [0x21, 0xF3]);
        assert_eq!(code_at(&out, 4, 0), 0x1);
        assert_eq!(code_at(&out, 4, 3), 0xF);
        assert_eq!(pack_fp4_word([1, 2, 3, 4, 5, 6, 7, 8]), 0x8765_4321);
    }

    #[test]
    fn fp6_bytes_follow_the_documented_bit_diagram() {
        let [c0, c1, c2, c3] = [0b000001u8, 0b100010, 0b110011, 0b111111];
        let mut out = [0u8; 3];
        pack_codes(6, &[c0, c1, c2, c3], &mut out);
        assert_eq!(out[0], (c1 & 0b11) << 6 | c0); // c1[1:0] c0[5:0]
        assert_eq!(out[1], (c2 & 0b1111) << 4 | c1 >> 2); // c2[3:0] c1[5:2]
        assert_eq!(out[2], c3 << 2 | c2 >> 4); // c3[5:0] c2[5:4]
        assert_eq!(out, [0x81, 0x38, 0xFF]);
        for (i, c) in [c0, c1, c2, c3].into_iter().enumerate() {
            assert_eq!(code_at(&out, 6, i), c);
        }
    }

    #[test]
    fn fp6_words_match_byte_packing() {
        let codes: [u8; 16] = core::array::from_fn(|i| (i as u8 * 7 + 3) & 0x3F);
        let mut bytes = [0u8; 12];
        pack_codes(6, &codes, &mut bytes);
        let words = pack_fp6_words(codes);
        for (k, word) in words.iter().enumerate() {
            let b = &bytes[4 * k..4 * k + 4];
            assert_eq!(*word, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        assert_eq!(unpack_fp6_words(words), codes);
        let mut back = [0u8; 16];
        unpack_codes(6, &bytes, &mut back);
        assert_eq!(back, codes);
    }

    #[test]
    fn packed_lengths() {
        assert_eq!(packed_len(4, 32), 16);
        assert_eq!(packed_len(6, 32), 24);
        assert_eq!(packed_len(8, 32), 32);
        assert_eq!(packed_len(4, 3), 2);
        assert_eq!(packed_len(6, 5), 4);
    }
}
