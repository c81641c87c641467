//! The one error type of the code-object reader.

use thiserror::Error;

/// Everything that can be wrong with a code object, an offload bundle or a target id.
///
/// Every message names the problem in one line, so that a launch failure can be reported
/// as it is, without the caller adding context about what was being read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodeObjectError {
    /// The input ends before a structure that must be there.
    #[error("truncated {what}: needs {needed} bytes, {available} available")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes the structure needs.
        needed: u64,
        /// Bytes the input has.
        available: u64,
    },
    /// The input does not start with the ELF magic.
    #[error("not an ELF file (no \\x7fELF magic)")]
    NotElf,
    /// The ELF class or byte order is not the one AMDGPU code objects use.
    #[error("unsupported ELF layout: {0}; AMDGPU code objects are 64-bit little-endian")]
    WrongElfLayout(&'static str),
    /// The ELF file is for another processor.
    #[error("{0}: expected an AMDGPU code object")]
    WrongMachine(String),
    /// The ELF OS/ABI byte is not AMDGPU_HSA.
    #[error("ELF OS/ABI is {0}, expected 64 (AMDGPU_HSA)")]
    WrongOsAbi(u8),
    /// The code object version (EI_ABIVERSION) is not one this reader knows.
    #[error(
        "unsupported code object ABI version {0}: only v4, v5 and v6 (ABI versions 2, 3, 4) are read"
    )]
    UnsupportedVersion(u8),
    /// The ELF type is not a shared object, so the code object was never linked.
    #[error("ELF type {0} is not a shared object (ET_DYN): link the code object before loading it")]
    NotSharedObject(u16),
    /// `e_flags` names a processor missing from the reader's table.
    #[error("unknown AMDGPU processor: EF_AMDGPU_MACH 0x{0:02x}")]
    UnknownMachine(u32),
    /// The ELF structure (headers, sections, symbols) is inconsistent.
    #[error("malformed ELF: {0}")]
    MalformedElf(String),
    /// There is no AMDGPU metadata note.
    #[error("no AMDGPU metadata note (owner \"AMDGPU\", type 32) in the code object")]
    MissingMetadata,
    /// The metadata note could not be decoded or lacks a required field.
    #[error("bad AMDGPU metadata note: {0}")]
    BadMetadata(String),
    /// A kernel listed in the metadata has no kernel descriptor symbol.
    #[error("kernel '{kernel}' has no kernel descriptor symbol '{symbol}'")]
    MissingKernelDescriptor {
        /// Kernel name from the metadata.
        kernel: String,
        /// The `.kd` symbol the metadata names.
        symbol: String,
    },
    /// A kernel descriptor or its code lies outside the loaded image.
    #[error("kernel '{kernel}': {problem}")]
    BadKernel {
        /// Kernel name from the metadata.
        kernel: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A kernel name that the code object does not hold.
    #[error("no kernel named '{0}' in the code object")]
    NoSuchKernel(String),
    /// The code object has no `.text` section.
    #[error("no .text section in the code object")]
    MissingText,
    /// The input is neither an offload bundle nor a compressed one.
    #[error("not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ or CCOB magic)")]
    NotBundle,
    /// A bundle entry's byte range leaves the bundle.
    #[error(
        "bundle entry '{id}' (offset {offset}, size {size}) lies outside the {len}-byte bundle"
    )]
    BundleEntryOutOfRange {
        /// Entry id.
        id: String,
        /// Entry offset.
        offset: u64,
        /// Entry size.
        size: u64,
        /// Bundle size.
        len: u64,
    },
    /// Two bundle entries share bytes, or an entry overlaps the bundle header.
    #[error("bundle entries '{first}' and '{second}' overlap")]
    OverlappingBundleEntries {
        /// One entry id (or "header").
        first: String,
        /// The other entry id.
        second: String,
    },
    /// Two bundle entries have the same id.
    #[error("bundle holds two entries with id '{0}'")]
    DuplicateBundleEntry(String),
    /// A bundle entry id that does not follow `<kind>-<triple>[-<target id>]`.
    #[error("bad bundle entry id '{0}': expected <kind>-<arch>-<vendor>-<os>-<env>[-<target id>]")]
    BadBundleEntryId(String),
    /// A compressed bundle uses a compression method this reader does not know.
    #[error("unknown compression method {0} in compressed bundle (0 = zlib, 1 = zstd)")]
    UnknownCompression(u16),
    /// A compressed bundle header version this reader does not know.
    #[error("unsupported compressed bundle version {0} (1 to 3 are read)")]
    UnsupportedBundleVersion(u16),
    /// A compressed bundle could not be decompressed, or decompressed to the wrong size.
    #[error("compressed bundle: {0}")]
    Decompression(String),
    /// A target id string that does not parse.
    #[error("bad target id '{0}': expected gfxNNN[:sramecc(+|-)][:xnack(+|-)]")]
    BadTargetId(String),
    /// The bundle holds no code object for the wanted processor.
    #[error("no code object for {wanted} in the bundle (it holds: {available})")]
    NoMatchingTarget {
        /// The device target id that was asked for.
        wanted: String,
        /// The device entries the bundle holds, comma-separated.
        available: String,
    },
}

/// Result alias for this module.
pub type Result<T> = std::result::Result<T, CodeObjectError>;
