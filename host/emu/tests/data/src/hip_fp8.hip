// 8-bit float conversions with a byte or word select, as the compiler emits them: SDWA on
// gfx942/gfx950, VOP3 byte_sel/op_sel on gfx1201. gfx90a and gfx1100 have no 8-bit floats; their
// kernels write zeros.
#define __global__ __attribute__((global))
typedef float float2v __attribute__((ext_vector_type(2)));

#if defined(__gfx942__) || defined(__gfx950__) || defined(__gfx1201__)
#define HAS_FP8 1
#endif

// y[8i + s] = e4m3 byte s of x[i], y[8i + 4 + s] = e5m2 byte s of x[i].
extern "C" __global__ void fp8_bytes(const int* x, float* y, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  int v = x[i];
#ifdef HAS_FP8
  y[8 * i + 0] = __builtin_amdgcn_cvt_f32_fp8(v, 0);
  y[8 * i + 1] = __builtin_amdgcn_cvt_f32_fp8(v, 1);
  y[8 * i + 2] = __builtin_amdgcn_cvt_f32_fp8(v, 2);
  y[8 * i + 3] = __builtin_amdgcn_cvt_f32_fp8(v, 3);
  y[8 * i + 4] = __builtin_amdgcn_cvt_f32_bf8(v, 0);
  y[8 * i + 5] = __builtin_amdgcn_cvt_f32_bf8(v, 1);
  y[8 * i + 6] = __builtin_amdgcn_cvt_f32_bf8(v, 2);
  y[8 * i + 7] = __builtin_amdgcn_cvt_f32_bf8(v, 3);
#else
  for (int k = 0; k < 8; k++) y[8 * i + k] = 0.0f;
#endif
}

// y[4i..4i+4] = the e4m3 pairs of x[i]'s low and high words.
extern "C" __global__ void fp8_words(const int* x, float* y, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  int v = x[i];
#ifdef HAS_FP8
  float2v lo = __builtin_amdgcn_cvt_pk_f32_fp8(v, false);
  float2v hi = __builtin_amdgcn_cvt_pk_f32_fp8(v, true);
  y[4 * i + 0] = lo.x;
  y[4 * i + 1] = lo.y;
  y[4 * i + 2] = hi.x;
  y[4 * i + 3] = hi.y;
#else
  for (int k = 0; k < 4; k++) y[4 * i + k] = 0.0f;
#endif
}

// out[i] packs a[4i..4i+4] into e4m3 bytes: two words through the packed conversion, into the
// low and high halves of one register.
extern "C" __global__ void fp8_pack(const float* a, int* out, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
#ifdef HAS_FP8
  int w = __builtin_amdgcn_cvt_pk_fp8_f32(a[4 * i], a[4 * i + 1], 0, false);
  w = __builtin_amdgcn_cvt_pk_fp8_f32(a[4 * i + 2], a[4 * i + 3], w, true);
  out[i] = w;
#else
  out[i] = 0;
#endif
}
