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
    /// synccheck: the waves of a workgroup meeting at barriers at different PCs is a fault
    /// ([`crate::Fault::DivergentBarrier`]). Hardware lets them through; the code is wrong.
    pub barriers: bool,
    /// initcheck: reading an LDS dword the workgroup never wrote
    /// ([`crate::Fault::UninitializedLds`]), scratch the work-item never wrote
    /// ([`crate::Fault::UninitializedScratch`]) or device memory neither the host nor a kernel
    /// wrote ([`crate::Fault::UninitializedMemory`]) is a fault; hardware gives whatever was
    /// there before.
    pub init: bool,
    /// waitcnt check: an instruction using a register that a load issued earlier still has to
    /// write, with no wait (`s_waitcnt`, `s_wait_*`) for it between them, is a fault
    /// ([`crate::Fault::WaitcntHazard`]). Hardware gives the register's old value, or the
    /// load's value lands after the instruction's own write. On GFX9 it also catches a VALU
    /// write of a wide store's data registers too few wait states after the store
    /// ([`crate::Fault::StoreDataHazard`]), which may change the data stored.
    pub waits: bool,
    /// memcheck of a launch's buffers: an access to a buffer that none of the launch's
    /// pointers ([`crate::Dispatch::buffers`]) points into is a fault
    /// ([`crate::Fault::Protected`]), although the buffer is live. Turn it off for a kernel
    /// that reaches buffers through pointers it reads from memory.
    pub buffers: bool,
    /// visibility check of WGP mode (GFX11, GFX12): a wave reading a global dword that another
    /// wave of its workgroup stored, without the writer's release and the reader's later
    /// acquire between them, is a fault ([`crate::Fault::WgpVisibility`]). The waves may run
    /// on the two CUs of the WGP, whose L0 caches are not coherent.
    pub wgp: bool,
    /// racecheck on global memory: two waves, of one workgroup or of two, touching the same
    /// global dword with nothing ordering them (no barrier between waves of a workgroup, no
    /// agent-scope release and acquire), one writing with a plain store, is a fault
    /// ([`crate::Fault::GlobalRace`]), whatever the schedule.
    pub global_races: bool,
}

impl Checks {
    /// Every check.
    pub const ALL: Checks = Checks {
        lds_races: true,
        barriers: true,
        init: true,
        waits: true,
        buffers: true,
        wgp: true,
        global_races: true,
    };
    /// No check.
    pub const NONE: Checks = Checks {
        lds_races: false,
        barriers: false,
        init: false,
        waits: false,
        buffers: false,
        wgp: false,
        global_races: false,
    };
}

impl Default for Checks {
    /// [`Checks::ALL`].
    fn default() -> Checks {
        Checks::ALL
    }
}

impl fmt::Display for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Checks::ALL {
            return f.write_str("all");
        }
        let both = self.lds_races && self.global_races;
        let names: Vec<&str> = [
            (both, "race"),
            (self.lds_races && !both, "lds-race"),
            (self.global_races && !both, "global-race"),
            (self.barriers, "sync"),
            (self.init, "init"),
            (self.waits, "wait"),
            (self.buffers, "buffers"),
            (self.wgp, "wgp"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// A check list that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksParseError(String);

impl fmt::Display for ChecksParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown check `{}`: expected `all`, `none`, or a comma-separated list of `race` \
             (racecheck of LDS and global memory, or `lds-race` and `global-race` apart), \
             `sync` (barrier synccheck), `init` (initcheck of LDS, scratch and \
             device memory), `wait` (loads' destinations used before their wait), `buffers` \
             (accesses to buffers the launch did not pass) and `wgp` (global stores read by \
             another wave of a WGP-mode workgroup without release and acquire)",
            self.0
        )
    }
}

impl std::error::Error for ChecksParseError {}

impl FromStr for Checks {
    type Err = ChecksParseError;

    /// `all`, `none`, or a comma-separated list of `race` (`lds-race` and `global-race`),
    /// `sync`, `init`, `wait`, `buffers` and `wgp`.
    fn from_str(s: &str) -> Result<Checks, ChecksParseError> {
        match s {
            "all" => return Ok(Checks::ALL),
            "none" => return Ok(Checks::NONE),
            _ => {}
        }
        let mut checks = Checks::NONE;
        for name in s.split(',') {
            match name.trim() {
                "race" => {
                    checks.lds_races = true;
                    checks.global_races = true;
                }
                "lds-race" => checks.lds_races = true,
                "global-race" => checks.global_races = true,
                "sync" => checks.barriers = true,
                "init" => checks.init = true,
                "wait" => checks.waits = true,
                "buffers" => checks.buffers = true,
                "wgp" => checks.wgp = true,
                other => return Err(ChecksParseError(other.to_string())),
            }
        }
        Ok(checks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_parse_and_print_back() {
        for text in [
            "all",
            "none",
            "race",
            "lds-race",
            "global-race",
            "sync",
            "init",
            "wait",
            "buffers",
            "wgp",
            "race,init,wait",
        ] {
            assert_eq!(text.parse::<Checks>().unwrap().to_string(), text);
        }
        assert_eq!("sync,race,wgp,wait,buffers,init".parse(), Ok(Checks::ALL));
        assert_eq!(
            "lds-race".parse(),
            Ok(Checks {
                lds_races: true,
                ..Checks::NONE
            })
        );
        assert_eq!(
            "lds-race,global-race"
                .parse::<Checks>()
                .unwrap()
                .to_string(),
            "race"
        );
        for bad in ["uninit", "race,", "", "race,all"] {
            let e = bad.parse::<Checks>().unwrap_err().to_string();
            assert!(e.starts_with("unknown check `"), "{e}");
        }
        assert_eq!(Checks::default(), Checks::ALL);
    }
}
