// RandomGemmProblem: a dsl::reference::GemmProblem of fresh random inputs for one
// GemmDesc and shape (tests/jit/RandomInputs.h draws the bits), shared by the GEMM
// tests that compare against the CPU reference: the interpreter proof
// (tests/codegen/gemm_interp_test) and the GPU test (tests/jit/gemm_gpu_test); and
// the one fixed problem both use for the split merge's +0.0 seed.
// Invariant: every buffer the descriptor reads is filled (C and alpha/beta only when
// desc.alpha_beta, the f32 bias only when desc.bias), in the layouts asked for.
#pragma once

#include <cstdint>
#include <random>

#include "dsl/GemmDesc.h"
#include "dsl/reference/Reference.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits::testing {

struct GemmShapeMNK {
  int64_t m, n, k;
};

inline dsl::reference::GemmProblem random_gemm_problem(const dsl::GemmDesc& d, GemmShapeMNK s,
                                                       bool a_row, bool b_row,
                                                       std::mt19937_64& rng, Mix mix,
                                                       bool specials) {
  dsl::reference::GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a_row_major = a_row;
  p.b_row_major = b_row;
  p.a = random_bits(d.a_dtype, static_cast<size_t>(s.m * s.k), rng, mix, specials);
  p.b = random_bits(d.b_dtype, static_cast<size_t>(s.k * s.n), rng, mix, specials);
  if (d.alpha_beta) {
    p.c = random_bits(d.out_dtype, static_cast<size_t>(s.m * s.n), rng, mix, false);
    p.alpha = 0.75f;
    p.beta = -1.5f;
  }
  if (d.bias) p.bias = random_bits(DType::kF32, static_cast<size_t>(s.n), rng, mix);
  return p;
}

// f16 inputs a = -2^-24, b = +2^-24 everywhere: every product is -2^-48, every split
// part a tiny negative f32 that an f16 partial rounds to -0.0 (the +0.0 merge seed's
// test case in the interpreter proof and on the GPU).
inline dsl::reference::GemmProblem tiny_negative_products(GemmShapeMNK s) {
  dsl::reference::GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a.assign(static_cast<size_t>(s.m * s.k), 0x8001u);
  p.b.assign(static_cast<size_t>(s.k * s.n), 0x0001u);
  return p;
}

// Inputs drawn from +0, -0, +1, -1 and 2 in `t`'s bits (both operands one dtype), row
// 0 of A all -0.0 and column 0 of B positive: every sign of zero a K = 1..few output can
// hold, a lone -0.0 product included (the -0.0 seed's test case, GemmDesc.h "seed").
inline dsl::reference::GemmProblem signed_zero_products(DType t, GemmShapeMNK s,
                                                        std::mt19937_64& rng) {
  const float values[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f};
  dsl::reference::GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  for (int64_t i = 0; i < s.m * s.k; ++i) {
    p.a.push_back(fixbits::to_bits(t, i < s.k ? -0.0f : values[rng() % 5]));
  }
  for (int64_t i = 0; i < s.k * s.n; ++i) {
    p.b.push_back(fixbits::to_bits(t, i % s.n == 0 ? 1.0f : values[rng() % 5]));
  }
  return p;
}

}  // namespace fixbits::testing
