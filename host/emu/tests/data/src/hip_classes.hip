// Kernels that make clang-22 emit one class of instruction each (fmaak/fmamk, DPP row_newbcast,
// buffer and global loads to LDS, fma_mix with constants, the wave index within a workgroup,
// flat pointers into LDS and scratch, SALU float), run on the emulator by run_hip_classes.rs.
// Built for every target; a builtin one target lacks is guarded, and the other branch computes
// the same result another way so that one host oracle applies to every build.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
typedef _Float16 half;
typedef _Float16 half2 __attribute__((ext_vector_type(2)));
typedef u32 u32x4 __attribute__((ext_vector_type(4)));
typedef void __attribute__((address_space(1))) gvoid;
typedef void __attribute__((address_space(3))) lvoid;
__device__ inline void __syncthreads() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); }
__device__ inline u32 tid() { return __builtin_amdgcn_workitem_id_x(); }
__device__ inline u32 bid() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ inline u32 gid() { return bid() * 256 + tid(); }

// Class 1: f32 fma with a non-inline constant multiplier (v_fmamk_f32) and addend (v_fmaak_f32).
extern "C" __global__ void fmak_f32(const float* x, const float* y, const float* z, float* o, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  o[2 * i] = __builtin_fmaf(x[i], 1.3719f, z[i]);
  o[2 * i + 1] = __builtin_fmaf(x[i], y[i], 6.0271f);
}

// Class 1, f16: v_fmamk_f16 / v_fmaak_f16 on RDNA (v_fma_f16 with the constant in an SGPR on CDNA).
// The third output keeps z live, so that the multiply-by-constant cannot accumulate into it.
extern "C" __global__ void fmak_f16(const half* x, const half* y, const half* z, half* o, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  half a = x[i], b = y[i], c = z[i];
  o[3 * i] = __builtin_fmaf16(a, (half)1.3719f, c);
  o[3 * i + 1] = __builtin_fmaf16(a, b, (half)6.0271f);
  o[3 * i + 2] = __builtin_fmaf16(c, (half)-1.5f, b);
}

// Class 2: DPP lane broadcast within each row of 16 lanes: row_newbcast:N on CDNA, row_share:N
// (the same lanes) on RDNA; a row_mask leaving rows 0 and 2 with the old value; a float add the
// DPP combiner folds into v_add_f32_dpp.
extern "C" __global__ void row_broadcast(const int* x, const float* f, int* y, float* g) {
  u32 i = gid();
  int v = x[i];
  int a = __builtin_amdgcn_update_dpp(0, v, 0x153, 0xf, 0xf, false);
  int b = __builtin_amdgcn_update_dpp(v, v, 0x15f, 0xa, 0xf, false);
  y[i] = a + 3 * b;
  float w = f[i];
  g[i] = w + __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, w), 0x151, 0xf, 0xf, true));
}

// Class 3: MUBUF loads with the lds bit (CDNA; dwordx3/x4 on gfx950). Every lane of a 256-lane
// group loads (no guard): a lane past a buffer's num_records reads 0. Each wave's M0 is its own
// LDS block; the lanes read their slots back. Elsewhere the same values are copied through VGPRs.
extern "C" __global__ void buffer_lds(const u32* x1, u32 n1, const u32* x4, u32 n4, const u32* x3, u32 n3, u32* y1, u32* y4, u32* y3) {
  __shared__ u32 s1[256];
  __shared__ u32 s4[256 * 4];
  __shared__ u32 s3[256 * 3];
  u32 t = tid(), i = gid();
#if defined(__gfx90a__) || defined(__gfx942__) || defined(__gfx950__)
  u32 wave = __builtin_amdgcn_readfirstlane(t) / 64;
  __amdgpu_buffer_rsrc_t r1 = __builtin_amdgcn_make_buffer_rsrc((void*)x1, 0, n1 * 4, 0x00020000);
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r1, (lvoid*)(s1 + wave * 64), 4, i * 4, 0, 0, 0);
#if defined(__gfx950__)
  __amdgpu_buffer_rsrc_t r4 = __builtin_amdgcn_make_buffer_rsrc((void*)x4, 0, n4 * 16, 0x00020000);
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r4, (lvoid*)(s4 + wave * 256), 16, i * 16, 0, 0, 0);
  __amdgpu_buffer_rsrc_t r3 = __builtin_amdgcn_make_buffer_rsrc((void*)x3, 0, n3 * 12, 0x00020000);
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r3, (lvoid*)(s3 + wave * 192), 12, i * 12, 0, 0, 0);
#else
  for (int k = 0; k < 4; k++) s4[4 * t + k] = i < n4 ? x4[4 * i + k] : 0;
  for (int k = 0; k < 3; k++) s3[3 * t + k] = i < n3 ? x3[3 * i + k] : 0;
#endif
#else
  s1[t] = i < n1 ? x1[i] : 0;
  for (int k = 0; k < 4; k++) s4[4 * t + k] = i < n4 ? x4[4 * i + k] : 0;
  for (int k = 0; k < 3; k++) s3[3 * t + k] = i < n3 ? x3[3 * i + k] : 0;
#endif
  __syncthreads();
  y1[i] = s1[t];
  for (int k = 0; k < 4; k++) y4[4 * i + k] = s4[4 * t + k];
  for (int k = 0; k < 3; k++) y3[3 * i + k] = s3[3 * t + k];
}

// Class 4: global loads to LDS (CDNA): 4, 1 and 2 bytes everywhere (a byte or short lands
// zero-extended in a dword slot per lane), 16 and 12 bytes on gfx950, the dword load with an
// instruction offset (added to both addresses). Lanes past n are inactive and write nothing.
extern "C" __global__ void global_lds(const u32* x, const u8* xb, const u16* xs, const u32* x4, const u32* x3, u32* y, int n) {
  __shared__ u32 s[256 * 4 + 16];
  __shared__ u32 sb[256];
  __shared__ u32 ss[256];
  __shared__ u32 s4[256 * 4];
  __shared__ u32 s3[256 * 3];
  u32 t = tid(), i = gid();
  if (i < (u32)n) {
#if defined(__gfx90a__) || defined(__gfx942__) || defined(__gfx950__)
    u32 wave = __builtin_amdgcn_readfirstlane(t) / 64;
    __builtin_amdgcn_global_load_lds((gvoid*)(x + i), (lvoid*)(s + wave * 64), 4, 64, 0);
    __builtin_amdgcn_global_load_lds((gvoid*)(xb + i), (lvoid*)(sb + wave * 64), 1, 0, 0);
    __builtin_amdgcn_global_load_lds((gvoid*)(xs + i), (lvoid*)(ss + wave * 64), 2, 0, 0);
#if defined(__gfx950__)
    __builtin_amdgcn_global_load_lds((gvoid*)(x4 + 4 * i), (lvoid*)(s4 + wave * 256), 16, 0, 0);
    __builtin_amdgcn_global_load_lds((gvoid*)(x3 + 3 * i), (lvoid*)(s3 + wave * 192), 12, 0, 0);
#else
    for (int k = 0; k < 4; k++) s4[4 * t + k] = x4[4 * i + k];
    for (int k = 0; k < 3; k++) s3[3 * t + k] = x3[3 * i + k];
#endif
#else
    s[t + 16] = x[i + 16];
    sb[t] = xb[i];
    ss[t] = xs[i];
    for (int k = 0; k < 4; k++) s4[4 * t + k] = x4[4 * i + k];
    for (int k = 0; k < 3; k++) s3[3 * t + k] = x3[3 * i + k];
#endif
  }
  __syncthreads();
  if (i >= (u32)n) return;
  u32* o = y + 10 * i;
  o[0] = s[t + 16];
  o[1] = sb[t];
  o[2] = ss[t];
  for (int k = 0; k < 4; k++) o[3 + k] = s4[4 * t + k];
  for (int k = 0; k < 3; k++) o[7 + k] = s3[3 * t + k];
}

// Class 5: v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16 on f16 inputs with constants (clang-22
// keeps the nonzero ones in SGPRs; 0.0 stays an inline constant on RDNA), a negated operand, an
// f32 addend, and results converted back to f16 packed into one dword.
extern "C" __global__ void fma_mix(const half* a, const half* b, const float* c, float* o, half2* p, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  float x = (float)a[i], y = (float)b[i], z = c[i];
  o[5 * i] = __builtin_fmaf(x, y, 1.0f);
  o[5 * i + 1] = __builtin_fmaf(x, 2.0f, z);
  o[5 * i + 2] = __builtin_fmaf(x, y, 0.0f);
  o[5 * i + 3] = __builtin_fmaf(x, -y, 1.0f);
  o[5 * i + 4] = __builtin_fmaf(x, 4.0f, y);
  p[i] = (half2){(half)__builtin_fmaf(x, y, 1.0f), (half)__builtin_fmaf(x, z, 2.0f)};
}

// Packed f16 math with inline constants in both halves (op_sel_hi:[1,1,0] and [1,0,0]).
extern "C" __global__ void pk_f16_consts(const half2* a, half2* o, int n) {
  u32 i = gid(); if (i >= (u32)n) return;
  half2 v = a[i];
  o[2 * i] = __builtin_elementwise_fma(v, v, (half2){1.0f16, 1.0f16});
  o[2 * i + 1] = __builtin_elementwise_fma(v, (half2){2.0f16, 2.0f16}, (half2){-0.5f16, -0.5f16});
}

// Class 6: the wave's index within its workgroup. gfx1201 reads it from TTMP8 (llvm.amdgcn.wave.id);
// elsewhere it is the first lane's work-item id over the wave size. Each wave sums its lanes' x into
// its LDS slot; after a barrier the group writes every slot and the total; every lane writes its id.
#if defined(__gfx1201__)
extern "C" __device__ __attribute__((const)) u32 wave_id_in_group(void) __asm("llvm.amdgcn.wave.id");
#else
__device__ inline u32 wave_id_in_group() { return __builtin_amdgcn_readfirstlane(tid()) / __builtin_amdgcn_wavefrontsize(); }
#endif
extern "C" __global__ void wave_partials(const u32* x, u32* ids, u32* part, u32* total, int n, int block) {
  __shared__ u32 s[8];
  u32 t = tid(), i = bid() * block + t;
  if (t < 8) s[t] = 0;
  __syncthreads();
  u32 w = wave_id_in_group();
  ids[i] = w;
  u32 v = i < (u32)n ? x[i] : 0;
  __hip_atomic_fetch_add(&s[w], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __syncthreads();
  if (t < 8) part[bid() * 8 + t] = s[t];
  if (t == 0) {
    u32 sum = 0;
    for (int k = 0; k < 8; k++) sum += s[k];
    total[bid()] = sum;
  }
}

// Class 7: LDS and scratch addresses turned into flat pointers (src_shared_base,
// src_private_base) for a function that reads and writes through a plain pointer.
extern "C" __device__ __attribute__((noinline)) int touch(int* p, int k, int v) {
  int old = p[k];
  p[k] = old * 3 + v;
  return old;
}
extern "C" __global__ void flat_apertures(const int* x, int* y, int n) {
  __shared__ int s[256];
  int loc[16];
  u32 t = tid(), i = gid();
  u32 j = i < (u32)n ? i : (u32)n - 1;
  for (int k = 0; k < 16; k++) loc[k] = x[(j + k) % n];
  s[t] = x[j] ^ 0x55;
  __syncthreads();
  int a = touch(s, (t + 1) & 255, 7);
  int b = touch(loc, x[j] & 15, 11);
  __syncthreads();
  int c = 0;
  for (int k = 0; k < 16; k++) c += loc[k] * (k + 1);
  if (i < (u32)n) y[i] = a + b * 5 + c + s[t];
}

// Class 10: uniform float math on kernel arguments, on gfx1201's scalar unit (s_fmamk_f32,
// s_fmaak_f32); thread 0 writes the three uniform values and a0 * a1 (which keeps both arguments live)
// after the n vector results.
extern "C" __global__ void scalar_float(float a0, float a1, const float* x, float* y, int n) {
  float a = __builtin_fmaf(a0, 1.7f, a1);
  float b = __builtin_fmaf(a0, a1, 2.5f);
  float c = __builtin_fmaf(a1, -3.3f, a0);
  u32 i = gid();
  if (i < (u32)n) y[i] = __builtin_fmaf(x[i], a, b) * c;
  if (i == 0) { y[n] = a; y[n + 1] = b; y[n + 2] = c; y[n + 3] = a0 * a1; }
}
