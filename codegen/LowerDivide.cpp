// LowerDivide: see LowerDivide.h.
#include "codegen/LowerDivide.h"

#include <limits>

#include "codegen/HostJit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace fixbits::codegen {

std::vector<llvm::Value*> emit_divide_by_uniform(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& a,
                                                 llvm::Value* y, const IeeeDivide& divide) {
  llvm::Type* f = b.getFloatTy();
  auto c = [&](float v) { return llvm::ConstantFP::get(f, v); };
  // Once: r = RN(1/y) (an IEEE division), and whether y is in range (false for a NaN).
  llvm::Value* r = b.CreateFDiv(c(1.0f), y, "rcp");
  llvm::Value* y_ok = b.CreateAnd(b.CreateFCmpOGE(y, c(kDivideFastMinDivisor)),
                                b.CreateFCmpOLE(y, c(kDivideFastMaxDivisor)));
  // Each register: q0 = RN(a r), the exact remainder a - q0 y, one correction step;
  // where it is out of range, the division instead, in a branch of its own, so the
  // register's tree is guard(its own range, fast, division) whatever the count (the
  // verifier signs the knob's pinned softmax kernels as one class across configs;
  // tests/jit/reduce_divide_by_reciprocal_signature_test).
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  std::vector<llvm::Value*> q;
  for (llvm::Value* ai : a) {
    llvm::Value* q0 = b.CreateFMul(ai, r);
    llvm::Value* rem = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {b.CreateFNeg(q0), y, ai});
    llvm::Value* fast = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {rem, r, q0});
    // +0 (its bits are 0: not -0, whose quotient the path would give as +0), or a
    // number in [2^-100, FLT_MAX] (false for NaN and infinities).
    llvm::Value* in_range = b.CreateAnd(b.CreateFCmpOGE(ai, c(kDivideFastMinNumerator)),
                                        b.CreateFCmpOLE(ai, c(std::numeric_limits<float>::max())));
    llvm::Value* plus_zero = b.CreateICmpEQ(b.CreateBitCast(ai, b.getInt32Ty()), b.getInt32(0));
    llvm::Value* ok = b.CreateAnd(y_ok, b.CreateOr(in_range, plus_zero));
    llvm::BasicBlock* from = b.GetInsertBlock();
    llvm::BasicBlock* slow = llvm::BasicBlock::Create(b.getContext(), "div.ieee", fn);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(b.getContext(), "div.join", fn);
    // No branch weights: with them LLVM laid the divisions out of line, and the knob's
    // kernels signed as 9 classes a dtype; `divide` keeps the division in its block.
    b.CreateCondBr(ok, join, slow);
    b.SetInsertPoint(slow);
    llvm::Value* ieee = divide(b, ai, y);
    b.CreateBr(join);
    b.SetInsertPoint(join);
    llvm::PHINode* phi = b.CreatePHI(f, 2, "quot");
    phi->addIncoming(fast, from);
    phi->addIncoming(ieee, slow);
    q.push_back(phi);
  }
  return q;
}

namespace {

class JitDivide final : public HostDivide {
 public:
  explicit JitDivide(std::unique_ptr<HostJit> jit)
      : jit_(std::move(jit)), fn_(reinterpret_cast<void (*)(const float*, float, float*)>(jit_->address())) {}
  void operator()(const float* a, float y, float* q) const override { fn_(a, y, q); }

 private:
  std::unique_ptr<HostJit> jit_;
  void (*fn_)(const float*, float, float*);
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostDivide>> host_divide(int count) {
  if (count < 1) return absl::InvalidArgumentError("host_divide: count must be at least 1");
  absl::StatusOr<std::unique_ptr<HostJit>> jit = host_jit("host_divide", [&](llvm::Module& m) {
    llvm::IRBuilder<> b(m.getContext());
    llvm::Type* f = b.getFloatTy();
    llvm::Type* p = b.getPtrTy();
    llvm::Function* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {p, f, p}, false),
                                                llvm::Function::ExternalLinkage, "fixbits_host_divide", &m);
    b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", fn));
    std::vector<llvm::Value*> a;
    for (int i = 0; i < count; ++i) a.push_back(b.CreateLoad(f, b.CreateConstGEP1_32(f, fn->getArg(0), i)));
    // On the host a plain fdiv: were it speculated, the bits would be the same.
    auto fdiv = [](llvm::IRBuilder<>& ib, llvm::Value* n, llvm::Value* d) { return ib.CreateFDiv(n, d); };
    std::vector<llvm::Value*> q = emit_divide_by_uniform(b, a, fn->getArg(1), fdiv);
    for (int i = 0; i < count; ++i) b.CreateStore(q[i], b.CreateConstGEP1_32(f, fn->getArg(2), i));
    b.CreateRetVoid();
    return fn;
  });
  if (!jit.ok()) return jit.status();
  return std::unique_ptr<HostDivide>(new JitDivide(*std::move(jit)));
}

}  // namespace fixbits::codegen
