target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

declare {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32, i32, i32, i32, i32, i32, float, float, float, float)
define ptx_kernel void @mma_k(ptr addrspace(1) %A, ptr addrspace(1) %B, ptr addrspace(1) %C, i32 %K) "nvvm.maxntid"="32" {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ta = mul i32 %t, 4
  %tb = mul i32 %t, 2
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %knext, %loop ]
  %c0 = phi float [ 0.0, %entry ], [ %d1_0, %loop ]
  %c1 = phi float [ 0.0, %entry ], [ %d1_1, %loop ]
  %c2 = phi float [ 0.0, %entry ], [ %d1_2, %loop ]
  %c3 = phi float [ 0.0, %entry ], [ %d1_3, %loop ]
  %ks0 = add i32 %k, 0
  %kw0 = mul i32 %ks0, 8
  %ai0_0 = add i32 %kw0, %ta
  %aj0_0 = add i32 %ai0_0, 0
  %ap0_0 = getelementptr i32, ptr addrspace(1) %A, i32 %aj0_0
  %a0_0 = load i32, ptr addrspace(1) %ap0_0, align 4
  %ai0_1 = add i32 %kw0, %ta
  %aj0_1 = add i32 %ai0_1, 1
  %ap0_1 = getelementptr i32, ptr addrspace(1) %A, i32 %aj0_1
  %a0_1 = load i32, ptr addrspace(1) %ap0_1, align 4
  %ai0_2 = add i32 %kw0, %ta
  %aj0_2 = add i32 %ai0_2, 2
  %ap0_2 = getelementptr i32, ptr addrspace(1) %A, i32 %aj0_2
  %a0_2 = load i32, ptr addrspace(1) %ap0_2, align 4
  %ai0_3 = add i32 %kw0, %ta
  %aj0_3 = add i32 %ai0_3, 3
  %ap0_3 = getelementptr i32, ptr addrspace(1) %A, i32 %aj0_3
  %a0_3 = load i32, ptr addrspace(1) %ap0_3, align 4
  %bi0_0 = add i32 %kw0, %tb
  %bj0_0 = add i32 %bi0_0, 0
  %bp0_0 = getelementptr i32, ptr addrspace(1) %B, i32 %bj0_0
  %b0_0 = load i32, ptr addrspace(1) %bp0_0, align 4
  %bi0_1 = add i32 %kw0, %tb
  %bj0_1 = add i32 %bi0_1, 1
  %bp0_1 = getelementptr i32, ptr addrspace(1) %B, i32 %bj0_1
  %b0_1 = load i32, ptr addrspace(1) %bp0_1, align 4
  %r0 = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %a0_0, i32 %a0_1, i32 %a0_2, i32 %a0_3, i32 %b0_0, i32 %b0_1, float %c0, float %c1, float %c2, float %c3)
  %d0_0 = extractvalue {float, float, float, float} %r0, 0
  %d0_1 = extractvalue {float, float, float, float} %r0, 1
  %d0_2 = extractvalue {float, float, float, float} %r0, 2
  %d0_3 = extractvalue {float, float, float, float} %r0, 3
  %ks1 = add i32 %k, 16
  %kw1 = mul i32 %ks1, 8
  %ai1_0 = add i32 %kw1, %ta
  %aj1_0 = add i32 %ai1_0, 0
  %ap1_0 = getelementptr i32, ptr addrspace(1) %A, i32 %aj1_0
  %a1_0 = load i32, ptr addrspace(1) %ap1_0, align 4
  %ai1_1 = add i32 %kw1, %ta
  %aj1_1 = add i32 %ai1_1, 1
  %ap1_1 = getelementptr i32, ptr addrspace(1) %A, i32 %aj1_1
  %a1_1 = load i32, ptr addrspace(1) %ap1_1, align 4
  %ai1_2 = add i32 %kw1, %ta
  %aj1_2 = add i32 %ai1_2, 2
  %ap1_2 = getelementptr i32, ptr addrspace(1) %A, i32 %aj1_2
  %a1_2 = load i32, ptr addrspace(1) %ap1_2, align 4
  %ai1_3 = add i32 %kw1, %ta
  %aj1_3 = add i32 %ai1_3, 3
  %ap1_3 = getelementptr i32, ptr addrspace(1) %A, i32 %aj1_3
  %a1_3 = load i32, ptr addrspace(1) %ap1_3, align 4
  %bi1_0 = add i32 %kw1, %tb
  %bj1_0 = add i32 %bi1_0, 0
  %bp1_0 = getelementptr i32, ptr addrspace(1) %B, i32 %bj1_0
  %b1_0 = load i32, ptr addrspace(1) %bp1_0, align 4
  %bi1_1 = add i32 %kw1, %tb
  %bj1_1 = add i32 %bi1_1, 1
  %bp1_1 = getelementptr i32, ptr addrspace(1) %B, i32 %bj1_1
  %b1_1 = load i32, ptr addrspace(1) %bp1_1, align 4
  %r1 = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %a1_0, i32 %a1_1, i32 %a1_2, i32 %a1_3, i32 %b1_0, i32 %b1_1, float %d0_0, float %d0_1, float %d0_2, float %d0_3)
  %d1_0 = extractvalue {float, float, float, float} %r1, 0
  %d1_1 = extractvalue {float, float, float, float} %r1, 1
  %d1_2 = extractvalue {float, float, float, float} %r1, 2
  %d1_3 = extractvalue {float, float, float, float} %r1, 3
  %knext = add i32 %k, 32
  %cnd = icmp ult i32 %knext, %K
  br i1 %cnd, label %loop, label %exit
exit:
  %ci0 = add i32 %ta, 0
  %cp0 = getelementptr float, ptr addrspace(1) %C, i32 %ci0
  store float %d1_0, ptr addrspace(1) %cp0, align 4
  %ci1 = add i32 %ta, 1
  %cp1 = getelementptr float, ptr addrspace(1) %C, i32 %ci1
  store float %d1_1, ptr addrspace(1) %cp1, align 4
  %ci2 = add i32 %ta, 2
  %cp2 = getelementptr float, ptr addrspace(1) %C, i32 %ci2
  store float %d1_2, ptr addrspace(1) %cp2, align 4
  %ci3 = add i32 %ta, 3
  %cp3 = getelementptr float, ptr addrspace(1) %C, i32 %ci3
  store float %d1_3, ptr addrspace(1) %cp3, align 4
  ret void
}
