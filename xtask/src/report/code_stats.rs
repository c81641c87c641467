//! What a kernel's machine code says before it runs: instructions by class, decoded with the
//! emulator's decoder, and the matrix instructions of its main loop (the innermost backward
//! branch that encloses matrix instructions).

use iron_emu::{InstructionClass, Target, WaveSize, gfx9, rdna};
use serde::Serialize;

/// The static shape of one kernel's code.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CodeStats {
    /// Instructions per [`InstructionClass`], in `InstructionClass::ALL` order.
    pub mix: Vec<u64>,
    /// Instructions touching scratch memory (spills or stack).
    pub scratch_instructions: u64,
    /// Dwords the decoder could not read (each skipped, decoding going on after it).
    pub undecoded_dwords: u64,
    /// Matrix instructions in the body of the main loop, or `None` when no loop holds any.
    pub matrix_per_iteration: Option<u64>,
}

/// One decoded instruction, reduced to what the statistics need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decoded {
    /// Byte offset in the kernel's code.
    pc: u64,
    class: InstructionClass,
    /// Touches scratch memory.
    scratch: bool,
    /// For a branch: the byte offset it jumps to.
    branch_target: Option<u64>,
}

/// Decodes `code` (one kernel's machine code) for `target` in waves of `wave` lanes.
pub fn analyse(target: Target, wave: WaveSize, code: &[u8]) -> CodeStats {
    let words: Vec<u32> = code
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut decoded = Vec::new();
    let mut undecoded = 0;
    let mut at = 0;
    while at < words.len() {
        match decode_one(target, wave, &words[at..], at as u64 * 4) {
            Some((d, len)) => {
                decoded.push(d);
                at += len;
            }
            None => {
                undecoded += 1;
                at += 1;
            }
        }
    }
    let mut mix = vec![0; InstructionClass::ALL.len()];
    for d in &decoded {
        mix[d.class.index()] += 1;
    }
    CodeStats {
        mix,
        scratch_instructions: decoded.iter().filter(|d| d.scratch).count() as u64,
        undecoded_dwords: undecoded,
        matrix_per_iteration: main_loop_matrix_count(&decoded),
    }
}

/// Decodes the instruction at the start of `words` (at byte offset `pc`); returns it and its
/// length in dwords.
fn decode_one(target: Target, wave: WaveSize, words: &[u32], pc: u64) -> Option<(Decoded, usize)> {
    let (name, kind, len, imm) = if target.is_rdna() {
        let i = rdna::decode(target, wave, words).ok()?;
        (i.op.name(), Kind::of_rdna(i.format), i.len, i.fields.imm)
    } else {
        let i = gfx9::decode(target, words).ok()?;
        (i.op.name(), Kind::of_gfx9(i.format), i.len, i.fields.imm)
    };
    let class = classify(name, kind);
    let branch_target = (class == InstructionClass::Branch
        && name.starts_with("s_")
        && (name.starts_with("s_branch") || name.starts_with("s_cbranch")))
    .then(|| {
        let offset = i64::from(imm as u32 as u16 as i16) * 4;
        (pc as i64 + 4 + offset) as u64
    });
    let decoded = Decoded {
        pc,
        class,
        scratch: kind == Kind::Scratch,
        branch_target,
    };
    Some((decoded, usize::from(len).div_ceil(4).max(1)))
}

/// The encoding groups the classification needs, common to both families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Scalar,
    ProgramControl,
    ScalarMemory,
    Vector,
    Lds,
    Global,
    Scratch,
}

impl Kind {
    fn of_gfx9(f: gfx9::Format) -> Kind {
        use gfx9::Format as F;
        match f {
            F::Sop1 | F::Sop2 | F::Sopk | F::Sopc => Kind::Scalar,
            F::Sopp => Kind::ProgramControl,
            F::Smem => Kind::ScalarMemory,
            F::Ds => Kind::Lds,
            F::Scratch => Kind::Scratch,
            F::Flat | F::Global | F::Mubuf | F::Mtbuf => Kind::Global,
            _ => Kind::Vector,
        }
    }

    fn of_rdna(f: rdna::Format) -> Kind {
        use rdna::Format as F;
        match f {
            F::Sop1 | F::Sop2 | F::Sopk | F::Sopc => Kind::Scalar,
            F::Sopp => Kind::ProgramControl,
            F::Smem => Kind::ScalarMemory,
            F::Ds => Kind::Lds,
            F::Scratch => Kind::Scratch,
            F::Flat | F::Global | F::Mubuf => Kind::Global,
            _ => Kind::Vector,
        }
    }
}

/// The class the emulator's counters would count `name` under.
fn classify(name: &str, kind: Kind) -> InstructionClass {
    use InstructionClass as C;
    let matrix = ["v_mfma", "v_smfmac", "v_wmma", "v_swmmac"];
    match kind {
        Kind::Scalar if name.starts_with("s_setpc") || name.starts_with("s_swappc") => C::Branch,
        Kind::Scalar => C::Salu,
        Kind::ProgramControl if name.starts_with("s_waitcnt") || name.starts_with("s_wait_") => {
            C::Waitcnt
        }
        Kind::ProgramControl if name.starts_with("s_barrier") => C::Barrier,
        Kind::ProgramControl
            if name.starts_with("s_branch")
                || name.starts_with("s_cbranch")
                || name.starts_with("s_endpgm") =>
        {
            C::Branch
        }
        Kind::ProgramControl => C::Salu,
        Kind::ScalarMemory => C::Smem,
        Kind::Vector if matrix.iter().any(|m| name.starts_with(m)) => C::Mfma,
        Kind::Vector => C::Valu,
        Kind::Lds => C::Lds,
        Kind::Global | Kind::Scratch if name.contains("atomic") => C::VmemAtomic,
        Kind::Global | Kind::Scratch if name.contains("store") => C::VmemStore,
        Kind::Global | Kind::Scratch => C::VmemLoad,
    }
}

/// The matrix instructions of the main loop: over the loops (backward branches) whose body
/// holds matrix instructions, the innermost ones (no other such loop inside), the most matrix
/// instructions one body holds. Loops without matrix instructions (staging copies, say) may sit
/// inside the main loop without hiding it.
fn main_loop_matrix_count(code: &[Decoded]) -> Option<u64> {
    let matrix_in = |(start, end): (u64, u64)| {
        code.iter()
            .filter(|d| d.pc >= start && d.pc <= end && d.class == InstructionClass::Mfma)
            .count() as u64
    };
    let loops: Vec<((u64, u64), u64)> = code
        .iter()
        .filter_map(|d| d.branch_target.filter(|&t| t <= d.pc).map(|t| (t, d.pc)))
        .map(|span| (span, matrix_in(span)))
        .filter(|&(_, n)| n > 0)
        .collect();
    loops
        .iter()
        .filter(|&&((start, end), _)| {
            !loops
                .iter()
                .any(|&((s, e), _)| (s, e) != (start, end) && s >= start && e <= end)
        })
        .map(|&(_, n)| n)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pc: u64, class: InstructionClass, branch_target: Option<u64>) -> Decoded {
        Decoded {
            pc,
            class,
            scratch: false,
            branch_target,
        }
    }

    #[test]
    fn the_main_loop_is_the_innermost_loop_with_the_most_matrix_instructions() {
        use InstructionClass::{Branch, Lds, Mfma, Valu};
        // outer loop 0..=40 holding an inner loop 8..=24 with two MFMAs, one MFMA outside it,
        // and a later loop 44..=52 with one MFMA.
        let code = [
            at(0, Valu, None),
            at(4, Mfma, None),
            at(8, Mfma, None),
            at(16, Mfma, None),
            at(24, Branch, Some(8)),
            at(40, Branch, Some(0)),
            at(44, Mfma, None),
            at(52, Branch, Some(44)),
            at(56, Branch, Some(64)),
        ];
        assert_eq!(main_loop_matrix_count(&code), Some(2));
        assert_eq!(main_loop_matrix_count(&code[..4]), None);
        let no_matrix = [at(0, Valu, None), at(4, Branch, Some(0))];
        assert_eq!(main_loop_matrix_count(&no_matrix), None);
        // A main loop 0..=36 with three MFMAs around a staging loop 8..=12 without any.
        let staged = [
            at(0, Mfma, None),
            at(8, Lds, None),
            at(12, Branch, Some(8)),
            at(16, Mfma, None),
            at(20, Mfma, None),
            at(36, Branch, Some(0)),
        ];
        assert_eq!(main_loop_matrix_count(&staged), Some(3));
    }

    #[test]
    fn instructions_are_classed_as_the_counters_class_them() {
        use InstructionClass as C;
        assert_eq!(classify("s_waitcnt", Kind::ProgramControl), C::Waitcnt);
        assert_eq!(classify("s_wait_loadcnt", Kind::ProgramControl), C::Waitcnt);
        assert_eq!(classify("s_cbranch_scc1", Kind::ProgramControl), C::Branch);
        assert_eq!(classify("s_barrier", Kind::ProgramControl), C::Barrier);
        assert_eq!(classify("s_nop", Kind::ProgramControl), C::Salu);
        assert_eq!(classify("v_mfma_f32_16x16x16_f16", Kind::Vector), C::Mfma);
        assert_eq!(classify("v_wmma_f32_16x16x16_f16", Kind::Vector), C::Mfma);
        assert_eq!(classify("v_fma_f32", Kind::Vector), C::Valu);
        assert_eq!(classify("global_store_dwordx4", Kind::Global), C::VmemStore);
        assert_eq!(
            classify("global_atomic_add_f32", Kind::Global),
            C::VmemAtomic
        );
        assert_eq!(classify("buffer_load_dword", Kind::Global), C::VmemLoad);
        assert_eq!(classify("scratch_store_dword", Kind::Scratch), C::VmemStore);
    }

    /// `s_mov_b32 s0, 0` (SOP1), `s_branch -2` back to it and `s_endpgm`, as gfx9 encodes
    /// them; the branch makes a loop with no matrix instruction.
    #[test]
    fn decodes_real_gfx9_words() {
        let words: [u32; 3] = [0xBE80_0080, 0xBF82_FFFE, 0xBF81_0000];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let stats = analyse(Target::Gfx950, WaveSize::Wave64, &code);
        assert_eq!(stats.mix[InstructionClass::Salu.index()], 1, "{stats:?}");
        assert_eq!(stats.mix[InstructionClass::Branch.index()], 2, "{stats:?}");
        assert_eq!(stats.matrix_per_iteration, None);
        assert_eq!(stats.undecoded_dwords, 0);
    }
}
