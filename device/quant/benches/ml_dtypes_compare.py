#!/usr/bin/env python3
"""Times ml_dtypes' `astype` conversions on the sizes `benches/codecs.rs` uses.

ml_dtypes converts element by element: no block scales, and FP4/FP6 stay one code per
byte (no packing). The numbers are GB/s of f32 data (4 bytes per value), the best of
several runs, to set beside the criterion throughput of the MX codecs.
Needs `pip install ml_dtypes numpy`.
"""

import time

import ml_dtypes
import numpy as np

ROWS, COLS = 4096, 1024
REPEATS = 7
FORMATS = [
    ("mxfp4 (float4_e2m1fn)", ml_dtypes.float4_e2m1fn),
    ("mxfp8_e4m3 (float8_e4m3fn)", ml_dtypes.float8_e4m3fn),
    ("mxfp6_e2m3 (float6_e2m3fn)", ml_dtypes.float6_e2m3fn),
]


def best_seconds(fn):
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    rng = np.random.default_rng(7)
    data = (rng.random(ROWS * COLS, dtype=np.float32) * 8 - 4).reshape(ROWS, COLS)
    gigabytes = data.nbytes / 1e9
    print(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}, {ROWS}x{COLS} f32")
    for name, dtype in FORMATS:
        encoded = data.astype(dtype)
        to_format = best_seconds(lambda: data.astype(dtype))
        to_f32 = best_seconds(lambda: encoded.astype(np.float32))
        print(f"{name:30s} f32->fmt {gigabytes / to_format:6.3f} GB/s   fmt->f32 {gigabytes / to_f32:6.3f} GB/s")


if __name__ == "__main__":
    main()
