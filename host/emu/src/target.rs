//! The GPU targets the emulator models.

use std::fmt;

/// A GPU target (one `--mcpu`/`gfx` name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// CDNA2 (MI200): wave64, absolute flat scratch, packed work-item ids.
    Gfx90a,
    /// CDNA3 (MI300): wave64, architected flat scratch, packed work-item ids.
    Gfx942,
    /// CDNA4 (MI350): wave64, architected flat scratch, packed work-item ids.
    Gfx950,
}

impl Target {
    /// Every target the emulator models.
    pub const ALL: [Target; 3] = [Target::Gfx90a, Target::Gfx942, Target::Gfx950];

    /// The target's name as LLVM spells it (`gfx950`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// Parses a target name (`gfx90a`, `gfx942`, `gfx950`); target features after `:` are ignored.
    pub fn from_name(name: &str) -> Option<Target> {
        let base = name.split(':').next().unwrap_or(name);
        Target::ALL.into_iter().find(|t| t.name() == base)
    }

    /// The target named by an AMDGPU ELF header's `e_flags` (its low byte is the machine).
    pub fn from_elf_flags(e_flags: u32) -> Option<Target> {
        match e_flags & 0xff {
            0x3f => Some(Target::Gfx90a),
            0x4c => Some(Target::Gfx942),
            0x4f => Some(Target::Gfx950),
            _ => None,
        }
    }

    /// Lanes per wave.
    pub fn wave_size(self) -> u32 {
        64
    }

    /// Whether the hardware sets FLAT_SCRATCH itself ("architected flat scratch", gfx940 and later)
    /// instead of handing the kernel a Flat Scratch Init value.
    pub fn architected_flat_scratch(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }

    /// Whether the memory instructions' cache bits are named `sc0 sc1 nt` (gfx940 and later)
    /// rather than `glc slc scc`.
    pub(crate) fn sc_bits(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }

    /// Granule of the LDS size field of COMPUTE_PGM_RSRC2, in bytes.
    pub fn lds_granule(self) -> u32 {
        match self {
            Target::Gfx950 => 320 * 4,
            _ => 128 * 4,
        }
    }

    /// LDS bytes available to one workgroup.
    pub fn max_lds_bytes(self) -> u32 {
        match self {
            Target::Gfx950 => 160 * 1024,
            _ => 64 * 1024,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
