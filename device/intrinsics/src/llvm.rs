//! LLVM intrinsics that `core::arch::amdgpu` does not offer, declared once for the modules of this
//! crate.

unsafe extern "C" {
    /// `s_waitcnt` with an immediate: 0 waits for every outstanding memory operation (gfx9, gfx11).
    #[cfg(not(iron_gfx = "gfx1201"))]
    #[link_name = "llvm.amdgcn.s.waitcnt"]
    pub fn s_waitcnt(imm: i32);
    /// gfx12: wait until at most `imm` LDS operations are outstanding.
    #[cfg(iron_gfx = "gfx1201")]
    #[link_name = "llvm.amdgcn.s.wait.dscnt"]
    pub fn s_wait_dscnt(imm: i16);
    /// gfx12: wait until at most `imm` vector memory loads are outstanding.
    #[cfg(iron_gfx = "gfx1201")]
    #[link_name = "llvm.amdgcn.s.wait.loadcnt"]
    pub fn s_wait_loadcnt(imm: i16);
    /// gfx12: wait until at most `imm` vector memory stores are outstanding.
    #[cfg(iron_gfx = "gfx1201")]
    #[link_name = "llvm.amdgcn.s.wait.storecnt"]
    pub fn s_wait_storecnt(imm: i16);
    /// Atomic f32 add on global memory, returning the old value (`global_atomic_add_f32`).
    #[link_name = "llvm.amdgcn.global.atomic.fadd.f32.p0.f32"]
    pub fn global_atomic_fadd_f32(ptr: *mut f32, value: f32) -> f32;
}
