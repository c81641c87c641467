//! Processors, target ids and code object versions.
//!
//! A target id names the processor a code object was built for and the two target features
//! that change generated code: `sramecc` and `xnack`. It appears in three places: the ELF
//! `e_flags` (`EF_AMDGPU_MACH` in the low byte, feature settings above it), the metadata
//! string `amdhsa.target` (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`) and offload bundle
//! entry ids (`hipv4-amdgcn-amd-amdhsa--gfx950`). Source: LLVM AMDGPUUsage, "ELF Header" and
//! "Target ID" sections.

use std::fmt;

use super::error::{CodeObjectError, Result};

/// `EF_AMDGPU_MACH` values and processor names, as LLVM 22's `llvm-readobj` names them.
///
/// Every row was checked by handing `llvm-readobj --file-headers` (LLVM 22.1) a header with
/// that value. Values LLVM 22 does not name (0x27, 0x40, 0x4b, 0x4d, 0x50, 0x56, 0x57,
/// 0x5b-0x5e, 0x60 and up) are not listed: a code object with one of them is reported as an
/// unknown processor rather than misnamed.
const PROCESSORS: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x51, "gfx9-generic"),
    (0x52, "gfx10-1-generic"),
    (0x53, "gfx10-3-generic"),
    (0x54, "gfx11-generic"),
    (0x55, "gfx1152"),
    (0x58, "gfx1153"),
    (0x59, "gfx12-generic"),
    (0x5a, "gfx1251"),
    (0x5f, "gfx9-4-generic"),
];

/// Mask of `EF_AMDGPU_MACH` in `e_flags`.
const MACH_MASK: u32 = 0xff;
/// Mask and settings of the xnack feature in `e_flags` (code object v4+).
const XNACK_MASK: u32 = 0x300;
/// Mask and settings of the sramecc feature in `e_flags` (code object v4+).
const SRAMECC_MASK: u32 = 0xc00;

/// The processor name for an `EF_AMDGPU_MACH` value, if the reader knows it.
pub fn processor_for_mach(mach: u32) -> Option<&'static str> {
    PROCESSORS
        .iter()
        .find(|(value, _)| *value == mach)
        .map(|(_, name)| *name)
}

/// The `EF_AMDGPU_MACH` value for a processor name, if the reader knows it.
pub fn mach_for_processor(name: &str) -> Option<u32> {
    PROCESSORS
        .iter()
        .find(|(_, known)| *known == name)
        .map(|(value, _)| *value)
}

/// Every `(EF_AMDGPU_MACH, processor name)` pair the reader knows, for tools and tests.
pub fn known_processors() -> &'static [(u32, &'static str)] {
    PROCESSORS
}

/// The setting of one target feature (`xnack` or `sramecc`) in a target id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    Unsupported,
    /// The code works with the feature on or off (the feature is not named in the id).
    Any,
    /// The code requires the feature off (`feature-`).
    Off,
    /// The code requires the feature on (`feature+`).
    On,
}

impl FeatureSetting {
    /// Whether code built with `self` can run where the feature is `other`.
    ///
    /// `Any` (and `Unsupported`, which says nothing about the device) matches either setting;
    /// `On` and `Off` must agree.
    pub fn is_compatible_with(self, other: FeatureSetting) -> bool {
        !matches!(
            (self, other),
            (FeatureSetting::On, FeatureSetting::Off) | (FeatureSetting::Off, FeatureSetting::On)
        )
    }

    fn is_explicit(self) -> bool {
        matches!(self, FeatureSetting::On | FeatureSetting::Off)
    }

    fn from_bits(bits: u32, any: u32, off: u32, on: u32) -> FeatureSetting {
        match bits {
            b if b == any => FeatureSetting::Any,
            b if b == off => FeatureSetting::Off,
            b if b == on => FeatureSetting::On,
            _ => FeatureSetting::Unsupported,
        }
    }
}

/// A processor plus its `sramecc` and `xnack` settings, e.g. `gfx942:sramecc+:xnack-`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// Processor name, e.g. `gfx950` or `gfx9-4-generic`.
    pub processor: String,
    /// SRAM ECC setting.
    pub sramecc: FeatureSetting,
    /// XNACK (page-fault replay) setting.
    pub xnack: FeatureSetting,
}

impl TargetId {
    /// A target id for `processor` with both features left as `Any`.
    pub fn new(processor: &str) -> TargetId {
        TargetId {
            processor: processor.to_owned(),
            sramecc: FeatureSetting::Any,
            xnack: FeatureSetting::Any,
        }
    }

    /// Decodes the processor and feature settings from a v4+ ELF `e_flags` word.
    pub fn from_e_flags(e_flags: u32) -> Result<TargetId> {
        let mach = e_flags & MACH_MASK;
        let processor = processor_for_mach(mach).ok_or(CodeObjectError::UnknownMachine(mach))?;
        Ok(TargetId {
            processor: processor.to_owned(),
            xnack: FeatureSetting::from_bits(e_flags & XNACK_MASK, 0x100, 0x200, 0x300),
            sramecc: FeatureSetting::from_bits(e_flags & SRAMECC_MASK, 0x400, 0x800, 0xc00),
        })
    }

    /// Parses `gfx942`, `gfx942:sramecc+:xnack-`, or the same after an `amdgcn-amd-amdhsa-`
    /// triple (`amdgcn-amd-amdhsa--gfx950`, as in `amdhsa.target`).
    pub fn parse(text: &str) -> Result<TargetId> {
        let bad = || CodeObjectError::BadTargetId(text.to_owned());
        let id = match text.strip_prefix("amdgcn-amd-amdhsa-") {
            Some(rest) => rest.split_once('-').map(|(_env, id)| id).ok_or_else(bad)?,
            None => text,
        };
        let mut parts = id.split(':');
        let processor = parts
            .next()
            .filter(|p| is_processor_name(p))
            .ok_or_else(bad)?;
        let mut target = TargetId {
            processor: processor.to_owned(),
            sramecc: FeatureSetting::Any,
            xnack: FeatureSetting::Any,
        };
        for feature in parts {
            let (name, setting) = if let Some(name) = feature.strip_suffix('+') {
                (name, FeatureSetting::On)
            } else if let Some(name) = feature.strip_suffix('-') {
                (name, FeatureSetting::Off)
            } else {
                return Err(bad());
            };
            let slot = match name {
                "sramecc" => &mut target.sramecc,
                "xnack" => &mut target.xnack,
                _ => return Err(bad()),
            };
            if slot.is_explicit() {
                return Err(bad());
            }
            *slot = setting;
        }
        Ok(target)
    }

    /// Whether a code object built for `self` can run on a device whose target id is `device`:
    /// the same processor, and no feature set `+` on one side and `-` on the other.
    pub fn can_run_on(&self, device: &TargetId) -> bool {
        self.processor == device.processor
            && self.sramecc.is_compatible_with(device.sramecc)
            && self.xnack.is_compatible_with(device.xnack)
    }

    /// How many features `self` pins to the same explicit setting as `device`; used to prefer
    /// the most specific of several compatible code objects.
    pub fn specificity_for(&self, device: &TargetId) -> u32 {
        u32::from(self.sramecc.is_explicit() && self.sramecc == device.sramecc)
            + u32::from(self.xnack.is_explicit() && self.xnack == device.xnack)
    }

    /// The processor's ISA version, when the name has the `gfx<major><minor><stepping>` or
    /// `gfx<major>[-<minor>]-generic` form.
    pub fn isa_version(&self) -> Option<IsaVersion> {
        IsaVersion::of(&self.processor)
    }
}

impl fmt::Display for TargetId {
    /// Formats as LLVM does: processor, then explicit features in alphabetical order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        for (name, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match setting {
                FeatureSetting::On => write!(f, ":{name}+")?,
                FeatureSetting::Off => write!(f, ":{name}-")?,
                FeatureSetting::Any | FeatureSetting::Unsupported => {}
            }
        }
        Ok(())
    }
}

fn is_processor_name(name: &str) -> bool {
    name.strip_prefix("gfx").is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// The `major.minor.stepping` ISA version of a processor, e.g. 9.4.2 for gfx942 and 9.0.10
/// for gfx90a (the last two name characters are hexadecimal digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IsaVersion {
    /// GFX generation: 9 for CDNA, 11 for RDNA3, 12 for RDNA4.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Stepping.
    pub stepping: u32,
}

impl IsaVersion {
    /// Parses the version out of a processor name; `None` for names without one.
    pub fn of(processor: &str) -> Option<IsaVersion> {
        let rest = processor.strip_prefix("gfx")?;
        if let Some(generic) = rest.strip_suffix("-generic") {
            let mut numbers = generic.split('-').map(|n| n.parse::<u32>().ok());
            let major = numbers.next()??;
            let minor = numbers.next().unwrap_or(Some(0))?;
            return Some(IsaVersion {
                major,
                minor,
                stepping: 0,
            });
        }
        if rest.len() < 3 || !rest.is_ascii() {
            return None;
        }
        let (major, tail) = rest.split_at(rest.len() - 2);
        let mut digits = tail.chars().map(|c| c.to_digit(16));
        Some(IsaVersion {
            major: major.parse().ok()?,
            minor: digits.next()??,
            stepping: digits.next()??,
        })
    }

    /// Whether VGPRs and AGPRs share one 512-entry file split at `accum_offset`
    /// (gfx90a and gfx94x/gfx95x: LLVM's `FeatureGFX90AInsts`).
    pub fn has_unified_vector_registers(self) -> bool {
        self.major == 9 && ((self.minor == 0 && self.stepping == 0xa) || self.minor >= 4)
    }
}

/// The code object format version, from the ELF header's `EI_ABIVERSION` byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeObjectVersion {
    /// Code object v4 (ABI version 2).
    V4,
    /// Code object v5 (ABI version 3): implicit kernel arguments in the v5 layout.
    V5,
    /// Code object v6 (ABI version 4): adds generic processors.
    V6,
}

impl CodeObjectVersion {
    /// Maps `EI_ABIVERSION` to a version; v3 and older use other `e_flags` encodings and are
    /// refused.
    pub fn from_abi_version(abi_version: u8) -> Result<CodeObjectVersion> {
        match abi_version {
            2 => Ok(CodeObjectVersion::V4),
            3 => Ok(CodeObjectVersion::V5),
            4 => Ok(CodeObjectVersion::V6),
            other => Err(CodeObjectError::UnsupportedVersion(other)),
        }
    }

    /// The version number (4, 5 or 6).
    pub fn number(self) -> u32 {
        match self {
            CodeObjectVersion::V4 => 4,
            CodeObjectVersion::V5 => 5,
            CodeObjectVersion::V6 => 6,
        }
    }
}
