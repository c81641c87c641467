//! Reference for `gather_b32` and `gather_b16`: rows of a table copied by index, bit for bit,
//! with a zero row (all bits clear) for an index at or beyond the table's end.

/// `out[i] = table[indices[i]]` for a row-major `[vocab, dim]` table (`vocab = table.len() /
/// dim`); rows of out-of-range indices are `T::default()` (zero bits for the integer types the
/// kernels are launched with).
pub fn gather<T: Copy + Default>(table: &[T], indices: &[u32], dim: usize) -> Vec<T> {
    let vocab = table.len().checked_div(dim).unwrap_or(0);
    let mut out = Vec::with_capacity(indices.len() * dim);
    for &index in indices {
        let index = index as usize;
        if index < vocab {
            out.extend_from_slice(&table[index * dim..(index + 1) * dim]);
        } else {
            out.extend(std::iter::repeat_n(T::default(), dim));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_indices_and_bad_ones_are_zero() {
        let table: Vec<u32> = (0..12).collect();
        let out = gather(&table, &[2, 0, 3, 9, 2], 3);
        assert_eq!(out, [6, 7, 8, 0, 1, 2, 9, 10, 11, 0, 0, 0, 6, 7, 8]);
        assert!(gather::<u16>(&[], &[0, 1], 0).is_empty());
    }
}
