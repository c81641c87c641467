// HIP test kernels for the emulator: gfx950's transposing LDS loads through clang's builtins (the
// bodies compile to nothing on the other targets), and a kernel whose arguments of mixed sizes run
// past what the CDNA builds with `-amdgpu-kernarg-preload-count=16` can preload into SGPRs.
// Compiled without headers (-nogpuinc), so the attributes are spelled out.

#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))

__device__ inline void __syncthreads() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

typedef int v2i32 __attribute__((ext_vector_type(2)));
typedef int v3i32 __attribute__((ext_vector_type(3)));
typedef short v4i16 __attribute__((ext_vector_type(4)));

#define LDS(type, bytes) ((__attribute__((address_space(3))) type *)(bytes))

// One wave: LDS is filled with `in` (512 dwords); lane t reads with each transposing load at its
// own byte addresses `addr[4t + k]` (k: tr4, tr8, tr6, tr16) and writes the 9 result dwords to
// out[9t .. 9t + 9] (tr4: 2, tr8: 2, tr6: 3, tr16: 2).
extern "C" __global__ void transpose_loads(const unsigned *in, const unsigned *addr,
                                           unsigned *out) {
#if defined(__gfx950__)
    __shared__ unsigned lds[512];
    unsigned t = __builtin_amdgcn_workitem_id_x();
    for (unsigned i = t; i < 512; i += 64)
        lds[i] = in[i];
    __syncthreads();
    char *base = (char *)lds;
    v2i32 a = __builtin_amdgcn_ds_read_tr4_b64_v2i32(LDS(v2i32, base + addr[4 * t]));
    v2i32 b = __builtin_amdgcn_ds_read_tr8_b64_v2i32(LDS(v2i32, base + addr[4 * t + 1]));
    v3i32 c = __builtin_amdgcn_ds_read_tr6_b96_v3i32(LDS(v3i32, base + addr[4 * t + 2]));
    v4i16 d = __builtin_amdgcn_ds_read_tr16_b64_v4i16(LDS(v4i16, base + addr[4 * t + 3]));
    unsigned *o = out + 9 * t;
    o[0] = a.x;
    o[1] = a.y;
    o[2] = b.x;
    o[3] = b.y;
    o[4] = c.x;
    o[5] = c.y;
    o[6] = c.z;
    o[7] = (unsigned short)d.x | (unsigned)(unsigned short)d.y << 16;
    o[8] = (unsigned short)d.z | (unsigned)(unsigned short)d.w << 16;
#endif
}

// Every argument is written back (work-item 0, to `out`), with each work-item's
// out2[t] = in[t] * i + j: the first arguments are preloaded into SGPRs in a preload build, the
// later ones (from `h` on) do not fit in the 16 user SGPRs and are loaded from the kernarg segment.
extern "C" __global__ void preload_mixed_args(signed char a, short b, long long c, unsigned *out,
                                              int d, unsigned char e, double f, const int *in,
                                              unsigned short g, long long h, int i, int *out2,
                                              int j) {
    unsigned t = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
    if (t == 0) {
        out[0] = (unsigned)(int)a;
        out[1] = (unsigned)(int)b;
        out[2] = (unsigned)c;
        out[3] = (unsigned)(c >> 32);
        out[4] = (unsigned)d;
        out[5] = e;
        unsigned long long fb = __builtin_bit_cast(unsigned long long, f);
        out[6] = (unsigned)fb;
        out[7] = (unsigned)(fb >> 32);
        out[8] = g;
        out[9] = (unsigned)h;
        out[10] = (unsigned)(h >> 32);
    }
    out2[t] = in[t] * i + j;
}
