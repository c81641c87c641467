//! Global memory through a buffer resource: the hardware checks each access against the
//! buffer's size, so an access outside it reads 0 and writes nothing, without a branch.
//!
//! This is how a kernel writes the edge of a tile without per-element exec-mask updates: it
//! gives the elements it must not touch the offset [`OUTSIDE`]. A [`Buffer`] is a raw buffer
//! (stride 0, no swizzling): an access of `bytes` at `offset` is checked one 32-bit word at a
//! time, each word out of range when its end passes the buffer's size (AMD's ISA guides, "range
//! checking"; LLVM AMDGPUUsage: multi-word accesses are range-checked per 32-bit word). The
//! descriptor must be wave-uniform, which it is when built from kernel arguments and workgroup
//! ids: LLVM serialises the access over the lanes' descriptors otherwise.
//!
//! ```ignore
//! use iron_intrinsics::buffer::{Buffer, OUTSIDE};
//! // The last workgroup's lanes past `n` write nothing, with no branch.
//! let out = Buffer::new(y, n * 4);
//! let offset = if i < n { i * 4 } else { OUTSIDE };
//! unsafe { out.store_u32(offset, value.to_bits()) };
//! ```

/// An offset past every [`Buffer`] (their sizes are at most `2^31` bytes), for the accesses a
/// lane must not make: add it to (or use it instead of) an offset below `2^31` and the access
/// lies outside.
pub const OUTSIDE: u32 = 1 << 31;

/// Four 32-bit words: a buffer resource descriptor.
#[cfg_attr(target_arch = "amdgpu", repr(simd))]
#[cfg_attr(
    not(target_arch = "amdgpu"),
    allow(dead_code, reason = "read by the GPU's buffer instructions only")
)]
#[derive(Clone, Copy)]
struct U32x4([u32; 4]);

crate::arch::gpu_extern! { "unadjusted" {
    /// Stores a 16-bit value at byte `offset` (range-checked) plus `soffset` (not checked).
    #[link_name = "llvm.amdgcn.raw.buffer.store.i16"]
    fn raw_store_u16(value: u16, rsrc: U32x4, offset: u32, soffset: u32, aux: i32);
    /// Stores a word.
    #[link_name = "llvm.amdgcn.raw.buffer.store.i32"]
    fn raw_store_u32(value: u32, rsrc: U32x4, offset: u32, soffset: u32, aux: i32);
    /// Loads a 16-bit value (0 outside).
    #[link_name = "llvm.amdgcn.raw.buffer.load.i16"]
    fn raw_load_u16(rsrc: U32x4, offset: u32, soffset: u32, aux: i32) -> u16;
    /// Loads a word.
    #[link_name = "llvm.amdgcn.raw.buffer.load.i32"]
    fn raw_load_u32(rsrc: U32x4, offset: u32, soffset: u32, aux: i32) -> u32;
}}

/// Word 3 of a raw buffer descriptor: destination selects X, Y, Z, W and a 32-bit float data
/// format (which untyped accesses ignore but must not be zero); on RDNA also `OOB_SELECT` 3
/// (out of range when `offset + size > size of the buffer`), the check of a raw buffer. As
/// Mesa's raw buffer descriptors set it (`ac_build_raw_buffer_descriptor`).
const WORD3: u32 = if cfg!(iron_family = "rdna") {
    // DST_SEL_XYZW | FORMAT 22 (32_FLOAT) << 12 | OOB_SELECT 3 << 28.
    0xFAC | (22 << 12) | (3 << 28)
} else {
    // DST_SEL_XYZW | NUM_FORMAT 7 (FLOAT) << 12 | DATA_FORMAT 4 (32) << 15.
    0xFAC | (7 << 12) | (4 << 15)
};

/// A raw buffer of at most `2^31` bytes of global memory: its accesses, at byte offsets from its
/// base, are range-checked by the hardware (see the module docs).
#[derive(Clone, Copy)]
pub struct Buffer {
    /// The resource descriptor.
    rsrc: U32x4,
}

impl Buffer {
    /// The buffer of the `bytes` bytes at `base` (`bytes` is clamped to `2^31`, so that
    /// [`OUTSIDE`] lies past it). Wave-uniform arguments only.
    #[inline(always)]
    pub fn new<T>(base: *const T, bytes: u32) -> Self {
        let address = base as u64;
        Buffer {
            rsrc: U32x4([
                address as u32,
                // Stride 0, no swizzling: the high 16 bits of the 48-bit address only.
                (address >> 32) as u32 & 0xFFFF,
                bytes.min(OUTSIDE),
                WORD3,
            ]),
        }
    }

    /// Stores `value` at byte `offset`, unless it lies outside the buffer.
    ///
    /// # Safety
    /// Inside the buffer, `offset` must be 2-byte aligned and the memory writable.
    #[inline(always)]
    pub unsafe fn store_u16(self, offset: u32, value: u16) {
        // SAFETY: as the caller guarantees; the hardware drops what lies outside.
        unsafe { raw_store_u16(value, self.rsrc, offset, 0, 0) }
    }

    /// Stores `value` at byte `offset`, unless it lies outside the buffer.
    ///
    /// # Safety
    /// Inside the buffer, `offset` must be 4-byte aligned and the memory writable.
    #[inline(always)]
    pub unsafe fn store_u32(self, offset: u32, value: u32) {
        // SAFETY: as the caller guarantees; the hardware drops what lies outside.
        unsafe { raw_store_u32(value, self.rsrc, offset, 0, 0) }
    }

    /// The 16-bit value at byte `offset`, 0 outside the buffer.
    ///
    /// # Safety
    /// Inside the buffer, `offset` must be 2-byte aligned and the memory readable.
    #[inline(always)]
    pub unsafe fn load_u16(self, offset: u32) -> u16 {
        // SAFETY: as the caller guarantees; the hardware reads 0 outside.
        unsafe { raw_load_u16(self.rsrc, offset, 0, 0) }
    }

    /// The word at byte `offset`, 0 outside the buffer.
    ///
    /// # Safety
    /// Inside the buffer, `offset` must be 4-byte aligned and the memory readable.
    #[inline(always)]
    pub unsafe fn load_u32(self, offset: u32) -> u32 {
        // SAFETY: as the caller guarantees; the hardware reads 0 outside.
        unsafe { raw_load_u32(self.rsrc, offset, 0, 0) }
    }
}
