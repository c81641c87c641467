//! What one decoded instruction asks of the compute unit, known before it runs: the pipe it
//! issues to and how long it holds it. The ISA front ends classify their instructions into a
//! [`Cost`] when they decode them; what depends on the lanes (the cache lines an access touches,
//! LDS bank conflicts) is added when the instruction has run.

/// How fast a vector ALU instruction runs against the SIMD's full rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VectorRate {
    /// One lane per SIMD lane per cycle.
    Full,
    /// A transcendental (`v_exp`, `v_log`, `v_rcp`, `v_rsq`, `v_sqrt`, `v_sin`, `v_cos`):
    /// a quarter of the full rate.
    Transcendental,
    /// A 64-bit float operation on a target whose consumer parts run it at a fraction of the
    /// 32-bit rate (RDNA).
    Double,
}

/// The pipe an instruction issues to, and what it holds it for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cost {
    /// Scalar ALU.
    Scalar,
    /// A branch or other program control.
    Branch,
    /// Scalar memory (through the scalar cache).
    ScalarMemory,
    /// Vector ALU (an RDNA VOPD pair issues as one).
    Vector { rate: VectorRate },
    /// A matrix instruction holding its SIMD's matrix core for `cycles` cycles.
    Matrix { cycles: u16 },
    /// LDS (DS) access.
    Lds,
    /// Vector memory access (global, flat, scratch, buffer).
    VectorMemory,
    /// A wait on the memory counters (`s_waitcnt`, GFX12 `s_wait_*`).
    Wait,
    /// `s_barrier` (GFX12: `s_barrier_wait`).
    Barrier,
    /// `s_nop`: `states` wait states.
    Nop { states: u16 },
    /// `s_sleep`: about 64 cycles per unit.
    Sleep { units: u16 },
    /// `s_setprio`: the wave's issue priority from here on (0 lowest, 3 highest).
    Priority { level: u8 },
    /// RDNA3/4 `s_delay_alu` with its raw immediate (which earlier ALU result the next
    /// instruction waits for).
    DelayAlu { fields: u16 },
    /// `s_endpgm`.
    End,
}

/// The transcendental vector operations (a quarter of the full rate on every target).
pub(crate) fn is_transcendental(name: &str) -> bool {
    const PREFIXES: [&str; 7] = [
        "v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Cycles a CDNA MFMA holds the matrix core: 4 per pass, with the passes of LLVM's scheduling
/// model (`SISchedule.td`: gfx90a's `SIDPFullSpeedModel`, gfx942's and gfx950's
/// `SIDPGFX942FullSpeedModel`/`SIDPGFX950FullSpeedModel`), which AMD's matrix instruction
/// calculator confirms in cycles. `m` is the block's rows, `dense` a one-block shape of the
/// newer K (CDNA3's full-rate forms), `f64` binary64 sources, `fp8` an f8f6f4 form with an 8-bit
/// operand (twice as long on gfx950).
pub(crate) fn mfma_cycles(
    cdna3: bool,
    gfx950: bool,
    m: u32,
    dense: bool,
    f64: bool,
    fp8: bool,
) -> u16 {
    let passes = match (m, f64) {
        (4, false) => 2,
        (4, true) => 4,
        (_, true) if gfx950 => 16,
        (_, true) => 8,
        (16, false) if cdna3 && dense => 4,
        (16, false) => 8,
        (_, false) if cdna3 && dense => 8,
        _ => 16,
    };
    let passes = if fp8 { passes * 2 } else { passes };
    passes * 4
}

/// The rate of the vector ALU instruction `name` on an RDNA (`rdna`) or CDNA target.
pub(crate) fn vector_rate(name: &str, rdna: bool) -> VectorRate {
    if is_transcendental(name) {
        VectorRate::Transcendental
    } else if rdna && name.ends_with("_f64") {
        VectorRate::Double
    } else {
        VectorRate::Full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mfma_cycles_follow_the_pass_classes() {
        // gfx90a: v_mfma_f32_32x32x8f16 16 passes, 16x16x16f16 8 passes.
        assert_eq!(mfma_cycles(false, false, 32, true, false, false), 64);
        assert_eq!(mfma_cycles(false, false, 16, true, false, false), 32);
        // gfx942: 32x32x8 f16 8 passes, 16x16x16 4, the f32 forms 16 and 8.
        assert_eq!(mfma_cycles(true, false, 32, true, false, false), 32);
        assert_eq!(mfma_cycles(true, false, 16, true, false, false), 16);
        assert_eq!(mfma_cycles(true, false, 32, false, false, false), 64);
        assert_eq!(mfma_cycles(true, false, 16, false, false, false), 32);
        // gfx950: f64 16x16x4 16 passes; 16x16x128 f8f6f4 8 passes with an fp8 operand.
        assert_eq!(mfma_cycles(true, true, 16, false, true, false), 64);
        assert_eq!(mfma_cycles(true, true, 16, true, false, true), 32);
    }

    #[test]
    fn transcendentals_and_doubles_are_told_apart() {
        assert_eq!(vector_rate("v_exp_f32", false), VectorRate::Transcendental);
        assert_eq!(vector_rate("v_rsq_f16", true), VectorRate::Transcendental);
        assert_eq!(vector_rate("v_fma_f64", true), VectorRate::Double);
        assert_eq!(vector_rate("v_fma_f64", false), VectorRate::Full);
        assert_eq!(vector_rate("v_cvt_f32_f16", false), VectorRate::Full);
        assert_eq!(vector_rate("v_add_f32", true), VectorRate::Full);
    }
}
