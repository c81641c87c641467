//! The post-LTO step: applies each kernel's declared launch bounds to the LTO'd module, then
//! compiles and links it into a code object.
//!
//! rustc gives every kernel the default maximum workgroup of 1024 work-items (and so the
//! register budget of 1024), with no way to say otherwise from Rust. `#[kernel]` records the
//! bounds in a symbol `iron.launch_bounds.<kernel>` (`[u32; 8]`: max threads, min and max waves
//! per EU, flags, block multiple, required block x, y, z); here those symbols are read and
//! deleted, and each kernel gets the attributes `amdgpu-flat-work-group-size` and
//! `amdgpu-waves-per-eu`, and its required block as `!reqd_work_group_size` (which the code
//! object's metadata carries as `.reqd_workgroup_size`), before `llc` compiles it.

use crate::error::{Context, Error, Result, bail};
use crate::target::{Family, Target};
use crate::toolchain::{Tools, run};
use std::collections::BTreeMap;
use std::path::Path;

/// Launch bounds as recorded by `#[kernel]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeclaredBounds {
    /// Largest workgroup in work-items.
    pub max_threads: u32,
    /// Minimum waves per EU (0: none).
    pub min_waves_per_eu: u32,
    /// Maximum waves per EU (0: none).
    pub max_waves_per_eu: u32,
    /// Whether scratch use is allowed.
    pub allow_scratch: bool,
    /// Whether the workgroup must be a whole number of waves.
    pub whole_waves: bool,
    /// What the workgroup's size must be a multiple of (0: nothing).
    pub block_multiple: u32,
    /// The one workgroup shape the kernel runs, if it declares one.
    pub block: Option<[u32; 3]>,
}

const BOUNDS_PREFIX: &str = "iron.launch_bounds.";

/// Reads the launch-bounds records of an LLVM IR module, removes them and adds the attributes
/// to the kernels. Returns the patched IR and the bounds per kernel name.
pub fn apply_launch_bounds(ir: &str) -> Result<(String, BTreeMap<String, DeclaredBounds>)> {
    let mut bounds = BTreeMap::new();
    let mut kept = Vec::new();
    for line in ir.lines() {
        if let Some(rest) = record_name(line) {
            let (name, values) = parse_record(rest)
                .context(|| format!("unreadable launch-bounds record: {line}"))?;
            bounds.insert(name, values);
        } else {
            kept.push(line);
        }
    }
    let mut out = String::with_capacity(ir.len() + 64 * bounds.len());
    let mut seen = Vec::new();
    let mut next_metadata = next_metadata_id(ir);
    let mut block_nodes = Vec::new();
    for line in kept {
        if line.contains(BOUNDS_PREFIX) {
            bail!("a launch-bounds record is still referenced after removal: {line}");
        }
        if let Some(name) = kernel_name(line) {
            let b = bounds.get(name).ok_or_else(|| {
                Error::new(format!(
                    "kernel `{name}` declares no launch bounds: write it as \
                     `#[kernel(max_threads = N)] pub fn {name}(...)`"
                ))
            })?;
            seen.push(name.to_string());
            let head = line
                .trim_end()
                .strip_suffix('{')
                .ok_or_else(|| Error::new(format!("kernel definition without `{{`: {line}")))?;
            out.push_str(head);
            out.push_str(&format!(
                "\"amdgpu-flat-work-group-size\"=\"1,{}\" ",
                b.max_threads
            ));
            match (b.min_waves_per_eu, b.max_waves_per_eu) {
                (0, _) => {}
                (min, 0) => out.push_str(&format!("\"amdgpu-waves-per-eu\"=\"{min}\" ")),
                (min, max) => out.push_str(&format!("\"amdgpu-waves-per-eu\"=\"{min},{max}\" ")),
            }
            if let Some([x, y, z]) = b.block {
                out.push_str(&format!("!reqd_work_group_size !{next_metadata} "));
                block_nodes.push(format!("!{next_metadata} = !{{i32 {x}, i32 {y}, i32 {z}}}"));
                next_metadata += 1;
            }
            out.push_str("{\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    for node in block_nodes {
        out.push_str(&node);
        out.push('\n');
    }
    if let Some(missing) = bounds.keys().find(|k| !seen.contains(k)) {
        bail!(
            "launch bounds were declared for `{missing}`, but no such kernel is exported: \
             is the function `pub` and reachable from the crate root?"
        );
    }
    Ok((out, bounds))
}

/// The first metadata number above every `!N` the module defines.
pub(crate) fn next_metadata_id(ir: &str) -> u64 {
    ir.lines()
        .filter_map(|line| {
            line.strip_prefix('!')?
                .split_once(" = ")?
                .0
                .parse::<u64>()
                .ok()
        })
        .max()
        .map_or(0, |n| n + 1)
}

/// `Some(rest)` when `line` defines a launch-bounds record; `rest` starts at the kernel name.
fn record_name(line: &str) -> Option<&str> {
    line.strip_prefix("@\"iron.launch_bounds.")
        .or_else(|| line.strip_prefix("@iron.launch_bounds."))
}

fn parse_record(rest: &str) -> Result<(String, DeclaredBounds)> {
    let (name, value) = rest.split_once(" = ").ok_or_else(|| Error::new("no `=`"))?;
    let name = name.trim_end_matches('"').to_string();
    let numbers = if let Some((_, list)) = value.split_once("[8 x i32] [") {
        let list = list.split(']').next().unwrap_or_default();
        list.split(',')
            .map(|item| item.trim().trim_start_matches("i32 ").parse::<u32>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .context(|| "a bound is not a number".into())?
    } else if let Some((_, text)) = value.split_once("[32 x i8] c\"") {
        let bytes = unescape_c_string(text.split('"').next().unwrap_or_default())?;
        bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    } else {
        bail!("not a [8 x i32] or [32 x i8] constant: rebuild with this iron-build's #[kernel]");
    };
    let [
        max_threads,
        min_waves_per_eu,
        max_waves_per_eu,
        flags,
        block_multiple,
        x,
        y,
        z,
    ] = numbers[..]
    else {
        bail!("expected 8 values");
    };
    Ok((
        name,
        DeclaredBounds {
            max_threads,
            min_waves_per_eu,
            max_waves_per_eu,
            allow_scratch: flags & 1 != 0,
            whole_waves: flags & 2 != 0,
            block_multiple,
            block: (x != 0).then_some([x, y, z]),
        },
    ))
}

/// The bytes of an LLVM IR string constant's body (`\XX` escapes, other characters literal).
fn unescape_c_string(text: &str) -> Result<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let hex = text
                .get(i + 1..i + 3)
                .ok_or_else(|| Error::new("truncated escape"))?;
            out.push(u8::from_str_radix(hex, 16).context(|| format!("bad escape `\\{hex}`"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// The kernel's name when `line` starts the definition of an AMDGPU kernel.
fn kernel_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("define ")?;
    let at = rest.find("amdgpu_kernel ")?;
    let rest = &rest[at..];
    let start = rest.find(" @")? + 2;
    let name = &rest[start..];
    let end = name.find('(')?;
    Some(name[..end].trim_matches('"'))
}

/// Compiles the patched IR `ir` of `target` into `<out_dir>/kernels.co` (code object v5) with
/// `llc` and `rust-lld`, keeping the IR as `kernels.ll`. When `kernels.ll` already holds the same
/// IR for the same `llc` and flags and `kernels.co` is newer, nothing runs: `llc` takes most of a
/// rebuild (about 27 s for the kernel library on one gfx).
pub fn compile_and_link(tools: &Tools, target: Target, ir: &str, out_dir: &Path) -> Result<()> {
    let mut llc_args = vec![
        "-O3".to_string(),
        "-filetype=obj".into(),
        "--amdhsa-code-object-version=5".into(),
        format!("-mcpu={}", target.gfx.name),
    ];
    if target.wave == 64 && target.gfx.default_wave() == 32 {
        llc_args.push("-mattr=+wavefrontsize64".into());
    }
    if target.gfx.family == Family::Cdna {
        // MFMA accumulators in VGPRs rather than AGPRs (docs/toolchain.md, "MFMA accumulators"):
        // in AGPRs the GEMM's main loop copied every accumulator once per iteration, and every
        // matrix kernel needed more registers (lower occupancy).
        llc_args.push("--amdgpu-mfma-vgpr-form".into());
    }
    let ir_path = out_dir.join("kernels.ll");
    let code_object = out_dir.join("kernels.co");
    let text = format!("; {} {}\n{ir}", tools.llc.display(), llc_args.join(" "));
    if is_up_to_date(&code_object, &ir_path, &text) {
        return Ok(());
    }
    std::fs::write(&ir_path, &text).context(|| format!("cannot write {}", ir_path.display()))?;
    let object = out_dir.join("kernels.o");
    run(tools
        .command(&tools.llc)
        .args(&llc_args)
        .arg(&ir_path)
        .arg("-o")
        .arg(&object))?;
    run(tools
        .command(&tools.rust_lld)
        .args(["-flavor", "gnu", "-shared", "--no-undefined"])
        .arg(&object)
        .arg("-o")
        .arg(&code_object))?;
    std::fs::remove_file(&object).context(|| format!("cannot remove {}", object.display()))
}

/// Whether `code_object` was linked from exactly `text`, the content of `ir_path`: the IR file
/// holds it and the code object was written after it.
fn is_up_to_date(code_object: &Path, ir_path: &Path, text: &str) -> bool {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (modified(code_object), modified(ir_path)) {
        (Some(co), Some(ll)) if co >= ll => {
            std::fs::read_to_string(ir_path).is_ok_and(|old| old == text)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"@iron.launch_bounds.vadd = local_unnamed_addr addrspace(1) constant [8 x i32] [i32 256, i32 2, i32 0, i32 3, i32 32, i32 0, i32 0, i32 0], align 4
@"iron.launch_bounds.other" = local_unnamed_addr addrspace(1) constant [32 x i8] c"@\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\10\00\00\00\04\00\00\00\01\00\00\00", align 4
define amdgpu_kernel void @vadd(ptr %a) unnamed_addr #0 {
  ret void
}
define amdgpu_kernel void @other() unnamed_addr #1 {
  ret void
}
!7 = !{i32 1}
"#;

    #[test]
    fn applies_and_removes_records() {
        let (ir, bounds) = apply_launch_bounds(IR).unwrap();
        assert!(!ir.contains("iron.launch_bounds"));
        assert!(ir.contains(
            "@vadd(ptr %a) unnamed_addr #0 \"amdgpu-flat-work-group-size\"=\"1,256\" \"amdgpu-waves-per-eu\"=\"2\" {"
        ));
        assert!(ir.contains(
            "@other() unnamed_addr #1 \"amdgpu-flat-work-group-size\"=\"1,64\" !reqd_work_group_size !8 {"
        ));
        assert!(ir.contains("\n!8 = !{i32 16, i32 4, i32 1}\n"), "{ir}");
        assert_eq!(bounds["vadd"].max_threads, 256);
        assert!(bounds["vadd"].allow_scratch);
        assert!(bounds["vadd"].whole_waves);
        assert_eq!(bounds["vadd"].block_multiple, 32);
        assert_eq!(bounds["vadd"].block, None);
        assert!(!bounds["other"].allow_scratch);
        assert!(!bounds["other"].whole_waves);
        assert_eq!(bounds["other"].block, Some([16, 4, 1]));
    }

    #[test]
    fn kernel_without_bounds_is_an_error() {
        let ir = "define amdgpu_kernel void @bare() #0 {\n  ret void\n}\n";
        let e = apply_launch_bounds(ir).unwrap_err().to_string();
        assert!(e.contains("kernel `bare` declares no launch bounds"), "{e}");
    }

    #[test]
    fn bounds_without_kernel_is_an_error() {
        let ir = "@iron.launch_bounds.gone = constant [8 x i32] [i32 1, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0]\n";
        let e = apply_launch_bounds(ir).unwrap_err().to_string();
        assert!(e.contains("`gone`"), "{e}");
    }
}
