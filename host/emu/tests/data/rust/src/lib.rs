//! Test kernels for the emulator: loops, f32/f64 math, atomics, LDS, DPP, wave operations, f16,
//! and kernels whose outcome depends on how workgroups and waves interleave.
//! `cargo xtask test` builds them for every CDNA target (`--kernels host/emu/tests/data/rust`).
#![no_std]
#![feature(
    abi_gpu_kernel,
    stdarch_amdgpu,
    core_intrinsics,
    gpu_launch_sized_workgroup_mem,
    f16,
    core_float_math,
    link_llvm_intrinsics,
    gpu_intrinsics
)]
#![allow(internal_features)]
use core::arch::amdgpu as a;
use core::hint::black_box;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

use iron_intrinsics::kernel;

unsafe extern "C" {
    #[link_name = "llvm.amdgcn.global.atomic.fadd.f32.p1.f32"]
    fn gfadd(p: *mut f32, v: f32) -> f32;
}

#[inline(always)]
fn gid() -> usize {
    (a::workgroup_id_x() * 256 + a::workitem_id_x()) as usize
}

#[kernel(max_threads = 1024)]
pub fn vadd(a_: *const f32, b: *const f32, c: *mut f32, n: u32) {
    let i = a::workgroup_id_x() * 256 + a::workitem_id_x();
    if i < n {
        unsafe {
            *c.add(i as usize) = *a_.add(i as usize) + *b.add(i as usize);
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn fmath(x: *const f32, y: *mut f32, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            let s = core::f32::math::sqrt(v.abs());
            let d = v / (s + 1.5);
            let e = core::intrinsics::expf32(d * 0.25);
            let l = core::intrinsics::logf32(s + 2.0);
            let m = core::f32::math::mul_add(d, e, l);
            *y.add(i) = m + core::intrinsics::floorf32(v) - core::intrinsics::powf32(s, 0.5);
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn dmath(x: *const f64, y: *mut f64, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            let s = core::f64::math::sqrt(v.abs());
            *y.add(i) = v / (s + 1.5) + core::intrinsics::floorf64(v * 3.0);
        }
    }
}

/// Folds `x[k]` for `k = i, i + stride, ... < n` into `acc` (a multiply-add-xor hash).
#[inline(always)]
fn hash_strided(x: *const u32, i: usize, n: u32, stride: u32, mut acc: u64) -> u64 {
    let mut k = i as u32;
    while k < n {
        let v = unsafe { *x.add(k as usize) } as u64;
        acc = acc.wrapping_mul(31).wrapping_add(v * v) ^ (acc >> 7);
        k += stride;
    }
    acc
}

#[kernel(max_threads = 1024)]
pub fn loop_sum(x: *const u32, out: *mut u64, n: u32, stride: u32) {
    let i = gid();
    let acc = hash_strided(x, i, n, stride, 0);
    unsafe {
        *out.add(i) = acc;
    }
}

/// `loop_sum`'s loop, run `heavy` times over by workgroups of odd id: a grid whose work is
/// uneven across workgroups, as in causal attention or a triangular solve.
#[kernel(max_threads = 256)]
pub fn uneven_loop(x: *const u32, out: *mut u64, n: u32, stride: u32, heavy: u32) {
    let i = gid();
    let rounds = if a::workgroup_id_x() % 2 == 1 {
        heavy
    } else {
        1
    };
    let mut acc: u64 = 0;
    for _ in 0..rounds {
        acc = hash_strided(x, i, n, stride, acc);
    }
    unsafe {
        *out.add(i) = acc;
    }
}

#[kernel(max_threads = 1024)]
pub fn atomics(
    ctr: *mut u32,
    c64: *mut u64,
    fsum: *mut f32,
    imax: *mut i32,
    x: *const f32,
    n: u32,
) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            AtomicU32::from_ptr(ctr).fetch_add(1, Ordering::Relaxed);
            AtomicU64::from_ptr(c64).fetch_add(i as u64, Ordering::Relaxed);
            AtomicI32::from_ptr(imax).fetch_max(v as i32, Ordering::Relaxed);
            AtomicU32::from_ptr(ctr.add(1)).fetch_or(1 << (i % 32), Ordering::Relaxed);
            let old = AtomicU32::from_ptr(ctr.add(2)).fetch_xor(i as u32, Ordering::Relaxed);
            let _ = AtomicU32::from_ptr(ctr.add(3)).compare_exchange(
                0,
                old,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            gfadd(fsum, v);
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn lds_reduce(x: *const f32, out: *mut f32) {
    let lds = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<f32>();
    let t = a::workitem_id_x() as usize;
    unsafe {
        *lds.add(t) = *x.add(gid());
        a::s_barrier();
        let mut s = 128;
        while s > 0 {
            if t < s {
                *lds.add(t) += *lds.add(t + s);
            }
            a::s_barrier();
            s >>= 1;
        }
        if t == 0 {
            *out.add(a::workgroup_id_x() as usize) = *lds;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn wave_ops(x: *const u32, out: *mut u32) {
    let i = gid();
    unsafe {
        let v = *x.add(i);
        let lane = a::mbcnt_hi(!0, a::mbcnt_lo(!0, 0));
        let b = a::ds_bpermute(((lane + 1) % 64) * 4, v);
        let d = a::update_dpp::<0x111, 0xf, 0xf, false>(0, v); // row_shr:1
        let r = a::readfirstlane_u32(v);
        let bal = a::ballot(v & 1 == 1);
        let p = a::ds_permute(((lane + 3) % 64) * 4, v);
        *out.add(i) =
            b ^ d.wrapping_mul(3) ^ r ^ (bal as u32) ^ ((bal >> 32) as u32) ^ p.rotate_left(5);
    }
}

/// The wave-size-generic operations of `iron_intrinsics::wave`, seven results per work-item:
/// a shuffle from the lane `x >> 16` names, shuffles by xor 5 and by xor half the wave, the
/// wave's sum and maximum, the inclusive prefix sum and the first lane's value.
#[kernel(max_threads = 1024)]
pub fn wave_library(x: *const u32, out: *mut u32) {
    use iron_intrinsics::wave;
    let i = gid();
    unsafe {
        let v = *x.add(i);
        let results = [
            wave::shuffle(v, v >> 16),
            wave::shuffle_xor(v, 5),
            wave::shuffle_xor(v, iron_intrinsics::target::WAVE / 2),
            wave::reduce_sum(v),
            wave::reduce_max(v),
            wave::scan_sum(v),
            wave::broadcast_first(v),
        ];
        for (k, r) in results.iter().enumerate() {
            *out.add(7 * i + k) = *r;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn i64_math(x: *const i64, y: *mut i64, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            let q = v / 7 - (v % 13) * 5;
            let u = (v as u64) >> (i % 63);
            *y.add(i) = q
                ^ (u as i64)
                ^ v.wrapping_mul(0x1234_5678_9abc)
                ^ (v.leading_zeros() as i64)
                ^ (v.count_ones() as i64);
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn u32_div(x: *const u32, y: *mut u32, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            let d = (i as u32 % 17) + 1;
            *y.add(i) = v / d + v % (d + 3) + (v as i32 / -(d as i32)) as u32;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn half_math(x: *const f16, y: *mut f16, z: *mut f32, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            let w = v * (2.0 as f16) + (0.5 as f16);
            *y.add(i) = if w > v { w - v } else { w * v };
            *z.add(i) = (w as f32) * 1.25;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn conv(x: *const f32, y: *mut i32, z: *mut u8, w: *mut u16, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let v = *x.add(i);
            *y.add(i) = v as i32 + (v as u32) as i32 + (v as f64 * 3.0) as i32;
            *z.add(i) = (v * 10.0) as u8;
            *w.add(i) = (v as i16) as u16;
        }
    }
}

/// Slices as kernel arguments: each becomes a (pointer, length) pair, which the emulator's
/// argument test checks; rustc warns that the ABI is unusual, which is the point here.
#[kernel(max_threads = 1024)]
#[allow(
    improper_ctypes_definitions,
    improper_gpu_kernel_arg,
    reason = "the test is of how slices are passed"
)]
pub fn sl(x: &[f32], y: &mut [f32]) {
    let i = gid();
    y[i] = x[i] * 2.0;
}

#[kernel(max_threads = 1024)]
pub fn grid2d(x: *const f32, y: *mut f32, w: u32, h: u32) {
    let cx = a::workgroup_id_x() * 16 + a::workitem_id_x();
    let cy = a::workgroup_id_y() * 16 + a::workitem_id_y();
    if cx < w && cy < h {
        unsafe {
            let idx = (cy * w + cx) as usize;
            let l = if cx > 0 { *x.add(idx - 1) } else { 0.0 };
            let r = if cx + 1 < w { *x.add(idx + 1) } else { 0.0 };
            *y.add(idx) = l + r - 2.0 * *x.add(idx) + a::workitem_id_z() as f32;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn dispatch_info(out: *mut u32) {
    unsafe {
        let p = core::intrinsics::gpu::amdgpu_dispatch_ptr() as *const u16;
        if a::workitem_id_x() == 0 {
            let o = out.add(a::workgroup_id_x() as usize * 4);
            *o = *p.add(2) as u32; // workgroup_size_x
            *o.add(1) = *(p.add(6) as *const u32); // grid_size_x
            *o.add(2) = a::wavefrontsize();
            *o.add(3) = a::dispatch_id() as u32;
        }
    }
}

#[kernel(max_threads = 1024)]
pub fn bytes(x: *const u8, y: *mut u16, n: u32) {
    let i = gid();
    if i < n as usize {
        unsafe {
            let b = *x.add(i) as u16;
            let c = *x.add(i + 1) as i8;
            *y.add(i) =
                b.wrapping_mul(3).wrapping_add(c as u16) | ((b.leading_zeros() as u16) << 12);
        }
    }
}

#[kernel(max_threads = 1024, allow_scratch)]
pub fn stack_array(x: *const u32, y: *mut u32, n: u32) {
    let i = gid();
    let mut arr = [0u32; 64];
    for k in 0..64 {
        arr[k] = unsafe { *x.add((i + k) % n as usize) };
    }
    let idx = unsafe { *x.add(i) } as usize % 64;
    arr[idx] ^= 0xdead;
    let mut s = 0u32;
    for k in 0..64 {
        s = s.wrapping_add(arr[(k * 7 + idx) % 64]);
    }
    unsafe {
        *y.add(i) = s;
    }
}

/// Workgroups `wait_from..wait_to` spin until workgroup `setter` raises `flag`; every workgroup
/// then writes its id + 1 (a waiter only once it saw the flag).
#[kernel(max_threads = 1024)]
pub fn spin_on_flag(flag: *mut u32, out: *mut u32, wait_from: u32, wait_to: u32, setter: u32) {
    if a::workitem_id_x() != 0 {
        return;
    }
    let b = a::workgroup_id_x();
    // SAFETY: `flag` points to a u32 that every workgroup accesses atomically.
    let flag = unsafe { AtomicU32::from_ptr(flag) };
    if (wait_from..wait_to).contains(&b) {
        while flag.load(Ordering::Acquire) == 0 {
            a::s_sleep::<1>();
        }
    }
    if b == setter {
        flag.store(1, Ordering::Release);
    }
    unsafe {
        *out.add(b as usize) = b + 1;
    }
}

/// Lane 0 of every wave adds 1 to `counter` with a plain load and store: updates are lost when
/// another wave's load comes between them.
#[kernel(max_threads = 1024)]
pub fn racy_increment(counter: *mut u32) {
    if a::workitem_id_x() % a::wavefrontsize() != 0 {
        return;
    }
    unsafe {
        let v = core::ptr::read_volatile(counter);
        core::ptr::write_volatile(counter, v + 1);
    }
}

/// Lane 0 of every wave adds 1 to `counter` with a plain (not volatile) load and store: the
/// racecheck on global memory finds the waves' accesses unordered.
#[kernel(max_threads = 1024)]
pub fn plain_increment(counter: *mut u32) {
    if a::workitem_id_x() % a::wavefrontsize() != 0 {
        return;
    }
    unsafe { *counter += 1 };
}

/// A "last block done" sum over `chunks` workgroups: lane 0 of each stores its chunk's sum (16
/// values) to `partial`, counts itself in `done`, and the last workgroup to do so adds the
/// partial sums into `out`. With `fenced`, fences order the stores before the count and the
/// count before the reads; without, the reads may miss the stores.
#[kernel(max_threads = 1024)]
pub fn last_block_sum(
    input: *const u32,
    partial: *mut u32,
    done: *mut u32,
    out: *mut u32,
    chunks: u32,
    fenced: u32,
) {
    let sync = LastBlockSync {
        release: || core::sync::atomic::fence(Ordering::Release),
        count: || unsafe { AtomicU32::from_ptr(done) }.fetch_add(1, Ordering::Relaxed),
        acquire: || core::sync::atomic::fence(Ordering::Acquire),
    };
    last_block(input, partial, out, chunks, fenced != 0, sync);
}

/// How a last-block reduction publishes its partial sum, counts itself and acquires the others'.
struct LastBlockSync<R, C, A> {
    release: R,
    count: C,
    acquire: A,
}

/// The body of the last-block reductions: see `last_block_sum`.
#[inline(always)]
fn last_block<R: Fn(), C: Fn() -> u32, A: Fn()>(
    input: *const u32,
    partial: *mut u32,
    out: *mut u32,
    chunks: u32,
    fenced: bool,
    sync: LastBlockSync<R, C, A>,
) {
    if a::workitem_id_x() != 0 {
        return;
    }
    let b = a::workgroup_id_x() as usize;
    let mut sum = 0u32;
    for k in 0..16 {
        sum = sum.wrapping_add(unsafe { *input.add(b * 16 + k) });
    }
    unsafe { *partial.add(b) = sum };
    if fenced {
        (sync.release)();
    }
    if (sync.count)() != chunks - 1 {
        return;
    }
    if fenced {
        (sync.acquire)();
    }
    let mut total = 0u32;
    for k in 0..chunks as usize {
        total = total.wrapping_add(unsafe { *partial.add(k) });
    }
    unsafe { *out = total };
}

/// Each work-item writes its slot of the dynamic LDS and, with no barrier, reads the slot of the
/// work-item one wave earlier (the first wave reads its own).
#[kernel(max_threads = 1024)]
pub fn lds_read_without_barrier(out: *mut u32) {
    let lds = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>();
    let t = a::workitem_id_x();
    let wave = a::wavefrontsize();
    let from = if t >= wave { t - wave } else { t };
    unsafe {
        core::ptr::write_volatile(lds.add(t as usize), t + 1);
        let v = core::ptr::read_volatile(lds.add(from as usize));
        *out.add((a::workgroup_id_x() * 256 + t) as usize) = v;
    }
}

/// The first wave and the others wait at different barriers: hardware pairs them anyway (the
/// first wave writes 11, the others 22).
#[kernel(max_threads = 1024)]
pub fn divergent_barrier(out: *mut u32) {
    let t = a::workitem_id_x();
    let wave = a::readfirstlane_u32(t / a::wavefrontsize());
    let slot = unsafe { out.add(t as usize) };
    unsafe {
        if wave == 0 {
            slot.write_volatile(1);
            a::s_barrier();
            slot.write_volatile(slot.read_volatile() + 10);
        } else {
            slot.write_volatile(2);
            a::s_barrier();
            slot.write_volatile(slot.read_volatile() + 20);
        }
    }
}

/// Every wave but the first ends before the barrier the first waits at: waves that ended no
/// longer count, so the barrier completes (the first wave writes 2, the others 1).
#[kernel(max_threads = 1024)]
pub fn exit_before_barrier(out: *mut u32) {
    let t = a::workitem_id_x();
    let wave = a::readfirstlane_u32(t / a::wavefrontsize());
    unsafe { *out.add(t as usize) = 1 };
    if wave != 0 {
        return;
    }
    iron_intrinsics::sync::workgroup_barrier();
    unsafe { *out.add(t as usize) = 2 };
}

/// Reads dynamic LDS no wave wrote: on hardware, whatever the last workgroup left there.
#[kernel(max_threads = 1024)]
pub fn lds_read_uninitialised(out: *mut u32) {
    let lds = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>();
    let t = a::workitem_id_x() as usize;
    unsafe { *out.add(t) = lds.add(t).read_volatile() };
}

/// Every work-item stores its element to `buf`, the workgroup meets at a barrier (with the
/// fences of `workgroup_barrier` when `fenced`, bare otherwise), and each reads the element of
/// the work-item one wave further on. In WGP mode (gfx11, gfx12) a bare barrier does not make
/// the store visible to a wave on the WGP's other CU.
#[kernel(max_threads = 1024)]
pub fn global_exchange(buf: *mut u32, out: *mut u32, fenced: u32) {
    let t = a::workitem_id_x();
    unsafe { *buf.add(t as usize) = 7 * t + 3 };
    if fenced != 0 {
        iron_intrinsics::sync::workgroup_barrier();
    } else {
        // The compiler fences keep the accesses on their side of the barrier and emit nothing.
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
        a::s_barrier();
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    }
    let from = (t + a::wavefrontsize()) % 256;
    unsafe { *out.add(t as usize) = *buf.add(from as usize) };
}

/// Inclusive prefix sum over 64 elements per workgroup. Each workgroup takes a ticket (the order
/// in which workgroups start, not their ids), scans its chunk, waits for its predecessor's
/// published prefix and publishes its own (prefix + 1, so that 0 means "not yet"). The dynamic
/// LDS holds the chunk's ticket, the carry, then the 64 values.
#[kernel(max_threads = 1024)]
pub fn chained_scan(input: *const u32, out: *mut u32, published: *mut u32, ticket: *mut u32) {
    let lds = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>();
    let t = a::workitem_id_x() as usize;
    // SAFETY: the launch gives 66 dwords of dynamic LDS; every workgroup reaches `ticket` and
    // `published` only atomically, and the chunk's elements only through its ticket.
    unsafe {
        let (chunk, carry, values) = (lds, lds.add(1), lds.add(2));
        if t == 0 {
            *chunk = AtomicU32::from_ptr(ticket).fetch_add(1, Ordering::Relaxed);
        }
        iron_intrinsics::sync::workgroup_barrier();
        let c = *chunk as usize;
        *values.add(t) = *input.add(c * 64 + t);
        iron_intrinsics::sync::workgroup_barrier();
        if t == 0 {
            let mut sum = 0u32;
            for k in 0..64 {
                sum += *values.add(k);
                *values.add(k) = sum;
            }
            let mut before = 0;
            if c > 0 {
                let previous = AtomicU32::from_ptr(published.add(c - 1));
                loop {
                    let p = previous.load(Ordering::Acquire);
                    if p != 0 {
                        before = p - 1;
                        break;
                    }
                    a::s_sleep::<1>();
                }
            }
            *carry = before;
            AtomicU32::from_ptr(published.add(c)).store(before + sum + 1, Ordering::Release);
        }
        iron_intrinsics::sync::workgroup_barrier();
        *out.add(c * 64 + t) = *carry + *values.add(t);
    }
}

/// Every work-item but `skip` writes its element of dynamic LDS through a pointer the compiler
/// cannot trace back to LDS (`black_box`), so the accesses are flat (generic) ones; after the
/// barrier each reads its right neighbour's element the same way. With `skip` < 256 one
/// work-item reads an element nobody wrote. `black_box` keeps the pointer on the stack, so the
/// kernel uses scratch.
#[kernel(max_threads = 256, allow_scratch)]
pub fn generic_lds(out: *mut u32, skip: u32) {
    let lds = black_box(core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>());
    let t = a::workitem_id_x();
    if t != skip {
        unsafe { lds.add(t as usize).write_volatile(3 * t + 1) };
    }
    iron_intrinsics::sync::workgroup_barrier();
    let lds = black_box(lds);
    unsafe { *out.add(t as usize) = lds.add(((t + 1) % 256) as usize).read_volatile() };
}

/// Each work-item writes the first `written` of its 16 private elements through a pointer the
/// compiler cannot trace back to its stack (`black_box`), so the accesses are flat ones, and
/// copies element `t % 16` out the same way: past `written` it was never written. The copy is
/// of `MaybeUninit` words, which Rust allows for memory never written.
#[kernel(max_threads = 256, allow_scratch)]
pub fn generic_scratch(out: *mut u32, written: u32) {
    let mut private = MaybeUninit::<[u32; 16]>::uninit();
    let p = black_box(private.as_mut_ptr().cast::<u32>());
    let t = a::workitem_id_x();
    for k in 0..written.min(16) {
        unsafe { p.add(k as usize).write_volatile(t + k) };
    }
    let p = black_box(p).cast::<MaybeUninit<u32>>();
    unsafe {
        let v = p.add((t % 16) as usize).read_volatile();
        out.cast::<MaybeUninit<u32>>().add(t as usize).write(v);
    }
}

/// Every operation of `iron_intrinsics::atomic`, by workgroups of 256: on counters all
/// workgroups share (agent and system scope; `ints[0..10]`, `signed[0..2]`, `wide[0..4]`,
/// `floats[0..3]`, `doubles[0]`), on one counter per workgroup (workgroup scope,
/// `per_group[g]`) and one per wave (wave scope, `per_wave[w]`). `olds[i]` receives what
/// work-item i's swap of `ints[9]` found, and `loaded[i]` the value of `per_group[g]` an
/// acquire load read after a release store of it.
#[kernel(max_threads = 256)]
#[allow(clippy::too_many_arguments)]
pub fn scoped_atomics(
    ints: *mut u32,
    signed: *mut i32,
    wide: *mut u64,
    floats: *mut f32,
    doubles: *mut f64,
    olds: *mut u32,
    per_group: *mut u32,
    per_wave: *mut u32,
) {
    use iron_intrinsics::atomic::{self as at, Ordering::*, Scope::*};
    let i = gid() as u32;
    let g = a::workgroup_id_x() as usize;
    let w = gid() / iron_intrinsics::target::WAVE as usize;
    unsafe {
        at::fetch_add(ints, 1, Relaxed, Agent);
        at::fetch_max(ints.add(1), i, AcqRel, Agent);
        at::fetch_min(ints.add(2), i ^ 0x55, Relaxed, System);
        at::fetch_or(ints.add(3), 1 << (i % 32), Release, Agent);
        at::fetch_xor(ints.add(4), i.wrapping_mul(0x9e37_79b9), Relaxed, Agent);
        at::fetch_and(ints.add(5), !(1 << (i % 32)), Acquire, Agent);
        at::fetch_sub(ints.add(6), 3, SeqCst, Agent);
        let mut seen = at::load(ints.add(7), Relaxed, Agent);
        loop {
            match at::compare_exchange(
                ints.add(7),
                seen,
                seen.wrapping_add(i),
                AcqRel,
                Acquire,
                Agent,
            ) {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
        at::add_u32(ints.add(8), 2);
        *olds.add(i as usize) = at::swap(ints.add(9), i, Relaxed, Agent);
        at::fetch_add(signed, -(i as i32), Relaxed, Agent);
        at::fetch_max(signed.add(1), i as i32 - 300, Relaxed, Agent);
        at::fetch_add(wide, (1u64 << 33) + u64::from(i), Relaxed, Agent);
        at::fetch_max(wide.add(1), u64::from(i) << 40, Relaxed, Agent);
        at::fetch_min(
            wide.add(2) as *mut i64,
            -(i64::from(i) << 36),
            Relaxed,
            Agent,
        );
        let mut seen = at::load(wide.add(3), Acquire, Agent);
        loop {
            let new = seen ^ (1u64 << (i % 64));
            match at::compare_exchange(wide.add(3), seen, new, SeqCst, Relaxed, Agent) {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
        at::fetch_add(floats, 0.5, Relaxed, Agent);
        at::fetch_max(floats.add(1), i as f32 * 0.25, Relaxed, Agent);
        at::fetch_min(floats.add(2), -(i as f32), Relaxed, Agent);
        at::fetch_add(doubles, f64::from(i) * 0.125, Relaxed, Agent);
        at::fetch_add(per_group.add(g), 1, Relaxed, Workgroup);
        at::fetch_add(per_wave.add(w), i, Relaxed, Wave);
    }
}

/// `last_block_sum` written with the scoped API: the partial sums are published with an
/// agent-scope release fence and read after an agent-scope acquire fence (or neither if
/// `fenced` is 0), the counter is an agent-scope atomic.
#[kernel(max_threads = 1024)]
pub fn last_block_sum_scoped(
    input: *const u32,
    partial: *mut u32,
    done: *mut u32,
    out: *mut u32,
    chunks: u32,
    fenced: u32,
) {
    use iron_intrinsics::atomic::{self as at, Ordering, Scope};
    let sync = LastBlockSync {
        release: || at::fence(Ordering::Release, Scope::Agent),
        count: || unsafe { at::fetch_add(done, 1, Ordering::Relaxed, Scope::Agent) },
        acquire: || at::fence(Ordering::Acquire, Scope::Agent),
    };
    last_block(input, partial, out, chunks, fenced != 0, sync);
}
