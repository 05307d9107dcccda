// MatchDraws: the random inputs and output samples the cuBLAS experiments share
// (samples/cublas_probe's full-shape check, profile/match's bit match), so both
// compare cuBLAS with a descriptor on the same kind of data.
//
// Contract: draw_input_bits gives finite values +-(1 + f/64) * 2^e, f in [0, 64),
// e in [-3, 3], encoded in `t` (saturating to finite), with -0.0 for about 1 in 97
// draws and, when `with_subnormal`, the smallest positive subnormal (bits 1) for
// about 1 in 101; spread(extent, want) gives min(extent, want) indices in
// [0, extent), first and last included, evenly spaced and increasing.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "dsl/FloatFormat.h"

namespace fixbits::profile {

uint32_t draw_input_bits(DType t, std::mt19937_64& rng, bool with_subnormal);
std::vector<int64_t> spread(int64_t extent, int64_t want);

}  // namespace fixbits::profile
