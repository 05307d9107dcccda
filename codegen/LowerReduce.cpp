// LowerReduce: before/after for a pinned rank-1 reduce of f32<512> over 4 warps,
// R = 4, strip 512:
//   %r = reduce %v axis=0 combine=add order=pinned strip=512 init=%a
// becomes (per thread)
//   p  = (v0 + v1) + (v2 + v3)                       ; within thread
//   p  = p + shfl.bfly(p, 1); ... p = p + shfl.bfly(p, 16)  ; within warp
//   if lane == 0: smem[warp] = p; bar.sync            ; across warps
//   r  = a + ((smem[0] + smem[1]) + (smem[2] + smem[3]))  ; smem alternates buffers
#include "codegen/LowerReduce.h"

#include "absl/strings/str_format.h"
#include "codegen/ReducePlan.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

namespace fixbits::codegen {

llvm::Value* emit_combine(llvm::IRBuilder<>& b, tile::Combine c, llvm::Value* x, llvm::Value* y) {
  switch (c) {
    case tile::Combine::kAdd: return b.CreateFAdd(x, y);
    case tile::Combine::kMax: return b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
    case tile::Combine::kMin: return b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
  }
  return b.CreateFAdd(x, y);
}

namespace {

llvm::Value* identity(llvm::IRBuilder<>& b, tile::Combine c) {
  return llvm::ConstantFP::get(b.getFloatTy(), identity_f32(c));
}

// Balanced tree over v[0, n), n a power of two: neighbours pair level by level.
llvm::Value* tree(llvm::IRBuilder<>& b, tile::Combine c, std::vector<llvm::Value*> v) {
  while (v.size() > 1) {
    for (size_t j = 0; j < v.size() / 2; ++j) v[j] = emit_combine(b, c, v[2 * j], v[2 * j + 1]);
    v.resize(v.size() / 2);
  }
  return v[0];
}

// Step 1. Pinned: one balanced tree per group of reg_group registers. Free: one
// sequential fold of all registers.
std::vector<llvm::Value*> reduce_within_thread(LoweringContext& ctx, const ReducePlan& p,
                                               tile::Combine c, const std::vector<llvm::Value*>& regs) {
  if (p.order == dsl::TreeOrder::kFree) {
    llvm::Value* r = regs[0];
    for (size_t k = 1; k < regs.size(); ++k) r = emit_combine(ctx.b, c, r, regs[k]);
    return {r};
  }
  std::vector<llvm::Value*> out;
  for (size_t g = 0; g < regs.size(); g += p.reg_group) {
    out.push_back(tree(ctx.b, c, {regs.begin() + g, regs.begin() + g + p.reg_group}));
  }
  return out;
}

// Step 2. Butterfly over the plan's lane offsets (count up pinned, down free),
// unless the target reduces the warp itself with the same tree.
llvm::Value* reduce_within_warp(LoweringContext& ctx, const ReducePlan& p, tile::Combine c,
                                llvm::Value* v) {
  if (p.lane_offsets.empty() || ctx.target.warp_reduce(ctx.b, v, c, p.lane_offsets)) return v;
  for (int off : p.lane_offsets) v = emit_combine(ctx.b, c, v, ctx.target.shuffle_xor(ctx.b, v, off));
  return v;
}

// Emits `if (cond) smem[index] = v` as its own basic block.
void guarded_store(LoweringContext& ctx, llvm::ArrayType* ty, llvm::Value* smem, llvm::Value* cond,
                   llvm::Value* index, llvm::Value* v) {
  llvm::IRBuilder<>& b = ctx.b;
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(b.getContext(), "smem.store", ctx.kernel);
  llvm::BasicBlock* join_bb = llvm::BasicBlock::Create(b.getContext(), "smem.join", ctx.kernel);
  b.CreateCondBr(cond, then_bb, join_bb);
  b.SetInsertPoint(then_bb);
  llvm::Value* addr = b.CreateInBoundsGEP(ty, smem, {b.getInt32(0), index});
  b.CreateAlignedStore(v, addr, llvm::Align(4));
  b.CreateBr(join_bb);
  b.SetInsertPoint(join_bb);
}

llvm::Value* smem_load(LoweringContext& ctx, llvm::ArrayType* ty, llvm::Value* smem, int64_t i) {
  llvm::IRBuilder<>& b = ctx.b;
  llvm::Value* addr = b.CreateInBoundsGEP(ty, smem,
                                          {b.getInt32(0), b.getInt32(static_cast<uint32_t>(i))});
  return b.CreateAlignedLoad(b.getFloatTy(), addr, llvm::Align(4));
}

// Step 3. Finished units go to shared memory; every thread then folds each strip's
// units as a balanced tree (free: in warp order) and chains strips into `r`.
// The slots are double-buffered: execution k of this reduce uses buffer k % 2, so
// one barrier per execution suffices — a thread writes buffer k % 2 again (at
// execution k + 2) only after passing execution k + 1's barrier, which every
// thread reaches only after its reads of execution k.
llvm::Value* reduce_across_warps(LoweringContext& ctx, const ReducePlan& p, tile::Combine c,
                                 const std::vector<llvm::Value*>& partial, llvm::Value* r) {
  llvm::IRBuilder<>& b = ctx.b;
  if (!p.uses_smem) return r ? emit_combine(b, c, r, partial[0]) : partial[0];
  auto* ty = llvm::ArrayType::get(b.getFloatTy(), p.units);
  llvm::GlobalVariable* buffers[2];
  for (int i = 0; i < 2; ++i) {
    buffers[i] = new llvm::GlobalVariable(
        ctx.module, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty),
        absl::StrFormat("reduce_smem_%d_%d", ctx.smem_arrays, i), nullptr,
        llvm::GlobalValue::NotThreadLocal, ctx.target.shared_address_space());
    buffers[i]->setAlignment(llvm::Align(16));
  }
  ++ctx.smem_arrays;
  // The parity lives in a private variable of the kernel (promoted to a register).
  llvm::BasicBlock& entry = ctx.kernel->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.begin());
  llvm::AllocaInst* parity_var = eb.CreateAlloca(b.getInt1Ty(), nullptr, "smem_parity");
  eb.CreateStore(b.getFalse(), parity_var);
  llvm::Value* parity = b.CreateLoad(b.getInt1Ty(), parity_var);
  b.CreateStore(b.CreateNot(parity), parity_var);
  llvm::Value* smem = b.CreateSelect(parity, buffers[1], buffers[0], "smem");

  if (p.order == dsl::TreeOrder::kFree) {
    guarded_store(ctx, ty, smem, b.CreateICmpEQ(ctx.lane, b.getInt32(0)), ctx.warp, partial[0]);
  } else {
    llvm::Value* base = b.CreateMul(ctx.tid, b.getInt32(static_cast<uint32_t>(p.regs)));
    for (size_t g = 0; g < partial.size(); ++g) {
      llvm::Value* pos = b.CreateAdd(base, b.getInt32(static_cast<uint32_t>(g * p.reg_group)));
      llvm::Value* writer =
          b.CreateICmpEQ(b.CreateAnd(pos, b.getInt32(static_cast<uint32_t>(p.unit - 1))), b.getInt32(0));
      guarded_store(ctx, ty, smem, writer, b.CreateLShr(pos, llvm::Log2_64(p.unit)), partial[g]);
    }
  }
  ctx.target.barrier(b);
  if (p.order == dsl::TreeOrder::kFree) {
    llvm::Value* w = smem_load(ctx, ty, smem, 0);
    for (int64_t k = 1; k < p.units; ++k) w = emit_combine(b, c, w, smem_load(ctx, ty, smem, k));
    r = r ? emit_combine(b, c, r, w) : w;
  } else {
    for (int64_t s = 0; s < p.strips; ++s) {
      std::vector<llvm::Value*> slots;
      for (int64_t k = 0; k < p.units_per_strip; ++k) {
        slots.push_back(smem_load(ctx, ty, smem, s * p.units_per_strip + k));
      }
      llvm::Value* strip = tree(b, c, slots);
      r = r ? emit_combine(b, c, r, strip) : strip;
    }
  }
  return r;
}

}  // namespace

absl::StatusOr<Lowered> lower_reduce(LoweringContext& ctx, const tile::Op& op, int op_number) {
  const Lowered& in = ctx.values[op.args[0]];
  if (in.scalar) {
    return absl::InvalidArgumentError(absl::StrFormat("reduce #%d: the operand is not a tile", op_number));
  }
  absl::StatusOr<ReducePlan> plan = plan_reduce(in.layout, op, op_number);
  if (!plan.ok()) return plan.status();
  const ReducePlan& p = *plan;
  const Lowered* init = op.args.size() > 1 ? &ctx.values[op.args[1]] : nullptr;
  llvm::IRBuilder<>& b = ctx.b;
  Lowered out;
  if (!p.across_threads) {
    // The axis is wholly in registers: `lines` independent in-thread reductions.
    out.scalar = false;
    out.layout = drop_dim(in.layout, static_cast<int>(op.imm));
    for (int64_t line = 0; line < p.lines; ++line) {
      std::vector<llvm::Value*> regs(in.regs.begin() + line * p.regs,
                                     in.regs.begin() + (line + 1) * p.regs);
      llvm::Value* r = init ? init->regs[init->scalar ? 0 : line] : identity(b, op.combine);
      if (p.order == dsl::TreeOrder::kFree) {
        for (llvm::Value* v : regs) r = emit_combine(b, op.combine, r, v);
      } else {
        for (llvm::Value* s : reduce_within_thread(ctx, p, op.combine, regs)) {
          r = emit_combine(b, op.combine, r, s);
        }
      }
      out.regs.push_back(r);
    }
    return out;
  }
  std::vector<llvm::Value*> partial = reduce_within_thread(ctx, p, op.combine, in.regs);
  if (!p.lane_offsets.empty()) partial = {reduce_within_warp(ctx, p, op.combine, partial[0])};
  llvm::Value* r = init ? init->regs[0] : nullptr;
  if (!r && p.order == dsl::TreeOrder::kPinned) r = identity(b, op.combine);
  out.regs = {reduce_across_warps(ctx, p, op.combine, partial, r)};
  return out;
}

}  // namespace fixbits::codegen
