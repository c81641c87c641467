//! Scoped atomic operations for device code.
//!
//! Rust's atomics (`core::sync::atomic`) all have system scope, which on AMD GPUs means cache
//! write-backs and invalidations far beyond what device memory needs, and floating-point
//! read-modify-writes that LLVM expands to compare-and-swap loops. Device code instead calls a
//! marker function (declared, never defined) whose trailing arguments are constants giving the
//! ordering and the scope; here each call in the LTO'd module becomes the LLVM instruction it
//! names, so that LLVM's memory legalizer emits exactly what that gfx, ordering and scope need:
//! - `T iron.atomic.rmw.<op>.<ty>(ptr, T value, i32 ordering, i32 scope)`: `atomicrmw <op>`;
//! - `T iron.atomic.cmpxchg.<ty>(ptr, T expected, T new, i32 success, i32 failure, i32 scope)`:
//!   `cmpxchg`, giving the value it found;
//! - `T iron.atomic.load.<ty>(ptr, i32 ordering, i32 scope)`: `load atomic`;
//! - `void iron.atomic.store.<ty>(ptr, T value, i32 ordering, i32 scope)`: `store atomic`.
//!
//! Orderings are 0 relaxed (`monotonic`), 1 acquire, 2 release, 3 acq_rel, 4 seq_cst; scopes
//! are 0 wavefront, 1 workgroup, 2 agent, 3 system. Read-modify-writes carry
//! `!amdgpu.no.fine.grained.memory` and a `!noalias.addrspace` that excludes scratch: they act
//! on device memory, so LLVM may use the hardware's atomics and needs no test of whether a
//! generic pointer points to scratch. The markers' declarations are removed; a marker used other than by a direct call, a
//! non-constant ordering or scope, or an ordering the operation cannot have is an error.

use crate::error::{Result, bail};

const PREFIX: &str = "@iron.atomic.";

/// LLVM's orderings, by code.
const ORDERINGS: [&str; 5] = ["monotonic", "acquire", "release", "acq_rel", "seq_cst"];

/// LLVM's sync scopes, by code (system scope is written without one).
const SCOPES: [&str; 4] = ["wavefront", "workgroup", "agent", "system"];

/// The read-modify-write operations on integers and on floats.
const INT_OPS: [&str; 10] = [
    "xchg", "add", "sub", "and", "or", "xor", "max", "min", "umax", "umin",
];
const FLOAT_OPS: [&str; 5] = ["xchg", "fadd", "fsub", "fmax", "fmin"];

/// The metadata kinds marking an access to memory that is not fine-grained, and one to an
/// address space outside a range.
const NOT_FINE_GRAINED: &str = "!amdgpu.no.fine.grained.memory";
const NOT_IN: &str = "!noalias.addrspace";

/// Replaces every call to an atomic marker in the IR module `ir` with its instruction and drops
/// the markers' declarations.
pub fn apply_atomics(ir: &str) -> Result<String> {
    if !ir.contains(PREFIX) {
        return Ok(ir.to_string());
    }
    let empty_node = next_metadata_number(ir);
    let not_private = empty_node + 1;
    let mut out = String::with_capacity(ir.len() + 64);
    let mut temporaries = 0usize;
    let mut used_node = false;
    for line in ir.lines() {
        if line.starts_with("declare ") && line.contains(PREFIX) {
            continue;
        }
        if !line.contains(PREFIX) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let call = Call::parse(line)?;
        let replaced = call.lower([empty_node, not_private], &mut temporaries)?;
        used_node |= call.kind.starts_with("rmw.");
        out.push_str(&replaced);
        out.push('\n');
    }
    if used_node {
        out.push_str(&format!("!{empty_node} = !{{}}\n"));
        // Scratch is address space 5: the range [5, 6).
        out.push_str(&format!("!{not_private} = !{{i32 5, i32 6}}\n"));
    }
    Ok(out)
}

/// The first metadata number the module does not use.
fn next_metadata_number(ir: &str) -> usize {
    ir.lines()
        .filter_map(|l| l.strip_prefix('!'))
        .filter_map(|l| l.split_once(" = ").map(|(n, _)| n))
        .filter_map(|n| n.parse::<usize>().ok())
        .max()
        .map_or(0, |n| n + 1)
}

/// A call to an atomic marker, taken apart.
struct Call<'a> {
    indent: &'a str,
    /// `%x = `, or empty for a call whose value is void.
    result: &'a str,
    /// The marker's name after the prefix: `rmw.add.i32`, `load.i64`, ...
    kind: &'a str,
    /// The arguments: each its type and its value.
    args: Vec<(String, String)>,
    /// Metadata attached to the call (`, !dbg !7`), kept on the instruction.
    metadata: &'a str,
    line: &'a str,
}

impl<'a> Call<'a> {
    fn parse(line: &'a str) -> Result<Call<'a>> {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let (result, rest) = match body.split_once(" = ") {
            Some((name, rest)) if name.starts_with('%') => (&body[..name.len() + 3], rest),
            _ => ("", body),
        };
        let is_call = ["call ", "tail call ", "notail call "]
            .iter()
            .any(|p| rest.starts_with(p));
        let Some(at) = rest.find(PREFIX) else {
            bail!("an atomic marker is used other than by a direct call: {line}");
        };
        let named = &rest[at + PREFIX.len()..];
        let (Some(open), true) = (named.find('('), is_call) else {
            bail!("an atomic marker is used other than by a direct call: {line}");
        };
        let kind = &named[..open];
        let (args, after) = split_args(&named[open + 1..])
            .ok_or_else(|| crate::error::Error::new(format!("unbalanced call: {line}")))?;
        let metadata = after.find(", !").map_or("", |i| &after[i..]);
        Ok(Call {
            indent,
            result,
            kind,
            args: args.iter().map(|a| type_and_value(a)).collect(),
            metadata,
            line,
        })
    }

    /// The instruction(s) the call stands for. `nodes` are the numbers of the empty metadata
    /// node and of the scratch address-space range; `temporaries` counts the names made so far.
    fn lower(&self, nodes: [usize; 2], temporaries: &mut usize) -> Result<String> {
        let line = self.line;
        let (op, ty) = match self.kind.rsplit_once('.') {
            Some((op, ty)) => (op, ty),
            None => bail!("an atomic marker is named iron.atomic.<operation>.<type>: {line}"),
        };
        let (llvm_ty, align) = match ty {
            "i32" => ("i32", 4),
            "i64" => ("i64", 8),
            "f32" => ("float", 4),
            "f64" => ("double", 8),
            _ => bail!("unknown atomic type `{ty}` (one of i32, i64, f32, f64): {line}"),
        };
        let float = ty.starts_with('f');
        let arity = match op {
            "load" => 3,
            "store" => 4,
            "cmpxchg" => 6,
            _ => 4,
        };
        if self.args.len() != arity {
            bail!(
                "`{}` takes {arity} arguments, not {}: {line}",
                self.kind,
                self.args.len()
            );
        }
        let (ptr_ty, ptr) = &self.args[0];
        let value = |i: usize| &self.args[i].1;
        let scope = self.scope(arity - 1)?;
        let ordering = |i: usize| self.ordering(i);
        let (indent, result, metadata) = (self.indent, self.result, self.metadata);
        let no_result = || -> Result<()> {
            if result.is_empty() {
                bail!("an atomic marker's value must be named: {line}");
            }
            Ok(())
        };
        Ok(match op {
            "load" => {
                no_result()?;
                let order = ordering(1)?;
                if order == "release" || order == "acq_rel" {
                    bail!("an atomic load cannot have {order} ordering: {line}");
                }
                format!(
                    "{indent}{result}load atomic {llvm_ty}, {ptr_ty} {ptr} {scope}{order}, align {align}{metadata}"
                )
            }
            "store" => {
                let order = ordering(2)?;
                if order == "acquire" || order == "acq_rel" {
                    bail!("an atomic store cannot have {order} ordering: {line}");
                }
                format!(
                    "{indent}store atomic {llvm_ty} {}, {ptr_ty} {ptr} {scope}{order}, align {align}{metadata}",
                    value(1)
                )
            }
            "cmpxchg" => {
                no_result()?;
                if float {
                    bail!("compare-and-swap takes integers, not {ty}: {line}");
                }
                let (success, failure) = (ordering(3)?, ordering(4)?);
                if failure == "release" || failure == "acq_rel" {
                    bail!("a compare-and-swap cannot fail with {failure} ordering: {line}");
                }
                *temporaries += 1;
                let pair = format!("%iron.cmpxchg.{temporaries}");
                format!(
                    "{indent}{pair} = cmpxchg {ptr_ty} {ptr}, {llvm_ty} {}, {llvm_ty} {} {scope}{success} {failure}, align {align}{metadata}\n\
                     {indent}{result}extractvalue {{ {llvm_ty}, i1 }} {pair}, 0",
                    value(1),
                    value(2)
                )
            }
            _ => {
                no_result()?;
                let Some(rmw) = op.strip_prefix("rmw.") else {
                    bail!(
                        "unknown atomic operation `{op}` (load, store, cmpxchg or rmw.<op>): {line}"
                    );
                };
                let ops: &[&str] = if float { &FLOAT_OPS } else { &INT_OPS };
                if !ops.contains(&rmw) {
                    bail!(
                        "`{rmw}` is no read-modify-write of {ty} (one of {}): {line}",
                        ops.join(", ")
                    );
                }
                let order = ordering(2)?;
                format!(
                    "{indent}{result}atomicrmw {rmw} {ptr_ty} {ptr}, {llvm_ty} {} {scope}{order}, align {align}, {NOT_FINE_GRAINED} !{}, {NOT_IN} !{}{metadata}",
                    value(1),
                    nodes[0],
                    nodes[1]
                )
            }
        })
    }

    /// The ordering constant at argument `i`.
    fn ordering(&self, i: usize) -> Result<&'static str> {
        let code = self.constant(i, "ordering")?;
        ORDERINGS.get(code).copied().ok_or_else(|| {
            crate::error::Error::new(format!(
                "unknown atomic ordering {code} (0 to 4): {}",
                self.line
            ))
        })
    }

    /// The `syncscope(..) ` clause for the scope constant at argument `i`.
    fn scope(&self, i: usize) -> Result<String> {
        let code = self.constant(i, "scope")?;
        match SCOPES.get(code) {
            Some(&"system") => Ok(String::new()),
            Some(scope) => Ok(format!("syncscope(\"{scope}\") ")),
            None => bail!("unknown atomic scope {code} (0 to 3): {}", self.line),
        }
    }

    fn constant(&self, i: usize, what: &str) -> Result<usize> {
        let (ty, value) = &self.args[i];
        match value.parse::<usize>() {
            Ok(code) if ty == "i32" => Ok(code),
            _ => bail!(
                "an atomic's {what} must be a constant known at compile time, not `{ty} {value}`: {}",
                self.line
            ),
        }
    }
}

/// The arguments of a call, split at the top-level commas of `text` (what follows the opening
/// parenthesis), and what follows the closing one; `None` if it is not closed.
fn split_args(text: &str) -> Option<(Vec<&str>, &str)> {
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' if depth == 0 => {
                let last = text[start..i].trim();
                if !last.is_empty() {
                    args.push(last);
                }
                return Some((args, &text[i + 1..]));
            }
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                args.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// An argument's type (`ptr addrspace(1)` included) and its value, its attributes dropped.
fn type_and_value(arg: &str) -> (String, String) {
    let (ty, rest) = match arg.strip_prefix("ptr addrspace(") {
        Some(tail) => match tail.find(')') {
            Some(close) => (&arg[..14 + close + 1], &tail[close + 1..]),
            None => (arg, ""),
        },
        None => arg.split_once(' ').unwrap_or((arg, "")),
    };
    let mut rest = rest.trim_start();
    loop {
        let word = rest.split(' ').next().unwrap_or("");
        let bare = word.split('(').next().unwrap_or("");
        let skip = match bare {
            "noundef"
            | "nonnull"
            | "noalias"
            | "nocapture"
            | "readonly"
            | "writeonly"
            | "signext"
            | "zeroext"
            | "inreg"
            | "dereferenceable"
            | "dereferenceable_or_null"
            | "captures"
            | "noalias.scope" => word.len(),
            "align" => rest
                .splitn(3, ' ')
                .take(2)
                .map(|w| w.len() + 1)
                .sum::<usize>()
                .min(rest.len()),
            _ => break,
        };
        rest = rest[skip..].trim_start();
    }
    (ty.to_string(), rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "\
define amdgpu_kernel void @k(ptr addrspace(1) noundef %p, ptr %q) {
start:
  %0 = tail call i32 @iron.atomic.rmw.add.i32(ptr addrspace(1) noundef align 4 %p, i32 noundef 1, i32 noundef 0, i32 noundef 2) #3
  %1 = call float @iron.atomic.rmw.fadd.f32(ptr %q, float 1.500000e+00, i32 3, i32 3), !dbg !4
  %2 = tail call i64 @iron.atomic.cmpxchg.i64(ptr %q, i64 %x, i64 7, i32 4, i32 1, i32 1)
  %v = tail call i64 @iron.atomic.load.i64(ptr nonnull %q, i32 1, i32 2)
  tail call void @iron.atomic.store.i32(ptr %q, i32 %0, i32 2, i32 0)
  ret void
}

declare i32 @iron.atomic.rmw.add.i32(ptr addrspace(1), i32, i32, i32) unnamed_addr #1
declare void @iron.atomic.store.i32(ptr, i32, i32, i32) unnamed_addr #1

!4 = !{}
";

    #[test]
    fn calls_become_scoped_atomics_and_declarations_go() {
        let out = apply_atomics(IR).unwrap();
        let want = "\
define amdgpu_kernel void @k(ptr addrspace(1) noundef %p, ptr %q) {
start:
  %0 = atomicrmw add ptr addrspace(1) %p, i32 1 syncscope(\"agent\") monotonic, align 4, !amdgpu.no.fine.grained.memory !5, !noalias.addrspace !6
  %1 = atomicrmw fadd ptr %q, float 1.500000e+00 acq_rel, align 4, !amdgpu.no.fine.grained.memory !5, !noalias.addrspace !6, !dbg !4
  %iron.cmpxchg.1 = cmpxchg ptr %q, i64 %x, i64 7 syncscope(\"workgroup\") seq_cst acquire, align 8
  %2 = extractvalue { i64, i1 } %iron.cmpxchg.1, 0
  %v = load atomic i64, ptr %q syncscope(\"agent\") acquire, align 8
  store atomic i32 %0, ptr %q syncscope(\"wavefront\") release, align 4
  ret void
}


!4 = !{}
!5 = !{}
!6 = !{i32 5, i32 6}
";
        assert_eq!(out, want);
    }

    #[test]
    fn ir_without_markers_is_unchanged() {
        let ir = "define void @f() {\n  ret void\n}\n";
        assert_eq!(apply_atomics(ir).unwrap(), ir);
    }

    #[test]
    fn bad_markers_are_errors() {
        for (ir, says) in [
            (
                "  %0 = call i32 @iron.atomic.rmw.add.i32(ptr %p, i32 1, i32 %o, i32 2)\n",
                "must be a constant",
            ),
            (
                "  %0 = call i32 @iron.atomic.load.i32(ptr %p, i32 2, i32 2)\n",
                "load cannot have release",
            ),
            (
                "  call void @iron.atomic.store.i32(ptr %p, i32 1, i32 1, i32 2)\n",
                "store cannot have acquire",
            ),
            (
                "  %0 = call i32 @iron.atomic.cmpxchg.i32(ptr %p, i32 1, i32 2, i32 3, i32 3, i32 2)\n",
                "cannot fail with acq_rel",
            ),
            (
                "  %0 = call float @iron.atomic.cmpxchg.f32(ptr %p, float 1.0, float 2.0, i32 3, i32 1, i32 2)\n",
                "takes integers",
            ),
            (
                "  %0 = call float @iron.atomic.rmw.and.f32(ptr %p, float 1.0, i32 0, i32 2)\n",
                "no read-modify-write of f32",
            ),
            (
                "  %0 = call i16 @iron.atomic.rmw.add.i16(ptr %p, i16 1, i32 0, i32 2)\n",
                "unknown atomic type `i16`",
            ),
            (
                "  %0 = call i32 @iron.atomic.rmw.add.i32(ptr %p, i32 1, i32 5, i32 2)\n",
                "unknown atomic ordering 5",
            ),
            (
                "  %0 = call i32 @iron.atomic.rmw.add.i32(ptr %p, i32 1, i32 0, i32 4)\n",
                "unknown atomic scope 4",
            ),
            (
                "  %0 = call i32 @iron.atomic.rmw.add.i32(ptr %p, i32 1, i32 0)\n",
                "takes 4 arguments, not 3",
            ),
            (
                "  store ptr @iron.atomic.rmw.add.i32, ptr %q\n",
                "other than by a direct call",
            ),
        ] {
            let e = apply_atomics(ir).unwrap_err().to_string();
            assert!(e.contains(says), "{ir}: {e}");
        }
    }
}
