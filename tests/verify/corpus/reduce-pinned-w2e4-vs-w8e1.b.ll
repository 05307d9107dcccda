target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

@sm = internal addrspace(3) global [32 x float] undef, align 4
define ptx_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "nvvm.maxntid"="256" {
entry:
  %v1 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %v2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %v3 = mul i32 %v2, 256
  %v4 = mul i32 %v1, 1
  %v5 = add i32 %v3, %v4
  %v6 = add i32 %v5, 0
  %v7 = getelementptr float, ptr addrspace(1) %in, i32 %v6
  %v8 = load float, ptr addrspace(1) %v7, align 4
  %v9 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v8, i32 1, i32 31)
  %v10 = fadd float %v8, %v9
  %v11 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v10, i32 2, i32 31)
  %v12 = fadd float %v10, %v11
  %v13 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v12, i32 4, i32 31)
  %v14 = fadd float %v12, %v13
  %v15 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v14, i32 8, i32 31)
  %v16 = fadd float %v14, %v15
  %v17 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v16, i32 16, i32 31)
  %v18 = fadd float %v16, %v17
  %v19 = and i32 %v1, 31
  %v20 = lshr i32 %v1, 5
  %v21 = getelementptr [32 x float], ptr addrspace(3) @sm, i32 0, i32 %v20
  %v22 = icmp eq i32 %v19, 0
  br i1 %v22, label %st, label %join
st:
  store float %v18, ptr addrspace(3) %v21, align 4
  br label %join
join:
  call void @llvm.nvvm.barrier0()
  %v23 = getelementptr [32 x float], ptr addrspace(3) @sm, i32 0, i32 %v19
  %v24 = icmp ult i32 %v19, 8
  %v25 = load float, ptr addrspace(3) %v23, align 4
  %v26 = select i1 %v24, float %v25, float -0.0
  %v27 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v26, i32 1, i32 31)
  %v28 = fadd float %v26, %v27
  %v29 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v28, i32 2, i32 31)
  %v30 = fadd float %v28, %v29
  %v31 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v30, i32 4, i32 31)
  %v32 = fadd float %v30, %v31
  %v33 = getelementptr float, ptr addrspace(1) %out, i32 %v2
  %v34 = icmp eq i32 %v1, 0
  br i1 %v34, label %w0, label %done
w0:
  store float %v32, ptr addrspace(1) %v33, align 4
  br label %done
done:
  ret void
}
