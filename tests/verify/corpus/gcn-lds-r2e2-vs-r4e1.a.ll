target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare void @llvm.amdgcn.s.barrier()
@lds = internal addrspace(3) global [16 x float] poison, align 4
define amdgpu_kernel void @wg_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="1,32" {
entry:
  %v1 = call i32 @llvm.amdgcn.workitem.id.x()
  %v2 = call i32 @llvm.amdgcn.workgroup.id.x()
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
  %v13 = bitcast float %v12 to i32
  %v14 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v13, i32 273, i32 15, i32 15, i1 false)
  %v15 = bitcast i32 %v14 to float
  %v16 = fadd float %v12, %v15
  %v17 = bitcast float %v16 to i32
  %v18 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v17, i32 274, i32 15, i32 15, i1 false)
  %v19 = bitcast i32 %v18 to float
  %v20 = fadd float %v16, %v19
  %v21 = bitcast float %v20 to i32
  %v22 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v21, i32 276, i32 15, i32 15, i1 false)
  %v23 = bitcast i32 %v22 to float
  %v24 = fadd float %v20, %v23
  %v25 = bitcast float %v24 to i32
  %v26 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v25, i32 280, i32 15, i32 15, i1 false)
  %v27 = bitcast i32 %v26 to float
  %v28 = fadd float %v24, %v27
  %v29 = lshr i32 %v1, 4
  %v30 = getelementptr [16 x float], ptr addrspace(3) @lds, i32 0, i32 %v29
  %v31 = and i32 %v1, 15
  %v32 = icmp eq i32 %v31, 15
  br i1 %v32, label %wr, label %join
wr:
  store float %v28, ptr addrspace(3) %v30, align 4
  br label %join
join:
  call void @llvm.amdgcn.s.barrier()
  %v33 = getelementptr [16 x float], ptr addrspace(3) @lds, i32 0, i32 %v1
  %v34 = icmp ult i32 %v1, 2
  %v35 = load float, ptr addrspace(3) %v33, align 4
  %v36 = select i1 %v34, float %v35, float -0.0
  %v37 = bitcast float %v36 to i32
  %v38 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v37, i32 273, i32 15, i32 15, i1 false)
  %v39 = bitcast i32 %v38 to float
  %v40 = fadd float %v36, %v39
  %v41 = getelementptr float, ptr addrspace(1) %out, i32 %v2
  %v42 = icmp eq i32 %v1, 1
  br i1 %v42, label %st, label %done
st:
  store float %v40, ptr addrspace(1) %v41, align 4
  br label %done
done:
  ret void
}
