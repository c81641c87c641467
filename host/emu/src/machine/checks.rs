//! Which sanitizer checks a dispatch runs under.

use std::fmt;
use std::str::FromStr;

/// The checks the emulator makes while it runs a kernel, beyond the faults it always reports
/// (memory outside every allocation, protected regions, unknown instructions, traps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checks {
    /// racecheck on LDS: two waves of a workgroup touching the same dword with no barrier
    /// between them, one writing, is a fault ([`crate::LdsRace`]), whatever the schedule.
    pub lds_races: bool,
}

impl Checks {
    /// Every check.
    pub const ALL: Checks = Checks { lds_races: true };
    /// No check.
    pub const NONE: Checks = Checks { lds_races: false };
}

impl Default for Checks {
    /// [`Checks::ALL`].
    fn default() -> Checks {
        Checks::ALL
    }
}

impl fmt::Display for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.lds_races { "race" } else { "none" })
    }
}

/// A check list that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksParseError(String);

impl fmt::Display for ChecksParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown check `{}`: expected `all`, `race` (LDS racecheck) or `none`",
            self.0
        )
    }
}

impl std::error::Error for ChecksParseError {}

impl FromStr for Checks {
    type Err = ChecksParseError;

    /// `all`, `race` or `none`.
    fn from_str(s: &str) -> Result<Checks, ChecksParseError> {
        match s {
            "all" | "race" => Ok(Checks::ALL),
            "none" => Ok(Checks::NONE),
            _ => Err(ChecksParseError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_parse() {
        assert_eq!("all".parse(), Ok(Checks::ALL));
        assert_eq!("race".parse(), Ok(Checks::ALL));
        assert_eq!("none".parse(), Ok(Checks::NONE));
        let e = "init".parse::<Checks>().unwrap_err().to_string();
        assert!(e.contains("unknown check `init`"), "{e}");
        assert_eq!(Checks::default().to_string(), "race");
    }
}
