// LowerExp: see LowerExp.h. The steps are numbered as in dsl/reference/ExpF32.h.
#include "codegen/LowerExp.h"

#include <bit>

#include "codegen/HostJit.h"
#include "dsl/reference/ExpF32.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace fixbits::codegen {
namespace {

namespace ref = dsl::reference;

llvm::Value* f32_const(llvm::IRBuilder<>& b, uint32_t bits) {
  return llvm::ConstantFP::get(b.getFloatTy(), std::bit_cast<float>(bits));
}

}  // namespace

llvm::Value* emit_fixbits_exp(llvm::IRBuilder<>& b, llvm::Value* x, ExpLowering how) {
  llvm::Type* f = b.getFloatTy();
  llvm::Value* zero = llvm::ConstantFP::get(f, 0.0);
  // 0. The special arguments; what `how` rules out is not tested.
  llvm::Value* is_nan = how.nan_is_canonical ? nullptr : b.CreateFCmpUNO(x, x);
  llvm::Value* over = how.arg_non_positive
                          ? nullptr
                          : b.CreateFCmpOGT(x, llvm::ConstantFP::get(f, ref::kExpOverflow));
  llvm::Value* under = b.CreateFCmpOLT(x, llvm::ConstantFP::get(f, ref::kExpUnderflow));
  // Steps 1-7 run on x itself: a special argument's arithmetic is replaced by the
  // selects at the end, and its float-to-int step is frozen (step 6).
  llvm::Value* t = b.CreateFMul(x, f32_const(b, ref::kExpLog2eBits));           // 1
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, t);             // 2: cvt.rni
  llvm::Value* neg_n = b.CreateFNeg(n);
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fma, {f},
                                     {neg_n, f32_const(b, ref::kExpLn2HiBits), x});  // 3
  r = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {neg_n, f32_const(b, ref::kExpLn2LoBits), r});  // 4
  llvm::Value* p = f32_const(b, ref::kExpCoeffBits[7]);                          // 5
  for (int k = 6; k >= 0; --k) {
    p = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {p, r, f32_const(b, ref::kExpCoeffBits[k])});
  }
  // 6. A NaN n or one out of int range (a special argument) makes fptosi poison;
  // frozen, it is some integer, and the selects below replace what it gives (or, for a
  // NaN under nan_is_canonical, the result is the NaN p carries).
  // n1 = floor(ni / 2) (an arithmetic shift) where the reference takes ni / 2 toward
  // zero: for an in-range argument ni is in [-150, 128], so either split gives
  // n1, n2 in [-75, 64], p * 2^n1 is exact (p is in (0.7, 1.42), so it stays normal) and
  // the one rounding is of p * 2^ni both ways: the same bits.
  llvm::Value* ni = b.CreateFreeze(b.CreateFPToSI(n, b.getInt32Ty()));
  llvm::Value* n1 = b.CreateAShr(ni, 1);
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, b.getInt32(127)), 23), f);
  };
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, pow2(n1)), pow2(n2));            // 7
  y = b.CreateSelect(under, zero, y);
  if (over != nullptr) y = b.CreateSelect(over, llvm::ConstantFP::getInfinity(f), y);
  if (is_nan != nullptr) y = b.CreateSelect(is_nan, b.CreateFAdd(x, x), y);
  y->setName("exp");
  return y;
}

namespace {

class JitExp final : public HostExp {
 public:
  explicit JitExp(std::unique_ptr<HostJit> jit)
      : jit_(std::move(jit)), fn_(reinterpret_cast<float (*)(float)>(jit_->address())) {}
  float operator()(float x) const override { return fn_(x); }

 private:
  std::unique_ptr<HostJit> jit_;
  float (*fn_)(float);
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostExp>> host_exp(ExpLowering how) {
  absl::StatusOr<std::unique_ptr<HostJit>> jit = host_jit("host_exp", [&](llvm::Module& m) {
    llvm::IRBuilder<> b(m.getContext());
    llvm::Function* fn = llvm::Function::Create(llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false),
                                                llvm::Function::ExternalLinkage, "fixbits_host_exp", &m);
    b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", fn));
    b.CreateRet(emit_fixbits_exp(b, fn->getArg(0), how));
    return fn;
  });
  if (!jit.ok()) return jit.status();
  return std::unique_ptr<HostExp>(new JitExp(*std::move(jit)));
}

}  // namespace fixbits::codegen
