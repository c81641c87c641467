//! The MFMA step of gfx950's hardware-microscaling GEMM: one `v_mfma_scale_f32_16x16x128_f8f6f4`
//! per 16 x 16 tile and 128-element K tile, each lane feeding its block of 32 codes of A and of B
//! with the blocks' E8M0 scale codes, all read from the operands' LDS buffers
//! ([`MxOperand`], rows laid out as [`CodeOperand::offset`] says).

use crate::gemm_stage::{CodeOperand, MxOperand, SCALES_PER_TILE};
use crate::gemm_tile::{Accumulators, Step, each_tile, per_col, per_row, repeats_m, repeats_n};
use iron_intrinsics::id::lane_id;
use iron_intrinsics::matrix::{Fragment, ScaledMma, a_row, b_col, scale_block};

/// The scaled MFMAs of instruction `I` (K = 128) over a staged K tile, A staged with `CHUNKS_A`
/// and B with `CHUNKS_B` chunks per work-item ([`CodeOperand`]).
pub struct ScaledStep<I, const CHUNKS_A: usize, const CHUNKS_B: usize>(
    core::marker::PhantomData<I>,
);

impl<I: ScaledMma, const CHUNKS_A: usize, const CHUNKS_B: usize> Step
    for ScaledStep<I, CHUNKS_A, CHUNKS_B>
{
    type Core = I;

    #[inline(always)]
    unsafe fn step<const B: u32>(
        acc: &mut Accumulators<I>,
        a: *const u8,
        b: *const u8,
        wave_row: u32,
        wave_col: u32,
    ) {
        const {
            assert!(I::K == 32 * SCALES_PER_TILE && I::M == 16 && I::N == 16);
            assert!((repeats_m::<I, B>() as u32 * I::M).is_multiple_of(64));
            assert!((repeats_n::<I, B>() as u32 * I::N).is_multiple_of(64));
            assert!(CodeOperand::<CHUNKS_A>::TILE_BYTES == I::K * I::A_BITS / 8);
            assert!(CodeOperand::<CHUNKS_B>::TILE_BYTES == I::K * I::B_BITS / 8);
            // Every run lies in one unit of the LDS layout.
            assert!(
                CodeOperand::<CHUNKS_A>::UNIT.is_multiple_of(<I::A as Fragment>::BYTES / I::A_RUNS)
            );
            assert!(
                CodeOperand::<CHUNKS_B>::UNIT.is_multiple_of(<I::B as Fragment>::BYTES / I::B_RUNS)
            );
        };
        let lane = lane_id();
        let block = scale_block::<I>(lane);
        let (a_byte, b_byte) = (
            I::a_k(lane, 0) * I::A_BITS / 8,
            I::b_k(lane, 0) * I::B_BITS / 8,
        );
        let a_stride = I::K / I::A_RUNS * I::A_BITS / 8;
        let b_stride = I::K / I::B_RUNS * I::B_BITS / 8;
        // Rows are laid out alike from every multiple of 64 (wave_row and wave_col are), so the
        // lane's offsets within its wave's rows are the same for every wave.
        // SAFETY: the wave's rows and their scale codes lie in the staged buffers.
        let (a_rows, b_rows, a_scales, b_scales) = unsafe {
            (
                a.add((wave_row * CodeOperand::<CHUNKS_A>::PITCH) as usize),
                b.add((wave_col * CodeOperand::<CHUNKS_B>::PITCH) as usize),
                a.add((MxOperand::<CHUNKS_A>::SCALES_AT + wave_row * SCALES_PER_TILE) as usize),
                b.add((MxOperand::<CHUNKS_B>::SCALES_AT + wave_col * SCALES_PER_TILE) as usize),
            )
        };
        // SAFETY: every fragment and scale code lies in the staged buffers, as MxOperand wrote
        // them (runs at CodeOperand::offset, aligned to their size; scale codes after the rows).
        let fa = per_row!(I, B, |t| unsafe {
            let row = t * I::M + a_row::<I>(lane);
            let at = CodeOperand::<CHUNKS_A>::row_tile_offset(t, a_row::<I>(lane), a_byte);
            (
                I::A::read(a_rows.add(at as usize), I::A_RUNS, a_stride),
                *a_scales.add((row * SCALES_PER_TILE + block) as usize),
            )
        });
        // SAFETY: as above.
        let fb = per_col!(I, B, |t| unsafe {
            let col = t * I::N + b_col::<I>(lane);
            let at = CodeOperand::<CHUNKS_B>::row_tile_offset(t, b_col::<I>(lane), b_byte);
            (
                I::B::read(b_rows.add(at as usize), I::B_RUNS, b_stride),
                *b_scales.add((col * SCALES_PER_TILE + block) as usize),
            )
        });
        each_tile!(I, B, |tm, tn| {
            acc[tm][tn] = I::mma(fa[tm].0, fb[tn].0, acc[tm][tn], fa[tm].1, fb[tn].1);
        });
    }
}
