//! Rotary position embedding (`device/kernels/src/rope.rs`), in place on
//! `x: [tokens, heads, head_dim]` with one u32 position per token, in the GPT-NeoX (split halves)
//! or GPT-J (interleaved pairs) convention; sines and cosines computed on the device in f32.

use iron_intrinsics::launch::KernelDecl;
use iron_kernels::rope;

use super::Library;
use super::dtype::{Float, bf16, f16};
use super::error::LibraryError;
use super::geometry::{check_holds, elements_of, streaming, to_u32};
use crate::device::{DeviceBuffer, DeviceError, Module, Stream, TypedKernel};

/// Which elements of a head form the rotated pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RopeStyle {
    /// GPT-NeoX (and Llama's Hugging Face layout): element `j` with `j + rotary_dim / 2`.
    NeoX,
    /// GPT-J: element `2j` with `2j + 1`.
    GptJ,
}

/// The shape of a RoPE tensor and the part of each head that rotates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RopeShape {
    /// Tokens (one position each).
    pub tokens: usize,
    /// Heads per token.
    pub heads: usize,
    /// Elements per head.
    pub head_dim: usize,
    /// Rotated elements per head: even, at most `head_dim` (the rest is left as it is).
    pub rotary_dim: usize,
}

/// The signature of a RoPE kernel over `T`.
type Rope<T> = fn(*mut T, *const u32, u32, u32, u32, u32, f32, u32);

/// The two RoPE kernels of one element type.
pub struct RopeKernels<T> {
    neox: TypedKernel<Rope<T>>,
    gptj: TypedKernel<Rope<T>>,
}

impl<T: RopeFloat> RopeKernels<T> {
    /// Resolves the RoPE kernels of `T` in `module`.
    pub(crate) fn resolve(module: &Module) -> Result<RopeKernels<T>, DeviceError> {
        Ok(RopeKernels {
            neox: module.kernel(T::NEOX)?,
            gptj: module.kernel(T::GPTJ)?,
        })
    }
}

/// A float type with RoPE kernels: f32, f16, bf16.
pub trait RopeFloat: Float + sealed::RopeDecls {}

impl RopeFloat for f32 {}
impl RopeFloat for f16 {}
impl RopeFloat for bf16 {}

pub(crate) mod sealed {
    use super::*;

    /// Where the RoPE kernels of a type are.
    pub trait RopeDecls: Sized + 'static {
        /// The NeoX kernel.
        const NEOX: KernelDecl<Rope<Self>>;
        /// The GPT-J kernel.
        const GPTJ: KernelDecl<Rope<Self>>;
        /// The resolved kernels in `library`.
        fn rope_kernels(library: &Library) -> &RopeKernels<Self>;
    }

    impl RopeDecls for f32 {
        const NEOX: KernelDecl<Rope<f32>> = rope::rope_neox_f32;
        const GPTJ: KernelDecl<Rope<f32>> = rope::rope_gptj_f32;
        fn rope_kernels(library: &Library) -> &RopeKernels<f32> {
            &library.kernels.rope_f32
        }
    }

    impl RopeDecls for f16 {
        const NEOX: KernelDecl<Rope<f16>> = rope::rope_neox_f16;
        const GPTJ: KernelDecl<Rope<f16>> = rope::rope_gptj_f16;
        fn rope_kernels(library: &Library) -> &RopeKernels<f16> {
            &library.kernels.rope_f16
        }
    }

    impl RopeDecls for bf16 {
        const NEOX: KernelDecl<Rope<bf16>> = rope::rope_neox_bf16;
        const GPTJ: KernelDecl<Rope<bf16>> = rope::rope_gptj_bf16;
        fn rope_kernels(library: &Library) -> &RopeKernels<bf16> {
            &library.kernels.rope_bf16
        }
    }
}

/// Waves per compute unit (CDNA) or WGP (RDNA) a RoPE launch aims for when it deals heads to
/// groups: 8 per SIMD, enough reads in flight to cover memory latency. Fewer groups would leave
/// the device idle while each work-item walks its heads one by one; more would repeat the sines
/// and cosines without hiding any more latency. Modelled on 256 tokens of 32 heads: MI300X and
/// MI350X are fastest at one head per group (2.4 and 2.1 us, against 3.2 and 2.8 at two), the
/// RX 7900 XTX and RX 9070 XT as fast or faster at two (5.73 against 5.74 us, 8.27 against 8.87)
/// in 55% of the instructions.
const ROPE_WAVES_PER_CU: usize = 32;

/// The kernel's work-items per head group: one per token and chunk of pairs (16 bytes of
/// elements when the head allows, else one pair), as the kernel splits the work.
fn rope_work_items(shape: RopeShape, style: RopeStyle, pack: usize) -> usize {
    let half = shape.rotary_dim / 2;
    let span = match style {
        RopeStyle::NeoX => half,
        RopeStyle::GptJ => shape.rotary_dim,
    };
    let wide = shape.head_dim.is_multiple_of(pack) && span.is_multiple_of(pack);
    let pairs_per_chunk = match (wide, style) {
        (false, _) => 1,
        (true, RopeStyle::NeoX) => pack,
        (true, RopeStyle::GptJ) => pack / 2,
    };
    shape.tokens.saturating_mul(half / pairs_per_chunk)
}

/// The head groups a RoPE launch deals each token's heads to, given `per_group` work-items per
/// group: enough for [`ROPE_WAVES_PER_CU`] waves of `wave_size` per compute unit, at most one
/// per head, no more than the largest group's number of heads needs (groups differ by at most
/// one head), and the work-items below 2^31.
fn head_groups(compute_units: u32, wave_size: u32, per_group: usize, heads: usize) -> usize {
    let per_group = per_group.max(1);
    let target = (compute_units.max(1) as usize)
        .saturating_mul(ROPE_WAVES_PER_CU)
        .saturating_mul(wave_size.max(1) as usize);
    let wanted = target
        .div_ceil(per_group)
        .min((1usize << 31) / per_group)
        .clamp(1, heads.max(1));
    heads.max(1).div_ceil(heads.max(1).div_ceil(wanted))
}

impl Library {
    /// Rotates `x` (`[tokens, heads, head_dim]`) in place: pair `j` of each head of the token at
    /// position `p` turns by `p * theta^(-2j / rotary_dim)`, paired as `style` says; elements
    /// from `rotary_dim` on are left as they are. `theta` (the base, e.g. 10000) must be
    /// positive and finite.
    pub fn rope<T: RopeFloat>(
        &self,
        stream: &Stream,
        x: &mut DeviceBuffer<T>,
        positions: &DeviceBuffer<u32>,
        shape: RopeShape,
        theta: f32,
        style: RopeStyle,
    ) -> Result<(), LibraryError> {
        const OP: &str = "rope";
        let RopeShape {
            tokens,
            heads,
            head_dim,
            rotary_dim,
        } = shape;
        if !rotary_dim.is_multiple_of(2) || rotary_dim > head_dim {
            return Err(LibraryError::BadShape {
                operation: OP,
                detail: format!(
                    "rotary_dim = {rotary_dim} must be even and at most head_dim = {head_dim}"
                ),
            });
        }
        if !(theta.is_finite() && theta > 0.0) {
            return Err(LibraryError::BadShape {
                operation: OP,
                detail: format!("theta = {theta} must be positive and finite"),
            });
        }
        let elements = elements_of(OP, elements_of(OP, tokens, heads)?, head_dim)?;
        check_holds(OP, "x", x, "tokens * heads * head_dim", elements)?;
        check_holds(OP, "positions", positions, "tokens", tokens)?;
        let pack = <T as super::dtype::sealed::FloatDecls>::PACK;
        let per_group = rope_work_items(shape, style, pack);
        let device = self.device().properties();
        let groups = head_groups(device.compute_units, device.wave_size, per_group, heads);
        let work = per_group.saturating_mul(groups);
        let config = streaming(device, work);
        let threads = config.grid[0].saturating_mul(config.block[0]);
        to_u32(
            OP,
            "tokens * head groups * chunks",
            work,
            u32::MAX.saturating_sub(threads),
        )?;
        let args = (
            to_u32(OP, "tokens", tokens, u32::MAX)?,
            to_u32(OP, "heads", heads, u32::MAX)?,
            to_u32(OP, "head_dim", head_dim, u32::MAX)?,
            to_u32(OP, "rotary_dim", rotary_dim, u32::MAX)?,
            to_u32(OP, "head groups", groups, u32::MAX)?,
        );
        if work == 0 || heads == 0 {
            return Ok(());
        }
        let kernels = T::rope_kernels(self);
        let kernel = match style {
            RopeStyle::NeoX => &kernels.neox,
            RopeStyle::GptJ => &kernels.gptj,
        };
        let (tokens, heads, head_dim, rotary_dim, groups) = args;
        // SAFETY: the kernel updates x[0..tokens * heads * head_dim] and reads
        // positions[0..tokens]; both buffers hold that much and start 16-byte aligned (device
        // allocations do); rotary_dim <= head_dim keeps every pair inside its head. Its work
        // index plus the grid's work-items stays below 2^32, as checked.
        unsafe {
            stream.launch(
                kernel,
                config,
                (
                    x, positions, tokens, heads, head_dim, rotary_dim, theta, groups,
                ),
            )?
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_follows_the_kernels_chunking() {
        let shape = |head_dim, rotary_dim| RopeShape {
            tokens: 3,
            heads: 8,
            head_dim,
            rotary_dim,
        };
        // NeoX f16: 64 pairs of a 128-wide head in chunks of 8.
        assert_eq!(rope_work_items(shape(128, 128), RopeStyle::NeoX, 8), 3 * 8);
        // GPT-J f16: chunks of 8 elements, 4 pairs each.
        assert_eq!(rope_work_items(shape(128, 128), RopeStyle::GptJ, 8), 3 * 16);
        // Heads that do not fill 16-byte chunks: one pair per work-item.
        assert_eq!(rope_work_items(shape(12, 10), RopeStyle::NeoX, 8), 3 * 5);
        assert_eq!(rope_work_items(shape(16, 0), RopeStyle::GptJ, 4), 0);
    }

    #[test]
    fn heads_are_grouped_to_fill_the_device_and_no_further() {
        // 256 tokens x 8 chunks on 304 wave64 compute units: one head per group (32 groups).
        assert_eq!(head_groups(304, 64, 256 * 8, 32), 32);
        // On 48 wave32 WGPs: 24 groups wanted, of up to 2 heads, so 16 of 2 heads.
        assert_eq!(head_groups(48, 32, 256 * 8, 32), 16);
        // 8192 tokens x 8 chunks: 10 groups wanted, of up to 4 heads, so 8 of 4 heads.
        assert_eq!(head_groups(304, 64, 8192 * 8, 32), 8);
        // Enough tokens to fill the device alone: one group of every head.
        assert_eq!(head_groups(304, 64, 1 << 20, 32), 1);
        // 7 heads, 3 groups wanted: groups of 3, 2 and 2 heads.
        assert_eq!(head_groups(4, 64, 2800, 7), 3);
        // No heads or no work: one group.
        assert_eq!(head_groups(304, 64, 2048, 0), 1);
        assert_eq!(head_groups(304, 64, 0, 4), 4);
        // The work-items stay below 2^31.
        assert_eq!(head_groups(u32::MAX, 64, 1 << 30, 64), 2);
    }
}
