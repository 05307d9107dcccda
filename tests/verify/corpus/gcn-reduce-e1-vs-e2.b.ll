target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
define amdgpu_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="1,64" {
entry:
  %v1 = call i32 @llvm.amdgcn.workitem.id.x()
  %v2 = call i32 @llvm.amdgcn.workgroup.id.x()
  %v3 = mul i32 %v2, 128
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
  %v30 = mul i32 %v2, 4
  %v31 = add i32 %v30, %v29
  %v32 = getelementptr float, ptr addrspace(1) %out, i32 %v31
  %v33 = and i32 %v1, 15
  %v34 = icmp eq i32 %v33, 15
  br i1 %v34, label %st, label %done
st:
  store float %v28, ptr addrspace(1) %v32, align 4
  br label %done
done:
  ret void
}
