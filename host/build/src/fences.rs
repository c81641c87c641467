//! Scoped memory fences for device code.
//!
//! Rust can only write system-scope fences (`core::sync::atomic::fence`), which on AMD GPUs
//! write back and invalidate caches far beyond what a workgroup needs. Device code instead calls
//! a marker function `iron.fence.<scope>.<ordering>` (declared, never defined); here each call in
//! the LTO'd module becomes the LLVM fence it names, `fence syncscope("<scope>") <ordering>`, so
//! that LLVM's memory legalizer emits exactly the waits and cache operations that gfx and scope
//! need. The markers' declarations are removed, and a marker still referenced in any other way
//! is an error.

use crate::error::{Result, bail};

const PREFIX: &str = "@iron.fence.";

/// The LLVM sync scopes a marker may name (`system` is LLVM's default, written without one).
const SCOPES: [&str; 4] = ["wavefront", "workgroup", "agent", "system"];

/// The orderings a fence may have.
const ORDERINGS: [&str; 4] = ["acquire", "release", "acq_rel", "seq_cst"];

/// Replaces every call to a fence marker in the IR module `ir` with its fence and drops the
/// markers' declarations.
pub fn apply_fences(ir: &str) -> Result<String> {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        if line.starts_with("declare ") && line.contains(PREFIX) {
            continue;
        }
        if let Some(fence) = fence_for_call(line)? {
            out.push_str(&fence);
        } else if line.contains(PREFIX) {
            bail!("a fence marker is used other than by a direct call: {line}");
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(out)
}

/// The fence instruction (indented as the call was) when `line` is a call to a fence marker.
fn fence_for_call(line: &str) -> Result<Option<String>> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let call = ["call ", "tail call ", "notail call "]
        .iter()
        .find_map(|p| body.strip_prefix(p));
    let Some(rest) = call.and_then(|c| c.strip_prefix("void ")) else {
        return Ok(None);
    };
    let Some(marker) = rest.strip_prefix(PREFIX) else {
        return Ok(None);
    };
    let Some((name, _)) = marker.split_once("()") else {
        bail!("a fence marker takes no arguments: {line}");
    };
    let Some((scope, ordering)) = name.split_once('.') else {
        bail!("a fence marker is named iron.fence.<scope>.<ordering>: {line}");
    };
    if !SCOPES.contains(&scope) {
        bail!(
            "unknown fence scope `{scope}` (one of {}): {line}",
            SCOPES.join(", ")
        );
    }
    if !ORDERINGS.contains(&ordering) {
        bail!(
            "unknown fence ordering `{ordering}` (one of {}): {line}",
            ORDERINGS.join(", ")
        );
    }
    Ok(Some(if scope == "system" {
        format!("{indent}fence {ordering}")
    } else {
        format!("{indent}fence syncscope(\"{scope}\") {ordering}")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "\
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
start:
  store i32 1, ptr addrspace(1) %p, align 4
  tail call void @iron.fence.workgroup.release() #3
  tail call void @llvm.amdgcn.s.barrier() #3
  call void @iron.fence.workgroup.acquire()
  notail call void @iron.fence.agent.acq_rel() #4
  call void @iron.fence.system.seq_cst()
  ret void
}

declare void @iron.fence.workgroup.release() unnamed_addr #1
declare void @iron.fence.workgroup.acquire() unnamed_addr #1
declare void @llvm.amdgcn.s.barrier() #2
";

    #[test]
    fn calls_become_scoped_fences_and_declarations_go() {
        let out = apply_fences(IR).unwrap();
        let want = "\
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
start:
  store i32 1, ptr addrspace(1) %p, align 4
  fence syncscope(\"workgroup\") release
  tail call void @llvm.amdgcn.s.barrier() #3
  fence syncscope(\"workgroup\") acquire
  fence syncscope(\"agent\") acq_rel
  fence seq_cst
  ret void
}

declare void @llvm.amdgcn.s.barrier() #2
";
        assert_eq!(out, want);
    }

    #[test]
    fn ir_without_markers_is_unchanged() {
        let ir = "define void @f() {\n  ret void\n}\n";
        assert_eq!(apply_fences(ir).unwrap(), ir);
    }

    #[test]
    fn unknown_scopes_orderings_and_other_uses_are_errors() {
        for (ir, says) in [
            (
                "  call void @iron.fence.device.release()\n",
                "unknown fence scope `device`",
            ),
            (
                "  call void @iron.fence.workgroup.relaxed()\n",
                "unknown fence ordering `relaxed`",
            ),
            (
                "  call void @iron.fence.workgroup()\n",
                "iron.fence.<scope>.<ordering>",
            ),
            (
                "  call void @iron.fence.workgroup.release(i32 1)\n",
                "takes no arguments",
            ),
            (
                "  store ptr @iron.fence.workgroup.release, ptr %q\n",
                "other than by a direct call",
            ),
        ] {
            let e = apply_fences(ir).unwrap_err().to_string();
            assert!(e.contains(says), "{ir}: {e}");
        }
    }
}
