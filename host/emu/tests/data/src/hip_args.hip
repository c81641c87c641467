// Kernels that take every argument kind a HIP kernel can have (1- and 2-byte integers, bool,
// pointers passed as integers, structs by value) in orders that leave padding between them, and
// write each argument, widened to 64 bits, into an output buffer: work-item 0 of workgroup 0
// writes, the others return.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
typedef unsigned long long u64;
typedef long long i64;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef __SIZE_TYPE__ size_t;

__device__ static inline bool first_item() {
  return __builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workgroup_id_x() == 0;
}

// Offsets: c 0, out 8, uc 16, s 18, b 20, us 22, last 24.
extern "C" __global__ void args_small(char c, i64* out, unsigned char uc, short s, bool b,
                                      unsigned short us, signed char last) {
  if (!first_item()) return;
  out[0] = c;
  out[1] = uc;
  out[2] = s;
  out[3] = b;
  out[4] = us;
  out[5] = last;
}

// Offsets: tag 0, src 8, out 16, dst 24, n 32. `src` and `dst` are buffer addresses passed as
// integers; the kernel casts them back. out[0..4] = the arguments (src and dst as integers),
// dst[i] = src[i] * 2 + tag for i < n.
extern "C" __global__ void args_ptr(unsigned char tag, intptr_t src, u64* out, uintptr_t dst,
                                    size_t n) {
  if (!first_item()) return;
  const int* s = (const int*)src;
  int* d = (int*)dst;
  for (size_t i = 0; i < n; i++) d[i] = s[i] * 2 + tag;
  out[0] = tag;
  out[1] = (u64)src;
  out[2] = (u64)dst;
  out[3] = n;
}

struct S24 {  // 24 bytes, align 8: a 0, d 8, e 16, f 18, padding 19..24.
  int a;
  double d;
  short e;
  signed char f;
};
struct S12 {  // 12 bytes, align 4: a 0, b 4, c 8, padding 10..12.
  unsigned char a;
  int b;
  unsigned short c;
};
struct S3 {  // 3 bytes, align 1.
  signed char a;
  unsigned char b;
  bool c;
};

// Offsets: a 0, s 8, b 32, t 36, u 48, out 56, z 64.
extern "C" __global__ void args_structs(short a, S24 s, bool b, S12 t, S3 u, i64* out, char z) {
  if (!first_item()) return;
  out[0] = a;
  out[1] = s.a;
  out[2] = __builtin_bit_cast(i64, s.d);
  out[3] = s.e;
  out[4] = s.f;
  out[5] = b;
  out[6] = t.a;
  out[7] = t.b;
  out[8] = t.c;
  out[9] = u.a;
  out[10] = u.b;
  out[11] = u.c;
  out[12] = z;
}
