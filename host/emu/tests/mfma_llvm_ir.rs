//! Every MFMA intrinsic LLVM offers for gfx90a, gfx942 and gfx950, built from LLVM IR with the
//! toolchain's `llc`, run on seeded random inputs laid out as AMD documents and compared with a
//! naive f64 matmul; with the CBSZ/ABID/BLGP modifiers, and gfx950's `f8f6f4` instructions in every
//! pair of formats, scaled and unscaled.

mod common;
mod matrix;

use matrix::catalog::{Acc, Case, F8F6F4, MatrixOp, Variant, catalog, f8f6f4};
use matrix::check;
use matrix::kernels::{build_ir, llvm_ir};

/// The modifier combinations exercised for `op` besides the plain one.
fn modifier_variants(gfx: &str, op: &MatrixOp, index: usize) -> Vec<Variant> {
    let mut out = Vec::new();
    if op.acc == Acc::F64 {
        if gfx != "gfx90a" {
            // BLGP is neg:[a, b, c] for the f64 instructions of gfx942 and gfx950.
            out.push(Variant {
                blgp: 5,
                ..Variant::default()
            });
            out.push(Variant {
                blgp: 2,
                ..Variant::default()
            });
        }
        return out;
    }
    let block_bits = op.blocks.trailing_zeros();
    if block_bits > 0 {
        let cbsz = 1 + (index as u32) % block_bits;
        out.push(Variant {
            cbsz,
            abid: (1 << cbsz) - 1 - (index as u32) % (1 << cbsz).min(2),
            ..Variant::default()
        });
    }
    out.push(Variant {
        blgp: 1 + (index as u32) % 7,
        ..Variant::default()
    });
    out
}

fn cases(gfx: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (index, op) in catalog(gfx).into_iter().enumerate() {
        cases.push(Case {
            op,
            variant: Variant::default(),
        });
        for variant in modifier_variants(gfx, &op, index) {
            cases.push(Case { op, variant });
        }
    }
    if gfx == "gfx950" {
        let mut n = 0u32;
        for m in [16, 32] {
            for a in F8F6F4 {
                for b in F8F6F4 {
                    n += 1;
                    cases.push(Case {
                        op: f8f6f4(m, a, b),
                        variant: Variant {
                            scale_sel: Some((n % 4, (n / 4) % 4)),
                            ..Variant::default()
                        },
                    });
                    if a == b || n.is_multiple_of(3) {
                        cases.push(Case {
                            op: f8f6f4(m, a, b),
                            variant: Variant::default(),
                        });
                    }
                }
            }
        }
    }
    cases
}

fn run(gfx: &str) {
    let cases = cases(gfx);
    let Some(mut code) = build_ir(gfx, &llvm_ir(&cases)) else {
        common::skip("llc or rust-lld not available");
        return;
    };
    for (seed, case) in cases.iter().enumerate() {
        check(&mut code, gfx, case, seed as u64);
    }
    eprintln!("{gfx}: {} MFMA kernels checked", cases.len());
}

#[test]
fn gfx90a_intrinsics_match_a_naive_matmul() {
    run("gfx90a");
}

#[test]
fn gfx942_intrinsics_match_a_naive_matmul() {
    run("gfx942");
}

#[test]
fn gfx950_intrinsics_match_a_naive_matmul() {
    run("gfx950");
}
