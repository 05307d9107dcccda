// MmaModel: what one matrix instruction does to its products and incoming
// accumulator, bit for bit. One place to change when the hardware disagrees.
//
// Invariant: mma(c, a, b, k) is a pure function of its inputs' bits.
//   Sm90MmaModel (MMA-Sim / Khattak & Mikaitis for Hopper): every product a_i*b_i
//   is exact; every term, c included, is aligned to the largest exponent among
//   them and truncated toward zero at 25 fractional bits below it (13 for fp8
//   inputs); the aligned terms are summed exactly, normalized once and truncated
//   (round toward zero) to f32 (fp8 inputs: to 13 mantissa bits). mma.sync and
//   wgmma share this model on sm_90.
//   "Exponent" of a product a*b means e_a + e_b, the sum of the inputs' exponent
//   fields (a subnormal input counts at its format's minimum exponent), not the
//   product's leading bit; c's is its own. Measured on an H200 (MmaModel.cpp):
//   f16/bf16 mma.sync, f16 wgmma and e4m3 wgmma match bit for bit; e4m3 mma.sync
//   does NOT follow the 13-bit rule (its semantics are still unknown). The constants (25, 13, the final rounding, the exponent
//   rule) are named kSm90* in MmaModel.cpp, one place to change.
//   For mixed fp8 inputs, `in` (= a_dtype) sets the minimum exponent of both.
//   NaN inputs, inf * 0 and inf - inf give 0x7fffffff; an inf term propagates; a
//   zero sum is -0.0 only when every term is -0.0.
//   ExactRneMmaModel: exact sum of c and all products, one round-to-nearest-even.
#pragma once

#include <memory>
#include <span>

#include "dsl/FloatFormat.h"

namespace fixbits::dsl::reference {

class MmaModel {
 public:
  virtual ~MmaModel() = default;
  virtual const char* name() const = 0;
  // One instruction: c + sum_i a[i]*b[i] over a.size() == b.size() products.
  // a and b hold values already representable in `in` (exact as floats).
  virtual float mma(float c, std::span<const float> a, std::span<const float> b,
                    DType in) const = 0;
};

std::unique_ptr<MmaModel> make_sm90_mma_model();
std::unique_ptr<MmaModel> make_exact_rne_mma_model();

}  // namespace fixbits::dsl::reference
