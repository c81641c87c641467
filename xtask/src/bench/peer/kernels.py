"""Triton equivalents of Iron's library kernels, compiled offline for one gfx.

`cargo xtask bench --peer triton` runs this file with the pinned Triton of its venv:

    python kernels.py REQUEST.json OUT_DIR

REQUEST.json is `{"gfx": "gfx942", "wave": 64, "workloads": [...]}`, each workload
`{"id": "...", "family": "add" | "cast" | "sum" | "row_sum" | "softmax" | "rmsnorm" |
"layernorm" | "transpose" | "rope" | "gemm" | "gemm_fp8" | "attention", ...shape}`,
with `"default_only": true` to skip the variants.
For each workload it compiles the Triton kernel with its default configuration (what a user
would write) and with autotune-style variants, writes each code object to OUT_DIR/<id>.<config>.hsaco
and prints a manifest (JSON, on stdout) that says how to launch each one: its kernel name, the
grid (as the user's launch lambda computes it), the workgroup size (num_warps x wave), the
kernel arguments in order (buffers by role, scalars by value) and the scratch sizes Triton 3.x
expects in its two trailing pointer arguments.

The arguments are specialised as Triton's JIT launcher specialises them: pointers and integers
divisible by 16 carry `tt.divisibility = 16`, integers equal to 1 become constants.
"""

import json
import os
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask)
    tl.store(out + offsets, total, mask=mask)


@triton.jit
def cast_kernel(x, y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask).to(y.dtype.element_ty), mask=mask)


@triton.jit
def sum_kernel(x, out, n, BLOCK: tl.constexpr):
    # Each program sums its block and adds it to the zeroed total.
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offsets, mask=offsets < n, other=0.0)
    tl.atomic_add(out, tl.sum(v, axis=0))


@triton.jit
def row_sum_kernel(x, out, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    v = tl.load(x + row * cols + offsets, mask=offsets < cols, other=0.0).to(tl.float32)
    tl.store(out + row, tl.sum(v, axis=0))


@triton.jit
def transpose_kernel(src, dst, rows, cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # A BLOCK_M x BLOCK_N tile of src per program, stored transposed into dst.
    offs_m = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < rows) & (offs_n[None, :] < cols)
    tile = tl.load(src + offs_m[:, None] * cols + offs_n[None, :], mask=mask)
    tl.store(dst + offs_n[:, None] * rows + offs_m[None, :], tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def rope_kernel(x, positions, heads, head_dim, theta,
                ROTARY: tl.constexpr, BLOCK_H: tl.constexpr):
    # GPT-NeoX RoPE in place: BLOCK_H heads of one token per program; pair j is elements j and
    # j + ROTARY / 2, turned by position * theta^(-2j / ROTARY).
    token = tl.program_id(0)
    HALF: tl.constexpr = ROTARY // 2
    j = tl.arange(0, HALF)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    position = tl.load(positions + token).to(tl.float32)
    inv_freq = tl.exp2(j.to(tl.float32) * (-2.0 * tl.log2(theta) / ROTARY))
    angle = position * inv_freq
    cos = tl.cos(angle)[None, :]
    sin = tl.sin(angle)[None, :]
    first = x + token * heads * head_dim + h[:, None] * head_dim + j[None, :]
    mask = h[:, None] < heads
    a = tl.load(first, mask=mask).to(tl.float32)
    b = tl.load(first + HALF, mask=mask).to(tl.float32)
    tl.store(first, (a * cos - b * sin).to(x.dtype.element_ty), mask=mask)
    tl.store(first + HALF, (a * sin + b * cos).to(x.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(x, out, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x + row * cols + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out + row * cols + offsets, y.to(out.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_kernel(x, weight, out, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x + row * cols + offsets, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(weight + offsets, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / cols + eps)
    y = v * rstd * w
    tl.store(out + row * cols + offsets, y.to(out.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_kernel(x, weight, bias, out, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x + row * cols + offsets, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / cols
    centered = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / cols + eps)
    w = tl.load(weight + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias + offsets, mask=mask, other=0.0).to(tl.float32)
    y = centered * rstd * w + b
    tl.store(out + row * cols + offsets, y.to(out.dtype.element_ty), mask=mask)


@triton.jit
def gemm_kernel(a, b, c, M, N, K,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    # The matrix-multiplication tutorial's kernel: grouped program order, K-edge masks.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a_tile = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b_tile = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=c_mask)


@triton.jit
def gemm_scaled_kernel(a, b, c, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       scale_a, scale_b,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # The tutorial's kernel on FP8 operands with one scale per tensor, applied to the
    # accumulator.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a_tile = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b_tile = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = acc * (scale_a * scale_b)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=c_mask)


@triton.jit
def attention_kernel(q, k, v, o, seq_q, seq_kv, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr):
    # The flash-attention tutorial's forward pass: BLOCK_M queries of one head per program,
    # online softmax in base 2 over BLOCK_N keys at a time, probabilities rounded to the input
    # type for the second product; causal programs stop at their last visible key block.
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = q + head * seq_q * HEAD_DIM
    k_base = k + head * seq_kv * HEAD_DIM
    v_base = v + head * seq_kv * HEAD_DIM
    q_tile = tl.load(q_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
                     mask=offs_m[:, None] < seq_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = seq_kv
    if CAUSAL:
        hi = tl.minimum(seq_kv, (start_m + 1) * BLOCK_M + seq_kv - seq_q)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k_tile = tl.load(k_base + cols[None, :] * HEAD_DIM + offs_d[:, None],
                         mask=cols[None, :] < seq_kv, other=0.0)
        qk = tl.dot(q_tile, k_tile) * qk_scale
        visible = cols[None, :] < seq_kv
        if CAUSAL:
            visible = visible & (offs_m[:, None] + seq_kv - seq_q >= cols[None, :])
        qk = tl.where(visible, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v_tile = tl.load(v_base + cols[:, None] * HEAD_DIM + offs_d[None, :],
                         mask=cols[:, None] < seq_kv, other=0.0)
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * alpha[:, None])
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o + head * seq_q * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
             acc.to(o.dtype.element_ty), mask=offs_m[:, None] < seq_q)


TRITON_TYPE = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "u32": "u32",
               "fp8e4b8": "fp8e4b8", "fp8e4nv": "fp8e4nv"}


def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


def cdiv(a, b):
    return (a + b - 1) // b


def family_configs(w):
    """(kernel, args, configs) of one workload: `args` in the kernel's order, each
    `(name, type, value)` with value None for a buffer (passed by role) and a number for a
    scalar; `configs` the default first, then the autotune-style variants, each a dict of
    constexprs, `num_warps`, `num_stages` and `grid`."""
    family = w["family"]
    if family == "add":
        n = w["n"]
        t = "*" + TRITON_TYPE[w["dtype"]]
        args = [("x", t, None), ("y", t, None), ("out", t, None), ("n", "i32", n)]
        # The vector-add tutorial: BLOCK 1024, 4 warps.
        configs = [dict(name="default", BLOCK=1024, num_warps=4)]
        for block, warps in [(512, 4), (2048, 4), (4096, 8), (1024, 8), (2048, 8)]:
            configs.append(dict(name=f"b{block}w{warps}", BLOCK=block, num_warps=warps))
        for c in configs:
            c["grid"] = [cdiv(n, c["BLOCK"]), 1, 1]
        return add_kernel, args, configs
    if family == "cast":
        n = w["n"]
        args = [("x", "*" + TRITON_TYPE[w["dtype"]], None), ("y", "*" + TRITON_TYPE[w["out"]], None),
                ("n", "i32", n)]
        # An elementwise kernel as the vector-add tutorial writes one: BLOCK 1024, 4 warps.
        configs = [dict(name="default", BLOCK=1024, num_warps=4)]
        for block, warps in [(512, 4), (2048, 4), (4096, 4), (4096, 8), (8192, 8)]:
            configs.append(dict(name=f"b{block}w{warps}", BLOCK=block, num_warps=warps))
        for c in configs:
            c["grid"] = [cdiv(n, c["BLOCK"]), 1, 1]
        return cast_kernel, args, configs
    if family == "sum":
        n = w["n"]
        args = [("x", "*fp32", None), ("out", "*fp32", None), ("n", "i32", n)]
        # A block per program and one atomic add of its sum into a zeroed total.
        configs = [dict(name="default", BLOCK=1024, num_warps=4)]
        for block, warps in [(2048, 4), (4096, 4), (4096, 8), (8192, 8), (16384, 16)]:
            configs.append(dict(name=f"b{block}w{warps}", BLOCK=block, num_warps=warps))
        for c in configs:
            c["grid"] = [cdiv(n, c["BLOCK"]), 1, 1]
            c["zero_output"] = True
        return sum_kernel, args, configs
    if family == "transpose":
        rows, cols = w["rows"], w["cols"]
        args = [("src", "*fp32", None), ("dst", "*fp32", None),
                ("rows", "i32", rows), ("cols", "i32", cols)]
        tiles = [("default", 64, 64, 4), ("32x32w4", 32, 32, 4), ("32x32w1", 32, 32, 1),
                 ("64x64w8", 64, 64, 8), ("128x64w4", 128, 64, 4), ("128x128w8", 128, 128, 8)]
        configs = [dict(name=name, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps,
                        grid=[cdiv(cols, bn), cdiv(rows, bm), 1])
                   for name, bm, bn, warps in tiles]
        return transpose_kernel, args, configs
    if family == "rope":
        tokens, heads, head_dim = w["tokens"], w["heads"], w["head_dim"]
        args = [("x", "*" + TRITON_TYPE[w["dtype"]], None), ("positions", "*u32", None),
                ("heads", "i32", heads), ("head_dim", "i32", head_dim),
                ("theta", "fp32", w["theta"])]
        # Default: every head of a token in one program, 4 warps.
        all_heads = next_power_of_2(heads)
        shapes = [("default", all_heads, 4), ("h1w1", 1, 1), ("h4w1", 4, 1), ("h8w2", 8, 2),
                  ("h16w4", 16, 4), (f"h{all_heads}w8", all_heads, 8)]
        configs = [dict(name=name, ROTARY=w["rotary_dim"], BLOCK_H=bh, num_warps=warps,
                        grid=[tokens, cdiv(heads, bh), 1])
                   for name, bh, warps in shapes]
        return rope_kernel, args, configs
    if family in ("softmax", "rmsnorm", "layernorm", "row_sum"):
        rows, cols = w["rows"], w["cols"]
        t = "*" + TRITON_TYPE[w["dtype"]]
        kernel, args = {
            "softmax": (softmax_kernel, [("x", t, None), ("out", t, None), ("cols", "i32", cols)]),
            "row_sum": (row_sum_kernel, [("x", t, None), ("out", "*fp32", None),
                                         ("cols", "i32", cols)]),
            "rmsnorm": (rmsnorm_kernel, [("x", t, None), ("weight", t, None), ("out", t, None),
                                         ("cols", "i32", cols), ("eps", "fp32", w.get("eps", 0.0))]),
            "layernorm": (layernorm_kernel, [("x", t, None), ("weight", t, None),
                                             ("bias", t, None), ("out", t, None),
                                             ("cols", "i32", cols), ("eps", "fp32", w.get("eps", 0.0))]),
        }[family]
        block = next_power_of_2(cols)
        configs = [dict(name="default", BLOCK=block, num_warps=4)]
        for warps in (1, 2, 8, 16):
            configs.append(dict(name=f"w{warps}", BLOCK=block, num_warps=warps))
        for c in configs:
            c["grid"] = [rows, 1, 1]
        return kernel, args, configs
    if family in ("gemm", "gemm_fp8"):
        m, n, k = w["m"], w["n"], w["k"]
        t = "*" + TRITON_TYPE[w["dtype"]]
        o = "*" + TRITON_TYPE[w["out"]]
        b_col_major = w["b_layout"] == "col"
        stride_bk, stride_bn = (1, k) if b_col_major else (n, 1)
        args = [("a", t, None), ("b", t, None), ("c", o, None),
                ("M", "i32", m), ("N", "i32", n), ("K", "i32", k),
                ("stride_am", "i32", k), ("stride_ak", "i32", 1),
                ("stride_bk", "i32", stride_bk), ("stride_bn", "i32", stride_bn),
                ("stride_cm", "i32", n), ("stride_cn", "i32", 1)]
        kernel = gemm_kernel
        if family == "gemm_fp8":
            args += [("scale_a", "fp32", w["scale_a"]), ("scale_b", "fp32", w["scale_b"])]
            kernel = gemm_scaled_kernel
        # The issue measured Triton's tutorial tile: 128x128x64, 4 warps, GROUP_M 8.
        tiles = [("default", 128, 128, 64, 4, 2),
                 ("64x64x64w4", 64, 64, 64, 4, 2), ("64x64x32w4", 64, 64, 32, 4, 2),
                 ("128x128x64w8", 128, 128, 64, 8, 2), ("128x128x32w4s1", 128, 128, 32, 4, 1),
                 ("128x128x64w4s3", 128, 128, 64, 4, 3), ("256x128x64w8", 256, 128, 64, 8, 2)]
        configs = []
        for name, bm, bn, bk, warps, stages in tiles:
            configs.append(dict(name=name, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                num_warps=warps, num_stages=stages,
                                grid=[cdiv(m, bm) * cdiv(n, bn), 1, 1]))
        return kernel, args, configs
    if family == "attention":
        seq_q, seq_kv = w["seq_q"], w["seq_kv"]
        t = "*" + TRITON_TYPE[w["dtype"]]
        args = [("q", t, None), ("k", t, None), ("v", t, None), ("o", t, None),
                ("seq_q", "i32", seq_q), ("seq_kv", "i32", seq_kv),
                ("sm_scale", "fp32", w["scale"])]
        # The tutorial's AMD default: 128 x 64 blocks, 4 warps.
        blocks = [("default", 128, 64, 4, 2), ("64x64w4", 64, 64, 4, 2),
                  ("128x32w4", 128, 32, 4, 2), ("64x32w2", 64, 32, 2, 2),
                  ("128x64w8", 128, 64, 8, 2), ("128x64w4s1", 128, 64, 4, 1)]
        configs = [dict(name=name, HEAD_DIM=w["head_dim"], BLOCK_M=bm, BLOCK_N=bn,
                        CAUSAL=w["causal"], num_warps=warps, num_stages=stages,
                        grid=[cdiv(seq_q, bm), w["batch_heads"], 1])
                   for name, bm, bn, warps, stages in blocks]
        return attention_kernel, args, configs
    raise ValueError(f"unknown family {family}")


def compile_one(kernel, args, config, gfx, wave):
    """Compiles `kernel` for `gfx` as Triton's JIT would for these argument values."""
    signature, attrs, constexprs, launch_args = {}, {}, {}, []
    for i, (name, ty, value) in enumerate(args):
        if ty.startswith("*"):
            signature[name] = ty
            attrs[(i,)] = [["tt.divisibility", 16]]
            launch_args.append({"name": name, "kind": "buffer"})
        elif ty == "i32" and value == 1:
            signature[name] = "constexpr"
            constexprs[name] = 1
        else:
            signature[name] = ty
            if ty == "i32" and value % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
            launch_args.append({"name": name, "kind": ty, "value": value})
    skip = {"name", "grid", "num_warps", "num_stages", "zero_output"}
    for key, value in config.items():
        if key not in skip:
            signature[key] = "constexpr"
            constexprs[key] = value
    src = triton.compiler.ASTSource(fn=kernel, signature=signature, constexprs=constexprs,
                                    attrs=attrs)
    target = GPUTarget("hip", gfx, wave)
    backend = triton.compiler.make_backend(target)
    options = {"num_warps": config["num_warps"]}
    if "num_stages" in config:
        options["num_stages"] = config["num_stages"]
    options = backend.parse_options(options)
    compiled = triton.compile(src, target=target, options=options.__dict__)
    return compiled, launch_args


def main():
    request_path, out_dir = sys.argv[1], sys.argv[2]
    with open(request_path) as f:
        request = json.load(f)
    gfx, wave = request["gfx"], request["wave"]
    os.makedirs(out_dir, exist_ok=True)
    manifest = {"triton_version": triton.__version__,
                "fp_fusion": os.environ["TRITON_DEFAULT_FP_FUSION"], "kernels": []}
    for w in request["workloads"]:
        kernel, args, configs = family_configs(w)
        if w.get("default_only"):
            configs = configs[:1]
        for config in configs:
            print(f"  triton {gfx}: {w['id']} {config['name']}", file=sys.stderr, flush=True)
            compiled, launch_args = compile_one(kernel, args, config, gfx, wave)
            path = os.path.join(out_dir, f"{w['id']}.{config['name']}.hsaco")
            with open(path, "wb") as f:
                f.write(compiled.asm["hsaco"])
            meta = compiled.metadata
            manifest["kernels"].append({
                "workload": w["id"],
                "config": config["name"],
                "path": path,
                "kernel": compiled.name,
                "grid": config["grid"],
                "block": meta.num_warps * wave,
                "num_warps": meta.num_warps,
                "num_stages": meta.num_stages,
                "lds_bytes": meta.shared,
                "global_scratch_size": getattr(meta, "global_scratch_size", 0),
                "profile_scratch_size": getattr(meta, "profile_scratch_size", 0),
                "args": launch_args,
                "zero_output": config.get("zero_output", False),
            })
    json.dump(manifest, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
