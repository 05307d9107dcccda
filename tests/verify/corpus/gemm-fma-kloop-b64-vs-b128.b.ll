target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
define ptx_kernel void @gemm(ptr addrspace(1) %A, ptr addrspace(1) %B, ptr addrspace(1) %C, i32 %K, i32 %N) "nvvm.maxntid"="128" {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %row = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bxs = mul i32 %bx, 128
  %col = add i32 %bxs, %t
  %arow = mul i32 %row, %K
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %knext, %loop ]
  %acc0 = phi float [ 0.0, %entry ], [ %acc0next, %loop ]
  %ka0 = add i32 %k, 0
  %ai0 = add i32 %arow, %ka0
  %ap0 = getelementptr float, ptr addrspace(1) %A, i32 %ai0
  %av0 = load float, ptr addrspace(1) %ap0, align 4
  %bk0 = mul i32 %ka0, %N
  %bi0 = add i32 %bk0, %col
  %bp0 = getelementptr float, ptr addrspace(1) %B, i32 %bi0
  %bv0 = load float, ptr addrspace(1) %bp0, align 4
  %acc0next = call float @llvm.fma.f32(float %av0, float %bv0, float %acc0)
  %knext = add i32 %k, 1
  %c = icmp ult i32 %knext, %K
  br i1 %c, label %loop, label %exit
exit:
  %crow = mul i32 %row, %N
  %ci = add i32 %crow, %col
  %cp = getelementptr float, ptr addrspace(1) %C, i32 %ci
  store float %acc0next, ptr addrspace(1) %cp, align 4
  ret void
}
declare float @llvm.fma.f32(float, float, float)
