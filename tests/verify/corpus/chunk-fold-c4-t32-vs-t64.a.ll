target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

define ptx_kernel void @chunk_fold(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) "nvvm.maxntid"="32" {
entry:
  %v1 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %v2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %v3 = mul i32 %v2, 32
  %v4 = add i32 %v3, %v1
  %v5 = mul i32 %v4, %n
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %acc = phi float [ -0.0, %entry ], [ %accnext, %loop ]
  %v6 = add i32 %v5, %i
  %v7 = add i32 %v6, 0
  %v8 = getelementptr float, ptr addrspace(1) %in, i32 %v7
  %v9 = load float, ptr addrspace(1) %v8, align 4
  %v10 = add i32 %v6, 1
  %v11 = getelementptr float, ptr addrspace(1) %in, i32 %v10
  %v12 = load float, ptr addrspace(1) %v11, align 4
  %v13 = add i32 %v6, 2
  %v14 = getelementptr float, ptr addrspace(1) %in, i32 %v13
  %v15 = load float, ptr addrspace(1) %v14, align 4
  %v16 = add i32 %v6, 3
  %v17 = getelementptr float, ptr addrspace(1) %in, i32 %v16
  %v18 = load float, ptr addrspace(1) %v17, align 4
  %v19 = fadd float %v9, %v12
  %v20 = fadd float %v15, %v18
  %v21 = fadd float %v19, %v20
  %accnext = fadd float %acc, %v21
  %inext = add i32 %i, 4
  %v22 = icmp ult i32 %inext, %n
  br i1 %v22, label %loop, label %exit
exit:
  %op = getelementptr float, ptr addrspace(1) %out, i32 %v4
  store float %accnext, ptr addrspace(1) %op, align 4
  ret void
}
