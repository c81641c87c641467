target triple = "amdgcn-amd-amdhsa"
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v8i32(<6 x i32>, <8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x128.f8f6f4.v4i32.v6i32(<4 x i32>, <6 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
define amdgpu_kernel void @f(ptr addrspace(1) %p, <4 x i32> %a, <8 x i32> %b, i32 %s, <6 x i32> %c6) {
  %c = load <4 x float>, ptr addrspace(1) %p
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32> %a, <4 x i32> %a, <4 x float> %c, i32 4, i32 4, i32 0, i32 %s, i32 1, i32 %s)
  %r2 = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v8i32(<6 x i32> %c6, <8 x i32> %b, <4 x float> %r, i32 2, i32 1, i32 2, i32 %s, i32 3, i32 %s)
  %r3 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x128.f8f6f4.v4i32.v6i32(<4 x i32> %a, <6 x i32> %c6, <4 x float> %r2, i32 4, i32 3, i32 0, i32 0, i32 0, i32 0)
  store <4 x float> %r3, ptr addrspace(1) %p
  %q = getelementptr float, ptr addrspace(1) %p, i64 64
  %c16 = load <16 x float>, ptr addrspace(1) %q
  %r4 = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %b, <8 x i32> %b, <16 x float> %c16, i32 0, i32 1, i32 0, i32 1, i32 0, i32 2)
  store <16 x float> %r4, ptr addrspace(1) %q
  ret void
}
