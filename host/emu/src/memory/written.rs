//! Which bytes of an allocation have ever been written, one bit per byte: the shadow state of
//! initcheck. The host's writes and the kernels' stores set bits; a new allocation has none, as
//! memory from `hipMalloc` holds whatever was there before.

use std::sync::atomic::{AtomicU64, Ordering};

/// The bits of `len` bytes, none of them written.
pub(super) fn none(len: usize) -> Vec<AtomicU64> {
    (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

/// The words of the bitmap that cover bytes `[off, off + len)`, each with the mask of its bits
/// in the range.
fn spans(off: usize, len: usize) -> impl Iterator<Item = (usize, u64)> {
    let end = off + len;
    (off / 64..end.div_ceil(64)).map(move |w| {
        let lo = off.max(w * 64) - w * 64;
        let hi = end.min(w * 64 + 64) - w * 64;
        let mask = match hi - lo {
            64 => u64::MAX,
            n => ((1u64 << n) - 1) << lo,
        };
        (w, mask)
    })
}

/// Records bytes `[off, off + len)` as written.
pub(super) fn mark(bits: &[AtomicU64], off: usize, len: usize) {
    for (w, mask) in spans(off, len) {
        // Most stores land on bytes written before: a load keeps the line shared between threads.
        if bits[w].load(Ordering::Relaxed) & mask != mask {
            bits[w].fetch_or(mask, Ordering::Relaxed);
        }
    }
}

/// Records bytes `[off, off + len)` as never written.
pub(super) fn forget(bits: &[AtomicU64], off: usize, len: usize) {
    for (w, mask) in spans(off, len) {
        bits[w].fetch_and(!mask, Ordering::Relaxed);
    }
}

/// The offset of the first byte of `[off, off + len)` never written, if there is one.
pub(super) fn first_unwritten(bits: &[AtomicU64], off: usize, len: usize) -> Option<usize> {
    spans(off, len).find_map(|(w, mask)| {
        let missing = !bits[w].load(Ordering::Relaxed) & mask;
        (missing != 0).then(|| w * 64 + missing.trailing_zeros() as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_across_words_are_marked_found_and_forgotten() {
        let bits = none(200);
        assert_eq!(bits.len(), 4);
        assert_eq!(first_unwritten(&bits, 0, 200), Some(0));
        mark(&bits, 3, 130);
        assert_eq!(first_unwritten(&bits, 3, 130), None);
        assert_eq!(first_unwritten(&bits, 2, 2), Some(2));
        assert_eq!(first_unwritten(&bits, 100, 40), Some(133));
        assert_eq!(first_unwritten(&bits, 7, 0), None);
        forget(&bits, 64, 64);
        assert_eq!(first_unwritten(&bits, 3, 130), Some(64));
        assert_eq!(first_unwritten(&bits, 128, 5), None);
        mark(&bits, 0, 200);
        assert_eq!(first_unwritten(&bits, 0, 200), None);
    }
}
