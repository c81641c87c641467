// Kernels whose outcome depends on workgroups and waves running at the same time: spins on a flag
// another workgroup sets (in both orders), a chained scan, and races that lose updates or read
// before the write when waves interleave (no barrier, no atomics). Then the bug patterns each of
// the emulator's checks must catch: divergent barriers, reads of memory never written, a load
// used before its wait, generic pointers, and global memory shared across a bare barrier.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
typedef unsigned int u32;

__device__ inline u32 tid() { return __builtin_amdgcn_workitem_id_x(); }
__device__ inline u32 block() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ inline u32 wave_size() { return __builtin_amdgcn_wavefrontsize(); }

// HIP's __syncthreads: a workgroup barrier with the workgroup-scope fences around it.
__device__ inline void sync_threads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__device__ inline u32 load_acquire(u32* p) {
  return __scoped_atomic_load_n(p, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_DEVICE);
}
__device__ inline void store_release(u32* p, u32 v) {
  __scoped_atomic_store_n(p, v, __ATOMIC_RELEASE, __MEMORY_SCOPE_DEVICE);
}

// Workgroups `wait_from..wait_to` spin until workgroup `setter` raises the flag; every
// workgroup then writes its id + 1 (a waiter only once it saw the flag).
extern "C" __global__ void spin_on_flag(u32* flag, u32* out, u32 wait_from, u32 wait_to, u32 setter) {
  if (tid() != 0) return;
  u32 b = block();
  if (b >= wait_from && b < wait_to) {
    while (load_acquire(flag) == 0) {
      __builtin_amdgcn_s_sleep(1);
    }
  }
  if (b == setter) store_release(flag, 1);
  out[b] = b + 1;
}

// Inclusive prefix sum over 64 elements per workgroup. Each workgroup takes a ticket (the order in
// which workgroups start, not their ids), scans its chunk, waits for its predecessor's published
// prefix and publishes its own (prefix + 1, so that 0 means "not yet").
extern "C" __global__ void chained_scan(const u32* in, u32* out, u32* published, u32* ticket) {
  __shared__ u32 chunk_id;
  __shared__ u32 values[64];
  __shared__ u32 carry;
  u32 t = tid();
  if (t == 0) chunk_id = __scoped_atomic_fetch_add(ticket, 1u, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  sync_threads();
  u32 c = chunk_id;
  values[t] = in[c * 64 + t];
  sync_threads();
  if (t == 0) {
    u32 sum = 0;
    for (u32 k = 0; k < 64; ++k) {
      sum += values[k];
      values[k] = sum;
    }
    u32 before = 0;
    if (c > 0) {
      u32 p;
      while ((p = load_acquire(&published[c - 1])) == 0) {
        __builtin_amdgcn_s_sleep(1);
      }
      before = p - 1;
    }
    carry = before;
    store_release(&published[c], before + sum + 1);
  }
  sync_threads();
  out[c * 64 + t] = carry + values[t];
}

// Lane 0 of every wave adds 1 to `counter` with a plain load and store: updates are lost when
// another wave's load comes between them.
extern "C" __global__ void racy_increment(volatile u32* counter) {
  if (tid() % wave_size() != 0) return;
  u32 v = *counter;
  *counter = v + 1;
}

// Each work-item writes its LDS slot and, with no barrier, reads the slot of the work-item one
// wave earlier (the first wave reads its own): right only if the earlier wave wrote first.
extern "C" __global__ void lds_read_without_barrier(u32* out) {
  __shared__ u32 slots[256];
  u32 t = tid();
  volatile u32* s = slots;
  s[t] = t + 1;
  u32 from = t >= wave_size() ? t - wave_size() : t;
  out[block() * __builtin_amdgcn_workgroup_size_x() + t] = s[from];
}

// The first wave and the others wait at different barriers: hardware pairs them anyway (the
// first wave writes 11, the others 22).
extern "C" __global__ void divergent_barrier(u32* out) {
  u32 t = tid();
  u32 wave = __builtin_amdgcn_readfirstlane(t / wave_size());
  if (wave == 0) {
    out[t] = 1;
    __builtin_amdgcn_s_barrier();
    out[t] += 10;
  } else {
    out[t] = 2;
    __builtin_amdgcn_s_barrier();
    out[t] += 20;
  }
}

// Every wave but the first ends before the barrier the first waits at: waves that ended no longer
// count, so the barrier completes (the first wave writes 2, the others 1).
extern "C" __global__ void exit_before_barrier(u32* out) {
  u32 t = tid();
  u32 wave = __builtin_amdgcn_readfirstlane(t / wave_size());
  out[t] = 1;
  if (wave != 0) return;
  sync_threads();
  out[t] = 2;
}

// Reads LDS no wave wrote: on hardware, whatever the last workgroup left there.
extern "C" __global__ void lds_read_uninitialised(u32* out) {
  __shared__ u32 never_written[256];
  volatile u32* s = never_written;
  out[tid()] = s[tid()];
}

// Copies `in`, which the host may never have written: on hardware, whatever the memory held.
extern "C" __global__ void global_read_uninitialised(const u32* in, u32* out) {
  out[tid()] = in[tid()];
}

// Fills the first `written` elements of a private array, then reads element tid % 64: a
// work-item past `written` reads scratch it never wrote (on hardware, what an earlier wave left).
extern "C" __global__ void scratch_read_uninitialised(u32* out, u32 written) {
  volatile u32 priv[64];
  u32 t = tid();
  for (u32 k = 0; k < written; ++k) priv[k] = k + t;
  out[t] = priv[t % 64];
}

// Loads in[tid] with inline assembly and copies the loaded register to out[tid]; with
// `wait` zero the copy comes before the wait for the load. Hardware then copies the register's
// old value (a compiler puts the wait in itself; inline assembly must).
extern "C" __global__ void use_before_waitcnt(const u32* in, u32* out, u32 wait) {
  u32 t = tid();
  const u32* p = in + t;
  u32 loaded, copied;
#if defined(__gfx1200__) || defined(__gfx1201__)
#define LOAD "global_load_b32 %0, %2, off\n"
#define WAIT "s_wait_loadcnt 0\n"
#else
#define LOAD "global_load_dword %0, %2, off\n"
#define WAIT "s_waitcnt vmcnt(0)\n"
#endif
  if (wait) {
    asm volatile(LOAD WAIT "v_mov_b32 %1, %0" : "=&v"(loaded), "=&v"(copied) : "v"(p) : "memory");
  } else {
    asm volatile(LOAD "v_mov_b32 %1, %0\n" WAIT : "=&v"(loaded), "=&v"(copied) : "v"(p) : "memory");
  }
  out[t] = copied;
}

// Each work-item stores four words from v[10:13] with inline assembly, then overwrites v10 with
// a VALU instruction: right after the store, or (`nops` nonzero) after `s_nop 1`, two wait
// states. GFX9 reads the data of a store of more than 8 bytes in the wait states after it
// issues (1 on GFX90A, 2 on GFX942 and GFX950), so without them hardware may store the new
// v10; GFX10 and later interlock. A compiler leaves the wait states itself; inline assembly
// must.
extern "C" __global__ void store_data_overwrite(u32* out, u32 nops) {
  u32 t = tid();
  u32* p = out + 4 * t;
#if defined(__gfx1100__) || defined(__gfx1200__) || defined(__gfx1201__)
#define STORE4 "global_store_b128 %0, v[10:13], off\n"
#else
#define STORE4 "global_store_dwordx4 %0, v[10:13], off\n"
#endif
#define FILL4 "v_mov_b32 v10, %1\nv_mov_b32 v11, %2\nv_mov_b32 v12, %3\nv_mov_b32 v13, %4\n"
  if (nops) {
    asm volatile(FILL4 STORE4 "s_nop 1\nv_mov_b32 v10, 0\n"
                 :
                 : "v"(p), "v"(t), "v"(t + 1), "v"(t + 2), "v"(t + 3)
                 : "v10", "v11", "v12", "v13", "memory");
  } else {
    asm volatile(FILL4 STORE4 "v_mov_b32 v10, 0\n"
                 :
                 : "v"(p), "v"(t), "v"(t + 1), "v"(t + 2), "v"(t + 3)
                 : "v10", "v11", "v12", "v13", "memory");
  }
}

// The compiler loses track of what `p` points to, so accesses through it are flat (generic).
template <typename T> __device__ inline T* generic(T* p) {
  asm volatile("" : "+v"(p));
  return p;
}

// Every work-item but `skip` writes its LDS element through a generic pointer; after the
// barrier each reads its right neighbour's the same way. With `skip` < 256 one work-item reads
// an element nobody wrote.
extern "C" __global__ void generic_lds(u32* out, u32 skip) {
  __shared__ u32 shared[256];
  u32 t = tid();
  u32* p = generic(shared);
  if (t != skip) p[t] = 3 * t + 1;
  sync_threads();
  out[t] = generic(shared)[(t + 1) % 256];
}

// Each work-item writes the first `written` of its 16 private elements through a generic
// pointer and reads element t % 16 back the same way: past `written` it was never written.
extern "C" __global__ void generic_scratch(u32* out, u32 written) {
  u32 priv[16];
  u32 t = tid();
  u32* p = generic(priv);
  for (u32 k = 0; k < written && k < 16; ++k) p[k] = t + k;
  out[t] = generic(priv)[t % 16];
}

// Every work-item stores its element to `buf`, the workgroup meets at a barrier (with the
// workgroup-scope fences of __syncthreads when `fenced`, bare otherwise), and each reads the
// element of the work-item one wave further on. In WGP mode (gfx11, gfx12) a bare barrier does
// not make the store visible to a wave on the WGP's other CU.
extern "C" __global__ void global_exchange(u32* buf, u32* out, u32 fenced) {
  u32 t = tid();
  buf[t] = 7 * t + 3;
  if (fenced) {
    sync_threads();
  } else {
    __builtin_amdgcn_s_barrier();
  }
  out[t] = buf[(t + wave_size()) % 256];
}

// Lane 0 of every wave adds 1 to `counter` with a plain (not volatile) load and store: the
// racecheck on global memory finds the waves' accesses unordered.
extern "C" __global__ void plain_increment(u32* counter) {
  if (tid() % wave_size() != 0) return;
  *counter = *counter + 1;
}

// A "last block done" sum over `chunks` workgroups: lane 0 of each stores its chunk's sum to
// `partial`, counts itself in `done`, and the last workgroup to do so adds the partial sums into
// `out`. With `fenced`, agent-scope fences order the stores before the count and the count
// before the reads (CUDA's threadFenceReduction); without, the reads may miss the stores.
extern "C" __global__ void last_block_sum(const u32* in, u32* partial, u32* done, u32* out, u32 chunks, u32 fenced) {
  if (tid() != 0) return;
  u32 b = block();
  u32 sum = 0;
  for (u32 k = 0; k < 16; ++k) sum += in[b * 16 + k];
  partial[b] = sum;
  if (fenced) __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
  u32 before = __scoped_atomic_fetch_add(done, 1u, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  if (before != chunks - 1) return;
  if (fenced) __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
  u32 total = 0;
  for (u32 k = 0; k < chunks; ++k) total += partial[k];
  *out = total;
}
