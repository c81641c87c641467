//! Matrix instructions on hand-written code: accumulation-register moves, A and B read from
//! AGPRs, EXEC (ignored by MFMA), and gfx90a's flushing of f16 denormals.
//!
//! Harness: kernarg = {out, in}; lane `l` loads `in[k * 64 + l]` into v1, v2, v3; the body leaves
//! results in v4..v7, stored to `out[k * 64 + l]` for all 64 lanes.

mod common;

use common::{Args, AsmKernel, bytes_of, from_bytes};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GFX: [&str; 3] = ["gfx90a", "gfx942", "gfx950"];

/// Runs `body` on one full wave of `gfx`; returns v4..v7 of every lane (`None` without `llc`).
fn run_on(gfx: &str, body: &[&str], inputs: &[[u32; 64]; 3]) -> Option<[[u32; 64]; 4]> {
    let mut lines = vec![
        "s_load_dwordx4 s[8:11], s[0:1], 0x0",
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v20, 2, v0",
        "global_load_dword v1, v20, s[10:11]",
        "global_load_dword v2, v20, s[10:11] offset:256",
        "global_load_dword v3, v20, s[10:11] offset:512",
        "v_mov_b32 v4, 0",
        "v_mov_b32 v5, 0",
        "v_mov_b32 v6, 0",
        "v_mov_b32 v7, 0",
        "s_waitcnt vmcnt(0)",
    ];
    lines.extend_from_slice(body);
    lines.extend_from_slice(&[
        "s_mov_b64 exec, -1",
        "global_store_dword v20, v4, s[8:9]",
        "global_store_dword v20, v5, s[8:9] offset:256",
        "global_store_dword v20, v6, s[8:9] offset:512",
        "global_store_dword v20, v7, s[8:9] offset:768",
    ]);
    let mut k = AsmKernel::new(gfx, &lines)?;
    let input: Vec<u32> = inputs.iter().flatten().copied().collect();
    let pin = k.gpu.memory_mut().alloc(768, 256).unwrap();
    k.gpu.memory_mut().write(pin, &bytes_of(&input)).unwrap();
    let pout = k.gpu.memory_mut().alloc(1024, 256).unwrap();
    k.gpu.memory_mut().write(pout, &[0xee; 1024]).unwrap();
    k.run(&Args::default().ptr(pout).ptr(pin).0, [1, 1, 1], [64, 1, 1])
        .unwrap();
    let out: Vec<u32> = from_bytes(&k.gpu.memory().read_vec(pout, 1024).unwrap());
    let mut r = [[0u32; 64]; 4];
    for (k, reg) in r.iter_mut().enumerate() {
        reg.copy_from_slice(&out[k * 64..k * 64 + 64]);
    }
    Some(r)
}

fn random_floats(seed: u64) -> [[u32; 64]; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-2.0f32..2.0).to_bits()))
}

/// The 4x4x1 f32 instruction's name on `gfx`.
fn mfma_4x4x1(gfx: &str) -> &'static str {
    if gfx == "gfx90a" {
        "v_mfma_f32_4x4x1f32"
    } else {
        "v_mfma_f32_4x4x1_16b_f32"
    }
}

#[test]
fn accumulation_registers_move_values() {
    let inputs = random_floats(1);
    for gfx in GFX {
        let Some(out) = run_on(
            gfx,
            &[
                "v_accvgpr_write_b32 a5, v1",
                "v_accvgpr_mov_b32 a200, a5",
                "v_accvgpr_read_b32 v4, a200",
                "v_accvgpr_write_b32 a7, 1.0",
                "v_accvgpr_read_b32 v5, a7",
            ],
            &inputs,
        ) else {
            common::skip("llc not available");
            return;
        };
        for l in 0..64 {
            assert_eq!(out[0][l], inputs[0][l], "{gfx} lane {l}");
            assert_eq!(out[1][l], 1.0f32.to_bits(), "{gfx} lane {l}");
        }
    }
}

/// `v_mfma_f32_4x4x1` (16 blocks): lane `l` holds A[l / 4][l % 4] and B[l / 4][l % 4]; D register
/// `r` of lane `l` is D[l / 4][r][l % 4] = C + A[l / 4][r] * B[l / 4][l % 4], one product rounded
/// once.
fn check_4x4x1(gfx: &str, inputs: &[[u32; 64]; 3], out: &[[u32; 64]; 4]) {
    let f = f32::from_bits;
    for l in 0..64 {
        for r in 0..4 {
            let a = f(inputs[0][l / 4 * 4 + r]);
            let b = f(inputs[1][l]);
            let want = a.mul_add(b, f(inputs[2][l]));
            assert_eq!(f(out[r][l]), want, "{gfx} lane {l} register {r}");
        }
    }
}

#[test]
fn sources_and_accumulators_may_be_agprs() {
    let inputs = random_floats(2);
    for gfx in GFX {
        let mfma = format!("{} a[2:5], a0, a1, a[2:5]", mfma_4x4x1(gfx));
        let Some(out) = run_on(
            gfx,
            &[
                "v_accvgpr_write_b32 a0, v1",
                "v_accvgpr_write_b32 a1, v2",
                "v_accvgpr_write_b32 a2, v3",
                "v_accvgpr_write_b32 a3, v3",
                "v_accvgpr_write_b32 a4, v3",
                "v_accvgpr_write_b32 a5, v3",
                "s_nop 7",
                &mfma,
                "s_nop 7",
                "s_nop 7",
                "v_accvgpr_read_b32 v4, a2",
                "v_accvgpr_read_b32 v5, a3",
                "v_accvgpr_read_b32 v6, a4",
                "v_accvgpr_read_b32 v7, a5",
            ],
            &inputs,
        ) else {
            common::skip("llc not available");
            return;
        };
        check_4x4x1(gfx, &inputs, &out);
    }
}

#[test]
fn mfma_reads_and_writes_every_lane_whatever_exec() {
    let inputs = random_floats(3);
    for gfx in GFX {
        let mfma = format!("{} v[4:7], v1, v2, v[8:11]", mfma_4x4x1(gfx));
        let Some(out) = run_on(
            gfx,
            &[
                "v_mov_b32 v8, v3",
                "v_mov_b32 v9, v3",
                "v_mov_b32 v10, v3",
                "v_mov_b32 v11, v3",
                "s_mov_b64 exec, 0xffff",
                &mfma,
                "s_nop 7",
            ],
            &inputs,
        ) else {
            common::skip("llc not available");
            return;
        };
        check_4x4x1(gfx, &inputs, &out);
    }
}

#[test]
fn gfx90a_flushes_f16_denormals_and_later_targets_keep_them() {
    // Every row of A holds two f16 subnormals 2^-24 (k = 0, 1) and two zeros (v1, v2 = 0); B holds
    // 1.0 at k = 0, 1 and zeros (v3, v2): each D element is 2^-23, or 0 if the subnormals are
    // flushed.
    let inputs = [[0x0001_0001; 64], [0; 64], [0x3c00_3c00; 64]];
    for gfx in GFX {
        let name = if gfx == "gfx90a" {
            "v_mfma_f32_4x4x4f16"
        } else {
            "v_mfma_f32_4x4x4_16b_f16"
        };
        let mfma = format!("{name} v[12:15], v[8:9], v[10:11], 0");
        let body = [
            "v_mov_b32 v8, v1",
            "v_mov_b32 v9, v2",
            "v_mov_b32 v10, v3",
            "v_mov_b32 v11, v2",
            &mfma,
            "s_nop 7",
            "v_mov_b32 v4, v12",
            "v_mov_b32 v5, v13",
            "v_mov_b32 v6, v14",
            "v_mov_b32 v7, v15",
        ];
        let Some(out) = run_on(gfx, &body, &inputs) else {
            common::skip("llc not available");
            return;
        };
        let want = if gfx == "gfx90a" { 0.0 } else { 2f32.powi(-23) };
        for (r, register) in out.iter().enumerate() {
            for (l, &v) in register.iter().enumerate() {
                assert_eq!(f32::from_bits(v), want, "{gfx} lane {l} register {r}");
            }
        }
    }
}
