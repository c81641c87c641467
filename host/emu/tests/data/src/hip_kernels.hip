#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
typedef unsigned int u32;
typedef unsigned long long u64;
typedef _Float16 half;
typedef _Float16 half2 __attribute__((ext_vector_type(2)));
typedef float float4v __attribute__((ext_vector_type(4)));
__device__ inline void __syncthreads() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); }
__device__ inline u32 tid() { return __builtin_amdgcn_workitem_id_x(); }
__device__ inline u32 bid() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ inline u32 gid() { return bid() * 256 + tid(); }

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  u32 i = gid(); if (i < (u32)n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void reduce_shared(const float* x, float* out) {
  __shared__ float s[256];
  u32 t = tid();
  s[t] = x[gid()];
  __syncthreads();
  for (u32 k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) out[bid()] = s[0];
}
extern "C" __global__ void shuffles(const int* x, int* y) {
  u32 i = gid(); int v = x[i];
  int a = __builtin_amdgcn_ds_bpermute((int)((tid() ^ 1) * 4), v);
  int c = __builtin_amdgcn_update_dpp(0, v, 0x4e, 0xf, 0xf, false); // quad_perm
  int d = __builtin_amdgcn_ds_swizzle(v, 0x041f);
  int e = __builtin_amdgcn_readlane(v, 5);
  int f = __builtin_amdgcn_update_dpp(v, v, 0x141, 0xa, 0x5, false); // row_mirror-ish
  int m = __builtin_amdgcn_update_dpp(v, v, 0x121, 0xf, 0xf, true); // row_ror:1
#if defined(__GFX9__)
  int b = __builtin_amdgcn_mov_dpp(v, 0x130, 0xf, 0xf, true);  // row_bcast / wave shl
  int g = __builtin_amdgcn_update_dpp(v, v, 0x13c, 0xf, 0xf, false); // wave_ror
  int h = __builtin_amdgcn_update_dpp(v, v, 0x142, 0xf, 0xf, true); // row_bcast15
  int k2 = __builtin_amdgcn_update_dpp(v, v, 0x143, 0xf, 0xf, true); // row_bcast31
  int n2 = __builtin_amdgcn_update_dpp(v, v, 0x101, 0xf, 0xf, true); // row_shl:1
#else
  int b = __builtin_amdgcn_mov_dpp(v, 0x152, 0xf, 0xf, true);  // row_share:2
  int g = __builtin_amdgcn_update_dpp(v, v, 0x165, 0xf, 0x3, false); // row_xmask:5
  int h = __builtin_amdgcn_mov_dpp8(v, 1 | 0 << 3 | 3 << 6 | 2 << 9 | 7 << 12 | 7 << 15 | 5 << 18 | 4 << 21);
  int k2 = __builtin_amdgcn_permlane16(v, v, 0x76543210u, 0x89abcdefu, false, false);
  int n2 = __builtin_amdgcn_permlanex16(v, v, 0x01234567u, 0xfedcba98u, false, false);
#endif
  y[i] = a + b * 3 + (c ^ d) + e - f + g + h + k2 + m + n2;
}
extern "C" __global__ void dbl(const double* x, double* y, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  double v = x[i];
  y[i] = __builtin_sqrt(v * v + 1.0) / (v - 3.0) + __builtin_fma(v, 2.0, 1.0) + __builtin_floor(v) + (double)(long long)v;
}
extern "C" __global__ void halfs(const half2* x, half2* y, float* z, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  half2 v = x[i];
  half2 w = v * v + (half2){1.0f16, 2.0f16};
  y[i] = w - v;
  z[i] = (float)w.x * (float)w.y + (float)(v.x > v.y ? v.x : v.y);
}
extern "C" __global__ void intops(const u32* x, u32* y, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  u32 v = x[i];
  u32 r = __builtin_popcount(v) + __builtin_clz(v | 1) + __builtin_ctz(v | 0x80000000u);
  r += v / 10 + v % 7 + (u32)((int)v / -3) + (u32)((u64)v * 0x123456789ull >> 32);
  r ^= __builtin_bitreverse32(v) + (v >> (i & 31)) + (u32)((int)v >> 3);
  r += __builtin_amdgcn_ubfe(v, 3, 7) + __builtin_amdgcn_sbfe(v, 5, 9);
  r += (v > 1000u ? v : 1000u) + (u32)__builtin_abs((int)v);
  y[i] = r;
}
extern "C" __global__ void fops(const float* x, float* y, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  float v = x[i];
  float r = __builtin_sqrtf(__builtin_fabsf(v)) + __builtin_expf(v * 0.1f) + __builtin_logf(__builtin_fabsf(v) + 1.0f);
  r += 1.0f / (v + 0.5f) + __builtin_sinf(v) * __builtin_cosf(v) + __builtin_truncf(v) + __builtin_ceilf(v) + __builtin_rintf(v);
  r += __builtin_fminf(v, 2.0f) + __builtin_fmaxf(v, -2.0f) + __builtin_exp2f(v) + __builtin_log2f(__builtin_fabsf(v) + 2.0f);
  r += __builtin_amdgcn_rsqf(__builtin_fabsf(v) + 1.0f) + __builtin_amdgcn_fractf(v) + __builtin_ldexpf(v, 3) + __builtin_copysignf(1.0f, v);
  r += (float)(int)v + (float)(u32)__builtin_fabsf(v);
  y[i] = r;
}
extern "C" __global__ void atomics(u32* c, u64* d, float* f, int* m, const int* x, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  int v = x[i];
  __hip_atomic_fetch_add(c, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(m, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(m + 1, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(f, (float)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(d, (u64)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  u32 old = __hip_atomic_fetch_and(c + 1, (u32)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_exchange(c + 2, old, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  u32 expected = 5; __hip_atomic_compare_exchange_strong(c + 3, &expected, (u32)v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __builtin_amdgcn_atomic_inc32(c + 4, 100u, __ATOMIC_RELAXED, "agent");
  __builtin_amdgcn_atomic_dec32(c + 5, 100u, __ATOMIC_RELAXED, "agent");
}
extern "C" __global__ void lds_atomics(u32* out, u32* order, const u32* x) {
  __shared__ u32 s_add[64];
  __shared__ u32 s_max[64];
  __shared__ u32 s_or[64];
  __shared__ u32 counter;
  __shared__ double dd[32];
  u32 t = tid();
  if (t < 64) { s_add[t] = 0; s_max[t] = 0; s_or[t] = 0; }
  if (t == 0) counter = 0;
  if (t < 32) dd[t] = 1.0;
  __syncthreads();
  u32 v = x[gid()];
  __hip_atomic_fetch_add(&s_add[v % 64], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_max(&s_max[(v >> 8) % 64], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_or(&s_or[t % 64], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  order[gid()] = __hip_atomic_fetch_add(&counter, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __syncthreads();
  if (t < 64) out[bid() * 64 + t] = s_add[t] + s_max[t] + s_or[t] + (u32)dd[t % 32];
}
extern "C" __global__ void lds_wide(const float4v* x, float4v* y) {
  __shared__ float4v s[256];
  __shared__ double d2[512];
  u32 t = tid();
  s[t] = x[gid()];
  d2[2*t] = (double)t; d2[2*t+1] = 2.0 * t;
  __syncthreads();
  float4v a = s[255 - t];
  float4v b = s[(t + 17) & 255];
  y[gid()] = a + b + (float)(d2[511 - 2*t] + d2[(3*t)&511]);
}
extern "C" __global__ void local_array(const int* x, int* y, int n) {
  int arr[40];
  u32 i = gid();
  for (int k = 0; k < 40; k++) arr[k] = x[(i + k) % n];
  int idx = x[i] & 31;
  arr[idx] += 7;
  int s = 0; for (int k = 0; k < 40; k++) s += arr[(k * 3 + idx) % 40] * k;
  y[i] = s;
}
extern "C" __global__ void grid3(float* y, int w, int h) {
  u32 x = __builtin_amdgcn_workgroup_id_x() * 8 + __builtin_amdgcn_workitem_id_x();
  u32 yy = __builtin_amdgcn_workgroup_id_y() * 8 + __builtin_amdgcn_workitem_id_y();
  u32 z = __builtin_amdgcn_workgroup_id_z() * 4 + __builtin_amdgcn_workitem_id_z();
  if (x < (u32)w && yy < (u32)h) y[(z * h + yy) * w + x] = x * 1.0f + yy * 100.0f + z * 10000.0f;
}
extern "C" __global__ void wave_vote(const int* x, u64* y) {
  u32 i = gid();
  int v = x[i];
  u64 b = __builtin_amdgcn_ballot_w64(v > 0);
  u32 l = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int first = __builtin_amdgcn_readfirstlane(v);
  y[i] = b + l + first + __builtin_amdgcn_ballot_w64(v == first);
}
extern "C" __global__ void i64ops(const long long* x, long long* y, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  long long v = x[i];
  unsigned long long u = (unsigned long long)v;
  y[i] = v / 1000003 + (v % 77) + (long long)(u >> 17) + (v << 5) + __builtin_popcountll(u) + __builtin_clzll(u | 1) + (long long)((double)v * 0.5);
}
extern "C" __global__ void bytes(const unsigned char* x, unsigned short* y, signed char* z, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  unsigned char c = x[i];
  y[i] = (unsigned short)(c * 300 + x[i + 1]);
  z[i] = (signed char)(c - 128) / 3;
}
extern "C" __global__ void pk_math(const float* x, float* y, int n) {
  u32 i = gid(); if (2*i + 1 >= (u32)n) return;
  typedef float float2v __attribute__((ext_vector_type(2)));
  float2v a = ((const float2v*)x)[i];
  float2v b = a * a + (float2v){1.0f, 2.0f};
  b = b * (float2v){0.5f, 0.25f} + a;
  ((float2v*)y)[i] = b;
}
extern "C" __global__ void matvec(const float* A, const float* x, float* y, int rows, int cols) {
  __shared__ float part[256];
  u32 r = bid(); u32 t = tid();
  float s = 0.0f;
  for (int c = t; c < cols; c += 256) s += A[r * cols + c] * x[c];
  for (int off = 32; off > 0; off >>= 1) s += __builtin_amdgcn_ds_bpermute((int)((tid() ^ off) * 4), __builtin_bit_cast(int, s)) == 0 ? 0.0f : __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((int)((tid() ^ off) * 4), __builtin_bit_cast(int, s)));
  part[t] = s;
  __syncthreads();
  if (t == 0) { float tot = 0; for (int k = 0; k < 256; k += 64) tot += part[k]; y[r] = tot; }
}
