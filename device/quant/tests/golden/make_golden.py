#!/usr/bin/env python3
"""Writes the golden files of iron-quant's element codecs from ml_dtypes.

Run from anywhere: `python3 make_golden.py` (needs `pip install ml_dtypes numpy`).
It rewrites, next to this script:

- `decode.txt`: for each format, the f32 bit pattern ml_dtypes gives for every code.
- `encode.txt`: a fixed, seeded set of f32 inputs and, for each format, the code
  ml_dtypes' `astype` gives for it.

The inputs are edge values (zeros, infinities, NaN, f32 extremes and subnormals), every
representable value of every format, the exact midpoints between neighbouring values
(round-half-to-even cases) with their f32 neighbours, values just past each format's
largest value, and seeded random values (random bit patterns and values spread over each
format's range).
"""

import pathlib

import ml_dtypes
import numpy as np

FORMATS = [
    ("fp8_e4m3fn", ml_dtypes.float8_e4m3fn, 8),
    ("fp8_e5m2", ml_dtypes.float8_e5m2, 8),
    ("fp8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 8),
    ("fp8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 8),
    ("fp6_e2m3", ml_dtypes.float6_e2m3fn, 6),
    ("fp6_e3m2", ml_dtypes.float6_e3m2fn, 6),
    ("fp4_e2m1", ml_dtypes.float4_e2m1fn, 4),
    ("e8m0", ml_dtypes.float8_e8m0fnu, 8),
]
RANDOM_BIT_PATTERNS = 300
RANDOM_PER_FORMAT = 60
SEED = 20240605


def decoded(dtype, bits):
    codes = np.arange(1 << bits, dtype=np.uint8)
    return codes.view(dtype).astype(np.float32)


def f32(values):
    # Values past the f32 range (e.g. twice E8M0's largest) become infinities on purpose.
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float32)


def next_up_down(values):
    values = f32(values)
    return np.concatenate(
        [np.nextafter(values, f32(np.inf)), np.nextafter(values, f32(-np.inf))]
    )


def inputs():
    rng = np.random.default_rng(SEED)
    parts = [
        f32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]),
        np.array([0x00000001, 0x807FFFFF, 0x00400000, 0x00600000, 0x00800000,
                  0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x7F400000], dtype=np.uint32).view(np.float32),
        rng.integers(0, 1 << 32, RANDOM_BIT_PATTERNS, dtype=np.uint64).astype(np.uint32).view(np.float32),
    ]
    for _, dtype, bits in FORMATS:
        values = decoded(dtype, bits)
        finite = np.unique(values[np.isfinite(values)].astype(np.float64))
        midpoints = (finite[:-1] + finite[1:]) / 2
        top = finite.max()
        beyond = [top * 1.0625, top * 1.125, top * 1.5, top * 2]
        parts += [f32(finite), f32(midpoints), next_up_down(midpoints), f32(beyond), -f32(beyond)]
        spread = rng.standard_normal(RANDOM_PER_FORMAT) * top / 4
        parts.append(f32(spread))
    data = np.concatenate(parts).astype(np.float32)
    # Keep one copy of each bit pattern, in first-seen order, so the file is stable.
    _, first = np.unique(data.view(np.uint32), return_index=True)
    return data[np.sort(first)]


def main():
    here = pathlib.Path(__file__).resolve().parent
    names = [name for name, _, _ in FORMATS]

    lines = ["# code " + " ".join(names),
             "# f32 bits (hex) of each code decoded by ml_dtypes; '-' where the format has no such code"]
    for code in range(256):
        row = [f"{code:02x}"]
        for _, dtype, bits in FORMATS:
            if code < (1 << bits):
                row.append(f"{decoded(dtype, bits)[code:code + 1].view(np.uint32)[0]:08x}")
            else:
                row.append("-")
        lines.append(" ".join(row))
    (here / "decode.txt").write_text("\n".join(lines) + "\n")

    data = inputs()
    columns = [data.astype(dtype).view(np.uint8) for _, dtype, _ in FORMATS]
    lines = ["# input_f32_bits " + " ".join(names),
             f"# ml_dtypes {ml_dtypes.__version__} astype codes (hex) of each input"]
    for i, value in enumerate(data.view(np.uint32)):
        lines.append(f"{value:08x} " + " ".join(f"{column[i]:02x}" for column in columns))
    (here / "encode.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
