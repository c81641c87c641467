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
    /// RDNA3 (Radeon RX 7900): wave32 or wave64, architected flat scratch, packed work-item ids.
    Gfx1100,
    /// RDNA4 (Radeon RX 9070): wave32 or wave64, architected flat scratch and workgroup ids.
    Gfx1201,
}

impl Target {
    /// Every target the emulator models.
    pub const ALL: [Target; 5] = [
        Target::Gfx90a,
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx1100,
        Target::Gfx1201,
    ];

    /// The target's name as LLVM spells it (`gfx950`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
            Target::Gfx1100 => "gfx1100",
            Target::Gfx1201 => "gfx1201",
        }
    }

    /// Parses a target name (`gfx90a`, `gfx942`, `gfx950`, `gfx1100`, `gfx1201`); target features
    /// after `:` are ignored.
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
            0x41 => Some(Target::Gfx1100),
            0x4e => Some(Target::Gfx1201),
            _ => None,
        }
    }

    /// Lanes per wave: 64 on CDNA; on RDNA the default, 32 (a kernel may choose 64).
    pub fn wave_size(self) -> u32 {
        if self.is_rdna() { 32 } else { 64 }
    }

    /// Whether the target is of the RDNA family (GFX11, GFX12).
    pub fn is_rdna(self) -> bool {
        matches!(self, Target::Gfx1100 | Target::Gfx1201)
    }

    /// Whether the wait counters are GFX12's (loadcnt, storecnt, dscnt, kmcnt and others) rather
    /// than vmcnt, vscnt and lgkmcnt.
    pub(crate) fn has_split_counters(self) -> bool {
        matches!(self, Target::Gfx1201)
    }

    /// Whether the hardware sets FLAT_SCRATCH itself ("architected flat scratch", gfx940 and later)
    /// instead of handing the kernel a Flat Scratch Init value.
    pub fn architected_flat_scratch(self) -> bool {
        !matches!(self, Target::Gfx90a)
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

    /// Compute units (CDNA) or workgroup processors (RDNA: two CUs sharing LDS, which a
    /// workgroup in WGP mode spans) of the largest product of the target: MI250X's GCD (110 of
    /// its 220 CUs; each GCD is a device), MI300X (304), MI355X (256), Radeon RX 7900 XTX (96 CUs)
    /// and RX 9070 XT (64 CUs).
    pub fn compute_units(self) -> u32 {
        match self {
            Target::Gfx90a => 110,
            Target::Gfx942 => 304,
            Target::Gfx950 => 256,
            Target::Gfx1100 => 48,
            Target::Gfx1201 => 32,
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

/// Lanes per wave. CDNA runs wave64; RDNA code is built for either, as its descriptor says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaveSize {
    /// 32 lanes; lane masks (EXEC, VCC, compare results) are one SGPR.
    Wave32,
    /// 64 lanes; lane masks are an SGPR pair.
    Wave64,
}

impl WaveSize {
    /// Number of lanes.
    pub fn lanes(self) -> u32 {
        match self {
            WaveSize::Wave32 => 32,
            WaveSize::Wave64 => 64,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
