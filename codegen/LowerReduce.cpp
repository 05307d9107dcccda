// LowerReduce: before/after for a pinned rank-1 reduce of f32<512> over 4 warps,
// R = 4, strip 512:
//   %r = reduce %v axis=0 combine=add order=pinned strip=512 init=%a
// becomes (per thread)
//   p  = (v0 + v1) + (v2 + v3)                       ; within thread
//   p  = p + shfl.bfly(p, 1); ... p = p + shfl.bfly(p, 16)  ; within warp
//   if lane == 0: smem[warp] = p; bar.sync            ; across warps
//   r  = a + ((smem[0] + smem[1]) + (smem[2] + smem[3]))  ; smem alternates buffers
// A column reduce of f32<4x128> (4 warps; blocked: warp w holds row w, lane l the
// columns 4l..4l+3) is first converted (SelectLayout) so thread t holds column t:
//   smem[pad(w*128 + 4l + r)] = v_r; bar.sync; u_a = smem[pad(a*128 + t)]  ; convert
//   c  = (u0 + u1) + (u2 + u3)                       ; within thread, no shuffle
// pad(i) = i + i/32 keeps both the writes and the reads free of bank conflicts.
#include "codegen/LowerReduce.h"

#include "absl/strings/str_format.h"
#include "codegen/ReducePlan.h"
#include "codegen/SelectLayout.h"
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

}  // namespace

// Two internal shared f32 arrays of `n` elements, used alternately by successive
// executions of the code emitted here (a loop body): returns execution k's one,
// buffer k % 2. Each execution writes, passes one barrier, then reads; a thread
// writes buffer k % 2 again (execution k + 2) only after passing execution k + 1's
// barrier, which every thread reaches only after its reads of execution k — so
// one barrier per execution suffices.
SmemBuffer alternating_buffers(LoweringContext& ctx, int64_t n, const char* what) {
  llvm::IRBuilder<>& b = ctx.b;
  auto* ty = llvm::ArrayType::get(b.getFloatTy(), n);
  llvm::GlobalVariable* buffers[2];
  for (int i = 0; i < 2; ++i) {
    buffers[i] = new llvm::GlobalVariable(
        ctx.module, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty),
        absl::StrFormat("%s_smem_%d_%d", what, ctx.smem_arrays, i), nullptr,
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
  return {ty, b.CreateSelect(parity, buffers[1], buffers[0], "smem")};
}

// The row-major index of register `reg` of this thread in layout `l`, as IR:
// coord[d] = (warp_d * lanes[d] + lane_d) * ept[d] + reg_d, digits taken in `order`.
llvm::Value* emit_flat_index(LoweringContext& ctx, const Layout& l, int64_t reg) {
  llvm::IRBuilder<>& b = ctx.b;
  const int n = rank(l);
  std::vector<int64_t> reg_digit = coord_of(l, Slot{reg, 0, 0});  // lane 0, warp 0
  std::vector<llvm::Value*> lane_d(n), warp_d(n);
  llvm::Value* lane = ctx.lane;
  llvm::Value* warp = ctx.warp;
  for (int d : l.order) {
    lane_d[d] = b.CreateURem(lane, b.getInt32(l.lanes[d]));
    lane = b.CreateUDiv(lane, b.getInt32(l.lanes[d]));
    warp_d[d] = b.CreateURem(warp, b.getInt32(l.warps[d]));
    warp = b.CreateUDiv(warp, b.getInt32(l.warps[d]));
  }
  llvm::Value* flat = b.getInt32(0);
  for (int d = 0; d < n; ++d) {
    llvm::Value* c = b.CreateAdd(b.CreateMul(warp_d[d], b.getInt32(l.lanes[d])), lane_d[d]);
    c = b.CreateAdd(b.CreateMul(c, b.getInt32(static_cast<uint32_t>(l.elems_per_thread[d]))),
                    b.getInt32(static_cast<uint32_t>(reg_digit[d])));
    flat = b.CreateAdd(b.CreateMul(flat, b.getInt32(static_cast<uint32_t>(l.shape[d]))), c);
  }
  return flat;
}

llvm::Value* padded_index(llvm::IRBuilder<>& b, llvm::Value* flat) {
  return b.CreateAdd(flat, b.CreateLShr(flat, 5));
}

namespace {

// convert_layout: every thread writes its registers to shared memory at their
// padded logical index (i + i/32), one barrier, then reads the registers of `to`.
// Moves values only: no combine, so the bits are untouched.
std::vector<llvm::Value*> convert_layout(LoweringContext& ctx, const Layout& from,
                                         const std::vector<llvm::Value*>& regs_in, const Layout& to) {
  llvm::IRBuilder<>& b = ctx.b;
  const int64_t elems = from.shape[0] * (rank(from) == 2 ? from.shape[1] : 1);
  SmemBuffer buf = alternating_buffers(ctx, padded_slots(elems), "convert");
  auto slot = [&](llvm::Value* flat) {
    return b.CreateInBoundsGEP(buf.ty, buf.base, {b.getInt32(0), padded_index(b, flat)});
  };
  for (size_t r = 0; r < regs_in.size(); ++r) {
    b.CreateAlignedStore(regs_in[r], slot(emit_flat_index(ctx, from, static_cast<int64_t>(r))),
                         llvm::Align(4));
  }
  ctx.target.barrier(b);
  std::vector<llvm::Value*> out;
  for (int64_t r = 0; r < regs(to); ++r) {
    out.push_back(b.CreateAlignedLoad(b.getFloatTy(), slot(emit_flat_index(ctx, to, r)), llvm::Align(4)));
  }
  return out;
}

// Step 3a. Finished units go to shared memory at slots [base, base + p.units): free,
// lane 0 of each warp; pinned, the thread whose register group starts a unit.
void store_units(LoweringContext& ctx, const ReducePlan& p, const SmemBuffer& buf, int64_t base,
                 const std::vector<llvm::Value*>& partial) {
  llvm::IRBuilder<>& b = ctx.b;
  llvm::Value* first = b.getInt32(static_cast<uint32_t>(base));
  if (p.order == dsl::TreeOrder::kFree) {
    guarded_store(ctx, buf.ty, buf.base, b.CreateICmpEQ(ctx.lane, b.getInt32(0)),
                  base ? b.CreateAdd(first, ctx.warp) : ctx.warp, partial[0]);
    return;
  }
  llvm::Value* pos0 = b.CreateMul(ctx.tid, b.getInt32(static_cast<uint32_t>(p.regs)));
  for (size_t g = 0; g < partial.size(); ++g) {
    llvm::Value* pos = b.CreateAdd(pos0, b.getInt32(static_cast<uint32_t>(g * p.reg_group)));
    llvm::Value* writer =
        b.CreateICmpEQ(b.CreateAnd(pos, b.getInt32(static_cast<uint32_t>(p.unit - 1))), b.getInt32(0));
    llvm::Value* slot = b.CreateLShr(pos, llvm::Log2_64(p.unit));
    guarded_store(ctx, buf.ty, buf.base, writer, base ? b.CreateAdd(first, slot) : slot, partial[g]);
  }
}

// Step 3b (after the barrier). Every thread folds the units at [base, base + p.units)
// (free: in warp order; pinned: each strip's units as a balanced tree) and chains the
// strips into `r` (null: no init).
llvm::Value* fold_units(LoweringContext& ctx, const ReducePlan& p, tile::Combine c,
                        const SmemBuffer& buf, int64_t base, llvm::Value* r) {
  llvm::IRBuilder<>& b = ctx.b;
  if (p.order == dsl::TreeOrder::kFree) {
    llvm::Value* w = smem_load(ctx, buf.ty, buf.base, base);
    for (int64_t k = 1; k < p.units; ++k) w = emit_combine(b, c, w, smem_load(ctx, buf.ty, buf.base, base + k));
    return r ? emit_combine(b, c, r, w) : w;
  }
  for (int64_t s = 0; s < p.strips; ++s) {
    std::vector<llvm::Value*> slots;
    for (int64_t k = 0; k < p.units_per_strip; ++k) {
      slots.push_back(smem_load(ctx, buf.ty, buf.base, base + s * p.units_per_strip + k));
    }
    llvm::Value* strip = tree(b, c, slots);
    r = r ? emit_combine(b, c, r, strip) : strip;
  }
  return r;
}

// Step 3. Finished units go to shared memory; every thread then folds each strip's
// units as a balanced tree (free: in warp order) and chains strips into `r`. The
// slots alternate between two buffers (alternating_buffers), one barrier each.
llvm::Value* reduce_across_warps(LoweringContext& ctx, const ReducePlan& p, tile::Combine c,
                                 const std::vector<llvm::Value*>& partial, llvm::Value* r) {
  if (!p.uses_smem) return r ? emit_combine(ctx.b, c, r, partial[0]) : partial[0];
  SmemBuffer buf = alternating_buffers(ctx, p.units, "reduce");
  store_units(ctx, p, buf, 0, partial);
  ctx.target.barrier(ctx.b);
  return fold_units(ctx, p, c, buf, 0, r);
}

// Steps 1 and 2 of a rank-1 reduce across threads: the partials step 3 takes.
std::vector<llvm::Value*> thread_and_warp_partials(LoweringContext& ctx, const ReducePlan& p,
                                                   tile::Combine c, const std::vector<llvm::Value*>& regs) {
  std::vector<llvm::Value*> partial = reduce_within_thread(ctx, p, c, regs);
  if (!p.lane_offsets.empty()) partial = {reduce_within_warp(ctx, p, c, partial[0])};
  return partial;
}

}  // namespace

absl::StatusOr<Lowered> lower_reduce(LoweringContext& ctx, const tile::Op& op, int op_number) {
  const Lowered& in = ctx.values[op.args[0]];
  if (in.scalar) {
    return absl::InvalidArgumentError(absl::StrFormat("reduce #%d: the operand is not a tile", op_number));
  }
  absl::StatusOr<LayoutChoice> choice = select_reduce_layout(
      in.layout, op, op_number, ctx.target.warp_size(), ctx.program.num_warps);
  if (!choice.ok()) return choice.status();
  absl::StatusOr<ReducePlan> plan = plan_reduce(choice->reduce, op, op_number);
  if (!plan.ok()) return plan.status();
  const ReducePlan& p = *plan;
  std::vector<llvm::Value*> operand = in.regs;  // in choice->reduce's register order
  if (choice->convert) operand = convert_layout(ctx, in.layout, in.regs, choice->reduce);
  const Lowered* init = op.args.size() > 1 ? &ctx.values[op.args[1]] : nullptr;
  llvm::IRBuilder<>& b = ctx.b;
  Lowered out;
  if (!p.across_threads) {
    // The axis is wholly in registers: `lines` independent in-thread reductions.
    out.scalar = false;
    out.layout = drop_dim(choice->reduce, static_cast<int>(op.imm));
    for (int64_t line = 0; line < p.lines; ++line) {
      std::vector<llvm::Value*> regs(operand.begin() + line * p.regs,
                                     operand.begin() + (line + 1) * p.regs);
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
  std::vector<llvm::Value*> partial = thread_and_warp_partials(ctx, p, op.combine, in.regs);
  llvm::Value* r = init ? init->regs[0] : nullptr;
  if (!r && p.order == dsl::TreeOrder::kPinned) r = identity(b, op.combine);
  out.regs = {reduce_across_warps(ctx, p, op.combine, partial, r)};
  return out;
}

absl::Status lower_reduce_group(LoweringContext& ctx, const tile::Op& op, int op_number) {
  const size_t k = static_cast<size_t>(op.imm);
  auto single = [&](size_t j) { return tile::group_member(op, j); };
  std::vector<ReducePlan> plans;
  bool exchange = true;  // every tile's partials go through shared memory unconverted
  for (size_t j = 0; j < k; ++j) {
    const Lowered& in = ctx.values[op.args[j]];
    if (in.scalar) {
      return absl::InvalidArgumentError(absl::StrFormat("reduce_group #%d: operand %d is not a tile", op_number, j));
    }
    absl::StatusOr<LayoutChoice> choice = select_reduce_layout(in.layout, single(j), op_number,
                                                              ctx.target.warp_size(), ctx.program.num_warps);
    if (!choice.ok()) return choice.status();
    absl::StatusOr<ReducePlan> plan = plan_reduce(choice->reduce, single(j), op_number);
    if (!plan.ok()) return plan.status();
    exchange = exchange && !choice->convert && plan->across_threads && plan->uses_smem;
    plans.push_back(*std::move(plan));
  }
  if (!exchange) {  // nothing to share: the K reduces one after another
    for (size_t j = 0; j < k; ++j) {
      absl::StatusOr<Lowered> r = lower_reduce(ctx, single(j), op_number);
      if (!r.ok()) return r.status();
      ctx.values[op.results[j]] = *std::move(r);
    }
    return absl::OkStatus();
  }
  std::vector<std::vector<llvm::Value*>> partials;
  std::vector<int64_t> base;
  int64_t slots = 0;
  for (size_t j = 0; j < k; ++j) {
    partials.push_back(thread_and_warp_partials(ctx, plans[j], op.combine, ctx.values[op.args[j]].regs));
    base.push_back(slots);
    slots += plans[j].units;
  }
  SmemBuffer buf = alternating_buffers(ctx, slots, "reduce");
  for (size_t j = 0; j < k; ++j) store_units(ctx, plans[j], buf, base[j], partials[j]);
  ctx.target.barrier(ctx.b);
  for (size_t j = 0; j < k; ++j) {
    const tile::Op member = single(j);  // its init: the group's, or result j - 1 (set above)
    llvm::Value* start = member.args.size() > 1 ? ctx.values[member.args[1]].regs[0] : identity(ctx.b, op.combine);
    Lowered r;
    r.regs = {fold_units(ctx, plans[j], op.combine, buf, base[j], start)};
    ctx.values[op.results[j]] = std::move(r);
  }
  return absl::OkStatus();
}

}  // namespace fixbits::codegen
