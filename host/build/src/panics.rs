//! Panic messages with their values: makes `core`'s failures that format integers or take a
//! message call `iron_intrinsics`' recorders, which write the values into the panic record.
//!
//! `core::panicking::panic_bounds_check`, `core::slice::index::slice_index_fail`,
//! `core::slice::copy_from_slice_impl::len_mismatch_fail`, `core::option::expect_failed` and
//! `core::result::unwrap_failed` are `#[inline(never)]`, so after LTO they are still functions of
//! the module, taking their values (and, being `#[track_caller]`, the caller's location last).
//! Their messages go through `core::fmt`, which the device does not run (the panic handler
//! records constant messages only). Here the body of each becomes a call to the recorder
//! `iron_intrinsics` exports for it (`iron_panic_bounds_check`, ...), which takes the same
//! parameters and records the message `core` would print with its values. The recorders are
//! made internal, and `iron_panic_keep` is deleted: an exported function that calls each of
//! those `core` functions with values LTO cannot know, so that LTO keeps every parameter (it
//! drops a parameter that is the same constant at every call, such as a lone bounds check's
//! location or an array's length, and folds the constant into the body). `opt`'s `globaldce`
//! then removes what no kernel reaches: the recorders, `core`'s functions and their formatting
//! code in a module that does not fail that way.

use crate::error::{Result, bail};

/// Each `core` function, as the path its mangled name spells, and its recorder.
const REDIRECTS: [(&str, &str); 5] = [
    (
        "4core9panicking18panic_bounds_check",
        "iron_panic_bounds_check",
    ),
    (
        "4core5slice5index16slice_index_fail",
        "iron_panic_slice_index_fail",
    ),
    (
        "4core5slice20copy_from_slice_impl17len_mismatch_fail",
        "iron_panic_len_mismatch_fail",
    ),
    ("4core6option13expect_failed", "iron_panic_expect_failed"),
    ("4core6result13unwrap_failed", "iron_panic_unwrap_failed"),
];

/// The function that keeps the `core` functions' parameters through LTO.
const KEEP: &str = "iron_panic_keep";

/// Linkage and visibility words a recorder's definition may carry, replaced by `internal`.
const EXPORTED: [&str; 6] = [
    "external",
    "dso_local",
    "dso_preemptable",
    "default",
    "hidden",
    "protected",
];

/// Redirects `core`'s failures in the IR module `ir` to the recorders (a module without
/// `iron_intrinsics`' panic module is returned unchanged).
pub fn apply_panics(ir: &str) -> Result<String> {
    let lines: Vec<&str> = ir.lines().collect();
    let definitions = definitions(&lines);
    if !definitions.iter().any(|d| d.name == KEEP) {
        return Ok(ir.to_string());
    }
    let recorder = |name: &str| definitions.iter().find(|d| d.name == name);
    let mut out = String::with_capacity(ir.len());
    let mut i = 0;
    while i < lines.len() {
        let Some(definition) = definitions.iter().find(|d| d.start == i) else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        };
        let line = lines[i];
        if definition.name == KEEP {
            i = definition.end + 1;
            continue;
        }
        if REDIRECTS.iter().any(|(_, r)| *r == definition.name) {
            out.push_str(&internal(line)?);
            out.push('\n');
            i += 1;
            continue;
        }
        if let Some((_, target)) = REDIRECTS
            .iter()
            .find(|(path, _)| spells(definition.name, path))
        {
            let Some(target_definition) = recorder(target) else {
                bail!(
                    "`{}` has no recorder: iron_intrinsics does not define `{target}` (a \
                     device crate built against another iron-intrinsics?)",
                    definition.name
                );
            };
            let params = parameters(line)?;
            let wanted = parameters(lines[target_definition.start])?;
            let types =
                |p: &[(String, String)]| p.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
            if types(&params) != types(&wanted) {
                let keeper = definitions.iter().find(|d| d.name == KEEP);
                if !called_outside(&lines, definition, keeper) {
                    // Only the keeper calls it: it goes with the keeper.
                    for line in &lines[definition.start..=definition.end] {
                        out.push_str(line);
                        out.push('\n');
                    }
                    i = definition.end + 1;
                    continue;
                }
                bail!(
                    "`{}` takes ({}) after LTO where its recorder `{target}` takes ({}): the \
                     toolchain's `core` changed; update iron_intrinsics' panic module",
                    definition.name,
                    types(&params).join(", "),
                    types(&wanted).join(", ")
                );
            }
            let convention = if lines[target_definition.start].contains(" fastcc ") {
                "fastcc "
            } else {
                ""
            };
            let arguments: Vec<String> = params.iter().map(|(t, n)| format!("{t} {n}")).collect();
            out.push_str(line);
            out.push_str(&format!(
                "\n  tail call {convention}void @{target}({})\n  unreachable\n}}\n",
                arguments.join(", ")
            ));
            i = definition.end + 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    if out.contains(&format!("@{KEEP}(")) || out.contains(&format!("@{KEEP},")) {
        bail!("`{KEEP}` is still referenced after its removal");
    }
    Ok(out)
}

/// A function definition: its name and the lines of its `define` and closing `}`.
struct Definition<'a> {
    name: &'a str,
    start: usize,
    end: usize,
}

/// The function definitions of a module's lines.
fn definitions<'a>(lines: &[&'a str]) -> Vec<Definition<'a>> {
    let mut found = Vec::new();
    let mut open: Option<(&str, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("define ") {
            let name = name(line);
            if line.trim_end().ends_with('}') {
                found.push(Definition {
                    name,
                    start: i,
                    end: i,
                });
            } else {
                open = Some((name, i));
            }
        } else if *line == "}"
            && let Some((name, start)) = open.take()
        {
            found.push(Definition {
                name,
                start,
                end: i,
            });
        }
    }
    found
}

/// Whether a line outside `definition` and `keeper` refers to `definition`'s function.
fn called_outside(lines: &[&str], definition: &Definition, keeper: Option<&Definition>) -> bool {
    let symbol = format!("@{}", definition.name);
    let inside = |i: usize, d: &Definition| (d.start..=d.end).contains(&i);
    lines.iter().enumerate().any(|(i, line)| {
        !inside(i, definition)
            && !keeper.is_some_and(|k| inside(i, k))
            && line.match_indices(&symbol).any(|(at, _)| {
                !line[at + symbol.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            })
    })
}

/// The function name of a `define` line, without quotes.
fn name(define: &str) -> &str {
    define
        .split_once(" @")
        .and_then(|(_, rest)| rest.split_once('('))
        .map_or("", |(name, _)| name.trim_matches('"'))
}

/// Whether the mangled `name` is that of the `core` function whose path is `path`: its v0
/// name ends with it, its legacy name follows it with the hash (`17h...E`); LLVM may add a
/// `.<suffix>` to either.
fn spells(name: &str, path: &str) -> bool {
    let name = if name.starts_with("_R") {
        name.split('.').next().unwrap_or(name)
    } else {
        name
    };
    name.ends_with(path)
        || name
            .find(path)
            .is_some_and(|at| name[at + path.len()..].starts_with("17h"))
}

/// The `define` line of an exported function made internal.
fn internal(define: &str) -> Result<String> {
    let Some(rest) = define.strip_prefix("define ") else {
        bail!("not a definition: {define}");
    };
    let mut rest = rest;
    while let Some((word, tail)) = rest.split_once(' ') {
        if !EXPORTED.contains(&word) {
            break;
        }
        rest = tail;
    }
    Ok(format!("define internal {rest}"))
}

/// The parameters of a `define` line: each one's type and name.
fn parameters(define: &str) -> Result<Vec<(String, String)>> {
    let Some(open) = define
        .find(" @")
        .and_then(|at| define[at..].find('(').map(|p| at + p))
    else {
        bail!("a definition without parameters: {define}");
    };
    let mut depth = 0usize;
    let mut params = Vec::new();
    let mut start = open + 1;
    for (at, c) in define[open..].char_indices().map(|(i, c)| (open + i, c)) {
        match c {
            '(' | '{' | '[' | '<' => depth += 1,
            ')' | '}' | ']' | '>' => {
                depth -= 1;
                if depth == 0 {
                    params.push(&define[start..at]);
                    break;
                }
            }
            ',' if depth == 1 => {
                params.push(&define[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    params
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let name = p
                .rsplit_once(' ')
                .map(|(_, n)| n)
                .filter(|n| n.starts_with('%'));
            let Some(name) = name else {
                bail!("a parameter without a name in: {define}");
            };
            Ok((type_of(p).to_string(), name.to_string()))
        })
        .collect()
}

/// The type at the start of a parameter: one word, an aggregate or vector in brackets, or
/// `ptr addrspace(N)`.
fn type_of(param: &str) -> &str {
    let close = match param.as_bytes().first() {
        Some(b'{') => Some('}'),
        Some(b'[') => Some(']'),
        Some(b'<') => Some('>'),
        _ => None,
    };
    if let Some(close) = close {
        return param.find(close).map_or(param, |at| &param[..=at]);
    }
    let word = param.split(' ').next().unwrap_or(param);
    let rest = param[word.len()..].trim_start();
    if word == "ptr"
        && rest.starts_with("addrspace(")
        && let Some(close) = rest.find(')')
    {
        return &param[..param.len() - rest.len() + close + 1];
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"define amdgpu_kernel void @k(i64 %n) #0 {
  call fastcc void @_RNvNtCs3_4core9panicking18panic_bounds_check(i64 %n, i64 4, ptr @loc)
  unreachable
}
define internal fastcc void @_RNvNtCs3_4core9panicking18panic_bounds_check(i64 noundef %0, i64 noundef range(i64 0, 2305843009213693952) %1, ptr noalias noundef readonly align 8 captures(address_is_null) dereferenceable(24) %2) unnamed_addr #21 {
  %3 = alloca [32 x i8], align 8, addrspace(5)
  call fastcc void @_RNvNtCs3_4core9panicking9panic_fmt(ptr %3)
  unreachable
}
define internal fastcc void @_ZN4core6result13unwrap_failed17h0123456789abcdefE(ptr noundef nonnull %0, i64 noundef %1, ptr noundef nonnull %2, ptr noalias noundef readonly align 8 dereferenceable(32) %3, ptr noalias noundef readonly align 8 dereferenceable(24) %4) unnamed_addr #19 {
  unreachable
}
define void @iron_panic_bounds_check(i64 noundef %0, i64 noundef %1, ptr noalias noundef readonly align 8 captures(none) dereferenceable(24) %2) unnamed_addr #19 {
  ret void
}
define dso_local void @iron_panic_unwrap_failed(ptr noundef nonnull %0, i64 noundef %1, ptr noundef nonnull readnone captures(none) %2, ptr noalias noundef readonly align 8 dereferenceable(32) %3, ptr noalias noundef readonly align 8 dereferenceable(24) %4) unnamed_addr #19 {
  ret void
}
define noundef i32 @iron_panic_keep(ptr noalias noundef nonnull align 4 captures(none) %0, i64 noundef %1) unnamed_addr #4 {
  call fastcc void @_RNvNtCs3_4core9panicking18panic_bounds_check(i64 %1, i64 %1, ptr @loc2)
  ret i32 0
}
"#;

    #[test]
    fn core_functions_call_their_recorders_and_the_keeper_goes() {
        let out = apply_panics(IR).unwrap();
        assert!(
            out.contains(
                "dereferenceable(24) %2) unnamed_addr #21 {\n  tail call void \
             @iron_panic_bounds_check(i64 %0, i64 %1, ptr %2)\n  unreachable\n}\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "#19 {\n  tail call void @iron_panic_unwrap_failed(ptr %0, i64 %1, ptr %2, ptr %3, \
             ptr %4)\n  unreachable\n}\n"
            ),
            "{out}"
        );
        assert!(!out.contains("panic_fmt"), "{out}");
        assert!(!out.contains("iron_panic_keep"), "{out}");
        assert!(out.contains("define internal void @iron_panic_bounds_check("));
        assert!(out.contains("define internal void @iron_panic_unwrap_failed("));
        assert!(out.contains(
            "define amdgpu_kernel void @k(i64 %n) #0 {\n  call fastcc void \
             @_RNvNtCs3_4core9panicking18panic_bounds_check(i64 %n, i64 4, ptr @loc)\n"
        ));
    }

    #[test]
    fn a_module_without_the_panic_module_is_unchanged() {
        let ir = "define amdgpu_kernel void @k() #0 {\n  ret void\n}\n";
        assert_eq!(apply_panics(ir).unwrap(), ir);
    }

    #[test]
    fn a_parameter_lto_dropped_is_an_error() {
        let ir = IR.replace(
            "(i64 noundef %0, i64 noundef range(i64 0, 2305843009213693952) %1, ptr noalias",
            "(i64 noundef %0, ptr noalias",
        );
        let e = apply_panics(&ir).unwrap_err().to_string();
        assert!(e.contains("takes (i64, ptr) after LTO"), "{e}");
        assert!(
            e.contains("`iron_panic_bounds_check` takes (i64, i64, ptr)"),
            "{e}"
        );
    }

    #[test]
    fn a_function_only_the_keeper_calls_is_left_to_go_with_it() {
        let ir = IR
            .replace(
                "(i64 noundef %0, i64 noundef range(i64 0, 2305843009213693952) %1, ptr noalias",
                "(i64 noundef %0, ptr noalias",
            )
            .replace(
                "  call fastcc void @_RNvNtCs3_4core9panicking18panic_bounds_check(i64 %n, i64 4, ptr @loc)\n",
                "",
            );
        let out = apply_panics(&ir).unwrap();
        assert!(out.contains("call fastcc void @_RNvNtCs3_4core9panicking9panic_fmt(ptr %3)"));
        assert!(!out.contains("iron_panic_keep"), "{out}");
    }

    #[test]
    fn names_and_types() {
        assert!(spells(
            "_RNvNtCs3CKcErJEjFf_4core9panicking18panic_bounds_check",
            "4core9panicking18panic_bounds_check"
        ));
        assert!(spells(
            "_ZN4core9panicking18panic_bounds_check17h0123456789abcdefE",
            "4core9panicking18panic_bounds_check"
        ));
        assert!(spells(
            "_RNvNtCs3_4core6option13expect_failed.llvm.42",
            "4core6option13expect_failed"
        ));
        assert!(!spells(
            "_RNvNtCs3_4core6option13unwrap_failed",
            "4core6result13unwrap_failed"
        ));
        assert_eq!(type_of("ptr addrspace(1) noundef %x"), "ptr addrspace(1)");
        assert_eq!(type_of("{ ptr, i64 } %x"), "{ ptr, i64 }");
        assert_eq!(type_of("i64 noundef range(i64 0, 7) %x"), "i64");
        assert_eq!(
            internal("define hidden void @iron_panic_x(i64 %0) #1 {").unwrap(),
            "define internal void @iron_panic_x(i64 %0) #1 {"
        );
    }
}
