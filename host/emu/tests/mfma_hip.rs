//! The MFMA builtins of HIP (`__builtin_amdgcn_mfma_*`), compiled by Debian's clang-22 for gfx90a,
//! gfx942 and gfx950, run on seeded random inputs and compared with a naive f64 matmul.

mod common;
mod matrix;

use matrix::catalog::{Case, F8F6F4, Variant, catalog, f8f6f4};
use matrix::check;
use matrix::kernels::{build_hip, hip_source};

fn cases(gfx: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = catalog(gfx)
        .into_iter()
        .map(|op| Case {
            op,
            variant: Variant::default(),
        })
        .collect();
    // A few broadcast patterns through the builtins' immediate operands.
    let broadcasts = [(2, 1, 0, 3), (0, 0, 0, 6)];
    for (index, (cbsz, abid, _, blgp)) in broadcasts.into_iter().enumerate() {
        let op = catalog(gfx)[1 + index];
        cases.push(Case {
            op,
            variant: Variant {
                cbsz,
                abid,
                blgp,
                ..Variant::default()
            },
        });
    }
    if gfx == "gfx950" {
        for (n, (a, b)) in F8F6F4.into_iter().zip(F8F6F4.into_iter().rev()).enumerate() {
            let n = n as u32;
            for m in [16, 32] {
                cases.push(Case {
                    op: f8f6f4(m, a, b),
                    variant: Variant {
                        scale_sel: Some((n % 4, 3 - n % 4)),
                        ..Variant::default()
                    },
                });
            }
        }
        cases.push(Case {
            op: f8f6f4(16, F8F6F4[4], F8F6F4[4]),
            variant: Variant::default(),
        });
    }
    cases
}

fn run(gfx: &str) {
    let cases = cases(gfx);
    let Some(mut code) = build_hip(gfx, &hip_source(&cases)) else {
        common::skip("clang-22 not available");
        return;
    };
    for (seed, case) in cases.iter().enumerate() {
        check(&mut code, gfx, case, 1000 + seed as u64);
    }
    eprintln!("{gfx}: {} HIP MFMA kernels checked", cases.len());
}

#[test]
fn gfx90a_builtins_match_a_naive_matmul() {
    run("gfx90a");
}

#[test]
fn gfx942_builtins_match_a_naive_matmul() {
    run("gfx942");
}

#[test]
fn gfx950_builtins_match_a_naive_matmul() {
    run("gfx950");
}
