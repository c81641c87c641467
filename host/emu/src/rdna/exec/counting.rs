//! How RDNA instructions take part in the wait counters: what each memory instruction puts in
//! flight and what each wait waits for, on GFX11 (vmcnt, vscnt, lgkmcnt) and GFX12 (loadcnt,
//! storecnt, dscnt, kmcnt). Stores count on vscnt/storecnt, which no register waits on, so they
//! are not kept. The machine keeps the accesses (`crate::machine::waitcnt`).

use super::super::inst::{Format, Instruction, OperandKind};
use super::super::opcodes::Op;
use crate::machine::races::AgentSync;
use crate::machine::store_data::StoreData;
use crate::machine::visibility::Sync;
use crate::machine::waitcnt::{Counting, Footprint, Issue, Queue, Registers, Wait};
use crate::machine::{Dependencies, FenceCode};
use crate::target::Target;

/// What the waitcnt check needs of `i` on `target`.
pub(crate) fn dependencies(target: Target, i: &Instruction) -> Dependencies {
    let dual = i
        .dual
        .iter()
        .flat_map(|d| std::iter::once(&d.dst).chain(&d.src));
    Dependencies {
        footprint: Footprint::named([&i.dst, &i.sdst].into_iter().chain(&i.src).chain(dual)),
        counting: counting(target, i),
        sync: sync(i),
        bypasses_l0: if target.has_split_counters() {
            i.fields.scope >= 1
        } else {
            i.fields.glc
        },
        agent: agent(i),
        // The bits of volatile and atomic accesses: GFX11 glc or dlc, GFX12 a scope wider than
        // the CU.
        coherent: if target.has_split_counters() {
            i.fields.scope >= 1
        } else {
            i.fields.glc || i.fields.dlc
        },
        // GFX10 and later interlock a store's data registers in hardware.
        store_data: StoreData::default(),
    }
}

/// The code of LLVM's AMDGPUUsage memory model on `target` for an agent-scope release and
/// acquire, and for the workgroup-scope ones WGP mode needs.
pub(crate) fn fence_code(target: Target) -> FenceCode {
    if target.has_split_counters() {
        FenceCode {
            agent_release: "s_wait_storecnt 0",
            agent_acquire: "global_inv scope:SCOPE_DEV",
            wgp_release: Some("s_wait_storecnt 0"),
            wgp_acquire: Some("global_inv scope:SCOPE_SE"),
        }
    } else {
        FenceCode {
            agent_release: "s_waitcnt_vscnt null, 0",
            agent_acquire: "buffer_gl1_inv, then buffer_gl0_inv",
            wgp_release: Some("s_waitcnt_vscnt null, 0"),
            wgp_acquire: Some("buffer_gl0_inv"),
        }
    }
}

/// What `i` does towards an agent-scope release or acquire: the code of LLVM's AMDGPUUsage
/// memory model. A release waits for every store; an acquire invalidates the L1 then the L0
/// (GFX11), or the caches up to device scope (GFX12).
fn agent(i: &Instruction) -> AgentSync {
    match sync(i) {
        Sync::Release => AgentSync::Release {
            after_writeback: false,
        },
        _ => match i.op {
            Op::BUFFER_GL1_INV => AgentSync::Invalidate,
            Op::BUFFER_GL0_INV => AgentSync::Acquire {
                after_invalidate: true,
            },
            Op::GLOBAL_INV if i.fields.scope >= 2 => AgentSync::Acquire {
                after_invalidate: false,
            },
            _ => AgentSync::None,
        },
    }
}

/// What `i` does for the visibility of global stores across the two CUs of a WGP: the
/// workgroup-scope release and acquire of LLVM's AMDGPUUsage code sequences.
fn sync(i: &Instruction) -> Sync {
    let imm = i.fields.imm as u16;
    let null = matches!(i.dst.kind, OperandKind::Sgpr(125) | OperandKind::None);
    match i.op {
        // All stores complete (GFX11: vscnt; GFX12: storecnt, alone or with dscnt).
        Op::S_WAITCNT_VSCNT if null && imm == 0 => Sync::Release,
        Op::S_WAIT_STORECNT if imm & 0x3f == 0 => Sync::Release,
        Op::S_WAIT_STORECNT_DSCNT if imm >> 8 & 0x3f == 0 => Sync::Release,
        Op::S_WAIT_IDLE => Sync::Release,
        // The L0 cache invalidated (GFX12: at SE scope or wider).
        Op::BUFFER_GL0_INV => Sync::Acquire,
        Op::GLOBAL_INV if i.fields.scope >= 1 => Sync::Acquire,
        _ => Sync::None,
    }
}

fn counting(target: Target, i: &Instruction) -> Counting {
    let name = i.op.name();
    let imm = i.fields.imm as u16;
    let n = |bits: u16| (bits & 0x3f) as u8;
    let wait = |queues: &[Queue], count: u8| Counting::Wait(Wait::default().with(queues, count));
    match i.op {
        Op::S_WAITCNT => {
            return Counting::Wait(
                Wait::default()
                    .with(&[Queue::Vector], n(imm >> 10))
                    .with(&[Queue::Lds, Queue::Scalar], n(imm >> 4)),
            );
        }
        Op::S_WAITCNT_VMCNT | Op::S_WAIT_LOADCNT => return wait(&[Queue::Vector], n(imm)),
        Op::S_WAITCNT_LGKMCNT => return wait(&[Queue::Lds, Queue::Scalar], n(imm)),
        Op::S_WAIT_DSCNT | Op::S_WAIT_STORECNT_DSCNT => return wait(&[Queue::Lds], n(imm)),
        Op::S_WAIT_KMCNT => return wait(&[Queue::Scalar], n(imm)),
        Op::S_WAIT_LOADCNT_DSCNT => {
            return Counting::Wait(
                Wait::default()
                    .with(&[Queue::Vector], n(imm >> 8))
                    .with(&[Queue::Lds], n(imm)),
            );
        }
        Op::S_WAIT_IDLE => return wait(&[Queue::Vector, Queue::Lds, Queue::Scalar], 0),
        Op::S_SENDMSG_RTN_B32 | Op::S_SENDMSG_RTN_B64 => {
            return issue(i, [Some(Queue::Scalar), None], true);
        }
        // Cache invalidations that LLVM does not count on vmcnt, and write-backs (storecnt).
        Op::BUFFER_GL0_INV | Op::BUFFER_GL1_INV | Op::GLOBAL_WB | Op::GLOBAL_WBINV => {
            return Counting::None;
        }
        Op::GLOBAL_INV => return issue(i, [Some(Queue::Vector), None], false),
        _ => {}
    }
    let atomic_returns = if target.has_split_counters() {
        i.fields.th & 1 == 1
    } else {
        i.fields.glc
    };
    let atomic = name.contains("_atomic");
    let store = name.contains("_store") || (atomic && !atomic_returns);
    match i.format {
        Format::Smem => issue(i, [Some(Queue::Scalar), None], name.contains("_load")),
        // The decoder names a destination only for the DS operations that return data.
        Format::Ds => issue(i, [Some(Queue::Lds), None], true),
        // GFX10 and later count a flat access in order on both of its counters.
        Format::Flat if store => issue(i, [Some(Queue::Lds), None], false),
        Format::Flat => issue(i, [Some(Queue::Vector), Some(Queue::Lds)], true),
        Format::Global | Format::Scratch | Format::Mubuf if store => Counting::None,
        // A buffer load's `dst` is its data operand; flat loads name one only when they return.
        Format::Global | Format::Scratch | Format::Mubuf => {
            issue(i, [Some(Queue::Vector), None], true)
        }
        _ => Counting::None,
    }
}

fn issue(i: &Instruction, queues: [Option<Queue>; 2], writes: bool) -> Counting {
    Counting::Issue(Issue {
        queues,
        writes: if writes { Registers::of(&i.dst) } else { None },
    })
}
