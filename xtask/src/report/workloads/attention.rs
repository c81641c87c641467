//! Attention: every kernel of the gfx forced once through [`AttentionOptions::kernel`], f16 and
//! bf16, with grouped queries (4 query heads per KV head) and head_dim 128.
//!
//! - prefill (scalar and matrix-core kernels): causal, as many query rows as keys;
//! - decode (one query row, the split-KV kernel and its combine kernel): a long KV sequence cut
//!   into splits of 256 keys, what the library picks on any device of 32 compute units or more
//!   at this shape (the emulator reports one compute unit, which would give a single split).

use super::{Demand, Family, Math, Runner, Sample};
use iron::library::{
    AttentionFloat, AttentionKernel, AttentionOptions, AttentionPath, AttentionShape, bf16, f16,
};

/// Query heads.
const HEADS_Q: usize = 8;
/// KV heads: 4 query heads share each.
const HEADS_KV: usize = 2;
/// Elements per head row.
const HEAD_DIM: usize = 128;
/// Query rows and keys of the prefill runs.
const PREFILL_SEQ: usize = 256;
/// Query heads of the decode runs: a 4096-wide model.
const DECODE_HEADS_Q: usize = 32;
/// KV heads of the decode runs.
const DECODE_HEADS_KV: usize = 8;
/// Keys of the decode runs.
const DECODE_SEQ: usize = 2048;
/// Keys per decode split.
const DECODE_SPLIT: usize = 256;

/// Runs every attention kernel in f16 and bf16.
pub fn run(r: &mut Runner<'_>) {
    per_type::<f16>(r);
    per_type::<bf16>(r);
}

fn per_type<T: AttentionFloat + Sample>(r: &mut Runner<'_>) {
    let seq = r.size.scale(PREFILL_SEQ, 64);
    let prefill = AttentionShape {
        batch: 1,
        heads_q: HEADS_Q,
        heads_kv: HEADS_KV,
        seq_q: seq,
        seq_kv: seq,
        head_dim: HEAD_DIM,
    };
    prefill_run::<T>(r, prefill, AttentionKernel::Scalar);
    prefill_run::<T>(r, prefill, AttentionKernel::Matrix);
    let decode = AttentionShape {
        heads_q: DECODE_HEADS_Q,
        heads_kv: DECODE_HEADS_KV,
        seq_q: 1,
        seq_kv: r.size.scale(DECODE_SEQ, 2 * DECODE_SPLIT),
        ..prefill
    };
    decode_run::<T>(r, decode);
}

/// Query-key pairs the mask lets through: every pair, or under the causal mask (aligned to the
/// bottom right) `min(seq_kv, i + 1 + seq_kv - seq_q)` keys for query `i`, per query head.
fn visible_pairs(shape: &AttentionShape, causal: bool) -> u64 {
    let (sq, skv) = (shape.seq_q as u64, shape.seq_kv as u64);
    let per_head = if causal {
        (0..sq)
            .map(|i| (i + 1 + skv).saturating_sub(sq).min(skv))
            .sum()
    } else {
        sq * skv
    };
    (shape.batch * shape.heads_q) as u64 * per_head
}

/// What attention over `shape` needs at least: Q, K and V read once, O written once; 4 FLOPs
/// per visible (query, key) pair and head element (`q . k` and `p v`, 2 each), so a causal run
/// counts the pairs its mask lets through (about half). Elements are those pairs.
fn demand<T: Sample>(label: String, shape: &AttentionShape, causal: bool, math: Math) -> Demand {
    let q = (shape.batch * shape.heads_q * shape.seq_q * shape.head_dim) as u64;
    let kv = (shape.batch * shape.heads_kv * shape.seq_kv * shape.head_dim) as u64;
    let pairs = visible_pairs(shape, causal);
    Demand {
        label,
        min_bytes: T::SIZE * (2 * q + 2 * kv),
        flops: 4 * pairs * shape.head_dim as u64,
        elements: pairs,
        math,
    }
}

fn shape_label(s: &AttentionShape) -> String {
    format!(
        "{}x{}/{}x{}x{}x{}",
        s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim
    )
}

/// A causal prefill on the scalar or the matrix-core kernel (a failure where the gfx has none).
fn prefill_run<T: AttentionFloat + Sample>(
    r: &mut Runner<'_>,
    shape: AttentionShape,
    kernel: AttentionKernel,
) {
    let options = AttentionOptions {
        causal: true,
        kernel,
        ..AttentionOptions::default()
    };
    r.measure(Family::Attention, |r| {
        let q = r.device_floats_tiled::<T>(shape.batch * shape.heads_q * shape.seq_q * HEAD_DIM)?;
        let k =
            r.device_floats_tiled::<T>(shape.batch * shape.heads_kv * shape.seq_kv * HEAD_DIM)?;
        let v =
            r.device_floats_tiled::<T>(shape.batch * shape.heads_kv * shape.seq_kv * HEAD_DIM)?;
        let mut o = r.zeros::<T>(q.len())?;
        let path = r
            .library
            .attention(&r.stream, &q, &k, &v, &mut o, &shape, &options)?;
        let math = match path {
            AttentionPath::Matrix => Math::Matrix16,
            _ => Math::Vector,
        };
        let label = format!(
            "attention {path:?} causal {} {}",
            T::TYPE_NAME,
            shape_label(&shape)
        );
        Ok(demand::<T>(label, &shape, true, math))
    });
}

/// One-token decode: the split kernel judged on the whole operation (its partial results
/// written and read back included), the combine kernel on its own dispatch.
fn decode_run<T: AttentionFloat + Sample>(r: &mut Runner<'_>, shape: AttentionShape) {
    let options = AttentionOptions {
        kernel: AttentionKernel::Decode,
        decode_split: Some(DECODE_SPLIT),
        ..AttentionOptions::default()
    };
    r.measure_stages(Family::AttentionDecode, |r| {
        let q = r.device_floats::<T>(shape.batch * shape.heads_q * HEAD_DIM)?;
        let k =
            r.device_floats_tiled::<T>(shape.batch * shape.heads_kv * shape.seq_kv * HEAD_DIM)?;
        let v =
            r.device_floats_tiled::<T>(shape.batch * shape.heads_kv * shape.seq_kv * HEAD_DIM)?;
        let mut o = r.zeros::<T>(q.len())?;
        let path = r
            .library
            .attention(&r.stream, &q, &k, &v, &mut o, &shape, &options)?;
        let AttentionPath::Decode { splits, .. } = path else {
            anyhow::bail!("attention decode took the {path:?} path");
        };
        let t = T::TYPE_NAME;
        let label = format!(
            "attention decode {t} {} splits={splits}",
            shape_label(&shape)
        );
        let op = demand::<T>(label, &shape, false, Math::Vector);
        // The combine reads each row's partial output and (max, sum) per split, in f32.
        let rows = (shape.batch * shape.heads_q) as u64;
        let partials = 4 * rows * splits as u64 * (HEAD_DIM as u64 + 2);
        let outputs = rows * HEAD_DIM as u64;
        let combine = Demand {
            label: format!("attention combine {t} rows={rows} splits={splits}"),
            min_bytes: partials + T::SIZE * outputs,
            flops: 2 * outputs * splits as u64,
            elements: outputs,
            math: Math::Vector,
        };
        Ok((op, vec![(Family::AttentionDecode, combine)]))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the pairs by testing the mask's definition on every (query, key).
    fn brute(shape: &AttentionShape, causal: bool) -> u64 {
        let (sq, skv) = (shape.seq_q as i64, shape.seq_kv as i64);
        let mut n = 0;
        for i in 0..sq {
            for j in 0..skv {
                if !causal || j <= i + skv - sq {
                    n += 1;
                }
            }
        }
        n * (shape.batch * shape.heads_q) as u64
    }

    #[test]
    fn visible_pairs_follow_the_bottom_right_causal_mask() {
        for (sq, skv) in [(1, 1), (5, 5), (3, 9), (9, 3), (1, 40), (17, 0), (0, 4)] {
            let shape = AttentionShape {
                batch: 2,
                heads_q: 3,
                heads_kv: 1,
                seq_q: sq,
                seq_kv: skv,
                head_dim: 64,
            };
            for causal in [false, true] {
                assert_eq!(
                    visible_pairs(&shape, causal),
                    brute(&shape, causal),
                    "{sq}x{skv} causal={causal}"
                );
            }
        }
    }
}
