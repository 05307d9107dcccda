target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

define ptx_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "nvvm.maxntid"="32" {
entry:
  %v1 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %v2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %v3 = mul i32 %v2, 128
  %v4 = mul i32 %v1, 4
  %v5 = add i32 %v3, %v4
  %v6 = add i32 %v5, 0
  %v7 = getelementptr float, ptr addrspace(1) %in, i32 %v6
  %v8 = load float, ptr addrspace(1) %v7, align 4
  %v9 = add i32 %v5, 1
  %v10 = getelementptr float, ptr addrspace(1) %in, i32 %v9
  %v11 = load float, ptr addrspace(1) %v10, align 4
  %v12 = add i32 %v5, 2
  %v13 = getelementptr float, ptr addrspace(1) %in, i32 %v12
  %v14 = load float, ptr addrspace(1) %v13, align 4
  %v15 = add i32 %v5, 3
  %v16 = getelementptr float, ptr addrspace(1) %in, i32 %v15
  %v17 = load float, ptr addrspace(1) %v16, align 4
  %v18 = fadd float %v8, %v11
  %v19 = fadd float %v18, %v14
  %v20 = fadd float %v19, %v17
  %v21 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v20, i32 16, i32 31)
  %v22 = fadd float %v20, %v21
  %v23 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v22, i32 8, i32 31)
  %v24 = fadd float %v22, %v23
  %v25 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v24, i32 4, i32 31)
  %v26 = fadd float %v24, %v25
  %v27 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v26, i32 2, i32 31)
  %v28 = fadd float %v26, %v27
  %v29 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v28, i32 1, i32 31)
  %v30 = fadd float %v28, %v29
  %v31 = and i32 %v1, 31
  %v32 = getelementptr float, ptr addrspace(1) %out, i32 %v2
  %v33 = icmp eq i32 %v1, 0
  br i1 %v33, label %w0, label %done
w0:
  store float %v30, ptr addrspace(1) %v32, align 4
  br label %done
done:
  ret void
}
