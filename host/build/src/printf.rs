//! Device printing: gives the kernels that print (`iron_intrinsics::print!`) the HIP runtime's
//! printf buffer.
//!
//! Device code asks for the buffer with a call to the marker `iron.print.buffer()`, declared
//! without side effects and never defined. Here every call becomes the load of the kernel's
//! `hidden_printf_buffer` argument (byte 72 of the implicit arguments in code object v5), as a
//! global pointer cast to a generic one (`opt`'s `infer-address-spaces` then makes the frame
//! stores global ones). The module gets an `llvm.printf.fmts` entry, which makes `llc` name the
//! argument in the kernels' metadata and list the entry as `amdhsa.printf`, which is what makes
//! the HIP runtime allocate the buffer and decode it after the kernel. Device frames carry
//! their format strings inline, so the one entry describes the dropped-output frame.
//!
//! The kernels that print lose the attribute `amdgpu-no-implicitarg-ptr` (inferred during LTO,
//! before the marker meant anything), on a copy of their attribute group, so that the kernels
//! that do not print keep no hidden arguments and the runtime treats them as before.

use crate::error::{Result, bail};
use md5::{Digest, Md5};
use std::collections::{BTreeMap, BTreeSet};

const MARKER: &str = "@iron.print.buffer";

/// The attribute the kernels that print must not carry.
const NO_IMPLICIT_ARGS: &str = "\"amdgpu-no-implicitarg-ptr\"";

/// Byte offset of `hidden_printf_buffer` in the implicit arguments of code object v5.
const PRINTF_BUFFER_OFFSET: u32 = 72;

/// The format of the frame a full buffer leaves (`iron_intrinsics::print`).
pub const DROPPED_FORMAT: &str = "iron: the print buffer is full: output was dropped\n";

/// Replaces the printf-buffer marker's calls in the IR module `ir` (unchanged when it has
/// none) and marks the module and its printing kernels as printing.
pub fn apply_printf(ir: &str) -> Result<String> {
    if !ir.contains(MARKER) {
        return Ok(ir.to_string());
    }
    let mut out = String::with_capacity(ir.len() + 4096);
    let mut printing = BTreeSet::new();
    let mut all_kernels = false;
    let mut current: Option<(bool, &str)> = None;
    let mut count = 0usize;
    let mut declared = false;
    for line in ir.lines() {
        if line.starts_with("declare ") && line.contains(MARKER) {
            continue;
        }
        if line.starts_with("declare ") && line.contains("@llvm.amdgcn.implicitarg.ptr(") {
            declared = true;
        }
        if line.starts_with("define ") {
            current = Some((line.contains(" amdgpu_kernel "), function_name(line)));
        } else if line == "}" {
            current = None;
        }
        if let Some(result) = marker_call(line)? {
            let Some((kernel, name)) = current else {
                bail!("the printf-buffer marker is called outside a function: {line}");
            };
            if kernel {
                printing.insert(name);
            } else {
                all_kernels = true;
            }
            let indent = &line[..line.len() - line.trim_start().len()];
            let name = format!("%iron.print.{count}");
            count += 1;
            out.push_str(&format!(
                "{indent}{name}.args = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()\n\
                 {indent}{name}.slot = getelementptr inbounds i8, ptr addrspace(4) {name}.args, \
                 i64 {PRINTF_BUFFER_OFFSET}\n\
                 {indent}{name}.global = load ptr addrspace(1), ptr addrspace(4) {name}.slot, \
                 align 8\n\
                 {indent}{result} = addrspacecast ptr addrspace(1) {name}.global to ptr\n"
            ));
            continue;
        }
        if line.contains(MARKER) {
            bail!("the printf-buffer marker is used other than by a direct call: {line}");
        }
        out.push_str(line);
        out.push('\n');
    }
    if out.contains("!llvm.printf.fmts") {
        bail!("the module already has printf formats (`llvm.printf.fmts`): a C printf?");
    }
    let out = strip_implicit_args(&out, &printing, all_kernels);
    let mut out = out;
    if !declared {
        out.push_str("declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()\n");
    }
    let id = crate::post_lto::next_metadata_id(&out);
    out.push_str(&format!(
        "!llvm.printf.fmts = !{{!{id}}}\n!{id} = !{{!\"{}\"}}\n",
        escape(&format_entry(DROPPED_FORMAT))
    ));
    Ok(out)
}

/// The `llvm.printf.fmts` entry of a constant format: `0:0:<hash>,<format>`, the hash being
/// the low 64 bits of the format's MD5, in lowercase hex (what the HIP runtime looks a
/// constant-format frame up by).
pub fn format_entry(format: &str) -> String {
    format!("0:0:{:x},{format}", format_hash(format))
}

/// The 64-bit hash a constant-format frame carries for `format`.
pub fn format_hash(format: &str) -> u64 {
    let digest = Md5::digest(format.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("an MD5 digest has 16 bytes"))
}

/// `text` as the inside of an LLVM metadata string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte == b'"' || byte == b'\\' || !(0x20..0x7f).contains(&byte) {
            out.push_str(&format!("\\{byte:02X}"));
        } else {
            out.push(byte as char);
        }
    }
    out
}

/// The name of the function a `define` line defines (empty if unreadable).
fn function_name(define: &str) -> &str {
    define
        .split_once(" @")
        .and_then(|(_, rest)| rest.split_once('('))
        .map_or("", |(name, _)| name)
}

/// The attribute groups (`#N`) a function definition refers to.
fn attribute_groups(define: &str) -> Vec<u32> {
    define
        .split_whitespace()
        .filter_map(|token| token.strip_prefix('#')?.parse().ok())
        .collect()
}

/// Removes [`NO_IMPLICIT_ARGS`] from the kernels named in `printing` (from every attribute
/// group when `everywhere`), on copies of their groups.
fn strip_implicit_args(ir: &str, printing: &BTreeSet<&str>, everywhere: bool) -> String {
    let groups: BTreeMap<u32, &str> = ir
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("attributes #")?;
            let (id, body) = rest.split_once(" = ")?;
            Some((id.parse().ok()?, body))
        })
        .collect();
    let mut next = groups.keys().max().map_or(0, |id| id + 1);
    let printing_groups: BTreeSet<u32> = ir
        .lines()
        .filter(|line| line.starts_with("define ") && printing.contains(function_name(line)))
        .flat_map(attribute_groups)
        .collect();
    let copies: BTreeMap<u32, u32> = printing_groups
        .iter()
        .filter(|id| {
            groups
                .get(id)
                .is_some_and(|body| body.contains(NO_IMPLICIT_ARGS))
        })
        .map(|&id| {
            next += 1;
            (id, next - 1)
        })
        .collect();
    let mut out = String::with_capacity(ir.len() + 512 * copies.len());
    for line in ir.lines() {
        if everywhere && line.starts_with("attributes #") {
            out.push_str(&line.replace(&format!("{NO_IMPLICIT_ARGS} "), ""));
        } else if !everywhere && line.starts_with("define ") && line.contains(" amdgpu_kernel ") {
            let renamed: Vec<String> = line
                .split(' ')
                .map(|token| {
                    let copy = token
                        .strip_prefix('#')
                        .and_then(|id| id.parse::<u32>().ok())
                        .and_then(|id| copies.get(&id));
                    match copy {
                        Some(copy) if printing.contains(function_name(line)) => {
                            format!("#{copy}")
                        }
                        _ => token.to_string(),
                    }
                })
                .collect();
            out.push_str(&renamed.join(" "));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !everywhere {
        for (id, copy) in &copies {
            let body = groups[id].replace(&format!("{NO_IMPLICIT_ARGS} "), "");
            out.push_str(&format!("attributes #{copy} = {body}\n"));
        }
    }
    out
}

/// The call's result name when `line` is `%r = [tail] call ptr @iron.print.buffer()`.
fn marker_call(line: &str) -> Result<Option<&str>> {
    let Some((result, call)) = line.trim_start().split_once(" = ") else {
        return Ok(None);
    };
    let Some(at) = call.find(MARKER) else {
        return Ok(None);
    };
    let head = &call[..at];
    if !result.starts_with('%') || !(head.starts_with("call ") || head.contains(" call ")) {
        return Ok(None);
    }
    if !call[at + MARKER.len()..].starts_with("()") {
        bail!("unreadable printf-buffer marker call: {line}");
    }
    Ok(Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
define amdgpu_kernel void @prints(ptr addrspace(1) %x) unnamed_addr #0 \"amdgpu-flat-work-group-size\"=\"1,256\" {
  %b = tail call noundef ptr @iron.print.buffer() #5
  store i32 1, ptr %b, align 4
  ret void
}
define amdgpu_kernel void @quiet(ptr addrspace(1) %x) unnamed_addr #0 {
  ret void
}
declare noundef ptr @iron.print.buffer() unnamed_addr #4
!0 = !{i32 1}
attributes #0 = { nounwind \"amdgpu-no-implicitarg-ptr\" \"target-cpu\"=\"gfx950\" }
attributes #4 = { nounwind }
";

    #[test]
    fn calls_become_the_hidden_argument_and_only_printing_kernels_keep_implicit_args() {
        let out = apply_printf(MODULE).unwrap();
        assert!(!out.contains(MARKER), "{out}");
        assert!(out.contains(
            "  %iron.print.0.slot = getelementptr inbounds i8, ptr addrspace(4) \
             %iron.print.0.args, i64 72\n"
        ));
        assert!(
            out.contains("  %b = addrspacecast ptr addrspace(1) %iron.print.0.global to ptr\n")
        );
        assert!(out.contains("declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()\n"));
        assert!(
            out.contains(
                "define amdgpu_kernel void @prints(ptr addrspace(1) %x) unnamed_addr #5 \
             \"amdgpu-flat-work-group-size\"=\"1,256\" {"
            ),
            "{out}"
        );
        assert!(
            out.contains("define amdgpu_kernel void @quiet(ptr addrspace(1) %x) unnamed_addr #0 {")
        );
        assert!(out.contains("attributes #0 = { nounwind \"amdgpu-no-implicitarg-ptr\""));
        assert!(
            out.contains("attributes #5 = { nounwind \"target-cpu\"=\"gfx950\" }\n"),
            "{out}"
        );
        let entry = format_entry(DROPPED_FORMAT).replace('\n', "\\0A");
        assert!(
            out.contains(&format!(
                "!llvm.printf.fmts = !{{!1}}\n!1 = !{{!\"{entry}\"}}\n"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_module_without_prints_is_unchanged_and_stray_uses_are_errors() {
        assert_eq!(apply_printf("ret void\n").unwrap(), "ret void\n");
        let stored = "define void @f() #0 {\n  store ptr @iron.print.buffer, ptr %p, align 8\n}\n";
        assert!(
            apply_printf(stored)
                .unwrap_err()
                .to_string()
                .contains("direct call")
        );
    }

    #[test]
    fn a_printing_helper_strips_the_attribute_from_every_group() {
        let helper = "define internal void @helper() #0 {\n  %b = call ptr @iron.print.buffer()\n  ret void\n}\n\
                      attributes #0 = { \"amdgpu-no-implicitarg-ptr\" nounwind }\n\
                      attributes #1 = { \"amdgpu-no-implicitarg-ptr\" \"x\" }\n";
        let out = apply_printf(helper).unwrap();
        assert!(!out.contains(NO_IMPLICIT_ARGS), "{out}");
    }

    #[test]
    fn format_hashes_are_the_low_half_of_the_md5_digest() {
        // MD5("") = d41d8cd98f00b204e9800998ecf8427e: bytes d4 1d 8c d9 8f 00 b2 04, read
        // little-endian.
        assert_eq!(format_hash(""), 0x04b2_008f_d98c_1dd4);
        assert_eq!(
            format_entry("%d\n"),
            format!("0:0:{:x},%d\n", format_hash("%d\n"))
        );
    }
}
