// The few HIP spellings the test kernels use, defined on clang's AMDGPU builtins so that the
// kernels compile with `-nogpuinc` (no ROCm headers needed).
#pragma once
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))

__device__ static inline unsigned thread_idx_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ static inline unsigned block_idx_x() { return __builtin_amdgcn_workgroup_id_x(); }
// blockDim.x: read from the hidden arguments (code object v5), as HIP does.
__device__ static inline unsigned block_dim_x() { return __builtin_amdgcn_workgroup_size_x(); }
// gridDim.x: hidden_block_count_x, the first hidden argument.
__device__ static inline unsigned grid_dim_x() {
  return *(const unsigned *)__builtin_amdgcn_implicitarg_ptr();
}
__device__ static inline void sync_threads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ static inline unsigned lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
__device__ static inline float shfl_xor(float v, unsigned mask) {
  int bits = __builtin_bit_cast(int, v);
  int other = __builtin_amdgcn_ds_bpermute((int)((lane_id() ^ mask) << 2), bits);
  return __builtin_bit_cast(float, other);
}
