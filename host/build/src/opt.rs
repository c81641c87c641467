//! The `opt` passes the post-LTO module needs before `llc`, which runs none of them:
//!
//! - `always-inline`, when LTO left functions other than kernels. A kernel's calls need a stack
//!   (scratch) and the calling convention's registers, so every function is inlined, as LTO
//!   inlines nearly everything on its own; what it leaves are cold paths, such as the panic
//!   handler's record (`iron_intrinsics`' `panic` module) or `core`'s string-slicing failure.
//!   Such functions get `alwaysinline` (and lose `noinline`) here; a recursive one stays a call.
//!   The integer value of a generic pointer to a local (`ptrtoint` of an `addrspacecast` of a
//!   private `alloca`) is rebuilt as its high 32 bits and the local's private address: the
//!   private aperture is 4 GiB-aligned, so a local's generic address ends in its private one.
//!   `fmt::Arguments::as_str` tests the low bit of its argument pointer, which for a formatted
//!   message is a local's address; LLVM does not know that the cast keeps the low bits, and
//!   without the rewrite the test keeps the message's locals in scratch at every bounds check.
//!   `sroa` then makes the inlined functions' locals registers again (after `instcombine` has
//!   folded the null checks of their addresses, which `sroa` cannot see through), with
//!   `early-cse` and `simplifycfg` to clean up. `globaldce` runs before the inlining (what the
//!   panic step, `panics`, left unreachable: `core`'s failures no kernel calls, their formatting
//!   code, the recorders no kernel needs) and after it (the functions and constants the inlined
//!   code no longer refers to, such as the `Display` and `Debug` code of a panic's arguments),
//!   so that a code object holds nothing its kernels do not run.
//! - `infer-address-spaces`, when the module has static LDS (`static_lds`) or prints
//!   (`printf`): their accesses are generic pointers to LDS or global memory, which this pass
//!   turns back into `ds_*` and `global_*` accesses.

use crate::error::{Context, Result};
use crate::toolchain::{Tools, run};
use std::collections::HashMap;
use std::path::Path;

/// `ir` with every function other than a kernel marked `alwaysinline` and `noinline` dropped,
/// and whether there was any such function.
pub fn mark_always_inline(ir: &str) -> (String, bool) {
    let mut found = false;
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.lines() {
        if line.starts_with("define ")
            && !line.contains(" amdgpu_kernel ")
            && let Some(head) = line.trim_end().strip_suffix('{')
        {
            found = true;
            out.push_str(head.trim_end());
            out.push_str(" alwaysinline {\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if !found {
        return (ir.to_string(), false);
    }
    let out = out
        .lines()
        .map(|line| {
            if line.starts_with("attributes #") {
                line.replace(" noinline ", " ")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    (out, true)
}

/// `ir` with the integer value of every generic pointer to a local rebuilt from the local's
/// private address (see the module docs).
fn rewrite_local_addresses(ir: &str) -> String {
    let mut casts: HashMap<String, String> = HashMap::new();
    let mut allocas: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut marked = String::with_capacity(ir.len() + 4096);
    for line in ir.lines() {
        if line.starts_with("define ") {
            casts.clear();
            allocas.clear();
        }
        if let Some(name) = private_alloca(line) {
            allocas.push(name.to_string());
        } else if let Some((cast, alloca)) = cast_of_alloca(line, &allocas) {
            casts.insert(cast.to_string(), alloca.to_string());
        } else if let Some((result, alloca)) = address_of_cast(line, &casts) {
            let name = format!("%iron.local.{count}");
            count += 1;
            let flat = line
                .trim_start()
                .split_once(" = ")
                .map_or("", |(_, rhs)| rhs);
            marked.push_str(&format!(
                "  {name}.flat = {flat}\n  {name}.high = and i64 {name}.flat, -4294967296\n  \
                 {name}.low32 = ptrtoint ptr addrspace(5) {alloca} to i32\n  \
                 {name}.low = zext i32 {name}.low32 to i64\n  \
                 {result} = or disjoint i64 {name}.high, {name}.low\n"
            ));
            continue;
        }
        marked.push_str(line);
        marked.push('\n');
    }
    marked
}

/// `%name` when `line` is `%name = alloca ..., addrspace(5)`.
fn private_alloca(line: &str) -> Option<&str> {
    let (name, rest) = line.trim_start().split_once(" = alloca ")?;
    (rest.ends_with("addrspace(5)") && name.starts_with('%')).then_some(name)
}

/// `(%cast, %alloca)` when `line` casts one of `allocas` to a generic pointer.
fn cast_of_alloca<'a>(line: &'a str, allocas: &[String]) -> Option<(&'a str, &'a str)> {
    let (cast, rest) = line
        .trim_start()
        .split_once(" = addrspacecast ptr addrspace(5) ")?;
    let alloca = rest.strip_suffix(" to ptr")?;
    allocas
        .iter()
        .any(|a| a == alloca)
        .then_some((cast, alloca))
}

/// `(%result, %alloca)` when `line` is `%result = ptrtoint ptr %cast to i64` of one of `casts`.
fn address_of_cast<'a>(
    line: &'a str,
    casts: &'a HashMap<String, String>,
) -> Option<(&'a str, &'a str)> {
    let (result, rest) = line.trim_start().split_once(" = ptrtoint ptr ")?;
    let cast = rest.strip_suffix(" to i64")?;
    casts.get(cast).map(|alloca| (result, alloca.as_str()))
}

/// `ir` after the passes it needs (unchanged when it needs none); `dir` holds the intermediate
/// file. `inline`: [`mark_always_inline`] found functions to inline.
pub fn run_passes(tools: &Tools, ir: String, inline: bool, dir: &Path) -> Result<String> {
    let static_lds = ir.contains(" = internal addrspace(3) global ") && ir.contains("@iron.lds.");
    let infer = static_lds || ir.contains("%iron.print.");
    match (inline, infer) {
        (false, false) => Ok(ir),
        (false, true) => opt(tools, &ir, "infer-address-spaces", dir),
        (true, _) => {
            let inlined = opt(
                tools,
                &ir,
                "globaldce,always-inline,function(instcombine,sroa,early-cse)",
                dir,
            )?;
            opt(
                tools,
                &rewrite_local_addresses(&inlined),
                "function(instcombine,infer-address-spaces,sroa,early-cse,simplifycfg),globaldce",
                dir,
            )
        }
    }
}

/// `ir` after `opt -passes=<passes>`; `dir` holds the intermediate file.
fn opt(tools: &Tools, ir: &str, passes: &str, dir: &Path) -> Result<String> {
    let path = dir.join("kernels.opt.ll");
    std::fs::write(&path, ir).context(|| format!("cannot write {}", path.display()))?;
    let optimized = run(tools
        .command(&tools.opt)
        .args(["-S", &format!("-passes={passes}")])
        .arg(&path)
        .arg("-o")
        .arg("-"))?;
    std::fs::remove_file(&path).context(|| format!("cannot remove {}", path.display()))?;
    String::from_utf8(optimized).context(|| "opt printed non-UTF-8 IR".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_other_than_kernels_are_marked_always_inline() {
        let ir = "define amdgpu_kernel void @k() #0 {\n  ret void\n}\n\
                  define internal fastcc void @cold() unnamed_addr #1 {\n  unreachable\n}\n\
                  attributes #1 = { cold noinline nounwind }\n";
        let (out, found) = mark_always_inline(ir);
        assert!(found);
        assert!(out.contains("define amdgpu_kernel void @k() #0 {\n"));
        assert!(
            out.contains("define internal fastcc void @cold() unnamed_addr #1 alwaysinline {\n")
        );
        assert!(out.contains("attributes #1 = { cold nounwind }\n"), "{out}");
        let locals = "define amdgpu_kernel void @k() #0 {\n  %a = alloca [16 x i8], align 8, addrspace(5)\n  \
                      %p = addrspacecast ptr addrspace(5) %a to ptr\n  \
                      %7 = ptrtoint ptr %p to i64\n  %q = ptrtoint ptr %r to i64\n  ret void\n}\n\
                      define internal void @f() #1 {\n  unreachable\n}\n";
        let out = rewrite_local_addresses(locals);
        assert!(
            out.contains(
                "  %iron.local.0.flat = ptrtoint ptr %p to i64\n  \
             %iron.local.0.high = and i64 %iron.local.0.flat, -4294967296\n  \
             %iron.local.0.low32 = ptrtoint ptr addrspace(5) %a to i32\n  \
             %iron.local.0.low = zext i32 %iron.local.0.low32 to i64\n  \
             %7 = or disjoint i64 %iron.local.0.high, %iron.local.0.low\n  \
             %q = ptrtoint ptr %r to i64\n"
            ),
            "{out}"
        );
        let kernels_only = "define amdgpu_kernel void @k() #0 {\n  ret void\n}\n";
        assert_eq!(
            mark_always_inline(kernels_only),
            (kernels_only.to_string(), false)
        );
    }
}
