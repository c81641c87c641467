//! Float conversions Rust cannot write.
//!
//! Rust has no bfloat type, so device code cannot ask LLVM for `fptrunc float to bfloat`, which
//! LLVM lowers to the gfx's conversion instruction where there is one (gfx950's
//! `v_cvt_pk_bf16_f32`). Device code calls the marker `iron.cvt.bf16.f32` (an f32 in, the bf16
//! bit pattern out, declared and never defined) on such a gfx; here its declaration becomes a
//! definition by that `fptrunc`, which the `always-inline` pass then inlines into every caller.

use crate::error::{Result, bail};

const MARKER: &str = "@iron.cvt.bf16.f32(";

/// The marker's definition: round to nearest even, a NaN made quiet.
const DEFINITION: &str = "define internal i16 @iron.cvt.bf16.f32(float %x) {
  %rounded = fptrunc float %x to bfloat
  %bits = bitcast bfloat %rounded to i16
  ret i16 %bits
}";

/// The IR module `ir` with the declaration of the bf16 conversion marker, if any, replaced by
/// its definition.
pub fn apply_conversions(ir: &str) -> Result<String> {
    let mut out = String::with_capacity(ir.len() + DEFINITION.len());
    for line in ir.lines() {
        if line.starts_with("declare ") && line.contains(MARKER) {
            if !line.contains(" i16 @iron.cvt.bf16.f32(float") {
                bail!("the bf16 conversion marker takes an f32 and returns a u16: {line}");
            }
            out.push_str(DEFINITION);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_declaration_becomes_an_fptrunc_and_calls_stay() {
        let ir = "define amdgpu_kernel void @k(float %x, ptr addrspace(1) %p) {
  %b = tail call noundef zeroext i16 @iron.cvt.bf16.f32(float noundef %x) #2
  store i16 %b, ptr addrspace(1) %p, align 2
  ret void
}
declare noundef zeroext i16 @iron.cvt.bf16.f32(float noundef) unnamed_addr #1
";
        let out = apply_conversions(ir).unwrap();
        assert!(!out.contains("declare"), "{out}");
        assert!(
            out.contains("define internal i16 @iron.cvt.bf16.f32(float %x) {\n  %rounded = fptrunc float %x to bfloat"),
            "{out}"
        );
        assert!(
            out.contains("tail call noundef zeroext i16 @iron.cvt.bf16.f32(float noundef %x) #2")
        );
    }

    #[test]
    fn a_module_without_the_marker_is_unchanged() {
        let ir = "define void @f() {\n  ret void\n}\n";
        assert_eq!(apply_conversions(ir).unwrap(), ir);
    }

    #[test]
    fn a_marker_of_another_signature_is_an_error() {
        let ir = "declare float @iron.cvt.bf16.f32(i32)\n";
        let error = apply_conversions(ir).unwrap_err().to_string();
        assert!(error.contains("takes an f32 and returns a u16"), "{error}");
    }
}
