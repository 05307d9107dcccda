target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
define amdgpu_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="1,64" {
entry:
  %v1 = call i32 @llvm.amdgcn.workitem.id.x()
  %v2 = call i32 @llvm.amdgcn.workgroup.id.x()
  %v3 = mul i32 %v2, 256
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
  %v19 = fadd float %v14, %v17
  %v20 = fadd float %v18, %v19
  %v21 = bitcast float %v20 to i32
  %v22 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v21, i32 273, i32 15, i32 15, i1 false)
  %v23 = bitcast i32 %v22 to float
  %v24 = fadd float %v20, %v23
  %v25 = bitcast float %v24 to i32
  %v26 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v25, i32 274, i32 15, i32 15, i1 false)
  %v27 = bitcast i32 %v26 to float
  %v28 = fadd float %v24, %v27
  %v29 = bitcast float %v28 to i32
  %v30 = call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %v29, i32 276, i32 15, i32 15, i1 false)
  %v31 = bitcast i32 %v30 to float
  %v32 = fadd float %v28, %v31
  %v33 = lshr i32 %v1, 3
  %v34 = mul i32 %v2, 8
  %v35 = add i32 %v34, %v33
  %v36 = getelementptr float, ptr addrspace(1) %out, i32 %v35
  %v37 = and i32 %v1, 7
  %v38 = icmp eq i32 %v37, 7
  br i1 %v38, label %st, label %done
st:
  store float %v32, ptr addrspace(1) %v36, align 4
  br label %done
done:
  ret void
}
