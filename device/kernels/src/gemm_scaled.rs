//! The MFMA step of gfx950's hardware-microscaling GEMM: one `v_mfma_scale_f32_16x16x128_f8f6f4`
//! per 16 x 16 tile and 128-element K tile, each lane feeding its block of 32 codes of A and of B
//! with the blocks' E8M0 scale codes, all read from the operands' LDS buffers
//! ([`MxOperand`]).

use crate::gemm_stage::{CodeOperand, MxOperand, SCALES_PER_TILE};
use crate::gemm_tile::{Accumulators, MMA_TILE, Step, each_tile, per_col, per_row};
use iron_intrinsics::id::lane_id;
use iron_intrinsics::matrix::{ScaledMma, a_row, b_col, load_a, load_b, scale_block};

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
    unsafe fn step(
        acc: &mut Accumulators<I>,
        a: *const u8,
        b: *const u8,
        wave_row: u32,
        wave_col: u32,
    ) {
        const {
            assert!(I::K == 32 * SCALES_PER_TILE && I::M == MMA_TILE && I::N == MMA_TILE);
            assert!(CodeOperand::<CHUNKS_A, 16>::TILE_BYTES == I::K * I::A_BITS / 8);
            assert!(CodeOperand::<CHUNKS_B, 16>::TILE_BYTES == I::K * I::B_BITS / 8);
        };
        let (pitch_a, pitch_b) = (
            CodeOperand::<CHUNKS_A, 16>::PITCH,
            CodeOperand::<CHUNKS_B, 16>::PITCH,
        );
        let lane = lane_id();
        let block = scale_block::<I>(lane);
        // SAFETY: every fragment and scale code lies in the staged buffers, as MxOperand wrote
        // them (rows of PITCH bytes, 16-byte aligned; scale codes after the rows).
        let fa = per_row!(|t| unsafe {
            let row = wave_row + t * MMA_TILE;
            let scale_at = MxOperand::<CHUNKS_A>::SCALES_AT
                + (row + a_row::<I>(lane)) * SCALES_PER_TILE
                + block;
            (
                load_a::<I>(a.add((row * pitch_a) as usize), pitch_a),
                *a.add(scale_at as usize),
            )
        });
        // SAFETY: as above.
        let fb = per_col!(|t| unsafe {
            let col = wave_col + t * MMA_TILE;
            let scale_at = MxOperand::<CHUNKS_B>::SCALES_AT
                + (col + b_col::<I>(lane)) * SCALES_PER_TILE
                + block;
            (
                load_b::<I>(b.add((col * pitch_b) as usize), pitch_b),
                *b.add(scale_at as usize),
            )
        });
        each_tile!(|tm, tn| {
            acc[tm][tn] = I::mma(fa[tm].0, fb[tn].0, acc[tm][tn], fa[tm].1, fb[tn].1);
        });
    }
}
