// LowerProgram: a validated tile Program -> one LLVM kernel function.
// Before:   %5 = arange 512 : i32<512>          (4 warps, R = 4)
//           %6 = load %0[%5] : f32<512>
// After (per thread, tid = thread index):
//           i_r = tid*4 + r            for r in 0..3
//           v_r = load float, ptr addrspace(1) (x + i_r)
// Tiles get the blocked layout of codegen/Layout.h; scalars are uniform and
// computed redundantly by every thread; a scalar store is done by thread 0.
// Masked loads/stores guard each element with a branch (no out-of-bounds access);
// a thread's consecutive elements first try one vector path (load_vectorized,
// store_vectorized) taken only when all are in bounds and aligned. A staged load
// (Op.staged) keeps no register: it copies the thread's elements into shared slots
// only that thread reads (TargetInfo::async_copy where the target has one), and each
// op that uses it reads them there (lower_staged_load, read_staged); a stage op stores
// a computed tile into such slots the same way (lower_stage); a loop may carry a staged
// load as a double buffer whose two slot sets alternate (lower_for). A cluster barrier
// and a program's cluster shape are the target's (TargetInfo::cluster_barrier,
// mark_cluster); a target without clusters makes them an Unimplemented Status.
#include <algorithm>
#include <bit>
#include <map>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen/LowerDivide.h"
#include "codegen/LowerDot.h"
#include "codegen/LowerExp.h"
#include "codegen/LowerMma.h"
#include "codegen/LowerReduce.h"
#include "codegen/Lowering.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Intrinsics.h"

namespace fixbits::codegen {
namespace {

absl::Status unsupported(const tile::Op& op, int n, const std::string& what) {
  return absl::UnimplementedError(absl::StrFormat("%s #%d: %s", tile::op_name(op), n, what));
}

llvm::Type* llvm_type(llvm::LLVMContext& c, tile::Elem e, unsigned global_as) {
  switch (e) {
    case tile::Elem::kI1: return llvm::Type::getInt1Ty(c);
    case tile::Elem::kI32: return llvm::Type::getInt32Ty(c);
    case tile::Elem::kI64: return llvm::Type::getInt64Ty(c);
    case tile::Elem::kF16: return llvm::Type::getHalfTy(c);
    case tile::Elem::kBF16: return llvm::Type::getBFloatTy(c);
    case tile::Elem::kF32: return llvm::Type::getFloatTy(c);
    case tile::Elem::kPtr: return llvm::PointerType::get(c, global_as);
    case tile::Elem::kE4M3:
    case tile::Elem::kE5M2: return llvm::Type::getInt8Ty(c);  // fp8 bits, storage only
  }
  return nullptr;
}


class Lowerer {
 public:
  explicit Lowerer(LoweringContext& ctx) : ctx_(ctx), b_(ctx.b) {}

  absl::Status lower_ops(const std::vector<tile::Op>& ops) {
    for (const tile::Op& op : ops) {
      int n = number_++;
      absl::Status s = lower(op, n);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  llvm::LLVMContext& llvm_ctx() { return b_.getContext(); }
  const tile::Type& type_of(int id) const { return ctx_.program.values[id]; }
  llvm::Type* ty(tile::Elem e) { return llvm_type(llvm_ctx(), e, ctx_.target.global_address_space()); }

  absl::Status layout_for(const tile::Op& op, int n, const tile::Type& t, Lowered* out) {
    out->scalar = t.rank() == 0;
    if (out->scalar) return absl::OkStatus();
    absl::Status s = blocked_layout(t.shape, ctx_.target.warp_size(), ctx_.program.num_warps, &out->layout);
    if (!s.ok()) return unsupported(op, n, std::string(s.message()));
    return absl::OkStatus();
  }

  // Integer division truncating toward zero with no undefined case: x / 0 gives 0
  // and MIN / -1 wraps to MIN (both are undefined for LLVM's sdiv).
  llvm::Value* safe_sdiv(llvm::Value* x, llvm::Value* y) {
    llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
    llvm::Value* one = llvm::ConstantInt::get(y->getType(), 1);
    llvm::Value* minus_one = llvm::ConstantInt::getSigned(y->getType(), -1);
    llvm::Value* is_zero = b_.CreateICmpEQ(y, zero);
    llvm::Value* is_m1 = b_.CreateICmpEQ(y, minus_one);
    llvm::Value* q = b_.CreateSDiv(x, b_.CreateSelect(b_.CreateOr(is_zero, is_m1), one, y));
    q = b_.CreateSelect(is_m1, b_.CreateSub(zero, x), q);
    return b_.CreateSelect(is_zero, zero, q);
  }

  // Operand `i` of `op` at register r (scalars broadcast).
  llvm::Value* at(const tile::Op& op, size_t i, size_t r) {
    const Lowered& v = ctx_.values[op.args[i]];
    return v.scalar ? v.regs[0] : v.regs[r];
  }

  bool is_consecutive(int id) const { return id >= 0 && static_cast<size_t>(id) < consecutive_.size() && consecutive_[id]; }
  // A scalar, or a splat of one: the same value in every register.
  bool is_uniform(int id) const {
    if (ctx_.values[id].scalar) return true;
    const Lowered& v = ctx_.values[id];
    for (llvm::Value* r : v.regs) {
      if (r != v.regs[0]) return false;
    }
    return true;
  }
  void mark_consecutive(const tile::Op& op, bool yes) {
    if (!yes || op.results.empty()) return;
    const int id = op.results[0];
    if (consecutive_.size() <= static_cast<size_t>(id)) {
      consecutive_.resize(std::max(ctx_.values.size(), static_cast<size_t>(id) + 1), false);
    }
    consecutive_[id] = true;
  }

  absl::Status set_result(const tile::Op& op, Lowered v) {
    ctx_.values[op.results[0]] = std::move(v);
    return absl::OkStatus();
  }

  // Builds `if (cond) { body } ` and returns after it; body gets the builder there.
  template <class Body>
  void guarded(llvm::Value* cond, Body body) {
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(llvm_ctx(), "guard.then", ctx_.kernel);
    llvm::BasicBlock* join_bb = llvm::BasicBlock::Create(llvm_ctx(), "guard.join", ctx_.kernel);
    b_.CreateCondBr(cond, then_bb, join_bb);
    b_.SetInsertPoint(then_bb);
    body();
    b_.CreateBr(join_bb);
    b_.SetInsertPoint(join_bb);
  }

  // Builds `if (cond) { vec_body } else { elem_body }` in blocks <what>.vec, <what>.elem
  // and <what>.join (the vector paths and their element-by-element fallbacks) and returns
  // after it, with the blocks each arm ended in (for phis at the join).
  template <class VecBody, class ElemBody>
  std::pair<llvm::BasicBlock*, llvm::BasicBlock*> vector_or_elements(llvm::Value* cond, const std::string& what,
                                                                    VecBody vec_body, ElemBody elem_body) {
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(llvm_ctx(), what + ".vec", ctx_.kernel);
    llvm::BasicBlock* slow = llvm::BasicBlock::Create(llvm_ctx(), what + ".elem", ctx_.kernel);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(llvm_ctx(), what + ".join", ctx_.kernel);
    b_.CreateCondBr(cond, fast, slow);
    b_.SetInsertPoint(fast);
    vec_body();
    llvm::BasicBlock* fast_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(slow);
    elem_body();
    llvm::BasicBlock* slow_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    return {fast_end, slow_end};
  }

  llvm::Value* element_ptr(const tile::Op& op, size_t r) {
    const tile::Type& pt = type_of(op.args[0]);
    llvm::Type* elem = ty(*tile::elem_of(pt.pointee));
    return b_.CreateInBoundsGEP(elem, at(op, 0, 0), {at(op, 1, r)});
  }

  // Element r of load `op`, one scalar load: under its mask (operand 2) when the load
  // has one, with the `other` value (operand 3) where the mask is false.
  llvm::Value* load_element(const tile::Op& op, llvm::Type* elem, size_t r) {
    if (!op.has_mask) return b_.CreateLoad(elem, element_ptr(op, r));
    llvm::BasicBlock* from = b_.GetInsertBlock();
    llvm::Value* loaded = nullptr;
    llvm::BasicBlock* load_bb = nullptr;
    guarded(at(op, 2, r), [&] {
      loaded = b_.CreateLoad(elem, element_ptr(op, r));
      load_bb = b_.GetInsertBlock();
    });
    llvm::PHINode* phi = b_.CreatePHI(elem, 2);
    phi->addIncoming(loaded, load_bb);
    phi->addIncoming(at(op, 3, 0), from);
    return phi;
  }

  // Lowers one op; a staged load's result among its operands is read from its
  // shared slots first (read_staged) and stands in for the value during this op only.
  // A loop's staged operands are not read: it carries their slots (lower_for).
  absl::Status lower(const tile::Op& op, int n) {
    std::vector<std::pair<int, Lowered>> held;  // staged operands, restored afterwards
    for (int a : op.args) {
      const bool held_already = std::any_of(held.begin(), held.end(), [&](const auto& h) { return h.first == a; });
      if (op.kind == tile::OpKind::kFor || !is_staged(a) || held_already) continue;
      held.emplace_back(a, ctx_.values[a]);
      ctx_.values[a] = read_staged(a);
    }
    absl::Status s = lower_op(op, n);
    for (auto& [id, v] : held) ctx_.values[id] = std::move(v);
    return s;
  }

  absl::Status lower_op(const tile::Op& op, int n) {
    Lowered out;
    if (!op.results.empty()) {
      absl::Status s = layout_for(op, n, type_of(op.results[0]), &out);
      if (!s.ok()) return s;
    }
    const size_t count = out.scalar ? 1 : static_cast<size_t>(regs(out.layout));
    switch (op.kind) {
      case tile::OpKind::kProgramId:
        out.regs = {ctx_.target.block_id(b_, static_cast<int>(op.imm))};
        return set_result(op, out);
      case tile::OpKind::kConst: {
        tile::Elem e = op.type.elem;
        if (tile::is_float(e)) {
          llvm::APFloat v(std::bit_cast<float>(op.fbits));
          bool lost = false;
          if (e != tile::Elem::kF32) {
            v.convert(e == tile::Elem::kF16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
                      llvm::APFloat::rmNearestTiesToEven, &lost);
          }
          out.regs = {llvm::ConstantFP::get(llvm_ctx(), v)};
        } else if (tile::is_fp8(e)) {
          // TypeRules checked that the value is exact in the format.
          const DType dt = e == tile::Elem::kE4M3 ? DType::kF8E4M3 : DType::kF8E5M2;
          out.regs = {b_.getInt8(static_cast<uint8_t>(to_bits(dt, std::bit_cast<float>(op.fbits))))};
        } else {
          out.regs = {llvm::ConstantInt::get(ty(e), static_cast<uint64_t>(op.imm), true)};
        }
        return set_result(op, out);
      }
      case tile::OpKind::kArange: {
        // Element index of register r: coord_of(layout, {r, lane, warp}) = tid*R + r (rank 1).
        llvm::Value* base = b_.CreateMul(ctx_.tid, b_.getInt32(static_cast<uint32_t>(count)));
        for (size_t r = 0; r < count; ++r) out.regs.push_back(b_.CreateAdd(base, b_.getInt32(r)));
        mark_consecutive(op, out.layout.shape.size() == 1);
        return set_result(op, out);
      }
      case tile::OpKind::kSplat:
        out.regs.assign(count, at(op, 0, 0));
        return set_result(op, out);
      case tile::OpKind::kBinary: {
        bool fl = tile::is_float(type_of(op.args[0]).elem);
        // divide_by_reciprocal, an f32 tile over one divisor (softmax's e_i / s): one
        // reciprocal, two fmas each (the target's support is checked before lowering).
        if (op.bin == tile::BinaryOp::kDiv && type_of(op.args[0]).elem == tile::Elem::kF32 &&
            !out.scalar && is_uniform(op.args[1]) && ctx_.program.divide_by_reciprocal) {
          std::vector<llvm::Value*> a;
          for (size_t r = 0; r < count; ++r) a.push_back(at(op, 0, r));
          auto in_branch = [this](llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value* d) {
            return ctx_.target.ieee_divide_in_branch(b, n, d);
          };
          out.regs = emit_divide_by_uniform(b_, a, at(op, 1, 0), in_branch);
          return set_result(op, out);
        }
        for (size_t r = 0; r < count; ++r) {
          llvm::Value *x = at(op, 0, r), *y = at(op, 1, r), *v = nullptr;
          switch (op.bin) {
            case tile::BinaryOp::kAdd: v = fl ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y); break;
            case tile::BinaryOp::kSub: v = fl ? b_.CreateFSub(x, y) : b_.CreateSub(x, y); break;
            case tile::BinaryOp::kMul: v = fl ? b_.CreateFMul(x, y) : b_.CreateMul(x, y); break;
            case tile::BinaryOp::kDiv: v = fl ? b_.CreateFDiv(x, y) : safe_sdiv(x, y); break;
            case tile::BinaryOp::kMax:
              v = b_.CreateBinaryIntrinsic(fl ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, x, y);
              break;
            case tile::BinaryOp::kMin:
              v = b_.CreateBinaryIntrinsic(fl ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, x, y);
              break;
          }
          out.regs.push_back(v);
        }
        // consecutive + uniform (either order) stays consecutive.
        mark_consecutive(op, !fl && op.bin == tile::BinaryOp::kAdd && !out.scalar &&
                                 ((is_consecutive(op.args[0]) && is_uniform(op.args[1])) ||
                                  (is_consecutive(op.args[1]) && is_uniform(op.args[0]))));
        return set_result(op, out);
      }
      case tile::OpKind::kUnary:
        for (size_t r = 0; r < count; ++r) {
          llvm::Value* x = at(op, 0, r);
          out.regs.push_back(
              op.un == tile::UnaryOp::kNeg    ? b_.CreateFNeg(x)
              : op.un == tile::UnaryOp::kSqrt ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x)
                                              : emit_fixbits_exp(b_, x,
                                                                 {.nan_is_canonical = ctx_.target.nan_results_are_canonical(),
                                                                  .arg_non_positive = op.un == tile::UnaryOp::kExpNonPositive}));
        }
        return set_result(op, out);
      case tile::OpKind::kCompare: {
        bool fl = tile::is_float(type_of(op.args[0]).elem);
        static constexpr llvm::CmpInst::Predicate kF[] = {
            llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE, llvm::CmpInst::FCMP_OGT,
            llvm::CmpInst::FCMP_OGE, llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_UNE};
        static constexpr llvm::CmpInst::Predicate kI[] = {
            llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_SGT,
            llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_NE};
        int k = static_cast<int>(op.cmp);
        for (size_t r = 0; r < count; ++r) {
          out.regs.push_back(fl ? b_.CreateFCmp(kF[k], at(op, 0, r), at(op, 1, r))
                                : b_.CreateICmp(kI[k], at(op, 0, r), at(op, 1, r)));
        }
        return set_result(op, out);
      }
      case tile::OpKind::kSelect:
        for (size_t r = 0; r < count; ++r) {
          out.regs.push_back(b_.CreateSelect(at(op, 0, r), at(op, 1, r), at(op, 2, r)));
        }
        return set_result(op, out);
      case tile::OpKind::kCast: {
        tile::Elem from = type_of(op.args[0]).elem, to = op.type.elem;
        llvm::Type* dst = ty(to);
        for (size_t r = 0; r < count; ++r) {
          llvm::Value* x = at(op, 0, r);
          llvm::Value* v = x;
          if (from == to) {
          } else if (tile::is_float(from) && tile::is_float(to)) {
            v = b_.CreateFPCast(x, dst);  // fpext exact; fptrunc RNE
          } else if (tile::is_int(from) && tile::is_int(to)) {
            v = from == tile::Elem::kI1 ? b_.CreateZExt(x, dst) : b_.CreateSExtOrTrunc(x, dst);
          } else if (tile::is_int(from)) {
            v = from == tile::Elem::kI1 ? b_.CreateUIToFP(x, dst) : b_.CreateSIToFP(x, dst);
          } else {
            v = b_.CreateFPToSI(x, dst);
          }
          out.regs.push_back(v);
        }
        // i32 -> i64 sign extension of a consecutive i32 tile (the test on the last
        // register then also rules out a wrap, see consecutive_).
        mark_consecutive(op, is_consecutive(op.args[0]) &&
                                 ((from == tile::Elem::kI32 && to == tile::Elem::kI64) || from == to));
        return set_result(op, out);
      }
      case tile::OpKind::kStage:
        return lower_stage(op, std::move(out));
      case tile::OpKind::kReshape: {
        const Lowered& in = ctx_.values[op.args[0]];
        // Legal without data movement when every register keeps its row-major index.
        for (int64_t r = 0; r < regs(in.layout); ++r) {
          for (int t : {0, 1, ctx_.target.warp_size() * ctx_.program.num_warps - 1}) {
            Slot s{r, t % ctx_.target.warp_size(), t / ctx_.target.warp_size()};
            auto flat = [](const Layout& l, const std::vector<int64_t>& c) {
              int64_t f = 0;
              for (size_t d = 0; d < c.size(); ++d) f = f * l.shape[d] + c[d];
              return f;
            };
            if (flat(in.layout, coord_of(in.layout, s)) != flat(out.layout, coord_of(out.layout, s))) {
              return unsupported(op, n, absl::StrFormat(
                  "viewing %s as %s would move data between threads; not supported yet",
                  to_string(in.layout), to_string(out.layout)));
            }
          }
        }
        out.regs = in.regs;
        return set_result(op, out);
      }
      case tile::OpKind::kLoad: {
        llvm::Type* elem = ty(*tile::elem_of(type_of(op.args[0]).pointee));
        if (op.staged) return lower_staged_load(op, elem, std::move(out));
        if (!out.scalar && count >= 2) {
          out.regs = load_vectorized(op, elem, count);
          return set_result(op, out);
        }
        for (size_t r = 0; r < count; ++r) out.regs.push_back(load_element(op, elem, r));
        return set_result(op, out);
      }
      case tile::OpKind::kStore: {
        const Lowered& off = ctx_.values[op.args[1]];
        if (off.scalar) {
          // A uniform store: thread 0 writes it once.
          llvm::Value* first = b_.CreateICmpEQ(ctx_.tid, b_.getInt32(0));
          if (op.has_mask) first = b_.CreateAnd(first, at(op, 3, 0));
          guarded(first, [&] { b_.CreateStore(at(op, 2, 0), element_ptr(op, 0)); });
          return absl::OkStatus();
        }
        if (off.regs.size() >= 2) {
          store_vectorized(op, off.regs.size());
          return absl::OkStatus();
        }
        for (size_t r = 0; r < off.regs.size(); ++r) {
          if (op.has_mask) {
            guarded(at(op, 3, r), [&] { b_.CreateStore(at(op, 2, r), element_ptr(op, r)); });
          } else {
            b_.CreateStore(at(op, 2, r), element_ptr(op, r));
          }
        }
        return absl::OkStatus();
      }
      case tile::OpKind::kReduce: {
        absl::StatusOr<Lowered> r = lower_reduce(ctx_, op, n);
        if (!r.ok()) return r.status();
        return set_result(op, *std::move(r));
      }
      case tile::OpKind::kReduceGroup:
        return lower_reduce_group(ctx_, op, n);
      case tile::OpKind::kFor:
        return lower_for(op, n);
      case tile::OpKind::kDot: {
        absl::StatusOr<Lowered> r = lower_dot(ctx_, op, n);
        if (!r.ok()) return r.status();
        return set_result(op, *std::move(r));
      }
      case tile::OpKind::kMmaSync: {
        absl::StatusOr<Lowered> r = lower_mma_sync(ctx_, op, n);
        if (!r.ok()) return r.status();
        return set_result(op, *std::move(r));
      }
      case tile::OpKind::kWgmma: {
        absl::StatusOr<Lowered> r = lower_wgmma(ctx_, op, n);
        if (!r.ok()) return r.status();
        return set_result(op, *std::move(r));
      }
      case tile::OpKind::kFma:
        // One fused multiply-add per element (llvm.fma -> fma.rn.f32), as the program asks.
        for (size_t r = 0; r < count; ++r) {
          out.regs.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {b_.getFloatTy()},
                                                {at(op, 0, r), at(op, 1, r), at(op, 2, r)}));
        }
        return set_result(op, out);
      case tile::OpKind::kClusterBarrier:
        if (!ctx_.target.cluster_barrier(b_)) {
          return unsupported(op, n, absl::StrFormat("target %s has no thread-block clusters",
                                                    target_name(ctx_.target.target())));
        }
        // Index tiles built after the barrier (arange) are computed again there, not
        // merged with those before it and held live across it.
        ctx_.tid = ctx_.target.thread_id_again(b_);
        ctx_.lane = b_.CreateAnd(ctx_.tid, b_.getInt32(ctx_.target.warp_size() - 1), "lane");
        ctx_.warp = b_.CreateLShr(ctx_.tid, llvm::Log2_32(ctx_.target.warp_size()), "warp");
        return absl::OkStatus();
      case tile::OpKind::kXorPermute: {
        // Rank-1 blocked layout: i = tid * R + r. An offset below R swaps registers;
        // a larger one (a multiple of R) moves to thread tid ^ (d / R), same register.
        const Lowered& in = ctx_.values[op.args[0]];
        const int64_t d = op.imm;
        const int64_t per_thread = static_cast<int64_t>(count);
        if (in.scalar || (per_thread & (per_thread - 1)) != 0) {
          return unsupported(op, n, absl::StrFormat(
              "%d elements per thread is not a power of two; the exchange would mix threads",
              per_thread));
        }
        if (d < per_thread) {
          for (size_t r = 0; r < count; ++r) out.regs.push_back(in.regs[r ^ static_cast<size_t>(d)]);
          return set_result(op, out);
        }
        const int64_t lane_off = d / per_thread;
        if (lane_off >= ctx_.target.warp_size()) {
          return unsupported(op, n, absl::StrFormat(
              "offset %d crosses warps in %s; only exchanges within a warp are lowered",
              d, to_string(out.layout)));
        }
        for (size_t r = 0; r < count; ++r) {
          out.regs.push_back(ctx_.target.shuffle_xor(b_, in.regs[r], static_cast<int>(lane_off)));
        }
        return set_result(op, out);
      }
    }
    return unsupported(op, n, "unknown op kind");
  }

  // The run-time test shared by vector loads and stores of a load/store op (pointer
  // operand 0, offsets operand 1, mask operand `mask_arg`): all `count` elements of
  // the thread are in bounds, consecutive (off[r] == off[0] + r) and the first is
  // aligned to `vec_bytes`. Returns that condition and the first element's address.
  // For an offset tile known to be consecutive by construction (consecutive_) only
  // the last register is compared: off[R-1] == off[0] + R-1 implies the rest.
  // The first address may lie outside the buffer when its mask is off: it is
  // computed without `inbounds` (no poison) and its alignment is tested only under
  // the other conditions (select, not and, so nothing undefined reaches a branch).
  struct VectorAccess {
    llvm::Value* ok;
    llvm::Value* first;
  };
  VectorAccess vector_access(const tile::Op& op, llvm::Type* elem, size_t count, int mask_arg,
                             unsigned vec_bytes) {
    llvm::Value* ok = b_.getTrue();
    llvm::Value* off0 = at(op, 1, 0);
    // Only i64 offsets: an i32 off[0] + r cannot see a wrap (it wraps the same way).
    const bool consecutive = is_consecutive(op.args[1]) && off0->getType()->isIntegerTy(64);
    for (size_t r = 0; r < count; ++r) {
      if (op.has_mask) ok = b_.CreateAnd(ok, at(op, mask_arg, r));
      if (r > 0 && (!consecutive || r + 1 == count)) {
        llvm::Value* want = b_.CreateAdd(off0, llvm::ConstantInt::get(off0->getType(), r));
        ok = b_.CreateAnd(ok, b_.CreateICmpEQ(at(op, 1, r), want));
      }
    }
    llvm::Value* first = b_.CreateGEP(elem, at(op, 0, 0), {off0});
    llvm::Value* addr = b_.CreatePtrToInt(first, b_.getInt64Ty());
    llvm::Value* aligned =
        b_.CreateICmpEQ(b_.CreateAnd(addr, b_.getInt64(vec_bytes - 1)), b_.getInt64(0));
    return {b_.CreateSelect(ok, aligned, b_.getFalse()), first};
  }

  // A thread's `count` elements, loaded with vector instructions when at run time
  // they are all in bounds, consecutive (off[r] == off[0] + r) and the first is
  // aligned to the vector width; otherwise element by element under their masks.
  // Both paths read the same addresses, so the choice never changes a value.
  std::vector<llvm::Value*> load_vectorized(const tile::Op& op, llvm::Type* elem, size_t count) {
    const unsigned elem_bytes = elem->getPrimitiveSizeInBits() / 8;
    const unsigned vec_bytes = std::min<unsigned>(16, elem_bytes * count);
    const unsigned vec_elems = vec_bytes / elem_bytes;
    auto [ok, first] = vector_access(op, elem, count, /*mask_arg=*/2, vec_bytes);
    std::vector<llvm::Value*> fast_vals, slow_vals;
    auto* vty = llvm::FixedVectorType::get(elem, vec_elems);
    auto [fast_end, slow_end] = vector_or_elements(
        ok, "load",
        [&] {
          for (size_t r = 0; r < count; r += vec_elems) {
            llvm::Value* p = b_.CreateInBoundsGEP(elem, first, {b_.getInt64(r)});
            llvm::Value* v = b_.CreateAlignedLoad(vty, p, llvm::Align(vec_bytes));
            for (unsigned k = 0; k < vec_elems; ++k) fast_vals.push_back(b_.CreateExtractElement(v, k));
          }
        },
        [&] {
          for (size_t r = 0; r < count; ++r) slow_vals.push_back(load_element(op, elem, r));
        });
    std::vector<llvm::Value*> out;
    for (size_t r = 0; r < count; ++r) {
      llvm::PHINode* phi = b_.CreatePHI(elem, 2);
      phi->addIncoming(fast_vals[r], fast_end);
      phi->addIncoming(slow_vals[r], slow_end);
      out.push_back(phi);
    }
    return out;
  }

  // A thread's `count` elements stored with vector instructions when at run time they
  // are all in bounds, consecutive and the first is aligned to the vector width (as
  // load_vectorized decides); otherwise element by element under their masks. Both
  // paths write the same values to the same addresses.
  // Before (bf16 y, R = 4):  4 x { @p st.global.b16 [y + 2i], v_i }
  // After:                   @all st.global.v4.b16 [y], {v0, v1, v2, v3}  (else the 4 above)
  void store_vectorized(const tile::Op& op, size_t count) {
    llvm::Type* elem = at(op, 2, 0)->getType();
    const unsigned elem_bytes = elem->getPrimitiveSizeInBits() / 8;
    // At most 4 elements per store (st.v4 of the element type: 16 bytes of f32, 8 of
    // f16/bf16), so no value is packed into a wider register before it is stored.
    const unsigned vec_elems = static_cast<unsigned>(std::min<size_t>({4, count, 16 / std::max(1u, elem_bytes)}));
    const unsigned vec_bytes = vec_elems * elem_bytes;
    auto scalar_stores = [&] {
      for (size_t r = 0; r < count; ++r) {
        if (op.has_mask) {
          guarded(at(op, 3, r), [&] { b_.CreateStore(at(op, 2, r), element_ptr(op, r)); });
        } else {
          b_.CreateStore(at(op, 2, r), element_ptr(op, r));
        }
      }
    };
    if (elem_bytes == 0 || vec_elems < 2 || count % vec_elems != 0) return scalar_stores();
    auto [ok, first] = vector_access(op, elem, count, /*mask_arg=*/3, vec_bytes);
    auto* vty = llvm::FixedVectorType::get(elem, vec_elems);
    vector_or_elements(
        ok, "store",
        [&] {
          for (size_t r = 0; r < count; r += vec_elems) {
            llvm::Value* v = llvm::PoisonValue::get(vty);
            for (unsigned k = 0; k < vec_elems; ++k) v = b_.CreateInsertElement(v, at(op, 2, r + k), k);
            llvm::Value* p = b_.CreateInBoundsGEP(elem, first, {b_.getInt64(r)});
            b_.CreateAlignedStore(v, p, llvm::Align(vec_bytes));
          }
        },
        scalar_stores);
  }

  // ---- Staged loads (tile::OpKind::kLoad with staged) ----
  // A staged value lives in one piece of R * T elements (R registers per thread, T
  // threads) of the kernel's dynamic shared memory (dynamic_piece), in chunks of V
  // consecutive registers: chunk c of thread t at element
  // (c*T + t)*V, so a warp's accesses to one chunk are consecutive (no bank conflict)
  // and a chunk is V*elem bytes aligned for cp.async / ld.shared.v. Only the thread that
  // wrote its slots reads them, so no barrier is needed, only async_copy_wait. Each
  // staged load commits its copies as one group (group g: the g-th staged load lowered).
  // tile::validate keeps every staged load at the top level (straight-line code that
  // every thread runs in lowering order), so a use of group g made when G groups are
  // lowered leaves exactly the G-1-g later ones pending: the first kept pass's tree
  // starts while the later passes are still in flight. The one exception, a top-level
  // loop's double buffer (lower_for), waits for more, never less: its body's reads of the
  // carried value leave pending only the groups the body committed before them, and its
  // exit waits for all.
  struct Staged {
    llvm::Value* array = nullptr;  // ptr addrspace(3): its piece of the dynamic array
    llvm::Type* elem = nullptr;
    size_t count = 0;     // R
    unsigned vec = 1;     // V, a power of two dividing R, V*elem <= 16 bytes
    Layout layout;
    int group = 0;        // its commit group, in lowering order; -1: stored (stage), no copies
  };
  bool is_staged(int id) const {
    return id >= 0 && static_cast<size_t>(id) < staged_of_.size() && staged_of_[id] >= 0;
  }
  // A 16-byte aligned piece of `bytes` of the kernel's dynamic shared memory (one extern
  // array, `fixbits_dynamic_smem`, whose size the launch passes), so staged values may
  // take more than the 48 KiB of static shared memory.
  llvm::Value* dynamic_piece(int64_t bytes) {
    if (ctx_.dynamic_smem == nullptr) {
      auto* aty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      ctx_.dynamic_smem = new llvm::GlobalVariable(
          ctx_.module, aty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "fixbits_dynamic_smem", nullptr,
          llvm::GlobalValue::NotThreadLocal, ctx_.target.shared_address_space());
      ctx_.dynamic_smem->setAlignment(llvm::Align(16));
    }
    const int64_t at = ctx_.dynamic_bytes;
    ctx_.dynamic_bytes += (bytes + 15) / 16 * 16;
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), ctx_.dynamic_smem, {b_.getInt32(static_cast<uint32_t>(at))});
  }

  // The shared address of chunk c of this thread.
  llvm::Value* staged_chunk(const Staged& st, size_t c) {
    const int threads = ctx_.target.warp_size() * ctx_.program.num_warps;
    llvm::Value* slot = b_.CreateAdd(b_.CreateMul(b_.getInt32(static_cast<uint32_t>(c)), b_.getInt32(threads)),
                                     ctx_.tid);
    llvm::Value* index = b_.CreateMul(slot, b_.getInt32(st.vec));
    return b_.CreateInBoundsGEP(st.elem, st.array, {index});
  }

  // The slots of a staged value of `elem`s laid out as `layout`: its piece of the
  // dynamic array (a new one, or `array`: a double buffer's slot set) and its chunk width.
  Staged new_staged(llvm::Type* elem, const Layout& layout, llvm::Value* array = nullptr) {
    Staged st;
    st.elem = elem;
    st.count = static_cast<size_t>(regs(layout));
    st.layout = layout;
    const unsigned elem_bytes = elem->getPrimitiveSizeInBits() / 8;
    while (st.vec * 2 * elem_bytes <= 16 && st.count % (st.vec * 2) == 0) st.vec *= 2;
    st.array = array != nullptr ? array : dynamic_piece(slot_bytes(st));
    return st;
  }
  // The bytes of a staged value's slots: R elements for each of the block's threads.
  int64_t slot_bytes(const Staged& st) const {
    const int threads = ctx_.target.warp_size() * ctx_.program.num_warps;
    return static_cast<int64_t>(st.count) * threads * (st.elem->getPrimitiveSizeInBits() / 8);
  }

  // Records `st` as where value `id` lives: its uses read the slots.
  void mark_staged(int id, const Staged& st) {
    if (staged_of_.size() < ctx_.values.size()) staged_of_.resize(ctx_.values.size(), -1);
    staged_of_[id] = static_cast<int>(staged_.size());
    staged_.push_back(st);
  }
  absl::Status set_staged(const tile::Op& op, const Staged& st, Lowered out) {
    mark_staged(op.results[0], st);
    out.regs.clear();  // no registers: every use reads the slots (read_staged)
    return set_result(op, std::move(out));
  }

  // stage(t): t's registers stored into the thread's own slots, chunk by chunk (the
  // thread's later reads of them come after in program order: no barrier, no wait).
  absl::Status lower_stage(const tile::Op& op, Lowered out) {
    Staged st = new_staged(ty(type_of(op.results[0]).elem), out.layout);
    st.group = -1;
    const unsigned elem_bytes = st.elem->getPrimitiveSizeInBits() / 8;
    auto* vty = llvm::FixedVectorType::get(st.elem, st.vec);
    for (size_t c = 0; c * st.vec < st.count; ++c) {
      if (st.vec == 1) {
        b_.CreateAlignedStore(at(op, 0, c), staged_chunk(st, c), llvm::Align(elem_bytes));
        continue;
      }
      llvm::Value* chunk = llvm::PoisonValue::get(vty);
      for (unsigned k = 0; k < st.vec; ++k) chunk = b_.CreateInsertElement(chunk, at(op, 0, c * st.vec + k), k);
      b_.CreateAlignedStore(chunk, staged_chunk(st, c), llvm::Align(st.vec * elem_bytes));
    }
    return set_staged(op, st, std::move(out));
  }

  absl::Status lower_staged_load(const tile::Op& op, llvm::Type* elem, Lowered out) {
    // A double buffer's yield (lower_for) fills the slot set its carried value does not hold.
    auto next = next_slots_.find(op.results[0]);
    Staged st = new_staged(elem, out.layout, next == next_slots_.end() ? nullptr : next->second);
    const unsigned elem_bytes = elem->getPrimitiveSizeInBits() / 8;
    const unsigned vec_bytes = st.vec * elem_bytes;
    // Element by element (masked, `other` where off) into the slots: the fallback.
    auto through_registers = [&] {
      for (size_t r = 0; r < st.count; ++r) {
        llvm::Value* v = load_element(op, elem, r);
        llvm::Value* p = b_.CreateInBoundsGEP(elem, staged_chunk(st, r / st.vec), {b_.getInt32(r % st.vec)});
        b_.CreateStore(v, p);
      }
    };
    if (st.vec < 2 || vec_bytes < 4) {
      through_registers();
    } else {
      // Whole chunks, when every element is in bounds, consecutive and aligned (the
      // test load_vectorized takes): async copies, or vector load + shared store.
      auto [ok, first] = vector_access(op, elem, st.count, /*mask_arg=*/2, vec_bytes);
      auto* vty = llvm::FixedVectorType::get(elem, st.vec);
      vector_or_elements(
          ok, "stage",
          [&] {
            for (size_t c = 0; c * st.vec < st.count; ++c) {
              llvm::Value* src = b_.CreateInBoundsGEP(elem, first, {b_.getInt64(c * st.vec)});
              llvm::Value* dst = staged_chunk(st, c);
              if (!ctx_.target.async_copy(b_, dst, src, vec_bytes)) {
                b_.CreateAlignedStore(b_.CreateAlignedLoad(vty, src, llvm::Align(vec_bytes)), dst,
                                      llvm::Align(vec_bytes));
              }
            }
          },
          through_registers);
    }
    ctx_.target.async_copy_commit(b_);  // on both paths: the fallback's group is empty
    st.group = staged_groups_++;
    return set_staged(op, st, std::move(out));
  }

  // A staged value's registers, read from its slots here (after its group of the
  // thread's async copies is complete).
  Lowered read_staged(int id) {
    const Staged& st = staged_[staged_of_[id]];
    if (st.group >= 0) ctx_.target.async_copy_wait(b_, staged_groups_ - 1 - st.group);
    Lowered v;
    v.scalar = false;
    v.layout = st.layout;
    const unsigned elem_bytes = st.elem->getPrimitiveSizeInBits() / 8;
    auto* vty = llvm::FixedVectorType::get(st.elem, st.vec);
    for (size_t c = 0; c * st.vec < st.count; ++c) {
      llvm::Value* p = staged_chunk(st, c);
      if (st.vec == 1) {
        v.regs.push_back(b_.CreateAlignedLoad(st.elem, p, llvm::Align(elem_bytes)));
        continue;
      }
      llvm::Value* chunk = b_.CreateAlignedLoad(vty, p, llvm::Align(st.vec * elem_bytes));
      for (unsigned k = 0; k < st.vec; ++k) v.regs.push_back(b_.CreateExtractElement(chunk, k));
    }
    return v;
  }

  // for iv = lo; iv < hi; iv += step  (signed compare; carried values as phis).
  // A carried staged load is a double buffer (tile::validate): its init's slots A and a
  // second piece B of the same size; the carried value's slots are a phi of the two, and
  // its yield (a staged load of the body) fills the one the carried value does not hold,
  // so the next iteration's copies run while this one reads its own. A read of the
  // carried value waits for every group committed before the body started (its group
  // is the last of those); after a loop whose body committed groups, every copy is
  // waited for, so the static counts of later reads stay safe for any trip count.
  absl::Status lower_for(const tile::Op& op, int n) {
    struct Buffer {
      size_t pos = 0;              // carried position
      llvm::PHINode* slots = nullptr;
      llvm::Value* a = nullptr;    // the init's slots
      llvm::Value* b = nullptr;    // the second set
    };
    std::vector<Buffer> buffers;
    for (size_t i = 3; i < op.args.size(); ++i) {
      if (!is_staged(op.args[i])) continue;
      const Staged& init = staged_[staged_of_[op.args[i]]];
      buffers.push_back({i - 3, nullptr, init.array, dynamic_piece(slot_bytes(init))});
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(llvm_ctx(), "loop.head", ctx_.kernel);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(llvm_ctx(), "loop.body", ctx_.kernel);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(llvm_ctx(), "loop.exit", ctx_.kernel);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::Type* ivt = ty(type_of(op.args[0]).elem);
    llvm::PHINode* iv = b_.CreatePHI(ivt, 2, "iv");
    iv->addIncoming(ctx_.values[op.args[0]].regs[0], pre);
    ctx_.values[op.body_args[0]] = Lowered{true, {}, {iv}};
    std::vector<std::vector<llvm::PHINode*>> carried;
    for (size_t i = 3; i < op.args.size(); ++i) {
      const Lowered& init = ctx_.values[op.args[i]];
      Lowered phis = init;
      std::vector<llvm::PHINode*> ps;
      for (size_t r = 0; r < init.regs.size(); ++r) {
        llvm::PHINode* p = b_.CreatePHI(init.regs[r]->getType(), 2);
        p->addIncoming(init.regs[r], pre);
        ps.push_back(p);
        phis.regs[r] = p;
      }
      carried.push_back(ps);
      ctx_.values[op.body_args[i - 2]] = phis;
      ctx_.values[op.results[i - 3]] = phis;  // the loop's results are the header's values
    }
    const int groups_before = staged_groups_;
    for (Buffer& buf : buffers) {
      buf.slots = b_.CreatePHI(buf.a->getType(), 2, "slots");
      buf.slots->addIncoming(buf.a, pre);
      Staged st = staged_[staged_of_[op.args[buf.pos + 3]]];
      st.array = buf.slots;
      st.group = groups_before - 1;
      mark_staged(op.body_args[buf.pos + 1], st);
      st.group = -1;  // read after the loop, whose exit waits for every copy
      mark_staged(op.results[buf.pos], st);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(iv, ctx_.values[op.args[1]].regs[0]), body, exit);
    b_.SetInsertPoint(body);
    for (const Buffer& buf : buffers) {
      next_slots_[op.yields[buf.pos]] =
          b_.CreateSelect(b_.CreateICmpEQ(buf.slots, buf.a), buf.b, buf.a, "slots.next");
    }
    absl::Status s = lower_ops(op.body);
    if (!s.ok()) return s;
    llvm::Value* next = b_.CreateAdd(iv, ctx_.values[op.args[2]].regs[0], "iv.next");
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    iv->addIncoming(next, latch);
    for (size_t i = 0; i < carried.size(); ++i) {
      const Lowered& y = ctx_.values[op.yields[i]];
      for (size_t r = 0; r < carried[i].size(); ++r) {
        carried[i][r]->addIncoming(y.scalar ? y.regs[0] : y.regs[r], latch);
      }
    }
    for (const Buffer& buf : buffers) {
      buf.slots->addIncoming(next_slots_.at(op.yields[buf.pos]), latch);
      next_slots_.erase(op.yields[buf.pos]);
    }
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    if (staged_groups_ > groups_before) ctx_.target.async_copy_wait(b_, 0);
    return absl::OkStatus();
  }

  LoweringContext& ctx_;
  llvm::IRBuilder<>& b_;
  int number_ = 0;
  // Value ids whose registers are consecutive by construction: register r of the
  // thread holds v0 + r, where the additions are i32 (may wrap) and the value may be
  // sign-extended to i64 and offset by a uniform i64 afterwards. arange makes one;
  // adding a uniform (scalar or splat) and the i32 -> i64 cast keep it. For such an
  // offset tile the run-time test "off[r] == off[0] + r for every r" is equivalent to
  // testing the last register alone: in i32 the values off0+0 .. off0+(R-1) wrap at
  // most once, and a wrap makes sext(last) == sext(first) + R-1 false. The shortcut
  // is taken for i64 offsets only.
  std::vector<bool> consecutive_;
  std::vector<Staged> staged_;   // staged loads lowered so far
  std::vector<int> staged_of_;   // value id -> index into staged_, -1: not staged
  int staged_groups_ = 0;        // commit groups lowered so far (one a staged load)
  // A double buffer's yield (value id) -> the slots it fills (lower_for), while its loop
  // body is lowered.
  std::map<int, llvm::Value*> next_slots_;
};

}  // namespace

absl::StatusOr<int64_t> lower_program(const tile::Program& program, const TargetInfo& target,
                                      llvm::Module& module) {
  llvm::LLVMContext& c = module.getContext();
  std::vector<llvm::Type*> params;
  for (const tile::Param& p : program.params) {
    params.push_back(llvm_type(c, p.type.elem, target.global_address_space()));
  }
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c), params, false);
  llvm::Function* f =
      llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, program.name, module);
  const int block_threads = target.warp_size() * program.num_warps;
  target.mark_kernel(f, block_threads);
  if (program.min_blocks_per_sm > 0 && !target.mark_min_blocks(f, program.min_blocks_per_sm, block_threads)) {
    return absl::UnimplementedError(absl::StrFormat(
        "program %s: min_blocks_per_sm %d: target %s takes no occupancy request.", program.name,
        program.min_blocks_per_sm, target_name(target.target())));
  }
  if (program.divide_by_reciprocal && !target.divide_by_uniform_reciprocal()) {
    return absl::UnimplementedError(absl::StrFormat(
        "program %s: divide_by_reciprocal: target %s lowers a division each (its verifier walk is "
        "not shown to read the per-register branch).",
        program.name, target_name(target.target())));
  }
  if (program.cluster > 1 && !target.mark_cluster(f, program.cluster)) {
    return absl::UnimplementedError(absl::StrFormat(
        "program %s: cluster %d: target %s has no thread-block clusters.", program.name,
        program.cluster, target_name(target.target())));
  }
  for (size_t i = 0; i < program.params.size(); ++i) {
    f->getArg(i)->setName(program.params[i].name);  // no noalias: x and y may be one buffer
  }
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  LoweringContext ctx{program, target, module, b, f, nullptr, nullptr, nullptr, {}, 0};
  ctx.kernel = f;
  ctx.values.resize(program.values.size());
  for (size_t i = 0; i < program.params.size(); ++i) ctx.values[i] = Lowered{true, {}, {f->getArg(i)}};
  ctx.tid = target.thread_id(b);
  ctx.lane = b.CreateAnd(ctx.tid, b.getInt32(target.warp_size() - 1), "lane");
  ctx.warp = b.CreateLShr(ctx.tid, llvm::Log2_32(target.warp_size()), "warp");
  Lowerer lowerer(ctx);
  absl::Status s = lowerer.lower_ops(program.body);
  if (!s.ok()) return s;  // the caller discards the half-built module
  b.CreateRetVoid();
  // The static shared arrays must fit the 48 KiB a kernel gets without opting in, and
  // with the dynamic ones (staged loads) what a block may have at all, or the driver
  // would refuse the module with no word on why.
  int64_t shared_bytes = 0;
  std::vector<std::string> arrays;
  for (const llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != target.shared_address_space()) continue;
    const auto* at = llvm::dyn_cast<llvm::ArrayType>(g.getValueType());
    if (at == nullptr || at->getNumElements() == 0) continue;  // the extern dynamic array
    const int64_t bytes = static_cast<int64_t>(at->getNumElements()) *
                          static_cast<int64_t>(at->getElementType()->getPrimitiveSizeInBits() / 8);
    shared_bytes += bytes;
    arrays.push_back(absl::StrFormat("%s %d", g.getName().str(), bytes));
  }
  if (shared_bytes > kMaxStaticSharedBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: its shared arrays take %d bytes (%s); the static limit is %d. Stage "
        "smaller dot operands or use fewer warps.",
        program.name, shared_bytes, absl::StrJoin(arrays, ", "), kMaxStaticSharedBytes));
  }
  if (shared_bytes + ctx.dynamic_bytes > target.max_shared_bytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: its staged loads take %d bytes of dynamic shared memory and its shared "
        "arrays %d more; %s allows %d a block. Stage fewer values (for a reduction, fewer "
        "keep_passes with keep_in_shared).",
        program.name, ctx.dynamic_bytes, shared_bytes, target_name(target.target()),
        target.max_shared_bytes()));
  }
  return ctx.dynamic_bytes;
}

}  // namespace fixbits::codegen
