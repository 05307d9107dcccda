// CublasDot: the family-dot descriptor of cuBLAS's dot_kernel + reduce_1Block_kernel as
// session 10's trees recorded it (128 threads, rounds 64 down to 1), for the tests of
// the reference, the probe and the profile table that build it.
#pragma once

#include <cstdint>

#include "dsl/GemmDesc.h"

namespace fixbits::dsl::testing {

inline GemmDesc cublas_dot(DType t, int64_t blocks, int tile) {
  GemmDesc d;
  d.family = GemmFamily::kDot;
  d.a_dtype = d.b_dtype = d.out_dtype = t;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  d.k_loop_step = {0, ShortTurn::kLast};
  d.lane_layout = LaneLayout::kStrided;
  d.lanes = 128;
  d.lane_tile = tile;
  d.lane_fold = {64, 32, 16, 8, 4, 2, 1};
  d.blocks = blocks;
  return d;
}

}  // namespace fixbits::dsl::testing
