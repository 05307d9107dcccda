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

// Steps 1-5, from n = rint(t) as a float on: the argument reduction and the Horner
// polynomial p, exactly as the reference orders them.
llvm::Value* horner_of(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* n) {
  llvm::Type* f = b.getFloatTy();
  llvm::Value* neg_n = b.CreateFNeg(n);
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fma, {f},
                                     {neg_n, f32_const(b, ref::kExpLn2HiBits), x});  // 3
  r = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {neg_n, f32_const(b, ref::kExpLn2LoBits), r});  // 4
  llvm::Value* p = f32_const(b, ref::kExpCoeffBits[7]);                          // 5
  for (int k = 6; k >= 0; --k) {
    p = b.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {p, r, f32_const(b, ref::kExpCoeffBits[k])});
  }
  return p;
}

// arg_non_positive: x <= 0 or NaN, in 18 operations and no conversion instruction
// (cvt.rni and cvt.rzi run on sm_90's quarter-rate pipe; softmax is issue bound):
//   t = x * log2e; s = t + 1.5*2^23; n = s - 1.5*2^23
//                                  for x in [-104, 0], |t| <= 150.05 < 2^22, so s's one
//                                  rounding is to an integer, ties to even (1.5*2^23 is
//                                  even): n = rint(t) exactly, and bits(s) = 0x4B400000 +
//                                  ni. (A -0 n where cvt.rni gives -0 changes at most r's
//                                  sign, and the first fma of step 5 drops it.)
//   s1 = bits(bits(s) << 23 + (191 << 23)) = 2^(ni + 64)  (0x4B400000 << 23 wraps to 0;
//                                  ni + 64 in [-86, 64]: a normal power of two)
//   y = (p * s1) * 2^-64           p * s1 is exact (normal), the second product the one
//                                  rounding of p * 2^ni: the reference's split (n1, n2)
//                                  rounds the same product once (LowerExp.h).
//   x < -104 (-inf too) selects +0, as step 0 does; what the arithmetic gave there
//   (no integer rint past 2^22, an exponent field out of range) is a defined value
//   that the select drops. A NaN x runs through (a NaN y) or, without
//   nan_is_canonical, selects x + x.
// The underflow stays this select of +0, not a clamp max(x, -104) before step 1 (one
// instruction less): the verifier's elementwise rule reads that max as a reduction
// level, and the stores would lose their layout-free signature (jit's signature tests).
llvm::Value* emit_non_positive(llvm::IRBuilder<>& b, llvm::Value* x, bool nan_is_canonical) {
  llvm::Type* f = b.getFloatTy();
  llvm::Value* is_nan = nan_is_canonical ? nullptr : b.CreateFCmpUNO(x, x);
  llvm::Value* under = b.CreateFCmpOLT(x, llvm::ConstantFP::get(f, ref::kExpUnderflow));
  llvm::Value* t = b.CreateFMul(x, f32_const(b, ref::kExpLog2eBits));           // 1
  llvm::Value* magic = llvm::ConstantFP::get(f, 12582912.0);  // 1.5 * 2^23, 0x4B400000
  llvm::Value* s = b.CreateFAdd(t, magic);                                       // 2: rint
  llvm::Value* n = b.CreateFSub(s, magic);
  llvm::Value* p = horner_of(b, x, n);                                           // 3-5
  llvm::Value* s1 = b.CreateBitCast(
      b.CreateAdd(b.CreateShl(b.CreateBitCast(s, b.getInt32Ty()), 23), b.getInt32((127 + 64) << 23)), f);  // 6
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, s1), llvm::ConstantFP::get(f, 0x1p-64));  // 7
  y = b.CreateSelect(under, llvm::ConstantFP::get(f, 0.0), y);
  if (is_nan != nullptr) y = b.CreateSelect(is_nan, b.CreateFAdd(x, x), y);
  y->setName("exp");
  return y;
}

}  // namespace

llvm::Value* emit_fixbits_exp(llvm::IRBuilder<>& b, llvm::Value* x, ExpLowering how) {
  if (how.arg_non_positive) return emit_non_positive(b, x, how.nan_is_canonical);
  llvm::Type* f = b.getFloatTy();
  llvm::Value* zero = llvm::ConstantFP::get(f, 0.0);
  // 0. The special arguments; what `how` rules out is not tested.
  llvm::Value* is_nan = how.nan_is_canonical ? nullptr : b.CreateFCmpUNO(x, x);
  llvm::Value* over = b.CreateFCmpOGT(x, llvm::ConstantFP::get(f, ref::kExpOverflow));
  llvm::Value* under = b.CreateFCmpOLT(x, llvm::ConstantFP::get(f, ref::kExpUnderflow));
  // Steps 1-7 run on x itself: a special argument's arithmetic is replaced by the
  // selects at the end, and its float-to-int step is frozen (step 6).
  llvm::Value* t = b.CreateFMul(x, f32_const(b, ref::kExpLog2eBits));           // 1
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, t);             // 2: cvt.rni
  llvm::Value* p = horner_of(b, x, n);                                           // 3-5
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
  y = b.CreateSelect(over, llvm::ConstantFP::getInfinity(f), y);
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
