//! Static LDS for device code.
//!
//! Rust cannot declare a variable in LDS (address space 3): its statics live in global memory.
//! Device code instead asks for each static LDS array (`iron_intrinsics::lds::array!`) with a
//! call `iron.lds.static(bytes, align, site)` to a marker that is declared, never defined, and
//! has no side effects, so that LLVM merges and hoists the calls like addresses. Here each
//! distinct `(site, bytes, align)` becomes an LDS variable of that size and alignment, and
//! every call becomes the variable's address (an address-space cast to a generic pointer).
//! `llc` does not infer address spaces, so a module with static LDS then goes through `opt`'s
//! `infer-address-spaces` ([`crate::opt`]), which turns the generic accesses back into LDS ones
//! (`ds_*`, not `flat_*`). `llc` lays the variables out as the kernel's static LDS
//! (`.group_segment_fixed_size`), with dynamic LDS after them. The marker's declaration is
//! removed; a marker used in any other way, or with arguments that are not constants, is an
//! error.

use crate::error::{Result, bail};
use std::collections::BTreeSet;

const MARKER: &str = "@iron.lds.static";

/// The largest LDS any gfx gives a workgroup (gfx950: 160 KiB).
const MAX_BYTES: u64 = 160 * 1024;

/// One static LDS variable: its site id, size and alignment.
type Variable = (u64, u64, u64);

/// Replaces every call to the static-LDS marker in the IR module `ir` with the address of its
/// LDS variable, defines those variables and drops the marker's declaration.
pub fn apply_static_lds(ir: &str) -> Result<String> {
    let mut out = String::with_capacity(ir.len());
    let mut variables = BTreeSet::new();
    for line in ir.lines() {
        if line.starts_with("declare ") && line.contains(MARKER) {
            continue;
        }
        if let Some((result, variable)) = marker_call(line)? {
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(&format!(
                "{indent}{result} = addrspacecast ptr addrspace(3) {} to ptr",
                name(variable)
            ));
            variables.insert(variable);
        } else if line.contains(MARKER) {
            bail!("the static LDS marker is used other than by a direct call: {line}");
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    for variable @ (_, bytes, align) in variables {
        out.push_str(&format!(
            "{} = internal addrspace(3) global [{bytes} x i8] poison, align {align}\n",
            name(variable)
        ));
    }
    Ok(out)
}

/// The LLVM name of a static LDS variable.
fn name((site, bytes, align): Variable) -> String {
    format!("@iron.lds.{site:016x}.{bytes}.{align}")
}

/// The call's result name and its variable when `line` is `%r = [tail] call ptr
/// @iron.lds.static(i32 bytes, i32 align, i64 site)`.
fn marker_call(line: &str) -> Result<Option<(&str, Variable)>> {
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
    let Some(args) = call[at + MARKER.len()..]
        .strip_prefix('(')
        .and_then(|rest| rest.split_once(')'))
        .map(|(args, _)| args)
    else {
        bail!("unreadable static LDS marker call: {line}");
    };
    let values: Vec<Option<u64>> = args.split(", ").map(constant).collect();
    let [Some(bytes), Some(align), Some(site)] = values[..] else {
        bail!(
            "a static LDS array's size, alignment and site must be constants after \
             optimization: {line}"
        );
    };
    if bytes == 0 || bytes > MAX_BYTES || !align.is_power_of_two() {
        bail!("a static LDS array of {bytes} bytes aligned to {align} is not valid: {line}");
    }
    Ok(Some((result, (site, bytes, align))))
}

/// The value of an integer argument such as `i64 noundef -5`, as its 64-bit pattern.
fn constant(arg: &str) -> Option<u64> {
    let value = arg.split_whitespace().last()?;
    value
        .parse::<u64>()
        .ok()
        .or_else(|| value.parse::<i64>().ok().map(|v| v as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
define amdgpu_kernel void @k(ptr addrspace(1) %x) #0 {
  %a = tail call noundef ptr @iron.lds.static(i32 noundef 1024, i32 noundef 4, i64 noundef -7) #11
  %b = tail call noundef ptr @iron.lds.static(i32 noundef 8, i32 noundef 8, i64 noundef 42) #11
  %c = call ptr @iron.lds.static(i32 1024, i32 4, i64 -7)
  store i32 1, ptr %a, align 4
  ret void
}
declare noundef ptr @iron.lds.static(i32 noundef, i32 noundef, i64 noundef) unnamed_addr #6
";

    #[test]
    fn each_site_becomes_one_lds_variable_and_calls_become_its_address() {
        let out = apply_static_lds(MODULE).unwrap();
        assert!(!out.contains(MARKER), "{out}");
        let first = "@iron.lds.fffffffffffffff9.1024.4";
        assert!(out.contains(&format!(
            "  %a = addrspacecast ptr addrspace(3) {first} to ptr\n"
        )));
        assert!(out.contains(&format!(
            "  %c = addrspacecast ptr addrspace(3) {first} to ptr\n"
        )));
        assert!(out.contains(
            "  %b = addrspacecast ptr addrspace(3) @iron.lds.000000000000002a.8.8 to ptr\n"
        ));
        assert_eq!(
            out.matches(" = internal addrspace(3) global ").count(),
            2,
            "{out}"
        );
        assert!(out.contains(&format!(
            "{first} = internal addrspace(3) global [1024 x i8] poison, align 4\n"
        )));
        assert!(out.contains("  store i32 1, ptr %a, align 4\n"));
    }

    #[test]
    fn other_uses_and_unresolved_arguments_are_errors() {
        let stored = "  store ptr @iron.lds.static, ptr %p, align 8\n";
        let e = apply_static_lds(stored).unwrap_err().to_string();
        assert!(e.contains("other than by a direct call"), "{e}");
        let variable = "  %a = call ptr @iron.lds.static(i32 %n, i32 4, i64 1)\n";
        let e = apply_static_lds(variable).unwrap_err().to_string();
        assert!(e.contains("must be constants"), "{e}");
        let huge = "  %a = call ptr @iron.lds.static(i32 999999, i32 4, i64 1)\n";
        assert!(apply_static_lds(huge).is_err());
        let odd = "  %a = call ptr @iron.lds.static(i32 12, i32 3, i64 1)\n";
        assert!(apply_static_lds(odd).is_err());
        assert_eq!(apply_static_lds("ret void\n").unwrap(), "ret void\n");
    }
}
