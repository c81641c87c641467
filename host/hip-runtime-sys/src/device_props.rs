//! The two `hipDeviceProp_t` layouts and the choice between them.
//!
//! HIP 6.0 replaced the 792-byte struct (`hipDeviceProp_t` in HIP 5.x headers, generated) by a
//! 1472-byte one that `hipGetDevicePropertiesR0600` fills; the unversioned
//! `hipGetDeviceProperties` symbol keeps the old layout. Passing the wrong struct to either
//! function makes the runtime write past it or report garbage, so each layout is pinned here by
//! size and offset assertions, and [`DeviceProperties`] remembers which one it holds.
//!
//! Numeric properties are better read with `hipDeviceGetAttribute`, whose attribute numbers are
//! stable across versions; the struct is the only source of the target name (`gcnArchName`).

use crate::generated::{hipDeviceArch_t, hipDeviceProp_t};
use std::ffi::{CStr, c_char, c_int, c_uint};
use std::mem::{offset_of, size_of};

/// A device UUID (`hipUUID`): 16 bytes.
#[repr(C)]
#[derive(Debug, Copy, Clone, Default, PartialEq, Eq)]
pub struct hipUUID {
    /// The UUID's bytes.
    pub bytes: [c_char; 16],
}

/// `hipDeviceProp_tR0600`: the device properties of HIP 6.0 and later, as
/// `hipGetDevicePropertiesR0600` fills them. Field names and order follow the C header.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
#[allow(non_snake_case, missing_docs)]
pub struct hipDeviceProp_tR0600 {
    pub name: [c_char; 256],
    pub uuid: hipUUID,
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: c_uint,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub memPitch: usize,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: c_int,
    pub multiProcessorCount: c_int,
    pub kernelExecTimeoutEnabled: c_int,
    pub integrated: c_int,
    pub canMapHostMemory: c_int,
    pub computeMode: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture1DMipmap: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture2DMipmap: [c_int; 2],
    pub maxTexture2DLinear: [c_int; 3],
    pub maxTexture2DGather: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub maxTexture3DAlt: [c_int; 3],
    pub maxTextureCubemap: c_int,
    pub maxTexture1DLayered: [c_int; 2],
    pub maxTexture2DLayered: [c_int; 3],
    pub maxTextureCubemapLayered: [c_int; 2],
    pub maxSurface1D: c_int,
    pub maxSurface2D: [c_int; 2],
    pub maxSurface3D: [c_int; 3],
    pub maxSurface1DLayered: [c_int; 2],
    pub maxSurface2DLayered: [c_int; 3],
    pub maxSurfaceCubemap: c_int,
    pub maxSurfaceCubemapLayered: [c_int; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: c_int,
    pub ECCEnabled: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub pciDomainID: c_int,
    pub tccDriver: c_int,
    pub asyncEngineCount: c_int,
    pub unifiedAddressing: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub l2CacheSize: c_int,
    pub persistingL2CacheMaxSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub streamPrioritiesSupported: c_int,
    pub globalL1CacheSupported: c_int,
    pub localL1CacheSupported: c_int,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: c_int,
    pub managedMemory: c_int,
    pub isMultiGpuBoard: c_int,
    pub multiGpuBoardGroupID: c_int,
    pub hostNativeAtomicSupported: c_int,
    pub singleToDoublePrecisionPerfRatio: c_int,
    pub pageableMemoryAccess: c_int,
    pub concurrentManagedAccess: c_int,
    pub computePreemptionSupported: c_int,
    pub canUseHostPointerForRegisteredMem: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub maxBlocksPerMultiProcessor: c_int,
    pub accessPolicyMaxWindowSize: c_int,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: c_int,
    pub sparseHipArraySupported: c_int,
    pub hostRegisterReadOnlySupported: c_int,
    pub timelineSemaphoreInteropSupported: c_int,
    pub memoryPoolsSupported: c_int,
    pub gpuDirectRDMASupported: c_int,
    pub gpuDirectRDMAFlushWritesOptions: c_uint,
    pub gpuDirectRDMAWritesOrdering: c_int,
    pub memoryPoolSupportedHandleTypes: c_uint,
    pub deferredMappingHipArraySupported: c_int,
    pub ipcEventSupported: c_int,
    pub clusterLaunch: c_int,
    pub unifiedFunctionPointers: c_int,
    pub reserved: [c_int; 63],
    pub hipReserved: [c_int; 32],
    pub gcnArchName: [c_char; 256],
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
}

impl Default for hipDeviceProp_tR0600 {
    fn default() -> Self {
        // SAFETY: every field is an integer, an array of integers, a bitfield word or a raw
        // pointer, for all of which all-zero bytes are a valid value.
        unsafe { std::mem::zeroed() }
    }
}

// The published layouts: R0600 is 1472 bytes with `gcnArchName` at 1160; the pre-6.0 struct is
// 792 bytes with `gcnArchName` at 396. The rest of the R0600 checks pin the fields a reader is
// likely to use against offsets that follow from the C rules for this field order.
const _: () = {
    assert!(size_of::<hipDeviceProp_tR0600>() == 1472);
    assert!(offset_of!(hipDeviceProp_tR0600, gcnArchName) == 1160);
    assert!(offset_of!(hipDeviceProp_tR0600, uuid) == 256);
    assert!(offset_of!(hipDeviceProp_tR0600, totalGlobalMem) == 288);
    assert!(offset_of!(hipDeviceProp_tR0600, warpSize) == 308);
    assert!(offset_of!(hipDeviceProp_tR0600, multiProcessorCount) == 388);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSharedMemoryPerMultiProcessor) == 1416);
    assert!(offset_of!(hipDeviceProp_tR0600, asicRevision) == 1468);
    assert!(size_of::<hipDeviceArch_t>() == 4);
    assert!(size_of::<hipDeviceProp_t>() == 792);
    assert!(offset_of!(hipDeviceProp_t, gcnArchName) == 396);
};

/// Device properties as one of the two layouts filled them.
#[derive(Debug, Clone)]
pub enum DeviceProperties {
    /// Filled by `hipGetDevicePropertiesR0600` (HIP 6.0 and later).
    R0600(Box<hipDeviceProp_tR0600>),
    /// Filled by the unversioned `hipGetDeviceProperties` of a HIP 5.x runtime.
    Legacy(Box<hipDeviceProp_t>),
}

impl DeviceProperties {
    /// The marketing name (`AMD Instinct MI355X`).
    pub fn name(&self) -> String {
        match self {
            DeviceProperties::R0600(props) => c_text(&props.name),
            DeviceProperties::Legacy(props) => c_text(&props.name),
        }
    }

    /// The target id the runtime reports (`gfx950:sramecc+:xnack-`).
    pub fn gcn_arch_name(&self) -> String {
        match self {
            DeviceProperties::R0600(props) => c_text(&props.gcnArchName),
            DeviceProperties::Legacy(props) => c_text(&props.gcnArchName),
        }
    }

    /// Total device memory in bytes.
    pub fn total_global_mem(&self) -> usize {
        match self {
            DeviceProperties::R0600(props) => props.totalGlobalMem,
            DeviceProperties::Legacy(props) => props.totalGlobalMem,
        }
    }
}

/// The text of a fixed-size C string field, up to its first NUL (or all of it if it has none).
fn c_text(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field.iter().map(|&c| c.to_ne_bytes()[0]).collect();
    match CStr::from_bytes_until_nul(&bytes) {
        Ok(text) => text.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_from(text: &[u8]) -> [c_char; 256] {
        let mut field = [0 as c_char; 256];
        for (slot, &byte) in field.iter_mut().zip(text) {
            *slot = c_char::from_ne_bytes([byte]);
        }
        field
    }

    #[test]
    fn both_layouts_read_the_same_names() {
        let mut r0600 = Box::<hipDeviceProp_tR0600>::default();
        r0600.name = field_from(b"Device A");
        r0600.gcnArchName = field_from(b"gfx950:sramecc+:xnack-");
        r0600.totalGlobalMem = 288 << 30;
        let mut legacy = Box::<hipDeviceProp_t>::default();
        legacy.name = field_from(b"Device B");
        legacy.gcnArchName = field_from(b"gfx90a:sramecc+:xnack-");
        legacy.totalGlobalMem = 64 << 30;

        let r0600 = DeviceProperties::R0600(r0600);
        let legacy = DeviceProperties::Legacy(legacy);
        assert_eq!(r0600.name(), "Device A");
        assert_eq!(r0600.gcn_arch_name(), "gfx950:sramecc+:xnack-");
        assert_eq!(r0600.total_global_mem(), 288 << 30);
        assert_eq!(legacy.name(), "Device B");
        assert_eq!(legacy.gcn_arch_name(), "gfx90a:sramecc+:xnack-");
        assert_eq!(legacy.total_global_mem(), 64 << 30);
    }

    #[test]
    fn unterminated_and_empty_fields_read_without_overrun() {
        let full = [b'x' as c_char; 256];
        assert_eq!(c_text(&full), "x".repeat(256));
        assert_eq!(c_text(&[0 as c_char; 256]), "");
        assert_eq!(c_text(&field_from(b"ab\0cd")), "ab");
    }
}
