//! One kernel of a code object: its metadata, descriptor and machine code, found through the
//! ELF symbols and checked against each other.

use super::descriptor::{KERNEL_DESCRIPTOR_SIZE, KernelDescriptor};
use super::elf::{ElfImage, ElfSymbol};
use super::error::{CodeObjectError, Result};
use super::metadata::KernelMetadata;

/// One kernel: metadata, descriptor and machine code, cross-checked against each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    metadata: KernelMetadata,
    descriptor: KernelDescriptor,
    descriptor_address: u64,
    entry_address: u64,
    code: Vec<u8>,
    accum_offset: Option<u32>,
}

impl Kernel {
    /// Kernel name.
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// What the metadata note says about the kernel.
    pub fn metadata(&self) -> &KernelMetadata {
        &self.metadata
    }

    /// The kernel descriptor.
    pub fn descriptor(&self) -> &KernelDescriptor {
        &self.descriptor
    }

    /// Load address of the kernel descriptor (`<name>.kd`).
    pub fn descriptor_address(&self) -> u64 {
        self.descriptor_address
    }

    /// Load address of the first instruction: the descriptor address plus its entry offset.
    pub fn entry_address(&self) -> u64 {
        self.entry_address
    }

    /// Machine code from the entry to the end of the kernel's function symbol.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// Wave size: 32 or 64.
    pub fn wave_size(&self) -> u32 {
        self.metadata.wavefront_size
    }

    /// First AGPR index in the unified register file (gfx90a and later CDNA), from
    /// `COMPUTE_PGM_RSRC3.ACCUM_OFFSET`; `None` on targets without AGPRs in the VGPR file.
    pub fn accum_offset(&self) -> Option<u32> {
        self.accum_offset
    }
}

fn kernel_error(kernel: &KernelMetadata, problem: String) -> CodeObjectError {
    CodeObjectError::BadKernel {
        kernel: kernel.name.clone(),
        problem,
    }
}

/// Finds a kernel's descriptor and code, and checks them against its metadata.
pub(super) fn read_kernel(
    image: &ElfImage<'_>,
    symbols: &[ElfSymbol<'_>],
    metadata: KernelMetadata,
    unified_vector_registers: bool,
) -> Result<Kernel> {
    check_metadata(&metadata)?;
    let kd_symbol = symbols
        .iter()
        .find(|s| !s.is_function && s.name == metadata.symbol.as_bytes())
        .ok_or_else(|| CodeObjectError::MissingKernelDescriptor {
            kernel: metadata.name.clone(),
            symbol: metadata.symbol.clone(),
        })?;
    let kd_bytes = image
        .bytes_at(kd_symbol.value, KERNEL_DESCRIPTOR_SIZE as u64)
        .ok_or_else(|| {
            kernel_error(
                &metadata,
                format!(
                    "kernel descriptor at 0x{:x} is not inside a loaded section",
                    kd_symbol.value
                ),
            )
        })?;
    let descriptor = KernelDescriptor::parse(kd_bytes)?;
    let entry_address = kd_symbol
        .value
        .checked_add_signed(descriptor.kernel_code_entry_byte_offset)
        .ok_or_else(|| {
            kernel_error(&metadata, "entry offset overflows the address space".into())
        })?;
    check_descriptor(&metadata, &descriptor)?;

    let code_end = code_end(image, symbols, entry_address).ok_or_else(|| {
        kernel_error(
            &metadata,
            format!("no function symbol covers the entry point 0x{entry_address:x}"),
        )
    })?;
    let code_len = code_end - entry_address;
    let code = image.bytes_at(entry_address, code_len).ok_or_else(|| {
        kernel_error(
            &metadata,
            format!(
                "code at 0x{entry_address:x} (+{code_len} bytes) is not inside a loaded section"
            ),
        )
    })?;
    Ok(Kernel {
        accum_offset: unified_vector_registers.then(|| descriptor.rsrc3_cdna().accum_offset),
        descriptor,
        descriptor_address: kd_symbol.value,
        entry_address,
        code: code.to_vec(),
        metadata,
    })
}

/// Where the code of the kernel entered at `entry` ends: the end of the function symbol that
/// covers it, or, for a function symbol at the entry without a size (assembly written without
/// `.size`, which the hardware never needs), the next function symbol or the end of the
/// section, whichever comes first. `None` when no function symbol covers or starts at `entry`.
fn code_end(image: &ElfImage<'_>, symbols: &[ElfSymbol<'_>], entry: u64) -> Option<u64> {
    let functions = || symbols.iter().filter(|s| s.is_function);
    if let Some(end) = functions()
        .filter(|s| s.size > 0 && s.value <= entry)
        .find_map(|s| s.value.checked_add(s.size).filter(|&end| entry < end))
    {
        return Some(end);
    }
    functions().find(|s| s.size == 0 && s.value == entry)?;
    let section_end = image.section_end(entry)?;
    let next = functions()
        .map(|s| s.value)
        .filter(|&start| start > entry)
        .min();
    Some(next.map_or(section_end, |next| next.min(section_end)))
}

/// Largest kernarg segment accepted. Compilers emit a few KiB; every launch allocates the
/// segment, so a malformed file must not make it gigabytes.
const MAX_KERNARG_SEGMENT_SIZE: u32 = 1 << 20;

/// Checks the metadata's own consistency: wave size, kernarg segment size and argument
/// placement.
fn check_metadata(metadata: &KernelMetadata) -> Result<()> {
    if metadata.wavefront_size != 32 && metadata.wavefront_size != 64 {
        return Err(kernel_error(
            metadata,
            format!(
                "wavefront size {} is neither 32 nor 64",
                metadata.wavefront_size
            ),
        ));
    }
    if metadata.kernarg_segment_size > MAX_KERNARG_SEGMENT_SIZE {
        return Err(kernel_error(
            metadata,
            format!(
                "kernarg segment of {} bytes exceeds the {MAX_KERNARG_SEGMENT_SIZE}-byte limit",
                metadata.kernarg_segment_size
            ),
        ));
    }
    for (index, arg) in metadata.args.iter().enumerate() {
        let end = u64::from(arg.offset) + u64::from(arg.size);
        if end > u64::from(metadata.kernarg_segment_size) {
            return Err(kernel_error(
                metadata,
                format!(
                    "argument {index} (offset {}, size {}) ends past the {}-byte kernarg segment",
                    arg.offset, arg.size, metadata.kernarg_segment_size
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that the descriptor agrees with the metadata where both record the same fact.
fn check_descriptor(metadata: &KernelMetadata, descriptor: &KernelDescriptor) -> Result<()> {
    if descriptor.wave_size() != metadata.wavefront_size {
        return Err(kernel_error(
            metadata,
            format!(
                "descriptor says wave{}, metadata says wave{}",
                descriptor.wave_size(),
                metadata.wavefront_size
            ),
        ));
    }
    if descriptor.kernarg_size != metadata.kernarg_segment_size {
        return Err(kernel_error(
            metadata,
            format!(
                "descriptor kernarg size {} differs from metadata kernarg segment size {}",
                descriptor.kernarg_size, metadata.kernarg_segment_size
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CodeObject;
    use crate::hand_made::{ElfBuilder, arg, descriptor_bytes, kernel_metadata, sample_kernels};

    /// The sample object's `add` kernel with a kernarg segment of `size` bytes.
    fn with_kernarg_size(size: u32) -> Vec<u8> {
        let mut kernels = sample_kernels();
        let args = vec![arg(0, 8, "global_buffer", Some("a"))];
        kernels[0].metadata = kernel_metadata("add", size, 64, args);
        kernels[0].descriptor = descriptor_bytes(256, 16, size, 0x00af_0081, 0x84, 2, 0x0008);
        ElfBuilder::new(kernels).build()
    }

    #[test]
    fn kernarg_segments_above_the_limit_are_refused() {
        CodeObject::parse(&with_kernarg_size(MAX_KERNARG_SEGMENT_SIZE)).unwrap();
        for size in [MAX_KERNARG_SEGMENT_SIZE + 1, u32::MAX] {
            let error = CodeObject::parse(&with_kernarg_size(size)).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "kernel 'add': kernarg segment of {size} bytes exceeds the 1048576-byte limit"
                )
            );
        }
    }
}
