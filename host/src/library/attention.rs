//! Attention (`device/kernels/src/attention*.rs`): `O = softmax(scale * Q K^T + mask) V` per
//! head, f16 or bf16 in and out, f32 arithmetic with an online softmax (flash attention's
//! forward pass).
//!
//! Tensors are row-major and contiguous: `Q` and `O` `[batch, heads_q, seq_q, head_dim]`, `K`
//! and `V` `[batch, heads_kv, seq_kv, head_dim]`, `head_dim` 64 or 128, `heads_q` a multiple of
//! `heads_kv` (grouped queries: query head `h` reads KV head `h / (heads_q / heads_kv)`).
//!
//! Causal masking is aligned to the bottom right: query `i` sees keys `j <= i + seq_kv - seq_q`
//! (the last query sees every key). A query that sees no key (causal with `seq_q > seq_kv`, or
//! `seq_kv = 0`) gets a zero row. The scale defaults to `1 / sqrt(head_dim)`.
//!
//! Kernels ([`AttentionKernel`], [`AttentionPath`]):
//! - the matrix-core kernels: on CDNA (gfx90a, gfx942, gfx950) `v_mfma_f32_16x16x16_*`, on RDNA
//!   (gfx1100, gfx1201, wave32 and wave64) `v_wmma_f32_16x16x16_*`; they round the
//!   probabilities to the input type before multiplying them by `V`;
//! - the scalar kernel, every gfx (RDNA's path, and forced with [`AttentionKernel::Scalar`]),
//!   probabilities in f32;
//! - the decode kernels for `seq_q = 1`: the KV sequence is split across workgroups, each
//!   writing an unnormalized partial result to an f32 workspace allocated for the call (and
//!   freed before it returns, which waits for the launches), and a second kernel combines the
//!   splits. [`AttentionKernel::Auto`] takes it when `seq_q = 1` and the split gives more than
//!   one workgroup per (batch, KV head).
//!
//! Checks: `head_dim` 64 or 128, `heads_kv > 0` dividing `heads_q`, every buffer at least its
//! tensor's size, `seq * head_dim` below 2^32 per head, `heads_q` and `batch` at most 65535 (grid
//! dimensions). Nothing runs when `O` is empty.

use iron_intrinsics::launch::KernelDecl;
use iron_kernels::attention::{
    self as kernels, FLAG_CAUSAL, SCALAR_ROWS_PER_WAVE, SCALAR_WAVES, decode_partial_len,
    scalar_lds_bytes,
};
use iron_kernels::attention_mfma::{
    self as mfma_kernels, MFMA_BLOCK_ROWS, MFMA_THREADS, mfma_lds_bytes,
};
use iron_kernels::attention_wmma::{
    self as wmma_kernels, WMMA_BLOCK_ROWS, WMMA_WAVES, wmma_lds_bytes,
};

use super::Library;
use super::dtype::{Float, bf16, f16};
use super::error::LibraryError;
use super::geometry::{check_holds, to_u32};
use crate::device::{DeviceBuffer, Stream};
use crate::launch::LaunchConfig;

/// The sizes of an attention call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttentionShape {
    /// Independent sequences.
    pub batch: usize,
    /// Query (and output) heads.
    pub heads_q: usize,
    /// Key and value heads; divides `heads_q`.
    pub heads_kv: usize,
    /// Query rows per head.
    pub seq_q: usize,
    /// Key and value rows per head.
    pub seq_kv: usize,
    /// Elements per row: 64 or 128.
    pub head_dim: usize,
}

/// Which kernel [`Library::attention`] runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AttentionKernel {
    /// The decode kernels when `seq_q = 1` and the KV split gives several workgroups, else the
    /// matrix-core kernel where the library has one for the gfx, else the scalar kernel.
    #[default]
    Auto,
    /// The scalar kernel, on any gfx.
    Scalar,
    /// The matrix-core kernel (an error where the library has none).
    Matrix,
    /// The decode kernels (`seq_q = 1` only), even with a single split.
    Decode,
}

/// The options of an attention call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AttentionOptions {
    /// Apply the causal mask (aligned to the bottom right).
    pub causal: bool,
    /// The softmax scale; `None` is `1 / sqrt(head_dim)`.
    pub scale: Option<f32>,
    /// The kernel to run.
    pub kernel: AttentionKernel,
    /// Keys per decode workgroup (rounded up to a multiple of the wave size); `None` chooses
    /// from the device's compute units.
    pub decode_split: Option<usize>,
}

/// The kernels a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttentionPath {
    /// `attention_<t>`.
    Scalar,
    /// `attention_mfma_<t>` (CDNA) or `attention_wmma_<t>` (RDNA).
    Matrix,
    /// `attention_decode_<t>` over `splits` workgroups of `split_len` keys per (batch, KV head,
    /// group of query heads), then `attention_combine_<t>`.
    Decode {
        /// KV splits.
        splits: usize,
        /// Keys per split.
        split_len: usize,
    },
}

/// The element types of [`Library::attention`]: [`f16`](struct@f16) and [`bf16`].
pub trait AttentionFloat: Float + sealed::AttentionDecls {}

impl AttentionFloat for f16 {}
impl AttentionFloat for bf16 {}

/// The signature of the forward kernels.
type Forward<T> = fn(*const T, *const T, *const T, *mut T, u32, u32, u32, u32, u32, f32, u32);
/// The signature of the decode kernels.
type Decode<T> = fn(*const T, *const T, *const T, *mut f32, u32, u32, u32, u32, f32, u32);
/// The signature of the combine kernels.
type Combine<T> = fn(*const f32, *mut T, u32, u32, u32);

pub(crate) mod sealed {
    use super::*;

    /// The attention kernels of one element type.
    pub trait AttentionDecls: Sized + 'static {
        /// `attention_<t>`.
        const SCALAR: KernelDecl<Forward<Self>>;
        /// `attention_mfma_<t>` (CDNA).
        const MFMA: KernelDecl<Forward<Self>>;
        /// `attention_wmma_<t>` (RDNA).
        const WMMA: KernelDecl<Forward<Self>>;
        /// `attention_decode_<t>`.
        const DECODE: KernelDecl<Decode<Self>>;
        /// `attention_combine_<t>`.
        const COMBINE: KernelDecl<Combine<Self>>;
    }

    impl AttentionDecls for f16 {
        const SCALAR: KernelDecl<Forward<f16>> = kernels::attention_f16;
        const MFMA: KernelDecl<Forward<f16>> = mfma_kernels::attention_mfma_f16;
        const WMMA: KernelDecl<Forward<f16>> = wmma_kernels::attention_wmma_f16;
        const DECODE: KernelDecl<Decode<f16>> = kernels::attention_decode_f16;
        const COMBINE: KernelDecl<Combine<f16>> = kernels::attention_combine_f16;
    }

    impl AttentionDecls for bf16 {
        const SCALAR: KernelDecl<Forward<bf16>> = kernels::attention_bf16;
        const MFMA: KernelDecl<Forward<bf16>> = mfma_kernels::attention_mfma_bf16;
        const WMMA: KernelDecl<Forward<bf16>> = wmma_kernels::attention_wmma_bf16;
        const DECODE: KernelDecl<Decode<bf16>> = kernels::attention_decode_bf16;
        const COMBINE: KernelDecl<Combine<bf16>> = kernels::attention_combine_bf16;
    }
}

const OP: &str = "attention";

/// Largest grid dimension in y and z (query heads, batch).
const MAX_GRID_YZ: u32 = 65535;

/// Fewest keys per decode split the automatic choice takes.
const MIN_DECODE_SPLIT: usize = 256;

/// Most decode splits the automatic choice makes.
const MAX_DECODE_SPLITS: usize = 64;

/// Decode workgroups the automatic choice aims for per compute unit.
const DECODE_WORKGROUPS_PER_CU: usize = 4;

/// A shape checked against the kernels, as their arguments.
#[derive(Debug, Clone, Copy)]
struct Checked {
    batch: u32,
    heads_q: u32,
    heads_kv: u32,
    seq_q: u32,
    seq_kv: u32,
    head_dim: u32,
    /// Elements of Q and O.
    q_len: usize,
    /// Elements of K and V.
    kv_len: usize,
}

/// `a * b * c * d`, or an error naming `what` when it overflows.
fn product(what: &'static str, factors: [usize; 4]) -> Result<usize, LibraryError> {
    factors
        .iter()
        .try_fold(1usize, |p, &f| p.checked_mul(f))
        .ok_or_else(|| LibraryError::ShapeOverflow {
            operation: OP,
            shape: what,
            value: factors.map(|f| f.to_string()).join(" * "),
        })
}

/// A shape error with `detail`.
fn bad_shape(detail: String) -> LibraryError {
    LibraryError::BadShape {
        operation: OP,
        detail,
    }
}

/// Checks `shape` against the kernels' limits.
fn check_shape(shape: &AttentionShape) -> Result<Checked, LibraryError> {
    let AttentionShape {
        batch,
        heads_q,
        heads_kv,
        seq_q,
        seq_kv,
        head_dim,
    } = *shape;
    if head_dim != 64 && head_dim != 128 {
        return Err(bad_shape(format!("head_dim = {head_dim} is not 64 or 128")));
    }
    if heads_kv == 0 || !heads_q.is_multiple_of(heads_kv) {
        return Err(bad_shape(format!(
            "heads_q = {heads_q} is not a multiple of heads_kv = {heads_kv}"
        )));
    }
    let q_len = product(
        "batch * heads_q * seq_q * head_dim",
        [batch, heads_q, seq_q, head_dim],
    )?;
    let kv_len = product(
        "batch * heads_kv * seq_kv * head_dim",
        [batch, heads_kv, seq_kv, head_dim],
    )?;
    let per_head = seq_q.max(seq_kv).saturating_mul(head_dim);
    to_u32(OP, "seq * head_dim (elements per head)", per_head, u32::MAX)?;
    Ok(Checked {
        batch: to_u32(OP, "batch", batch, MAX_GRID_YZ)?,
        heads_q: to_u32(OP, "heads_q", heads_q, MAX_GRID_YZ)?,
        heads_kv: heads_kv as u32,
        seq_q: seq_q as u32,
        seq_kv: seq_kv as u32,
        head_dim: head_dim as u32,
        q_len,
        kv_len,
    })
}

/// The matrix cores of a gfx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatrixCores {
    /// CDNA's MFMAs.
    Mfma,
    /// RDNA's WMMAs.
    Wmma,
}

/// The matrix cores of `processor`, if it has any.
fn matrix_cores(processor: &str) -> Option<MatrixCores> {
    match processor {
        "gfx90a" | "gfx942" | "gfx950" => Some(MatrixCores::Mfma),
        "gfx1100" | "gfx1201" => Some(MatrixCores::Wmma),
        _ => None,
    }
}

impl Library {
    /// The wave size of the library's code object.
    fn attention_wave(&self) -> u32 {
        self.module()
            .code_object()
            .kernels()
            .first()
            .map_or(64, |k| k.metadata().wavefront_size.max(1))
    }

    /// The matrix cores whose attention kernels this library's code object holds.
    fn attention_matrix_cores(&self) -> Option<MatrixCores> {
        let processor = &self.module().code_object().target().processor;
        let name = match matrix_cores(processor)? {
            MatrixCores::Mfma => mfma_kernels::attention_mfma_f16.name,
            MatrixCores::Wmma => wmma_kernels::attention_wmma_f16.name,
        };
        self.module()
            .kernel_by_name(name)
            .is_ok()
            .then(|| matrix_cores(processor))
            .flatten()
    }

    /// The decode split of `shape`: keys per split (a multiple of the wave size) and splits.
    fn decode_split(&self, shape: &AttentionShape, options: &AttentionOptions) -> (usize, usize) {
        let wave = self.attention_wave() as usize;
        let split_len = match options.decode_split {
            Some(keys) => keys.max(1),
            None => {
                let group = shape.heads_q / shape.heads_kv.max(1);
                let blocks = shape
                    .batch
                    .saturating_mul(shape.heads_kv)
                    .saturating_mul(group.div_ceil(SCALAR_ROWS_PER_WAVE as usize))
                    .max(1);
                let target = (self.device().properties().compute_units as usize)
                    .max(1)
                    .saturating_mul(DECODE_WORKGROUPS_PER_CU);
                let splits = target.div_ceil(blocks).clamp(1, MAX_DECODE_SPLITS);
                shape.seq_kv.div_ceil(splits).max(MIN_DECODE_SPLIT)
            }
        };
        let split_len = split_len.next_multiple_of(wave);
        (split_len, shape.seq_kv.div_ceil(split_len).max(1))
    }

    /// The kernels [`Library::attention`] runs for `shape` and `options` on this library's gfx,
    /// after checking the shape; an error when the options ask for a kernel the shape or the gfx
    /// does not have.
    pub fn attention_path(
        &self,
        shape: &AttentionShape,
        options: &AttentionOptions,
    ) -> Result<AttentionPath, LibraryError> {
        check_shape(shape)?;
        let processor = &self.module().code_object().target().processor;
        let matrix = self.attention_matrix_cores().is_some();
        let decode = |(split_len, splits)| AttentionPath::Decode { splits, split_len };
        Ok(match options.kernel {
            AttentionKernel::Scalar => AttentionPath::Scalar,
            AttentionKernel::Matrix if matrix => AttentionPath::Matrix,
            AttentionKernel::Matrix => {
                return Err(bad_shape(format!(
                    "this library's code object ({processor}) holds no matrix-core attention kernel"
                )));
            }
            AttentionKernel::Decode if shape.seq_q == 1 => {
                decode(self.decode_split(shape, options))
            }
            AttentionKernel::Decode => {
                return Err(bad_shape(format!(
                    "the decode kernels take seq_q = 1, not {}",
                    shape.seq_q
                )));
            }
            AttentionKernel::Auto => {
                let (split_len, splits) = self.decode_split(shape, options);
                if shape.seq_q == 1 && splits > 1 {
                    decode((split_len, splits))
                } else if matrix {
                    AttentionPath::Matrix
                } else {
                    AttentionPath::Scalar
                }
            }
        })
    }

    /// `O = softmax(scale * Q K^T + mask) V` for every batch entry and query head (see the
    /// module docs for the layouts, the mask and the kernels); returns the path taken.
    #[allow(
        clippy::too_many_arguments,
        reason = "the tensors, the shape and the options"
    )]
    pub fn attention<T: AttentionFloat>(
        &self,
        stream: &Stream,
        q: &DeviceBuffer<T>,
        k: &DeviceBuffer<T>,
        v: &DeviceBuffer<T>,
        o: &mut DeviceBuffer<T>,
        shape: &AttentionShape,
        options: &AttentionOptions,
    ) -> Result<AttentionPath, LibraryError> {
        let checked = check_shape(shape)?;
        check_holds(
            OP,
            "q",
            q,
            "batch * heads_q * seq_q * head_dim",
            checked.q_len,
        )?;
        check_holds(
            OP,
            "k",
            k,
            "batch * heads_kv * seq_kv * head_dim",
            checked.kv_len,
        )?;
        check_holds(
            OP,
            "v",
            v,
            "batch * heads_kv * seq_kv * head_dim",
            checked.kv_len,
        )?;
        check_holds(
            OP,
            "o",
            o,
            "batch * heads_q * seq_q * head_dim",
            checked.q_len,
        )?;
        let path = self.attention_path(shape, options)?;
        if checked.q_len == 0 {
            return Ok(path);
        }
        let scale = options
            .scale
            .unwrap_or(1.0 / (shape.head_dim as f32).sqrt());
        let flags = if options.causal { FLAG_CAUSAL } else { 0 };
        let c = checked;
        let args = (
            c.heads_q, c.heads_kv, c.seq_q, c.seq_kv, c.head_dim, scale, flags,
        );
        match path {
            AttentionPath::Scalar | AttentionPath::Matrix => {
                let (decl, config) = if path == AttentionPath::Scalar {
                    let wave = self.attention_wave();
                    let rows = SCALAR_WAVES * SCALAR_ROWS_PER_WAVE;
                    let config = LaunchConfig::new(
                        [c.seq_q.div_ceil(rows), c.heads_q, c.batch],
                        [SCALAR_WAVES * wave, 1, 1],
                    )
                    .with_dynamic_lds(scalar_lds_bytes(
                        c.head_dim,
                        wave,
                        SCALAR_WAVES,
                    ));
                    (T::SCALAR, config)
                } else if self.attention_matrix_cores() == Some(MatrixCores::Wmma) {
                    let wave = self.attention_wave();
                    let config = LaunchConfig::new(
                        [c.seq_q.div_ceil(WMMA_BLOCK_ROWS), c.heads_q, c.batch],
                        [WMMA_WAVES * wave, 1, 1],
                    )
                    .with_dynamic_lds(wmma_lds_bytes(c.head_dim));
                    (T::WMMA, config)
                } else {
                    let config = LaunchConfig::new(
                        [c.seq_q.div_ceil(MFMA_BLOCK_ROWS), c.heads_q, c.batch],
                        [MFMA_THREADS, 1, 1],
                    )
                    .with_dynamic_lds(mfma_lds_bytes(c.head_dim));
                    (T::MFMA, config)
                };
                let kernel = self.module().kernel(decl)?;
                let (heads_q, heads_kv, seq_q, seq_kv, head_dim, scale, flags) = args;
                // SAFETY: the forward kernels read Q, K and V and write O within the tensors of
                // the checked shape (each buffer holds them, 16-byte aligned, O distinct from
                // the inputs); the grid covers (query blocks, heads_q, batch) with the block
                // size, whole waves, and the dynamic LDS their module documents.
                unsafe {
                    stream.launch(
                        &kernel,
                        config,
                        (
                            q, k, v, o, heads_q, heads_kv, seq_q, seq_kv, head_dim, scale, flags,
                        ),
                    )?
                };
            }
            AttentionPath::Decode { splits, split_len } => {
                self.attention_decode(stream, (q, k, v, o), &c, scale, (splits, split_len))?;
            }
        }
        Ok(path)
    }

    /// The decode path: the split kernel into a workspace, then the combine kernel.
    fn attention_decode<T: AttentionFloat>(
        &self,
        stream: &Stream,
        (q, k, v, o): (
            &DeviceBuffer<T>,
            &DeviceBuffer<T>,
            &DeviceBuffer<T>,
            &mut DeviceBuffer<T>,
        ),
        c: &Checked,
        scale: f32,
        (splits, split_len): (usize, usize),
    ) -> Result<(), LibraryError> {
        let wave = self.attention_wave();
        let rows = c.batch as usize * c.heads_q as usize;
        let group = c.heads_q / c.heads_kv;
        let blocks = c.heads_kv * group.div_ceil(SCALAR_ROWS_PER_WAVE);
        let config = LaunchConfig::new(
            [
                to_u32(OP, "decode splits", splits, u32::MAX)?,
                to_u32(OP, "decode workgroups in y", blocks as usize, MAX_GRID_YZ)?,
                c.batch,
            ],
            [wave, 1, 1],
        )
        .with_dynamic_lds(scalar_lds_bytes(c.head_dim, wave, 1));
        let split_len = to_u32(OP, "decode split", split_len, u32::MAX)?;
        let mut partial = DeviceBuffer::<f32>::alloc(
            self.device(),
            decode_partial_len(rows, splits, c.head_dim as usize),
        )?;
        let decode = self.module().kernel(T::DECODE)?;
        let combine = self.module().kernel(T::COMBINE)?;
        // SAFETY: attention_decode_<t> reads Q (seq_q = 1), K and V within the checked shape and
        // writes the partial buffer's rows * splits slots, which it holds; one wave per
        // workgroup with the grid (splits, heads_kv * query-head blocks, batch) and the dynamic
        // LDS its module documents.
        unsafe {
            stream.launch(
                &decode,
                config,
                (
                    q,
                    k,
                    v,
                    &mut partial,
                    c.heads_q,
                    c.heads_kv,
                    c.seq_kv,
                    c.head_dim,
                    scale,
                    split_len,
                ),
            )?
        };
        let rows_u32 = to_u32(OP, "batch * heads_q", rows, u32::MAX)?;
        let splits = splits as u32;
        let combine_config = LaunchConfig::new([rows_u32, 1, 1], [self.attention_wave(), 1, 1]);
        // SAFETY: attention_combine_<t> reads the partial buffer written above and writes O's
        // rows * head_dim elements (O holds them); one workgroup of one wave per row.
        unsafe {
            stream.launch(
                &combine,
                combine_config,
                (&partial, o, rows_u32, splits, c.head_dim),
            )?
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(heads_q: usize, heads_kv: usize, head_dim: usize) -> AttentionShape {
        AttentionShape {
            batch: 2,
            heads_q,
            heads_kv,
            seq_q: 10,
            seq_kv: 20,
            head_dim,
        }
    }

    #[test]
    fn shapes_the_kernels_do_not_take_are_errors() {
        assert_eq!(
            check_shape(&shape(4, 2, 96)).unwrap_err().to_string(),
            "attention: head_dim = 96 is not 64 or 128"
        );
        assert_eq!(
            check_shape(&shape(6, 4, 64)).unwrap_err().to_string(),
            "attention: heads_q = 6 is not a multiple of heads_kv = 4"
        );
        assert!(check_shape(&shape(6, 0, 64)).is_err());
        let checked = check_shape(&shape(8, 2, 128)).unwrap();
        assert_eq!(
            (checked.q_len, checked.kv_len),
            (2 * 8 * 10 * 128, 2 * 2 * 20 * 128)
        );
        let mut huge = shape(4, 4, 64);
        huge.seq_kv = 1 << 26;
        assert_eq!(
            check_shape(&huge).unwrap_err().to_string(),
            "attention: seq * head_dim (elements per head) = 4294967296 exceeds the kernel's limit of 4294967295"
        );
        huge.seq_kv = usize::MAX / 2;
        assert!(matches!(
            check_shape(&huge),
            Err(LibraryError::ShapeOverflow { .. })
        ));
        let mut wide = shape(70_000, 1, 64);
        wide.seq_q = 1;
        assert!(check_shape(&wide).is_err());
    }

    #[test]
    fn matrix_cores_by_family() {
        for gfx in ["gfx90a", "gfx942", "gfx950"] {
            assert_eq!(matrix_cores(gfx), Some(MatrixCores::Mfma));
        }
        for gfx in ["gfx1100", "gfx1201"] {
            assert_eq!(matrix_cores(gfx), Some(MatrixCores::Wmma));
        }
        assert_eq!(matrix_cores("gfx1030"), None);
    }
}
