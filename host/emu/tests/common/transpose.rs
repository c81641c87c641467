//! A host model of gfx950's transposing LDS loads (`ds_read_b64_tr_b{4,8,16}`,
//! `ds_read_b96_tr_b6`), written from AMD's description (CDNA4 ISA, "MFMA Transpose Load from
//! LDS"; the ROCm CDNA4 transpose-load intrinsics reference): the lanes of each group of 16 read
//! 64 (96) bits each, a matrix of 4-, 6-, 8- or 16-bit elements that the load transposes.

/// One of gfx950's transposing LDS loads: mnemonic, bytes a lane reads, element width in bits.
pub const TRANSPOSE_LOADS: [(&str, usize, usize); 4] = [
    ("ds_read_b64_tr_b4", 8, 4),
    ("ds_read_b64_tr_b8", 8, 8),
    ("ds_read_b64_tr_b16", 8, 16),
    ("ds_read_b96_tr_b6", 12, 6),
];

/// The guide's description of a transposing load, per group of 16 lanes, as a host model:
/// `read[s]` is what lane `s` of the group read (little-endian), `width` the element width; returns
/// each lane's result. b16: the lanes read a 4 x 16 tile (row `k` is lanes `4k..4k+3` side by side)
/// and lane `l` receives column `l`. b8: lanes `2i + h` hold row `i` of 8 x 8 byte matrix `h`, and
/// lane `8h + j` receives its column `j`. b4 and b6: lane `s` holds row `s` of a 16 x 16 matrix,
/// and lane `l` receives column `l`.
pub fn transposed_by_the_guide(read: &[u128], width: usize) -> Vec<u128> {
    let element = |v: u128, k: usize| v >> (width * k) & ((1u128 << width) - 1);
    let column = |rows: &[Vec<u128>], c: usize| {
        rows.iter()
            .enumerate()
            .fold(0u128, |v, (r, row)| v | row[c] << (width * r))
    };
    match width {
        16 => {
            let tile: Vec<Vec<u128>> = (0..4)
                .map(|k| {
                    (0..16)
                        .map(|c| element(read[4 * k + c / 4], c % 4))
                        .collect()
                })
                .collect();
            (0..16).map(|l| column(&tile, l)).collect()
        }
        8 => {
            let matrix = |h: usize| -> Vec<Vec<u128>> {
                (0..8)
                    .map(|i| (0..8).map(|j| element(read[2 * i + h], j)).collect())
                    .collect()
            };
            let halves = [matrix(0), matrix(1)];
            (0..16).map(|l| column(&halves[l / 8], l % 8)).collect()
        }
        _ => {
            let rows: Vec<Vec<u128>> = (0..16)
                .map(|s| (0..16).map(|e| element(read[s], e)).collect())
                .collect();
            (0..16).map(|l| column(&rows, l)).collect()
        }
    }
}

/// What a wave's transposing load returns per lane: lane `l` reads `bytes` of `lds` at
/// `addresses[l]`, and each group of 16 lanes exchanges elements of `width` bits.
pub fn transposed_wave(lds: &[u8], addresses: &[usize], bytes: usize, width: usize) -> Vec<u128> {
    let read: Vec<u128> = addresses
        .iter()
        .map(|&at| {
            let mut b = [0u8; 16];
            b[..bytes].copy_from_slice(&lds[at..at + bytes]);
            u128::from_le_bytes(b)
        })
        .collect();
    read.chunks(16)
        .flat_map(|group| transposed_by_the_guide(group, width))
        .collect()
}
