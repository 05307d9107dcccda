// LowerDivide: several f32 registers divided by one shared divisor (softmax's e_i / s)
// with one correctly rounded reciprocal and two fmas a register, instead of an IEEE
// division each; and the same IR compiled for the host CPU, to check its bits here.
//
// Invariant: emit_divide_by_uniform(b, a, y) returns, for every a_i and y, the bits of
// `fdiv a_i, y` (round to nearest even). With r = RN(1/y), q0 = RN(a_i * r) is within one
// ulp of a_i / y and fma(fma(-q0, y, a_i), r, q0) is the correctly rounded quotient when
// no step leaves the normal range (Markstein's theorem; Muller et al., Handbook of
// Floating-Point Arithmetic, the division by fma): that path is taken when y is in
// [1, 2^24] and every a_i is +0 or in [2^-100, FLT_MAX] (the remainder is then exact and
// the quotient at least 2^-124). Otherwise (a NaN, an infinity, a negative, -0 or tiny
// a_i, or a divisor outside the range) that register takes `fdiv`, in a branch of its
// own, so the division is paid only there and each register's tree (what the verifier
// signs) is guard(its own range test, the fma path, the division) whatever the number of
// registers. Returns with the builder after the last join.
// host_divide compiles that IR for `count` registers for this CPU (tests).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/LlvmForward.h"

namespace fixbits::codegen {

// The range the reciprocal path takes (LowerDivide.h's invariant).
inline constexpr float kDivideFastMinNumerator = 0x1p-100f;
inline constexpr float kDivideFastMinDivisor = 1.0f;
inline constexpr float kDivideFastMaxDivisor = 0x1p24f;

// Emits the IEEE quotient n / d in the branch outside the range. It must not be an op
// LLVM speculates out of its block (a plain fdiv is: the branch becomes a select, and
// every register pays the division): NVPTX gives an inline-asm div.rn.f32 with side
// effects (TargetInfo::ieee_divide_in_branch).
using IeeeDivide = std::function<llvm::Value*(IrBuilder&, llvm::Value* n, llvm::Value* d)>;
std::vector<llvm::Value*> emit_divide_by_uniform(IrBuilder& b, const std::vector<llvm::Value*>& a, llvm::Value* y,
                                                 const IeeeDivide& divide);

// q[i] = a[i] / y for i < count, by emit_divide_by_uniform on this CPU.
class HostDivide {
 public:
  virtual ~HostDivide() = default;
  virtual void operator()(const float* a, float y, float* q) const = 0;
};
absl::StatusOr<std::unique_ptr<HostDivide>> host_divide(int count);

}  // namespace fixbits::codegen
