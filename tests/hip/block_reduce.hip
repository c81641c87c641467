// Block sum through __shared__ memory and barriers, a wave-level butterfly with ds_bpermute, an
// atomic add of each block's sum into a global total, and a divergent per-thread loop.
#include "hip_prelude.h"

extern "C" __global__ void block_reduce(const float *x, float *block_sums, float *total,
                                        unsigned *counts, unsigned n) {
  __shared__ float partial[1024];
  __shared__ float wave_sums[16];
  unsigned tid = thread_idx_x();
  unsigned bdim = block_dim_x();
  unsigned i = block_idx_x() * bdim + tid;
  float v = 0.0f;
  // Divergent loop: each thread visits its own grid-stride elements.
  for (unsigned j = i; j < n; j += bdim * grid_dim_x()) {
    v += x[j];
  }
  // A data-dependent loop count per thread.
  unsigned steps = 0;
  for (unsigned k = tid % 7; k > 0; --k) {
    steps += k;
  }
  counts[i] = steps;
  partial[tid] = v;
  sync_threads();
  float w = partial[tid];
  for (unsigned m = 1; m < 64; m <<= 1) {
    w += shfl_xor(w, m);
  }
  if (lane_id() == 0) {
    wave_sums[tid / 64] = w;
  }
  sync_threads();
  if (tid == 0) {
    float s = 0.0f;
    for (unsigned k = 0; k < (bdim + 63) / 64; ++k) {
      s += wave_sums[k];
    }
    block_sums[block_idx_x()] = s;
    __hip_atomic_fetch_add(total, s, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
}
