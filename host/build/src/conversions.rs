//! Float conversions Rust cannot write.
//!
//! Rust has no bfloat type and no vector of halves, so device code cannot ask LLVM for
//! `fptrunc float to bfloat` or `fptrunc <2 x float> to <2 x half>`, which LLVM lowers to the
//! gfx's conversion instruction where there is one (gfx950's `v_cvt_pk_bf16_f32` and
//! `v_cvt_pk_f16_f32`). Device code calls a marker on such a gfx (declared and never defined):
//! `iron.cvt.bf16.f32` (an f32 in, the bf16 bit pattern out), `iron.cvt.pk.f16.f32` or
//! `iron.cvt.pk.bf16.f32` (two f32 in, their f16 or bf16 bit patterns out in one word, the first
//! in the low half); here each declaration
//! becomes a definition by that `fptrunc`, which the `always-inline` pass then inlines into every
//! caller.

use crate::error::{Result, bail};

/// A conversion marker: its name, the IR signature its declaration must have (after the
/// return type's attributes), what that means, and its definition.
struct Marker {
    name: &'static str,
    signature: &'static str,
    meaning: &'static str,
    definition: &'static str,
}

const MARKERS: [Marker; 3] = [
    Marker {
        name: "@iron.cvt.bf16.f32(",
        signature: " i16 @iron.cvt.bf16.f32(float",
        meaning: "the bf16 conversion marker takes an f32 and returns a u16",
        // Round to nearest even, a NaN made quiet.
        definition: "define internal i16 @iron.cvt.bf16.f32(float %x) {
  %rounded = fptrunc float %x to bfloat
  %bits = bitcast bfloat %rounded to i16
  ret i16 %bits
}",
    },
    Marker {
        name: "@iron.cvt.pk.f16.f32(",
        signature: " i32 @iron.cvt.pk.f16.f32(float",
        meaning: "the f16 pair conversion marker takes two f32 and returns a u32",
        // Round to nearest even, as `fptrunc float to half` does for each.
        definition: "define internal i32 @iron.cvt.pk.f16.f32(float %a, float %b) {
  %low = insertelement <2 x float> poison, float %a, i32 0
  %pair = insertelement <2 x float> %low, float %b, i32 1
  %rounded = fptrunc <2 x float> %pair to <2 x half>
  %bits = bitcast <2 x half> %rounded to i32
  ret i32 %bits
}",
    },
    Marker {
        name: "@iron.cvt.pk.bf16.f32(",
        signature: " i32 @iron.cvt.pk.bf16.f32(float",
        meaning: "the bf16 pair conversion marker takes two f32 and returns a u32",
        // Round to nearest even, a NaN made quiet, as `fptrunc float to bfloat` does for each.
        definition: "define internal i32 @iron.cvt.pk.bf16.f32(float %a, float %b) {
  %low = insertelement <2 x float> poison, float %a, i32 0
  %pair = insertelement <2 x float> %low, float %b, i32 1
  %rounded = fptrunc <2 x float> %pair to <2 x bfloat>
  %bits = bitcast <2 x bfloat> %rounded to i32
  ret i32 %bits
}",
    },
];

/// The IR module `ir` with the declaration of each conversion marker it holds replaced by its
/// definition.
pub fn apply_conversions(ir: &str) -> Result<String> {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        let marker = line
            .starts_with("declare ")
            .then(|| MARKERS.iter().find(|m| line.contains(m.name)))
            .flatten();
        match marker {
            Some(marker) if !line.contains(marker.signature) => {
                bail!("{}: {line}", marker.meaning)
            }
            Some(marker) => out.push_str(marker.definition),
            None => out.push_str(line),
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
    fn the_pair_marker_becomes_a_vector_fptrunc() {
        let ir = "define amdgpu_kernel void @k(float %a, float %b, ptr addrspace(1) %p) {
  %h = tail call noundef i32 @iron.cvt.pk.f16.f32(float noundef %a, float noundef %b) #2
  store i32 %h, ptr addrspace(1) %p, align 4
  ret void
}
declare noundef i32 @iron.cvt.pk.f16.f32(float noundef, float noundef) unnamed_addr #1
";
        let out = apply_conversions(ir).unwrap();
        assert!(!out.contains("declare"), "{out}");
        assert!(
            out.contains("%rounded = fptrunc <2 x float> %pair to <2 x half>"),
            "{out}"
        );
        assert!(out.contains("tail call noundef i32 @iron.cvt.pk.f16.f32(float noundef %a"));
        let bf16 = ir.replace("pk.f16", "pk.bf16");
        let out = apply_conversions(&bf16).unwrap();
        assert!(!out.contains("declare"), "{out}");
        assert!(
            out.contains("%rounded = fptrunc <2 x float> %pair to <2 x bfloat>"),
            "{out}"
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
        let ir = "declare i16 @iron.cvt.pk.f16.f32(float, float)\n";
        let error = apply_conversions(ir).unwrap_err().to_string();
        assert!(error.contains("takes two f32 and returns a u32"), "{error}");
        let ir = "declare i16 @iron.cvt.pk.bf16.f32(float, float)\n";
        let error = apply_conversions(ir).unwrap_err().to_string();
        assert!(error.contains("bf16 pair conversion marker"), "{error}");
    }
}
