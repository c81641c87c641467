//! Reference for `transpose_b32` and `transpose_b16`: `dst[c][r] = src[r][c]`, bit for bit.

/// The `[cols, rows]` transpose of the row-major `[rows, cols]` matrix `src`.
pub fn transpose<T: Copy>(src: &[T], rows: usize, cols: usize) -> Vec<T> {
    assert_eq!(src.len(), rows * cols, "src holds rows * cols elements");
    (0..cols)
        .flat_map(|c| (0..rows).map(move |r| src[r * cols + c]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_columns() {
        assert_eq!(transpose(&[1, 2, 3, 4, 5, 6], 2, 3), [1, 4, 2, 5, 3, 6]);
        assert_eq!(transpose(&[7u16; 0], 0, 5), [0u16; 0]);
        let m: Vec<u32> = (0..35).collect();
        assert_eq!(transpose(&transpose(&m, 5, 7), 7, 5), m);
    }
}
