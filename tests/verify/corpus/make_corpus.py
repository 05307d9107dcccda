#!/usr/bin/env python3
"""Regenerates the verifier corpus: writes small LLVM IR kernels (*.ll) and compiles them
with LLVM 22's llc to PTX (sm_90a) and AMDGCN (gfx942). Every case is a pair
<case>.a.<ext> / <case>.b.<ext>; the first line of the .a file states the expected verdict
("// EXPECT: equivalent" or "// EXPECT: differs: <why>"; ";" comments for AMDGCN).
Hand-written rejection cases (<case>-fail.*) are not produced here.
Usage: python3 make_corpus.py [--llc /usr/lib/llvm-22/bin/llc]"""
import argparse
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
LLC = "/usr/lib/llvm-22/bin/llc"

NV_HEAD = """target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()
"""


class Ir:
    def __init__(self):
        self.lines, self.n = [], 0

    def tmp(self):
        self.n += 1
        return "%%v%d" % self.n

    def emit(self, s):
        self.lines.append("  " + s)

    def op(self, s):
        t = self.tmp()
        self.emit("%s = %s" % (t, s))
        return t


def nv_reduce(warps, ept, mode, layout="contiguous"):
    """Row sum of 32*warps*ept floats, one block per row.
    pinned: balanced tree in registers, shfl.bfly counting up, warps combined through shared
    memory by a second count-up shuffle tree. free: sequential in registers, shfl counting
    down, warps summed one after another by thread 0. layout "strided" gives thread t the
    elements t + e*32*warps instead of t*ept + e (same code, another tree)."""
    n = 32 * warps * ept
    ir = Ir()
    out = [NV_HEAD]
    if warps > 1:
        out.append("@sm = internal addrspace(3) global [32 x float] undef, align 4")
    out.append('define ptx_kernel void @row_sum(ptr addrspace(1) %%in, ptr addrspace(1) %%out) "nvvm.maxntid"="%d" {' % (32 * warps))
    out.append("entry:")
    t = ir.op("call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    b = ir.op("call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
    row = ir.op("mul i32 %s, %d" % (b, n))
    te = ir.op("mul i32 %s, %d" % (t, ept if layout == "contiguous" else 1))
    base = ir.op("add i32 %s, %s" % (row, te))
    vals = []
    for e in range(ept):
        i = ir.op("add i32 %s, %d" % (base, e if layout == "contiguous" else e * 32 * warps))
        p = ir.op("getelementptr float, ptr addrspace(1) %%in, i32 %s" % i)
        vals.append(ir.op("load float, ptr addrspace(1) %s, align 4" % p))
    if mode == "pinned":
        while len(vals) > 1:
            vals = [ir.op("fadd float %s, %s" % (vals[2 * i], vals[2 * i + 1])) for i in range(len(vals) // 2)]
        acc = vals[0]
        offs = [1, 2, 4, 8, 16]
    else:
        acc = vals[0]
        for v in vals[1:]:
            acc = ir.op("fadd float %s, %s" % (acc, v))
        offs = [16, 8, 4, 2, 1]
    for o in offs:
        x = ir.op("call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s, i32 %d, i32 31)" % (acc, o))
        acc = ir.op("fadd float %s, %s" % (acc, x))
    lane = ir.op("and i32 %s, 31" % t)
    if warps > 1:
        w = ir.op("lshr i32 %s, 5" % t)
        sp = ir.op("getelementptr [32 x float], ptr addrspace(3) @sm, i32 0, i32 %s" % w)
        isl0 = ir.op("icmp eq i32 %s, 0" % lane)
        ir.emit("br i1 %s, label %%st, label %%join" % isl0)
        out += ir.lines
        ir.lines = []
        out.append("st:")
        ir.emit("store float %s, ptr addrspace(3) %s, align 4" % (acc, sp))
        ir.emit("br label %join")
        out += ir.lines
        ir.lines = []
        out.append("join:")
        ir.emit("call void @llvm.nvvm.barrier0()")
        if mode == "pinned":
            lp = ir.op("getelementptr [32 x float], ptr addrspace(3) @sm, i32 0, i32 %s" % lane)
            lt = ir.op("icmp ult i32 %s, %d" % (lane, warps))
            ld = ir.op("load float, ptr addrspace(3) %s, align 4" % lp)
            acc = ir.op("select i1 %s, float %s, float -0.0" % (lt, ld))
            o = 1
            while o < warps:
                x = ir.op("call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s, i32 %d, i32 31)" % (acc, o))
                acc = ir.op("fadd float %s, %s" % (acc, x))
                o *= 2
        else:
            parts = []
            for k in range(warps):
                pk = ir.op("getelementptr [32 x float], ptr addrspace(3) @sm, i32 0, i32 %d" % k)
                parts.append(ir.op("load float, ptr addrspace(3) %s, align 4" % pk))
            acc = parts[0]
            for v in parts[1:]:
                acc = ir.op("fadd float %s, %s" % (acc, v))
    op = ir.op("getelementptr float, ptr addrspace(1) %%out, i32 %s" % b)
    is0 = ir.op("icmp eq i32 %s, 0" % t)
    ir.emit("br i1 %s, label %%w0, label %%done" % is0)
    out += ir.lines
    out += ["w0:", "  store float %s, ptr addrspace(1) %s, align 4" % (acc, op), "  br label %done",
            "done:", "  ret void", "}"]
    return "\n".join(out) + "\n"


def nv_chunk_fold(chunk, threads):
    """One thread per row: acc += balanced_sum(next `chunk` elements), a loop over the row
    (length %n, a multiple of chunk). Re-chunking regroups the sum."""
    ir = Ir()
    out = [NV_HEAD]
    out.append('define ptx_kernel void @chunk_fold(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) "nvvm.maxntid"="' + str(threads) + '" {')
    out.append("entry:")
    t = ir.op("call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    b = ir.op("call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
    bt = ir.op("mul i32 %s, %d" % (b, threads))
    r = ir.op("add i32 %s, %s" % (bt, t))
    rowbase = ir.op("mul i32 %s, %%n" % r)
    ir.emit("br label %loop")
    out += ir.lines
    ir.lines = []
    out.append("loop:")
    out.append("  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]")
    out.append("  %acc = phi float [ -0.0, %entry ], [ %accnext, %loop ]")
    idx = ir.op("add i32 %s, %%i" % rowbase)
    vals = []
    for e in range(chunk):
        ie = ir.op("add i32 %s, %d" % (idx, e))
        p = ir.op("getelementptr float, ptr addrspace(1) %%in, i32 %s" % ie)
        vals.append(ir.op("load float, ptr addrspace(1) %s, align 4" % p))
    while len(vals) > 1:
        vals = [ir.op("fadd float %s, %s" % (vals[2 * i], vals[2 * i + 1])) for i in range(len(vals) // 2)]
    ir.emit("%%accnext = fadd float %%acc, %s" % vals[0])
    ir.emit("%%inext = add i32 %%i, %d" % chunk)
    c = ir.op("icmp ult i32 %inext, %n")
    ir.emit("br i1 %s, label %%loop, label %%exit" % c)
    out += ir.lines
    out += ["exit:", "  %op = getelementptr float, ptr addrspace(1) %out, i32 " + r,
            "  store float %accnext, ptr addrspace(1) %op, align 4", "  ret void", "}"]
    return "\n".join(out) + "\n"


def nv_gemm(block, ksplit):
    """C[row, col] = sum_k A[row, k] * B[k, col] by an fma chain over k (one thread per C
    element, col = ctaid.x * block + tid.x, row = ctaid.y... here a param). ksplit=2 keeps two
    accumulators over the even and odd k and adds them at the end: a different tree."""
    out = [NV_HEAD, "declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()"]
    out.append('define ptx_kernel void @gemm(ptr addrspace(1) %A, ptr addrspace(1) %B, ptr addrspace(1) %C, i32 %K, i32 %N) "nvvm.maxntid"="' + str(block) + '" {')
    out += ["entry:",
            "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
            "  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()",
            "  %row = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()",
            "  %%bxs = mul i32 %%bx, %d" % block,
            "  %col = add i32 %bxs, %t",
            "  %arow = mul i32 %row, %K",
            "  br label %loop",
            "loop:",
            "  %k = phi i32 [ 0, %entry ], [ %knext, %loop ]"]
    accs = ["acc%d" % s for s in range(ksplit)]
    for a in accs:
        out.append("  %%%s = phi float [ 0.0, %%entry ], [ %%%snext, %%loop ]" % (a, a))
    for s, a in enumerate(accs):
        out += ["  %%ka%d = add i32 %%k, %d" % (s, s),
                "  %%ai%d = add i32 %%arow, %%ka%d" % (s, s),
                "  %%ap%d = getelementptr float, ptr addrspace(1) %%A, i32 %%ai%d" % (s, s),
                "  %%av%d = load float, ptr addrspace(1) %%ap%d, align 4" % (s, s),
                "  %%bk%d = mul i32 %%ka%d, %%N" % (s, s),
                "  %%bi%d = add i32 %%bk%d, %%col" % (s, s),
                "  %%bp%d = getelementptr float, ptr addrspace(1) %%B, i32 %%bi%d" % (s, s),
                "  %%bv%d = load float, ptr addrspace(1) %%bp%d, align 4" % (s, s),
                "  %%%snext = call float @llvm.fma.f32(float %%av%d, float %%bv%d, float %%%s)" % (a, s, s, a)]
    out += ["  %%knext = add i32 %%k, %d" % ksplit,
            "  %c = icmp ult i32 %knext, %K",
            "  br i1 %c, label %loop, label %exit",
            "exit:"]
    res = "%acc0next"
    if ksplit == 2:
        out.append("  %sum = fadd float %acc0next, %acc1next")
        res = "%sum"
    out += ["  %crow = mul i32 %row, %N",
            "  %ci = add i32 %crow, %col",
            "  %cp = getelementptr float, ptr addrspace(1) %C, i32 %ci",
            "  store float %s, ptr addrspace(1) %%cp, align 4" % res,
            "  ret void", "}", "declare float @llvm.fma.f32(float, float, float)"]
    return "\n".join(out) + "\n"


def nv_mma(per_iter):
    """One warp accumulates a 16x8 f32 tile with mma.sync m16n8k16 bf16 over K; each loop
    iteration issues per_iter MMAs (BLOCK_K = 16 * per_iter). Fragments load straight from
    global memory; the accumulator is touched by nothing but the MMAs until the loop ends."""
    out = [NV_HEAD,
           "declare {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32, i32, i32, i32, i32, i32, float, float, float, float)",
           'define ptx_kernel void @mma_k(ptr addrspace(1) %A, ptr addrspace(1) %B, ptr addrspace(1) %C, i32 %K) "nvvm.maxntid"="32" {',
           "entry:",
           "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
           "  %ta = mul i32 %t, 4",
           "  %tb = mul i32 %t, 2",
           "  br label %loop",
           "loop:",
           "  %k = phi i32 [ 0, %entry ], [ %knext, %loop ]"]
    for i in range(4):
        out.append("  %%c%d = phi float [ 0.0, %%entry ], [ %%d%d_%d, %%loop ]" % (i, per_iter - 1, i))
    prev = ["%%c%d" % i for i in range(4)]
    for s in range(per_iter):
        out.append("  %%ks%d = add i32 %%k, %d" % (s, 16 * s))
        out.append("  %%kw%d = mul i32 %%ks%d, 8" % (s, s))
        a = []
        for j in range(4):
            out += ["  %%ai%d_%d = add i32 %%kw%d, %%ta" % (s, j, s),
                    "  %%aj%d_%d = add i32 %%ai%d_%d, %d" % (s, j, s, j, j),
                    "  %%ap%d_%d = getelementptr i32, ptr addrspace(1) %%A, i32 %%aj%d_%d" % (s, j, s, j),
                    "  %%a%d_%d = load i32, ptr addrspace(1) %%ap%d_%d, align 4" % (s, j, s, j)]
            a.append("%%a%d_%d" % (s, j))
        b = []
        for j in range(2):
            out += ["  %%bi%d_%d = add i32 %%kw%d, %%tb" % (s, j, s),
                    "  %%bj%d_%d = add i32 %%bi%d_%d, %d" % (s, j, s, j, j),
                    "  %%bp%d_%d = getelementptr i32, ptr addrspace(1) %%B, i32 %%bj%d_%d" % (s, j, s, j),
                    "  %%b%d_%d = load i32, ptr addrspace(1) %%bp%d_%d, align 4" % (s, j, s, j)]
            b.append("%%b%d_%d" % (s, j))
        args = ", ".join(["i32 " + x for x in a + b] + ["float " + x for x in prev])
        out.append("  %%r%d = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(%s)" % (s, args))
        for i in range(4):
            out.append("  %%d%d_%d = extractvalue {float, float, float, float} %%r%d, %d" % (s, i, s, i))
        prev = ["%%d%d_%d" % (s, i) for i in range(4)]
    out += ["  %%knext = add i32 %%k, %d" % (16 * per_iter),
            "  %cnd = icmp ult i32 %knext, %K",
            "  br i1 %cnd, label %loop, label %exit",
            "exit:"]
    for i in range(4):
        out += ["  %%ci%d = add i32 %%ta, %d" % (i, i),
                "  %%cp%d = getelementptr float, ptr addrspace(1) %%C, i32 %%ci%d" % (i, i),
                "  store float %s, ptr addrspace(1) %%cp%d, align 4" % (prev[i], i)]
    out += ["  ret void", "}"]
    return "\n".join(out) + "\n"


def gcn_reduce(ept, order):
    """Sum of lanes*ept floats per row of lanes = 2^len(order) lanes: balanced in registers,
    then DPP row_shr steps (1,2,4,8 pinned or 8,4,2,1 default); the last lane of each row
    stores the result."""
    lanes = 1 << len(order)
    out = ['target triple = "amdgcn-amd-amdhsa"',
           "declare i32 @llvm.amdgcn.workitem.id.x()",
           "declare i32 @llvm.amdgcn.workgroup.id.x()",
           "declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)",
           'define amdgpu_kernel void @row_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) "amdgpu-flat-work-group-size"="1,64" {']
    ir = Ir()
    t = ir.op("call i32 @llvm.amdgcn.workitem.id.x()")
    b = ir.op("call i32 @llvm.amdgcn.workgroup.id.x()")
    row = ir.op("mul i32 %s, %d" % (b, 64 * ept))
    te = ir.op("mul i32 %s, %d" % (t, ept))
    base = ir.op("add i32 %s, %s" % (row, te))
    vals = []
    for e in range(ept):
        i = ir.op("add i32 %s, %d" % (base, e))
        p = ir.op("getelementptr float, ptr addrspace(1) %%in, i32 %s" % i)
        vals.append(ir.op("load float, ptr addrspace(1) %s, align 4" % p))
    while len(vals) > 1:
        vals = [ir.op("fadd float %s, %s" % (vals[2 * i], vals[2 * i + 1])) for i in range(len(vals) // 2)]
    acc = vals[0]
    for o in order:
        ai = ir.op("bitcast float %s to i32" % acc)
        si = ir.op("call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %s, i32 %d, i32 15, i32 15, i1 false)" % (ai, 0x110 + o))
        s = ir.op("bitcast i32 %s to float" % si)
        acc = ir.op("fadd float %s, %s" % (acc, s))
    rw = ir.op("lshr i32 %s, %d" % (t, len(order)))
    ri = ir.op("add i32 %s, %s" % (ir.op("mul i32 %s, %d" % (b, 64 // lanes)), rw))
    q = ir.op("getelementptr float, ptr addrspace(1) %%out, i32 %s" % ri)
    ln = ir.op("and i32 %s, %d" % (t, lanes - 1))
    last = ir.op("icmp eq i32 %s, %d" % (ln, lanes - 1))
    ir.emit("br i1 %s, label %%st, label %%done" % last)
    out += ["entry:"] + ir.lines
    out += ["st:", "  store float %s, ptr addrspace(1) %s, align 4" % (acc, q), "  br label %done",
            "done:", "  ret void", "}"]
    return "\n".join(out) + "\n"


def gcn_reduce_lds(ept, rows):
    """Sum of 16*rows*ept floats per workgroup of 16*rows lanes: balanced in registers, DPP
    row_shr 1,2,4,8 within each 16-lane row, then (rows > 1) the last lane of each row writes
    its partial to LDS, s_barrier, lanes < rows read them back (-0.0 padding) and a second DPP
    row_shr count-up tree finishes; one lane stores the workgroup's sum."""
    out = ['target triple = "amdgcn-amd-amdhsa"',
           "declare i32 @llvm.amdgcn.workitem.id.x()",
           "declare i32 @llvm.amdgcn.workgroup.id.x()",
           "declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)",
           "declare void @llvm.amdgcn.s.barrier()"]
    if rows > 1:
        out.append("@lds = internal addrspace(3) global [16 x float] poison, align 4")
    out.append('define amdgpu_kernel void @wg_sum(ptr addrspace(1) %%in, ptr addrspace(1) %%out) "amdgpu-flat-work-group-size"="1,%d" {' % (16 * rows))
    ir = Ir()
    t = ir.op("call i32 @llvm.amdgcn.workitem.id.x()")
    b = ir.op("call i32 @llvm.amdgcn.workgroup.id.x()")
    row = ir.op("mul i32 %s, %d" % (b, 16 * rows * ept))
    te = ir.op("mul i32 %s, %d" % (t, ept))
    base = ir.op("add i32 %s, %s" % (row, te))
    vals = []
    for e in range(ept):
        i = ir.op("add i32 %s, %d" % (base, e))
        p = ir.op("getelementptr float, ptr addrspace(1) %%in, i32 %s" % i)
        vals.append(ir.op("load float, ptr addrspace(1) %s, align 4" % p))
    while len(vals) > 1:
        vals = [ir.op("fadd float %s, %s" % (vals[2 * i], vals[2 * i + 1])) for i in range(len(vals) // 2)]
    acc = vals[0]

    def dpp_tree(acc, steps):
        for o in steps:
            ai = ir.op("bitcast float %s to i32" % acc)
            si = ir.op("call i32 @llvm.amdgcn.update.dpp.i32(i32 -2147483648, i32 %s, i32 %d, i32 15, i32 15, i1 false)" % (ai, 0x110 + o))
            sv = ir.op("bitcast i32 %s to float" % si)
            acc = ir.op("fadd float %s, %s" % (acc, sv))
        return acc
    acc = dpp_tree(acc, (1, 2, 4, 8))
    final_lane = 15
    if rows > 1:
        r = ir.op("lshr i32 %s, 4" % t)
        sp = ir.op("getelementptr [16 x float], ptr addrspace(3) @lds, i32 0, i32 %s" % r)
        ln = ir.op("and i32 %s, 15" % t)
        last = ir.op("icmp eq i32 %s, 15" % ln)
        ir.emit("br i1 %s, label %%wr, label %%join" % last)
        out += ["entry:"] + ir.lines
        ir.lines = []
        out += ["wr:", "  store float %s, ptr addrspace(3) %s, align 4" % (acc, sp), "  br label %join", "join:"]
        ir.emit("call void @llvm.amdgcn.s.barrier()")
        rp = ir.op("getelementptr [16 x float], ptr addrspace(3) @lds, i32 0, i32 %s" % t)
        lt = ir.op("icmp ult i32 %s, %d" % (t, rows))
        ld = ir.op("load float, ptr addrspace(3) %s, align 4" % rp)
        acc = ir.op("select i1 %s, float %s, float -0.0" % (lt, ld))
        steps = []
        o = 1
        while o < rows:
            steps.append(o)
            o *= 2
        acc = dpp_tree(acc, steps)
        final_lane = rows - 1
        head = []
    else:
        head = ["entry:"]
    q = ir.op("getelementptr float, ptr addrspace(1) %%out, i32 %s" % b)
    isl = ir.op("icmp eq i32 %s, %d" % (t, final_lane))
    ir.emit("br i1 %s, label %%st, label %%done" % isl)
    out += head + ir.lines
    out += ["st:", "  store float %s, ptr addrspace(1) %s, align 4" % (acc, q), "  br label %done",
            "done:", "  ret void", "}"]
    return "\n".join(out) + "\n"


CASES = [
    # name, kind, a-args, b-args, verdict
    ("reduce-pinned-w1e4-vs-w2e2", "nv", ("reduce", 1, 4, "pinned"), ("reduce", 2, 2, "pinned"), "equivalent"),
    ("reduce-pinned-w4e1-vs-w1e4", "nv", ("reduce", 4, 1, "pinned"), ("reduce", 1, 4, "pinned"), "equivalent"),
    ("reduce-pinned-w2e4-vs-w8e1", "nv", ("reduce", 2, 4, "pinned"), ("reduce", 8, 1, "pinned"), "equivalent"),
    ("reduce-pinned-vs-free-w2e2", "nv", ("reduce", 2, 2, "pinned"), ("reduce", 2, 2, "free"),
     "differs: free order folds sequentially in registers and shuffles counting down"),
    ("reduce-pinned-vs-free-w1e1", "nv", ("reduce", 1, 1, "pinned"), ("reduce", 1, 1, "free"),
     "differs: shfl.bfly counting down from 16 is another tree than counting up from 1"),
    ("reduce-pinned-w1e4-vs-w1e2", "nv", ("reduce", 1, 4, "pinned"), ("reduce", 1, 2, "pinned"),
     "differs: 128 and 64 elements give trees of height 7 and 6"),
    ("reduce-contiguous-vs-strided-w2e2", "nv", ("reduce", 2, 2, "pinned"), ("reduce", 2, 2, "pinned", "strided"),
     "differs: a register-first fold over strided elements pairs indices 64 apart, not 1"),
    ("reduce-strided-w1e4-vs-w2e2", "nv", ("reduce", 1, 4, "pinned", "strided"), ("reduce", 2, 2, "pinned", "strided"),
     "differs: with a strided layout the warp count moves the tree"),
    ("reduce-free-w2e2-vs-w1e4", "nv", ("reduce", 2, 2, "free"), ("reduce", 1, 4, "free"),
     "differs: under free order the warp count moves the tree"),
    ("chunk-fold-c4-vs-c8", "nv", ("chunk", 4, 32), ("chunk", 8, 32),
     "differs: re-chunking a scalar fold regroups the sum"),
    ("chunk-fold-c4-t32-vs-t64", "nv", ("chunk", 4, 32), ("chunk", 4, 64), "equivalent"),
    ("gemm-fma-kloop-b64-vs-b128", "nv", ("gemm", 64, 1), ("gemm", 128, 1), "equivalent"),
    ("gemm-fma-kloop-vs-ksplit2", "nv", ("gemm", 64, 1), ("gemm", 64, 2),
     "differs: two accumulators over even and odd k added at the end"),
    ("gcn-reduce-e1-vs-e2", "gcn", ("gcn", 1, (1, 2, 4, 8)), ("gcn", 2, (1, 2, 4, 8)),
     "differs: 16 and 32 elements per row give trees of height 4 and 5"),
    ("gcn-reduce-pinned-vs-default", "gcn", ("gcn", 2, (1, 2, 4, 8)), ("gcn", 2, (8, 4, 2, 1)),
     "differs: DPP row_shr 8,4,2,1 is another tree than 1,2,4,8"),
    ("gcn-reduce-e2l16-vs-e4l8", "gcn", ("gcn", 2, (1, 2, 4, 8)), ("gcn", 4, (1, 2, 4)), "equivalent"),
    ("gcn-lds-r4e1-vs-r1e4", "gcn", ("lds", 1, 4), ("lds", 4, 1), "equivalent"),
    ("gcn-lds-r2e2-vs-r4e1", "gcn", ("lds", 2, 2), ("lds", 1, 4), "equivalent"),
    ("gcn-lds-r4e1-vs-r4e2", "gcn", ("lds", 1, 4), ("lds", 2, 4),
     "differs: 64 and 128 elements per workgroup give trees of height 6 and 7"),
    ("gcn-reduce-e1l16-vs-e2l8", "gcn", ("gcn", 1, (1, 2, 4, 8)), ("gcn", 2, (1, 2, 4)), "equivalent"),
    ("mma-kloop-bk16-vs-bk32", "nv", ("mma", 1), ("mma", 2), "equivalent"),
    ("mma-kloop-vs-fma-kloop", "nv", ("mma", 1), ("gemm", 64, 1),
     "differs: an MMA chain is another tree than a scalar fma chain"),
]


def ir_for(args):
    k = args[0]
    if k == "reduce":
        return nv_reduce(*args[1:])
    if k == "chunk":
        return nv_chunk_fold(*args[1:])
    if k == "gemm":
        return nv_gemm(*args[1:])
    if k == "mma":
        return nv_mma(*args[1:])
    if k == "lds":
        return gcn_reduce_lds(*args[1:])
    if k == "gcn":
        return gcn_reduce(*args[1:])
    raise ValueError(k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llc", default=LLC)
    a = ap.parse_args()
    for name, kind, aa, bb, verdict in CASES:
        for side, args in (("a", aa), ("b", bb)):
            ll = os.path.join(HERE, "%s.%s.ll" % (name, side))
            with open(ll, "w") as f:
                f.write(ir_for(args))
            if kind == "nv":
                outp = os.path.join(HERE, "%s.%s.ptx" % (name, side))
                cmd = [a.llc, "-march=nvptx64", "-mcpu=sm_90a", ll, "-o", outp]
                comment = "//"
            else:
                outp = os.path.join(HERE, "%s.%s.s" % (name, side))
                cmd = [a.llc, "-march=amdgcn", "-mcpu=gfx942", ll, "-o", outp]
                comment = ";"
            subprocess.run(cmd, check=True)
            with open(outp) as f:
                body = f.read()
            head = "%s EXPECT: %s\n" % (comment, verdict) if side == "a" else ""
            head += "%s generated by make_corpus.py from %s\n" % (comment, os.path.basename(ll))
            with open(outp, "w") as f:
                f.write(head + body)


if __name__ == "__main__":
    main()
