// Buffer resources (V#) from clang's __builtin_amdgcn_make_buffer_rsrc and the buffer loads,
// stores and atomics through them, with NUM_RECORDS smaller than the data so that some lanes are
// out of range. Buffer intrinsics clang has no builtin for are called by their LLVM names.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
typedef unsigned int u32;
typedef unsigned long long u64;
typedef __amdgpu_buffer_rsrc_t rsrc_t;
typedef u32 u32x2 __attribute__((ext_vector_type(2)));
typedef u32 u32x3 __attribute__((ext_vector_type(3)));
typedef u32 u32x4 __attribute__((ext_vector_type(4)));

// Descriptor word 3. GFX9: DATA_FORMAT 32 (range checks count bytes, or records with an index
// and a stride). RDNA: a nonzero FORMAT (a bound resource) and OOB_SELECT 3 (raw buffers: bytes)
// or 0 (structured buffers: index < NUM_RECORDS and offset + size <= stride).
#if defined(__GFX9__)
#define RAW_FLAGS 0x00020000
#define STRUCT_FLAGS 0x00020000
#else
#define RAW_FLAGS 0x31004000
#define STRUCT_FLAGS 0x01004000
#endif

__device__ inline u32 tid() { return __builtin_amdgcn_workitem_id_x(); }

__device__ inline rsrc_t raw(void* p, u32 num_records) {
  return __builtin_amdgcn_make_buffer_rsrc(p, 0, num_records, RAW_FLAGS);
}

extern "C" __device__ u32 atomic_sub(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.sub.i32");
extern "C" __device__ u32 atomic_smin(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.smin.i32");
extern "C" __device__ u32 atomic_umax(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.umax.i32");
extern "C" __device__ u32 atomic_and(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.and.i32");
extern "C" __device__ u32 atomic_or(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.or.i32");
extern "C" __device__ u32 atomic_xor(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.xor.i32");
extern "C" __device__ u32 atomic_swap(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.swap.i32");
extern "C" __device__ u32 atomic_inc(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.inc.i32");
extern "C" __device__ u32 atomic_dec(u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.dec.i32");
extern "C" __device__ u32 atomic_cmpswap(u32, u32, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.cmpswap.i32");
extern "C" __device__ u64 atomic_add64(u64, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.add.i64");
extern "C" __device__ u64 atomic_smax64(u64, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.smax.i64");
extern "C" __device__ u64 atomic_xor64(u64, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.xor.i64");
extern "C" __device__ u64 atomic_cmpswap64(u64, u64, rsrc_t, u32, u32, u32) __asm("llvm.amdgcn.raw.ptr.buffer.atomic.cmpswap.i64");
extern "C" __device__ u32 struct_load(rsrc_t, u32, u32, u32, u32) __asm("llvm.amdgcn.struct.ptr.buffer.load.i32");
extern "C" __device__ u32x2 struct_load2(rsrc_t, u32, u32, u32, u32) __asm("llvm.amdgcn.struct.ptr.buffer.load.v2i32");
extern "C" __device__ void struct_store(u32, rsrc_t, u32, u32, u32, u32) __asm("llvm.amdgcn.struct.ptr.buffer.store.i32");

// Each width reads its own region of `src` (region k at byte k * 2048) through a descriptor with
// NUM_RECORDS nr[k]; work-item t loads element t. out: 12 dwords per work-item.
extern "C" __global__ void raw_loads(const u32* src, const u32* nr, u32 soffset, u32* out) {
  u32 t = tid();
  const char* s = (const char*)src;
  u32x4 a = __builtin_amdgcn_raw_buffer_load_b128(raw((void*)(s + 0 * 2048), nr[0]), t * 16, soffset, 0);
  u32x3 b = __builtin_amdgcn_raw_buffer_load_b96(raw((void*)(s + 1 * 2048), nr[1]), t * 12, soffset, 0);
  u32x2 c = __builtin_amdgcn_raw_buffer_load_b64(raw((void*)(s + 2 * 2048), nr[2]), t * 8, soffset, 0);
  u32 d = __builtin_amdgcn_raw_buffer_load_b32(raw((void*)(s + 3 * 2048), nr[3]), t * 4, soffset, 0);
  unsigned short e = __builtin_amdgcn_raw_buffer_load_b16(raw((void*)(s + 4 * 2048), nr[4]), t * 2, soffset, 0);
  unsigned char f = __builtin_amdgcn_raw_buffer_load_b8(raw((void*)(s + 5 * 2048), nr[5]), t, soffset, 0);
  u32* o = out + t * 12;
  o[0] = a.x; o[1] = a.y; o[2] = a.z; o[3] = a.w;
  o[4] = b.x; o[5] = b.y; o[6] = b.z;
  o[7] = c.x; o[8] = c.y;
  o[9] = d; o[10] = e; o[11] = f;
}

// Each width writes its own region of `dst` as raw_loads reads them, from src[t * 4 ..].
extern "C" __global__ void raw_stores(u32* dst, const u32* nr, u32 soffset, const u32* src) {
  u32 t = tid();
  char* s = (char*)dst;
  const u32* v = src + t * 4;
  u32x4 a = {v[0], v[1], v[2], v[3]};
  __builtin_amdgcn_raw_buffer_store_b128(a, raw(s + 0 * 2048, nr[0]), t * 16, soffset, 0);
  u32x3 b = {v[0], v[1], v[2]};
  __builtin_amdgcn_raw_buffer_store_b96(b, raw(s + 1 * 2048, nr[1]), t * 12, soffset, 0);
  u32x2 c = {v[0], v[1]};
  __builtin_amdgcn_raw_buffer_store_b64(c, raw(s + 2 * 2048, nr[2]), t * 8, soffset, 0);
  __builtin_amdgcn_raw_buffer_store_b32(v[0], raw(s + 3 * 2048, nr[3]), t * 4, soffset, 0);
  __builtin_amdgcn_raw_buffer_store_b16((unsigned short)v[1], raw(s + 4 * 2048, nr[4]), t * 2, soffset, 0);
  __builtin_amdgcn_raw_buffer_store_b8((unsigned char)v[2], raw(s + 5 * 2048, nr[5]), t, soffset, 0);
}

// Atomic k works on region k of `mem` (512 bytes of 32-bit slots, then 1024 bytes of 64-bit
// slots from byte 13 * 512), NUM_RECORDS nr in each; work-item t on slot t. The pre-op values go to
// old[k * 128 + t] (64-bit ones as two dwords from old[13 * 128]); region 12's add returns
// nothing. Operands: x (y: compare values), z for the float add.
extern "C" __global__ void raw_atomics(u32* mem, u32 nr, u32 soffset, const u32* x, const u32* y, const u32* z, u32* old) {
  u32 t = tid();
  char* m = (char*)mem;
  u32 a = x[t], b = y[t], o = t * 4;
#define R(k) raw(m + (k) * 512, nr)
  old[0 * 128 + t] = (u32)__builtin_amdgcn_raw_ptr_buffer_atomic_add_i32((int)a, R(0), o, soffset, 0);
  old[1 * 128 + t] = atomic_sub(a, R(1), o, soffset, 0);
  old[2 * 128 + t] = atomic_smin(a, R(2), o, soffset, 0);
  old[3 * 128 + t] = atomic_umax(a, R(3), o, soffset, 0);
  old[4 * 128 + t] = atomic_and(a, R(4), o, soffset, 0);
  old[5 * 128 + t] = atomic_or(a, R(5), o, soffset, 0);
  old[6 * 128 + t] = atomic_xor(a, R(6), o, soffset, 0);
  old[7 * 128 + t] = atomic_swap(a, R(7), o, soffset, 0);
  old[8 * 128 + t] = atomic_cmpswap(a, b, R(8), o, soffset, 0);
  old[9 * 128 + t] = atomic_inc(a, R(9), o, soffset, 0);
  old[10 * 128 + t] = atomic_dec(a, R(10), o, soffset, 0);
  old[11 * 128 + t] = __builtin_bit_cast(u32, __builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32(__builtin_bit_cast(float, z[t]), R(11), o, soffset, 0));
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_add_i32((int)a, R(12), o, soffset, 0);
#undef R
  u64 w = (u64)b << 32 | a, c = (u64)a << 32 | b;
  char* m64 = m + 13 * 512;
  u64 r[4];
  r[0] = atomic_add64(w, raw(m64 + 0 * 1024, nr), t * 8, soffset, 0);
  r[1] = atomic_smax64(w, raw(m64 + 1 * 1024, nr), t * 8, soffset, 0);
  r[2] = atomic_xor64(w, raw(m64 + 2 * 1024, nr), t * 8, soffset, 0);
  r[3] = atomic_cmpswap64(w, c, raw(m64 + 3 * 1024, nr), t * 8, soffset, 0);
  for (int k = 0; k < 4; ++k) {
    old[13 * 128 + (k * 128 + t) * 2] = (u32)r[k];
    old[13 * 128 + (k * 128 + t) * 2 + 1] = (u32)(r[k] >> 32);
  }
}

// Structured (indexed) accesses: records of 12 bytes, NUM_RECORDS nr records. Work-item t reads
// dword t % 3 of record t and the two dwords at byte 4 of record t + 1 from `src`, and writes x[t]
// at byte 8 of record t of `dst`.
extern "C" __global__ void struct_access(const u32* src, u32* dst, u32 nr, const u32* x, u32* out) {
  u32 t = tid();
  rsrc_t s = __builtin_amdgcn_make_buffer_rsrc((void*)src, 12, nr, STRUCT_FLAGS);
  rsrc_t d = __builtin_amdgcn_make_buffer_rsrc(dst, 12, nr, STRUCT_FLAGS);
  out[t * 3] = struct_load(s, t, (t % 3) * 4, 0, 0);
  u32x2 p = struct_load2(s, t + 1, 4, 0, 0);
  out[t * 3 + 1] = p.x;
  out[t * 3 + 2] = p.y;
  struct_store(x[t], d, t, 8, 0, 0);
}
