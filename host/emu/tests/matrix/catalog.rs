//! The matrix intrinsics of each target: shapes, formats, LLVM types, and the kernels (intrinsic
//! plus modifiers) the tests build.

use super::formats::Fmt;

/// Type of C and D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acc {
    F32,
    F64,
    I32,
}

/// One matrix intrinsic: `llvm.amdgcn.<intrinsic>` / `__builtin_amdgcn_<builtin>`.
#[derive(Clone, Copy, Debug)]
pub struct MatrixOp {
    pub intrinsic: &'static str,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub blocks: u32,
    pub a: Fmt,
    pub b: Fmt,
    pub acc: Acc,
    /// LLVM types of A, B and C.
    pub a_ty: &'static str,
    pub b_ty: &'static str,
    pub c_ty: &'static str,
    /// A `mfma.scale.*.f8f6f4` intrinsic (9 operands).
    pub f8f6f4: bool,
}

/// The modifiers a kernel passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    pub cbsz: u32,
    pub abid: u32,
    pub blgp: u32,
    /// Scaled `f8f6f4`: scale bytes selected by these op_sel values; `None`: constant scales 0
    /// (LLVM then emits the unscaled instruction).
    pub scale_sel: Option<(u32, u32)>,
}

#[allow(clippy::too_many_arguments)]
const fn op(
    intrinsic: &'static str,
    (m, n, k, blocks): (u32, u32, u32, u32),
    a: Fmt,
    b: Fmt,
    acc: Acc,
    a_ty: &'static str,
    b_ty: &'static str,
    c_ty: &'static str,
) -> MatrixOp {
    MatrixOp {
        intrinsic,
        m,
        n,
        k,
        blocks,
        a,
        b,
        acc,
        a_ty,
        b_ty,
        c_ty,
        f8f6f4: false,
    }
}

const fn same(
    intrinsic: &'static str,
    shape: (u32, u32, u32, u32),
    a: Fmt,
    acc: Acc,
    ty: &'static str,
    c_ty: &'static str,
) -> MatrixOp {
    op(intrinsic, shape, a, a, acc, ty, ty, c_ty)
}

/// Intrinsics of every CDNA target (gfx90a and later).
#[rustfmt::skip]
const COMMON: &[MatrixOp] = &[
    same("mfma.f32.32x32x1f32", (32, 32, 1, 2), Fmt::F32, Acc::F32, "float", "<32 x float>"),
    same("mfma.f32.16x16x1f32", (16, 16, 1, 4), Fmt::F32, Acc::F32, "float", "<16 x float>"),
    same("mfma.f32.4x4x1f32", (4, 4, 1, 16), Fmt::F32, Acc::F32, "float", "<4 x float>"),
    same("mfma.f32.32x32x2f32", (32, 32, 2, 1), Fmt::F32, Acc::F32, "float", "<16 x float>"),
    same("mfma.f32.16x16x4f32", (16, 16, 4, 1), Fmt::F32, Acc::F32, "float", "<4 x float>"),
    same("mfma.f32.32x32x4f16", (32, 32, 4, 2), Fmt::F16, Acc::F32, "<4 x half>", "<32 x float>"),
    same("mfma.f32.16x16x4f16", (16, 16, 4, 4), Fmt::F16, Acc::F32, "<4 x half>", "<16 x float>"),
    same("mfma.f32.4x4x4f16", (4, 4, 4, 16), Fmt::F16, Acc::F32, "<4 x half>", "<4 x float>"),
    same("mfma.f32.32x32x8f16", (32, 32, 8, 1), Fmt::F16, Acc::F32, "<4 x half>", "<16 x float>"),
    same("mfma.f32.16x16x16f16", (16, 16, 16, 1), Fmt::F16, Acc::F32, "<4 x half>", "<4 x float>"),
    same("mfma.i32.32x32x4i8", (32, 32, 4, 2), Fmt::I8, Acc::I32, "i32", "<32 x i32>"),
    same("mfma.i32.16x16x4i8", (16, 16, 4, 4), Fmt::I8, Acc::I32, "i32", "<16 x i32>"),
    same("mfma.i32.4x4x4i8", (4, 4, 4, 16), Fmt::I8, Acc::I32, "i32", "<4 x i32>"),
    same("mfma.f32.32x32x4bf16.1k", (32, 32, 4, 2), Fmt::Bf16, Acc::F32, "<4 x i16>", "<32 x float>"),
    same("mfma.f32.16x16x4bf16.1k", (16, 16, 4, 4), Fmt::Bf16, Acc::F32, "<4 x i16>", "<16 x float>"),
    same("mfma.f32.4x4x4bf16.1k", (4, 4, 4, 16), Fmt::Bf16, Acc::F32, "<4 x i16>", "<4 x float>"),
    same("mfma.f32.32x32x8bf16.1k", (32, 32, 8, 1), Fmt::Bf16, Acc::F32, "<4 x i16>", "<16 x float>"),
    same("mfma.f32.16x16x16bf16.1k", (16, 16, 16, 1), Fmt::Bf16, Acc::F32, "<4 x i16>", "<4 x float>"),
    same("mfma.f64.16x16x4f64", (16, 16, 4, 1), Fmt::F64, Acc::F64, "double", "<4 x double>"),
    same("mfma.f64.4x4x4f64", (4, 4, 4, 4), Fmt::F64, Acc::F64, "double", "double"),
];

/// gfx90a only (removed in gfx940).
#[rustfmt::skip]
const GFX90A: &[MatrixOp] = &[
    same("mfma.i32.32x32x8i8", (32, 32, 8, 1), Fmt::I8, Acc::I32, "i32", "<16 x i32>"),
    same("mfma.i32.16x16x16i8", (16, 16, 16, 1), Fmt::I8, Acc::I32, "i32", "<4 x i32>"),
    same("mfma.f32.32x32x2bf16", (32, 32, 2, 2), Fmt::Bf16, Acc::F32, "<2 x i16>", "<32 x float>"),
    same("mfma.f32.16x16x2bf16", (16, 16, 2, 4), Fmt::Bf16, Acc::F32, "<2 x i16>", "<16 x float>"),
    same("mfma.f32.4x4x2bf16", (4, 4, 2, 16), Fmt::Bf16, Acc::F32, "<2 x i16>", "<4 x float>"),
    same("mfma.f32.32x32x4bf16", (32, 32, 4, 1), Fmt::Bf16, Acc::F32, "<2 x i16>", "<16 x float>"),
    same("mfma.f32.16x16x8bf16", (16, 16, 8, 1), Fmt::Bf16, Acc::F32, "<2 x i16>", "<4 x float>"),
];

/// gfx942 and gfx950.
#[rustfmt::skip]
const GFX94: &[MatrixOp] = &[
    same("mfma.i32.16x16x32.i8", (16, 16, 32, 1), Fmt::I8, Acc::I32, "i64", "<4 x i32>"),
    same("mfma.i32.32x32x16.i8", (32, 32, 16, 1), Fmt::I8, Acc::I32, "i64", "<16 x i32>"),
    op("mfma.f32.16x16x32.fp8.fp8", (16, 16, 32, 1), Fmt::Fp8, Fmt::Fp8, Acc::F32, "i64", "i64", "<4 x float>"),
    op("mfma.f32.16x16x32.fp8.bf8", (16, 16, 32, 1), Fmt::Fp8, Fmt::Bf8, Acc::F32, "i64", "i64", "<4 x float>"),
    op("mfma.f32.16x16x32.bf8.fp8", (16, 16, 32, 1), Fmt::Bf8, Fmt::Fp8, Acc::F32, "i64", "i64", "<4 x float>"),
    op("mfma.f32.16x16x32.bf8.bf8", (16, 16, 32, 1), Fmt::Bf8, Fmt::Bf8, Acc::F32, "i64", "i64", "<4 x float>"),
    op("mfma.f32.32x32x16.fp8.fp8", (32, 32, 16, 1), Fmt::Fp8, Fmt::Fp8, Acc::F32, "i64", "i64", "<16 x float>"),
    op("mfma.f32.32x32x16.fp8.bf8", (32, 32, 16, 1), Fmt::Fp8, Fmt::Bf8, Acc::F32, "i64", "i64", "<16 x float>"),
    op("mfma.f32.32x32x16.bf8.fp8", (32, 32, 16, 1), Fmt::Bf8, Fmt::Fp8, Acc::F32, "i64", "i64", "<16 x float>"),
    op("mfma.f32.32x32x16.bf8.bf8", (32, 32, 16, 1), Fmt::Bf8, Fmt::Bf8, Acc::F32, "i64", "i64", "<16 x float>"),
];

/// gfx950 only.
#[rustfmt::skip]
const GFX950: &[MatrixOp] = &[
    same("mfma.f32.16x16x32.f16", (16, 16, 32, 1), Fmt::F16, Acc::F32, "<8 x half>", "<4 x float>"),
    same("mfma.f32.32x32x16.f16", (32, 32, 16, 1), Fmt::F16, Acc::F32, "<8 x half>", "<16 x float>"),
    same("mfma.f32.16x16x32.bf16", (16, 16, 32, 1), Fmt::Bf16, Acc::F32, "<8 x bfloat>", "<4 x float>"),
    same("mfma.f32.32x32x16.bf16", (32, 32, 16, 1), Fmt::Bf16, Acc::F32, "<8 x bfloat>", "<16 x float>"),
    same("mfma.i32.16x16x64.i8", (16, 16, 64, 1), Fmt::I8, Acc::I32, "<4 x i32>", "<4 x i32>"),
    same("mfma.i32.32x32x32.i8", (32, 32, 32, 1), Fmt::I8, Acc::I32, "<4 x i32>", "<16 x i32>"),
];

/// The formats of the `f8f6f4` instructions.
pub const F8F6F4: [Fmt; 5] = [Fmt::Fp8, Fmt::Bf8, Fmt::Fp6, Fmt::Bf6, Fmt::Fp4];

fn f8f6f4_type(f: Fmt) -> &'static str {
    match f.bits() {
        8 => "<8 x i32>",
        6 => "<6 x i32>",
        _ => "<4 x i32>",
    }
}

/// The scaled `f8f6f4` intrinsic of one shape and pair of formats.
pub fn f8f6f4(m: u32, a: Fmt, b: Fmt) -> MatrixOp {
    let (intrinsic, k, c_ty) = if m == 16 {
        ("mfma.scale.f32.16x16x128.f8f6f4", 128, "<4 x float>")
    } else {
        ("mfma.scale.f32.32x32x64.f8f6f4", 64, "<16 x float>")
    };
    MatrixOp {
        intrinsic,
        m,
        n: m,
        k,
        blocks: 1,
        a,
        b,
        acc: Acc::F32,
        a_ty: f8f6f4_type(a),
        b_ty: f8f6f4_type(b),
        c_ty,
        f8f6f4: true,
    }
}

/// Every intrinsic `gfx` has, besides the `f8f6f4` ones.
pub fn catalog(gfx: &str) -> Vec<MatrixOp> {
    let mut ops = COMMON.to_vec();
    match gfx {
        "gfx90a" => ops.extend_from_slice(GFX90A),
        "gfx942" => ops.extend_from_slice(GFX94),
        _ => {
            ops.extend_from_slice(GFX94);
            ops.extend_from_slice(GFX950);
        }
    }
    ops
}

/// A kernel to build and run: an intrinsic with its modifiers.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub op: MatrixOp,
    pub variant: Variant,
}

impl Case {
    /// Kernel symbol.
    pub fn name(&self) -> String {
        let v = &self.variant;
        let mut s = format!(
            "k_{}_{}_{}_c{}a{}b{}",
            self.op.intrinsic.replace('.', "_"),
            self.op.a.bits(),
            self.op.b.code(),
            v.cbsz,
            v.abid,
            v.blgp
        );
        if self.op.f8f6f4 {
            s = format!("{s}_f{}{}", self.op.a.code(), self.op.b.code());
        }
        if let Some((x, y)) = v.scale_sel {
            s = format!("{s}_s{x}{y}");
        }
        s
    }

    pub fn a_dwords(&self) -> u32 {
        self.op.k * self.op.m * self.op.blocks / 64 * self.op.a.bits() / 32
    }

    pub fn b_dwords(&self) -> u32 {
        self.op.k * self.op.n * self.op.blocks / 64 * self.op.b.bits() / 32
    }

    pub fn c_dwords(&self) -> u32 {
        let wide = if self.op.acc == Acc::F64 { 2 } else { 1 };
        self.op.m * self.op.n * self.op.blocks / 64 * wide
    }

    /// The modifier operands of the call.
    pub fn immediates(&self, scale_a: &str, scale_b: &str) -> String {
        let v = &self.variant;
        if self.op.f8f6f4 {
            let (sa, sb, xa, xb) = match v.scale_sel {
                Some((x, y)) => (scale_a, scale_b, x, y),
                None => ("0", "0", 0, 0),
            };
            format!(
                "i32 {}, i32 {}, i32 {xa}, i32 {sa}, i32 {xb}, i32 {sb}",
                self.op.a.code(),
                self.op.b.code()
            )
        } else {
            format!("i32 {}, i32 {}, i32 {}", v.cbsz, v.abid, v.blgp)
        }
    }

    pub fn declaration_name(&self) -> String {
        if self.op.f8f6f4 {
            format!(
                "llvm.amdgcn.{}.v{}i32.v{}i32",
                self.op.intrinsic,
                self.a_dwords(),
                self.b_dwords()
            )
        } else {
            format!("llvm.amdgcn.{}", self.op.intrinsic)
        }
    }
}
