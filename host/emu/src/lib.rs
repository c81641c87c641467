//! The software GPU: an AMDGPU ISA emulator (being written).
