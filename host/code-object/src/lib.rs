//! A pure-Rust reader for AMDGPU code objects and clang offload bundles.
//!
//! [`CodeObject::parse`] validates an AMDGPU HSA ELF image (machine, OS/ABI, code object
//! version, target id from `e_flags`), decodes its metadata note and every kernel's descriptor
//! and machine code. [`Bundle`] reads and writes offload bundles and picks the entry for a
//! device. Everything above this module trusts only what it validated: sizes and offsets are
//! checked against the input, and malformed input is an error value, never a panic.
//!
//! Sources: LLVM AMDGPUUsage ("ELF Code Object", "Code Object Metadata", "Kernel
//! Descriptor"), clang's offload bundler.
//!
//! # Example
//! What `cargo xtask build` reports per kernel, read from a code object it wrote:
//! ```no_run
//! use iron_code_object::{CodeObject, TargetId, code_object_for};
//!
//! let bytes = std::fs::read("target/iron/gfx950/kernels.co")?;
//! let code_object = CodeObject::parse(&bytes)?;
//! println!("{}", code_object.target());
//! for kernel in code_object.kernels() {
//!     let m = kernel.metadata();
//!     println!(
//!         "{}: {} VGPRs, {} SGPRs, {} bytes of static LDS, {} of scratch, at most {} work-items",
//!         m.name,
//!         m.vgpr_count,
//!         m.sgpr_count,
//!         m.group_segment_fixed_size,
//!         m.private_segment_fixed_size,
//!         m.max_flat_workgroup_size
//!     );
//! }
//! // From the bundle, the entry a gfx942 device would load:
//! let bundle = std::fs::read("target/iron/kernels.bundle")?;
//! let for_gfx942 = code_object_for(&bundle, &TargetId::parse("gfx942:sramecc+:xnack-")?)?;
//! println!("{} kernels", for_gfx942.kernels().len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod bundle;
mod compressed;
mod descriptor;
mod elf;
mod error;
mod kernel;
mod metadata;
pub mod occupancy;
mod target;

pub use bundle::{
    BUNDLE_ALIGNMENT, BUNDLE_MAGIC, Bundle, BundleEntry, BundleEntryId, HOST_ENTRY_ID, is_bundle,
};
pub use compressed::{
    COMPRESSED_BUNDLE_MAGIC, CompressedHeader, CompressionMethod, MAX_UNCOMPRESSED_SIZE,
    parse_header as parse_compressed_header,
};
pub use descriptor::{
    FloatDenormMode, FloatRoundMode, KERNEL_DESCRIPTOR_SIZE, KernargPreload, KernelCodeProperties,
    KernelDescriptor, PgmRsrc1, PgmRsrc2, PgmRsrc3Cdna, PgmRsrc3Rdna, UserSgpr, UserSgprKind,
    WorkitemIdVgprs,
};
pub use elf::{LoadSegment, R_AMDGPU_ABS64, R_AMDGPU_RELATIVE64, Relocation};
pub use error::{CodeObjectError, Result};
pub use kernel::Kernel;
pub use metadata::{
    Access, AddressSpace, ArgValueKind, CodeObjectMetadata, KernelArg, KernelMetadata,
    parse_metadata,
};
pub use target::{
    CodeObjectVersion, FeatureSetting, IsaVersion, TargetId, known_processors, mach_for_processor,
    processor_for_mach,
};

use elf::ElfImage;

/// The hand-made code objects of the code-object tests (`host/tests`), for the unit tests of
/// the reader and the emulator's loader.
#[cfg(test)]
#[path = "../tests/code_object_common/mod.rs"]
pub(crate) mod hand_made;

/// Bytes loaded at an address: the `.text` section as the emulator maps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSection {
    /// Load address of the first byte.
    pub address: u64,
    /// The section's bytes.
    pub bytes: Vec<u8>,
}

/// A global variable of a code object: where it is loaded (relative to the load base) and its
/// size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its symbol name.
    pub name: String,
    /// Its virtual address in the code object.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// A validated AMDGPU code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObject {
    target: TargetId,
    version: CodeObjectVersion,
    metadata_version: [u32; 2],
    metadata_target: Option<String>,
    kernels: Vec<Kernel>,
    printf_formats: Vec<String>,
    variables: Vec<Variable>,
    relocations: Vec<Relocation>,
    text: CodeSection,
    load_segments: Vec<LoadSegment>,
}

impl CodeObject {
    /// Parses and validates a code object (a bare ELF image, not a bundle).
    pub fn parse(bytes: &[u8]) -> Result<CodeObject> {
        let image = ElfImage::open(bytes)?;
        let target = TargetId::from_e_flags(image.e_flags)?;
        let metadata = metadata::parse_metadata(image.metadata_note()?)?;
        let symbols = image.symbols()?;
        let unified = target
            .isa_version()
            .is_some_and(IsaVersion::has_unified_vector_registers);
        let kernels = metadata
            .kernels
            .into_iter()
            .map(|kernel| kernel::read_kernel(&image, &symbols, kernel, unified))
            .collect::<Result<Vec<_>>>()?;
        let (text_address, text) = image.text()?;
        Ok(CodeObject {
            target,
            version: image.version,
            metadata_version: metadata.version,
            metadata_target: metadata.target,
            kernels,
            printf_formats: metadata.printf,
            variables: symbols
                .iter()
                .filter(|symbol| !symbol.is_function)
                .map(|symbol| Variable {
                    name: String::from_utf8_lossy(symbol.name).into_owned(),
                    address: symbol.value,
                    size: symbol.size,
                })
                .collect(),
            relocations: image.relocations()?,
            text: CodeSection {
                address: text_address,
                bytes: text.to_vec(),
            },
            load_segments: image.load_segments()?,
        })
    }

    /// The target id from `e_flags`.
    pub fn target(&self) -> &TargetId {
        &self.target
    }

    /// Code object version (from `EI_ABIVERSION`).
    pub fn version(&self) -> CodeObjectVersion {
        self.version
    }

    /// `amdhsa.version` of the metadata note.
    pub fn metadata_version(&self) -> [u32; 2] {
        self.metadata_version
    }

    /// `amdhsa.target` of the metadata note, e.g. `amdgcn-amd-amdhsa--gfx950`.
    pub fn metadata_target(&self) -> Option<&str> {
        self.metadata_target.as_deref()
    }

    /// `amdhsa.printf`: the constant printf formats, each `0:0:<hash in hex>,<format>`, which
    /// the frames of a printf buffer refer to by hash.
    pub fn printf_formats(&self) -> &[String] {
        &self.printf_formats
    }

    /// The global variable called `name` (an ELF object symbol), such as the panic record
    /// `iron_panic` of an Iron code object.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// The dynamic relocations a loader applies after placing the segments (pointers in the
    /// code object's data, and the global offset table's entries for its exported globals).
    pub fn relocations(&self) -> &[Relocation] {
        &self.relocations
    }

    /// All kernels, in metadata order.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Result<&Kernel> {
        self.kernels
            .iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| CodeObjectError::NoSuchKernel(name.to_owned()))
    }

    /// The `.text` section and its load address.
    pub fn text(&self) -> &CodeSection {
        &self.text
    }

    /// The `PT_LOAD` segments a loader maps (code, read-only data, data).
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.load_segments
    }
}

/// The code object to load on a device with target id `device`, from either a bare code
/// object (which must suit the device) or an offload bundle (whose matching entry is taken).
pub fn code_object_for(image: &[u8], device: &TargetId) -> Result<CodeObject> {
    if is_bundle(image) {
        let bundle = Bundle::parse(image)?;
        return CodeObject::parse(&bundle.select(device)?.data);
    }
    let code_object = CodeObject::parse(image)?;
    if !code_object.target().can_run_on(device) {
        return Err(CodeObjectError::NoMatchingTarget {
            wanted: device.to_string(),
            available: code_object.target().to_string(),
        });
    }
    Ok(code_object)
}
