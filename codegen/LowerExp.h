// LowerExp: fixbits_exp (dsl/reference/ExpF32.h) as LLVM IR, and the same IR compiled
// for the host CPU, so its bits can be checked against the reference without a GPU.
//
// Invariant: emit_fixbits_exp(b, x, how) is the reference's arithmetic (fma only where
// it says fma; the power-of-two split of step 6 may differ, as no split that keeps the
// first product exact changes the one rounding) and returns reference::fixbits_exp(x)'s
// bits for every x, except where `how` allows less:
//   - nan_is_canonical (a target whose f32 arithmetic returns one canonical NaN for any
//     NaN operand, as NVPTX's does): a NaN x runs through the arithmetic instead of the
//     select of x + x. Both give that target's canonical NaN, so its bits are the same;
//     on a host that propagates payloads the result is a NaN, maybe another one.
//   - arg_non_positive (the program guarantees x <= 0 or NaN: softmax's x - max(row)):
//     no overflow branch, and a shorter sequence of the same bits without conversion
//     instructions (rint by adding 1.5 * 2^23, the scaling as 2^(n+64) then
//     2^-64; LowerExp.cpp shows why each step is exact). A positive x
//     gives a defined but unspecified value (never UB), which such a program must not use.
// host_exp compiles that IR for the host with LLVM's JIT (tests, diagnostics); the
// callable stays valid while the returned object lives.
#pragma once

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "codegen/LlvmForward.h"

namespace fixbits::codegen {

struct ExpLowering {
  bool nan_is_canonical = false;
  bool arg_non_positive = false;
};

llvm::Value* emit_fixbits_exp(IrBuilder& b, llvm::Value* x, ExpLowering how);

// float(float) running emit_fixbits_exp(how) on this CPU; an Internal status names
// what LLVM's JIT refused.
class HostExp {
 public:
  virtual ~HostExp() = default;
  virtual float operator()(float x) const = 0;
};
absl::StatusOr<std::unique_ptr<HostExp>> host_exp(ExpLowering how);

}  // namespace fixbits::codegen
