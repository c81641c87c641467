//! Why a kernel uses scratch, read from the optimized IR `llc` compiles: a local that stayed in
//! memory (an `alloca` in the kernel or a function it calls) and what keeps it there, or, with
//! no such local, register spills.
//!
//! By the time rustc hands over its bitcode, SROA and AMDGPU's alloca promotion have moved
//! every local they could into registers; what remains is memory the code object must back
//! with scratch. The reasons are told apart by how the IR uses the local's address:
//! - indexed at run time: a `getelementptr` from it with an index that is not a constant;
//! - borrowed into memory: the address passed to a function that is not an LLVM intrinsic, or
//!   stored;
//! - otherwise a local too large or too oddly accessed to split into registers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The likely cause of a kernel's scratch use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScratchCause {
    /// A local array of `bytes` bytes indexed with a run-time value.
    IndexedAtRunTime { bytes: u64 },
    /// A local of `bytes` bytes whose address is passed to a function or stored.
    Borrowed { bytes: u64 },
    /// A local of `bytes` bytes kept in memory for another reason (often its size).
    Local { bytes: u64 },
    /// No local in memory: the scratch holds spilled registers.
    RegisterPressure,
}

impl fmt::Display for ScratchCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ARRAYS: &str = "see \"Keeping arrays in registers\" in docs/toolchain.md";
        match *self {
            ScratchCause::IndexedAtRunTime { bytes } => write!(
                f,
                "a {bytes}-byte local array is indexed with a run-time value, so it lives in \
                 memory: index it only with constants (fully unrolled loops over a fixed-size \
                 array; select values rather than positions; {ARRAYS})"
            ),
            ScratchCause::Borrowed { bytes } => write!(
                f,
                "a {bytes}-byte local is borrowed into memory (its address is passed to a \
                 function that is not inlined, or stored): pass it by value, or make the \
                 callee #[inline(always)] ({ARRAYS})"
            ),
            ScratchCause::Local { bytes } => write!(
                f,
                "a {bytes}-byte local stays in memory: keep large locals in LDS or device \
                 memory, or split them into values ({ARRAYS})"
            ),
            ScratchCause::RegisterPressure => write!(
                f,
                "no local stays in memory, so the scratch holds spilled registers: lower the \
                 values live at once, or max_threads (a smaller workgroup gets more registers \
                 per work-item)"
            ),
        }
    }
}

/// The likely cause of scratch in each kernel (`define amdgpu_kernel`) of the module `ir`, had
/// it any: kernels not named have no local in memory, which makes their scratch spills.
pub fn causes(ir: &str) -> BTreeMap<String, ScratchCause> {
    let functions = functions(ir);
    functions
        .iter()
        .filter(|(_, f)| f.kernel)
        .filter_map(|(name, _)| {
            let cause = reachable(&functions, name)
                .into_iter()
                .filter_map(|callee| functions.get(callee).and_then(|f| local_cause(&f.body)))
                .max_by_key(|c| rank(*c))?;
            Some((name.to_string(), cause))
        })
        .collect()
}

/// How telling a cause is: the most specific one found in a kernel is reported.
fn rank(cause: ScratchCause) -> (u8, u64) {
    match cause {
        ScratchCause::IndexedAtRunTime { bytes } => (3, bytes),
        ScratchCause::Borrowed { bytes } => (2, bytes),
        ScratchCause::Local { bytes } => (1, bytes),
        ScratchCause::RegisterPressure => (0, 0),
    }
}

/// A function defined in the module.
struct Function<'a> {
    kernel: bool,
    body: Vec<&'a str>,
}

/// The functions defined in `ir`, by name.
fn functions(ir: &str) -> BTreeMap<&str, Function<'_>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(&str, Function<'_>)> = None;
    for line in ir.lines() {
        if let Some(rest) = line.strip_prefix("define ") {
            if let Some(name) = symbol_after_at(rest) {
                let kernel = rest.contains("amdgpu_kernel");
                current = Some((
                    name,
                    Function {
                        kernel,
                        body: Vec::new(),
                    },
                ));
            }
        } else if line == "}" {
            if let Some((name, f)) = current.take() {
                out.insert(name, f);
            }
        } else if let Some((_, f)) = current.as_mut() {
            f.body.push(line);
        }
    }
    out
}

/// The first `@name` in `text` (up to its `(`), unquoted.
fn symbol_after_at(text: &str) -> Option<&str> {
    let start = text.find('@')? + 1;
    let rest = &text[start..];
    let end = rest.find('(')?;
    Some(rest[..end].trim_matches('"'))
}

/// `kernel` and every function defined in the module it calls, directly or not.
fn reachable<'a>(functions: &BTreeMap<&'a str, Function<'a>>, kernel: &'a str) -> Vec<&'a str> {
    let mut seen = BTreeSet::from([kernel]);
    let mut todo = vec![kernel];
    while let Some(name) = todo.pop() {
        let Some(f) = functions.get(name) else {
            continue;
        };
        for line in &f.body {
            if let Some(callee) = called(line)
                && let Some((&known, _)) = functions.get_key_value(callee)
                && seen.insert(known)
            {
                todo.push(known);
            }
        }
    }
    seen.into_iter().collect()
}

/// The functions a `call` or `invoke` line names.
fn called(line: &str) -> Option<&str> {
    let at = line.find(" call ").or_else(|| line.find(" invoke "))?;
    symbol_after_at(&line[at..])
}

/// The most telling reason a local of this body stays in memory, if it has one.
fn local_cause(body: &[&str]) -> Option<ScratchCause> {
    let mut locals: BTreeMap<&str, u64> = BTreeMap::new();
    for line in body {
        if let Some((name, rhs)) = assignment(line)
            && let Some(ty) = rhs.strip_prefix("alloca ")
        {
            locals.insert(name, alloca_bytes(ty));
        }
    }
    locals
        .iter()
        .map(|(&local, &bytes)| use_cause(body, local, bytes))
        .max_by_key(|c| rank(*c))
}

/// How `body` uses the local `local` of `bytes` bytes (and addresses derived from it).
fn use_cause(body: &[&str], local: &str, bytes: u64) -> ScratchCause {
    let mut derived = BTreeSet::from([local]);
    let mut cause = ScratchCause::Local { bytes };
    for line in body {
        let names = values(line);
        if !names.iter().any(|n| derived.contains(n)) {
            continue;
        }
        let assigned = assignment(line);
        let rhs = assigned.map_or(line.trim(), |(_, rhs)| rhs);
        if rhs.starts_with("getelementptr") {
            if gep_has_variable_index(rhs, &derived) {
                return ScratchCause::IndexedAtRunTime { bytes };
            }
        } else if rhs.starts_with("store ptr") {
            // `store ptr <value>, ptr <address>`: borrowed when the value stored is the address.
            if values(rhs).first().is_some_and(|n| derived.contains(n)) {
                cause = ScratchCause::Borrowed { bytes };
            }
            continue;
        } else if rhs.contains("call ") && !rhs.contains("@llvm.") {
            cause = ScratchCause::Borrowed { bytes };
            continue;
        } else if !["addrspacecast", "phi", "select", "bitcast"]
            .iter()
            .any(|op| rhs.starts_with(op))
        {
            continue;
        }
        if let Some((name, _)) = assigned {
            derived.insert(name);
        }
    }
    cause
}

/// Whether a `getelementptr` from a derived address has an index that is not a constant.
fn gep_has_variable_index(rhs: &str, derived: &BTreeSet<&str>) -> bool {
    let mut operands = rhs.split(", ");
    let from_local = operands
        .by_ref()
        .find(|op| values(op).iter().any(|n| derived.contains(n)));
    from_local.is_some() && operands.any(|op| op.contains('%'))
}

/// `%name = rhs` split, if the line assigns.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let (lhs, rhs) = line.trim().split_once(" = ")?;
    let name = lhs.strip_prefix('%')?;
    Some((name, rhs))
}

/// The `%names` a line mentions, in order.
fn values(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find('%') {
        let tail = &rest[at + 1..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "._$-".contains(c)))
            .unwrap_or(tail.len());
        if end > 0 {
            out.push(&tail[..end]);
        }
        rest = &tail[end..];
    }
    out
}

/// The bytes of an `alloca`'s type: `[N x i8]` as rustc emits them, `[N x T]` and scalars of
/// known width; 0 when unknown.
fn alloca_bytes(ty: &str) -> u64 {
    let ty = ty.split(", ").next().unwrap_or(ty).trim();
    if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let Some((count, element)) = inner.split_once(" x ") else {
            return 0;
        };
        return count.trim().parse::<u64>().unwrap_or(0) * alloca_bytes(element);
    }
    match ty {
        "float" => 4,
        "double" | "ptr" => 8,
        "half" | "bfloat" => 2,
        _ => ty
            .strip_prefix('i')
            .and_then(|bits| bits.parse::<u64>().ok())
            .map_or(0, |bits| bits.div_ceil(8)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from the post-LTO IR of a kernel that reads `a[(k + i) % 16]` of a local
    /// `[u32; 16]`.
    const INDEXED: &str = r#"
define amdgpu_kernel void @indexed(ptr noundef %x, ptr noundef %y, i32 noundef %k) unnamed_addr #0 {
start:
  %0 = addrspacecast ptr %x to ptr addrspace(1)
  %2 = alloca [64 x i8], align 4, addrspace(5)
  %spec.select.1 = getelementptr inbounds nuw i8, ptr addrspace(5) %2, i32 8
  %6 = load <2 x i32>, ptr addrspace(1) %0, align 4
  store <2 x i32> %6, ptr addrspace(5) %spec.select.1, align 4
  %_22 = and i32 %k, 15
  %14 = getelementptr inbounds nuw i32, ptr addrspace(5) %2, i32 %_22
  %_21 = load i32, ptr addrspace(5) %14, align 4, !noundef !2
  ret void
}
"#;

    #[test]
    fn a_local_array_indexed_at_run_time_is_named_with_its_size() {
        let causes = causes(INDEXED);
        assert_eq!(
            causes["indexed"],
            ScratchCause::IndexedAtRunTime { bytes: 64 }
        );
        assert!(
            causes["indexed"]
                .to_string()
                .contains("64-byte local array")
        );
    }

    #[test]
    fn a_local_passed_to_a_called_function_is_borrowed_and_found_through_the_callee() {
        let ir = r#"
define internal fastcc i32 @fold(ptr addrspace(5) %a) unnamed_addr #1 {
start:
  %v = load i32, ptr addrspace(5) %a, align 4
  ret i32 %v
}

define internal fastcc i32 @helper(ptr addrspace(1) %x) unnamed_addr #1 {
start:
  %buf = alloca [48 x i8], align 4, addrspace(5)
  %r = call fastcc i32 @fold(ptr addrspace(5) %buf)
  ret i32 %r
}

define amdgpu_kernel void @borrowed(ptr noundef %x) unnamed_addr #0 {
start:
  %0 = addrspacecast ptr %x to ptr addrspace(1)
  %r = tail call fastcc i32 @helper(ptr addrspace(1) %0)
  ret void
}
"#;
        assert_eq!(causes(ir)["borrowed"], ScratchCause::Borrowed { bytes: 48 });
    }

    #[test]
    fn constant_indices_and_intrinsics_leave_a_plain_local_and_no_local_means_spills() {
        let ir = r#"
define amdgpu_kernel void @large(ptr noundef %x) unnamed_addr #0 {
start:
  %2 = alloca [4096 x i8], align 4, addrspace(5)
  call void @llvm.lifetime.start.p5(ptr addrspace(5) %2)
  %3 = getelementptr inbounds nuw i8, ptr addrspace(5) %2, i32 16
  store i32 7, ptr addrspace(5) %3, align 4
  ret void
}

define amdgpu_kernel void @spills(ptr noundef %x) unnamed_addr #0 {
start:
  %v = load i32, ptr %x, align 4
  ret void
}
"#;
        let causes = causes(ir);
        assert_eq!(causes["large"], ScratchCause::Local { bytes: 4096 });
        assert!(!causes.contains_key("spills"));
        assert!(
            ScratchCause::RegisterPressure
                .to_string()
                .contains("spilled registers")
        );
    }

    #[test]
    fn alloca_sizes_come_from_their_types() {
        assert_eq!(alloca_bytes("[64 x i8], align 4, addrspace(5)"), 64);
        assert_eq!(alloca_bytes("[4 x float], align 16"), 16);
        assert_eq!(alloca_bytes("[2 x [3 x double]]"), 48);
        assert_eq!(alloca_bytes("i32, align 4"), 4);
        assert_eq!(alloca_bytes("{ i32, i64 }"), 0);
    }
}
