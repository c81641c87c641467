//! Kernel sources for the matrix tests (LLVM IR and HIP) and their builds: `(a, b, c, d, s)`
//! pointers; lane `l` loads its A, B and C register images at `l * dwords` and two scale words at
//! `s[2l]`, runs one instruction and stores D at `d`.

use super::catalog::Case;
use crate::common::{Loaded, llvm_tool, load};
use std::path::{Path, PathBuf};
use std::process::Command;

/// An LLVM IR module with one kernel per case: `(a, b, c, d, s)` pointers, lane `l` loads its A, B
/// and C register images at `l * dwords` and its two scale words at `s[2l]`, stores D at `d`.
pub fn llvm_ir(cases: &[Case]) -> String {
    let mut declared = std::collections::BTreeSet::new();
    let mut ir = String::from(
        "target triple = \"amdgcn-amd-amdhsa\"\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n",
    );
    for c in cases {
        let name = c.declaration_name();
        if declared.insert(name.clone()) {
            let extra = if c.op.f8f6f4 {
                "i32, i32, i32, i32, i32, i32"
            } else {
                "i32, i32, i32"
            };
            ir.push_str(&format!(
                "declare {} @{name}({}, {}, {}, {extra})\n",
                c.op.c_ty, c.op.a_ty, c.op.b_ty, c.op.c_ty
            ));
        }
    }
    for c in cases {
        let load = |v: &str, ptr: &str, dw: u32, ty: &str| {
            format!(
                "  %{v}o = mul i32 %l, {dw}\n  %{v}p = getelementptr inbounds i32, ptr addrspace(1) %{ptr}, i32 %{v}o\n  %{v}v = load <{dw} x i32>, ptr addrspace(1) %{v}p, align 4\n  %{v}x = bitcast <{dw} x i32> %{v}v to {ty}\n"
            )
        };
        let (ad, bd, cd) = (c.a_dwords(), c.b_dwords(), c.c_dwords());
        ir.push_str(&format!(
            "define amdgpu_kernel void @{}(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d, ptr addrspace(1) %s) {{\n  %l = call i32 @llvm.amdgcn.workitem.id.x()\n",
            c.name()
        ));
        ir.push_str(&load("a", "a", ad, c.op.a_ty));
        ir.push_str(&load("b", "b", bd, c.op.b_ty));
        ir.push_str(&load("c", "c", cd, c.op.c_ty));
        ir.push_str(&load("s", "s", 2, "<2 x i32>"));
        ir.push_str("  %sa = extractelement <2 x i32> %sx, i32 0\n  %sb = extractelement <2 x i32> %sx, i32 1\n");
        ir.push_str(&format!(
            "  %r = call {} @{}({} %ax, {} %bx, {} %cx, {})\n  %rv = bitcast {} %r to <{cd} x i32>\n  %do = mul i32 %l, {cd}\n  %dp = getelementptr inbounds i32, ptr addrspace(1) %d, i32 %do\n  store <{cd} x i32> %rv, ptr addrspace(1) %dp, align 4\n  ret void\n}}\n",
            c.op.c_ty,
            c.declaration_name(),
            c.op.a_ty,
            c.op.b_ty,
            c.op.c_ty,
            c.immediates("%sa", "%sb"),
            c.op.c_ty
        ));
    }
    ir
}

/// The HIP spelling of an LLVM type (vector typedefs are declared by [`hip_source`]).
fn hip_type(llvm: &str) -> String {
    let scalar = |t: &str| -> &'static str {
        match t {
            "float" => "float",
            "double" => "double",
            "half" => "_Float16",
            "bfloat" => "__bf16",
            "i16" => "short",
            "i32" => "int",
            "i64" => "long",
            other => panic!("no HIP type for {other}"),
        }
    };
    match llvm.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(v) => {
            let (n, t) = v.split_once(" x ").expect("vector type");
            format!(
                "{}x{n}",
                scalar(t).trim_start_matches("__").trim_start_matches('_')
            )
        }
        None => scalar(llvm).to_string(),
    }
}

/// A HIP source (no headers) with one kernel per case, same interface as [`llvm_ir`].
pub fn hip_source(cases: &[Case]) -> String {
    let mut typedefs = std::collections::BTreeSet::new();
    let mut body = String::new();
    for c in cases {
        for t in [c.op.a_ty, c.op.b_ty, c.op.c_ty] {
            if let Some(v) = t.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
                let (n, s) = v.split_once(" x ").expect("vector type");
                let elem = hip_type(s);
                typedefs.insert(format!(
                    "typedef {elem} {} __attribute__((ext_vector_type({n})));",
                    hip_type(t)
                ));
            }
        }
        let (at, bt, ct) = (
            hip_type(c.op.a_ty),
            hip_type(c.op.b_ty),
            hip_type(c.op.c_ty),
        );
        let builtin = format!("__builtin_amdgcn_{}", c.op.intrinsic.replace('.', "_"));
        // The scaled builtin takes 8-dword A and B whatever the format; the unused dwords are zero.
        let (at, bt) = if c.op.f8f6f4 {
            ("intx8".to_string(), "intx8".to_string())
        } else {
            (at, bt)
        };
        if c.op.f8f6f4 {
            typedefs.insert("typedef int intx8 __attribute__((ext_vector_type(8)));".into());
        }
        body.push_str(&format!(
            "extern \"C\" __global__ void {}(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d, const unsigned* s) {{\n  unsigned l = __builtin_amdgcn_workitem_id_x();\n  {at} av = {{}}; {bt} bv = {{}}; {ct} cv;\n  __builtin_memcpy(&av, a + l * {ad}, {ad} * 4);\n  __builtin_memcpy(&bv, b + l * {bd}, {bd} * 4);\n  __builtin_memcpy(&cv, c + l * {cd}, {cd} * 4);\n  int sa = (int)s[2 * l], sb = (int)s[2 * l + 1];\n  {ct} r = {builtin}(av, bv, cv, {});\n  __builtin_memcpy(d + l * {cd}, &r, {cd} * 4);\n}}\n",
            c.name(),
            c.immediates("sa", "sb").replace("i32 ", ""),
            ad = c.a_dwords(),
            bd = c.b_dwords(),
            cd = c.c_dwords(),
        ));
    }
    let mut src = String::from("#define __global__ __attribute__((global))\n");
    for t in typedefs {
        src.push_str(&t);
        src.push('\n');
    }
    src.push_str(&body);
    src
}

fn scratch_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "iron-emu-mfma-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn run_tool(cmd: &mut Command) {
    let out = cmd.output().expect("run tool");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Loads the code object at `path` and deletes its scratch directory.
fn load_and_clean(path: &Path) -> Loaded {
    let code = load(path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
    code
}

/// Builds an LLVM IR module for `gfx` with the toolchain's `llc` and `rust-lld` and loads it;
/// `None` if the tools are not installed.
pub fn build_ir(gfx: &str, ir: &str) -> Option<Loaded> {
    let llc = llvm_tool("llc")?;
    let lld = llvm_tool("rust-lld")?;
    let dir = scratch_dir(gfx);
    let (ll, obj, co) = (dir.join("k.ll"), dir.join("k.o"), dir.join("k.co"));
    std::fs::write(&ll, ir).expect("write IR");
    run_tool(
        Command::new(llc)
            .args(["-O3", &format!("-mcpu={gfx}"), "-filetype=obj"])
            .arg("--amdhsa-code-object-version=5")
            .arg(&ll)
            .arg("-o")
            .arg(&obj),
    );
    run_tool(
        Command::new(lld)
            .args(["-flavor", "gnu", "-shared"])
            .arg(&obj)
            .arg("-o")
            .arg(&co),
    );
    Some(load_and_clean(&co))
}

/// Builds a HIP source for `gfx` with Debian's `clang-22` and loads it; `None` if it is not
/// installed.
pub fn build_hip(gfx: &str, src: &str) -> Option<Loaded> {
    Command::new("clang-22").arg("--version").output().ok()?;
    let dir = scratch_dir(gfx);
    let (hip, co) = (dir.join("k.hip"), dir.join("k.co"));
    std::fs::write(&hip, src).expect("write HIP source");
    run_tool(
        Command::new("clang-22")
            .args(["-x", "hip", &format!("--offload-arch={gfx}")])
            .args(["-nogpulib", "-nogpuinc", "--cuda-device-only"])
            .args(["--no-gpu-bundle-output", "-O3", "-c"])
            .arg(&hip)
            .arg("-o")
            .arg(&co),
    );
    Some(load_and_clean(&co))
}
