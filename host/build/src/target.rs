//! The gfx targets Iron builds for, and how a user names them (`gfx950`, `gfx1100:w64`, `all`).

use crate::error::{Error, Result, bail};
use std::fmt;

/// The architecture family of a gfx target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Instinct data-centre GPUs (gfx9): wave64, MFMA matrix cores.
    Cdna,
    /// Radeon GPUs (gfx11, gfx12): wave32 by default, WMMA matrix cores.
    Rdna,
}

/// A gfx target Iron supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfx {
    /// The LLVM processor name, e.g. `gfx950`.
    pub name: &'static str,
    /// Its family.
    pub family: Family,
}

/// Every supported gfx, in the order `all` builds them.
pub const SUPPORTED: [Gfx; 5] = [
    Gfx {
        name: "gfx90a",
        family: Family::Cdna,
    },
    Gfx {
        name: "gfx942",
        family: Family::Cdna,
    },
    Gfx {
        name: "gfx950",
        family: Family::Cdna,
    },
    Gfx {
        name: "gfx1100",
        family: Family::Rdna,
    },
    Gfx {
        name: "gfx1201",
        family: Family::Rdna,
    },
];

impl Gfx {
    /// The wave size a build uses unless asked otherwise.
    pub fn default_wave(self) -> u32 {
        match self.family {
            Family::Cdna => 64,
            Family::Rdna => 32,
        }
    }

    /// The family as the `iron_family` cfg spells it.
    pub fn family_cfg(self) -> &'static str {
        match self.family {
            Family::Cdna => "cdna",
            Family::Rdna => "rdna",
        }
    }

    /// The matrix-core kind as the `iron_matrix` cfg spells it.
    pub fn matrix_cfg(self) -> &'static str {
        match self.family {
            Family::Cdna => "mfma",
            Family::Rdna => "wmma",
        }
    }
}

/// One build target: a gfx and the wave size to build it for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The gfx.
    pub gfx: Gfx,
    /// Lanes per wave, 32 or 64.
    pub wave: u32,
}

impl Target {
    /// The folder name under `target/iron/`: the gfx, with `-w64` for RDNA wave64 builds.
    pub fn dir_name(self) -> String {
        if self.wave != self.gfx.default_wave() {
            format!("{}-w{}", self.gfx.name, self.wave)
        } else {
            self.gfx.name.to_string()
        }
    }

    /// The name of the custom rustc target (and its JSON spec file).
    pub fn triple(self) -> String {
        format!("amdgcn-{}", self.dir_name())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (wave{})", self.gfx.name, self.wave)
    }
}

fn find_gfx(name: &str) -> Result<Gfx> {
    SUPPORTED
        .iter()
        .copied()
        .find(|g| g.name == name)
        .ok_or_else(|| {
            let known: Vec<_> = SUPPORTED.iter().map(|g| g.name).collect();
            Error::new(format!(
                "unknown gfx `{name}`: supported targets are {}, or `all`",
                known.join(", ")
            ))
        })
}

fn with_wave(gfx: Gfx, wave: Option<u32>) -> Result<Target> {
    let wave = wave.unwrap_or(gfx.default_wave());
    match (gfx.family, wave) {
        (_, 64) | (Family::Rdna, 32) => Ok(Target { gfx, wave }),
        (Family::Cdna, 32) => bail!(
            "{} is wave64 only: wave32 exists on RDNA targets (gfx1100, gfx1201)",
            gfx.name
        ),
        (_, other) => bail!("wave size {other} does not exist: use 32 or 64"),
    }
}

/// Parses a `--gfx` list: `all`, one gfx, or a comma list; an entry may carry `:w32`/`:w64`
/// (`gfx1100:w64`). `wave` (from `--wave`) applies to entries without their own suffix.
pub fn parse_targets(list: &str, wave: Option<u32>) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for entry in list.split(',').map(str::trim) {
        if entry.is_empty() {
            bail!("empty entry in --gfx `{list}`");
        }
        if entry == "all" {
            for gfx in SUPPORTED {
                let w = if gfx.family == Family::Cdna {
                    None
                } else {
                    wave
                };
                targets.push(with_wave(gfx, w)?);
            }
            continue;
        }
        let (name, entry_wave) = match entry.split_once(':') {
            Some((name, "w32")) => (name, Some(32)),
            Some((name, "w64")) => (name, Some(64)),
            Some((_, suffix)) => bail!("unknown suffix `:{suffix}` in `{entry}`: use :w32 or :w64"),
            None => (entry, wave),
        };
        targets.push(with_wave(find_gfx(name)?, entry_wave)?);
    }
    let mut unique = Vec::new();
    for t in targets {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    Ok(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_wave_suffixes() {
        let t = parse_targets("gfx950,gfx1100:w64,gfx1201", None).unwrap();
        let dirs: Vec<_> = t.iter().map(|t| t.dir_name()).collect();
        assert_eq!(dirs, ["gfx950", "gfx1100-w64", "gfx1201"]);
        assert_eq!(t[1].wave, 64);
        assert_eq!(t[2].wave, 32);
    }

    #[test]
    fn all_builds_five_targets_and_wave_applies_to_rdna_only() {
        let t = parse_targets("all", Some(64)).unwrap();
        assert_eq!(t.len(), 5);
        assert!(t.iter().all(|t| t.wave == 64));
        let t = parse_targets("all", None).unwrap();
        assert_eq!(t.iter().filter(|t| t.wave == 32).count(), 2);
    }

    #[test]
    fn rejects_unknown_gfx_and_wave32_on_cdna() {
        let e = parse_targets("gfx9999", None).unwrap_err().to_string();
        assert!(e.contains("unknown gfx `gfx9999`"), "{e}");
        let e = parse_targets("gfx942", Some(32)).unwrap_err().to_string();
        assert!(e.contains("wave64 only"), "{e}");
        let e = parse_targets("gfx942:w32", None).unwrap_err().to_string();
        assert!(e.contains("wave64 only"), "{e}");
        assert!(parse_targets("gfx950,", None).is_err());
        assert!(parse_targets("gfx1100:w16", None).is_err());
    }

    #[test]
    fn duplicate_entries_build_once() {
        assert_eq!(parse_targets("gfx950,gfx950", None).unwrap().len(), 1);
    }
}
