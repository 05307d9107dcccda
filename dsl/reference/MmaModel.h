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
