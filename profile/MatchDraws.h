// MatchDraws: the random inputs and output samples the cuBLAS experiments share
// (samples/cublas_probe's full-shape check, profile/match's bit match), so both
// compare cuBLAS with a descriptor on the same kind of data.
//
// Contract: draw_input_bits gives finite values +-(1 + f/64) * 2^e, f in [0, 64),
// e in [-3, 3], encoded in `t` (saturating to finite), with -0.0 for about 1 in 97
// draws and, when `with_subnormal`, the smallest positive subnormal (bits 1) for
// about 1 in 101; spread(extent, want) gives min(extent, want) indices in
// [0, extent), first and last included, evenly spaced and increasing;
// draw_match_shape is the match's random shape (profile::usual_shape's dtypes and
// layout for `t`; M, N log-uniform in [1, max_dim], K in [1, max_k], fp8 K and N
// rounded up to 16, redrawn until M*K + K*N + M*N <= max_elems), so the bit match and
// the CPU coverage count (samples/cublas_coverage) see the same shapes from one seed;
// draw_match_sequence is the match's whole sequence from one seed (each dtype in
// order, its shapes each followed by the draw the match takes for its input seed), which
// the coverage count and the scan's class ranking (ProbeOptions::rank_shapes) replay.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "dsl/FloatFormat.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct MatchShapeLimits {
  int64_t max_dim = 16384, max_k = int64_t{1} << 19, max_elems = int64_t{1} << 22;
};

uint32_t draw_input_bits(DType t, std::mt19937_64& rng, bool with_subnormal);
std::vector<int64_t> spread(int64_t extent, int64_t want);
runtime::GemmShape draw_match_shape(std::mt19937_64& rng, DType t, const MatchShapeLimits& limits);

// The seed of a shape's input draw d > 0 (fixbits-cublas-match --draws): draw 0 uses
// the shape's own input seed, draw d this mix of it and d (splitmix64's finalizer), so
// a replay of a shape's d-th draw needs only its input seed.
uint64_t draw_seed(uint64_t input_seed, int64_t d);

struct MatchDraw {
  runtime::GemmShape shape;
  uint64_t input_seed = 0;  // what fixbits-cublas-match seeds this shape's inputs with
};
// fixbits-cublas-match's draws for --seed=seed: for each of `dtypes` in order,
// `fp8_shapes` shapes for an fp8 dtype and `shapes` for any other.
std::vector<MatchDraw> draw_match_sequence(uint64_t seed, const std::vector<DType>& dtypes,
                                           int64_t shapes, int64_t fp8_shapes,
                                           const MatchShapeLimits& limits);

}  // namespace fixbits::profile
