//! How GFX9 instructions take part in the wait counters (vmcnt, lgkmcnt): what each memory
//! instruction puts in flight and what `s_waitcnt` waits for. The machine keeps the accesses
//! (`crate::machine::waitcnt`).

use super::super::inst::{Format, Instruction};
use super::super::opcodes::Op;
use crate::machine::operand::{Operand, OperandKind};
use crate::machine::races::AgentSync;
use crate::machine::store_data::{LateRead, StoreData};
use crate::machine::visibility::Sync;
use crate::machine::waitcnt::{Counting, Footprint, Issue, Queue, RegisterFile, Registers, Wait};
use crate::machine::{Dependencies, FenceCode};
use crate::target::Target;

/// What the waitcnt check and the global racecheck need of `i` on `target`.
pub(crate) fn dependencies(target: Target, i: &Instruction) -> Dependencies {
    Dependencies {
        footprint: Footprint::named([&i.dst, &i.sdst].into_iter().chain(&i.src).chain(&i.scale)),
        counting: counting(i),
        sync: Sync::None,
        bypasses_l0: false,
        agent: agent(target, i),
        // glc (GFX942: sc0) or scc (sc1): the bits of volatile and atomic accesses.
        coherent: i.fields.glc || i.fields.scc,
        store_data: store_data(target, i),
    }
}

/// What `i` does towards the store-data hazard: a store or atomic of more than 8 bytes reads
/// its data after issue (1 wait state on GFX90A, 2 on GFX942 and GFX950; a buffer access whose
/// `soffset` is a register excepted), a VALU instruction writes its destination, `s_nop n`
/// takes `n + 1` wait states (LLVM's GCNHazardRecognizer).
fn store_data(target: Target, i: &Instruction) -> StoreData {
    let name = i.op.name();
    let stores = name.contains("_store") || name.contains("_atomic");
    let wide =
        |o: &Operand| Registers::of(o).filter(|r| r.count > 2 && r.file != RegisterFile::Scalar);
    let data = match i.format {
        Format::Flat | Format::Global | Format::Scratch if stores => wide(&i.src[1]),
        Format::Mubuf | Format::Mtbuf
            if stores && !matches!(i.src[2].kind, OperandKind::Sgpr(_)) =>
        {
            wide(&i.dst)
        }
        _ => None,
    };
    StoreData {
        wait_states: if i.op == Op::S_NOP {
            (i.fields.imm & 0xf) as u8 + 1
        } else {
            1
        },
        reads_late: data.map(|data| LateRead {
            data,
            wait_states: if matches!(target, Target::Gfx942 | Target::Gfx950) {
                2
            } else {
                1
            },
        }),
        valu_writes: Registers::of(&i.dst)
            .filter(|r| i.format.is_valu() && r.file != RegisterFile::Scalar),
    }
}

/// The code of LLVM's AMDGPUUsage memory model for an agent-scope release and acquire on
/// `target` (GFX9 has no WGP mode).
pub(crate) fn fence_code(target: Target) -> FenceCode {
    let (agent_release, agent_acquire) = match target {
        Target::Gfx942 | Target::Gfx950 => {
            ("buffer_wbl2 sc1, then s_waitcnt vmcnt(0)", "buffer_inv sc1")
        }
        _ => ("s_waitcnt vmcnt(0)", "buffer_wbinvl1_vol"),
    };
    FenceCode {
        agent_release,
        agent_acquire,
        wgp_release: None,
        wgp_acquire: None,
    }
}

/// What `i` does towards an agent-scope release or acquire: the code of LLVM's AMDGPUUsage
/// memory model for GFX90A (a release is the wait for every store; an acquire invalidates the
/// L1) and for GFX942 and GFX950 (a release writes the L2 back first; `sc1` is agent scope).
fn agent(target: Target, i: &Instruction) -> AgentSync {
    let cdna3 = matches!(target, Target::Gfx942 | Target::Gfx950);
    match i.op {
        Op::S_WAITCNT if i.fields.imm as u16 & 0xc00f == 0 => AgentSync::Release {
            after_writeback: cdna3,
        },
        Op::BUFFER_WBL2 if cdna3 && i.fields.scc => AgentSync::Writeback,
        Op::BUFFER_WBINVL1 | Op::BUFFER_WBINVL1_VOL => AgentSync::Acquire {
            after_invalidate: false,
        },
        Op::BUFFER_INV if i.fields.scc => AgentSync::Acquire {
            after_invalidate: false,
        },
        _ => AgentSync::None,
    }
}

fn counting(i: &Instruction) -> Counting {
    let name = i.op.name();
    let returns = name.contains("_load") || (name.contains("_atomic") && i.fields.glc);
    let issue = |queues: [Option<Queue>; 2], writes: bool| {
        Counting::Issue(Issue {
            queues,
            writes: if writes { Registers::of(&i.dst) } else { None },
        })
    };
    match i.format {
        Format::Sopp if i.op == Op::S_WAITCNT => {
            let imm = i.fields.imm as u16;
            let vm = (imm & 0xf | (imm >> 14 & 3) << 4) as u8;
            let lgkm = (imm >> 8 & 0xf) as u8;
            Counting::Wait(
                Wait::default()
                    .with(&[Queue::Vector, Queue::FlatVector], vm)
                    .with(&[Queue::Lds, Queue::Scalar, Queue::FlatLds], lgkm),
            )
        }
        Format::Smem => issue(
            [Some(Queue::Scalar), None],
            returns || name.contains("memtime") || name.contains("memrealtime"),
        ),
        // The decoder names a destination only for the DS operations that return data.
        Format::Ds => issue([Some(Queue::Lds), None], true),
        // A flat access may reach LDS, so it counts on both counters and completes out of order
        // with either's other accesses (LLVM waits for zero on the counter it needs).
        Format::Flat => issue([Some(Queue::FlatVector), Some(Queue::FlatLds)], true),
        Format::Global | Format::Scratch => issue([Some(Queue::Vector), None], true),
        // Writes back through the L1 that LLVM does not count on vmcnt.
        Format::Mubuf if matches!(i.op, Op::BUFFER_WBINVL1 | Op::BUFFER_WBINVL1_VOL) => {
            Counting::None
        }
        // The data operand of a buffer store is its `dst`.
        Format::Mubuf | Format::Mtbuf => issue([Some(Queue::Vector), None], returns),
        _ => Counting::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx9::decode::decode;

    fn late_read(target: Target, words: &[u32]) -> Option<LateRead> {
        store_data(target, &decode(target, words).unwrap()).reads_late
    }

    fn vector(first: u8, count: u8) -> Registers {
        Registers {
            file: RegisterFile::Vector,
            first,
            count,
        }
    }

    #[test]
    fn stores_of_more_than_8_bytes_read_their_data_late() {
        // global_store_dwordx4 v[4:5], v[0:3], off
        let x4 = [0xdc7c_8000, 0x007f_0004];
        // global_store_dwordx3 v[4:5], v[0:2], off
        let x3 = [0xdc78_8000, 0x007f_0004];
        for (target, wait_states) in [
            (Target::Gfx90a, 1),
            (Target::Gfx942, 2),
            (Target::Gfx950, 2),
        ] {
            let read = |data| Some(LateRead { data, wait_states });
            assert_eq!(late_read(target, &x4), read(vector(0, 4)), "{target:?}");
            assert_eq!(late_read(target, &x3), read(vector(0, 3)), "{target:?}");
        }
    }

    #[test]
    fn narrow_stores_and_buffer_stores_with_a_register_soffset_do_not() {
        // global_store_dwordx2 v[4:5], v[0:1], off
        let global_x2 = [0xdc74_8000, 0x007f_0004];
        // buffer_store_dwordx2 v[0:1], v4, s[8:11], 0 offen
        let buffer_x2 = [0xe074_1000, 0x8002_0004];
        // buffer_store_dwordx4 v[0:3], v4, s[8:11], s5 offen
        let register_soffset = [0xe07c_1000, 0x0502_0004];
        // buffer_store_dwordx4 v[0:3], v4, s[8:11], 0 offen
        let constant_soffset = [0xe07c_1000, 0x8002_0004];
        for target in [Target::Gfx90a, Target::Gfx942] {
            assert_eq!(late_read(target, &global_x2), None);
            assert_eq!(late_read(target, &buffer_x2), None);
            assert_eq!(late_read(target, &register_soffset), None);
            assert_eq!(
                late_read(target, &constant_soffset).map(|r| r.data),
                Some(vector(0, 4))
            );
        }
    }

    #[test]
    fn valu_writes_and_nops_count_wait_states() {
        let target = Target::Gfx942;
        // v_mov_b32 v1, 0
        let mov = store_data(target, &decode(target, &[0x7e02_0280]).unwrap());
        assert_eq!(mov.valu_writes, Some(vector(1, 1)));
        assert_eq!(mov.wait_states, 1);
        // s_nop 1
        let nop = store_data(target, &decode(target, &[0xbf80_0001]).unwrap());
        assert_eq!(nop.valu_writes, None);
        assert_eq!(nop.wait_states, 2);
    }
}
