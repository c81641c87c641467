//! Harnesses shared by Iron's fuzz targets and the seed generator: how an input becomes an
//! emulator dispatch ([`program`]) or an instruction word sequence, and the seed inputs each
//! target starts from ([`seeds`]).

pub mod program;
pub mod seeds;
