//! What a profiler would count: instructions by class, bytes moved, access widths, LDS conflicts.

use crate::timing::TimingSummary;
use std::ops::AddAssign;

/// Instruction classes counted per dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstructionClass {
    /// Scalar ALU (SOP1/SOP2/SOPK/SOPC and non-branch SOPP).
    Salu,
    /// Branches and other program control.
    Branch,
    /// Scalar memory.
    Smem,
    /// Vector ALU (VOP1/VOP2/VOPC/VOP3/VOP3P).
    Valu,
    /// Matrix instructions.
    Mfma,
    /// Vector memory loads (global, flat, scratch, buffer).
    VmemLoad,
    /// Vector memory stores.
    VmemStore,
    /// Vector memory atomics.
    VmemAtomic,
    /// LDS instructions (DS).
    Lds,
    /// `s_waitcnt` (a no-op here, counted).
    Waitcnt,
    /// `s_barrier`.
    Barrier,
}

impl InstructionClass {
    /// Every class, in the order of [`Counters::instructions`].
    pub const ALL: [InstructionClass; 11] = [
        InstructionClass::Salu,
        InstructionClass::Branch,
        InstructionClass::Smem,
        InstructionClass::Valu,
        InstructionClass::Mfma,
        InstructionClass::VmemLoad,
        InstructionClass::VmemStore,
        InstructionClass::VmemAtomic,
        InstructionClass::Lds,
        InstructionClass::Waitcnt,
        InstructionClass::Barrier,
    ];

    /// Index into [`Counters::instructions`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Access widths (bytes per lane) distinguished by the histogram: 1, 2, 4, 8, 12, 16.
pub const ACCESS_WIDTHS: [u32; 6] = [1, 2, 4, 8, 12, 16];

/// Counters of one dispatch (or a sum of dispatches).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Wave-instructions executed per [`InstructionClass`] (indexed by `InstructionClass::index`).
    pub instructions: [u64; 11],
    /// Bytes read from global memory by vector and scalar memory instructions (active lanes).
    pub global_bytes_read: u64,
    /// The part of `global_bytes_read` that scalar memory instructions (SMEM loads and scalar
    /// atomics) read: kernel arguments and wave-uniform data, mostly served by the scalar cache.
    pub scalar_bytes_read: u64,
    /// Bytes written to global memory (atomics count as read and write).
    pub global_bytes_written: u64,
    /// Vector global memory instructions by per-lane access width (see [`ACCESS_WIDTHS`]).
    pub global_access_widths: [u64; 6],
    /// DS instructions that accessed LDS memory.
    pub lds_accesses: u64,
    /// Bytes moved to or from LDS.
    pub lds_bytes: u64,
    /// Extra LDS cycles caused by bank conflicts (32 banks of 4 bytes).
    pub lds_bank_conflict_cycles: u64,
    /// Waves launched.
    pub waves: u64,
    /// Workgroups launched.
    pub workgroups: u64,
    /// Barriers completed (per workgroup).
    pub barriers: u64,
    /// LDS bytes allocated per workgroup (static plus dynamic; the largest of summed dispatches).
    pub lds_bytes_per_workgroup: u32,
    /// The estimated time, when the dispatch ran in timing mode.
    pub timing: Option<TimingSummary>,
}

impl Counters {
    /// Total wave-instructions executed.
    pub fn total_instructions(&self) -> u64 {
        self.instructions.iter().sum()
    }

    /// Wave-instructions of one class.
    pub fn of(&self, class: InstructionClass) -> u64 {
        self.instructions[class.index()]
    }

    /// Bytes read from global memory by vector memory instructions: the total without the
    /// scalar loads.
    pub fn vector_bytes_read(&self) -> u64 {
        self.global_bytes_read - self.scalar_bytes_read
    }

    /// Counts `bytes` read by a scalar memory instruction (in the global total too).
    pub(crate) fn scalar_read(&mut self, bytes: u64) {
        self.global_bytes_read += bytes;
        self.scalar_bytes_read += bytes;
    }

    pub(crate) fn access_width(&mut self, bytes: u32) {
        if let Some(i) = ACCESS_WIDTHS.iter().position(|&w| w == bytes) {
            self.global_access_widths[i] += 1;
        }
    }
}

impl AddAssign<&Counters> for Counters {
    fn add_assign(&mut self, o: &Counters) {
        for (a, b) in self.instructions.iter_mut().zip(o.instructions) {
            *a += b;
        }
        for (a, b) in self
            .global_access_widths
            .iter_mut()
            .zip(o.global_access_widths)
        {
            *a += b;
        }
        self.global_bytes_read += o.global_bytes_read;
        self.scalar_bytes_read += o.scalar_bytes_read;
        self.global_bytes_written += o.global_bytes_written;
        self.lds_accesses += o.lds_accesses;
        self.lds_bytes += o.lds_bytes;
        self.lds_bank_conflict_cycles += o.lds_bank_conflict_cycles;
        self.waves += o.waves;
        self.workgroups += o.workgroups;
        self.barriers += o.barriers;
        self.lds_bytes_per_workgroup = self.lds_bytes_per_workgroup.max(o.lds_bytes_per_workgroup);
        match (&mut self.timing, &o.timing) {
            (Some(a), Some(b)) => *a += b,
            (None, Some(b)) => self.timing = Some(b.clone()),
            _ => {}
        }
    }
}
