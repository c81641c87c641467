//! LLVM intrinsics that `core::arch::amdgpu` does not offer, declared once for the modules of this
//! crate.

crate::arch::gpu_extern! { "C" {
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
}}

crate::arch::gpu_extern! { "C" {
    /// The kernel's printf buffer (its `hidden_printf_buffer` argument), or null when the host
    /// gave none. Never linked: iron-build's post-LTO step replaces every call with the load of
    /// that argument and marks the module as printing (`llvm.printf.fmts`), so that the code
    /// object's metadata asks the runtime for the buffer. Without side effects, so that calls
    /// merge and hoist.
    #[gpu(unsafe(ffi_const))]
    #[link_name = "iron.print.buffer"]
    pub fn print_buffer() -> *mut u32;
}}

/// Scoped fences: markers that iron-build's post-LTO step turns into
/// `fence syncscope("<scope>") <ordering>`, which Rust cannot write.
pub mod fence {
    /// Declares the marker `iron.fence.<scope>.<ordering>` of each name.
    macro_rules! markers {
        ($($name:ident = $link:literal;)*) => {
            crate::arch::gpu_extern! { "C" {
                $(
                    #[doc = concat!("`fence syncscope` ", $link, ".")]
                    #[link_name = concat!("iron.fence.", $link)]
                    pub fn $name();
                )*
            }}
        };
    }
    markers! {
        wavefront_acquire = "wavefront.acquire";
        wavefront_release = "wavefront.release";
        wavefront_acq_rel = "wavefront.acq_rel";
        wavefront_seq_cst = "wavefront.seq_cst";
        workgroup_acquire = "workgroup.acquire";
        workgroup_release = "workgroup.release";
        workgroup_acq_rel = "workgroup.acq_rel";
        workgroup_seq_cst = "workgroup.seq_cst";
        agent_acquire = "agent.acquire";
        agent_release = "agent.release";
        agent_acq_rel = "agent.acq_rel";
        agent_seq_cst = "agent.seq_cst";
        system_acquire = "system.acquire";
        system_release = "system.release";
        system_acq_rel = "system.acq_rel";
        system_seq_cst = "system.seq_cst";
    }
}
