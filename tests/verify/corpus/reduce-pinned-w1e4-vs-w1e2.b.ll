target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

define ptx_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "nvvm.maxntid"="32" {
entry:
  %v1 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %v2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %v3 = mul i32 %v2, 64
  %v4 = mul i32 %v1, 2
  %v5 = add i32 %v3, %v4
  %v6 = add i32 %v5, 0
  %v7 = getelementptr float, ptr addrspace(1) %in, i32 %v6
  %v8 = load float, ptr addrspace(1) %v7, align 4
  %v9 = add i32 %v5, 1
  %v10 = getelementptr float, ptr addrspace(1) %in, i32 %v9
  %v11 = load float, ptr addrspace(1) %v10, align 4
  %v12 = fadd float %v8, %v11
  %v13 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v12, i32 1, i32 31)
  %v14 = fadd float %v12, %v13
  %v15 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v14, i32 2, i32 31)
  %v16 = fadd float %v14, %v15
  %v17 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v16, i32 4, i32 31)
  %v18 = fadd float %v16, %v17
  %v19 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v18, i32 8, i32 31)
  %v20 = fadd float %v18, %v19
  %v21 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v20, i32 16, i32 31)
  %v22 = fadd float %v20, %v21
  %v23 = and i32 %v1, 31
  %v24 = getelementptr float, ptr addrspace(1) %out, i32 %v2
  %v25 = icmp eq i32 %v1, 0
  br i1 %v25, label %w0, label %done
w0:
  store float %v22, ptr addrspace(1) %v24, align 4
  br label %done
done:
  ret void
}
