// LowerDot: before/after for d = dot(a, b, acc), a f16<32x8>, b f16<8x32>,
// acc f32<32x32>, one warp (blocked layouts: lane l holds row l of a, row l/4 of b's
// columns 8(l%4)..+7, and row l of acc and d):
//   %d = dot %a, %b, %acc : f32<32x32>
// becomes (per thread)
//   smem[pad(8l + r)]        = fpext a_r        r = 0..7          ; stage_operands
//   smem[B + pad(flat_b(r))] = fpext b_r        r = 0..7
//   bar.sync 0
//   d_r = acc_r                                 r = 0..31, (i, j) = (l, r) ; fma_chains
//   d_r = fma.rn.f32(smem[pad(8i + k)], smem[B + pad(32k + j)], d_r)   k = 0, 1, ..., 7
// pad(x) = padded_index(x) = x + x/32 (LowerReduce.h, as convert_layout), B = padded_slots(a) (264).
// K > kDotUnrollK: the same body in one loop over k carrying all d registers.
#include "codegen/LowerDot.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/LowerReduce.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

namespace fixbits::codegen {
namespace {

// Static shared memory the kernel's module holds so far.
int64_t module_smem_bytes(const LoweringContext& ctx) {
  const llvm::DataLayout& dl = ctx.module.getDataLayout();
  int64_t total = 0;
  for (const llvm::GlobalVariable& g : ctx.module.globals()) {
    if (g.getAddressSpace() == ctx.target.shared_address_space()) {
      total += static_cast<int64_t>(dl.getTypeAllocSize(g.getValueType()).getFixedValue());
    }
  }
  return total;
}

struct Staged {
  SmemBuffer buf;
  int64_t b_base = 0;  // b's first slot (a's padded size)
};

llvm::Value* smem_at(llvm::IRBuilder<>& b, const Staged& s, llvm::Value* slot) {
  return b.CreateInBoundsGEP(s.buf.ty, s.buf.base, {b.getInt32(0), slot});
}

// Step 1. Every thread writes its registers of a and b, widened exactly to f32, at
// their padded row-major index (b after a); one barrier.
Staged stage_operands(LoweringContext& ctx, const Lowered& a, const Lowered& b, int64_t a_elems,
                      int64_t b_elems) {
  llvm::IRBuilder<>& bld = ctx.b;
  Staged s;
  s.b_base = padded_slots(a_elems);
  s.buf = alternating_buffers(ctx, padded_slots(a_elems) + padded_slots(b_elems), "dot");
  auto write = [&](const Lowered& t, int64_t base) {
    for (size_t r = 0; r < t.regs.size(); ++r) {
      llvm::Value* v = t.regs[r];
      if (!v->getType()->isFloatTy()) v = bld.CreateFPExt(v, bld.getFloatTy());  // exact
      llvm::Value* slot = padded_index(bld, emit_flat_index(ctx, t.layout, static_cast<int64_t>(r)));
      slot = bld.CreateAdd(slot, bld.getInt32(static_cast<uint32_t>(base)));
      bld.CreateAlignedStore(v, smem_at(bld, s, slot), llvm::Align(4));
    }
  };
  write(a, 0);
  write(b, s.b_base);
  ctx.target.barrier(bld);
  return s;
}

// Step 2. For every register of d's layout `ld`, with (i, j) its coordinates: the
// chain d = acc; d = fma(a[i][k], b[k][j], d) for k = 0..K-1, read from the staging.
std::vector<llvm::Value*> fma_chains(LoweringContext& ctx, const Staged& s, const Layout& ld,
                                     std::vector<llvm::Value*> d, int64_t k_extent) {
  llvm::IRBuilder<>& bld = ctx.b;
  llvm::Type* f32 = bld.getFloatTy();
  const int64_t n_extent = ld.shape[1];
  std::vector<llvm::Value*> a_row(d.size()), b_col(d.size());  // i*K and B + j, per register
  for (size_t r = 0; r < d.size(); ++r) {
    llvm::Value* flat = emit_flat_index(ctx, ld, static_cast<int64_t>(r));
    llvm::Value* i = bld.CreateUDiv(flat, bld.getInt32(static_cast<uint32_t>(n_extent)));
    a_row[r] = bld.CreateMul(i, bld.getInt32(static_cast<uint32_t>(k_extent)));
    b_col[r] = bld.CreateURem(flat, bld.getInt32(static_cast<uint32_t>(n_extent)));
  }
  // One step of register r's chain at k (an i32 value).
  auto step = [&](size_t r, llvm::Value* k, llvm::Value* acc) {
    llvm::Value* a_slot = padded_index(bld, bld.CreateAdd(a_row[r], k));
    llvm::Value* b_flat = bld.CreateAdd(bld.CreateMul(k, bld.getInt32(static_cast<uint32_t>(n_extent))),
                                        b_col[r]);
    llvm::Value* b_slot = bld.CreateAdd(padded_index(bld, b_flat), bld.getInt32(static_cast<uint32_t>(s.b_base)));
    llvm::Value* av = bld.CreateAlignedLoad(f32, smem_at(bld, s, a_slot), llvm::Align(4));
    llvm::Value* bv = bld.CreateAlignedLoad(f32, smem_at(bld, s, b_slot), llvm::Align(4));
    return bld.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {av, bv, acc});
  };
  if (k_extent <= kDotUnrollK) {
    for (int64_t k = 0; k < k_extent; ++k) {
      for (size_t r = 0; r < d.size(); ++r) d[r] = step(r, bld.getInt32(static_cast<uint32_t>(k)), d[r]);
    }
    return d;
  }
  // for (k = 0; k < K; ++k) — K >= 1, so the body runs first and tests at its end.
  llvm::BasicBlock* pre = bld.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(bld.getContext(), "dot.k", ctx.kernel);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(bld.getContext(), "dot.exit", ctx.kernel);
  bld.CreateBr(loop);
  bld.SetInsertPoint(loop);
  llvm::PHINode* k = bld.CreatePHI(bld.getInt32Ty(), 2, "k");
  std::vector<llvm::PHINode*> carried;
  for (llvm::Value* v : d) {
    carried.push_back(bld.CreatePHI(f32, 2));
    carried.back()->addIncoming(v, pre);
  }
  for (size_t r = 0; r < d.size(); ++r) d[r] = step(r, k, carried[r]);
  llvm::Value* next = bld.CreateAdd(k, bld.getInt32(1), "k.next");
  llvm::BasicBlock* latch = bld.GetInsertBlock();
  k->addIncoming(bld.getInt32(0), pre);
  k->addIncoming(next, latch);
  for (size_t r = 0; r < d.size(); ++r) carried[r]->addIncoming(d[r], latch);
  bld.CreateCondBr(bld.CreateICmpULT(next, bld.getInt32(static_cast<uint32_t>(k_extent))), loop, exit);
  bld.SetInsertPoint(exit);
  return d;
}

}  // namespace

absl::StatusOr<Lowered> lower_dot(LoweringContext& ctx, const tile::Op& op, int n) {
  const tile::Type& at = ctx.program.values[op.args[0]];
  const tile::Type& bt = ctx.program.values[op.args[1]];
  const Lowered& a = ctx.values[op.args[0]];
  const Lowered& b = ctx.values[op.args[1]];
  const Lowered& acc = ctx.values[op.args[2]];
  if (a.scalar || b.scalar || acc.scalar || rank(a.layout) != 2 || rank(b.layout) != 2 ||
      rank(acc.layout) != 2) {
    return absl::InternalError(absl::StrFormat("dot #%d: an operand was not lowered as a rank-2 tile", n));
  }
  const int64_t m = at.shape[0], k = at.shape[1], nn = bt.shape[1];
  const int64_t staged = 4 * 2 * (padded_slots(m * k) + padded_slots(k * nn));
  const int64_t before = module_smem_bytes(ctx);
  if (before + staged > kDotSmemBytes) {
    return absl::UnimplementedError(absl::StrFormat(
        "dot #%d: staging a (%dx%d) and b (%dx%d) through shared memory takes %d bytes (two "
        "alternating f32 copies), which with the kernel's other %d bytes exceeds the %d-byte "
        "budget; use smaller tiles (split K into a loop of dots)",
        n, m, k, k, nn, staged, before, kDotSmemBytes));
  }
  Staged s = stage_operands(ctx, a, b, m * k, k * nn);
  Lowered out;
  out.scalar = false;
  out.layout = acc.layout;  // the blocked layout of (M, N), as the result's
  out.regs = fma_chains(ctx, s, out.layout, acc.regs, k);
  return out;
}

}  // namespace fixbits::codegen
